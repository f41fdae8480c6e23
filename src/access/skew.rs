//! The skewed distributions other than Zipf: fio's pareto and a truncated
//! gaussian. Both draw a block number in 0..n; `Pareto` returns a rank (0 is
//! the hottest) that the caller scatters, `Gaussian` a position.

use crate::rng::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};

/// fio's "pareto" (Gray et al.'s self-similar distribution): a fraction h of
/// the accesses go to a fraction 1 - h of the blocks, recursively. With
/// p = ln h / ln(1 - h), the value n · U^p is drawn; for h > 0.5 values
/// crowd at the top, so the rank (0 = hottest) is counted from there.
/// h = 0.8 (or fio's default 0.2) gives 80/20, h = 0.9 gives 90/10.
#[derive(Clone, Debug)]
pub struct Pareto {
    n: u64,
    exponent: f64,
    hot_at_top: bool,
}

impl Pareto {
    pub fn new(n: u64, h: f64) -> Self {
        assert!(n > 0 && h > 0.0 && h < 1.0);
        Self { n, exponent: h.ln() / (1.0 - h).ln(), hot_at_top: h > 0.5 }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// A rank in 0..n, 0 the most popular.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        // n · U^p, not fio's (n - 1) · U^p: truncating the latter reaches the top value
        // only when U is exactly 1, so the hottest block would almost never be hit.
        // U^p = exp(-p · E) with E = -ln U a standard exponential, drawn by the
        // ziggurat (one table lookup almost always): one exp instead of ln and exp.
        let e: f64 = Exp1.sample(rng);
        let x = ((self.n as f64) * (-self.exponent * e).exp()) as u64;
        let x = x.min(self.n - 1);
        if self.hot_at_top { self.n - 1 - x } else { x }
    }
}

/// A normal distribution over the region, centred at `center` (a fraction of
/// the region) with standard deviation `stddev` (a fraction too), truncated
/// by rejection: draws outside the region are drawn again, so no probability
/// piles up at the edges (clamping would make the first and last blocks hot).
#[derive(Clone, Debug)]
pub struct Gaussian {
    n: u64,
    center: f64,
    stddev: f64,
}

impl Gaussian {
    pub fn new(n: u64, center: f64, stddev: f64) -> Self {
        assert!(n > 0 && stddev > 0.0 && (0.0..=1.0).contains(&center));
        Self { n, center, stddev }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// A block number in 0..n.
    #[inline]
    pub fn sample(&mut self, rng: &mut Rng) -> u64 {
        loop {
            // The standard normal comes from the ziggurat (rand_distr): a table lookup
            // and a compare almost always, no logarithm.
            let z: f64 = StandardNormal.sample(rng);
            let x = self.center + self.stddev * z;
            if (0.0..1.0).contains(&x) {
                return ((x * self.n as f64) as u64).min(self.n - 1);
            }
        }
    }
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

    #[test]
    fn pareto_rank_zero_is_the_hottest() {
        let p = Pareto::new(1000, 0.9);
        let mut rng = Rng::new(1, 1);
        let mut counts = vec![0u64; 1000];
        for _ in 0..200_000 {
            counts[p.sample(&mut rng) as usize] += 1;
        }
        assert!(counts[0] > counts[500] * 10, "{} vs {}", counts[0], counts[500]);
    }

    #[test]
    fn gaussian_matches_mean_and_stddev() {
        let n = 1_000_000u64;
        let mut g = Gaussian::new(n, 0.5, 0.1);
        let mut rng = Rng::new(3, 3);
        let samples = 1_000_000;
        let xs: Vec<f64> = (0..samples).map(|_| g.sample(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / samples as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / samples as f64).sqrt();
        assert!((mean / (0.5 * n as f64) - 1.0).abs() < 0.02, "mean {mean}");
        assert!((sd / (0.1 * n as f64) - 1.0).abs() < 0.02, "stddev {sd}");
    }

    #[test]
    fn gaussian_has_no_spike_at_the_edges() {
        // Centred near the start with a wide spread: much of the bell falls outside.
        let n = 10_000u64;
        let mut g = Gaussian::new(n, 0.05, 0.3);
        let mut rng = Rng::new(5, 5);
        let mut buckets = [0u64; 100];
        for _ in 0..1_000_000 {
            buckets[(g.sample(&mut rng) * 100 / n) as usize] += 1;
        }
        // The density is smooth: the edge buckets are close to their neighbours.
        for (edge, next) in [(0, 1), (99, 98)] {
            let ratio = buckets[edge] as f64 / buckets[next] as f64;
            assert!((0.9..1.1).contains(&ratio), "bucket {edge}: {} vs {}: {buckets:?}", buckets[edge], buckets[next]);
        }
    }
}
