//! The text of `iopulse sweep` and `iopulse search`: a table of the grid's points (the
//! median and spread of their runs) with the best point, and the curve of a search with its
//! one-line answer; and the line printed after each run. Formats the documents of
//! figures/sweep/document.rs; computes nothing.

use super::units;
use crate::figures::sweep::document::{CurvePoint, SearchDocument, SweepDocument};
use crate::figures::sweep::summary::{Metric, Spread};

/// The table of a sweep: a row per point.
pub fn sweep_text(doc: &SweepDocument) -> String {
    let mut out = String::new();
    let points = doc.points.len();
    out.push_str(&format!(
        "iopulse sweep · {} point{} × {} repetition{} · {} of {} runs done{}\n",
        points,
        plural(points),
        doc.repeat,
        plural(doc.repeat as usize),
        doc.runs.len(),
        doc.planned_runs,
        if doc.interrupted { " (interrupted: --resume continues it)" } else { "" }
    ));
    let mut header: Vec<String> = doc.axes.iter().map(|a| a.flag.clone()).collect();
    if header.is_empty() {
        header.push("point".into());
    }
    header.extend(
        ["runs", "IOPS (median)", "± sd", "min-max IOPS", "bandwidth", "p50", "p99", "CPU/IO"].map(String::from),
    );
    let mut rows = vec![header];
    for p in &doc.points {
        let mut row: Vec<String> = if doc.axes.is_empty() {
            vec!["(one)".into()]
        } else {
            doc.axes.iter().map(|a| p.params.get(&a.flag).cloned().unwrap_or_default()).collect()
        };
        let s = &p.summary;
        if s.runs == 0 {
            row.push("0".into());
            row.extend(std::iter::repeat_n("-".to_string(), 7));
        } else {
            row.push(s.runs.to_string());
            row.push(units::iops(s.iops.median));
            row.push(relative_sd(&s.iops));
            row.push(format!("{}-{}", units::iops(s.iops.min), units::iops(s.iops.max)));
            row.push(units::bandwidth(s.bw_bytes_per_sec.median));
            row.push(units::latency_ns(s.p50_ns.median.round() as u64));
            row.push(units::latency_ns(s.p99_ns.median.round() as u64));
            row.push(units::latency_ns(s.cpu_per_io_ns.median.round() as u64));
        }
        rows.push(row);
    }
    out.push_str(&table(&rows));
    if let Some(best) = &doc.best {
        let label = best.params.iter().map(|(f, v)| format!("--{f} {v}")).collect::<Vec<_>>().join(" ");
        out.push_str(&format!(
            "best by {}: {} ({} median)\n",
            best.by.name(),
            if label.is_empty() { "the one point".to_string() } else { label },
            metric_value(best.by, best.median)
        ));
    }
    out
}

/// The curve of a search and its answer.
pub fn search_text(doc: &SearchDocument) -> String {
    let mut out = String::new();
    let header = ["run", "offered", "of max", "QD × threads", "IOPS", "p50", "p90", "p99", "p99.9", "p99.99", ""];
    let mut rows = vec![header.map(String::from).to_vec()];
    for c in &doc.curve {
        rows.push(curve_row(c, doc.goal == "saturate"));
    }
    out.push_str(&table(&rows));
    match &doc.answer {
        Some(a) => out.push_str(&format!("{}\n", a.text)),
        None if doc.interrupted => out.push_str("interrupted before an answer\n"),
        None => out.push_str("no answer\n"),
    }
    out
}

fn curve_row(c: &CurvePoint, saturate: bool) -> Vec<String> {
    let lat = |ns: u64| units::latency_ns(ns);
    vec![
        c.phase.clone(),
        c.offered_iops.map_or_else(|| "closed loop".into(), units::iops),
        c.offered_percent.map_or_else(|| "-".into(), |p| format!("{p:.0} %")),
        format!("{} × {}", c.queue_depth, c.threads),
        units::iops(c.iops),
        lat(c.p50_ns),
        lat(c.p90_ns),
        lat(c.p99_ns),
        lat(c.p99_9_ns),
        lat(c.p99_99_ns),
        match (c.phase.as_str(), c.passed, saturate) {
            ("max", _, _) => String::new(),
            (_, true, false) => "within".into(),
            (_, false, false) => "over".into(),
            (_, true, true) => "reached".into(),
            (_, false, true) => "below".into(),
        },
    ]
}

/// The line after each run when no progress bar is drawn.
pub fn run_line(done: usize, planned: usize, what: &str, iops: f64, p99_ns: u64, left_ns: Option<u64>) -> String {
    format!(
        "run {done}/{planned} · {what} · {} IOPS · p99 {}{}",
        units::iops(iops),
        units::latency_ns(p99_ns),
        left_ns.map(|ns| format!(" · {} left", units::seconds_ns(ns))).unwrap_or_default()
    )
}

/// A metric's value as people read it.
pub fn metric_value(m: Metric, v: f64) -> String {
    match m {
        Metric::Iops => format!("{} IOPS", units::iops(v)),
        Metric::Bw => units::bandwidth(v),
        Metric::P50 | Metric::P99 | Metric::CpuPerIo => units::latency_ns(v.round() as u64),
    }
}

/// "± 2.1 %" of the mean; "-" for a single run.
fn relative_sd(s: &Spread) -> String {
    if s.stddev == 0.0 || s.mean == 0.0 { "-".into() } else { format!("{:.1} %", 100.0 * s.stddev / s.mean) }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Columns padded to their widest cell, two spaces apart.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| format!("{cell}{}", " ".repeat(widths[c] - cell.chars().count())))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_pads_columns() {
        let t = table(&[vec!["a".into(), "bb".into()], vec!["ccc".into(), "d".into()]]);
        assert_eq!(t, "a    bb\nccc  d\n");
    }
}
