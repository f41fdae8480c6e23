//! iopulse: a Linux storage benchmark. The binary (`src/main.rs`) is a thin
//! shell around this library, so that tests and benches reach every stage of
//! the pipeline:
//!
//! argv → `cli` → `spec::Spec` → `job` → `coordinator` (targets, workers, the
//! `start_line`) → `worker` (hot loop over an `engine`) → `stats` →
//! `result::RunResult` → `report`. In a cluster run (`cluster`: MPI ranks) rank 0
//! combines every rank's result (`cluster_result`, via `merge`) before reporting.
//!
//! docs/architecture.md describes the architecture and its rules.

// stderr and stdout never panic the run: see `stderr_line!` and clippy.toml.
#![deny(clippy::disallowed_macros)]

pub mod access;
pub mod buffer;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod cluster_result;
pub mod commands;
pub mod coordinator;
pub mod coverage;
pub mod data;
pub mod diag;
pub mod engine;
pub mod environment;
pub mod error;
pub mod errors;
pub mod futex;
pub mod heartbeat;
pub mod job;
pub mod live;
pub mod memory;
pub mod merge;
pub mod placement;
pub mod report;
pub mod result;
pub mod rng;
pub mod rusage;
pub mod signals;
pub mod spec;
pub mod start_at;
pub mod start_line;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod think;
pub mod units;
pub mod verify;
pub mod watchdog;
pub mod worker;
