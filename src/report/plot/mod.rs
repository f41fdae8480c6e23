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

use super::units;
use crate::diagnostics::error::UsageError;
use crate::result::RunResult;
use crate::stats::interval::TimeSeriesRow;
use crate::stats::{HistogramCodecError, decode_histogram, percentile_curve};
use crate::sweep::Sweep;
use crate::sweep::document::Axis;
use crate::sweep::summary::Metric;
use plotters::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};

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
    match crate::sweep::document::chart_x_axis(axes) {
        Some(x) => SWEEP_CHART_METRICS.iter().map(|&m| sweep_chart_name(m, &x.flag)).collect(),
        None => Vec::new(),
    }
}

/// The file names of the charts a search may write under `--plot DIR`.
pub fn search_chart_names() -> Vec<String> {
    vec![SEARCH_CHART.to_string()]
}

/// The prefix of each job's charts (`job-NAME-latency-percentiles.svg`), in the order of
/// `names`, made file-safe (`output_path::file_safe_names`).
pub fn job_chart_prefixes(names: &[&str]) -> Vec<String> {
    super::output_path::file_safe_names(names).into_iter().map(|n| format!("job-{n}-")).collect()
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
    let order = match s.order {
        crate::spec::AccessOrder::Sequential => "sequential",
        crate::spec::AccessOrder::Random => match s.distribution {
            crate::spec::Distribution::Uniform => "random",
            d => d.name(),
        },
    };
    let mix = match s.read_percent {
        100 => "reads".to_string(),
        0 => "writes".to_string(),
        p => format!("{p}/{} read/write", 100 - p),
    };
    // A job file's combined figures name its jobs; a merge, its count of results.
    let sources = r
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
        s.queue_depth,
        s.threads,
        if s.threads == 1 { "" } else { "s" }
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
    for (name, op, encoded) in [("read", &r.read, &r.histograms.read), ("write", &r.write, &r.histograms.write)] {
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

/// Draws a sweep into `path`: a line through the medians of each series, the range of
/// the repetitions as a bar. The x axis is logarithmic (base 2) when x spans 8× or more.
pub fn sweep_chart(sweep: &Sweep, path: &Path) -> Result<(), PlotError> {
    write(path, &sweep_svg(sweep)?)
}

/// The chart `sweep_chart` draws, as an SVG document in memory.
pub fn sweep_svg(sweep: &Sweep) -> Result<String, PlotError> {
    let xs = || sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
    let (x_min, x_max) = (xs().fold(f64::MAX, f64::min), xs().fold(f64::MIN, f64::max));
    // A log axis only where its ticks, powers of two, are values the sweep can take (sizes,
    // queue depths); measured figures (IOPS of a search) stay linear with decimal ticks.
    let powers_of_two = xs().all(|x| x >= 1.0 && x.fract() == 0.0 && (x as u64).is_power_of_two());
    let log_x = x_min > 0.0 && x_max / x_min >= 8.0 && powers_of_two;
    let tx = |x: f64| if log_x { x.log2() } else { x };
    let lines: Vec<Line> = sweep
        .series
        .iter()
        .map(|s| Line {
            label: match &sweep.by {
                Some(by) => format!("{by} = {}", s.label),
                None => column_label(&sweep.y),
            },
            points: s.points.iter().map(|p| (tx(p.x), p.median)).collect(),
            ranges: s.points.iter().filter(|p| p.samples > 1).map(|p| (tx(p.x), p.min, p.max)).collect(),
        })
        .collect();
    let y_max = sweep
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.max))
        .chain(sweep.bound_y.as_ref().map(|(_, y)| *y))
        .fold(0.0, f64::max);
    let (lo, hi) = (tx(x_min), tx(x_max));
    let pad = if hi > lo { (hi - lo) * 0.04 } else { 1.0 };
    let reps = sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.samples)).max().unwrap_or(1);
    let y_unit = column_unit(&sweep.y);
    let x_is_size = column_unit(&sweep.x) == ColumnUnit::Bytes;
    let (x_label, y_label) = (column_label(&sweep.x), column_label(&sweep.y));
    let mut lines = lines;
    if let Some((label, y)) = &sweep.bound_y {
        lines.push(Line { label: label.clone(), points: vec![(lo - pad, *y), (hi + pad, *y)], ranges: Vec::new() });
    }
    if let Some((label, x)) = &sweep.answer_x {
        let x = tx(*x);
        lines.push(Line { label: label.clone(), points: vec![(x, 0.0), (x, nice_top(y_max))], ranges: Vec::new() });
    }
    render(
        "sweep chart",
        &Chart {
            title: format!(
                "{} vs {}{}{} · {} runs{}",
                y_label,
                column_label(&sweep.x),
                sweep.by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default(),
                if sweep.filters.is_empty() { String::new() } else { format!(" ({})", sweep.filters.join(", ")) },
                sweep.rows,
                if reps > 1 { " (line: median, band: min-max of the repetitions)" } else { "" }
            ),
            title_px: TITLE_PX,
            x_desc: if log_x { format!("{x_label} (log scale)") } else { x_label.clone() },
            y_desc: y_label.clone(),
            x_range: (lo - pad)..(hi + pad),
            y_range: 0.0..nice_top(y_max),
            x_format: &|x| {
                // A log axis is labelled at powers of two only.
                if log_x && (x - x.round()).abs() > 1e-6 {
                    return String::new();
                }
                let v = if log_x { 2f64.powf(x.round()) } else { *x };
                if x_is_size && v >= 1.0 && (v - v.round()).abs() < 1e-6 {
                    size_label(v.round() as u64)
                } else if v.abs() >= 1e3 {
                    compact(v)
                } else if (v - v.round()).abs() < 1e-6 {
                    format!("{}", v.round())
                } else {
                    format!("{v:.2}")
                }
            },
            y_format: &|y| match y_unit {
                ColumnUnit::Ns => units::latency_ns(y.round().max(0.0) as u64),
                ColumnUnit::BytesPerSec => units::bandwidth_binary(*y),
                _ => compact(*y),
            },
            lines,
            bands: Vec::new(),
        },
    )
}

/// What a sweep column counts, by its name (`read_p99_ns`, `bw_bytes_per_sec`,
/// `block_size`, `queue-depth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ColumnUnit {
    Ns,
    BytesPerSec,
    Bytes,
    Plain,
}

fn column_unit(column: &str) -> ColumnUnit {
    let c = column.replace('-', "_");
    if c.ends_with("_ns") {
        ColumnUnit::Ns
    } else if c.ends_with("bytes_per_sec") {
        ColumnUnit::BytesPerSec
    } else if c.ends_with("block_size") || c.ends_with("file_size") || c.ends_with("_bytes") {
        ColumnUnit::Bytes
    } else {
        ColumnUnit::Plain
    }
}

/// A column as an axis title, in words with its unit: `read_p99_ns` → "read p99 latency",
/// `bw_bytes_per_sec` → "bandwidth (per second)", `iops` → "IOPS", `queue-depth` →
/// "queue depth" (never a field name with `_ns` or `_bytes_per_sec`).
fn column_label(column: &str) -> String {
    let c = column.replace('-', "_");
    let words = |s: &str| s.replace('_', " ");
    match column_unit(&c) {
        ColumnUnit::Ns => {
            let stem = c.trim_end_matches("_ns");
            match stem {
                "cpu_per_io" => "CPU time per I/O".into(),
                "latency" => "latency".into(),
                s => format!("{} latency", words(s)),
            }
        }
        ColumnUnit::BytesPerSec => {
            let stem =
                c.trim_end_matches("bytes_per_sec").trim_end_matches('_').trim_end_matches("bw").trim_end_matches('_');
            if stem.is_empty() { "bandwidth".into() } else { format!("{} bandwidth", words(stem)) }
        }
        _ => {
            let text = words(&c);
            text.replace("iops", "IOPS")
        }
    }
}

/// 4096 → "4k", 65536 → "64k", 1048576 → "1m", 512 → "512" (as sizes are typed).
fn size_label(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    if bytes >= 1024 { format!("{:.1}k", bytes as f64 / 1024.0) } else { bytes.to_string() }
}

/// A label of a linear axis `width` wide: as many decimals as its ticks need, trailing
/// zeros dropped (0, 0.25, 0.5, 1 on a 250 ms time axis; 0, 20, 40 on a long one). The
/// ticks are 1, 2 or 5 times a power of ten and at least a tenth of the axis apart, so
/// one decimal more than that tenth has keeps every label distinct and exact.
pub(super) fn axis_label(x: f64, width: f64) -> String {
    let decimals = if width > 0.0 && width.is_finite() {
        (1.0 - (width / 10.0).log10().floor()).clamp(0.0, 9.0) as usize
    } else {
        0
    };
    let text = format!("{x:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { text.as_str() };
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// 12500 → "12.5K", 3 → "3", 0.25 → "0.25".
fn compact(v: f64) -> String {
    if v.abs() >= 1e3 || v == v.round() { units::iops(v) } else { format!("{v:.2}") }
}

/// The top of a linear axis: a little above the largest value (1 when all are 0).
pub(super) fn nice_top(max: f64) -> f64 {
    if max > 0.0 { max * 1.08 } else { 1.0 }
}

pub(super) struct Line {
    pub(super) label: String,
    pub(super) points: Vec<(f64, f64)>,
    /// (x, low, high): a band from the first to the last (a bar when only one).
    pub(super) ranges: Vec<(f64, f64, f64)>,
}

pub(super) struct Chart<'a> {
    pub(super) title: String,
    /// The title's font size in pixels (`TITLE_PX`, or `fitted_title_px` for a title that
    /// may be long).
    pub(super) title_px: u32,
    pub(super) x_desc: String,
    pub(super) y_desc: String,
    pub(super) x_range: Range<f64>,
    pub(super) y_range: Range<f64>,
    pub(super) x_format: &'a dyn Fn(&f64) -> String,
    pub(super) y_format: &'a dyn Fn(&f64) -> String,
    pub(super) lines: Vec<Line>,
    /// Shaded spans of x, drawn under the lines, each with its legend entry.
    pub(super) bands: Vec<Band>,
}

/// A shaded span of x: the ramp, the steady-state window.
pub(super) struct Band {
    from: f64,
    to: f64,
    label: String,
    color: RGBColor,
}

/// The ramp and the steady-state window of `r`, in seconds from the release.
fn bands(r: &RunResult) -> Vec<Band> {
    let mut bands = Vec::new();
    if r.ramp_ns > 0 {
        let label = format!("ramp ({}, not counted)", units::seconds_ns(r.ramp_ns));
        bands.push(Band { from: 0.0, to: r.ramp_ns as f64 / 1e9, label, color: RGBColor(160, 160, 160) });
    }
    if let Some(s) = &r.steady_state
        && let Some(w) = &s.window
    {
        let (label, color) = if s.reached {
            (format!("steady window ({})", s.criterion), RGBColor(60, 170, 90))
        } else {
            (format!("last window, NOT steady ({})", s.criterion), RGBColor(210, 60, 60))
        };
        bands.push(Band { from: w.start_ns as f64 / 1e9, to: w.end_ns as f64 / 1e9, label, color });
    }
    bands
}

/// The plotting area's height in pixels, at most: the chart's less its margins, caption and
/// x label area.
const PLOT_HEIGHT_PX: f64 = 480.0;

/// `y` raised at the top so that a legend of `entries` rows in the upper left sits above
/// every value of the old range: a legend covers no data.
fn with_legend_room(y: Range<f64>, entries: usize) -> Range<f64> {
    if entries == 0 {
        return y;
    }
    // plotters' legend: 12 px text rows, 10 px margins, 5 px from the corner.
    let legend_px = entries as f64 * 16.0 + 40.0;
    let share = (legend_px / PLOT_HEIGHT_PX).min(0.6);
    y.start..y.start + (y.end - y.start) / (1.0 - share)
}

/// Draws `chart` (named `name` in errors) into memory: an SVG document.
pub(super) fn render(name: &str, chart: &Chart) -> Result<String, PlotError> {
    let mut svg = String::new();
    draw_into(&mut svg, Path::new(name), chart)?;
    Ok(svg)
}

/// Writes a chart whole (temporary file and rename), so an interrupted or failed write
/// never leaves half a chart. The write follows a symlink only to where the output guard
/// saw it land, never onto a target or an input (`output_path::write_whole`).
pub(super) fn write(path: &Path, svg: &str) -> Result<(), PlotError> {
    super::output_path::write_whole(path, svg.as_bytes())
        .map_err(|e| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() })
}

fn draw_into(svg: &mut String, path: &Path, chart: &Chart) -> Result<(), PlotError> {
    let fail = |e: &dyn std::fmt::Display| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() };
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let legend_entries = chart.lines.len() + chart.bands.len();
    let y_range = with_legend_room(chart.y_range.clone(), legend_entries);
    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", chart.title_px))
        .margin(MARGIN_PX)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(chart.x_range.clone(), y_range.clone())
        .map_err(|e| fail(&e))?;
    ctx.configure_mesh()
        .x_desc(chart.x_desc.as_str())
        .y_desc(chart.y_desc.as_str())
        .x_labels(10)
        .y_labels(10)
        .x_label_formatter(chart.x_format)
        .y_label_formatter(chart.y_format)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| fail(&e))?;
    for band in &chart.bands {
        let (lo, hi) = (y_range.start, y_range.end);
        let fill = band.color.mix(0.18).filled();
        let legend = band.color.mix(0.5).filled();
        ctx.draw_series(std::iter::once(Rectangle::new([(band.from, lo), (band.to, hi)], fill)))
            .map_err(|e| fail(&e))?
            .label(band.label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], legend));
    }
    for (i, line) in chart.lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        // The spread of the repetitions as a band under the line (a bar at a lone point).
        if line.ranges.len() >= 2 {
            let upper = line.ranges.iter().map(|&(x, _, hi)| (x, hi));
            let lower = line.ranges.iter().rev().map(|&(x, lo, _)| (x, lo));
            ctx.draw_series(std::iter::once(Polygon::new(upper.chain(lower).collect::<Vec<_>>(), color.mix(0.18))))
                .map_err(|e| fail(&e))?;
        }
        ctx.draw_series(LineSeries::new(line.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        if !line.ranges.is_empty() || line.points.len() < 40 {
            ctx.draw_series(line.points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| fail(&e))?;
        }
        ctx.draw_series(line.ranges.iter().map(|&(x, lo, hi)| PathElement::new(vec![(x, lo), (x, hi)], color)))
            .map_err(|e| fail(&e))?;
    }
    if !chart.lines.is_empty() || !chart.bands.is_empty() {
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests;
