//! Several workloads in one run: job files (`iopulse run FILE.toml`, docs/jobs.md). A
//! file is read and planned like every way in (`plan::job_file`: each job a checked
//! `Spec`), the jobs run phase after phase, those of a phase together in one
//! window (`phases.rs`), and their results are combined (`combined.rs`). `iopulse merge`
//! of job-file results merges them job by job (`merge_results.rs`).
//!
//! This module reads, runs and combines; where results go and how they read is
//! `output/report/`'s and `commands/`'s.

pub mod combined;
pub mod merge_results;
pub mod phases;
