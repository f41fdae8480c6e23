//! The plan of `iopulse search`, as state machines that say what to run next and learn
//! from each result; they run nothing themselves (commands/search.rs does).
//!
//! - `LatencySearch`: the highest offered rate whose latency percentile stays within a
//!   bound. Rates at fixed fractions of the measured maximum first (vdbench's curve:
//!   10, 50, 70, 80, 90, 100 %) up to the first that fails, then bisection between the last
//!   that passed and the first that failed, until they are within `precision` of the maximum.
//! - `saturate_candidates`: queue depth × threads configurations, smallest first.

use crate::io::stats::LatencySummary;

/// A latency percentile a search may bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Percentile {
    P50,
    P90,
    P99,
    P999,
    P9999,
}

impl Percentile {
    pub fn of(self, l: &LatencySummary) -> u64 {
        match self {
            Percentile::P50 => l.p50,
            Percentile::P90 => l.p90,
            Percentile::P99 => l.p99,
            Percentile::P999 => l.p99_9,
            Percentile::P9999 => l.p99_99,
        }
    }

    /// "p99", "p99.9".
    pub fn name(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P99 => "p99",
            Percentile::P999 => "p99.9",
            Percentile::P9999 => "p99.99",
        }
    }
}

/// The lowest share of the maximum probed below the first step when it fails.
const LOWEST_PROBE: f64 = 0.01;

/// The default steps, in percent of the maximum.
pub const DEFAULT_STEPS: &[f64] = &[10.0, 50.0, 70.0, 80.0, 90.0, 100.0];

#[derive(Clone, Debug)]
pub struct LatencySearch {
    max_iops: f64,
    /// Fractions of the maximum, ascending.
    steps: Vec<f64>,
    next_step: usize,
    /// Fraction of the maximum within which bisection stops.
    precision: f64,
    /// The highest offered rate that passed, and the lowest that failed.
    passed: Option<f64>,
    failed: Option<f64>,
}

impl LatencySearch {
    /// `steps_percent` ascending, each in (0, 100]; `precision_percent` > 0.
    pub fn new(max_iops: f64, steps_percent: &[f64], precision_percent: f64) -> LatencySearch {
        LatencySearch {
            max_iops,
            steps: steps_percent.iter().map(|p| p / 100.0).collect(),
            next_step: 0,
            precision: precision_percent / 100.0,
            passed: None,
            failed: None,
        }
    }

    /// The rate to offer next, and whether it is one of the steps (else a bisection); None
    /// when the search is over. When even the first step fails, the rate is halved until
    /// one passes (then bisection) or it would fall below `LOWEST_PROBE` of the maximum.
    pub fn next(&self) -> Option<(f64, bool)> {
        if self.failed.is_none() && self.next_step < self.steps.len() {
            return Some(((self.steps[self.next_step] * self.max_iops).round().max(1.0), true));
        }
        if self.passed.is_none() {
            let below = (self.failed? / 2.0).round();
            let lowest = (LOWEST_PROBE * self.max_iops).max(1.0);
            return (below >= lowest && below < self.failed?).then_some((below, false));
        }
        let (passed, failed) = (self.passed?, self.failed?);
        let mid = ((passed + failed) / 2.0).round();
        if failed - passed <= self.precision * self.max_iops || mid <= passed || mid >= failed {
            return None;
        }
        Some((mid, false))
    }

    /// What the run offered `offered_iops` showed.
    pub fn record(&mut self, offered_iops: f64, passed: bool, was_step: bool) {
        if was_step {
            self.next_step += 1;
        }
        if passed {
            self.passed = Some(self.passed.map_or(offered_iops, |p| p.max(offered_iops)));
        } else {
            self.failed = Some(self.failed.map_or(offered_iops, |f| f.min(offered_iops)));
        }
    }

    /// The highest offered rate that passed.
    pub fn answer(&self) -> Option<f64> {
        self.passed
    }
}

/// Queue depth × threads from 1 × 1 up to `max_depth` × `max_threads` (powers of two and
/// the maxima), in increasing product, fewer threads first at equal product.
pub fn saturate_candidates(max_depth: u32, max_threads: u32) -> Vec<(u32, u32)> {
    let ladder = |most: u32| {
        let mut v: Vec<u32> =
            std::iter::successors(Some(1u32), |n| n.checked_mul(2)).take_while(|n| *n < most).collect();
        v.push(most.max(1));
        v
    };
    let mut all: Vec<(u32, u32)> =
        ladder(max_depth).into_iter().flat_map(|d| ladder(max_threads).into_iter().map(move |t| (d, t))).collect();
    all.sort_by_key(|&(d, t)| (u64::from(d) * u64::from(t), t));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a system whose latency fails above `limit` IOPS offered.
    fn search(max: f64, limit: f64, precision: f64) -> (Option<f64>, Vec<f64>) {
        let mut s = LatencySearch::new(max, DEFAULT_STEPS, precision);
        let mut offered = Vec::new();
        while let Some((rate, step)) = s.next() {
            offered.push(rate);
            s.record(rate, rate <= limit, step);
            assert!(offered.len() < 50, "the search must end");
        }
        (s.answer(), offered)
    }

    #[test]
    fn steps_stop_at_the_first_failure_then_bisect_to_the_precision() {
        let (answer, offered) = search(1000.0, 760.0, 2.0);
        assert_eq!(&offered[..4], &[100.0, 500.0, 700.0, 800.0]);
        let answer = answer.unwrap();
        assert!(answer <= 760.0 && 760.0 - answer <= 20.0, "{answer} {offered:?}");
    }

    #[test]
    fn all_steps_passing_or_the_first_failing_ends_the_search() {
        let (answer, offered) = search(1000.0, 5000.0, 5.0);
        assert_eq!((answer, offered.len()), (Some(1000.0), 6));
        // Below the first step: halved until one passes, then bisected.
        let (answer, offered) = search(1000.0, 30.0, 1.0);
        assert_eq!(&offered[..3], &[100.0, 50.0, 25.0]);
        assert_eq!(answer, Some(offered.iter().copied().filter(|&r| r <= 30.0).fold(0.0, f64::max)));
        assert!(30.0 - answer.unwrap() <= 10.0, "{offered:?}");
        // Nothing passes: probes stop at 1 % of the maximum.
        let (answer, offered) = search(1000.0, 5.0, 5.0);
        assert_eq!((answer, offered), (None, vec![100.0, 50.0, 25.0, 13.0]));
    }

    #[test]
    fn saturate_candidates_grow_by_product() {
        let c = saturate_candidates(8, 2);
        assert_eq!(c[0], (1, 1));
        assert_eq!(c[1], (2, 1));
        assert_eq!(c[2], (1, 2));
        assert_eq!(*c.last().unwrap(), (8, 2));
        assert_eq!(c.len(), 8);
        assert_eq!(saturate_candidates(6, 1), vec![(1, 1), (2, 1), (4, 1), (6, 1)]);
    }
}
