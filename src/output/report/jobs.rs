//! The report of a job file's run (`iopulse run`): a section per job (its full text
//! report), then one table of every job and the combined figures (per phase when there are
//! several); the JSON document with its `jobs` array; a CSV row per job (with its `job`
//! and `phase`); each job's time series (`--timeseries`, a file per job); the charts of
//! the combined figures and of each job. Jobs with `files` (metadata trees) beside the
//! block jobs have their own sections (`metadata_jobs`), outside the combined figures. Formats the
//! `JobsResult`; computes nothing.

use super::{OutputFormat, OutputOptions, csv, fio_json, plot, text, timeseries, units};
use crate::base::diagnostics::error::UsageError;
use crate::figures::result::RunResult;
use crate::figures::result::jobs::JobsResult;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

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
    // A metadata job may be alone in a later phase, which the block jobs' phases do not
    // show: the sections then say each job's phase.
    let labelled = several_phases || doc.metadata_jobs.iter().any(|m| m.phase > 1);
    for job in &doc.jobs {
        let phase = if labelled { format!(" · phase {}", job.phase) } else { String::new() };
        let _ = writeln!(out, "══ job [{}]{phase} ══", job.job);
        out.push_str(&text::render(&job.result));
        out.push('\n');
    }
    // Jobs with `files` beside them: each one's metadata report (with how soon after the
    // phase's release, one start word for every job, its first operation began).
    for m in &doc.metadata_jobs {
        let phase = if labelled { format!(" · phase {}", m.phase) } else { String::new() };
        let _ = writeln!(out, "══ job [{}]{phase} · files ══", m.job);
        out.push_str(&super::metadata::text(&m.result));
        out.push('\n');
    }
    let _ = writeln!(out, "══ {} ══", doc.job_file);
    let _ = writeln!(
        out,
        "{:<22} {:>10} {:>24} {:>10} {:>10} {:>10} {:>9}",
        "job", "IOPS", "bandwidth", "ops", "p50", "p99", "window"
    );
    let row = |out: &mut String, name: &str, r: &RunResult| {
        let t = &r.figures.total;
        let _ = writeln!(
            out,
            "{:<22} {:>10} {:>24} {:>10} {:>10} {:>10} {:>9}",
            name,
            units::iops(t.iops),
            units::bandwidth(t.bw_bytes_per_sec),
            units::count(t.ops),
            units::latency_ns(t.latency_ns.p50),
            units::latency_ns(t.latency_ns.p99),
            units::seconds_ns(r.window.window_ns)
        );
    };
    // A combined row over several block sizes adds I/Os of every size: each size's own
    // figures follow it.
    let size_rows = |out: &mut String, r: &RunResult| {
        if r.figures.block_sizes.len() < 2 {
            return;
        }
        for b in &r.figures.block_sizes {
            for (op, f) in [("read", &b.read), ("write", &b.write)] {
                if f.ops == 0 {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "{:<22} {:>10} {:>24} {:>10} {:>10} {:>10} {:>9}",
                    format!("  {} {op}", units::bytes(b.size_bytes)),
                    units::iops(f.iops),
                    units::bandwidth(f.bw_bytes_per_sec),
                    units::count(f.ops),
                    units::latency_ns(f.latency_ns.p50),
                    units::latency_ns(f.latency_ns.p99),
                    ""
                );
            }
        }
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
            size_rows(&mut out, &p.combined);
        }
        row(&mut out, "all phases", &doc.combined);
        size_rows(&mut out, &doc.combined);
    } else {
        for job in &doc.jobs {
            row(&mut out, &shown(&job.job), &job.result);
        }
        row(&mut out, "combined", &doc.combined);
        size_rows(&mut out, &doc.combined);
    }
    if doc.combined.figures.block_sizes.len() > 1 {
        let _ = writeln!(
            out,
            "note: the combined rows add I/Os of every block size into one IOPS figure; the rows under them give each size's"
        );
    }
    for n in &doc.combined.outcome.notes {
        let _ = writeln!(out, "note: {n}");
    }
    // How far apart the jobs of each phase opened their windows (`window_skew`), and the
    // phase's own warnings (a spread beyond 1 % of the window); each job's were said with it.
    let combined: Vec<(String, &RunResult)> = if several_phases {
        doc.phases.iter().map(|p| (format!("phase {}: ", p.phase), &p.combined)).collect()
    } else {
        vec![(String::new(), &doc.combined)]
    };
    for (phase, r) in combined {
        if let Some(w) = &r.combined.window_skew {
            let _ = writeln!(out, "{phase}{}", text::window_line(w));
        }
        for w in r.outcome.warnings.iter().filter(|w| !w.starts_with("job [")) {
            let _ = writeln!(out, "⚠ {phase}{w}");
        }
    }
    out
}

/// The report of `doc` in `format`. fio's JSON format carries the combined figures.
pub fn render(doc: &JobsResult, format: OutputFormat) -> io::Result<String> {
    Ok(match format {
        OutputFormat::Text => text(doc),
        OutputFormat::Json => json(doc),
        OutputFormat::FioJson => fio_json::render(&doc.combined, fio_json::Form::Json).map_err(io::Error::other)?,
        OutputFormat::FioJsonPlus => {
            fio_json::render(&doc.combined, fio_json::Form::JsonPlus).map_err(io::Error::other)?
        }
        format => {
            let scopes: Vec<(String, &crate::figures::result::RunResult)> =
                doc.jobs.iter().map(|j| (format!("job {}", j.job), &j.result)).collect();
            super::ci_render(&scopes, format)
        }
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
            if let Err(e) = csv::append_job(path, &job.result, Some((&job.job, job.phase))) {
                failures.push(format!("write --csv {} (job [{}]): {e}", path.display(), job.job));
                break;
            }
        }
    }
    if let Some(path) = &output.timeseries_file {
        let names: Vec<&str> = doc.jobs.iter().map(|j| j.job.as_str()).collect();
        match timeseries_paths(path, &names) {
            Ok(paths) => {
                for (job, path) in doc.jobs.iter().zip(paths) {
                    if let Err(e) = timeseries::render(&job.result)
                        .and_then(|b| crate::storage::ledger::output::write_whole(&path, &b))
                    {
                        failures.push(format!("write --timeseries {} (job [{}]): {e}", path.display(), job.job));
                    }
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    if let Some(dir) = &output.plot_dir {
        super::emit_plot_outcome(charts(doc, dir), dir, output, &mut failures);
    }
    failures
}

/// Each job's `--timeseries` file, in the order of `names`: `path` with `-NAME` inserted
/// before its extension (`t.csv` → `t-reader.csv`), the name made file-safe
/// (`ledger::output::file_safe_names`). A stream (`/dev/stdout`) is refused: each job needs
/// a file of its own. (Any other path passes the output guard as a single run's does.)
pub fn timeseries_paths(path: &Path, names: &[&str]) -> Result<Vec<PathBuf>, UsageError> {
    per_job_paths("--timeseries", "ts.csv", path, names)
}

/// `--json FILE` of a job file of several metadata jobs: a document per job
/// (`FILE-JOB.json`), since a metadata result holds one run.
pub fn metadata_json_paths(path: &Path, names: &[&str]) -> Result<Vec<PathBuf>, UsageError> {
    per_job_paths("--json", "result.json", path, names)
}

/// `flag`'s `path` for each job of `names`, named after it (`FILE-JOB.EXT`: the job's
/// name made file-safe); a stream is refused (each job needs a file of its own).
/// `example` is a file name the message suggests.
pub fn per_job_paths(flag: &str, example: &str, path: &Path, names: &[&str]) -> Result<Vec<PathBuf>, UsageError> {
    if crate::storage::ledger::output::is_stream(path) {
        let extension = Path::new(example).extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
        return Err(UsageError::new(format!(
            "{flag} {} with a job file: each job writes its own file (FILE-JOB.{extension}): give a file, e.g. {flag} {example}",
            path.display()
        )));
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    Ok(crate::storage::ledger::output::file_safe_names(names)
        .into_iter()
        .map(|name| path.with_file_name(format!("{stem}-{name}{extension}")))
        .collect())
}

/// The charts of a job file's result into `dir`: the combined figures' (which have no
/// time series: the jobs' intervals are not aligned), then each job's, named after it
/// (`plot::job_chart_prefixes`), with its own time series when it recorded one.
pub fn charts(doc: &JobsResult, dir: &std::path::Path) -> Result<plot::PlotOutcome, plot::PlotError> {
    let mut outcome = plot::named_charts(&doc.combined, &[], dir, "")?;
    outcome.notes.retain(|n| !n.contains("time_series"));
    let names: Vec<&str> = doc.jobs.iter().map(|j| j.job.as_str()).collect();
    for (job, prefix) in doc.jobs.iter().zip(plot::job_chart_prefixes(&names)) {
        let own = plot::named_charts(&job.result, &job.result.time_series, dir, &prefix)?;
        outcome.written.extend(own.written);
        outcome.notes.extend(own.notes.into_iter().map(|n| format!("job [{}]: {n}", job.job)));
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_jobs_timeseries_file_has_its_name_before_the_extension() {
        let paths = timeseries_paths(Path::new("/x/ts.csv"), &["reader", "a/b", "a_b"]).unwrap();
        assert_eq!(paths, [Path::new("/x/ts-reader.csv"), Path::new("/x/ts-a_b.csv"), Path::new("/x/ts-a_b-2.csv")]);
        assert_eq!(timeseries_paths(Path::new("series"), &["j"]).unwrap(), [Path::new("series-j")]);
        assert!(timeseries_paths(Path::new("/dev/stdout"), &["j"]).is_err());
    }
}
