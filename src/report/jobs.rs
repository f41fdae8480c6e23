//! The report of a job file's run (`iopulse run`): a section per job (its full text
//! report), then one table of every job and the combined figures (per phase when there are
//! several); the JSON document with its `jobs` array; a CSV row per job. Formats the
//! `JobsResult`; computes nothing.

use super::{OutputFormat, OutputOptions, csv, fio_json, plot, text, units};
use crate::result::RunResult;
use crate::result::jobs::JobsResult;
use std::fmt::Write as _;
use std::io;

/// The JSON document, pretty-printed, with a final newline.
pub fn json(doc: &JobsResult) -> String {
    let mut text = serde_json::to_string_pretty(doc).expect("a JobsResult always serializes");
    text.push('\n');
    text
}

/// The text report: each job's section, then the table of jobs and combined figures.
pub fn text(doc: &JobsResult) -> String {
    let mut out = String::new();
    let several_phases = !doc.phases.is_empty();
    for job in &doc.jobs {
        let phase = if several_phases { format!(" · phase {}", job.phase) } else { String::new() };
        let _ = writeln!(out, "══ job [{}]{phase} ══", job.job);
        out.push_str(&text::render(&job.result));
        out.push('\n');
    }
    let _ = writeln!(out, "══ {} ══", doc.job_file);
    let _ = writeln!(
        out,
        "{:<22} {:>10} {:>24} {:>10} {:>10} {:>10} {:>9}",
        "job", "IOPS", "bandwidth", "ops", "p50", "p99", "window"
    );
    let row = |out: &mut String, name: &str, r: &RunResult| {
        let t = &r.total;
        let _ = writeln!(
            out,
            "{:<22} {:>10} {:>24} {:>10} {:>10} {:>10} {:>9}",
            name,
            units::iops(t.iops),
            units::bandwidth(t.bw_bytes_per_sec),
            units::count(t.ops),
            units::latency_ns(t.latency_ns.p50),
            units::latency_ns(t.latency_ns.p99),
            units::seconds_ns(r.window_ns)
        );
    };
    let shown = |name: &str| {
        let mut name = format!("[{name}]");
        if name.chars().count() > 22 {
            name = name.chars().take(20).collect::<String>() + "…]";
        }
        name
    };
    if several_phases {
        for p in &doc.phases {
            for job in doc.jobs.iter().filter(|j| j.phase == p.phase) {
                row(&mut out, &format!("  {}", shown(&job.job)), &job.result);
            }
            row(&mut out, &format!("phase {} combined", p.phase), &p.combined);
        }
        row(&mut out, "all phases", &doc.combined);
    } else {
        for job in &doc.jobs {
            row(&mut out, &shown(&job.job), &job.result);
        }
        row(&mut out, "combined", &doc.combined);
    }
    for n in &doc.combined.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The report of `doc` in `format`. fio's JSON format carries the combined figures.
pub fn render(doc: &JobsResult, format: OutputFormat) -> io::Result<String> {
    Ok(match format {
        OutputFormat::Text => text(doc),
        OutputFormat::Json => json(doc),
        OutputFormat::FioJson => fio_json::render(&doc.combined).map_err(io::Error::other)?,
    })
}

/// Writes the report to stdout, then the JSON file, a CSV row per job and the charts of
/// the combined figures, if asked. Every failure is returned, one line each.
pub fn emit(doc: &JobsResult, output: &OutputOptions) -> Vec<String> {
    emit_as(doc, output, &text)
}

/// As `emit`, with the text report drawn by `text_report` (a profile's table).
pub fn emit_as(doc: &JobsResult, output: &OutputOptions, text_report: &dyn Fn(&JobsResult) -> String) -> Vec<String> {
    let mut failures = Vec::new();
    let rendered = match output.format {
        OutputFormat::Text => Ok(text_report(doc)),
        format => render(doc, format),
    };
    super::emit_report_and_json(rendered, || json(doc), output, &mut failures);
    if let Some(path) = &output.csv_file {
        for job in &doc.jobs {
            if let Err(e) = csv::append(path, &job.result) {
                failures.push(format!("write --csv {} (job [{}]): {e}", path.display(), job.job));
                break;
            }
        }
    }
    if let Some(dir) = &output.plot_dir {
        super::emit_plot_outcome(plot::result_charts(&doc.combined, None, dir), dir, output, &mut failures);
    }
    failures
}
