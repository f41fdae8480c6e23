//! Metadata runs from the command line (`iopulse DIR --files N ...`) and from profiles
//! and job files whose jobs have `files` (the personalities: `iopulse --profile varmail
//! DIR`): each job checked before anything is touched, the job file's phases run in
//! order (a phase of one job as a run of its own, the jobs of a phase of several at once
//! in one window through `jobs::phases::run_phase`), and after each phase its jobs'
//! reports printed in file order, their time series written (`--timeseries`) and their
//! charts drawn (`--plot`). It chooses, runs and prints; `coordination/metadata/` runs,
//! `output/report/metadata.rs`, `output/report/timeseries.rs` and `output/report/metadata_plot.rs` format.

use crate::base::diagnostics::error::{Error, exit_code};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::figures::result::meta_document::MetaResult;
use crate::front::plan::Plan;
use crate::output::report::{OutputFormat, OutputOptions};
use crate::workload::spec::Spec;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
/// the flags (or the job with `meta-phases` in a shared phase); checked before anything
/// is touched.
pub fn refuse_mixed(plan: &Plan) -> Option<String> {
    if !matches!(plan.output.format, OutputFormat::Text | OutputFormat::Json) {
        return Some(format!(
            "{}: --output-format (other than text or json) not yet with jobs with `files` (a tree of files) beside jobs of block I/O: drop it, or run the metadata jobs from a job file of their own",
            plan.source,
        ));
    }
    if let Some(message) = refuse_phases_in_shared_window(plan) {
        return Some(message);
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

/// A job with `meta-phases` (the default without `meta-mix`) in a phase of several jobs,
/// in one line naming the job file, the job and the fix: its phases, each from its
/// workers' common start to their common end, cannot share the phase's one window.
/// Checked before anything is touched.
pub fn refuse_phases_in_shared_window(plan: &Plan) -> Option<String> {
    plan.phases.iter().filter(|p| p.jobs.len() > 1).find_map(|phase| {
        let job = phase.jobs.iter().find(|j| {
            j.spec.metadata.as_ref().is_some_and(|m| m.runs_phases())
        })?;
        Some(format!(
            "{}: job [{}] runs meta-phases (the default without meta-mix) in phase {} beside {} other job(s), whose window it cannot share: give it a meta-mix, or a phase of its own (stonewall = true)",
            plan.source,
            job.name,
            phase.number,
            phase.jobs.len() - 1
        ))
    })
}

/// Runs every job of `plan` (metadata jobs), phase after phase: a phase of one job as a
/// run of its own (`metadata::run`), a phase of several with its jobs at once in one
/// window (`jobs::phases::run_phase`), their reports after it in file order. After a
/// failed or interrupted phase no later phase runs. The exit code of the first job that
/// failed (on its own, not stopped by another's failure), else 0.
pub fn run_plan(plan: &Plan, stop: &Arc<AtomicUsize>) -> i32 {
    if let Some(message) = refuse(plan) {
        crate::stderr_line!("iopulse: error: {message}");
        return exit_code::USAGE;
    }
    if let Some(message) = refuse_phases_in_shared_window(plan) {
        crate::stderr_line!("iopulse: error: {message}");
        return exit_code::USAGE;
    }
    if let Err(e) = crate::front::plan::ledger::check(plan) {
        crate::stderr_line!("iopulse: error: {e}");
        return exit_code::USAGE;
    }
    // Jobs of one phase run at once: their trees apart, their threads within the limits.
    let apart = crate::front::plan::trees::check_apart_in_each_phase(plan);
    let threads = plan.phases.iter().try_for_each(|p| crate::front::plan::check_phase_workers(plan, p).map(|_| ()));
    if let Err(e) = apart.and(threads) {
        crate::stderr_line!("iopulse: error: {e}");
        return exit_code::USAGE;
    }
    // Every job's tree is looked at before the first is touched.
    for job in plan.jobs() {
        if let Err(e) = crate::coordination::metadata::check(&job.spec) {
            crate::stderr_line!("iopulse: error: {}{e}", prefix(&job.name));
            return e.exit_code();
        }
    }
    if let Some(code) = super::dry_run_exit() {
        return code;
    }
    let several = plan.jobs().count() > 1;
    // `--timeseries`: one file, or with a job file one per job (FILE-JOB.csv), as block runs.
    let names = plan.job_names();
    let series_files: Vec<Option<PathBuf>> = match &plan.output.timeseries_file {
        None => names.iter().map(|_| None).collect(),
        Some(path) if plan.is_job_file() => match crate::output::report::jobs::timeseries_paths(path, &names) {
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
        Some(path) if plan.is_job_file() && several => {
            match crate::output::report::jobs::metadata_json_paths(path, &names) {
                Ok(paths) => paths.into_iter().map(Some).collect(),
                Err(e) => {
                    crate::stderr_line!("iopulse: error: {e}");
                    return exit_code::USAGE;
                }
            }
        }
        json => names.iter().map(|_| json.clone()).collect(),
    };
    // `--plot`: a job file's jobs each write their own charts (`job-NAME-latency.svg`).
    let chart_prefixes: Vec<String> = if plan.is_job_file() {
        crate::output::report::plot::job_chart_prefixes(&names)
    } else {
        names.iter().map(|_| String::new()).collect()
    };
    // Each job's outputs, in file order.
    let outputs: Vec<JobOutputs> = series_files
        .into_iter()
        .zip(chart_prefixes)
        .zip(json_files)
        .map(|((series, chart_prefix), json_file)| JobOutputs {
            series,
            chart_prefix,
            output: OutputOptions { json_file, ..plan.output.clone() },
        })
        .collect();
    let header = |name: &str| {
        if several && plan.output.format == OutputFormat::Text && !plan.output.quiet {
            crate::stderr_line!("iopulse: job {name}");
        }
    };
    let mut code = exit_code::SUCCESS;
    let mut first = 0;
    for phase in &plan.phases {
        let outputs = &outputs[first..first + phase.jobs.len()];
        first += phase.jobs.len();
        let phase_code = if let [job] = &phase.jobs[..] {
            header(&job.name);
            if stop.load(Ordering::Relaxed) != 0 {
                break;
            }
            run_spec(&job.spec, &outputs[0], stop, &job.name)
        } else {
            if stop.load(Ordering::Relaxed) != 0 {
                break;
            }
            let jobs: Vec<&crate::front::plan::Job> = phase.jobs.iter().collect();
            let screen = super::live_screen(&plan.output);
            let outcomes = crate::front::jobs::phases::run_phase(phase.number, &jobs, plan.output.quiet, stop, false);
            drop(screen);
            emit_phase(outcomes, outputs, &header)
        };
        if code == exit_code::SUCCESS {
            code = phase_code;
        }
        if phase_code != exit_code::SUCCESS && phase_code != exit_code::OUTPUT_FAILED {
            break;
        }
    }
    // A signal before a phase began: that phase and every later one did not run.
    let signal = stop.load(Ordering::Relaxed) as i32;
    if code == exit_code::SUCCESS
        && [exit_code::INTERRUPTED, exit_code::TERMINATED, exit_code::HUNG_UP].contains(&signal)
    {
        code = signal;
    }
    code
}

/// The reports of the jobs of a phase that ran at once, in file order; the exit code of
/// the first job that failed on its own, else of the first stopped by another's failure,
/// else 0.
fn emit_phase(
    outcomes: Vec<crate::front::jobs::phases::JobOutcome>,
    outputs: &[JobOutputs],
    header: &dyn Fn(&str),
) -> i32 {
    let (mut own, mut stopped) = (exit_code::SUCCESS, exit_code::SUCCESS);
    for (o, outputs) in outcomes.into_iter().zip(outputs) {
        header(&o.name);
        let job_code = match o.metadata {
            Some(result) => emit_result(&result, o.exit_code, outputs, &o.name),
            None => {
                if let Some(error) = &o.error {
                    crate::stderr_line!("iopulse: error: {}{error}", prefix(&o.name));
                }
                o.exit_code
            }
        };
        let first = if o.stopped_by_others { &mut stopped } else { &mut own };
        if *first == exit_code::SUCCESS {
            *first = job_code;
        }
    }
    if own == exit_code::SUCCESS { stopped } else { own }
}

fn prefix(name: &str) -> String {
    if name.is_empty() { String::new() } else { format!("job {name}: ") }
}

/// Where one job's own outputs go: its report and `--json` file, its `--timeseries` file,
/// and its charts' prefix in `--plot DIR`.
struct JobOutputs {
    series: Option<PathBuf>,
    chart_prefix: String,
    output: OutputOptions,
}

/// One metadata run, its report, its time series and its charts; the exit code.
fn run_spec(spec: &Spec, outputs: &JobOutputs, stop: &AtomicUsize, name: &str) -> i32 {
    let quiet = outputs.output.quiet;
    let diag = if name.is_empty() { Diagnostics::new(quiet) } else { Diagnostics::for_job(quiet, name) };
    // `--live`: the full screen for the run, given back before its report.
    let screen = super::live_screen(&outputs.output);
    let outcome = crate::coordination::metadata::run(spec, &diag, stop);
    drop(screen);
    match outcome {
        Ok(outcome) => emit_result(&outcome.result, outcome.exit_code, outputs, name),
        Err(e) => {
            crate::stderr_line!("iopulse: error: {}{e}", prefix(name));
            match &e {
                Error::Usage(_) => exit_code::USAGE,
                _ => e.exit_code(),
            }
        }
    }
}

/// A finished run's report, time series and charts, and what stopped it; the run's exit
/// code, or `OUTPUT_FAILED` when it succeeded but an output could not be written.
fn emit_result(result: &MetaResult, run_code: i32, outputs: &JobOutputs, name: &str) -> i32 {
    let output = &outputs.output;
    let mut failures = crate::output::report::metadata::emit(result, output);
    let charts = output.plot_dir.as_deref().map(|dir| (dir, outputs.chart_prefix.as_str()));
    failures.extend(crate::output::report::metadata::emit_files(
        result,
        outputs.series.as_deref(),
        charts,
        output,
        None,
    ));
    if let Some(error) = &result.messages.error {
        crate::stderr_line!("iopulse: error: {}{error}", prefix(name));
    }
    for f in &failures {
        crate::stderr_line!("iopulse: error: {f}");
    }
    if !failures.is_empty() && run_code == exit_code::SUCCESS { exit_code::OUTPUT_FAILED } else { run_code }
}
