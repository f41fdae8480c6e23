//! The coordinator: plans and prepares the targets, spawns one thread per
//! worker, releases them together from the start line, waits for them to
//! stop, and turns what they hand back into one `RunResult`.
//!
//! It never does I/O of the run itself and never formats output; the window
//! it reports runs from the release of the start line to the stop.

use crate::access::BlockSource;
use crate::clock::Clock;
use crate::diag::Diagnostics;
use crate::engine::null::NullEngine;
use crate::engine::sync::SyncEngine;
use crate::engine::uring::UringEngine;
use crate::engine::{Engine, EngineCaps, Op};
use crate::environment;
use crate::error::{Error, RunError, exit_code};
use crate::result::{
    Coverage, CpuInfo, EngineInfo, Histograms, RunResult, SCHEMA_VERSION, StopReason, TargetInfo, ToolInfo, WorkerInfo,
};
use crate::rusage;
use crate::spec::{EngineKind, RunLength, Spec};
use crate::stats::{CpuTimes, OpStats, encode_histogram};
use crate::target::{self, DirectOutcome, PreparedTarget};
use crate::worker::{
    self, IoFailure, IoFailureKind, RunControl, WorkerFile, WorkerPlan, WorkerResult, WorkerStop, stop_code,
};
use std::os::fd::AsRawFd;
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
        EngineKind::IoUring => UringEngine::CAPS,
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
    let paths: Vec<PathBuf> = match &temp {
        Some(t) => vec![t.path().to_path_buf()],
        None => spec.targets.clone(),
    };

    let plans = target::plan_targets(spec, &paths)?;
    target::check_memory(spec, effective_depth)?;
    let (targets, mut created) = target::prepare_targets(spec, plans, diag, &stop)?;

    if caps.completes_inline && spec.queue_depth > 1 {
        diag.note(format!(
            "engine {} completes one I/O at a time per worker: --queue-depth {} runs at depth 1 (use --threads for parallel I/O)",
            spec.engine.name(),
            spec.queue_depth
        ));
    }

    let execution = match spec.engine {
        EngineKind::Sync => execute::<SyncEngine>(spec, &targets, effective_depth, &stop),
        EngineKind::Null => execute::<NullEngine>(spec, &targets, effective_depth, &stop),
        EngineKind::IoUring => execute::<UringEngine>(spec, &targets, effective_depth, &stop),
    }?;
    created.keep();

    let result = assemble(spec, diag, started_at, &targets, temp.is_some(), effective_depth, execution, &stop);
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

/// What the workers handed back, with the window they ran in.
struct Execution {
    start_ns: u64,
    workers: Vec<WorkerResult>,
}

fn execute<E: Engine>(
    spec: &Spec,
    targets: &[PreparedTarget],
    depth: u32,
    stop: &Arc<AtomicUsize>,
) -> Result<Execution, Error> {
    let clock = Clock::new();
    let control = RunControl::new(clock, Arc::clone(stop));
    let mut files = Vec::with_capacity(targets.len());
    let mut first_block = 0u64;
    for t in targets {
        files.push(WorkerFile { fd: t.file.as_raw_fd(), first_block });
        first_block += t.plan.blocks;
    }
    let region_blocks = first_block;
    let align = targets.iter().map(|t| t.plan.dio_align_bytes as usize).max().unwrap_or(1).max(4096);
    let duration_ns = match spec.run_length {
        RunLength::Duration { ns } => Some(ns),
        RunLength::UntilCovered => None,
    };

    thread::scope(|scope| {
        let mut handles = Vec::with_capacity(spec.threads as usize);
        let mut spawn_error = None;
        for w in 0..spec.threads {
            let plan = WorkerPlan {
                index: w,
                seed: spec.seed,
                block_size_bytes: spec.block_size_bytes,
                queue_depth: depth,
                read_percent: spec.read_percent,
                source: BlockSource::for_worker(spec.order, spec.run_length, region_blocks, w, spec.threads, spec.seed),
                files: files.clone(),
                buffer_align_bytes: align,
                duration_ns,
                direct: targets.iter().all(|t| t.direct.effective),
                engine_options: spec.engine_options.clone(),
            };
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
            let message = workers
                .iter()
                .find_map(|w| w.engine_error.as_ref().map(|m| (w.index, m.clone())))
                .map(|(worker, message)| RunError::WorkerSetup { worker, message })
                .unwrap_or_else(|| RunError::Other("workers could not start".into()));
            return Err(message.into());
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
    effective_depth: u32,
    execution: Execution,
    stop: &AtomicUsize,
) -> RunResult {
    let Execution { start_ns, workers } = execution;
    let end_ns = workers.iter().map(|w| w.end_ns).max().unwrap_or(start_ns);
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
    for w in &workers {
        read.merge(&w.read);
        write.merge(&w.write);
        worker_cpu.add(&w.cpu);
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

    let coverage = match spec.run_length {
        // Until covered, every block is visited at most once, so distinct blocks = ops.
        RunLength::UntilCovered => {
            let region: u64 = targets.iter().map(|t| t.plan.blocks).sum();
            Some(Coverage {
                blocks_accessed: total.ops,
                blocks_in_region: region,
                fraction: total.ops as f64 / region as f64,
            })
        }
        RunLength::Duration { .. } => None,
    };

    let direct = DirectOutcome {
        requested: spec.direct,
        effective: spec.direct && targets.iter().all(|t| t.direct.effective),
        reason: targets.iter().find_map(|t| t.direct.reason.clone()),
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
        targets: targets.iter().map(|t| target_info(t, removed_after_run)).collect(),
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
            })
            .collect(),
        histograms: Histograms {
            encoding: "hdrhistogram-v2-deflate-base64".into(),
            unit: "ns".into(),
            read: encode_histogram(&read.latency),
            write: encode_histogram(&write.latency),
        },
        warnings: diag.warnings(),
        notes: diag.notes(),
        error: failure,
    }
}

fn target_info(t: &PreparedTarget, removed_after_run: bool) -> TargetInfo {
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
    }
}

/// "read /data/x at offset 4096: Input/output error (os error 5)".
fn describe_failure(f: &IoFailure, targets: &[PreparedTarget]) -> String {
    let path =
        targets.get(f.file as usize).map_or_else(|| format!("file #{}", f.file), |t| t.plan.path.display().to_string());
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
