//! iopulse: a Linux storage benchmark. The binary (`src/main.rs`) is a thin
//! shell around this library, so that tests and benches reach every stage of
//! the pipeline:
//!
//! argv → `cli` → `spec::Spec` → `commands::benchmark` → `run` (targets, workers,
//! the start line) → `worker` (one loop over an `engine`) → `stats` →
//! `RunResult` → `report`. In a cluster run (`cluster`: MPI ranks) rank 0
//! combines every rank's result (`cluster::result`, via `result::merge`) before
//! reporting.
//!
//! docs/architecture.md describes the architecture and its rules.

// stderr and stdout never panic the run: see `stderr_line!` and clippy.toml.
#![deny(clippy::disallowed_macros)]

pub mod access;
pub mod buffer;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod commands;
mod cpu_state;
pub mod data;
pub mod diag;
pub mod durability;
pub mod engine;
mod environment;
pub mod error;
mod fio_import;
mod futex;
pub mod heartbeat;
mod input_file;
mod jobs;
mod memory;
pub mod placement;
mod plan;
mod profiles;
pub mod report;
mod result;
pub mod rng;
pub mod run;
mod rusage;
mod signals;
pub mod spec;
mod start_at;
pub mod stats;
mod sweep;
pub mod targets;
pub mod testing;
mod think;
pub mod units;
pub mod verify;
pub mod worker;
