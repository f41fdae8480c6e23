//! fio's "pareto" (Gray et al.'s self-similar distribution), sampled exactly
//! and without a transcendental function on almost every draw.
//!
//! fio draws the value n · U^p with p = ln h / ln(1 − h): a fraction h of the
//! accesses go to a fraction 1 − h of the blocks, recursively (h = 0.8, or
//! fio's default 0.2, gives 80/20; h = 0.9 gives 90/10). As a rank (0 the
//! hottest) that is rank = ⌊s⌋ for a continuous s in [0, n) whose density
//! falls from rank 0 on and whose distribution function is closed-form, with
//! a = 1/p:
//! - h > 0.5 (values crowd at the top, counted from there): P(s ≥ t) = (1 − t/n)^a;
//! - h < 0.5 (values crowd at 0): P(s < t) = (t/n)^a;
//! - h = 0.5: uniform.
//!
//! Sampling: the ranks are cut into bands of whole ranks inside which the
//! density varies by at most 5 %. An alias table picks a band with its exact
//! probability (from the distribution function); inside it a rank r is
//! proposed uniformly and kept with probability P(r) / P(band start), so
//! ranks come with their exact probabilities. Since the density falls, that
//! ratio is at least f(band end) / f(band start): this squeeze, precomputed,
//! keeps 95 % of proposals by one integer comparison, and only the rest
//! evaluate P(r) from the distribution function. A band of one rank needs no
//! thinning, and for h > 0.5 the far end, where less than 2^-64 of the mass
//! lies, is one band sampled by inverting its distribution function.
//!
//! Why not fio's formula n · U^p directly: a logarithm and an exponential per
//! draw made pareto the slowest source (27 ns a draw over 2^34 blocks).

use super::alias::{AliasTable, TWO_64};
use crate::base::primitives::rng::Rng;

/// The least density ratio inside a band: the squeeze's acceptance.
const LEAST_RATIO: f64 = 0.95;
/// For h > 0.5, the mass beyond which the remaining ranks make one band.
const REMAINDER_MASS: f64 = 5.421_010_862_427_522e-20; // 2^-64

#[derive(Clone, Debug)]
pub struct Pareto {
    n: u64,
    /// a − 1: the density is (1 − s/n)^(a−1) (h > 0.5) or s^(a−1) (h < 0.5), up to a constant.
    density_exponent: f64,
    hot_at_top: bool,
    /// a = 1/p, for inverting the remainder band.
    a: f64,
    bands: Box<[Band]>,
    alias: AliasTable,
}

/// Ranks `first..first + width`.
#[derive(Clone, Debug)]
struct Band {
    first: u64,
    width: u64,
    /// Proposals with a 64-bit draw below this are kept outright: the least density
    /// ratio in the band, times 2^64.
    squeeze: u64,
    /// The far end for h > 0.5: sampled by inversion, not by thinning.
    invert: bool,
}

impl Pareto {
    pub fn new(n: u64, h: f64) -> Self {
        assert!(n > 0 && n < u64::MAX && h > 0.0 && h < 1.0);
        let a = (1.0 - h).ln() / h.ln();
        let hot_at_top = h > 0.5;
        let nf = n as f64;
        let mut bands = Vec::new();
        let mut weights = Vec::new();
        if (a - 1.0).abs() < 1e-9 {
            // h = 0.5: a uniform distribution, one band kept whole.
            bands.push(Band { first: 0, width: n, squeeze: u64::MAX, invert: false });
            weights.push(1.0);
        } else if hot_at_top {
            // Mass beyond rank r: (1 - r/n)^a. The distance to n shrinks by `shrink` per
            // band, which bounds the density ratio ((n - end)/(n - start))^(a-1).
            let shrink = LEAST_RATIO.powf(1.0 / (a - 1.0));
            let beyond = |r: u64| (1.0 - r as f64 / nf).powf(a);
            let mut first = 0u64;
            while first < n {
                if beyond(first) < REMAINDER_MASS {
                    bands.push(Band { first, width: n - first, squeeze: 0, invert: true });
                    weights.push(beyond(first));
                    break;
                }
                let distance = (n - first) as f64 * shrink;
                let end = (n - (distance.ceil() as u64).min(n - first)).max(first + 1);
                let ratio = ((n - end) as f64 / (n - first) as f64).powf(a - 1.0);
                bands.push(Band { first, width: end - first, squeeze: squeeze(ratio, end - first), invert: false });
                weights.push(beyond(first) - beyond(end));
                first = end;
            }
        } else {
            // Mass below rank r: (r/n)^a. Rank 0 is a band of its own (the density is
            // unbounded at 0, and every s in [0, 1) is rank 0); after it each band grows
            // by `grow`, which bounds the density ratio (end/start)^(a-1).
            let grow = LEAST_RATIO.powf(-1.0 / (1.0 - a));
            let below = |r: u64| (r as f64 / nf).powf(a);
            let mut first = 0u64;
            while first < n {
                let end = if first == 0 { 1 } else { (((first as f64) * grow) as u64).clamp(first + 1, n) };
                let ratio = if first == 0 { 1.0 } else { (end as f64 / first as f64).powf(a - 1.0) };
                bands.push(Band { first, width: end - first, squeeze: squeeze(ratio, end - first), invert: false });
                weights.push(below(end) - below(first));
                first = end;
            }
        }
        Self { n, density_exponent: a - 1.0, hot_at_top, a, alias: AliasTable::new(&weights), bands: bands.into() }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Bands the ranks are cut into (for tests and set-up figures).
    #[cfg(test)]
    fn band_count(&self) -> usize {
        self.bands.len()
    }

    /// A rank in 0..n, 0 the most popular.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let band = &self.bands[self.alias.sample(rng) as usize];
        if band.invert {
            return self.invert(band, rng);
        }
        loop {
            let offset = rng.below(band.width);
            let keep = rng.next_u64();
            if keep < band.squeeze || (keep as f64) < self.rank_ratio(band, offset) * TWO_64 {
                return band.first + offset;
            }
        }
    }

    /// P(rank first + offset) / P(rank first): at least the band's squeeze, since the
    /// density falls. Evaluated for about 5 % of proposals.
    #[cold]
    fn rank_ratio(&self, band: &Band, offset: u64) -> f64 {
        let r = band.first + offset;
        self.rank_mass(r) / self.rank_mass(band.first)
    }

    /// P(rank r), from the distribution function.
    fn rank_mass(&self, r: u64) -> f64 {
        let nf = self.n as f64;
        let (lo, hi) = (r as f64 / nf, (r + 1) as f64 / nf);
        if self.hot_at_top {
            // (1 - lo)^a - (1 - hi)^a, written so that nothing cancels when 1/n is tiny.
            let a = self.density_exponent + 1.0;
            let (x, y) = ((1.0 - lo).ln() * a, (1.0 - hi).ln() * a);
            x.exp() * -(y - x).exp_m1()
        } else {
            let a = self.density_exponent + 1.0;
            let (x, y) = (lo.ln() * a, hi.ln() * a);
            if r == 0 { y.exp() } else { y.exp() * -(x - y).exp_m1() }
        }
    }

    /// The far band of h > 0.5, by inversion: P(s ≥ t | s ≥ first) = ((n - t)/(n - first))^a.
    #[cold]
    fn invert(&self, band: &Band, rng: &mut Rng) -> u64 {
        let distance = (self.n - band.first) as f64 * rng.open01().powf(1.0 / self.a);
        ((self.n as f64 - distance) as u64).clamp(band.first, self.n - 1)
    }
}

/// The squeeze threshold of a band whose least density ratio is `ratio`: everything for
/// a band of one rank (no thinning needed).
fn squeeze(ratio: f64, width: u64) -> u64 {
    if width == 1 { u64::MAX } else { (ratio * TWO_64) as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of accesses that went to the hottest `fraction` of blocks.
    fn top_share(counts: &mut [u64], fraction: f64) -> f64 {
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = counts.iter().sum();
        let top = ((counts.len() as f64) * fraction).round() as usize;
        counts[..top].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn pareto_follows_fios_self_similar_rule() {
        let n = 100_000u64;
        for (h, fraction, want) in [(0.8, 0.2, 0.8), (0.2, 0.2, 0.8), (0.9, 0.1, 0.9), (0.9, 0.2, 0.992)] {
            let p = Pareto::new(n, h);
            let mut rng = Rng::new(7, 7);
            let mut counts = vec![0u64; n as usize];
            for _ in 0..2_000_000 {
                counts[p.sample(&mut rng) as usize] += 1;
            }
            let got = top_share(&mut counts, fraction);
            assert!((got - want).abs() < 0.02, "h={h}: {got:.3} of accesses to the top {fraction}, want {want}");
        }
    }

    /// The probability of ranks a..b (exclusive) under fio's formula, from its closed form.
    fn analytic(n: u64, h: f64, a: u64, b: u64) -> f64 {
        let e = (1.0 - h).ln() / h.ln();
        let nf = n as f64;
        if h > 0.5 {
            (1.0 - a as f64 / nf).powf(e) - (1.0 - b as f64 / nf).powf(e)
        } else {
            (b as f64 / nf).powf(e) - (a as f64 / nf).powf(e)
        }
    }

    #[test]
    fn rank_ranges_match_fios_formula_within_half_a_percent() {
        for (n, h) in [(1u64 << 34, 0.9), (1 << 34, 0.2), (1000, 0.7), (7, 0.9), (1 << 20, 0.5), (1 << 20, 0.35)] {
            let p = Pareto::new(n, h);
            let mut rng = Rng::new(11, 3);
            let cuts = [0, 1, 2, 10, n / 1000 + 3, n / 100 + 4, n / 10 + 5, n / 2 + 6, n];
            let mut cuts: Vec<u64> = cuts.iter().map(|&c| c.min(n)).collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut hits = vec![0u64; cuts.len() - 1];
            let samples = 1_000_000;
            for _ in 0..samples {
                let r = p.sample(&mut rng);
                assert!(r < n, "rank {r} outside 0..{n}");
                let i = cuts.windows(2).position(|w| w[0] <= r && r < w[1]).unwrap();
                hits[i] += 1;
            }
            for (i, w) in cuts.windows(2).enumerate() {
                let want = analytic(n, h, w[0], w[1]);
                let got = hits[i] as f64 / samples as f64;
                assert!((got - want).abs() < 0.005, "n={n} h={h} ranks {}..{}: {got:.4} vs {want:.4}", w[0], w[1]);
            }
        }
    }

    #[test]
    fn bands_tile_the_ranks_and_stay_few() {
        for (n, h) in [(1u64 << 55, 0.9), (1 << 55, 0.2), (1 << 34, 0.99), (1 << 34, 0.01), (1, 0.9), (3, 0.2)] {
            let p = Pareto::new(n, h);
            let mut next = 0;
            for b in p.bands.iter() {
                assert_eq!(b.first, next, "n={n} h={h}: contiguous");
                assert!(b.width >= 1);
                next = b.first + b.width;
            }
            assert_eq!(next, n, "n={n} h={h}: the bands end at n");
            assert!(p.band_count() <= 4096, "n={n} h={h}: {} bands", p.band_count());
        }
    }

    #[test]
    fn pareto_rank_zero_is_the_hottest() {
        for h in [0.9, 0.2] {
            let p = Pareto::new(1000, h);
            let mut rng = Rng::new(1, 1);
            let mut counts = vec![0u64; 1000];
            for _ in 0..200_000 {
                counts[p.sample(&mut rng) as usize] += 1;
            }
            assert!(counts[0] > counts[500] * 10, "h={h}: {} vs {}", counts[0], counts[500]);
        }
    }
}
