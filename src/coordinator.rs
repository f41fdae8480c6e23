//! The coordinator: plans and prepares the targets, decides each worker's
//! files, region and limits, spawns one thread per worker, releases them
//! together from the start line, waits for them to stop, and turns what they
//! hand back into one `RunResult`.
//!
//! It never does I/O of the run itself and never formats output; the window
//! it reports runs from the release of the start line to the stop.

use crate::access::{BlockSource, SourcePlan, share_boundary};
use crate::clock::Clock;
use crate::coverage::{self, CoverageTracker};
use crate::diag::Diagnostics;
use crate::engine::null::NullEngine;
use crate::engine::sync::SyncEngine;
use crate::engine::{Engine, EngineCaps, Op};
use crate::environment;
use crate::error::{Error, RunError, UsageError, exit_code};
use crate::result::{
    AchievedQueueDepth, CpuInfo, EngineInfo, Histograms, RunResult, SCHEMA_VERSION, StopReason, TargetInfo, ToolInfo,
    WorkerInfo,
};
use crate::rusage;
use crate::spec::{AccessOrder, Distribution, EngineKind, FileDistribution, RunLength, Spec};
use crate::stats::{CpuTimes, OpStats, encode_histogram};
use crate::target::{self, DirectOutcome, PreparedTarget};
use crate::worker::{
    self, IoFailure, IoFailureKind, RunControl, WorkerFile, WorkerPlan, WorkerResult, WorkerStop, stop_code,
};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// A finished run (possibly stopped early) and the exit code it calls for.
pub struct RunOutcome {
    pub result: RunResult,
    pub exit_code: i32,
}

/// The capabilities of the engine a spec names.
pub fn engine_caps(kind: EngineKind) -> EngineCaps {
    match kind {
        EngineKind::Sync => SyncEngine::CAPS,
        EngineKind::Null => NullEngine::CAPS,
    }
}

/// Runs `spec` to the end. `stop` is the stop word signal handlers write to.
pub fn run(spec: &Spec, diag: &Diagnostics, stop: Arc<AtomicUsize>) -> Result<RunOutcome, Error> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let caps = engine_caps(spec.engine);
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
        None => spec.targets.clone(),
    };
    let paths = target_paths(spec, &given)?;

    let plans = target::plan_targets(spec, &paths)?;
    target::check_memory(spec, effective_depth)?;
    let layout = RegionLayout::new(spec, &plans.iter().map(|p| p.blocks).collect::<Vec<_>>())?;
    let (targets, mut created) = target::prepare_targets(spec, plans, diag, &stop)?;

    if caps.completes_inline && spec.queue_depth > 1 {
        diag.note(format!(
            "engine {} completes one I/O at a time per worker: --queue-depth {} runs at depth 1 (use --threads for parallel I/O)",
            spec.engine.name(),
            spec.queue_depth
        ));
    }

    let execution = match spec.engine {
        EngineKind::Sync => execute::<SyncEngine>(spec, &targets, &layout, effective_depth, &stop),
        EngineKind::Null => execute::<NullEngine>(spec, &targets, &layout, effective_depth, &stop),
    }?;
    // The targets of a real run stay; the embedded default's files go with the run.
    if temp.is_none() {
        created.keep();
    }

    let result = assemble(spec, diag, started_at, &targets, temp.is_some(), &layout, effective_depth, execution, &stop);
    let exit_code = match result.stop_reason {
        StopReason::Error => exit_code::RUN_FAILED,
        StopReason::Interrupted => match stop.load(Ordering::Relaxed) {
            code if code == exit_code::TERMINATED as usize => exit_code::TERMINATED,
            _ => exit_code::INTERRUPTED,
        },
        StopReason::Duration | StopReason::Complete => exit_code::SUCCESS,
    };
    Ok(RunOutcome { result, exit_code })
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
    fn new(spec: &Spec, target_blocks: &[u64]) -> Result<Self, UsageError> {
        let total: u64 = target_blocks.iter().sum();
        let targets_per_worker = match spec.file_distribution {
            FileDistribution::PerWorker => target_blocks.len() / spec.threads as usize,
            _ => target_blocks.len(),
        };
        if spec.file_distribution == FileDistribution::Partitioned && total < u64::from(spec.threads) {
            return Err(UsageError::new(format!(
                "--file-distribution partitioned: {total} blocks cannot be split between --threads {}: use fewer threads, a smaller --block-size or a larger --file-size",
                spec.threads
            )));
        }
        Ok(Self {
            target_blocks: target_blocks.to_vec(),
            total_blocks: total,
            distribution: spec.file_distribution,
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

    /// Whether all workers address the same region (their coverage adds block by block).
    fn shared(&self) -> bool {
        self.distribution == FileDistribution::Shared
    }
}

/// What the workers handed back, with the window they ran in.
struct Execution {
    start_ns: u64,
    workers: Vec<WorkerResult>,
}

fn worker_plan(spec: &Spec, layout: &RegionLayout, targets: &[PreparedTarget], w: u32, depth: u32) -> WorkerPlan {
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
    }
}

fn execute<E: Engine>(
    spec: &Spec,
    targets: &[PreparedTarget],
    layout: &RegionLayout,
    depth: u32,
    stop: &Arc<AtomicUsize>,
) -> Result<Execution, Error> {
    let control = RunControl::new(Clock::new(), Arc::clone(stop));
    thread::scope(|scope| {
        let mut handles = Vec::with_capacity(spec.threads as usize);
        let mut spawn_error = None;
        for w in 0..spec.threads {
            let plan = worker_plan(spec, layout, targets, w, depth);
            let control = &control;
            match thread::Builder::new()
                .name(format!("iopulse-w{w}"))
                .spawn_scoped(scope, move || worker::run::<E>(plan, control))
            {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error =
                        Some(format!("cannot start worker thread {w} of {}: {e} (lower --threads)", spec.threads));
                    break;
                }
            }
        }
        let start = control.release(handles.len(), spawn_error.is_some());
        let workers: Vec<WorkerResult> =
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| panic!("a worker thread panicked"))).collect();
        if let Some(message) = spawn_error {
            return Err(RunError::Other(message).into());
        }
        let Some(start_ns) = start else {
            let error = workers
                .iter()
                .find_map(|w| w.engine_error.as_ref().map(|m| (w.index, m.clone())))
                .map(|(worker, message)| RunError::WorkerSetup { worker, message })
                .unwrap_or_else(|| RunError::Other("workers could not start".into()));
            return Err(error.into());
        };
        Ok(Execution { start_ns, workers })
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
) -> RunResult {
    let Execution { start_ns, workers } = execution;
    let end_ns = workers.iter().map(|w| w.end_ns).max().unwrap_or(start_ns);
    let window_ns = end_ns.saturating_sub(start_ns).max(1);

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

    let failure = workers.iter().find_map(|w| {
        w.failure
            .map(|f| describe_failure(&f, targets))
            .or_else(|| w.engine_error.clone().map(|m| format!("worker {}: {m}", w.index)))
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
        workers: workers
            .iter()
            .map(|w| WorkerInfo {
                index: w.index,
                read: w.read.summarize(window_ns),
                write: w.write.summarize(window_ns),
                cpu: w.cpu,
                stop: format!("{:?}", w.stop).to_lowercase(),
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
        warnings: diag.warnings(),
        notes: diag.notes(),
        error: failure,
        merged_from: None,
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

/// "read /data/x at offset 4096: Input/output error (os error 5)".
fn describe_failure(f: &IoFailure, targets: &[PreparedTarget]) -> String {
    let path = targets
        .get(f.target as usize)
        .map_or_else(|| format!("target #{}", f.target), |t| t.plan.path.display().to_string());
    let what = match f.kind {
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
