//! Figures that describe how a run's measurements were spread, as fio's tools read them:
//! statistics over the interval rows' rates (min, max, mean, sample standard deviation,
//! samples: fio's `iops_*`/`bw_*`), the share of I/Os whose latency falls between fixed
//! bounds (fio's `latency_ns`/`latency_us`/`latency_ms`), and a histogram's recorded
//! buckets with their counts (fio's json+ `bins`).
//!
//! Computes only: naming the figures after fio's keys is the report's business.

use super::interval::TimeSeriesRow;
use hdrhistogram::Histogram;

/// Statistics over one rate's samples (one per interval row).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStats {
    pub samples: u64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1), 0 with fewer than two samples.
    pub stddev: f64,
}

impl SampleStats {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let values: Vec<f64> = values.into_iter().collect();
        if values.is_empty() {
            return Self::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var =
            if values.len() > 1 { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
        Self {
            samples: values.len() as u64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean,
            stddev: var.sqrt(),
        }
    }
}

/// The rows that make samples: the window's (not the ramp's), each a whole interval. The
/// last row, cut short by the window's end, is left out when it is shorter than half of
/// `interval_ns` (a sliver's rate says little), unless it is the only one.
pub fn sample_rows(rows: &[TimeSeriesRow], interval_ns: u64) -> Vec<&TimeSeriesRow> {
    let mut kept: Vec<&TimeSeriesRow> = rows.iter().filter(|r| !r.ramp && r.interval_ns > 0).collect();
    if kept.len() > 1 && kept.last().is_some_and(|r| r.interval_ns.saturating_mul(2) < interval_ns) {
        kept.pop();
    }
    kept
}

/// The counts of `hists`' I/Os (all together) whose latency is below each bound of
/// `bounds_ns` and at or above the one before it; the last entry counts those at or above
/// the last bound. `bounds_ns` ascending.
pub fn counts_below(hists: &[&Histogram<u64>], bounds_ns: &[u64]) -> Vec<u64> {
    let mut counts = vec![0u64; bounds_ns.len() + 1];
    for h in hists {
        for v in h.iter_recorded() {
            let value_ns = h.lowest_equivalent(v.value_iterated_to());
            let slot = bounds_ns.partition_point(|&b| b <= value_ns);
            counts[slot] += v.count_at_value();
        }
    }
    counts
}

/// Every recorded bucket of `hist`: (the bucket's value, ns; its count), ascending. The
/// counts add up to the histogram's total.
pub fn recorded_buckets(hist: &Histogram<u64>) -> Vec<(u64, u64)> {
    hist.iter_recorded().map(|v| (hist.highest_equivalent(v.value_iterated_to()), v.count_at_value())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_statistics() {
        let s = SampleStats::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.samples, s.min, s.max, s.mean), (8, 2.0, 9.0, 5.0));
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(SampleStats::of([3.0]).stddev, 0.0);
        assert_eq!(SampleStats::of([]).samples, 0);
    }

    #[test]
    fn counts_between_bounds_add_up() {
        let mut h = crate::io::stats::new_latency_histogram();
        for ns in [1u64, 3, 999, 1000, 1500, 5_000_000] {
            h.record(ns).unwrap();
        }
        let c = counts_below(&[&h], &[2, 4, 1000, 2000]);
        assert_eq!(c, vec![1, 1, 1, 2, 1]);
        let buckets = recorded_buckets(&h);
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), 6);
        assert_eq!(buckets[0], (1, 1));
        assert!(buckets.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
