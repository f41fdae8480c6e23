//! Metadata runs from the command line (`iopulse DIR --files N ...`) and from profiles
//! and job files whose jobs have `files` (the personalities: `iopulse --profile varmail
//! DIR`): each job checked before anything is touched, run in order on its tree, and its
//! report printed, its time series written (`--timeseries`) and its charts drawn
//! (`--plot`). It chooses, runs and prints; `metadata/` runs, `report/metadata.rs`,
//! `report/timeseries.rs` and `report/metadata_plot.rs` format.

use crate::diagnostics::error::{Error, exit_code};
use crate::diagnostics::warnings::Diagnostics;
use crate::plan::Plan;
use crate::report::{OutputFormat, OutputOptions};
use crate::spec::Spec;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;

/// Whether a plan is a metadata one (a job has `files`). A profile mixing metadata and
/// block jobs is refused by `refuse`; a job file mixing them runs them side by side
/// (`is_mixed`, `iopulse run`).
pub fn is_metadata(plan: &Plan) -> bool {
    plan.jobs().any(|j| j.spec.metadata.is_some())
}

/// Whether a plan has both jobs with `files` and jobs of block I/O: a job file whose
/// phases run metadata jobs beside block jobs in one window (`jobs::phases`).
pub fn is_mixed(plan: &Plan) -> bool {
    is_metadata(plan) && plan.jobs().any(|j| j.spec.metadata.is_none())
}

/// What a job file mixing metadata and block jobs cannot honour yet, in one line naming
/// the flags; checked before anything is touched.
pub fn refuse_mixed(plan: &Plan) -> Option<String> {
    if !matches!(plan.output.format, OutputFormat::Text | OutputFormat::Json) {
        return Some(format!(
            "{}: --output-format (other than text or json) not yet with jobs with `files` (a tree of files) beside jobs of block I/O: drop it, or run the metadata jobs from a job file of their own",
            plan.source,
        ));
    }
    if let Some(job) = plan.jobs().find(|j| j.spec.metadata.is_some() && j.spec.targets.is_empty()) {
        return Some(format!(
            "{}: job [{}] has `files` but no tree root: give targets = [\"DIR\"] (the tree's root)",
            plan.source, job.name
        ));
    }
    None
}

/// The checks of a metadata plan that need no file system: the report's format, and no
/// job of block I/O among them.
fn refuse(plan: &Plan) -> Option<String> {
    if plan.jobs().any(|j| j.spec.metadata.is_none()) {
        return Some(format!(
            "{}: jobs with `files` (a tree of files) and jobs of block I/O in one plan: run them from separate job files",
            if plan.source.is_empty() { "the command line" } else { &plan.source }
        ));
    }
    if plan.jobs().any(|j| j.spec.targets.is_empty()) {
        return Some(
            "--files runs on a directory: give the tree's root as TARGET (e.g. `iopulse /mnt/t --files 10000`)".into(),
        );
    }
    if !matches!(plan.output.format, OutputFormat::Text | OutputFormat::Json) {
        return Some("--output: a metadata run (--files) reports as text or json; give one of them".into());
    }
    None
}

/// Runs every job of `plan` (metadata jobs) in order; the exit code of the first that
/// failed, else 0.
pub fn run_plan(plan: &Plan, stop: &AtomicUsize) -> i32 {
    if let Some(message) = refuse(plan) {
        crate::stderr_line!("iopulse: error: {message}");
        return exit_code::USAGE;
    }
    if let Err(e) = crate::plan::outputs::check(plan) {
        crate::stderr_line!("iopulse: error: {e}");
        return exit_code::USAGE;
    }
    // Every job's tree is looked at before the first is touched.
    for job in plan.jobs() {
        if let Err(e) = crate::metadata::check(&job.spec) {
            crate::stderr_line!("iopulse: error: {}{e}", prefix(&job.name));
            return e.exit_code();
        }
    }
    let several = plan.jobs().count() > 1;
    // `--timeseries`: one file, or with a job file one per job (FILE-JOB.csv), as block runs.
    let names = plan.job_names();
    let series_files: Vec<Option<PathBuf>> = match &plan.output.timeseries_file {
        None => names.iter().map(|_| None).collect(),
        Some(path) if plan.is_job_file() => match crate::report::jobs::timeseries_paths(path, &names) {
            Ok(paths) => paths.into_iter().map(Some).collect(),
            Err(e) => {
                crate::stderr_line!("iopulse: error: {e}");
                return exit_code::USAGE;
            }
        },
        Some(path) => names.iter().map(|_| Some(path.clone())).collect(),
    };
    // `--json`: several jobs write a result each (FILE-JOB.json); one job, FILE itself.
    let json_files: Vec<Option<PathBuf>> = match &plan.output.json_file {
        Some(path) if plan.is_job_file() && several => match crate::report::jobs::metadata_json_paths(path, &names) {
            Ok(paths) => paths.into_iter().map(Some).collect(),
            Err(e) => {
                crate::stderr_line!("iopulse: error: {e}");
                return exit_code::USAGE;
            }
        },
        json => names.iter().map(|_| json.clone()).collect(),
    };
    // `--plot`: a job file's jobs each write their own charts (`job-NAME-latency.svg`).
    let chart_prefixes: Vec<String> = if plan.is_job_file() {
        crate::report::plot::job_chart_prefixes(&names)
    } else {
        names.iter().map(|_| String::new()).collect()
    };
    let mut code = exit_code::SUCCESS;
    for (((job, series_file), chart_prefix), json_file) in
        plan.jobs().zip(series_files).zip(&chart_prefixes).zip(json_files)
    {
        if several && plan.output.format == OutputFormat::Text && !plan.output.quiet {
            crate::stderr_line!("iopulse: job {}", job.name);
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            break;
        }
        let files = JobFiles { series: series_file.as_deref(), chart_prefix };
        let output = OutputOptions { json_file, ..plan.output.clone() };
        let job_code = run_spec(&job.spec, &output, files, stop, &job.name);
        if code == exit_code::SUCCESS {
            code = job_code;
        }
        if job_code != exit_code::SUCCESS && job_code != exit_code::OUTPUT_FAILED {
            break;
        }
    }
    code
}

fn prefix(name: &str) -> String {
    if name.is_empty() { String::new() } else { format!("job {name}: ") }
}

/// Where one job's own outputs go: its `--timeseries` file, and its charts' prefix in
/// `--plot DIR`.
struct JobFiles<'a> {
    series: Option<&'a Path>,
    chart_prefix: &'a str,
}

/// One metadata run, its report, its time series and its charts; the exit code.
fn run_spec(spec: &Spec, output: &OutputOptions, files: JobFiles, stop: &AtomicUsize, name: &str) -> i32 {
    let diag = if name.is_empty() { Diagnostics::new(output.quiet) } else { Diagnostics::for_job(output.quiet, name) };
    match crate::metadata::run(spec, &diag, stop) {
        Ok(outcome) => {
            let mut failures = crate::report::metadata::emit(&outcome.result, output);
            if let Some(path) = files.series
                && let Err(e) = crate::report::timeseries::render_metadata(&outcome.result.time_series)
                    .and_then(|bytes| crate::report::output_path::write_whole(path, &bytes))
            {
                failures.push(format!("write --timeseries {}: {e}", path.display()));
            }
            if let Some(dir) = &output.plot_dir {
                match crate::report::metadata_plot::charts(&outcome.result, dir, files.chart_prefix) {
                    Ok(charts) if !output.quiet => {
                        for note in &charts.notes {
                            crate::stderr_line!("iopulse: note: --plot: {note}");
                        }
                    }
                    Ok(_) => {}
                    Err(e) => failures.push(format!("write --plot {}: {e}", dir.display())),
                }
            }
            if let Some(error) = &outcome.result.error {
                crate::stderr_line!("iopulse: error: {}{error}", prefix(name));
            }
            for f in &failures {
                crate::stderr_line!("iopulse: error: {f}");
            }
            if !failures.is_empty() && outcome.exit_code == exit_code::SUCCESS {
                exit_code::OUTPUT_FAILED
            } else {
                outcome.exit_code
            }
        }
        Err(e) => {
            crate::stderr_line!("iopulse: error: {}{e}", prefix(name));
            match &e {
                Error::Usage(_) => exit_code::USAGE,
                _ => e.exit_code(),
            }
        }
    }
}
