//! SVG charts (plotters' SVG backend: no system library, no font files):
//!
//! - `latency-percentiles.svg`: the latency percentile curve of each op type,
//!   from the result's histograms, both axes logarithmic (x: 90 %, 99 %,
//!   99.9 %, ... evenly spaced; y: decades of latency);
//! - `iops-over-time.svg` and `p99-over-time.svg`: from the result's
//!   `time_series` array, when it has one, with the `--ramp` (grey) and the
//!   `--steady-state` window (green when steady, red when the last window judged was
//!   not) as shaded bands;
//! - a sweep read back from a `--csv` file (`iopulse plot --sweep`);
//! - a job file's result: the charts of the combined figures, and each job's named
//!   after it (`job-NAME-latency-percentiles.svg`, ...).
//!
//! Draws what `stats` and `sweep` computed; computes no figure itself.
//!
//! How every chart is drawn is `draw.rs`; the sweep's chart is `sweep.rs`.

use super::units;
use crate::base::diagnostics::error::UsageError;
use crate::figures::result::RunResult;
use crate::figures::sweep::document::Axis;
use crate::figures::sweep::summary::Metric;
use crate::io::stats::interval::TimeSeriesRow;
use crate::io::stats::{HistogramCodecError, decode_histogram, percentile_curve};
use std::ops::Range;
use std::path::{Path, PathBuf};

mod draw;
mod sweep;

use draw::{Band, bands};
pub(in crate::output::report) use draw::{Chart, Line, axis_label, nice_top, render, write};
pub use sweep::{sweep_chart, sweep_svg};

const LATENCY_CHART: &str = "latency-percentiles.svg";

const IOPS_CHART: &str = "iops-over-time.svg";

const P99_CHART: &str = "p99-over-time.svg";

/// Every chart a result can have (`--plot` checks each before the run).
pub const CHARTS: &[&str] = &[LATENCY_CHART, IOPS_CHART, P99_CHART];

/// The chart of a search (`iopulse search --plot DIR`).
pub const SEARCH_CHART: &str = "search-curve.svg";

/// The metrics a sweep draws against its x axis (`iopulse sweep --plot DIR`).
pub const SWEEP_CHART_METRICS: [Metric; 2] = [Metric::Iops, Metric::P99];

const SIZE: (u32, u32) = (960, 600);

/// The charts' title size.
pub(super) const TITLE_PX: u32 = 18;

/// The chart's margin on each side, in pixels.
const MARGIN_PX: u32 = 16;

/// `TITLE_PX`, or less (down to 10 px) for a title that would not fit across the chart at
/// it: the viewer draws the text, so its width is estimated (an average sans-serif
/// character is at most half as wide as the font is high).
pub(super) fn fitted_title_px(title: &str) -> u32 {
    let width_px = f64::from(SIZE.0 - 2 * MARGIN_PX);
    let chars = title.chars().count().max(1) as f64;
    let fit = (width_px / (0.5 * chars)).floor() as u32;
    fit.clamp(10, TITLE_PX)
}

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("draw {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("the result's latency histograms: {0}")]
    Histogram(#[from] HistogramCodecError),
}

/// The charts written, and what was skipped and why.
#[derive(Debug, Default)]
pub struct PlotOutcome {
    pub written: Vec<PathBuf>,
    pub notes: Vec<String>,
}

/// Before a run: `flag DIR` is a directory, or can be created (its parent exists).
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), UsageError> {
    if dir.is_dir() {
        return Ok(());
    }
    if dir.exists() {
        return Err(UsageError::new(format!("{flag} {}: exists and is not a directory", dir.display())));
    }
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(UsageError::new(format!(
            "{flag} {}: directory {} does not exist",
            dir.display(),
            parent.display()
        )));
    }
    Ok(())
}

/// Writes the charts of one result into `dir` (created if missing): its latency
/// percentiles, and its time series when it has one.
pub fn result_charts(r: &RunResult, dir: &Path) -> Result<PlotOutcome, PlotError> {
    named_charts(r, &r.time_series, dir, "")
}

/// The file names of the charts a single run may write under `--plot DIR` (the charts over
/// time only when it records a time series): what the guard checks before the run.
pub fn run_chart_names() -> Vec<String> {
    CHARTS.iter().map(|c| c.to_string()).collect()
}

/// The file names of the charts a job file's run of the jobs `names` may write under
/// `--plot DIR`: the combined figures' and each job's.
pub fn job_chart_names(names: &[&str]) -> Vec<String> {
    let mut prefixes = vec![String::new()];
    prefixes.extend(job_chart_prefixes(names));
    prefixes.iter().flat_map(|p| CHARTS.iter().map(move |c| format!("{p}{c}"))).collect()
}

/// The file name of a sweep's chart of `metric` against `x` (a swept flag).
pub fn sweep_chart_name(metric: Metric, x: &str) -> String {
    format!("sweep-{}-vs-{x}.svg", metric.name())
}

/// The file names of the charts a sweep over `axes` may write under `--plot DIR`: one per
/// metric of `SWEEP_CHART_METRICS` against its x axis (`document::chart_x_axis`); none
/// when no axis is numeric.
pub fn sweep_chart_names(axes: &[Axis]) -> Vec<String> {
    match crate::figures::sweep::document::chart_x_axis(axes) {
        Some(x) => SWEEP_CHART_METRICS.iter().map(|&m| sweep_chart_name(m, &x.flag)).collect(),
        None => Vec::new(),
    }
}

/// The file names of the charts a search may write under `--plot DIR`.
pub fn search_chart_names() -> Vec<String> {
    vec![SEARCH_CHART.to_string()]
}

/// The prefix of each job's charts (`job-NAME-latency-percentiles.svg`), in the order of
/// `names`, made file-safe (`ledger::output::file_safe_names`).
pub fn job_chart_prefixes(names: &[&str]) -> Vec<String> {
    crate::storage::ledger::output::file_safe_names(names).into_iter().map(|n| format!("job-{n}-")).collect()
}

/// As `result_charts`, with the rows `time_series` drawn over time (none: the charts over
/// time are not drawn), each file's name after `prefix` (a job's charts: `job-NAME-`).
pub fn named_charts(
    r: &RunResult,
    time_series: &[TimeSeriesRow],
    dir: &Path,
    prefix: &str,
) -> Result<PlotOutcome, PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io { path: dir.to_path_buf(), source })?;
    let mut outcome = PlotOutcome::default();
    let path = dir.join(format!("{prefix}{LATENCY_CHART}"));
    if let Some(svg) = latency_chart(r)? {
        write(&path, &svg)?;
        outcome.written.push(path);
    } else {
        outcome.notes.push(format!("no I/O completed: {prefix}{LATENCY_CHART} not drawn"));
    }
    match time_points(time_series) {
        points if !points.is_empty() => {
            for (name, draw) in [
                (IOPS_CHART, iops_chart as fn(&RunResult, &[TimePoint]) -> Result<String, PlotError>),
                (P99_CHART, p99_chart),
            ] {
                let path = dir.join(format!("{prefix}{name}"));
                write(&path, &draw(r, &points)?)?;
                outcome.written.push(path);
            }
        }
        _ => outcome.notes.push(format!(
            "the result has no time_series: {prefix}{IOPS_CHART} and {prefix}{P99_CHART} not drawn (they need a run that recorded a time series)"
        )),
    }
    Ok(outcome)
}

/// The charts of `r` as SVG documents, in memory, for a page to hold (`report::html`): its
/// latency percentiles (none when no I/O completed), then its IOPS and p99 over the rows of
/// `time_series` (none without rows). The same charts `named_charts` writes.
pub fn result_svgs(r: &RunResult, time_series: &[TimeSeriesRow]) -> Result<Vec<String>, PlotError> {
    let mut svgs: Vec<String> = latency_chart(r)?.into_iter().collect();
    let points = time_points(time_series);
    if !points.is_empty() {
        svgs.push(iops_chart(r, &points)?);
        svgs.push(p99_chart(r, &points)?);
    }
    Ok(svgs)
}

/// "4 KiB random reads · sync · QD 1 · 1 thread" for chart titles.
fn workload(r: &RunResult) -> String {
    let s = &r.spec;
    // A replay's sizes, mix and order are its trace's, not the spec's.
    if let Some(replay) = &r.schedule.replay {
        let file = replay.trace_files.first().map(|f| f.rsplit('/').next().unwrap_or(f)).unwrap_or("a trace");
        let speed = replay.timing.speed.map_or_else(|| "as fast as possible".to_string(), |x| format!("at {x}×"));
        return format!("replay of {file} {speed} · {} · QD {}", r.engine.name, s.shape.queue_depth);
    }
    let order = match s.access.order {
        crate::workload::spec::AccessOrder::Sequential => "sequential",
        crate::workload::spec::AccessOrder::Random => match s.access.distribution {
            crate::workload::spec::Distribution::Uniform => "random",
            d => d.name(),
        },
    };
    let mix = match s.access.read_percent {
        100 => "reads".to_string(),
        0 => "writes".to_string(),
        p => format!("{p}/{} read/write", 100 - p),
    };
    // A job file's combined figures name its jobs; a merge, its count of results.
    let sources = r
        .combined
        .merged_from
        .as_ref()
        .map(|m| {
            let jobs: Vec<&str> =
                m.iter().filter_map(|s| s.file.strip_prefix("job [").and_then(|j| j.strip_suffix(']'))).collect();
            if jobs.len() == m.len() {
                format!(" · jobs {} combined", jobs.join(", "))
            } else if m.iter().all(|s| s.file.starts_with("phase ")) {
                format!(" · {} phases combined", m.len())
            } else {
                format!(" · {} merged results", m.len())
            }
        })
        .unwrap_or_default();
    format!(
        "{} {order} {mix} · {} · QD {} · {} thread{}{sources}",
        super::block_size_text(s),
        r.engine.name,
        s.shape.queue_depth,
        s.shape.threads,
        if s.shape.threads == 1 { "" } else { "s" }
    )
}

/// Percentile p (0-100) → x = log10(1 / (1 - p/100)): 90 % at 1, 99 % at 2, 99.9 % at 3.
pub(super) fn percentile_x(p: f64) -> f64 {
    (1.0 / (1.0 - p / 100.0)).log10()
}

/// x → "99.9%": the inverse of `percentile_x`, with as many decimals as it has nines.
pub(super) fn percentile_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    let decimals = (x.ceil() as i64 - 2).clamp(0, 6) as usize;
    format!("{p:.decimals$}%")
}

pub(super) fn latency_label(log10_ns: f64) -> String {
    units::latency_ns(10f64.powf(log10_ns).round() as u64)
}

/// The latency percentile chart of `r`; None when no I/O completed.
fn latency_chart(r: &RunResult) -> Result<Option<String>, PlotError> {
    let mut lines = Vec::new();
    let mut x_end: f64 = 1.0;
    let mut curves = Vec::new();
    for (name, op, encoded) in
        [("read", &r.figures.read, &r.histograms.read), ("write", &r.figures.write, &r.histograms.write)]
    {
        if op.ops == 0 {
            continue;
        }
        let hist = decode_histogram(encoded)?;
        let curve = percentile_curve(&hist, op.latency_ns.min, op.latency_ns.max);
        x_end = curve.iter().filter(|(p, _)| *p < 100.0).map(|&(p, _)| percentile_x(p)).fold(x_end, f64::max);
        curves.push((name, op.ops, curve));
    }
    if curves.is_empty() {
        return Ok(None);
    }
    // The max sits a little right of the last finite percentile.
    let x_max = x_end + 0.25;
    let (mut y_lo, mut y_hi) = (f64::MAX, f64::MIN);
    for (name, ops, curve) in curves {
        let points: Vec<(f64, f64)> = curve
            .iter()
            .map(|&(p, v)| {
                let x = if p >= 100.0 { x_max } else { percentile_x(p) };
                (x, (v.max(1) as f64).log10())
            })
            .collect();
        for &(_, y) in &points {
            y_lo = y_lo.min(y);
            y_hi = y_hi.max(y);
        }
        lines.push(Line { label: format!("{name} ({} I/Os)", units::count(ops)), points, ranges: vec![] });
    }
    let y_range = y_lo.floor()..(y_hi.ceil()).max(y_lo.floor() + 1.0);
    render(
        LATENCY_CHART,
        &Chart {
            title: format!("Latency percentiles · {}", workload(r)),
            title_px: TITLE_PX,
            x_desc: "percentile (log scale: each step is one more nine)".into(),
            y_desc: "latency (log scale)".into(),
            x_range: 0.0..x_max,
            y_range,
            x_format: &|x| if *x > x_end + 0.1 { "max".into() } else { percentile_label(*x) },
            y_format: &|y| latency_label(*y),
            lines,
            bands: Vec::new(),
        },
    )
    .map(Some)
}

/// One row of the time series, as drawn.
#[derive(Clone, Debug, Default, PartialEq)]
struct TimePoint {
    t_s: f64,
    read_iops: Option<f64>,
    write_iops: Option<f64>,
    total_iops: Option<f64>,
    read_p99_ns: Option<f64>,
    write_p99_ns: Option<f64>,
}

/// The rows of a time series as points: the end of each interval in seconds from the
/// release, per op type its IOPS and p99 latency, and the total IOPS.
fn time_points(rows: &[TimeSeriesRow]) -> Vec<TimePoint> {
    rows.iter()
        .map(|row| TimePoint {
            t_s: row.t_ns as f64 / 1e9,
            read_iops: Some(row.read.iops),
            write_iops: Some(row.write.iops),
            total_iops: Some(row.total.iops),
            read_p99_ns: Some(row.read.latency_ns.p99 as f64),
            write_p99_ns: Some(row.write.latency_ns.p99 as f64),
        })
        .collect()
}

/// Reads one figure of a time point.
type Field = fn(&TimePoint) -> Option<f64>;

fn time_range(points: &[TimePoint]) -> Range<f64> {
    let end = points.iter().map(|p| p.t_s).fold(0.0, f64::max);
    0.0..if end > 0.0 { end } else { 1.0 }
}

fn iops_chart(r: &RunResult, points: &[TimePoint]) -> Result<String, PlotError> {
    let mut lines = time_lines(points, &[("read", |p| p.read_iops), ("write", |p| p.write_iops)]);
    // Beside a single op type, the total would only repeat its line.
    if lines.len() == 2 {
        lines.extend(time_lines(points, &[("total", |p| p.total_iops)]));
    }
    let title = format!("IOPS over time · {}", workload(r));
    time_chart(IOPS_CHART, points, title, "IOPS", &|y| units::iops(*y), lines, bands(r))
}

fn p99_chart(r: &RunResult, points: &[TimePoint]) -> Result<String, PlotError> {
    let lines = time_lines(points, &[("read p99", |p| p.read_p99_ns), ("write p99", |p| p.write_p99_ns)]);
    let title = format!("p99 latency over time · {}", workload(r));
    let y_format = |y: &f64| units::latency_ns(y.round() as u64);
    time_chart(P99_CHART, points, title, "p99 latency of the interval", &y_format, lines, bands(r))
}

/// One line per named series of the time series, over time; a series missing or
/// all zero (an op type that never ran) is left out.
fn time_lines(points: &[TimePoint], series: &[(&str, Field)]) -> Vec<Line> {
    series
        .iter()
        .map(|&(name, get)| Line {
            label: name.into(),
            points: points.iter().filter_map(|p| get(p).map(|v| (p.t_s, v))).collect(),
            ranges: vec![],
        })
        .filter(|line| line.points.iter().any(|&(_, v)| v != 0.0))
        .collect()
}

/// Draws `lines` against the run's time in seconds, the y axis linear from 0.
fn time_chart(
    name: &str,
    points: &[TimePoint],
    title: String,
    y_desc: &str,
    y_format: &dyn Fn(&f64) -> String,
    lines: Vec<Line>,
    bands: Vec<Band>,
) -> Result<String, PlotError> {
    let y_max = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).fold(0.0, f64::max);
    let x_range = time_range(points);
    render(
        name,
        &Chart {
            title,
            title_px: TITLE_PX,
            x_desc: "time (s)".into(),
            y_desc: y_desc.into(),
            x_range: x_range.clone(),
            y_range: 0.0..nice_top(y_max),
            x_format: &|x| axis_label(*x, x_range.end - x_range.start),
            y_format,
            lines,
            bands,
        },
    )
}

#[cfg(test)]
mod tests;
