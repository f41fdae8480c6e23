//! The statistics of a comparison of two sets of repetitions: the Mann-Whitney rank test
//! and the Hodges-Lehmann estimate of the change with its distribution-free confidence
//! interval, both on the logarithm of the figure (so the change is a ratio, new / base,
//! whatever the figure's scale). Exact null distribution of U up to 2,500 pairs, the normal
//! approximation beyond. Also the confidence interval of one percentile of one histogram
//! (single runs: the order statistics' binomial interval).
//!
//! It computes; it formats nothing and decides no verdict (`mod.rs` does).

use hdrhistogram::Histogram;

/// Beyond this many pairs (n × m) the exact distribution of U gives way to the normal one.
const EXACT_PAIRS_MAX: usize = 2500;

/// What the rank test says about new against base.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shift {
    /// Hodges-Lehmann estimate of new / base: the median of every pair's ratio.
    pub ratio: f64,
    /// Confidence interval of the ratio; `None` when so few runs cannot reach the confidence
    /// asked for (5 and 5 runs reach 99 %, 3 and 3 only 90 %).
    pub interval: Option<(f64, f64)>,
    /// Two-sided p-value of the Mann-Whitney test (ties count a half).
    pub p_value: f64,
}

/// The rank test and the shift of `new` against `base` at `confidence` (0.99 for 99 %).
/// `None` unless both sides have a run and every figure is positive and finite (the ratio
/// of a zero is no figure).
pub fn shift(base: &[f64], new: &[f64], confidence: f64) -> Option<Shift> {
    let ok = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !ok(base) || !ok(new) {
        return None;
    }
    let (n, m) = (base.len(), new.len());
    let mut diffs: Vec<f64> = Vec::with_capacity(n * m);
    let mut u = 0.0;
    for b in base {
        for x in new {
            diffs.push(x.ln() - b.ln());
            u += if x > b {
                1.0
            } else if x == b {
                0.5
            } else {
                0.0
            };
        }
    }
    diffs.sort_by(f64::total_cmp);
    let pairs = diffs.len();
    let ratio = median_sorted(&diffs).exp();
    let alpha = 1.0 - confidence;
    let (p_value, k) = if pairs <= EXACT_PAIRS_MAX {
        let cdf = u_cdf(n, m);
        // Two-sided: twice the smaller tail; P(U >= u) = P(U <= nm − u) by symmetry.
        let p = (2.0 * cdf_at(&cdf, u).min(cdf_at(&cdf, pairs as f64 - u))).min(1.0);
        // k: one more than the largest c with P(U <= c) <= alpha / 2 (0: none).
        let k = cdf.iter().take_while(|&&c| c <= alpha / 2.0).count();
        (p, k)
    } else {
        let mean = pairs as f64 / 2.0;
        let sd = ((n * m * (n + m + 1)) as f64 / 12.0).sqrt();
        let z = ((u - mean).abs() - 0.5).max(0.0) / sd;
        let p = (2.0 * normal_upper_tail(z)).min(1.0);
        let k = (mean - normal_quantile(1.0 - alpha / 2.0) * sd).floor().max(0.0) as usize;
        (p, k)
    };
    let interval = (k >= 1 && k <= pairs).then(|| (diffs[k - 1].exp(), diffs[pairs - k].exp()));
    Some(Shift { ratio, interval, p_value })
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// P(U <= c) for c = 0..=n·m under the null hypothesis (no ties), by counting the
/// arrangements of n and m ranks: f(n, m, u) = f(n − 1, m, u − m) + f(n, m − 1, u).
fn u_cdf(n: usize, m: usize) -> Vec<f64> {
    // counts[j][u]: arrangements of i base and j new runs with U = u, built up over i.
    let mut counts: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        next.push(vec![1.0]);
        for j in 1..=m {
            let mut row = vec![0.0; i * j + 1];
            // The largest of the i + j ranks is a base run (U grows by j) or a new one.
            for (u, c) in counts[j].iter().enumerate() {
                row[u + j] += c;
            }
            for (u, c) in next[j - 1].iter().enumerate() {
                row[u] += c;
            }
            next.push(row);
        }
        counts = next;
    }
    let freq = &counts[m];
    let total: f64 = freq.iter().sum();
    let mut acc = 0.0;
    freq.iter()
        .map(|c| {
            acc += c;
            (acc / total).min(1.0)
        })
        .collect()
}

/// P(U <= u) for a U that may be a half (ties): the cdf at its floor.
fn cdf_at(cdf: &[f64], u: f64) -> f64 {
    if u < 0.0 { 0.0 } else { cdf[(u.floor() as usize).min(cdf.len() - 1)] }
}

/// P(Z > z) of the standard normal (Abramowitz and Stegun 7.1.26 for erfc, error < 1.5e-7).
pub fn normal_upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 { erfc / 2.0 } else { 1.0 - erfc / 2.0 }
}

/// The standard normal's quantile (Acklam's rational approximation, relative error < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] =
        [7.784_695_709_041_462e-3, 3.224_671_290_700_398e-1, 2.445_134_137_142_996, 3.754_408_661_907_416];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// One percentile of one run's histogram with its confidence interval: the values at the
/// ranks q·N ∓ z·√(N·q·(1 − q)), the order statistics that bound the quantile at
/// `confidence` (normal approximation of the binomial). `None` for an empty histogram.
pub fn percentile_interval(h: &Histogram<u64>, quantile: f64, confidence: f64) -> Option<(f64, f64, f64)> {
    let count = h.len();
    if count == 0 {
        return None;
    }
    let n = count as f64;
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let half = z * (quantile * (1.0 - quantile) / n).sqrt();
    let at = |q: f64| h.value_at_quantile(q.clamp(0.0, 1.0)) as f64;
    Some((at(quantile), at(quantile - half), at(quantile + half)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_distribution_of_u_is_the_known_one() {
        // 5 and 5 runs: 252 arrangements, one with U = 0, one with U = 1, two with U = 2.
        let cdf = u_cdf(5, 5);
        assert_eq!(cdf.len(), 26);
        assert!((cdf[0] - 1.0 / 252.0).abs() < 1e-12);
        assert!((cdf[2] - 4.0 / 252.0).abs() < 1e-12);
        assert!((cdf[25] - 1.0).abs() < 1e-12);
        // Symmetric: P(U <= c) = P(U >= nm − c).
        assert!((cdf[10] - (1.0 - cdf[14])).abs() < 1e-12);
        // 1 and 3 runs: U is 0..=3, each once.
        assert_eq!(u_cdf(1, 3), vec![0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn separated_sets_are_significant_and_the_ratio_is_their_shift() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new: Vec<f64> = base.iter().map(|x| x * 0.85).collect();
        let s = shift(&base, &new, 0.99).unwrap();
        assert!((s.ratio - 0.85).abs() < 0.01, "{s:?}");
        // Complete separation: p = 2/252.
        assert!((s.p_value - 2.0 / 252.0).abs() < 1e-9, "{s:?}");
        let (lo, hi) = s.interval.unwrap();
        assert!(lo < 0.85 && hi > 0.84 && hi < 1.0, "{s:?}");
    }

    #[test]
    fn identical_sets_are_not_significant_and_few_runs_give_no_interval() {
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let s = shift(&a, &a, 0.99).unwrap();
        assert!((s.ratio - 1.0).abs() < 1e-12);
        assert!(s.p_value > 0.9, "{s:?}");
        let s = shift(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.99).unwrap();
        assert_eq!(s.interval, None, "3 and 3 runs cannot reach 99 %");
        assert!((s.p_value - 0.1).abs() < 1e-9);
        assert!(shift(&[0.0], &[1.0], 0.99).is_none());
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_test_on_large_sets() {
        let base: Vec<f64> = (0..60).map(|i| 100.0 + f64::from(i)).collect();
        let new: Vec<f64> = (0..60).map(|i| 130.0 + f64::from(i)).collect();
        let s = shift(&base, &new, 0.95).unwrap();
        assert!(s.p_value < 1e-4, "{s:?}");
        let (lo, hi) = s.interval.unwrap();
        assert!(lo < s.ratio && s.ratio < hi && lo > 1.0, "{s:?}");
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn a_percentile_interval_narrows_with_more_samples() {
        let mut h = crate::io::stats::new_latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let (p, lo, hi) = percentile_interval(&h, 0.5, 0.99).unwrap();
        assert!(lo < p && p < hi, "{lo} {p} {hi}");
        assert!((p - 500_000.0).abs() / 500_000.0 < 0.01);
        // 1000 samples: the 99 % interval of the median is about ±4 % of the ranks.
        assert!(lo > 440_000.0 && hi < 560_000.0, "{lo} {hi}");
    }
}
