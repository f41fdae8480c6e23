//! iopulse: a Linux storage benchmark. The binary (`src/main.rs`) is a thin
//! shell around this library:
//!
//! argv → `commands` → `front` (`cli`'s flag groups, `plan`: phases, jobs, each a
//! `workload::spec::Spec`, checked whole) → `coordination::run` (targets from `storage`,
//! workers, the start line) → `io::worker` (one loop over an `io::engine`, recording into
//! `io::stats`) → `figures::result` → `output::report`. In a cluster run
//! (`coordination::cluster`: MPI ranks) rank 0 combines every rank's result before
//! reporting. Each folder is a layer that imports only those below it (the order below).
//!
//! Private by default: the binary reaches `commands`, the tests and benches `testing`
//! (which re-exports what they need), so the compiler sees every item of these layers that
//! nothing uses. The two lowest, `io` and `base`, are the crate `iopulse-io` (its root,
//! src/io_crate.rs, says why), whose items the layers here use are `pub`.
//!
//! docs/architecture.md describes the architecture and its rules.

// stderr and stdout never panic the run: see `stderr_line!` and clippy.toml.
#![deny(clippy::disallowed_macros)]

// The two lowest layers, named here as before: `crate::io`, `crate::base`,
// `crate::stderr_line!`.
pub(crate) use iopulse_io::stderr_line;
use iopulse_io::{base, io};

// The pipeline, each folder a layer that imports only the layers below it (tests/it/
// architecture.rs holds the order): commands → front → output → coordination → figures →
// storage → workload → io → base.
pub mod commands;
mod coordination;
mod figures;
mod front;
mod output;
mod storage;
pub mod testing;
mod workload;
