//! What the tests and benches reach that the binary does not: a benchmark command line
//! turned into the `Spec` it runs, through the same parser and plan as `iopulse ARGS`.
//! Nothing here is used by the binary itself.

use crate::workload::spec::Spec;

/// The `Spec` of `iopulse ARGS...` (the arguments without the program name), or the
/// one-line refusal it would print.
pub fn spec_of<I, T>(args: I) -> Result<Spec, String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let argv = std::iter::once(std::ffi::OsString::from("iopulse")).chain(args.into_iter().map(Into::into));
    let matches = crate::commands::command()
        .try_get_matches_from(argv)
        .map_err(|e| crate::base::diagnostics::error::clap_one_line(&e))?;
    let cli = crate::commands::Cli::from_arg_matches(&matches)
        .map_err(|e| crate::base::diagnostics::error::clap_one_line(&e))?;
    if let Some(refusal) = crate::front::fio::flag_names::refusal(&matches) {
        return Err(refusal);
    }
    let plan = crate::front::plan::flags::plan(&cli.bench).map_err(|e| e.message)?;
    Ok(plan.phases.into_iter().next().and_then(|p| p.jobs.into_iter().next()).expect("one job").spec)
}

/// Checks `iopulse ARGS...` (without the program name) as far as it can be without a
/// file: the clap command, fio's names, and the plan of a benchmark, a sweep or a search
/// (their flags into `Spec`s). A job file is not read. The refusal it would print, if any.
pub fn check_command_line<I, T>(args: I) -> Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use crate::commands::Command;
    use clap::FromArgMatches;
    let argv = std::iter::once(std::ffi::OsString::from("iopulse")).chain(args.into_iter().map(Into::into));
    let matches = crate::commands::command()
        .try_get_matches_from(argv)
        .map_err(|e| crate::base::diagnostics::error::clap_one_line(&e))?;
    let sub = matches.subcommand().map_or(&matches, |(_, m)| m);
    if let Some(refusal) = crate::front::fio::flag_names::refusal(sub) {
        return Err(refusal);
    }
    let cli = crate::commands::Cli::from_arg_matches(&matches)
        .map_err(|e| crate::base::diagnostics::error::clap_one_line(&e))?;
    match cli.command {
        None => crate::front::plan::flags::plan(&cli.bench).map(|_| ()).map_err(|e| e.message),
        Some(Command::Sweep(s)) => {
            crate::front::plan::sweep::grid(&s.runs.targets, &s.runs.flags).map(|_| ()).map_err(|e| e.message)
        }
        Some(Command::Search(s)) => s.runs.single("a search").map(|_| ()).map_err(|e| e.message),
        Some(_) => Ok(()),
    }
}

/// The Spec of an `iopulse replay ...` command line (the trace read), as the command
/// plans it, without running it.
pub fn replay_spec_of<I, T>(args: I) -> Result<Spec, String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let argv = ["iopulse", "replay"].into_iter().map(std::ffi::OsString::from).chain(args.into_iter().map(Into::into));
    let matches = crate::commands::command()
        .try_get_matches_from(argv)
        .map_err(|e| crate::base::diagnostics::error::clap_one_line(&e))?;
    let cli = crate::commands::Cli::from_arg_matches(&matches)
        .map_err(|e| crate::base::diagnostics::error::clap_one_line(&e))?;
    match cli.command {
        Some(crate::commands::Command::Replay(args)) => crate::commands::replay::plan(*args).map(|(spec, _)| spec),
        _ => Err("not a replay".into()),
    }
}

/// Checks the text of a job file (TOML) as `iopulse run` plans it, without running it.
pub fn check_job_file(name: &str, text: &str) -> Result<(), String> {
    let file = crate::front::plan::job_file::parse::parse(name, text).map_err(|e| e.message)?;
    crate::front::plan::job_file::plan(&file, &Default::default(), Vec::new()).map(|_| ()).map_err(|e| e.message)
}

// What the integration tests (tests/it/, tests/no_allocation.rs) and the benches
// (benches/) reach below the command line, by the module it lives in. Each item is what a
// test drives directly: an engine through its seam, a worker's loop with a plan of its own,
// the data and verification functions, the parsers.

/// The run itself, as a library call (`run::run`), and its start line. A run touches only
/// what a ledger judged (`judge_ledger`, as every command does before it runs).
pub mod run {
    pub use crate::coordination::run::run;
    pub use crate::coordination::run::start_line::StartLine;

    /// The ledger of one run of `spec` (its targets, its `--verify-state` record) judged, as
    /// a command judges it before running: what `run` may then write.
    pub fn judge_ledger(spec: &crate::workload::spec::Spec) -> Result<(), String> {
        let mut ledger = crate::storage::ledger::Ledger::new();
        ledger.add_run(spec, &spec.targets, spec.data.verify_state.as_deref(), "");
        ledger.judge().map_err(|e| e.to_string())
    }
}

/// The engines, driven through their seam (the conformance tests, the hot-path benches).
pub mod engine {
    pub use crate::io::engine::aio::AioEngine;
    pub use crate::io::engine::mmap::MmapEngine;
    pub use crate::io::engine::null::NullEngine;
    pub use crate::io::engine::sync::SyncEngine;
    pub use crate::io::engine::uring::UringEngine;
    pub use crate::io::engine::{
        BufferAt, Completion, Engine, EngineCaps, EngineError, EngineOptions, EngineSetup, Op, Queued, Request,
    };
}

/// A worker's loop with a plan built by hand (the watchdog test, the hot-path bench).
pub mod worker {
    pub use crate::io::worker::{
        BufferMemory, DataPlan, DurabilityPlan, EnginePlan, ErrorPlan, IoPlan, PacingPlan, RegionPlan, RunControl,
        SizingInputs, WindowPlan, WorkerFile, WorkerPlan, WorkerSizing, run, stop_code,
    };
}

/// Write data and its generators.
pub mod data {
    pub use crate::io::data::{Pattern, RandomPool, Reducibility, Reduction, fill, fill_random};
    pub mod keyed {
        pub use crate::io::data::keyed::{fill_base, key_chunks};
    }
    pub mod unique {
        pub use crate::io::data::unique::{fill_area, key_sectors, period_bytes};
    }
}

/// Verification's stamps and checks.
pub mod verify {
    pub use crate::io::data::verify::{Expect, check, stamp, stamp_reduced};
}

/// The durable record of `--verify-state` (read back, as `iopulse verify` reads it).
pub mod durable_record {
    pub use crate::io::durable_format::{Record, Slot};
    pub use crate::storage::durable_record::read;
}

/// Which block comes next.
pub mod access {
    pub use crate::io::access::{AccessOrder, BlockSource, Distribution, Permutation, SourcePlan};
}

/// Parsers of quantities.
pub mod units {
    pub use crate::base::units::{
        MAX_LIST_ID, parse_count, parse_cpu_list, parse_duration, parse_id_list, parse_real, parse_size,
    };
}

/// Figures and their histograms.
pub mod stats {
    pub use crate::io::stats::{OpStats, decode_histogram, new_latency_histogram};
}

pub use crate::base::diagnostics::warnings::Diagnostics;
pub use crate::base::primitives::clock::Clock;
pub use crate::base::primitives::rng::Rng;
pub use crate::base::sys::buffer::SlotBuffers;
pub use crate::coordination::cluster::Cluster;
pub use crate::io::placement::bind;
pub use crate::io::worker::heartbeat::Waiting;
pub use crate::output::report::csv::header as csv_header;
pub use crate::output::report::units::iops as shown_iops;
