//! Metadata runs from the command line (`iopulse DIR --files N ...`) and from profiles
//! and job files whose jobs have `files` (the personalities: `iopulse --profile varmail
//! DIR`): each job checked before anything is touched, run in order on its tree, and its
//! report printed, and its time series written (`--timeseries`). It chooses, runs and
//! prints; `metadata/` runs, `report/metadata.rs` and `report/timeseries.rs` format.

use crate::diagnostics::error::{Error, exit_code};
use crate::diagnostics::warnings::Diagnostics;
use crate::plan::Plan;
use crate::report::{OutputFormat, OutputOptions};
use crate::spec::Spec;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;

/// Whether a plan is a metadata one (every job has `files`); a plan mixing metadata and
/// block jobs is refused by `refuse_mixed`.
pub fn is_metadata(plan: &Plan) -> bool {
    plan.jobs().any(|j| j.spec.metadata.is_some())
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
    if plan.output.plot_dir.is_some() {
        return Some(
            "--plot is not written for a metadata run (--files): leave it out; --json, --csv and --timeseries carry its figures"
                .into(),
        );
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
    let mut code = exit_code::SUCCESS;
    for (job, series_file) in plan.jobs().zip(series_files) {
        if several && plan.output.format == OutputFormat::Text && !plan.output.quiet {
            crate::stderr_line!("iopulse: job {}", job.name);
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            break;
        }
        let job_code = run_spec(&job.spec, &plan.output, series_file.as_deref(), stop, &job.name);
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

/// One metadata run, its report and its time series (to `series_file`); the exit code.
fn run_spec(spec: &Spec, output: &OutputOptions, series_file: Option<&Path>, stop: &AtomicUsize, name: &str) -> i32 {
    let diag = if name.is_empty() { Diagnostics::new(output.quiet) } else { Diagnostics::for_job(output.quiet, name) };
    match crate::metadata::run(spec, &diag, stop) {
        Ok(outcome) => {
            let mut failures = crate::report::metadata::emit(&outcome.result, output);
            if let Some(path) = series_file
                && let Err(e) = crate::report::timeseries::render_metadata(&outcome.result.time_series)
                    .and_then(|bytes| crate::report::output_path::write_whole(path, &bytes))
            {
                failures.push(format!("write --timeseries {}: {e}", path.display()));
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
