//! Every path a plan writes, checked whole before anything runs, through the output guard
//! (`report::check_planned`: every `--json`, `--csv`, `--timeseries` file of each job and
//! chart of `--plot`, every run's `--verify-state` record and every job's `--write-iolog`
//! file, judged where it lands: never a device, a FIFO, /proc, a target of any phase, a
//! file the plan was read from, or a path two outputs share). A refusal about a job's
//! iolog names what asked for it (the flag, or the file, line and key).

use super::{Job, Plan, iologs};
use crate::diagnostics::error::UsageError;
use crate::report::mixed_jobs::MixedNames;
use crate::report::{self, Writes};
use std::path::Path;

/// The outputs of `plan` against its targets and the files it was read from.
pub fn check(plan: &Plan) -> Result<(), UsageError> {
    let targets = plan.targets();
    let inputs: Vec<&Path> = plan.inputs.iter().map(|p| p.as_path()).collect();
    let names = plan.job_names();
    // A metadata run writes its own charts (`report::metadata_plot`); a job file mixing
    // metadata and block jobs writes one document, as a job file's, and each metadata
    // job's own CSV, time series and charts (`report::mixed_jobs`).
    let metadata = plan.jobs().all(|j| j.spec.metadata.is_some());
    let kinds = plan.job_kinds();
    let mixed = MixedNames::new(&kinds);
    let writes = match (metadata, plan.is_job_file()) {
        (true, true) => Writes::Metadata(Some(&names)),
        (true, false) => Writes::Metadata(None),
        (false, true) if mixed.block_count < mixed.all.len() => Writes::Mixed(&mixed),
        (false, true) => Writes::Jobs(&names),
        (false, false) => Writes::Run,
    };
    let jobs: Vec<&Job> = plan.jobs().collect();
    iologs::check_distinct(&plan.source, &jobs)?;
    let run_files: Vec<(&'static str, std::path::PathBuf)> = jobs
        .iter()
        .filter_map(|j| j.spec.verify_state.clone())
        .map(|p| ("--verify-state", p))
        .chain(jobs.iter().filter_map(|j| j.iolog.as_ref()).map(|log| ("--write-iolog", log.path.clone())))
        .collect();
    report::check_planned(&plan.output, writes, &targets, &inputs, &run_files).map_err(|e| {
        match iologs::about(&jobs, &e.message) {
            Some(log) => UsageError::new(format!("{}: {}", log.asked_by, e.message)),
            None => e,
        }
    })
}
