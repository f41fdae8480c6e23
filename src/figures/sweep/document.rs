//! The JSON documents of `iopulse sweep` and `iopulse search` (docs/json.md): every run's
//! whole result in the order run, and what the command found (a summary per grid point and
//! the best one; the curve of a search and its answer). Plain data: built by the commands,
//! formatted by output/report/sweep.rs.

use super::summary::{Metric, PointSummary};
use crate::figures::result::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One run of a sweep or a search.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunEntry {
    /// Index into `points` (sweep) or `curve` (search) of what this run measured.
    pub point: usize,
    /// 1-based repetition of the point (sweep), 1 for a search.
    pub repetition: u32,
    /// The run's own exit code (0: it succeeded).
    pub exit_code: i32,
    pub result: RunResult,
}

/// One grid point: its flags and its runs summarised.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointEntry {
    pub index: usize,
    /// The axes' values at this point (flag long name → value as given).
    pub params: BTreeMap<String, String>,
    #[serde(flatten)]
    pub summary: PointSummary,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Best {
    pub by: Metric,
    pub point: usize,
    pub params: BTreeMap<String, String>,
    /// The median of the metric over the point's runs.
    pub median: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Axis {
    pub flag: String,
    pub values: Vec<String>,
}

/// `iopulse sweep --output-format json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepDocument {
    pub kind: String,
    pub iopulse_version: String,
    pub axes: Vec<Axis>,
    pub repeat: u32,
    /// Runs the grid asks for (points × repeat).
    pub planned_runs: usize,
    /// Every run done, in the order run (with `--resume`: the journal's first).
    pub runs: Vec<RunEntry>,
    pub points: Vec<PointEntry>,
    pub best: Option<Best>,
    /// A signal stopped the sweep before its last run.
    pub interrupted: bool,
}

/// One step of a search: the load offered and what was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// `max`, `step` (a fraction of the max), `bisect`, or `saturate`.
    pub phase: String,
    /// The rate asked for (`--rate-iops` with `--rate-total`); null for a closed-loop run.
    pub offered_iops: Option<f64>,
    /// Offered as a share of the measured maximum, in percent.
    pub offered_percent: Option<f64>,
    pub queue_depth: u32,
    pub threads: u32,
    pub iops: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub p99_99_ns: u64,
    /// A paced run: the tool's own lateness (due time to submission), part of the
    /// latencies above; how much of a miss was the tool's and not the storage's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_ns: Option<crate::io::stats::LatencySummary>,
    /// Whether this step met the bound (latency search) or the share of the max (saturate).
    pub passed: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Answer {
    /// The one line printed.
    pub text: String,
    /// A step met the bound (latency) or reached the share of the max (saturate).
    pub found: bool,
    pub max_iops: f64,
    /// Latency search: the highest IOPS measured at a passing step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    /// Latency search: the rate offered at that step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_iops: Option<f64>,
    /// Saturate: the smallest queue depth and threads found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
}

/// `iopulse search --output-format json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SearchDocument {
    pub kind: String,
    pub iopulse_version: String,
    /// `latency` or `saturate`.
    pub goal: String,
    /// Latency search: the percentile bounded ("p99") and the bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_ns: Option<u64>,
    /// Saturate: the share of the max to reach, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_percent: Option<f64>,
    /// A point per run, in the order run.
    pub curve: Vec<CurvePoint>,
    pub answer: Option<Answer>,
    /// Every run's whole result, in the order run (`point` indexes `curve`).
    pub runs: Vec<RunEntry>,
    pub interrupted: bool,
}

/// A swept value as a number on a chart's x axis: a size (`4k`) or a plain number.
fn numeric(v: &str) -> Option<f64> {
    crate::base::units::parse_size(v).ok().map(|n| n as f64).or_else(|| v.parse::<f64>().ok())
}

/// The axis a sweep's charts put on x: the first whose values are all numbers (none: the
/// sweep has no chart).
pub fn chart_x_axis(axes: &[Axis]) -> Option<&Axis> {
    axes.iter().find(|a| a.values.iter().all(|v| numeric(v).is_some()))
}

/// The chart of `metric` over a sweep: x is the first axis whose values are all numbers
/// (sizes such as 4k count), a line per combination of the other axes, each point the
/// median of its runs with their range. None without such an axis or without runs.
pub fn chart_data(doc: &SweepDocument, metric: Metric) -> Option<super::Sweep> {
    let x_axis = chart_x_axis(&doc.axes)?;
    let others: Vec<&Axis> = doc.axes.iter().filter(|a| a.flag != x_axis.flag).collect();
    let mut series: BTreeMap<String, Vec<super::SweepPoint>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for p in doc.points.iter().filter(|p| p.summary.runs > 0) {
        let label =
            others.iter().map(|a| p.params.get(&a.flag).map_or("", String::as_str)).collect::<Vec<_>>().join(" / ");
        let s = p.summary.spread(metric);
        let x = numeric(p.params.get(&x_axis.flag)?)?;
        if !series.contains_key(&label) {
            order.push(label.clone());
        }
        series.entry(label).or_default().push(super::SweepPoint {
            x,
            median: s.median,
            min: s.min,
            max: s.max,
            samples: p.summary.runs,
        });
    }
    if series.is_empty() {
        return None;
    }
    let series = order
        .into_iter()
        .map(|label| {
            let mut points = series.remove(&label).unwrap_or_default();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            super::SweepSeries { label, points }
        })
        .collect();
    let y = match metric {
        Metric::Iops => "iops",
        Metric::Bw => "bw_bytes_per_sec",
        Metric::P50 => "p50_ns",
        Metric::P99 => "p99_ns",
        Metric::CpuPerIo => "cpu_per_io_ns",
    };
    Some(super::Sweep {
        x: x_axis.flag.clone(),
        y: y.into(),
        by: (!others.is_empty()).then(|| others.iter().map(|a| a.flag.as_str()).collect::<Vec<_>>().join(" / ")),
        filters: Vec::new(),
        series,
        rows: doc.runs.len(),
        bound_y: None,
        answer_x: None,
        log_y: false,
    })
}

/// The chart of a search's curve: latency percentiles (a line each) against the IOPS
/// achieved, one point per run.
pub fn curve_chart(doc: &SearchDocument) -> super::Sweep {
    type Pick = fn(&CurvePoint) -> u64;
    let percentiles: [(&str, Pick); 4] =
        [("p50", |c| c.p50_ns), ("p99", |c| c.p99_ns), ("p99.9", |c| c.p99_9_ns), ("p99.99", |c| c.p99_99_ns)];
    let series = percentiles
        .iter()
        .map(|(label, pick)| {
            let mut points: Vec<super::SweepPoint> = doc
                .curve
                .iter()
                .map(|c| {
                    let v = pick(c) as f64;
                    super::SweepPoint { x: c.iops, median: v, min: v, max: v, samples: 1 }
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            super::SweepSeries { label: (*label).to_string(), points }
        })
        .collect();
    let bound_y = doc.bound_ns.map(|ns| {
        let percentile = doc.percentile.as_deref().unwrap_or("latency");
        (format!("{percentile} bound {}", crate::base::units::display::latency_ns(ns)), ns as f64)
    });
    // The answer named as what it is: the highest IOPS within the bound, or the smallest
    // queue depth and threads that reach the share of the maximum (no bound to be within).
    let answer_x = doc.answer.as_ref().filter(|a| a.found).and_then(|a| {
        let iops = a.iops?;
        let shown = crate::base::units::display::iops(iops);
        let label = match (doc.goal.as_str(), a.queue_depth, a.threads) {
            ("saturate", Some(d), Some(t)) => format!(
                "saturation: {shown} IOPS at QD {d} × {t} thread{} ({:.0} % of max)",
                if t == 1 { "" } else { "s" },
                doc.target_percent.unwrap_or(100.0)
            ),
            _ => format!("answer: {shown} IOPS within the bound"),
        };
        Some((label, iops))
    });
    super::Sweep {
        x: "iops".into(),
        y: "latency_ns".into(),
        by: Some("percentile".into()),
        filters: Vec::new(),
        series,
        rows: doc.curve.len(),
        bound_y,
        answer_x,
        log_y: true,
    }
}
