//! A plan's ledger: every path its runs and its report touch, made from the plan before
//! anything runs and judged whole by the one guard (`ledger::guard`): each job's targets
//! (or its tree), its `--verify-state` record and its `--write-iolog` file, every
//! `--json`, `--csv`, `--timeseries` file and chart of `--plot`, against every file the
//! plan was read from and the traces its jobs replay. A refusal about a job's iolog names
//! what asked for it (the flag, or the file, line and key).
//!
//! It builds and hands over; the judging is the guard's, the writing the commands'.

use super::{Job, Plan, iologs};
use crate::base::diagnostics::error::UsageError;
use crate::output::report::mixed_jobs::MixedNames;
use crate::output::report::{self, Writes};
use crate::storage::ledger::{Action, Ledger};

/// The ledger of `plan`'s runs (its report's outputs aside): targets, trees, records and
/// iologs of every job, and the files the plan was read from.
pub fn of_runs(plan: &Plan) -> Ledger {
    let mut ledger = Ledger::new();
    for input in &plan.inputs {
        ledger.read("an input this command reads", input);
    }
    for job in plan.jobs() {
        let name = if plan.is_job_file() { job.name.as_str() } else { "" };
        ledger.add_run(&job.spec, &job.spec.targets, job.spec.data.verify_state.as_deref(), name);
        if let Some(log) = &job.iolog {
            ledger.touch("--write-iolog", &log.path, Action::Replace);
        }
    }
    ledger
}

/// What the report of `plan` writes besides each job's files.
fn writes<'a>(plan: &Plan, names: &'a [&'a str], mixed: &'a MixedNames<'a>) -> Writes<'a> {
    // A metadata run writes its own charts (`report::metadata_plot`); a job file mixing
    // metadata and block jobs writes one document, as a job file's, and each metadata
    // job's own CSV, time series and charts (`report::mixed_jobs`).
    let metadata = plan.jobs().all(|j| j.spec.metadata.is_some());
    match (metadata, plan.is_job_file()) {
        (true, true) => Writes::Metadata(Some(names)),
        (true, false) => Writes::Metadata(None),
        (false, true) if mixed.block_count < mixed.all.len() => Writes::Mixed(mixed),
        (false, true) => Writes::Jobs(names),
        (false, false) => Writes::Run,
    }
}

/// The whole ledger of `plan` judged: its runs' paths and its report's outputs.
pub fn check(plan: &Plan) -> Result<(), UsageError> {
    let names = plan.job_names();
    let kinds = plan.job_kinds();
    let mixed = MixedNames::new(&kinds);
    let jobs: Vec<&Job> = plan.jobs().collect();
    iologs::check_distinct(&plan.source, &jobs)?;
    report::check_planned(&plan.output, writes(plan, &names, &mixed), of_runs(plan)).map_err(|e| {
        match iologs::about(&jobs, &e.message) {
            Some(log) => UsageError::new(format!("{}: {}", log.asked_by, e.message)),
            None => e,
        }
    })
}
