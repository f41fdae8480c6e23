//! Zipf over ranks 1..=n: P(k) proportional to k^-θ, for any θ > 0 (θ = 1
//! included) and any n, with no cap on distinct ranks.
//!
//! Two parts, chosen per draw with their exact weights:
//! - the `HEAD_RANKS` most popular ranks (most of the mass for usual θ) come
//!   from an alias table (Walker/Vose) that fits in L1: one draw, one lookup;
//! - the tail, ranks above the head up to n, comes from rejection-inversion
//!   (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates
//!   from monotone discrete distributions", ACM TOMACS 6(3), 1996): a
//!   continuous hat x^-θ is inverted in closed form and a candidate is
//!   accepted by one comparison almost always. It is exact: no table, no cap.
//!
//! The tail's weight is its sum of k^-θ, from the Euler–Maclaurin formula
//! (integral plus end corrections): for a tail starting above rank 4096 the
//! error of that weight is below 1e-12 relative.

use crate::rng::Rng;

/// Ranks served by the alias table (32 KiB: 8 bytes per rank).
pub const HEAD_RANKS: u64 = 4096;

#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    /// Alias table over ranks 1..=head: (threshold on 32 random bits, alias rank - 1).
    alias: Box<[(u32, u32)]>,
    head: u64,
    /// A draw below this (on 64 bits) takes the tail; `0` when there is no tail.
    tail_below: u64,
    tail: Option<Tail>,
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        assert!(n > 0 && theta > 0.0 && theta.is_finite());
        let head = n.min(HEAD_RANKS);
        let weights: Vec<f64> = (1..=head).map(|k| (k as f64).powf(-theta)).collect();
        let head_mass: f64 = weights.iter().sum();
        let (tail, tail_mass) =
            if n > head { (Some(Tail::new(head + 1, n, theta)), tail_sum(head + 1, n, theta)) } else { (None, 0.0) };
        let tail_share = tail_mass / (head_mass + tail_mass);
        Self {
            n,
            alias: build_alias(&weights),
            head,
            tail_below: (tail_share * 18_446_744_073_709_551_616.0).min(u64::MAX as f64) as u64,
            tail,
        }
    }

    /// Number of ranks.
    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// A rank in 1..=n (1 is the most popular).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        if let Some(tail) = &self.tail
            && rng.next_u64() < self.tail_below
        {
            return tail.sample(rng);
        }
        let r = rng.next_u64();
        let column = ((r >> 32) * self.head) >> 32;
        let (threshold, alias) = self.alias[column as usize];
        if (r as u32) < threshold { column + 1 } else { u64::from(alias) + 1 }
    }
}

/// Vose's alias method: column i keeps itself with probability threshold/2^32,
/// else gives its alias. Built in O(head).
fn build_alias(weights: &[f64]) -> Box<[(u32, u32)]> {
    let n = weights.len();
    let total: f64 = weights.iter().sum();
    let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
    let mut table = vec![(u32::MAX, 0u32); n];
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        table[s] = ((scaled[s] * 4_294_967_296.0).min(u32::MAX as f64) as u32, l as u32);
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What remains has probability 1 up to rounding: always keep itself.
    for i in small.into_iter().chain(large) {
        table[i] = (u32::MAX, i as u32);
    }
    table.into_boxed_slice()
}

/// Sum of k^-θ for k in first..=last, by Euler–Maclaurin around the midpoint integral.
fn tail_sum(first: u64, last: u64, theta: f64) -> f64 {
    let (a, b) = (first as f64 - 0.5, last as f64 + 0.5);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
    // Midpoint rule corrections: -(1/24)[f'(b) - f'(a)] + (7/5760)[f'''(b) - f'''(a)].
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    integral - (d1(b) - d1(a)) / 24.0 + 7.0 * (d3(b) - d3(a)) / 5760.0
}

/// Rejection-inversion over ranks first..=last.
#[derive(Clone, Debug)]
struct Tail {
    first: u64,
    last: u64,
    theta: f64,
    /// Upper end of the uniform draw: H(first + 1/2) - h(first).
    u_top: f64,
    /// Lower end: H(last + 1/2).
    u_bottom: f64,
    /// Candidates with k - x below this are accepted without evaluating the test.
    quick_accept: f64,
}

impl Tail {
    fn new(first: u64, last: u64, theta: f64) -> Self {
        let mut t = Tail { first, last, theta, u_top: 0.0, u_bottom: 0.0, quick_accept: 0.0 };
        let f = first as f64;
        t.u_top = t.h_integral(f + 0.5) - t.h(f);
        t.u_bottom = t.h_integral(last as f64 + 0.5);
        // k - x is accepted outright below its smallest acceptable value, reached at the
        // second rank (Hörmann and Derflinger's bound, for a range starting at `first`).
        t.quick_accept = (f + 1.0) - t.h_integral_inverse(t.h_integral(f + 1.5) - t.h(f + 1.0));
        t
    }

    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.u_bottom + rng.open01() * (self.u_top - self.u_bottom);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5) as u64).clamp(self.first, self.last);
            let kf = k as f64;
            if kf - x <= self.quick_accept || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }

    #[inline(always)]
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// ∫ h from 1 to x, written so that θ = 1 is exact.
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

    /// Share of the ranks in `from..=to` under Zipf(θ) over n, summed exactly.
    fn analytic_share(n: u64, theta: f64, from: u64, to: u64) -> f64 {
        let weight = |i: u64| (i as f64).powf(-theta);
        let total: f64 = (1..=n).map(weight).sum();
        (from..=to).map(weight).sum::<f64>() / total
    }

    #[test]
    fn matches_the_analytic_share_of_rank_ranges_within_one_percent() {
        for (n, theta) in [(1u64 << 20, 1.2), (1 << 20, 1.0), (1_000_003, 0.8), (1000, 2.0), (5000, 1.2)] {
            let z = Zipf::new(n, theta);
            let mut rng = Rng::new(42, 1);
            // Ranges inside the head, across the head/tail boundary and in the tail.
            let ranges = [(1, 1), (2, 10), (11, 100), (1000, 5000), (4097, 50_000), (50_001, n)];
            let mut hits = [0u64; 6];
            let samples = 1_000_000u64;
            for _ in 0..samples {
                let r = z.sample(&mut rng);
                assert!((1..=n).contains(&r), "{r} outside 1..={n}");
                for (i, &(a, b)) in ranges.iter().enumerate() {
                    if (a..=b).contains(&r) {
                        hits[i] += 1;
                    }
                }
            }
            for (i, &(a, b)) in ranges.iter().enumerate() {
                if a > n {
                    continue;
                }
                let want = analytic_share(n, theta, a, b.min(n));
                let got = hits[i] as f64 / samples as f64;
                assert!(
                    (got - want).abs() < 0.01,
                    "n={n} θ={theta} ranks {a}..={b}: sampled {got:.4}, analytic {want:.4}"
                );
            }
        }
    }

    #[test]
    fn tail_sum_agrees_with_direct_summation() {
        for theta in [0.5, 1.0, 1.2, 2.0] {
            let direct: f64 = (4097..=2_000_000u64).map(|k| (k as f64).powf(-theta)).sum();
            let formula = tail_sum(4097, 2_000_000, theta);
            assert!((formula / direct - 1.0).abs() < 1e-10, "θ={theta}: {formula} vs {direct}");
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
