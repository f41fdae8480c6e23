//! The command line's flags, in typed groups by concern, and their conversion into the
//! `Spec` (what a run does). Each concern is a file with its clap group (its flags, help
//! heading and examples), its conversion and checks, and their tests: `shape.rs` (the
//! workload's sizes, mix and workers), `access.rs`, `window.rs`, `targets.rs`,
//! `durability.rs`, `pacing.rs`, `expect.rs` (`--expect`), `data.rs`, `placement.rs`, `safety.rs`; the engine's own
//! flags live with the engines (`io/engine/options.rs`). `workload.rs` puts the groups
//! together (`WorkloadArgs::into_spec`), `output.rs` holds the outputs every reporting
//! command shares, `table.rs` fills the same groups from job files, profiles and sweeps,
//! and fio's flag names are answered with ours from `front/fio/flag_names.rs`.
//!
//! Flag names are fixed: users already type them. This module parses and converts; it
//! does not open files (see `targets::plan`), and knows no subcommand (`commands/`).

mod access;
pub mod bench;
mod data;
mod durability;
mod expect;
pub mod lists;
mod metadata;
pub mod output;
mod pacing;
mod placement;
pub mod replay;
mod safety;
mod shape;
pub mod table;
mod targets;
mod window;
pub mod workload;

pub use bench::BenchArgs;
pub use output::{IologArgs, OutputArgs, TimeseriesArgs};
pub use window::WindowArgs;
pub use workload::WorkloadArgs;

/// The clap command of a group of flags, to look its flags up by name.
pub fn command_of<T: clap::Args>() -> clap::Command {
    T::augment_args(clap::Command::new("iopulse"))
}
