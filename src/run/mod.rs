//! The run: from a `Spec` to a `RunResult`, in this process. Each file does one step:
//!
//! - `region.rs`: which blocks of which targets each worker addresses;
//! - `limits.rs`: the kernel's limits and the memory plan, checked before anything is touched;
//! - `place.rs`: where each worker runs (CPUs, NUMA node);
//! - `worker_plan.rs`: everything one worker is given before the start;
//! - `execute.rs`: spawn the workers, release them together from the start line, sample
//!   the time series, and wait for them under the `watchdog`;
//! - `start_line.rs`: what lies outside this process (other ranks, `--start-at`);
//! - `assemble/`: what the workers handed back, as one `RunResult`, in sections;
//! - `messages.rs`: the wording of failures (stuck I/O, failed I/O, interrupted set-up).
//!
//! This file holds the sequence itself (`run`). The run never does I/O of its own and never
//! formats output; the window it reports runs from the release of the start line to the
//! stop. The start line is called once everything is planned, and again with every worker
//! set up, right before they are released.

mod assemble;
mod durable_record;
mod execute;
mod limits;
pub mod live;
mod messages;
mod place;
mod region;
pub mod start_line;
mod watchdog;
mod worker_plan;

use crate::diagnostics::error::{Error, RunError, exit_code};
use crate::diagnostics::warnings::Diagnostics;
use crate::result::{RunResult, StopReason};
use crate::spec::Spec;
use crate::targets;
use region::RegionLayout;
use start_line::StartLine;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A finished run (possibly stopped early) and the exit code it calls for.
pub struct RunOutcome {
    pub result: RunResult,
    pub exit_code: i32,
}

/// Runs `spec` to the end. `stop` is the stop word signal handlers write to; `start`
/// is what happens between set-up and the window (other ranks, `--start-at`) and what
/// `{rank}` and `{host}` in target paths stand for.
pub fn run(spec: &Spec, diag: &Diagnostics, stop: Arc<AtomicUsize>, start: &StartLine) -> Result<RunOutcome, Error> {
    if spec.metadata.is_some() {
        check(spec)?;
    }
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let caps = spec.io.engine.caps();

    let (temp, given) = given_targets(spec, start)?;
    // A signal while planning (thousands of jobs plan at once): nothing is touched.
    interrupted_before_set_up(&stop)?;
    let Checked { plans, distribution, layout, effective_depth, memory, placed, record_durability, resolved } =
        checked(spec, &given, diag, spec.output.time_series || crate::stats::live::registered(diag.show_progress()))?;
    // `--io-limit N%`: the spec with the I/O count the targets' sizes make of it.
    let spec = resolved.as_ref().unwrap_or(spec);
    // Each rank of a cluster keeps its own record.
    let record_path = spec.data.verify_state.as_ref().map(|p| start.record_path(p));
    interrupted_before_set_up(&stop)?;
    // Every check is done and nothing is touched yet: in a cluster, every rank says so.
    start.planned()?;
    interrupted_before_set_up(&stop)?;
    // The record is this run's before any target is touched: a second run given the same
    // one is refused here, having touched nothing.
    let record_file = if record_durability.is_some() { durable_record::lock(record_path.as_ref())? } else { None };
    // With an engine that moves no bytes, nothing is created, laid out or opened (target/prepare.rs).
    let (targets, mut created) = targets::prepare_targets(spec, plans, diag, &stop)?;
    if stop.load(Ordering::Relaxed) != 0 {
        return Err(RunError::Other(messages::INTERRUPTED_IN_SET_UP.into()).into());
    }

    set_up_notes(spec, distribution != spec.access.file_distribution, &targets, diag);

    // The block devices under the targets, found before the window (none when nothing is
    // touched): their counters are read at its edges.
    let devices = if caps.touches_storage {
        targets::device_witness::Devices::find(targets.iter().map(|t| &t.file))
    } else {
        targets::device_witness::Devices::none()
    };

    // One monomorphised run per engine (the engine list is engine/'s).
    let mut execution = spec.io.engine.dispatch(execute::Execute {
        spec,
        targets: &targets,
        layout: &layout,
        depth: effective_depth,
        stop: &stop,
        placement: &placed.plan,
        shows_progress: diag.show_progress(),
        label: diag.label().map(str::to_string),
        start_line: start,
        devices: &devices,
        record: record_path.as_ref().zip(record_file.as_ref()).zip(record_durability).map(|((p, f), d)| (p, f, d)),
    })?;
    // The targets of a real run stay; the embedded default's files go with the run.
    if temp.is_none() {
        created.keep();
    }
    // A worker left behind may still be in the kernel: nothing more is asked of its targets.
    let abandoned = !execution.abandoned.is_empty();
    if spec.durability.fsync_on_close && !abandoned {
        if caps.touches_storage {
            execution.fsync = Some(execute::fsync_targets(&targets));
        } else {
            diag.note(messages::nothing_to_sync(spec.io.engine.name()));
        }
    }

    if let Some(warning) = &execution.opened.late_warning {
        diag.warn(warning.clone());
    }
    let (window_start_unix_ns, mut start_at) = (execution.start_unix_ns, execution.opened.start_at.clone());
    if let Some(s) = &mut start_at {
        s.late_ns = window_start_unix_ns.saturating_sub(s.requested_unix_ns);
    }
    let planned = assemble::Planned {
        spec,
        diag,
        started_at,
        targets: &targets,
        removed_after_run: temp.is_some(),
        layout: &layout,
        effective_depth,
        placed: &placed,
        devices: &devices,
    };
    let huge_page_bytes = execution.huge_page_bytes;
    let mut result = assemble::assemble(&planned, execution, &stop);
    result.machine.memory = Some(crate::host::memory::MemoryEstimate {
        peak_resident_bytes: crate::host::rusage::peak_resident_bytes(),
        huge_page_bytes,
        ..memory
    });
    result.window.window_start_unix_ns = window_start_unix_ns;
    result.window.start_at = start_at;
    if abandoned {
        // Their descriptors stay open until the process exits, so that a worker that comes
        // back from the kernel never touches a descriptor number reused for another file.
        for t in targets {
            std::mem::forget(t.file);
        }
    }
    result.outcome.expectations = crate::expect::evaluate(&spec.output.expect, &result);
    let exit_code = exit_code_of(&result, &stop);
    Ok(RunOutcome { result, exit_code })
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

/// What the set-up says before the window: workers given disjoint slices for `--verify`,
/// a depth the engine cannot have, buffered I/O where O_DIRECT was not had.
fn set_up_notes(spec: &Spec, partitioned_for_verify: bool, targets: &[targets::PreparedTarget], diag: &Diagnostics) {
    let caps = spec.io.engine.caps();
    if partitioned_for_verify {
        diag.note(format!(
            "--verify with {} workers on shared targets: each worker owns a disjoint slice of the region (as --file-distribution partitioned), so no block is written by two workers at once",
            spec.shape.threads
        ));
    }
    if caps.completes_inline && spec.shape.queue_depth > 1 {
        diag.note(format!(
            "engine {} completes one I/O at a time per worker: --queue-depth {} runs at depth 1 (use --threads for parallel I/O)",
            spec.io.engine.name(),
            spec.shape.queue_depth
        ));
    }

    if let Some(note) = spec.io.engine.buffered_note()
        && !targets.iter().all(|t| t.direct.effective)
    {
        diag.note(note);
    }
}

/// The exit code a finished run calls for: a failure first, then lost verified data, a
/// signal, I/O errors let through, unmet expectations, and success.
fn exit_code_of(result: &RunResult, stop: &AtomicUsize) -> i32 {
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
pub fn check(spec: &Spec) -> Result<Option<crate::host::memory::MemoryEstimate>, Error> {
    if spec.metadata.is_some() {
        return Err(crate::diagnostics::error::UsageError::new(
            "--files (a tree of files) runs alone, from the command line, a job file or --profile: not in a sweep, a search or beside block-I/O jobs",
        )
        .into());
    }
    check_latency_request(spec)?;
    if spec.is_embedded_default() {
        // A temporary file of the run's own: nothing of the user's to refuse but where it goes.
        targets::temp_dir::choose()?;
        return Ok(None);
    }
    let cluster = crate::cluster::Cluster::alone();
    let start = StartLine::new(&cluster, None);
    let given: Vec<PathBuf> = spec.targets.iter().map(|t| start.substitute(t)).collect();
    Ok(Some(checked(spec, &given, &Diagnostics::silent(), spec.output.time_series)?.memory))
}

/// `--cpu-dma-latency`: whether this process may make the request it will hold for the
/// window (the device is root's).
fn check_latency_request(spec: &Spec) -> Result<(), Error> {
    if let Some(us) = spec.placement.cpu_dma_latency_us {
        crate::cpu_state::latency_request::check_allowed(us).map_err(crate::diagnostics::error::UsageError::new)?;
    }
    Ok(())
}

/// What the planning of a run decided, every check passed.
struct Checked {
    plans: Vec<targets::TargetPlan>,
    distribution: crate::spec::FileDistribution,
    layout: RegionLayout,
    effective_depth: u32,
    memory: crate::host::memory::MemoryEstimate,
    placed: place::Placed,
    /// How the `--verify-state` record follows durability (none without it).
    record_durability: Option<crate::durable_record::format::Durability>,
    /// With `--io-limit N%`: the spec whose `ops_limit` is that share of each worker's
    /// region, the run's from here on.
    resolved: Option<Spec>,
}

/// The one planning sequence of a run on the targets `given`, for `run` and `check`: it
/// looks and never touches.
fn checked(spec: &Spec, given: &[PathBuf], diag: &Diagnostics, interval_snapshots: bool) -> Result<Checked, Error> {
    check_latency_request(spec)?;
    let paths = region::target_paths(spec, given)?;
    let plans = targets::plan_targets(spec, &paths)?;
    let distribution = region::effective_file_distribution(spec);
    let layout = RegionLayout::new(spec, distribution, &plans.iter().map(|p| p.blocks).collect::<Vec<_>>())?;
    let resolved = spec.window.io_limit_percent.map(|percent| with_io_share(spec, &layout, percent));
    let spec = resolved.as_ref().unwrap_or(spec);
    check_zones_fit(spec, &layout)?;
    let effective_depth = effective_depth(spec, &layout);
    limits::check_kernel_limits(spec, effective_depth)?;
    let memory = limits::memory_estimate(spec, &plans, &layout, effective_depth, interval_snapshots);
    crate::host::memory::check(&memory, spec.shape.threads, effective_depth, spec.largest_block_bytes())?;
    let placed = place::place(spec, &paths, diag)?;
    let record_durability = durable_record::durability(spec, &plans)?;
    Ok(Checked { plans, distribution, layout, effective_depth, memory, placed, record_durability, resolved })
}

/// `spec` with `--io-limit N%` made an I/O count: N % of the bytes each worker addresses
/// (the whole target when they share it, its part or its own file otherwise) in I/Os of
/// the block size, or of a `--bssplit` mix's mean size (its I/Os have no one size: the
/// bytes moved match the share on average), summed over the workers; at least one I/O.
fn with_io_share(spec: &Spec, layout: &RegionLayout, percent: u32) -> Spec {
    let unit_bytes = spec.shape.block_size_bytes as f64;
    let io_bytes = spec
        .shape
        .block_sizes
        .as_ref()
        .map_or(unit_bytes, |mix| mix.mean_bytes(spec.access.read_percent, spec.access.trim_percent));
    let ops: u64 = (0..spec.shape.threads)
        .map(|w| {
            let bytes = layout.worker(w).blocks as f64 * unit_bytes * f64::from(percent) / 100.0;
            // Whole I/Os of a block size; a mix's mean rounded to the nearest.
            if spec.shape.block_sizes.is_some() { (bytes / io_bytes).round() as u64 } else { (bytes / io_bytes) as u64 }
        })
        .fold(0u64, u64::saturating_add);
    let mut resolved = spec.clone();
    resolved.window.ops_limit = Some(ops.max(1));
    resolved
}

pub use limits::check_thread_room;

/// Absolute zones (`--distribution zoned-abs`) must end inside each worker's region, whose
/// size is known once the targets are: the I/Os of a zone past the end would all land on
/// the region's last block.
fn check_zones_fit(spec: &Spec, layout: &RegionLayout) -> Result<(), Error> {
    let crate::access::Distribution::Zoned { zones } = &spec.access.distribution else { return Ok(()) };
    let Some(covered) = zones.covered_bytes() else { return Ok(()) };
    let region_bytes = layout.smallest_worker_region().saturating_mul(spec.shape.block_size_bytes);
    if covered > region_bytes {
        return Err(crate::diagnostics::error::UsageError::new(format!(
            "--zones {}: the zones end at byte {covered}, past the end of the region a worker addresses ({region_bytes} bytes): shrink the zones, give a larger target or fewer workers per slice",
            zones.to_text()
        ))
        .into());
    }
    Ok(())
}

/// The depth each worker runs at: 1 for an engine that completes inline, and no deeper
/// than a verifying worker's blocks (it never has two I/Os on one block).
fn effective_depth(spec: &Spec, layout: &RegionLayout) -> u32 {
    let depth = if spec.io.engine.caps().completes_inline { 1 } else { spec.shape.queue_depth };
    match spec.data.verify {
        Some(_) => depth.min(layout.smallest_worker_region().min(u64::from(u32::MAX)) as u32).max(1),
        None => depth,
    }
}
