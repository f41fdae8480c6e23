//! Several workloads in one run: job files (`iopulse run FILE.toml`, docs/jobs.md). A
//! file is read (`parse.rs`), each job becomes a checked `Spec` through the benchmark's
//! own command-line parser (`to_spec.rs`), the jobs run phase after phase, those of a
//! phase together in one window (`phases.rs`), and their results are combined
//! (`combined.rs`). `iopulse merge` of job-file results merges them job by job
//! (`merge_results.rs`).
//!
//! Every job of every phase is checked before anything is touched. This module runs and
//! combines; where results go and how they read is `report/`'s and `commands/`'s.

pub mod combined;
pub mod merge_results;
pub mod parse;
pub mod phases;
pub mod to_spec;

pub use to_spec::Plan;

/// Reads and checks the job file at `path`, with `overrides` (the flags after the file)
/// applied to every job.
pub fn load(path: &std::path::Path, overrides: &[std::ffi::OsString]) -> Result<Plan, crate::error::UsageError> {
    let file = parse::read(path)?;
    to_spec::plan(&file, overrides)
}
