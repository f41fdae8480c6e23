//! The plan of one command line: `iopulse [TARGET...] [flags]` is one phase of one job.

use super::Plan;
use crate::cli::BenchArgs;
use crate::diagnostics::error::UsageError;

/// The plan of the benchmark's command line (a profile is planned by `job_file.rs`).
pub fn plan(args: &BenchArgs) -> Result<Plan, UsageError> {
    let output = args.output.options(&args.timeseries);
    let spec = args
        .workload
        .clone()
        .into_spec(args.targets.clone(), output.timeseries_file.is_some() || output.format.wants_interval_rows())?;
    Ok(Plan::single(spec, output))
}
