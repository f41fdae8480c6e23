//! The figures of a result by name, as `--expect` and `iopulse compare` write them:
//! `iops`, `bw`, `p99` (all op types together), `read.p99`, `write.iops`, `trim.p50`,
//! `cpu.per_io`. The one vocabulary both use, with each figure's unit and which way is
//! better.
//!
//! It reads a result; it neither formats (reports do) nor judges (`compare`, `expect`).

use super::RunResult;
use crate::io::stats::OpSummary;

/// What a figure counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// I/Os per second.
    Iops,
    /// Metadata operations per second (create, stat, ...): not I/Os.
    OpsPerSec,
    /// Bytes per second.
    BytesPerSec,
    /// Nanoseconds: a latency, or CPU time per I/O.
    Ns,
}

impl Unit {
    /// Higher is better for rates, lower for times.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Unit::Iops | Unit::OpsPerSec | Unit::BytesPerSec)
    }
}

/// The op types a figure name may start with (`total` is written without a prefix).
const OPS: &[&str] = &["read", "write", "flush", "trim"];

/// The metrics of an op type, with the quantile of each percentile.
const METRICS: &[(&str, Option<f64>)] = &[
    ("iops", None),
    ("bw", None),
    ("min", None),
    ("mean", None),
    ("max", None),
    ("p50", Some(0.5)),
    ("p90", Some(0.9)),
    ("p99", Some(0.99)),
    ("p99.9", Some(0.999)),
    ("p99.99", Some(0.9999)),
];

/// The CPU figures: whole process per I/O, worker threads per I/O.
const CPU: &[&str] = &["cpu.per_io", "cpu.workers_per_io"];

/// A figure name, understood.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    /// `read`, `write`, `flush`, `trim`, or `total`.
    pub op: &'static str,
    /// `iops`, `p99`, `per_io`, ...
    pub metric: &'static str,
    /// The quantile of a percentile (0.99 for p99).
    pub quantile: Option<f64>,
    pub unit: Unit,
}

/// Every name a figure may have, for error messages.
pub fn all_names() -> String {
    let metrics: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
    format!("[read.|write.|flush.|trim.]{{{}}}, {}", metrics.join(","), CPU.join(", "))
}

/// `read.p99` → op read, metric p99; `None` for a name no result has.
pub fn parse(name: &str) -> Option<Name> {
    if let Some(cpu) = CPU.iter().find(|c| **c == name) {
        let metric = cpu.trim_start_matches("cpu.");
        return Some(Name {
            op: "cpu",
            metric: CPU_METRICS.iter().find(|m| **m == metric)?,
            quantile: None,
            unit: Unit::Ns,
        });
    }
    let (op, metric) = match name.split_once('.') {
        Some((op, rest)) if OPS.contains(&op) => (*OPS.iter().find(|o| **o == op)?, rest),
        _ => ("total", name),
    };
    let (metric, quantile) = METRICS.iter().find(|(m, _)| *m == metric)?;
    let unit = match *metric {
        "iops" => Unit::Iops,
        "bw" => Unit::BytesPerSec,
        _ => Unit::Ns,
    };
    Some(Name { op, metric, quantile: *quantile, unit })
}

const CPU_METRICS: &[&str] = &["per_io", "workers_per_io"];

/// The summary of `op` in `r` (`None`: the run had no such op type).
pub fn op_summary<'a>(r: &'a RunResult, op: &str) -> Option<&'a OpSummary> {
    match op {
        "read" => Some(&r.figures.read),
        "write" => Some(&r.figures.write),
        "total" => Some(&r.figures.total),
        "flush" => r.figures.flush.as_ref(),
        "trim" => r.figures.trim.as_ref(),
        _ => None,
    }
}

/// The encoded histogram of `op` in `r` (`total` has none of its own).
pub fn histogram<'a>(r: &'a RunResult, op: &str) -> Option<&'a str> {
    match op {
        "read" => Some(&r.histograms.read),
        "write" => Some(&r.histograms.write),
        "flush" => r.histograms.flush.as_deref(),
        "trim" => r.histograms.trim.as_deref(),
        _ => None,
    }
}

/// The value of figure `name` in `r`; `None` when the run had no I/O of its op type (a
/// latency of nothing is no figure) or the op type is absent.
pub fn value(r: &RunResult, name: &Name) -> Option<f64> {
    if name.op == "cpu" {
        return Some(match name.metric {
            "per_io" => r.machine.cpu.per_io_ns,
            _ => r.machine.cpu.workers_per_io_ns,
        });
    }
    let s = op_summary(r, name.op)?;
    if s.ops == 0 {
        return None;
    }
    let l = &s.latency_ns;
    Some(match name.metric {
        "iops" => s.iops,
        "bw" => s.bw_bytes_per_sec,
        "min" => l.min as f64,
        "mean" => l.mean as f64,
        "max" => l.max as f64,
        "p50" => l.p50 as f64,
        "p90" => l.p90 as f64,
        "p99" => l.p99 as f64,
        "p99.9" => l.p99_9 as f64,
        _ => l.p99_99 as f64,
    })
}

/// The figures `iopulse compare` compares: IOPS and bandwidth of all op types together,
/// p50, p99 and p99.9 of each op type the run issued, and CPU time per I/O.
pub fn compared(r: &RunResult) -> Vec<String> {
    let mut names = vec!["iops".to_string(), "bw".to_string()];
    for op in OPS {
        if op_summary(r, op).is_some_and(|s| s.ops > 0) {
            names.extend(["p50", "p99", "p99.9"].iter().map(|m| format!("{op}.{m}")));
        }
    }
    names.push("cpu.per_io".into());
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_with_their_op_metric_and_unit() {
        let n = parse("read.p99.9").unwrap();
        assert_eq!((n.op, n.metric, n.quantile, n.unit), ("read", "p99.9", Some(0.999), Unit::Ns));
        let n = parse("iops").unwrap();
        assert_eq!((n.op, n.metric, n.unit), ("total", "iops", Unit::Iops));
        assert_eq!(parse("cpu.per_io").unwrap().unit, Unit::Ns);
        assert_eq!(parse("write.bw").unwrap().unit, Unit::BytesPerSec);
        for bad in ["read.p98", "reads.p99", "cpu", "p99.", ""] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
