//! Running a job file's jobs: phase after phase, and within a phase every job at once,
//! each on its own thread calling `run::run` with a start line that meets the other jobs
//! of the phase (`cluster::in_process::Group`). They are checked together (one refused
//! job stops every job before anything is touched), set up, and released together into
//! one shared window. A phase starts when the previous one has ended; after a failed or
//! interrupted phase, no later phase runs. One stop word (the signals) serves every job.
//!
//! A job with `files` (a metadata tree) runs beside block jobs the same way
//! (`metadata::run_in_phase`): its tree is set up before the start line and its workers
//! wait on the same start word. A job file whose jobs all have `files` runs each of its
//! phases of several jobs through `run_phase` too (`commands/metadata.rs`, which prints
//! each job's report after its phase); a phase of one such job is a run of its own there.
//!
//! It runs and collects; it neither combines figures nor formats them.

use crate::base::diagnostics::error::RunError;
use crate::base::diagnostics::warnings::Diagnostics;
use crate::coordination::cluster::Cluster;
use crate::coordination::cluster::in_process::Group;
use crate::coordination::run;
use crate::coordination::run::start_line::{PhaseStart, StartLine};
use crate::figures::result::RunResult;
use crate::figures::result::meta_document::MetaResult;
use crate::front::plan::{Job, Plan};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What became of one job.
pub struct JobOutcome {
    pub name: String,
    pub phase: u32,
    pub result: Option<RunResult>,
    /// A metadata job's result (a job with `files`, beside other jobs): `result` is then
    /// `None`.
    pub metadata: Option<Box<MetaResult>>,
    /// The run's own exit code (0 when it succeeded).
    pub exit_code: i32,
    /// Why it has no result, or what stopped it.
    pub error: Option<String>,
    /// It did not start because another job of its phase failed (its error says so).
    pub stopped_by_others: bool,
}

/// Runs every phase of `plan` in order; an outcome per job, in file order. `steps`: the
/// plan is a profile's, whose jobs are steps (each named on its live line; their warnings
/// are held for the profile's table, `Diagnostics::for_step`).
pub fn run_all(plan: &Plan, quiet: bool, stop: &Arc<AtomicUsize>, steps: bool) -> Vec<JobOutcome> {
    let mut outcomes: Vec<JobOutcome> = Vec::new();
    for p in &plan.phases {
        let phase = p.number;
        let jobs: Vec<&Job> = p.jobs.iter().collect();
        let earlier_failed = outcomes.iter().any(|o| o.exit_code != 0);
        if earlier_failed || stop.load(Ordering::Relaxed) != 0 {
            outcomes.extend(jobs.iter().map(|j| JobOutcome {
                name: j.name.clone(),
                phase,
                result: None,
                metadata: None,
                exit_code: 0,
                error: Some(format!("not run: phase {} did not complete", phase - 1)),
                stopped_by_others: true,
            }));
            continue;
        }
        outcomes.extend(run_phase(phase, &jobs, quiet, stop, steps));
    }
    outcomes
}

/// The jobs of one phase, at once, in one window: their workers wait on one start word,
/// set once every worker of every job is set up. An outcome per job, in the order of
/// `jobs`. `steps`: as `run_all`'s (a profile's steps).
pub fn run_phase(phase: u32, jobs: &[&Job], quiet: bool, stop: &Arc<AtomicUsize>, steps: bool) -> Vec<JobOutcome> {
    let group = Group::new(jobs.len());
    let start = PhaseStart::new();
    let alone = jobs.len() == 1;
    std::thread::scope(|scope| {
        // A job whose thread is not started (a signal while thousands start, or no thread
        // to be had) leaves the group failed: the others stop at their next checkpoint,
        // before anything is touched, instead of waiting for it.
        let mut called_off: Option<String> = None;
        let handles: Vec<_> = jobs
            .iter()
            .enumerate()
            .map(|(member, job)| {
                if called_off.is_none() && stop.load(Ordering::Relaxed) != 0 {
                    called_off = Some("interrupted before the window opened: no I/O was measured".into());
                }
                if let Some(why) = &called_off {
                    group.leave(member, why);
                    return Err((job, why.clone(), true));
                }
                let (group, start) = (&group, &start);
                let stop = Arc::clone(stop);
                let thread = std::thread::Builder::new().name(format!("job {}", job.name));
                thread
                    .spawn_scoped(scope, move || {
                        run_job(phase, job, member, (group, start), (alone, steps), quiet, stop)
                    })
                    .map_err(|e| {
                        let why = format!("cannot start its thread: {e}");
                        group.leave(member, &why);
                        called_off = Some(format!("not started: job [{}] {why}", job.name));
                        (job, why, false)
                    })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(handle) => handle.join().unwrap_or_else(|_| unreachable_outcome()),
                Err((job, why, stopped_by_others)) => JobOutcome {
                    name: job.name.clone(),
                    phase,
                    result: None,
                    metadata: None,
                    exit_code: crate::base::diagnostics::error::exit_code::RUN_FAILED,
                    error: Some(why),
                    stopped_by_others,
                },
            })
            .collect()
    })
}

/// One job, on its own thread: `run::run` behind the phase's checkpoints.
fn run_job(
    phase: u32,
    job: &Job,
    member: usize,
    (group, start_word): (&Group, &PhaseStart),
    (alone, step): (bool, bool),
    quiet: bool,
    stop: Arc<AtomicUsize>,
) -> JobOutcome {
    let cluster = Cluster::alone();
    let start = StartLine::new(&cluster, None).in_group(group, member, start_word);
    let diag = match (alone, step) {
        (true, true) => Diagnostics::for_step(quiet, &crate::figures::result::profile_steps::step_label(&job.name)),
        (true, false) => Diagnostics::new(quiet),
        (false, _) => Diagnostics::for_job(quiet, &job.name),
    };
    let mut outcome = JobOutcome {
        name: job.name.clone(),
        phase,
        result: None,
        metadata: None,
        exit_code: 0,
        error: None,
        stopped_by_others: false,
    };
    if job.spec.metadata.is_some() {
        // A tree of files: set up before the phase's start line, its workers released
        // with the block jobs' (`metadata::run_in_phase`). Alone in its phase, a job of
        // `meta-phases` (windows of its own, one per phase of the tree) runs as a run of
        // its own: there is no other job to share a start with.
        let phases = job.spec.metadata.as_ref().is_some_and(|m| m.runs_phases());
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if alone && phases {
                crate::coordination::metadata::run(&job.spec, &diag, &stop)
            } else {
                crate::coordination::metadata::run_in_phase(&job.spec, &diag, &stop, &start)
            }
        }));
        let ran = ran
            .unwrap_or_else(|_| Err(RunError::Other("the job stopped on an internal error (a panic)".into()).into()));
        match ran {
            Ok(o) => {
                outcome.exit_code = o.exit_code;
                outcome.error = o.result.messages.error.clone();
                outcome.stopped_by_others = o.exit_code != 0 && start.stopped_by_others();
                outcome.metadata = Some(Box::new(o.result));
            }
            Err(e) => {
                diag.say_held();
                let _ = start.fail(&e);
                outcome.stopped_by_others = start.stopped_by_others();
                outcome.exit_code = e.exit_code();
                outcome.error = Some(e.to_string());
            }
        }
        return outcome;
    }
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run::run(&job.spec, &diag, stop, &start)));
    let ran =
        ran.unwrap_or_else(|_| Err(RunError::Other("the job stopped on an internal error (a panic)".into()).into()));
    match ran {
        Ok(o) => {
            outcome.exit_code = o.exit_code;
            outcome.error = o.result.outcome.error.clone();
            outcome.result = Some(o.result);
        }
        Err(e) => {
            // No result carries its messages to the profile's table: said here.
            diag.say_held();
            // The other jobs of the phase wait at the checkpoint this one did not reach.
            let _ = start.fail(&e);
            outcome.stopped_by_others = start.stopped_by_others();
            outcome.exit_code = e.exit_code();
            outcome.error = Some(e.to_string());
        }
    }
    outcome
}

fn unreachable_outcome() -> JobOutcome {
    // run_job catches panics of the run; a panic outside it is a bug of this file.
    JobOutcome {
        name: String::new(),
        phase: 0,
        result: None,
        metadata: None,
        exit_code: crate::base::diagnostics::error::exit_code::RUN_FAILED,
        error: Some("a job thread ended abnormally".into()),
        stopped_by_others: false,
    }
}
