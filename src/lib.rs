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
mod cli;
mod cluster;
pub mod commands;
mod compare;
mod cpu_state;
mod data;
mod diagnostics;
mod durable_format;
mod durable_record;
mod engine;
mod expect;
mod fio;
mod fio_import;
mod host;
mod jobs;
mod ledger;
mod metadata;
mod placement;
mod plan;
mod primitives;
mod report;
mod result;
mod run;
mod schedule;
mod spec;
mod stats;
mod sweep;
mod sys;
mod targets;
pub mod testing;
mod trace;
mod units;
mod worker;
