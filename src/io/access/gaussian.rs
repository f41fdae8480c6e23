//! A truncated gaussian over the region: a block number in 0..n (a
//! position, not a rank: the caller does not scatter it).

use crate::base::primitives::rng::Rng;
use rand_distr::{Distribution, StandardNormal};

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
