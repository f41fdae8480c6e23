//! The run: from a `Spec` to a `RunResult`, in this process, in typed stages, each a type
//! with one job and a file of its own:
//!
//! - `checked.rs`, `Checked`: planned and judged on the targets given, nothing touched;
//! - `prepared.rs`, `Prepared`: the targets created, laid out and opened, the record locked;
//! - `ran.rs`, `Ran`: the workers released together and stopped, and `finish`: the result
//!   and the exit code it calls for.
//!
//! What the stages use, a file each:
//!
//! - `region.rs`: which blocks of which targets each worker addresses;
//! - `limits.rs`: the kernel's limits and the memory plan, checked before anything is touched;
//! - `place.rs`: where each worker runs (CPUs, NUMA node);
//! - `worker_plan.rs`: everything one worker is given before the start, and what it
//!   allocates (`worker_sizing`, the memory plan's figures too);
//! - `execute.rs`: spawn the workers, release them together from the start line, sample
//!   the time series, and wait for them under the `watchdog`;
//! - `start_line.rs`: what lies outside this process (other ranks, `--start-at`);
//! - `assemble/`: what the workers handed back, as one `RunResult`, in sections;
//! - `messages.rs`: the wording of failures (stuck I/O, failed I/O, interrupted set-up).
//!
//! This file holds the sequence itself (`run`) and the check alone (`check`). The run never
//! does I/O of its own and never formats output; the window it reports runs from the
//! release of the start line to the stop. The start line is called once everything is
//! planned, and again with every worker set up, right before they are released.

mod assemble;
mod checked;
mod durable_record;
mod execute;
mod limits;
pub mod live;
mod messages;
mod place;
mod prepared;
mod ran;
mod region;
pub mod start_line;
mod watchdog;
mod worker_plan;

use crate::base::diagnostics::error::{Error, RunError, exit_code};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::figures::result::{RunResult, StopReason};
use crate::storage::targets;
use crate::workload::spec::Spec;
use checked::Checked;
use prepared::Prepared;
use ran::Ran;
use start_line::StartLine;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A finished run (possibly stopped early) and the exit code it calls for.
pub struct RunOutcome {
    pub result: RunResult,
    pub exit_code: i32,
}

/// Runs `spec` to the end, stage by stage: the targets given, `Checked` (planned, nothing
/// touched), `Prepared` (targets created and opened), `Ran` (the workers released and
/// stopped), and its finish (the result and exit code). `stop` is the stop word signal
/// handlers write to; `start` is what happens between set-up and the window (other ranks,
/// `--start-at`) and what `{rank}` and `{host}` in target paths stand for.
pub fn run(spec: &Spec, diag: &Diagnostics, stop: Arc<AtomicUsize>, start: &StartLine) -> Result<RunOutcome, Error> {
    if spec.metadata.is_some() {
        check(spec)?;
    }
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let (temp, given) = given_targets(spec, start)?;
    // A signal while planning (thousands of jobs plan at once): nothing is touched.
    interrupted_before_set_up(&stop)?;
    let interval_snapshots = spec.output.time_series || crate::io::stats::live::registered(diag.show_progress());
    let checked = Checked::plan(spec, &given, diag, interval_snapshots)?;
    // Each rank of a cluster keeps its own record.
    let record_path = checked.spec.data.verify_state.as_ref().map(|p| start.record_path(p));
    interrupted_before_set_up(&stop)?;
    // Every check is done and nothing is touched yet: in a cluster, every rank says so.
    start.planned()?;
    interrupted_before_set_up(&stop)?;
    let prepared = Prepared::new(checked, temp, record_path, diag, &stop)?;
    let ran = Ran::new(prepared, diag, &stop, start)?;
    Ok(ran.finish(diag, &stop, started_at))
}

/// The targets the run is given: the embedded default's temporary file (removed when the
/// returned file is dropped; an engine that moves no bytes is given a name in the
/// temporary directory that is never created), or the spec's, `{rank}` and `{host}`
/// substituted.
fn given_targets(spec: &Spec, start: &StartLine) -> Result<(Option<tempfile::NamedTempFile>, Vec<PathBuf>), Error> {
    let caps = spec.io.engine.caps();
    let temp_dir = if spec.is_embedded_default() { targets::temp_dir::choose()? } else { PathBuf::new() };
    let temp = if spec.is_embedded_default() && caps.touches_storage {
        let file = tempfile::Builder::new()
            .prefix("iopulse-default-")
            .suffix(".dat")
            .tempfile_in(&temp_dir)
            .map_err(|e| RunError::Other(format!("create a temporary file in {}: {e}", temp_dir.display())))?;
        Some(file)
    } else {
        None
    };
    let given: Vec<PathBuf> = match &temp {
        Some(t) => vec![t.path().to_path_buf()],
        None if spec.is_embedded_default() => {
            vec![temp_dir.join(format!("iopulse-default-{}.dat", std::process::id()))]
        }
        None => spec.targets.iter().map(|t| start.substitute(t)).collect(),
    };
    Ok((temp, given))
}

/// The exit code a finished run calls for: a failure first, then lost verified data, a
/// signal, I/O errors let through, unmet expectations, and success.
pub(super) fn exit_code_of(result: &RunResult, stop: &AtomicUsize) -> i32 {
    let expectation_failed = result.outcome.expectations.iter().any(|e| !e.passed);
    let verify_failed = result.data.verification.as_ref().is_some_and(|v| v.failures > 0);
    match result.window.stop_reason {
        StopReason::Error => exit_code::RUN_FAILED,
        _ if verify_failed => exit_code::VERIFY_FAILED,
        StopReason::Interrupted => match stop.load(Ordering::Relaxed) {
            code if code == exit_code::TERMINATED as usize => exit_code::TERMINATED,
            code if code == exit_code::HUNG_UP as usize => exit_code::HUNG_UP,
            _ => exit_code::INTERRUPTED,
        },
        // --continue-on-error: the run went on, but it did not succeed.
        _ if result.outcome.io_errors.total > 0 => exit_code::RUN_FAILED,
        // After every other failure: a run that failed says so first.
        _ if expectation_failed => exit_code::EXPECTATION_FAILED,
        StopReason::Duration | StopReason::Complete | StopReason::SteadyState => exit_code::SUCCESS,
    }
}

/// The run is called off when a signal came before anything was touched.
fn interrupted_before_set_up(stop: &AtomicUsize) -> Result<(), Error> {
    if stop.load(Ordering::Relaxed) != 0 {
        return Err(RunError::Other(messages::INTERRUPTED_IN_SET_UP.into()).into());
    }
    Ok(())
}

/// The checks `run` makes before it touches anything, without running: targets (kinds,
/// sizes, refusals), regions, kernel and memory limits, placement. The plan (`plan::check`)
/// calls it for every job of every phase, and every point of a sweep, before the first run,
/// so that what would be refused at run seven is refused before run one. Creates, opens for
/// writing and writes nothing. Returns the run's memory estimate, for a phase of several
/// jobs to be checked together (none for the embedded default, whose temporary file is the
/// run's own).
pub fn check(spec: &Spec) -> Result<Option<crate::io::host::memory::MemoryEstimate>, Error> {
    if spec.metadata.is_some() {
        return Err(crate::base::diagnostics::error::UsageError::new(
            "--files (a tree of files) runs alone, from the command line, a job file or --profile: not in a sweep, a search or beside block-I/O jobs",
        )
        .into());
    }
    checked::check_latency_request(spec)?;
    if spec.is_embedded_default() {
        // A temporary file of the run's own: nothing of the user's to refuse but where it goes.
        targets::temp_dir::choose()?;
        return Ok(None);
    }
    let cluster = crate::coordination::cluster::Cluster::alone();
    let start = StartLine::new(&cluster, None);
    let given: Vec<PathBuf> = spec.targets.iter().map(|t| start.substitute(t)).collect();
    Ok(Some(Checked::plan(spec, &given, &Diagnostics::silent(), spec.output.time_series)?.memory))
}

pub use limits::check_thread_room;
