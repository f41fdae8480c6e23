//! Zipf over ranks 1..=n: P(k) proportional to k^-θ, exact for any θ > 0
//! (θ = 1 included) and any n, with no table and no cap on distinct ranks.
//!
//! Method: rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-
//! inversion to generate variates from monotone discrete distributions",
//! ACM TOMACS 6(3), 1996). A continuous hat function h(x) = x^-θ is
//! inverted in closed form; a candidate is accepted by one cheap comparison
//! almost always. The helper functions keep θ = 1 (where x^(1-θ) becomes a
//! logarithm) numerically exact.

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    theta: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        assert!(n > 0 && theta > 0.0 && theta.is_finite());
        let mut z = Zipf { n, theta, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in 1..=n (1 is the most popular).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.open01() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.s || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }

    #[inline(always)]
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// ∫ h from 1 to x (up to a constant), written so that θ = 1 is exact.
    #[inline(always)]
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        exp_m1_over_x((1.0 - self.theta) * log_x) * log_x
    }

    #[inline(always)]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.theta)).max(-1.0);
        (ln_1p_over_x(t) * x).exp()
    }
}

/// ln(1 + x) / x, continuous at 0.
#[inline(always)]
fn ln_1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.ln_1p() / x } else { 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)) }
}

/// (e^x - 1) / x, continuous at 0.
#[inline(always)]
fn exp_m1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.exp_m1() / x } else { 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of the top `k` ranks of Zipf(θ) over n, computed exactly.
    fn analytic_top_share(n: u64, theta: f64, k: u64) -> f64 {
        let weight = |i: u64| (i as f64).powf(-theta);
        let total: f64 = (1..=n).map(weight).sum();
        (1..=k).map(weight).sum::<f64>() / total
    }

    fn sampled_top_share(n: u64, theta: f64, ks: &[u64], samples: u64) -> Vec<f64> {
        let z = Zipf::new(n, theta);
        let mut rng = Rng::new(42, 1);
        let mut hits = vec![0u64; ks.len()];
        for _ in 0..samples {
            let r = z.sample(&mut rng);
            assert!((1..=n).contains(&r));
            for (i, &k) in ks.iter().enumerate() {
                if r <= k {
                    hits[i] += 1;
                }
            }
        }
        hits.iter().map(|&h| h as f64 / samples as f64).collect()
    }

    #[test]
    fn matches_the_analytic_share_of_top_ranks_within_one_percent() {
        for (n, theta) in [(1u64 << 20, 1.2), (1 << 20, 1.0), (1_000_003, 0.8), (1000, 2.0)] {
            let ks = [1, 10, 100, 1000.min(n), n / 5];
            let got = sampled_top_share(n, theta, &ks, 1_000_000);
            for (&k, g) in ks.iter().zip(got) {
                let want = analytic_top_share(n, theta, k);
                assert!((g - want).abs() < 0.01, "n={n} θ={theta} top {k}: sampled {g:.4}, analytic {want:.4}");
            }
        }
    }

    #[test]
    fn works_on_huge_regions_without_a_table() {
        let z = Zipf::new(1 << 34, 1.2);
        let mut rng = Rng::new(1, 1);
        let max = (0..100_000).map(|_| z.sample(&mut rng)).max().unwrap();
        assert!(max > 1 << 20, "the tail beyond 2^20 ranks is reached: max rank {max}");
    }
}
