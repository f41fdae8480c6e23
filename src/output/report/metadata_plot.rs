//! SVG charts of a metadata run (`iopulse DIR --files N ... --plot DIR`), drawn with the
//! block charts' helpers (`plot.rs`: same size, axes, legend room and palette):
//!
//! - `latency.svg`: the latency percentile curve of each operation kind of each phase
//!   (the mix is one phase; with `--meta-phases` one line per phase and kind, all in one
//!   chart so that the phases compare at a glance), from each kind's exact histogram;
//! - `ops.svg` and `p99.svg`: with a time series (`--interval`, `--timeseries`), each
//!   kind's ops/s and p99 latency per interval, against the time from its phase's start.
//!
//! A job file's metadata jobs each get their own, named after the job
//! (`job-NAME-latency.svg`). Draws what the result holds; computes no figure itself, and
//! must not be reached from the worker.

use super::plot::{self, Chart, Line, PlotError, PlotOutcome};
use super::units;
use crate::figures::result::meta_document::MetaIntervalRow;
use crate::figures::result::meta_document::MetaResult;
use crate::io::stats::{decode_histogram, percentile_curve};
use std::path::Path;

const LATENCY_CHART: &str = "latency.svg";
const OPS_CHART: &str = "ops.svg";
const P99_CHART: &str = "p99.svg";
/// Every chart a metadata run can write (`--plot` checks each before the run).
pub const CHARTS: &[&str] = &[LATENCY_CHART, OPS_CHART, P99_CHART];

/// The file names of the charts a metadata run may write under `--plot DIR`: one run's
/// (`jobs` None), or each job's of a job file, prefixed as block jobs' are
/// (`plot::job_chart_prefixes`). What the output guard checks before the run.
pub fn chart_names(jobs: Option<&[&str]>) -> Vec<String> {
    let prefixes = match jobs {
        None => vec![String::new()],
        Some(names) => plot::job_chart_prefixes(names),
    };
    prefixes.iter().flat_map(|p| CHARTS.iter().map(move |c| format!("{p}{c}"))).collect()
}

/// Writes the charts of `r` into `dir` (created if missing), each file's name after
/// `prefix` (a job's: `job-NAME-`): its latency percentiles, and its ops/s and p99 over
/// time when it has a time series.
pub fn charts(r: &MetaResult, dir: &Path, prefix: &str) -> Result<PlotOutcome, PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io { path: dir.to_path_buf(), source })?;
    let mut outcome = PlotOutcome::default();
    let path = dir.join(format!("{prefix}{LATENCY_CHART}"));
    match latency_chart(r)? {
        Some(svg) => {
            plot::write(&path, &svg)?;
            outcome.written.push(path);
        }
        None => outcome.notes.push(format!("no operation completed: {prefix}{LATENCY_CHART} not drawn")),
    }
    if r.time_series.is_empty() {
        outcome.notes.push(format!(
            "the run recorded no time series: {prefix}{OPS_CHART} and {prefix}{P99_CHART} not drawn (give --interval or --timeseries to record one)"
        ));
        return Ok(outcome);
    }
    for (name, svg) in [(OPS_CHART, ops_chart(r)?), (P99_CHART, p99_chart(r)?)] {
        let path = dir.join(format!("{prefix}{name}"));
        plot::write(&path, &svg)?;
        outcome.written.push(path);
    }
    Ok(outcome)
}

/// The charts of `r` as SVG text, for a page that holds them (`report --html`): its
/// latency percentiles when an operation completed, and its ops/s and p99 over time when
/// it has a time series.
pub fn svgs(r: &MetaResult) -> Result<Vec<String>, PlotError> {
    let mut svgs: Vec<String> = latency_chart(r)?.into_iter().collect();
    if !r.time_series.is_empty() {
        svgs.push(ops_chart(r)?);
        svgs.push(p99_chart(r)?);
    }
    Ok(svgs)
}

/// Whether the run is phases (`--meta-phases`) rather than one mix.
fn phased(r: &MetaResult) -> bool {
    !(r.phases.len() == 1 && r.phases[0].name == "mix")
}

/// A line's name: the kind (a mix), or the phase and the kind (phases; the phase alone
/// when it is named after its one kind).
fn series_label(r: &MetaResult, phase: &str, op: &str) -> String {
    if !phased(r) {
        op.to_string()
    } else if phase == op {
        format!("{op} phase")
    } else {
        format!("{phase} phase: {op}")
    }
}

/// "metadata mix of create, stat, unlink · 10,000 files · 4 threads" for chart titles:
/// every operation kind of the run, in the result's order.
pub(super) fn workload(r: &MetaResult) -> String {
    let flow = match &r.spec.metadata.as_ref().map(|m| &m.workload) {
        Some(crate::io::metadata::workload::MetaWorkload::Flow(steps)) => Some(steps),
        _ => None,
    };
    let what = if let Some(steps) = flow {
        let mut names: Vec<&str> = steps.iter().take(13).map(|s| s.name()).collect();
        if steps.len() > names.len() {
            names.push("…");
        }
        format!("metadata flow of {} steps ({})", steps.len(), names.join(", "))
    } else if phased(r) {
        let phases: Vec<String> = r
            .phases
            .iter()
            .map(|p| {
                let kinds: Vec<&str> = p.per_op.iter().map(|o| o.op.name()).collect();
                if kinds == [p.name.as_str()] { p.name.clone() } else { format!("{} ({})", p.name, kinds.join(", ")) }
            })
            .collect();
        format!("metadata phases {}", phases.join(" → "))
    } else {
        let kinds: Vec<&str> = r.phases.iter().flat_map(|p| p.per_op.iter().map(|o| o.op.name())).collect();
        format!("metadata mix of {}", kinds.join(", "))
    };
    format!(
        "{what} · {} files · {} thread{}",
        units::count(r.tree.files),
        r.spec.shape.threads,
        if r.spec.shape.threads == 1 { "" } else { "s" }
    )
}

/// The latency percentile chart: one curve per phase and kind that completed an
/// operation; None when none did.
fn latency_chart(r: &MetaResult) -> Result<Option<String>, PlotError> {
    let mut x_end: f64 = 1.0;
    let mut curves = Vec::new();
    for phase in &r.phases {
        for o in phase.per_op.iter().filter(|o| o.ops > 0) {
            let hist = decode_histogram(&o.histogram)?;
            let curve = percentile_curve(&hist, o.latency_ns.min, o.latency_ns.max);
            x_end = curve.iter().filter(|(p, _)| *p < 100.0).map(|&(p, _)| plot::percentile_x(p)).fold(x_end, f64::max);
            let label = format!("{} ({} ops)", series_label(r, &phase.name, o.op.name()), units::count(o.ops));
            curves.push((label, curve));
        }
    }
    if curves.is_empty() {
        return Ok(None);
    }
    // The max sits a little right of the last finite percentile, as on the block chart.
    let x_max = x_end + 0.25;
    let (mut y_lo, mut y_hi) = (f64::MAX, f64::MIN);
    let mut lines = Vec::new();
    for (label, curve) in curves {
        let points: Vec<(f64, f64)> = curve
            .iter()
            .map(|&(p, v)| {
                let x = if p >= 100.0 { x_max } else { plot::percentile_x(p) };
                (x, (v.max(1) as f64).log10())
            })
            .collect();
        for &(_, y) in &points {
            y_lo = y_lo.min(y);
            y_hi = y_hi.max(y);
        }
        lines.push(Line { label, points, ranges: vec![] });
    }
    let y_range = y_lo.floor()..(y_hi.ceil()).max(y_lo.floor() + 1.0);
    // Every kind is named in the title: with many, it is set smaller to fit.
    let title = format!("Latency percentiles · {}", workload(r));
    plot::render(
        LATENCY_CHART,
        &Chart {
            title_px: plot::fitted_title_px(&title),
            title,
            x_desc: "percentile (log scale: each step is one more nine)".into(),
            y_desc: "latency of one operation (log scale)".into(),
            x_range: 0.0..x_max,
            y_range,
            x_format: &|x| if *x > x_end + 0.1 { "max".into() } else { plot::percentile_label(*x) },
            y_format: &|y| plot::latency_label(*y),
            lines,
            bands: Vec::new(),
        },
    )
    .map(Some)
}

/// One line per phase and kind of the time series, in the order the rows first name
/// them, through `value` of each row it keeps: (end of the interval in seconds from its
/// phase's start, value).
fn time_lines(r: &MetaResult, value: fn(&MetaIntervalRow) -> Option<f64>) -> Vec<Line> {
    let mut lines: Vec<(String, &str, Line)> = Vec::new();
    for row in &r.time_series {
        let op = row.op.name();
        let at = match lines.iter().position(|(phase, o, _)| *phase == row.phase && *o == op) {
            Some(i) => i,
            None => {
                let label = series_label(r, &row.phase, op);
                lines.push((row.phase.clone(), op, Line { label, points: Vec::new(), ranges: vec![] }));
                lines.len() - 1
            }
        };
        if let Some(v) = value(row) {
            lines[at].2.points.push((row.t_ns as f64 / 1e9, v));
        }
    }
    lines.into_iter().map(|(_, _, line)| line).filter(|line| !line.points.is_empty()).collect()
}

fn x_desc(r: &MetaResult) -> String {
    if phased(r) { "time from the start of each phase (s)".into() } else { "time (s)".into() }
}

fn ops_chart(r: &MetaResult) -> Result<String, PlotError> {
    let lines = time_lines(r, |row| Some(row.ops_per_sec));
    let title = format!("Operations per second over time · {}", workload(r));
    time_chart(r, OPS_CHART, title, "operations per second (ops/s)", &|y| units::iops(*y), lines)
}

fn p99_chart(r: &MetaResult) -> Result<String, PlotError> {
    // An interval without an operation of a kind has no latency: no point, not a zero.
    let lines = time_lines(r, |row| (row.ops > 0).then_some(row.latency_ns.p99 as f64));
    let title = format!("p99 latency over time · {}", workload(r));
    let y_format = |y: &f64| units::latency_ns(y.round() as u64);
    time_chart(r, P99_CHART, title, "p99 latency of the interval", &y_format, lines)
}

/// Draws `lines` against time in seconds, the y axis linear from 0.
fn time_chart(
    r: &MetaResult,
    name: &str,
    title: String,
    y_desc: &str,
    y_format: &dyn Fn(&f64) -> String,
    lines: Vec<Line>,
) -> Result<String, PlotError> {
    let y_max = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).fold(0.0, f64::max);
    let x_end = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(0.0, f64::max);
    let x_end = if x_end > 0.0 { x_end } else { 1.0 };
    plot::render(
        name,
        &Chart {
            title_px: plot::fitted_title_px(&title),
            title,
            x_desc: x_desc(r),
            y_desc: y_desc.into(),
            x_range: 0.0..x_end,
            y_range: 0.0..plot::nice_top(y_max),
            x_format: &|x| plot::axis_label(*x, x_end),
            y_format,
            lines,
            bands: Vec::new(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_names_of_a_run_and_of_each_job() {
        assert_eq!(chart_names(None), ["latency.svg", "ops.svg", "p99.svg"]);
        let jobs = chart_names(Some(&["a", "b/c"]));
        assert_eq!(jobs.len(), 6);
        assert_eq!(jobs[0], "job-a-latency.svg");
        assert_eq!(jobs[5], "job-b_c-p99.svg");
    }

    #[test]
    fn a_title_naming_every_kind_is_set_smaller_to_fit() {
        let kinds: Vec<&str> = crate::io::metadata::workload::MetaOp::ALL.iter().map(|o| o.name()).collect();
        let long = format!("Latency percentiles · metadata mix of {} · 100,000 files · 16 threads", kinds.join(", "));
        let px = plot::fitted_title_px(&long);
        assert!((10..plot::TITLE_PX).contains(&px), "{px}");
        // Estimated at half the font size per character, it spans the chart's width at most.
        assert!(f64::from(px) * 0.5 * long.chars().count() as f64 <= 928.0, "{px}");
        assert_eq!(plot::fitted_title_px("Latency percentiles · metadata mix of create, stat · 1,000 files"), 18);
    }
}
