//! The runs of one grid point summarised: mean, median, standard deviation, min and max of
//! its IOPS, bandwidth, p50 and p99 latency and CPU per I/O; and the best point by one of
//! these. Computes only: output/report/sweep.rs formats.

use crate::figures::result::RunResult;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// Five figures of a set of values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// Of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] };
        let stddev = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Spread { mean, median, stddev, min: sorted[0], max: sorted[sorted.len() - 1] }
    }
}

/// The figures a sweep summarises, and by which the best point is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// I/Os per second, all op types (higher is better)
    Iops,
    /// bytes per second, all op types (higher is better)
    Bw,
    /// median latency of all I/Os (lower is better)
    P50,
    /// 99th percentile latency of all I/Os (lower is better)
    P99,
    /// the process's CPU time per I/O (lower is better)
    CpuPerIo,
}

impl Metric {
    /// The metric's value in one run.
    pub fn of(self, r: &RunResult) -> f64 {
        match self {
            Metric::Iops => r.figures.total.iops,
            Metric::Bw => r.figures.total.bw_bytes_per_sec,
            Metric::P50 => r.figures.total.latency_ns.p50 as f64,
            Metric::P99 => r.figures.total.latency_ns.p99 as f64,
            Metric::CpuPerIo => r.machine.cpu.per_io_ns,
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Bw)
    }

    /// Its name in the JSON document and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bw => "bw",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::CpuPerIo => "cpu-per-io",
        }
    }
}

/// One grid point's runs summarised.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    /// Runs done (the repetitions; fewer than asked when the sweep was interrupted).
    pub runs: usize,
    pub iops: Spread,
    pub bw_bytes_per_sec: Spread,
    pub p50_ns: Spread,
    pub p99_ns: Spread,
    pub cpu_per_io_ns: Spread,
}

impl PointSummary {
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a RunResult>) -> PointSummary {
        let runs: Vec<&RunResult> = runs.into_iter().collect();
        let spread = |m: Metric| Spread::of(&runs.iter().map(|r| m.of(r)).collect::<Vec<_>>());
        PointSummary {
            runs: runs.len(),
            iops: spread(Metric::Iops),
            bw_bytes_per_sec: spread(Metric::Bw),
            p50_ns: spread(Metric::P50),
            p99_ns: spread(Metric::P99),
            cpu_per_io_ns: spread(Metric::CpuPerIo),
        }
    }

    pub fn spread(&self, m: Metric) -> &Spread {
        match m {
            Metric::Iops => &self.iops,
            Metric::Bw => &self.bw_bytes_per_sec,
            Metric::P50 => &self.p50_ns,
            Metric::P99 => &self.p99_ns,
            Metric::CpuPerIo => &self.cpu_per_io_ns,
        }
    }
}

/// The index of the best of `points` by the median of `metric`, among points with runs.
pub fn best(points: &[PointSummary], metric: Metric) -> Option<usize> {
    let key = |p: &PointSummary| {
        let m = p.spread(metric).median;
        if metric.higher_is_better() { m } else { -m }
    };
    points.iter().enumerate().filter(|(_, p)| p.runs > 0).max_by(|a, b| key(a.1).total_cmp(&key(b.1))).map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_known_values() {
        let s = Spread::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.mean, s.median, s.min, s.max), (5.0, 4.5, 2.0, 9.0));
        // Sample standard deviation: sqrt(32 / 7).
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12, "{}", s.stddev);
        let one = Spread::of(&[3.0]);
        assert_eq!((one.mean, one.median, one.stddev), (3.0, 3.0, 0.0));
        assert_eq!(Spread::of(&[3.0, 1.0, 2.0]).median, 2.0);
        assert_eq!(Spread::of(&[]), Spread::default());
    }

    #[test]
    fn best_is_highest_or_lowest_median_by_metric() {
        let at = |iops: f64, p99: f64| PointSummary {
            runs: 1,
            iops: Spread { median: iops, ..Spread::default() },
            p99_ns: Spread { median: p99, ..Spread::default() },
            ..PointSummary::default()
        };
        let points = [at(10.0, 5.0), at(30.0, 9.0), at(20.0, 2.0), PointSummary::default()];
        assert_eq!(best(&points, Metric::Iops), Some(1));
        assert_eq!(best(&points, Metric::P99), Some(2));
        assert_eq!(best(&[PointSummary::default()], Metric::Iops), None);
    }
}
