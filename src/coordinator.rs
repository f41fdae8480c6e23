//! The coordinator: plans and prepares the targets, decides each worker's
//! files, region and limits, spawns one thread per worker, releases them
//! together from the start line, waits for them to stop, and turns what they
//! hand back into one `RunResult`.
//!
//! It never does I/O of the run itself and never formats output; the window
//! it reports runs from the release of the start line to the stop. What lies
//! outside this process (other ranks of a cluster run, `--start-at`) is the
//! `StartLine`'s: the coordinator calls it once everything is planned, and
//! again with every worker set up, right before it releases them.

use crate::access::{BlockSource, SourcePlan, share_boundary};
use crate::clock::Clock;
use crate::coverage::{self, CoverageTracker};
use crate::diag::Diagnostics;
use crate::engine::aio::AioEngine;
use crate::engine::mmap::MmapEngine;
use crate::engine::null::NullEngine;
use crate::engine::sync::SyncEngine;
use crate::engine::uring::UringEngine;
use crate::engine::{Engine, Op};
use crate::environment;
use crate::error::{Error, RunError, UsageError, exit_code};
use crate::live::{self, SamplerConfig, TimeSeriesRow};
use crate::memory::{self, MemoryEstimate};
use crate::placement::{self, NumaZones, PlacementPlan, Topology};
use crate::result::{
    AchievedQueueDepth, CpuInfo, Durability, EngineInfo, Histograms, MismatchInfo, PacingInfo, PlacementInfo, RateInfo,
    RunResult, SCHEMA_VERSION, StopReason, StuckIo, TargetInfo, ThinkInfo, ToolInfo, VerificationInfo, WorkerInfo,
    WorkerPlacementInfo,
};
use crate::rusage;
use crate::signals;
use crate::spec::{AccessOrder, Distribution, EngineKind, FileDistribution, RunLength, Spec};
use crate::start_at;
use crate::start_line::{Opened, StartLine};
use crate::stats::{CpuTimes, OpStats, encode_histogram};
use crate::target::{self, DirectOutcome, PreparedTarget};
use crate::verify::{Failure, Mismatch, VerifyCounts};
use crate::watchdog::{self, AbandonCause, Abandoned};
use crate::worker::{
    self, DataPlan, IoFailure, IoFailureKind, RunControl, VerifyPlan, WorkerFile, WorkerPlan, WorkerResult, WorkerStop,
    stop_code,
};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

/// A finished run (possibly stopped early) and the exit code it calls for.
pub struct RunOutcome {
    pub result: RunResult,
    pub exit_code: i32,
}

/// What a run stopped by a signal before its window opened says (files it created are
/// removed as it returns).
const INTERRUPTED_IN_SET_UP: &str = "interrupted during set-up, before the window opened: no I/O was measured; files this run created have been removed";

/// Runs `spec` to the end. `stop` is the stop word signal handlers write to; `start`
/// is what happens between set-up and the window (other ranks, `--start-at`) and what
/// `{rank}` and `{host}` in target paths stand for.
pub fn run(spec: &Spec, diag: &Diagnostics, stop: Arc<AtomicUsize>, start: &StartLine) -> Result<RunOutcome, Error> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let caps = spec.engine.caps();
    let effective_depth = if caps.completes_inline { 1 } else { spec.queue_depth };

    // The embedded default: a temporary file, removed when `temp` is dropped.
    let temp = if spec.is_embedded_default() {
        let file = tempfile::Builder::new().prefix("iopulse-default-").suffix(".dat").tempfile().map_err(|e| {
            RunError::Other(format!("create a temporary file in {}: {e}", std::env::temp_dir().display()))
        })?;
        Some(file)
    } else {
        None
    };
    let given: Vec<PathBuf> = match &temp {
        Some(t) => vec![t.path().to_path_buf()],
        None => spec.targets.iter().map(|t| start.substitute(t)).collect(),
    };
    let paths = target_paths(spec, &given)?;

    let plans = target::plan_targets(spec, &paths)?;
    let distribution = effective_file_distribution(spec);
    let layout = RegionLayout::new(spec, distribution, &plans.iter().map(|p| p.blocks).collect::<Vec<_>>())?;
    // A verifying worker never has two I/Os on one block: its depth cannot exceed its blocks.
    let effective_depth = match spec.verify {
        Some(_) => effective_depth.min(layout.smallest_worker_region().min(u64::from(u32::MAX)) as u32).max(1),
        None => effective_depth,
    };
    check_kernel_limits(spec, effective_depth)?;
    let memory = memory_estimate(spec, &plans, &layout, effective_depth, spec.time_series || diag.show_progress());
    memory::check(&memory, spec.threads, effective_depth, spec.block_size_bytes)?;
    let placed = place(spec, &paths, diag)?;
    // Every check is done and nothing is touched yet: in a cluster, every rank says so.
    start.planned()?;
    let (targets, mut created) = target::prepare_targets(spec, plans, diag, &stop)?;
    if stop.load(Ordering::Relaxed) != 0 {
        return Err(RunError::Other(INTERRUPTED_IN_SET_UP.into()).into());
    }

    if distribution != spec.file_distribution {
        diag.note(format!(
            "--verify with {} workers on shared targets: each worker owns a disjoint slice of the region (as --file-distribution partitioned), so no block is written by two workers at once",
            spec.threads
        ));
    }
    if caps.completes_inline && spec.queue_depth > 1 {
        diag.note(format!(
            "engine {} completes one I/O at a time per worker: --queue-depth {} runs at depth 1 (use --threads for parallel I/O)",
            spec.engine.name(),
            spec.queue_depth
        ));
    }

    if let Some(note) = spec.engine.buffered_note()
        && !targets.iter().all(|t| t.direct.effective)
    {
        diag.note(note);
    }

    // One monomorphized run per engine, all with the same arguments.
    macro_rules! execute_with {
        ($engine:ty) => {
            execute::<$engine>(
                spec,
                &targets,
                &layout,
                effective_depth,
                &stop,
                &placed.plan,
                diag.show_progress(),
                start,
            )
        };
    }
    let mut execution = match spec.engine {
        EngineKind::Sync => execute_with!(SyncEngine),
        EngineKind::Null => execute_with!(NullEngine),
        EngineKind::Libaio => execute_with!(AioEngine),
        EngineKind::Mmap => execute_with!(MmapEngine),
        EngineKind::IoUring => execute_with!(UringEngine),
    }?;
    // The targets of a real run stay; the embedded default's files go with the run.
    if temp.is_none() {
        created.keep();
    }
    // A worker left behind may still be in the kernel: nothing more is asked of its targets.
    let abandoned = !execution.abandoned.is_empty();
    if spec.fsync_on_close && !abandoned {
        execution.fsync = Some(fsync_targets(&targets));
    }

    if let Some(warning) = &execution.opened.late_warning {
        diag.warn(warning.clone());
    }
    let (window_start_unix_ns, mut start_at) = (execution.start_unix_ns, execution.opened.start_at.clone());
    if let Some(s) = &mut start_at {
        s.late_ns = window_start_unix_ns.saturating_sub(s.requested_unix_ns);
    }
    let mut result =
        assemble(spec, diag, started_at, &targets, temp.is_some(), &layout, effective_depth, execution, &stop, &placed);
    result.memory = Some(memory);
    result.window_start_unix_ns = window_start_unix_ns;
    result.start_at = start_at;
    if abandoned {
        // Their descriptors stay open until the process exits, so that a worker that comes
        // back from the kernel never touches a descriptor number reused for another file.
        for t in targets {
            std::mem::forget(t.file);
        }
    }
    let verify_failed = result.verification.as_ref().is_some_and(|v| v.failures > 0);
    let exit_code = match result.stop_reason {
        StopReason::Error => exit_code::RUN_FAILED,
        _ if verify_failed => exit_code::VERIFY_FAILED,
        StopReason::Interrupted => match stop.load(Ordering::Relaxed) {
            code if code == exit_code::TERMINATED as usize => exit_code::TERMINATED,
            code if code == exit_code::HUNG_UP as usize => exit_code::HUNG_UP,
            _ => exit_code::INTERRUPTED,
        },
        // --continue-on-error: the run went on, but it did not succeed.
        _ if result.io_errors.total > 0 => exit_code::RUN_FAILED,
        StopReason::Duration | StopReason::Complete => exit_code::SUCCESS,
    };
    Ok(RunOutcome { result, exit_code })
}

/// Limits the kernel sets on what the spec asks for, checked before anything is touched.
fn check_kernel_limits(spec: &Spec, effective_depth: u32) -> Result<(), UsageError> {
    if spec.engine == EngineKind::Libaio {
        let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
        if let (Some(max), Some(used)) = (read("/proc/sys/fs/aio-max-nr"), read("/proc/sys/fs/aio-nr")) {
            let free = max.saturating_sub(used);
            let needed = u64::from(spec.threads) * u64::from(effective_depth);
            if needed > free {
                let per_worker = free / u64::from(spec.threads);
                let hint = if per_worker > 0 {
                    format!("at most --queue-depth {per_worker} with --threads {}", spec.threads)
                } else {
                    "no libaio worker can start now".to_string()
                };
                return Err(UsageError::new(format!(
                    "--queue-depth {effective_depth} with --threads {} needs {needed} native AIO requests, but the kernel allows {free} more (fs.aio-max-nr = {max}, {used} in use): {hint}, or raise the limit (sysctl -w fs.aio-max-nr={})",
                    spec.threads,
                    (used + needed).next_power_of_two()
                )));
            }
        }
    }
    Ok(())
}

/// The memory the run will allocate (`memory`), from the planned targets and regions.
fn memory_estimate(
    spec: &Spec,
    plans: &[target::TargetPlan],
    layout: &RegionLayout,
    effective_depth: u32,
    interval_snapshots: bool,
) -> MemoryEstimate {
    let tracks = spec.verify.is_some() && tracks_sequences(spec, layout);
    let workers: Vec<memory::WorkerShape> = (0..spec.threads)
        .map(|w| {
            let region = layout.worker(w);
            memory::WorkerShape {
                region_blocks: region.blocks,
                files: region.files.len() as u64,
                bitmap: CoverageTracker::bitmap_fits(region.blocks, spec.threads),
                tracks_sequences: tracks,
            }
        })
        .collect();
    let shape = memory::RunShape {
        queue_depth: effective_depth,
        block_size_bytes: spec.block_size_bytes,
        buffer_align_bytes: plans.iter().map(|p| p.dio_align_bytes).max().unwrap_or(1).max(4096),
        targets: plans.len() as u64,
        verify_max_reports: spec.verify.map(|v| v.max_reports),
        interval_snapshots,
    };
    memory::estimate(&shape, &workers)
}

/// How targets are shared: as asked, except that a verifying run with several
/// workers on shared targets gives each worker its own slice (one owner per block).
fn effective_file_distribution(spec: &Spec) -> FileDistribution {
    match spec.file_distribution {
        FileDistribution::Shared if spec.verify.is_some() && spec.threads > 1 => FileDistribution::Partitioned,
        other => other,
    }
}

/// The paths the run uses: as given, or for `per-worker` NAME.0 .. NAME.(threads-1)
/// for each NAME, worker by worker.
fn target_paths(spec: &Spec, given: &[PathBuf]) -> Result<Vec<PathBuf>, UsageError> {
    if spec.file_distribution != FileDistribution::PerWorker {
        return Ok(given.to_vec());
    }
    for p in given {
        if std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()) {
            return Err(UsageError::new(format!(
                "--file-distribution per-worker creates files next to TARGET, but {} is a block device: use shared or partitioned",
                p.display()
            )));
        }
    }
    let mut paths = Vec::with_capacity(given.len() * spec.threads as usize);
    for w in 0..spec.threads {
        for p in given {
            let mut name = p.as_os_str().to_os_string();
            name.push(format!(".{w}"));
            paths.push(PathBuf::from(name));
        }
    }
    Ok(paths)
}

/// Which blocks each worker addresses. Targets are laid end to end into one
/// region of `total_blocks` (for per-worker, each worker's own targets).
struct RegionLayout {
    target_blocks: Vec<u64>,
    total_blocks: u64,
    distribution: FileDistribution,
    threads: u32,
    /// Targets per worker (per-worker: the targets given; otherwise all of them).
    targets_per_worker: usize,
}

/// One worker's part of the layout.
struct WorkerRegion {
    /// (target index, blocks) of the worker's files, in order.
    files: Vec<(u32, u64)>,
    /// Where the worker's region starts among its files' blocks, and its length.
    first_block: u64,
    blocks: u64,
    share_index: u32,
    share_count: u32,
}

impl RegionLayout {
    fn new(spec: &Spec, distribution: FileDistribution, target_blocks: &[u64]) -> Result<Self, UsageError> {
        let total = target_blocks.iter().try_fold(0u64, |sum, &b| sum.checked_add(b)).ok_or_else(|| {
            UsageError::new("TARGET: the targets together hold more than 2^64 blocks: give fewer or smaller targets")
        })?;
        let targets_per_worker = match distribution {
            FileDistribution::PerWorker => target_blocks.len() / spec.threads as usize,
            _ => target_blocks.len(),
        };
        if distribution == FileDistribution::Partitioned && total < u64::from(spec.threads) {
            return Err(UsageError::new(format!(
                "--file-distribution partitioned: {total} blocks cannot be split between --threads {}: use fewer threads, a smaller --block-size or a larger --file-size",
                spec.threads
            )));
        }
        Ok(Self {
            target_blocks: target_blocks.to_vec(),
            total_blocks: total,
            distribution,
            threads: spec.threads,
            targets_per_worker,
        })
    }

    fn worker(&self, w: u32) -> WorkerRegion {
        let all = || (0..self.target_blocks.len()).map(|t| (t as u32, self.target_blocks[t])).collect::<Vec<_>>();
        match self.distribution {
            FileDistribution::Shared => WorkerRegion {
                files: all(),
                first_block: 0,
                blocks: self.total_blocks,
                share_index: w,
                share_count: self.threads,
            },
            FileDistribution::Partitioned => {
                let start = share_boundary(self.total_blocks, w, self.threads);
                let end = share_boundary(self.total_blocks, w + 1, self.threads);
                WorkerRegion { files: all(), first_block: start, blocks: end - start, share_index: 0, share_count: 1 }
            }
            FileDistribution::PerWorker => {
                let first = w as usize * self.targets_per_worker;
                let files: Vec<(u32, u64)> =
                    (first..first + self.targets_per_worker).map(|t| (t as u32, self.target_blocks[t])).collect();
                let blocks = files.iter().map(|f| f.1).sum();
                WorkerRegion { files, first_block: 0, blocks, share_index: 0, share_count: 1 }
            }
        }
    }

    /// The fewest blocks any worker's region has.
    fn smallest_worker_region(&self) -> u64 {
        (0..self.threads).map(|w| self.worker(w).blocks).min().unwrap_or(0)
    }

    /// How blocks are kept from two writers, for the result.
    fn ownership(&self) -> &'static str {
        match (self.distribution, self.threads) {
            (_, 1) => "one worker",
            (FileDistribution::Shared, _) => "shared",
            (FileDistribution::Partitioned, _) => "partitioned: each worker owns a disjoint slice",
            (FileDistribution::PerWorker, _) => "per-worker files",
        }
    }

    /// Whether all workers address the same region (their coverage adds block by block).
    fn shared(&self) -> bool {
        self.distribution == FileDistribution::Shared
    }
}

/// The machine's topology (when it could be read, with its reader) and each worker's placement.
struct Placed {
    topology: Option<(Topology, &'static str)>,
    plan: PlacementPlan,
}

/// Plans where each worker runs (`placement::plan`). A CPU or node that does not
/// exist, is offline or is not allowed is a usage error, found before any target
/// is touched.
fn place(spec: &Spec, paths: &[PathBuf], diag: &Diagnostics) -> Result<Placed, Error> {
    let topology = match placement::load_topology() {
        Ok(t) => t,
        Err(_) if spec.placement.is_default() => {
            let workers = vec![placement::WorkerPlacement::default(); spec.threads as usize];
            return Ok(Placed { topology: None, plan: PlacementPlan { workers, ..PlacementPlan::default() } });
        }
        Err(e) => {
            let message =
                format!("cannot read the CPU topology, which --cpu-cores/--cpu-policy/--numa-zones need: {e}");
            return Err(RunError::Other(message).into());
        }
    };
    let (machine, backend) = &topology;
    let devices: Vec<(String, Option<u32>)> = match spec.placement.numa_zones {
        Some(NumaZones::Auto) => paths.iter().map(|p| placement::device_of_path(machine, backend, p)).collect(),
        _ => Vec::new(),
    };
    let plan = placement::plan(machine, &spec.placement, spec.threads, &devices)?;
    for note in &plan.notes {
        diag.note(note.clone());
    }
    Ok(Placed { topology: Some(topology), plan })
}

/// What the workers handed back, with the window they ran in.
struct Execution {
    start_ns: u64,
    /// The window's start on the wall clock, ns since the Unix epoch.
    start_unix_ns: u64,
    /// What happened at the start line (`--start-at`).
    opened: Opened,
    workers: Vec<WorkerResult>,
    /// Workers left behind (stuck I/O, or not stopped after a signal): not joined.
    abandoned: Vec<Abandoned>,
    /// `--fsync-on-close`: how long fsync of every target took, or what failed.
    fsync: Option<Result<u64, String>>,
    /// One row per interval, when collected.
    time_series: Vec<TimeSeriesRow>,
}

/// `--fsync-on-close`: fsync every target once the workers are done, timed as a whole.
fn fsync_targets(targets: &[PreparedTarget]) -> Result<u64, String> {
    let t0 = std::time::Instant::now();
    for t in targets {
        t.file.sync_all().map_err(|e| format!("fsync {} (--fsync-on-close): {e}", t.plan.path.display()))?;
    }
    Ok(t0.elapsed().as_nanos() as u64)
}

fn worker_plan(
    spec: &Spec,
    layout: &RegionLayout,
    targets: &[PreparedTarget],
    w: u32,
    depth: u32,
    placement: &PlacementPlan,
    control: &RunControl,
) -> WorkerPlan {
    let region = layout.worker(w);
    let mut files = Vec::with_capacity(region.files.len());
    let mut first_block = 0;
    for &(t, blocks) in &region.files {
        files.push(WorkerFile { fd: targets[t as usize].file.as_raw_fd(), first_block, target: t });
        first_block += blocks;
    }
    let until_covered = spec.run_length == RunLength::UntilCovered;
    let skewed = spec.order == AccessOrder::Random && spec.distribution != Distribution::Uniform;
    let source = BlockSource::new(&SourcePlan {
        order: spec.order,
        distribution: spec.distribution,
        scramble: spec.scramble,
        once: until_covered && !skewed,
        blocks: region.blocks,
        share_index: region.share_index,
        share_count: region.share_count,
        overlap: spec.sequential_overlap,
        seed: spec.seed,
        worker: w,
    });
    // Limits: a share of --ops; skewed runs until covered issue as many I/Os as their share has blocks.
    let share_of = |n: u64| share_boundary(n, w + 1, spec.threads) - share_boundary(n, w, spec.threads);
    let mut ops_limit = spec.ops_limit.map(share_of);
    if until_covered && skewed {
        let blocks = if layout.shared() { share_of(region.blocks) } else { region.blocks };
        ops_limit = Some(ops_limit.map_or(blocks, |l| l.min(blocks)));
    }
    let keep_bitmap = CoverageTracker::bitmap_fits(region.blocks, spec.threads);
    WorkerPlan {
        index: w,
        seed: spec.seed,
        block_size_bytes: spec.block_size_bytes,
        queue_depth: depth,
        read_percent: spec.read_percent,
        source,
        region_first_block: region.first_block,
        ops_limit,
        coverage: Some(CoverageTracker::new(region.blocks, spec.seed ^ 0xc0de_7a6e, keep_bitmap)),
        files,
        buffer_align_bytes: targets.iter().map(|t| t.plan.dio_align_bytes as usize).max().unwrap_or(1).max(4096),
        duration_ns: match spec.run_length {
            RunLength::Duration { ns } => Some(ns),
            RunLength::UntilCovered | RunLength::UntilLimit => None,
        },
        direct: targets.iter().all(|t| t.direct.effective),
        engine_options: spec.engine_options.clone(),
        placement: placement.workers.get(w as usize).cloned().unwrap_or_default(),
        think: spec.think,
        rate: spec.rate,
        interval: None,
        data: DataPlan {
            pattern: spec.write_pattern,
            seed: spec.data_seed,
            verify: spec.verify.map(|v| VerifyPlan {
                pattern: v.pattern,
                max_reports: v.max_reports,
                track_sequences: tracks_sequences(spec, layout),
                run_nonce: run_nonce(spec),
            }),
        },
        error_limit: spec.error_limit().unwrap_or(u64::MAX),
        errors_seen: Arc::clone(&control.errors_seen),
    }
}

/// Most memory the lost-write tables may take, all workers together (4 bytes per block).
const MAX_SEQUENCE_TABLE_BYTES: u64 = 512 << 20;

/// Whether workers keep the last sequence written to each block (to catch lost writes).
fn tracks_sequences(spec: &Spec, layout: &RegionLayout) -> bool {
    let blocks: u64 = (0..layout.threads).map(|w| layout.worker(w).blocks).sum();
    spec.writes() && blocks.saturating_mul(4) <= MAX_SEQUENCE_TABLE_BYTES
}

/// A number that tells this run's writes from other runs' (the same in every worker).
fn run_nonce(spec: &Spec) -> u16 {
    let mut state = spec.seed ^ u64::from(std::process::id()).rotate_left(17);
    (crate::rng::splitmix64(&mut state) as u16).max(1)
}

/// Spawns the workers, releases them together and waits for them under the watchdog
/// (`watchdog::supervise`). Worker threads are not scoped: one stuck in the kernel is
/// left behind rather than joined, and owns everything it uses (its plan, its buffers,
/// a share of the run control).
#[allow(clippy::too_many_arguments)]
fn execute<E: Engine + 'static>(
    spec: &Spec,
    targets: &[PreparedTarget],
    layout: &RegionLayout,
    depth: u32,
    stop: &Arc<AtomicUsize>,
    placement: &PlacementPlan,
    live_line: bool,
    start_line: &StartLine,
) -> Result<Execution, Error> {
    // With --io-timeout 0 nothing watches: workers get no heartbeat and publish nothing.
    let watched = if spec.io_timeout_ns > 0 { spec.threads as usize } else { 0 };
    let control = Arc::new(RunControl::new(Clock::new(), Arc::clone(stop)).with_heartbeats(watched));
    // Interval histograms only when a time series or the live line is wanted.
    let (sampler, mut recorders) = if spec.time_series || live_line {
        let (sampler, recorders) = live::channels(spec.threads);
        (Some(sampler), recorders.into_iter().map(Some).collect::<Vec<_>>())
    } else {
        (None, (0..spec.threads).map(|_| None).collect())
    };
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut handles = Vec::with_capacity(spec.threads as usize);
    let mut spawn_error = None;
    // A signal during set-up (thousands of threads, large buffers) calls the run off:
    // no more workers are started and the window never opens.
    let mut interrupted = false;
    for w in 0..spec.threads {
        if stop.load(Ordering::Relaxed) != 0 {
            interrupted = true;
            break;
        }
        let mut plan = worker_plan(spec, layout, targets, w, depth, placement, &control);
        plan.interval = recorders[w as usize].take();
        let control = Arc::clone(&control);
        let done = done_tx.clone();
        let spawned = thread::Builder::new().name(format!("iopulse-w{w}")).spawn(move || {
            // SIGINT/SIGTERM are taken by the coordinator's thread, never in a worker's I/O.
            signals::block_in_this_thread();
            let result = worker::run::<E>(plan, &control);
            let _ = done.send(w);
            result
        });
        match spawned {
            Ok(h) => handles.push(Some(h)),
            Err(e) => {
                spawn_error =
                    Some(format!("cannot start worker thread {w} of {}: {e} (lower --threads)", spec.threads));
                break;
            }
        }
    }
    drop(done_tx);
    drop(recorders);
    // Every worker set up (buffers allocated, engines ready): only then meet the other ranks
    // and wait for --start-at, so the windows open as close together as they can.
    let ready = spawn_error.is_none() && !interrupted && control.wait_for_arrivals(handles.len());
    let opened = if ready && stop.load(Ordering::Relaxed) == 0 { Some(start_line.open(stop)) } else { None };
    // A signal while workers set up or while waiting for --start-at: the window never opens.
    interrupted |= stop.load(Ordering::Relaxed) != 0;
    let (opened, open_error) = match opened {
        Some(Ok(o)) => (o, None),
        Some(Err(e)) => (Opened::default(), Some(e)),
        None => (Opened::default(), None),
    };
    // The wall clock next to the run's clock, just before the release, to place the window.
    let (wall_ns, clock_ns) = (start_at::now_unix_ns(), control.clock.now_ns());
    let start = control.release(handles.len(), spawn_error.is_some() || open_error.is_some() || interrupted);
    let start_unix_ns = start.map_or(0, |s| wall_ns + s.saturating_sub(clock_ns));
    let sampling_done = Arc::new(AtomicBool::new(false));
    let sampler = match (start, sampler) {
        (Some(start_ns), Some(sampler)) => {
            let config = SamplerConfig {
                clock: control.clock,
                start_ns,
                interval_ns: spec.interval_ns,
                block_size_bytes: spec.block_size_bytes,
                duration_ns: match spec.run_length {
                    RunLength::Duration { ns } => Some(ns),
                    _ => None,
                },
                live: live_line,
            };
            let (control, done) = (Arc::clone(&control), Arc::clone(&sampling_done));
            thread::Builder::new()
                .name("iopulse-sampler".into())
                .spawn(move || sampler.run(&config, &control.epoch, &done))
                .ok()
        }
        _ => None,
    };
    let supervised = watchdog::supervise(handles, done_rx, &control, spec.io_timeout_ns);
    sampling_done.store(true, Ordering::Release);
    // A worker left behind (stuck in the kernel) keeps its recorder: do not wait for it.
    let time_series = match sampler {
        Some(h) if supervised.abandoned.is_empty() => h.join().unwrap_or_default(),
        _ => Vec::new(),
    };
    if let Some(message) = spawn_error {
        return Err(RunError::Other(message).into());
    }
    if interrupted && start.is_none() {
        return Err(RunError::Other(INTERRUPTED_IN_SET_UP.into()).into());
    }
    if let Some(e) = open_error {
        return Err(e);
    }
    let Some(start_ns) = start else {
        let error = supervised
            .finished
            .iter()
            .find_map(|w| w.engine_error.as_ref().map(|m| (w.index, m.clone())))
            .map(|(worker, message)| RunError::WorkerSetup { worker, message })
            .unwrap_or_else(|| RunError::Other("workers could not start".into()));
        return Err(error.into());
    };
    Ok(Execution {
        start_ns,
        start_unix_ns,
        opened,
        workers: supervised.finished,
        abandoned: supervised.abandoned,
        fsync: None,
        time_series,
    })
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    spec: &Spec,
    diag: &Diagnostics,
    started_at: String,
    targets: &[PreparedTarget],
    removed_after_run: bool,
    layout: &RegionLayout,
    effective_depth: u32,
    execution: Execution,
    stop: &AtomicUsize,
    placed: &Placed,
) -> RunResult {
    let Execution { start_ns, workers, abandoned, fsync, mut time_series, .. } = execution;
    let end_ns =
        workers.iter().map(|w| w.end_ns).max().or_else(|| abandoned.iter().map(|a| a.at_ns).max()).unwrap_or(start_ns);
    let window_ns = end_ns.saturating_sub(start_ns).max(1);

    // Engine notes (fallbacks taken at set-up): each distinct one said once.
    let mut said: Vec<&String> = Vec::new();
    for note in workers.iter().flat_map(|w| &w.engine_notes) {
        if !said.contains(&note) {
            diag.note(note.clone());
            said.push(note);
        }
    }

    let mut read = OpStats::new();
    let mut write = OpStats::new();
    let mut worker_cpu = CpuTimes::default();
    let mut per_target: Vec<(OpStats, OpStats)> =
        (0..targets.len()).map(|_| (OpStats::new(), OpStats::new())).collect();
    for w in &workers {
        read.merge(&w.read);
        write.merge(&w.write);
        worker_cpu.add(&w.cpu);
        for t in &w.per_target {
            let slot = &mut per_target[t.target as usize];
            slot.0.merge(&t.read);
            slot.1.merge(&t.write);
        }
    }
    let mut total = read.clone();
    total.merge(&write);

    let io_errors = crate::errors::summarize(workers.iter().map(|w| &w.errors), spec.error_limit(), |t| {
        targets.get(t as usize).map_or_else(|| format!("target #{t}"), |t| t.plan.path.display().to_string())
    });
    let stuck_io: Vec<StuckIo> = abandoned.iter().map(|a| stuck_info(a, targets)).collect();
    for (a, s) in abandoned.iter().zip(&stuck_io) {
        if a.cause == AbandonCause::Signal {
            diag.warn(format!(
                "worker {} had not stopped {} after the signal ({}): its figures are not in the report, and iopulse exits without waiting for it",
                a.index,
                crate::units::display::seconds_ns(watchdog::STOP_GRACE_NS),
                describe_stuck(s)
            ));
        }
    }
    let stuck_failure = abandoned.iter().zip(&stuck_io).find(|(a, _)| a.cause != AbandonCause::Signal).map(|(a, s)| {
        let what = match a.cause {
            AbandonCause::IoTimeout => format!(
                "I/O timeout: worker {}: {} (--io-timeout {})",
                a.index,
                describe_stuck(s),
                crate::units::display::seconds_ns(spec.io_timeout_ns)
            ),
            _ => format!(
                "worker {} had not stopped {} after the run was stopped ({})",
                a.index,
                crate::units::display::seconds_ns(spec.io_timeout_ns),
                describe_stuck(s)
            ),
        };
        format!("{what}; its figures are not in the report, and iopulse exits without waiting for it")
    });
    let limit = spec.error_limit();
    let failure = workers
        .iter()
        .find_map(|w| {
            w.failure
                .map(|f| {
                    let first = describe_failure(&f, targets, write.bytes);
                    match limit {
                        Some(n) if n > 1 => {
                            format!("--max-errors {n} reached ({} failed); the last: {first}", ios(io_errors.total))
                        }
                        _ => first,
                    }
                })
                .or_else(|| w.engine_error.clone().map(|m| format!("worker {}: {m}", w.index)))
        })
        .or(stuck_failure)
        .or_else(|| fsync.as_ref().and_then(|r| r.as_ref().err().cloned()));
    let msync_ns = workers.iter().filter_map(|w| w.sync_ns).max();
    let fsync_ns = fsync.as_ref().and_then(|r| r.as_ref().ok().copied());
    let durability = (msync_ns.is_some() || fsync_ns.is_some()).then(|| Durability {
        msync_ns,
        fsync_ns,
        sync_ns: msync_ns.unwrap_or(0) + fsync_ns.unwrap_or(0),
    });
    let signalled = matches!(stop.load(Ordering::Relaxed), s if s != stop_code::RUNNING && s != stop_code::FAILED);
    let stop_reason = if failure.is_some() {
        StopReason::Error
    } else if signalled {
        StopReason::Interrupted
    } else if workers.iter().all(|w| w.stop == WorkerStop::Done) {
        StopReason::Complete
    } else {
        StopReason::Duration
    };
    // --continue-on-error: the run went on, and says at the end that I/Os failed.
    let failure = failure.or_else(|| {
        (io_errors.total > 0).then(|| {
            let kinds: Vec<String> =
                io_errors.kinds.iter().map(|k| format!("{} {} x{}", k.op, k.errno, k.count)).collect();
            format!("{} failed (--continue-on-error): {}", ios(io_errors.total), kinds.join(", "))
        })
    });

    let trackers: Vec<CoverageTracker> = workers.iter().filter_map(|w| w.coverage.clone()).collect();
    let coverage = coverage::summarize(&trackers, layout.shared(), layout.total_blocks);

    let direct = DirectOutcome {
        requested: spec.direct,
        effective: spec.direct && targets.iter().all(|t| t.direct.effective),
        reason: targets.iter().find_map(|t| t.direct.reason.clone()),
        memory_backed: targets.iter().any(|t| t.direct.memory_backed),
    };
    let ops = total.ops;
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "iopulse".into(), version: env!("CARGO_PKG_VERSION").into() },
        started_at,
        window_start_unix_ns: 0,
        start_at: None,
        spec: spec.clone(),
        environment: environment::collect(),
        engine: EngineInfo {
            name: spec.engine.name().into(),
            requested_queue_depth: spec.queue_depth,
            effective_queue_depth: effective_depth,
            setup: workers.first().map(|w| w.engine_setup.iter().cloned().collect()).unwrap_or_default(),
        },
        targets: targets
            .iter()
            .zip(&per_target)
            .map(|(t, (r, w))| target_info(t, removed_after_run, r.summarize(window_ns), w.summarize(window_ns)))
            .collect(),
        direct,
        window_ns,
        stop_reason,
        interrupted: stop_reason == StopReason::Interrupted,
        read: read.summarize(window_ns),
        write: write.summarize(window_ns),
        total: total.summarize(window_ns),
        cpu: CpuInfo {
            workers: worker_cpu,
            process: rusage::process_cpu(),
            per_io_ns: if ops > 0 { worker_cpu.total_ns() as f64 / ops as f64 } else { 0.0 },
            cores_busy: worker_cpu.total_ns() as f64 / window_ns as f64,
        },
        coverage,
        durability,
        workers: workers
            .iter()
            .map(|w| WorkerInfo {
                index: w.index,
                read: w.read.summarize(window_ns),
                write: w.write.summarize(window_ns),
                cpu: w.cpu,
                stop: format!("{:?}", w.stop).to_lowercase(),
                placement: {
                    let planned = placed.plan.workers.get(w.index as usize).cloned().unwrap_or_default();
                    WorkerPlacementInfo {
                        cpus: planned.cpus,
                        node: planned.node,
                        memory_bound: planned.bind_memory,
                        cpu_seen: w.cpu_seen,
                        buffer_node_seen: w.buffer_node_seen,
                    }
                },
                achieved_queue_depth: w.read.in_flight(window_ns) + w.write.in_flight(window_ns),
            })
            .collect(),
        achieved_queue_depth: AchievedQueueDepth {
            total: total.in_flight(window_ns),
            mean_per_worker: total.in_flight(window_ns) / workers.len().max(1) as f64,
        },
        histograms: Histograms {
            encoding: "hdrhistogram-v2-deflate-base64".into(),
            unit: "ns".into(),
            read: encode_histogram(&read.latency),
            write: encode_histogram(&write.latency),
        },
        verification: spec.verify.map(|v| verification_info(spec, v, &workers, targets, layout, &worker_cpu)),
        pacing: pacing_info(spec, &workers, window_ns, total.ops),
        warnings: diag.warnings(),
        notes: diag.notes(),
        error: failure,
        placement: placement_info(placed),
        merged_from: None,
        window_skew: None,
        cluster: None,
        time_series: {
            // The last row ends with the window, not when the sampler stopped.
            if let Some(last) = time_series.last_mut() {
                let start = last.t_ns.saturating_sub(last.interval_ns);
                last.t_ns = last.t_ns.min(window_ns).max(start);
                last.interval_ns = (last.t_ns - start).max(1);
            }
            time_series
        },
        io_errors,
        stuck_io,
        memory: None,
    }
}

fn stuck_info(a: &Abandoned, targets: &[PreparedTarget]) -> StuckIo {
    let io = a.waiting.and_then(|w| w.io);
    StuckIo {
        worker: a.index,
        cause: a.cause.name().to_string(),
        op: io.map(|io| io.op.name().to_string()),
        target: io.map(|io| {
            targets
                .get(io.target as usize)
                .map_or_else(|| format!("target #{}", io.target), |t| t.plan.path.display().to_string())
        }),
        offset_bytes: io.map(|io| io.offset_bytes),
        in_flight_ns: a.waiting.map_or(0, |w| w.age_ns(a.at_ns)),
        in_flight_ios: a.waiting.map_or(0, |w| w.in_flight),
    }
}

/// "1 I/O", "2 I/Os".
fn ios(n: u64) -> String {
    if n == 1 { "1 I/O".to_string() } else { format!("{n} I/Os") }
}

/// "read /dev/sdb at offset 4096 in flight for 31.0 s (32 I/Os in flight)".
fn describe_stuck(s: &StuckIo) -> String {
    let age = crate::units::display::seconds_ns(s.in_flight_ns);
    let others = match s.in_flight_ios {
        0 | 1 => String::new(),
        n => format!(" ({n} I/Os in flight)"),
    };
    match (&s.op, &s.target, s.offset_bytes) {
        (Some(op), Some(target), Some(offset)) => {
            format!("{op} {target} at offset {offset} did not complete in {age}{others}")
        }
        _ if s.in_flight_ns > 0 => format!("waiting for the kernel for {age}{others}"),
        _ => "not waiting for I/O".to_string(),
    }
}

fn placement_info(placed: &Placed) -> PlacementInfo {
    let (backend, topology, allowed_cpus) = match &placed.topology {
        Some((t, backend)) => (backend.to_string(), t.summary(), t.allowed.clone()),
        None => (String::new(), Default::default(), Vec::new()),
    };
    PlacementInfo {
        backend,
        topology,
        allowed_cpus,
        pinned: placed.plan.workers.iter().any(|w| w.cpus.is_some()),
        policy: placed.plan.policy.map(|p| p.name().to_string()),
    }
}

/// Think time and rate figures, when the run was paced.
fn pacing_info(spec: &Spec, workers: &[WorkerResult], window_ns: u64, ops: u64) -> Option<PacingInfo> {
    if spec.think.is_none() && spec.rate.is_none() {
        return None;
    }
    let sum = |f: fn(&WorkerResult) -> u64| workers.iter().map(f).sum::<u64>();
    let worker_time_ns = window_ns as f64 * workers.len().max(1) as f64;
    let window_s = window_ns as f64 / 1e9;
    Some(PacingInfo {
        think: spec.think.map(|t| ThinkInfo {
            mode: t.mode,
            every: t.every,
            fixed_ns: (t.adaptive_percent.is_none()).then_some(t.time_ns),
            adaptive_percent: t.adaptive_percent,
            thinks: sum(|w| w.pacing.thinks),
            requested_ns: sum(|w| w.pacing.think_requested_ns),
            spent_ns: sum(|w| w.pacing.think_spent_ns),
            share_of_run: sum(|w| w.pacing.think_spent_ns) as f64 / worker_time_ns,
        }),
        rate: spec.rate.map(|r| {
            let target_iops = r.iops_per_worker * workers.len() as f64;
            let achieved_iops = ops as f64 / window_s;
            let dropped = sum(|w| w.pacing.dropped_slots);
            RateInfo {
                given_as: r.given_as,
                total: r.total,
                target_iops_per_worker: r.iops_per_worker,
                target_iops,
                achieved_iops,
                dropped_slots: dropped,
                reached: dropped == 0 && achieved_iops >= target_iops * 0.99,
                latency_from:
                    "due time: each I/O's latency counts from when it was scheduled (no coordinated omission)".into(),
            }
        }),
    })
}

fn verification_info(
    spec: &Spec,
    v: crate::spec::VerifySpec,
    workers: &[WorkerResult],
    targets: &[PreparedTarget],
    layout: &RegionLayout,
    worker_cpu: &CpuTimes,
) -> VerificationInfo {
    let mut counts = VerifyCounts::default();
    for w in workers {
        counts.merge(&w.verify_counts);
    }
    let mut mismatches: Vec<&Mismatch> = workers.iter().flat_map(|w| &w.mismatches).collect();
    mismatches.sort_by_key(|m| (m.target, m.offset_bytes));
    let hex = |bytes: &[u8; 16]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    let failures = counts.failures();
    let writes: u64 = workers.iter().map(|w| w.write.ops).sum();
    let stamp_ns = workers.iter().map(|w| w.verify_cost.stamp_ns).max().unwrap_or(0);
    let check_ns = workers.iter().map(|w| w.verify_cost.check_ns).max().unwrap_or(0);
    let verify_ns = stamp_ns as f64 * writes as f64 + check_ns as f64 * counts.checked as f64;
    VerificationInfo {
        pattern: v.pattern,
        seed: spec.data_seed,
        operations: counts.checked,
        failures,
        success_percent: if counts.checked > 0 {
            100.0 * (counts.checked - failures.min(counts.checked)) as f64 / counts.checked as f64
        } else {
            100.0
        },
        failures_by_kind: Failure::NAMES.iter().zip(counts.failures_by_kind).map(|(n, c)| (n.to_string(), c)).collect(),
        mismatches: mismatches
            .into_iter()
            .take(v.max_reports as usize)
            .map(|m| MismatchInfo {
                target: targets.get(m.target as usize).map_or_else(String::new, |t| t.plan.path.display().to_string()),
                offset_bytes: m.offset_bytes,
                failure: m.failure,
                window_at: m.window_at,
                expected_hex: hex(&m.expected),
                found_hex: hex(&m.found),
            })
            .collect(),
        lost_write_detection: tracks_sequences(spec, layout),
        ownership: layout.ownership().to_string(),
        stamp_ns_per_write: stamp_ns,
        check_ns_per_read: check_ns,
        estimated_slowdown_percent: if worker_cpu.total_ns() > 0 {
            (100.0 * verify_ns / worker_cpu.total_ns() as f64).min(100.0)
        } else {
            0.0
        },
    }
}

fn target_info(
    t: &PreparedTarget,
    removed_after_run: bool,
    read: crate::stats::OpSummary,
    write: crate::stats::OpSummary,
) -> TargetInfo {
    TargetInfo {
        path: t.plan.path.display().to_string(),
        kind: t.plan.kind,
        size_bytes: t.plan.size_bytes,
        blocks: t.plan.blocks,
        filesystem: t.mount.as_ref().map(|m| m.fs_type.clone()),
        device: t.mount.as_ref().map(|m| m.source.clone()),
        mount_point: t.mount.as_ref().map(|m| m.mount_point.clone()),
        created: t.created,
        laid_out_bytes: t.laid_out_bytes,
        direct: t.direct.clone(),
        removed_after_run,
        read,
        write,
    }
}

/// "read /data/x at offset 4096: Input/output error (os error 5)". A full filesystem
/// also says how much the run had written.
fn describe_failure(f: &IoFailure, targets: &[PreparedTarget], written_bytes: u64) -> String {
    let path = targets
        .get(f.target as usize)
        .map_or_else(|| format!("target #{}", f.target), |t| t.plan.path.display().to_string());
    let what = match f.kind {
        IoFailureKind::Errno(errno) if errno == libc::ENOSPC || errno == libc::EDQUOT => format!(
            "{}: the filesystem is full ({written_bytes} bytes written by this run before it)",
            std::io::Error::from_raw_os_error(errno)
        ),
        IoFailureKind::Errno(errno) => std::io::Error::from_raw_os_error(errno).to_string(),
        IoFailureKind::Short { done_bytes, len_bytes } => {
            let verb = if f.op == Op::Read { "read" } else { "wrote" };
            format!(
                "{verb} only {done_bytes} of {len_bytes} bytes (end of file: was the file truncated during the run?)"
            )
        }
    };
    format!("{} {path} at offset {}: {what}", f.op.name(), f.offset_bytes)
}
