//! Every path a plan writes, checked whole before anything runs, through the output guard
//! (`report::check_planned`: every `--json`, `--csv`, `--timeseries` file of each job and
//! chart of `--plot`, and every run's `--verify-state` record, judged where it lands: never a device, a FIFO, /proc, a target of any
//! phase, a file the plan was read from, or a path two outputs share).

use super::Plan;
use crate::diagnostics::error::UsageError;
use crate::report::{self, Writes};
use std::path::Path;

/// The outputs of `plan` against its targets and the files it was read from.
pub fn check(plan: &Plan) -> Result<(), UsageError> {
    let targets = plan.targets();
    let inputs: Vec<&Path> = plan.inputs.iter().map(|p| p.as_path()).collect();
    let names = plan.job_names();
    let writes = if plan.is_job_file() { Writes::Jobs(&names) } else { Writes::Run };
    let run_files: Vec<(&'static str, std::path::PathBuf)> =
        plan.jobs().filter_map(|j| j.spec.verify_state.clone()).map(|p| ("--verify-state", p)).collect();
    report::check_planned(&plan.output, writes, &targets, &inputs, &run_files)
}
