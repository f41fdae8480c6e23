//! iopulse: a Linux storage benchmark. The binary (`src/main.rs`) is a thin
//! shell around this library:
//!
//! argv → `commands` (the clap command, `cli`'s flag groups) → `plan` (phases, jobs,
//! `spec::Spec`s, outputs; checked whole) → `run` (targets, workers, the start line) →
//! `worker` (one loop over an `engine`) → `stats` → `RunResult` → `report`. In a cluster
//! run (`cluster`: MPI ranks) rank 0 combines every rank's result (`cluster::result`, via
//! `result::merge`) before reporting.
//!
//! Private by default: the binary reaches `commands`, the tests and benches `testing`
//! (which re-exports what they need), so the compiler sees every item nothing uses.
//!
//! docs/architecture.md describes the architecture and its rules.

// stderr and stdout never panic the run: see `stderr_line!` and clippy.toml.
#![deny(clippy::disallowed_macros)]

mod access;
mod buffer;
mod cli;
mod clock;
mod cluster;
pub mod commands;
mod compare;
mod cpu_state;
mod data;
mod diag;
mod durability;
mod durable_record;
mod engine;
mod environment;
mod error;
mod expect;
mod fio_import;
mod futex;
mod heartbeat;
mod input_file;
mod jobs;
mod memory;
mod placement;
mod plan;
mod profiles;
mod report;
mod result;
mod rng;
mod run;
mod rusage;
mod signals;
mod spec;
mod start_at;
mod stats;
mod sweep;
mod targets;
pub mod testing;
mod think;
mod units;
mod verify;
mod worker;
