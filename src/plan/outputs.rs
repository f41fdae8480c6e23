//! Every path a plan writes, checked whole before anything runs: through the output guard
//! (`report::output_path`: never a device, a FIFO, /proc, a target of any phase, or a
//! path two outputs share), and never a file the plan was read from (a job file).

use super::Plan;
use crate::error::UsageError;
use crate::report::OutputOptions;
use crate::targets::identity::same_target;
use std::path::{Path, PathBuf};

/// The outputs of `plan` against its targets and the files it was read from.
pub fn check(plan: &Plan) -> Result<(), UsageError> {
    let targets = plan.targets();
    if plan.is_job_file() {
        crate::report::check_job_outputs(&plan.output, &targets, &plan.job_names())?;
    } else {
        crate::report::check_outputs(&plan.output, &targets)?;
    }
    refuse_inputs(&plan.output, &plan.inputs)
}

/// The files an output names, by flag (a directory's charts are checked by the guard).
fn named(output: &OutputOptions) -> Vec<(&'static str, &Path)> {
    [("--json", &output.json_file), ("--csv", &output.csv_file), ("--timeseries", &output.timeseries_file)]
        .into_iter()
        .filter_map(|(flag, path)| path.as_deref().map(|p| (flag, p)))
        .collect()
}

/// No output may replace a file the plan was read from (`iopulse run jf.toml --json jf.toml`).
pub fn refuse_inputs(output: &OutputOptions, inputs: &[PathBuf]) -> Result<(), UsageError> {
    for (flag, path) in named(output) {
        if let Some(input) = inputs.iter().find(|i| same_target(i, path)) {
            return Err(UsageError::new(format!(
                "{flag} {} is the job file {} this run reads: give the output another path",
                path.display(),
                input.display()
            )));
        }
    }
    Ok(())
}
