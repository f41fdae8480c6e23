//! The plan of one command line: `iopulse [TARGET...] [flags]` is one phase of one job.

use super::Plan;
use crate::base::diagnostics::error::UsageError;
use crate::front::cli::BenchArgs;

/// The plan of the benchmark's command line (a profile is planned by `job_file.rs`).
pub fn plan(args: &BenchArgs) -> Result<Plan, UsageError> {
    let mut output = args.output.options(&args.timeseries);
    output.iolog_file = args.iolog.write_iolog.clone();
    let mut spec = args
        .workload
        .clone()
        .into_spec(args.targets.clone(), output.timeseries_file.is_some() || output.format.wants_interval_rows())?;
    spec.output.record_iolog = output.iolog_file.is_some();
    if spec.output.record_iolog && spec.metadata.is_some() {
        return Err(UsageError::new(
            "--write-iolog records block I/O, and --files (a tree of files) issues none: leave --write-iolog out",
        ));
    }
    Ok(Plan::single(spec, output))
}
