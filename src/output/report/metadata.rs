//! A metadata run's report: the text for people (the tree, each phase's operations with
//! their rates and latencies, coverage, how it ended), its JSON document, and its CSV rows
//! (one per phase and operation kind). Formats only: every figure is in the result.

use super::units;
use crate::figures::result::meta_document::MetaResult;
use std::fmt::Write as _;

/// The text report.
pub fn text(r: &MetaResult) -> String {
    let mut out = String::new();
    let t = &r.tree;
    let _ = writeln!(
        out,
        "iopulse {} · metadata · {} · {} files in {} directories ({} per directory, depth {}) · {} threads",
        r.tool_version,
        r.target,
        units::count(t.files),
        units::count(t.directories),
        t.dirs_per_dir,
        t.depth,
        r.spec.shape.threads
    );
    if let Some(sources) = &r.merged_from {
        let _ = writeln!(out, "merged from {} results of concurrent runs (the trees' figures added):", sources.len());
        for s in sources {
            let _ = writeln!(
                out,
                "  {} · {} · started {} · {} ops in {}",
                s.file,
                s.target,
                s.started_at,
                units::count(s.ops),
                units::seconds_ns(s.window_ns)
            );
        }
    }
    if t.reused {
        let _ = writeln!(out, "set-up: the tree kept by an earlier run, used as it was");
    } else {
        let _ = writeln!(
            out,
            "set-up: {} files and {} directories created, {} written, in {}",
            units::count(t.setup_files_created),
            units::count(t.setup_directories_created),
            units::bytes(t.setup_bytes_written),
            units::seconds_ns(t.setup_ns)
        );
    }
    for p in &r.phases {
        phase_block(&mut out, p);
    }
    let _ = writeln!(out, "\ncoverage: {:.1}% of the tree's files touched", r.coverage_percent);
    let _ = writeln!(out, "stopped: {}", r.window.stop_reason);
    if let Some(e) = &r.messages.error {
        let _ = writeln!(out, "error: {e}");
    }
    if t.kept {
        let _ = writeln!(out, "tree: kept in {} (--keep-tree)", r.target);
    } else {
        // "Nothing else" only where the walk found nothing else: what it left is named.
        let left = t.left_entries.len() + t.kept_directories.len();
        let rest = if left == 0 {
            "nothing else was touched".to_string()
        } else {
            let first = t.left_entries.first().or(t.kept_directories.first()).map_or("", String::as_str);
            format!("{left} entries left alone, never followed or removed (e.g. {first})")
        };
        let _ = writeln!(
            out,
            "tree: removed ({} files, {} directories); {rest}",
            units::count(t.removed_files),
            units::count(t.removed_directories)
        );
    }
    // A job of a job file's phase: one start word released every job of the phase.
    if let Some(lag_ns) = r.window.window_start_lag_ns {
        let _ = writeln!(
            out,
            "window: released with every job of its phase (one start word) · first operation {} after the release",
            units::latency_ns(lag_ns)
        );
    }
    out
}

/// One phase: its window and rates, then a row per operation kind with its share and
/// latency.
fn phase_block(out: &mut String, p: &crate::figures::result::meta_document::PhaseResult) {
    let _ = writeln!(
        out,
        "\n{} · {} · {} ops · {} ops/s · {} files/s · {}/s",
        p.name,
        units::seconds_ns(p.window_ns),
        units::count(p.ops),
        units::iops(p.ops_per_sec),
        units::iops(p.files_per_sec),
        units::bytes(p.bytes_per_sec as u64)
    );
    let share = p.per_op.iter().any(|o| o.share_asked_percent.is_some());
    let _ = writeln!(
        out,
        "  {:<10} {:>12} {:>10} {:>11}{} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "op",
        "ops",
        "ops/s",
        "bytes/s",
        if share { "   asked achieved" } else { "" },
        "mean",
        "p50",
        "p99",
        "p99.9",
        "max"
    );
    for o in &p.per_op {
        let shares = match (o.share_asked_percent, o.share_achieved_percent) {
            (Some(a), Some(b)) => format!(" {a:>6.1}% {b:>7.2}%"),
            _ => String::new(),
        };
        let l = &o.latency_ns;
        let _ = writeln!(
            out,
            "  {:<10} {:>12} {:>10} {:>11}{} {:>9} {:>9} {:>9} {:>9} {:>9}",
            o.op.name(),
            units::count(o.ops),
            units::iops(o.ops_per_sec),
            format!("{}/s", units::bytes(o.bytes_per_sec as u64)),
            shares,
            units::latency_ns(l.mean),
            units::latency_ns(l.p50),
            units::latency_ns(l.p99),
            units::latency_ns(l.p99_9),
            units::latency_ns(l.max)
        );
    }
    steps_block(out, &p.steps);
}

/// A flow's steps, one row each in its order, named beside filebench's flowop.
fn steps_block(out: &mut String, steps: &[crate::figures::result::meta_document::StepFigures]) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n  {:>3} {:<12} {:<15} {:>10} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9}",
        "#", "step", "(filebench)", "ops", "ops/s", "bytes/s", "mean", "p50", "p99", "max"
    );
    for st in steps {
        let l = &st.latency_ns;
        let _ = writeln!(
            out,
            "  {:>3} {:<12} {:<15} {:>10} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9}",
            st.step,
            st.name.name(),
            st.filebench,
            units::count(st.ops),
            units::iops(st.ops_per_sec),
            format!("{}/s", units::bytes(st.bytes_per_sec as u64)),
            units::latency_ns(l.mean),
            units::latency_ns(l.p50),
            units::latency_ns(l.p99),
            units::latency_ns(l.max)
        );
    }
}

/// The JSON document, pretty-printed, with a final newline.
pub fn json(r: &MetaResult) -> String {
    let mut text = serde_json::to_string_pretty(r).expect("a MetaResult always serializes");
    text.push('\n');
    text
}

/// The CSV header of `rows`.
pub const CSV_HEADER: &str = "started_at,target,files,threads,phase,op,ops,files_touched,bytes,window_s,ops_per_sec,files_per_sec,bytes_per_sec,share_asked_percent,share_achieved_percent,lat_mean_ns,lat_p50_ns,lat_p99_ns,lat_p99_9_ns,lat_max_ns,stop_reason\n";

/// One CSV row per phase and operation kind (no header).
pub fn csv_rows(r: &MetaResult) -> String {
    let mut out = String::new();
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for p in &r.phases {
        for o in &p.per_op {
            let l = &o.latency_ns;
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{:.6},{:.1},{:.1},{:.1},{},{},{},{},{},{},{},{}",
                r.window.started_at,
                csv_field(&r.target),
                r.tree.files,
                r.spec.shape.threads,
                p.name,
                o.op.name(),
                o.ops,
                o.files,
                o.bytes,
                p.window_ns as f64 / 1e9,
                o.ops_per_sec,
                o.files_per_sec,
                o.bytes_per_sec,
                opt(o.share_asked_percent),
                opt(o.share_achieved_percent),
                l.mean,
                l.p50,
                l.p99,
                l.p99_9,
                l.max,
                r.window.stop_reason
            );
        }
    }
    out
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_string() }
}

/// Writes a metadata result's own files beyond the report: its `--timeseries` file
/// (`series`) and its `--plot` charts (`charts`: the directory and the files' prefix,
/// `job-NAME-` for a job's), saying the charts' notes unless quiet. The failures, each
/// naming the flag and the path, and `job` when the result is a job's of a job file.
pub fn emit_files(
    r: &MetaResult,
    series: Option<&std::path::Path>,
    charts: Option<(&std::path::Path, &str)>,
    output: &super::OutputOptions,
    job: Option<&str>,
) -> Vec<String> {
    let mut failures = Vec::new();
    let of_job = job.map_or_else(String::new, |j| format!(" (job [{j}])"));
    if let Some(path) = series
        && let Err(e) = super::timeseries::render_metadata(&r.time_series)
            .and_then(|bytes| crate::storage::ledger::output::write_whole(path, &bytes))
    {
        failures.push(format!("write --timeseries {}{of_job}: {e}", path.display()));
    }
    if let Some((dir, prefix)) = charts {
        let drawn = super::metadata_plot::charts(r, dir, prefix).map(|mut outcome| {
            if let Some(j) = job {
                outcome.notes = outcome.notes.into_iter().map(|n| format!("job [{j}]: {n}")).collect();
            }
            outcome
        });
        super::emit_plot_outcome(drawn, dir, output, &mut failures);
    }
    failures
}

/// Prints the report (text or JSON) and writes `--json` and `--csv`; the failures, named.
pub fn emit(r: &MetaResult, output: &super::OutputOptions) -> Vec<String> {
    let mut failures = Vec::new();
    let rendered = match output.format {
        super::OutputFormat::Text => Ok(text(r)),
        super::OutputFormat::Json => Ok(json(r)),
        other => Err(std::io::Error::other(format!(
            "--output {other:?} is not available for a metadata run (--files): give text or json"
        ))),
    };
    super::emit_report_and_json(rendered, || json(r), output, &mut failures);
    if let Some(path) = &output.csv_file
        && let Err(e) = crate::storage::ledger::output::append_whole(path, |first| {
            let mut bytes = if first { CSV_HEADER.as_bytes().to_vec() } else { Vec::new() };
            bytes.extend(csv_rows(r).into_bytes());
            bytes
        })
    {
        failures.push(format!("write --csv {}: {e}", path.display()));
    }
    failures
}
