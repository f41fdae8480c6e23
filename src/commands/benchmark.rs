//! The benchmark command (`iopulse [TARGET...] [flags]`), as this process's part of
//! it: alone (the usual case), or as one rank of a cluster run under MPI. It runs the
//! run (`run`) behind the start line, and then:
//!
//! - alone: prints the report and returns the run's exit code;
//! - in a cluster: hands this rank's outcome to rank 0, where the cluster
//!   document is built (`cluster_result`) and the only report is printed and
//!   written; then every rank agrees on the job's exit code, so that mpirun
//!   and srun end with it whichever rank they look at.
//!
//! A rank that fails before the window brings its error to the start line's
//! checkpoint (`StartLine::fail`), so the whole job ends with a message naming
//! the rank, its host and the error, and no rank waits at a barrier.

use crate::base::diagnostics::error::{Error, RunError, exit_code};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::coordination::cluster::result::{self as cluster_result, RankOutcome};
use crate::coordination::cluster::{Cluster, launcher_rank};
use crate::coordination::run::start_line::StartLine;
use crate::coordination::run::{self, RunOutcome};
use crate::front::cli::BenchArgs;
use crate::io::host::signals;
use crate::io::schedule::start_at::StartAt;
use crate::output::report;
use crate::output::report::OutputOptions;
use crate::workload::spec::Spec;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `iopulse [TARGET...] [flags]`: a profile (`--profile`, or the default one), or one run
/// of this process's part of the job; the exit code.
pub fn main(args: BenchArgs, matches: &clap::ArgMatches) -> i32 {
    // A profile's steps take the flags given with it, and are checked with them: the flags
    // alone are not a run (`--keep-tree` with a profile whose steps have `files`).
    if let Some(name) = super::profile::chosen(&args, matches) {
        let overrides = super::run::overrides(matches, "in the flags given with --profile");
        return super::profile::run(&name, &args.targets, &overrides, args.loops);
    }
    let plan = match crate::front::plan::flags::plan(&args) {
        Ok(plan) => plan,
        Err(e) => {
            // Every rank of a job has the same command line: one of them says what is wrong.
            if super::speaks_for_the_job() {
                crate::stderr_line!("iopulse: error: {e}");
            }
            return exit_code::USAGE;
        }
    };
    if args.loops.is_some() {
        crate::stderr_line!(
            "iopulse: error: --loops repeats the steps of a profile: give --profile NAME (or no TARGET and no workload flag, for the default profile), or repeat one workload with `iopulse sweep TARGET --repeat N`"
        );
        return exit_code::USAGE;
    }
    // A tree of files (`--files`): its own run and report, in this process alone.
    if super::metadata::is_metadata(&plan) {
        return match signals::install() {
            Ok(stop) => super::metadata::run_plan(&plan, &stop),
            Err(e) => {
                crate::stderr_line!("iopulse: error: cannot install signal handlers: {e}");
                exit_code::RUN_FAILED
            }
        };
    }
    // Under an MPI launcher (and built with MPI) this meets the other ranks; else a job of one.
    let cluster = match Cluster::join() {
        Ok(c) => c,
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    let crate::front::plan::Plan { mut phases, output, .. } = plan;
    let spec = phases.remove(0).jobs.remove(0).spec;
    run(&cluster, &spec, output, args.start_at)
}

/// Runs `spec` as this process's part of the job `cluster`; returns the exit code.
pub fn run(cluster: &Cluster, spec: &Spec, output: OutputOptions, start_at: Option<StartAt>) -> i32 {
    let start_line = StartLine::new(cluster, start_at);
    let output = substitute_outputs(output, &start_line);
    if super::is_dry_run() {
        return dry_run(cluster, spec, &output, &start_line);
    }
    let distributed = cluster.is_distributed();
    // In a cluster, rank 0 speaks for every rank: the others record but print nothing.
    let diag = if distributed && !cluster.is_root() { Diagnostics::silent() } else { Diagnostics::new(output.quiet) };
    if !distributed && let Some(l) = launcher_rank().filter(|l| l.size > 1) {
        diag.warn(format!(
            "started by an MPI launcher as rank {} of {} ({}), but this iopulse was built without MPI: each process runs alone ({{rank}} is {}) and prints its own report. Build with `--features mpi` for one cluster report, or combine --json results with `iopulse merge`",
            l.rank, l.size, l.variable, l.rank
        ));
    }
    if distributed
        && let Ok(cpus) = std::thread::available_parallelism()
        && (cpus.get() as u64) < u64::from(spec.shape.threads)
    {
        // Launchers bind ranks to a core or two by default: the workers would share them.
        diag.warn(format!(
            "this rank may run on {} CPU(s) only (the launcher bound it), but it runs --threads {}: its workers share those CPUs. Give mpirun `--bind-to none` or `--map-by slot:PE={}` (srun: `--cpus-per-task {}`)",
            cpus.get(),
            spec.shape.threads,
            spec.shape.threads,
            spec.shape.threads
        ));
    }
    let (local, stop) = match signals::install() {
        Ok(stop) => {
            // The full screen for the run, given back before anything is reported.
            let screen = if distributed { None } else { super::live_screen(&output) };
            let local = check_and_run(cluster, spec, &output, &diag, &start_line, &stop);
            drop(screen);
            (local, stop)
        }
        Err(e) => {
            let error = RunError::Other(format!("cannot install signal handlers: {e}"));
            (Err(error.into()), Arc::new(AtomicUsize::new(0)))
        }
    };
    if !distributed {
        return finish_alone(local, &output, &stop);
    }
    // A failure before the window: the other ranks learn it at the start line's checkpoint.
    let local = match local {
        Err(e) => match start_line.fail(&e) {
            Some(failure) => Err(Error::Cluster(failure)),
            None => Err(e),
        },
        ok => ok,
    };
    if let Err(Error::Cluster(failure)) = &local {
        if cluster.is_root() {
            for f in &failure.failures {
                crate::stderr_line!("iopulse: error: rank {} (host {}): {}", f.rank, f.host, f.message);
            }
        }
        return Error::Cluster(failure.clone()).exit_code();
    }
    finish_in_cluster(cluster, local, &output)
}

/// Judges the ledger and runs: everything this rank does before its report.
fn check_and_run(
    cluster: &Cluster,
    spec: &Spec,
    output: &OutputOptions,
    diag: &Diagnostics,
    start_line: &StartLine,
    stop: &Arc<AtomicUsize>,
) -> Result<RunOutcome, Error> {
    judge_ledger(cluster, spec, output, start_line)?;
    run::run(spec, diag, Arc::clone(stop), start_line)
}

/// This rank's ledger judged whole: its targets, its `--verify-state` record (every rank
/// writes its own, FILE.rankN in a job of several) and, on rank 0 (which alone writes
/// them), the outputs.
fn judge_ledger(cluster: &Cluster, spec: &Spec, output: &OutputOptions, start_line: &StartLine) -> Result<(), Error> {
    let targets: Vec<_> = spec.targets.iter().map(|t| start_line.substitute(t)).collect();
    let record = spec.data.verify_state.as_ref().map(|p| start_line.record_path(p));
    let mut ledger = crate::storage::ledger::Ledger::new();
    ledger.add_run(spec, &targets, record.as_deref(), "");
    if cluster.is_root() {
        report::check_planned(output, report::Writes::Run, ledger)?;
    } else {
        ledger.judge()?;
    }
    Ok(())
}

/// `--dry-run`: the ledger judged and the run checked as it would be (targets, limits,
/// placement), nothing touched; the ledger printed.
fn dry_run(cluster: &Cluster, spec: &Spec, output: &OutputOptions, start_line: &StartLine) -> i32 {
    let checked = judge_ledger(cluster, spec, output, start_line).and_then(|()| run::check(spec).map(|_| ()));
    match checked {
        Ok(()) => super::dry_run_exit().unwrap_or(exit_code::SUCCESS),
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            e.exit_code()
        }
    }
}

/// `{rank}` and `{host}` in the output paths.
fn substitute_outputs(mut output: OutputOptions, start_line: &StartLine) -> OutputOptions {
    for path in [
        &mut output.json_file,
        &mut output.csv_file,
        &mut output.plot_dir,
        &mut output.timeseries_file,
        &mut output.iolog_file,
    ]
    .into_iter()
    .flatten()
    {
        *path = start_line.substitute(path);
    }
    output
}

/// The end of a run alone: its report, its error, its exit code.
fn finish_alone(local: Result<RunOutcome, Error>, output: &OutputOptions, stop: &AtomicUsize) -> i32 {
    match local {
        Ok(outcome) => {
            let failures = report::emit(&outcome.result, output);
            if let Some(error) = &outcome.result.outcome.error {
                crate::stderr_line!("iopulse: error: {error}");
            }
            with_output_failures(outcome.exit_code, &failures)
        }
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            match (&e, stop.load(Ordering::Relaxed)) {
                (Error::Run(_), code)
                    if [exit_code::INTERRUPTED, exit_code::TERMINATED, exit_code::HUNG_UP].contains(&(code as i32)) =>
                {
                    code as i32
                }
                _ => e.exit_code(),
            }
        }
    }
}

/// The end of a cluster run, on every rank: outcomes gathered on rank 0, which prints
/// and writes the cluster report; then the job's exit code, agreed by all.
fn finish_in_cluster(cluster: &Cluster, local: Result<RunOutcome, Error>, output: &OutputOptions) -> i32 {
    let mine = match local {
        Ok(o) => RankOutcome { exit_code: o.exit_code, result: Some(o.result), error: None },
        Err(e) => RankOutcome { exit_code: e.exit_code(), result: None, error: Some(e.to_string()) },
    };
    let code = match cluster.gather_to_root(&mine.to_bytes()) {
        Some(blobs) => report_cluster(cluster, blobs, output),
        None => exit_code::SUCCESS,
    };
    // Rank 0's code for everyone, once its report is out: no rank exits (and makes mpirun
    // end the job) while rank 0 is still writing.
    let codes = cluster.all_gather(&code.to_le_bytes());
    codes
        .get(crate::coordination::cluster::ROOT_RANK as usize)
        .and_then(|b| b.as_slice().try_into().ok())
        .map_or(exit_code::RUN_FAILED, i32::from_le_bytes)
}

/// On rank 0: the cluster document from every rank's outcome, its report and outputs.
fn report_cluster(cluster: &Cluster, blobs: Vec<Vec<u8>>, output: &OutputOptions) -> i32 {
    let outcomes: Vec<RankOutcome> = blobs.iter().map(|b| RankOutcome::from_bytes(b)).collect();
    // Rank 0's own warnings were printed as they came; the others' are printed now.
    for (rank, o) in outcomes.iter().enumerate().skip(1) {
        for w in o.result.iter().flat_map(|r| &r.outcome.warnings) {
            crate::stderr_line!("⚠ {}: {w}", cluster_result::rank_name(rank, &cluster.hosts()[rank]));
        }
    }
    let run = cluster_result::build(outcomes, cluster.hosts(), cluster.launcher());
    let Some(result) = run.result else {
        for f in &run.failures {
            crate::stderr_line!("iopulse: error: {f}");
        }
        return run.exit_code;
    };
    for w in &run.warnings {
        crate::stderr_line!("⚠ {w}");
    }
    let failures = report::emit(&result, output);
    if let Some(error) = &result.outcome.error {
        crate::stderr_line!("iopulse: error: {error}");
    }
    with_output_failures(run.exit_code, &failures)
}

/// Says each output that could not be written; a run that otherwise succeeded then exits
/// `OUTPUT_FAILED` (4), and a run's own failure code wins over it.
fn with_output_failures(run_code: i32, failures: &[String]) -> i32 {
    for f in failures {
        crate::stderr_line!("iopulse: error: {f}");
    }
    if !failures.is_empty() && run_code == exit_code::SUCCESS { exit_code::OUTPUT_FAILED } else { run_code }
}
