//! Everything one worker is given before the start (`WorkerPlan`): its files and region,
//! its block source, limits, data and verification plan, pacing and placement.

use super::region::RegionLayout;
use crate::io::access::{BlockSource, SourcePlan, share_boundary};
use crate::io::placement::PlacementPlan;
use crate::io::stats::coverage::CoverageTracker;
use crate::io::worker::{
    DataPlan, DurabilityPlan, EnginePlan, ErrorPlan, IoPlan, PacingPlan, RegionPlan, RunControl, VerifyPlan,
    WindowPlan, WorkerFile, WorkerPlan, WorkerSizing,
};
use crate::storage::targets::PreparedTarget;
use crate::workload::spec::{AccessOrder, Distribution, RunLength, Spec};
use std::os::fd::AsRawFd;
use std::sync::Arc;

pub(super) fn worker_plan(
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
        files.push(WorkerFile { fd: targets[t as usize].file.as_raw_fd(), first_block, blocks, target: t });
        first_block += blocks;
    }
    let until_covered = spec.window.run_length == RunLength::UntilCovered;
    let skewed = spec.access.order == AccessOrder::Random && spec.access.distribution != Distribution::Uniform;
    let source = BlockSource::new(&SourcePlan {
        order: spec.access.order,
        distribution: spec.access.distribution,
        scramble: spec.access.scramble,
        once: until_covered && !skewed,
        blocks: region.blocks,
        share_index: region.share_index,
        share_count: region.share_count,
        overlap: spec.access.sequential_overlap,
        seed: spec.seed,
        worker: w,
        random_percent: spec.access.random_percent.unwrap_or(100),
        block_bytes: spec.shape.block_size_bytes,
    });
    // Limits: a share of --ops; skewed runs until covered issue as many I/Os as their share has blocks.
    let share_of = |n: u64| share_boundary(n, w + 1, spec.shape.threads) - share_boundary(n, w, spec.shape.threads);
    let mut ops_limit = spec.window.ops_limit.map(share_of);
    if until_covered && skewed {
        let blocks = if layout.shared() { share_of(region.blocks) } else { region.blocks };
        ops_limit = Some(ops_limit.map_or(blocks, |l| l.min(blocks)));
    }
    let keep_bitmap = CoverageTracker::bitmap_fits(region.blocks, spec.shape.threads);
    let replay = spec.replay.as_ref().map(|r| replay_plan(r, spec, &files, targets));
    let iolog_capacity = spec.output.record_iolog.then(|| iolog_records(spec, ops_limit, region.files.len()));
    WorkerPlan {
        index: w,
        seed: spec.seed,
        io: IoPlan {
            block_size_bytes: spec.shape.block_size_bytes,
            block_sizes: spec.shape.block_sizes.clone(),
            queue_depth: depth,
            read_percent: spec.access.read_percent,
            trim_percent: spec.access.trim_percent,
        },
        sizing: worker_sizing(spec, depth),
        region: RegionPlan {
            source,
            region_first_block: region.first_block,
            ops_limit,
            coverage: Some(CoverageTracker::new(region.blocks, spec.seed ^ 0xc0de_7a6e, keep_bitmap)),
            files,
        },
        engine: EnginePlan {
            direct: targets.iter().all(|t| t.direct.effective),
            options: spec.io.engine_options.clone(),
            buffers: crate::io::worker::BufferMemory {
                align_bytes: targets.iter().map(|t| t.plan.dio_align_bytes as usize).max().unwrap_or(1).max(4096),
                huge_pages: spec.io.buffer_pages.huge(),
            },
        },
        window: WindowPlan {
            duration_ns: match spec.window.run_length {
                RunLength::Duration { ns } => Some(ns),
                RunLength::UntilCovered | RunLength::UntilLimit => None,
            },
            ramp_ns: spec.window.ramp_ns,
        },
        placement: placement.workers.get(w as usize).cloned().unwrap_or_default(),
        pacing: PacingPlan { think: spec.pacing.think, rate: spec.pacing.rate },
        interval: None,
        data: DataPlan {
            pattern: spec.data.write_pattern,
            reducibility: spec.data.reducibility,
            seed: spec.data.data_seed,
            verify: spec.data.verify.map(|v| VerifyPlan {
                pattern: v.pattern,
                max_reports: v.max_reports,
                track_sequences: tracks_sequences(spec, layout),
                run_nonce: run_nonce(spec),
            }),
        },
        errors: ErrorPlan {
            error_limit: spec.error_limit().unwrap_or(u64::MAX),
            errors_seen: Arc::clone(&control.errors_seen),
        },
        durability: DurabilityPlan {
            end_fsync: spec.durability.end_fsync,
            flush: flush_plan(spec),
            durable_record: None,
        },
        replay,
        iolog_capacity,
    }
}

/// The flushes a worker issues through its barrier: `--fsync-every N` and the like, or a
/// replayed trace's, which come from its schedule, never after a count of writes (the op
/// is each flush's own).
fn flush_plan(spec: &Spec) -> Option<crate::io::worker::FlushPlan> {
    spec.durability
        .flush
        .map(|f| crate::io::worker::FlushPlan { every_writes: f.every_writes, op: f.kind.op() })
        .or_else(|| {
            spec.replay
                .as_ref()
                .filter(|r| r.flushes > 0)
                .map(|_| crate::io::worker::FlushPlan { every_writes: u64::MAX, op: crate::io::engine::Op::Fsync })
        })
}

/// What each worker of the run allocates (every worker the same): decided here once, for
/// the memory check (`limits::memory_estimate`) and for the workers' plans alike.
pub(super) fn worker_sizing(spec: &Spec, depth: u32) -> WorkerSizing {
    WorkerSizing::of(&crate::io::worker::SizingInputs {
        completes_inline: spec.io.engine.caps().completes_inline,
        queue_depth: depth,
        read_percent: spec.access.read_percent,
        verifying: spec.data.verify.is_some(),
        pattern: spec.data.write_pattern,
        flushes: flush_plan(spec).is_some(),
        largest_io_bytes: spec.largest_block_bytes(),
        mixed_sizes: spec.shape.block_sizes.is_some() || spec.replay.is_some(),
    })
}

/// `--write-iolog`: the records one worker's table holds (allocated before the start
/// line): its share of `--ops` (`ops_limit`), and a flush after each at most, up to
/// `MAX_RECORDS_PER_WORKER`; with `--end-fsync`, one more per file of the worker's
/// (`files`). The memory check counts the same (`limits`).
pub(super) fn iolog_records(spec: &Spec, ops_limit: Option<u64>, files: usize) -> usize {
    let most = crate::io::worker::iolog::MAX_RECORDS_PER_WORKER;
    // Flushes are I/Os of the log too: room for one after each write at most (a replay's
    // are entries of its trace, counted in its --ops already).
    let per_op = if spec.durability.flush.is_some() { 2 } else { 1 };
    let ios = ops_limit.map_or(most, |n| usize::try_from(n.saturating_mul(per_op)).unwrap_or(most).min(most));
    ios + if spec.durability.end_fsync { files } else { 0 }
}

/// A replay's schedule on the worker's file (the replay's one target): each I/O's due
/// time scaled by `--speed`, its offset put on the file by `--remap` (`trace::remap`).
fn replay_plan(
    r: &crate::workload::spec::ReplaySpec,
    spec: &Spec,
    files: &[WorkerFile],
    targets: &[PreparedTarget],
) -> crate::io::worker::ReplayPlan {
    use crate::io::engine::Op;
    use crate::io::trace::TraceOp;
    let target_bytes = files.first().map_or(0, |f| f.blocks * spec.shape.block_size_bytes);
    let direct = targets.iter().all(|t| t.direct.effective);
    let align_bytes =
        if direct { targets.iter().map(|t| t.plan.dio_align_bytes).max().unwrap_or(512).max(1) } else { 1 };
    // Collected straight into the shared table: no second copy of a large schedule.
    let ios: std::sync::Arc<[crate::io::worker::ReplayIo]> = r
        .ios
        .iter()
        .map(|io| {
            let due_ns = r.speed.map_or(0, |speed| (io.time_ns as f64 / speed) as u64);
            let op = match io.op {
                TraceOp::Read => Op::Read,
                TraceOp::Write => Op::Write,
                TraceOp::Trim => Op::Trim,
                TraceOp::Sync => Op::Fsync,
                TraceOp::Datasync => Op::Fdatasync,
            };
            if op.is_flush() {
                // A flush has no range: the worker's flush barrier issues it on file 0.
                return crate::io::worker::ReplayIo { due_ns, offset_bytes: 0, len_bytes: 0, op };
            }
            // A trim longer than the target (a discard of a whole device) discards all of it.
            let len_bytes = if op == Op::Trim {
                io.len_bytes.min(u32::try_from(target_bytes).unwrap_or(u32::MAX))
            } else {
                io.len_bytes
            };
            let offset_bytes = crate::io::trace::remap::place(
                r.remap,
                io.offset_bytes,
                u64::from(len_bytes),
                r.extent_bytes,
                target_bytes,
                align_bytes,
            );
            crate::io::worker::ReplayIo { due_ns, offset_bytes, len_bytes, op }
        })
        .collect();
    crate::io::worker::ReplayPlan { ios, timed: r.speed.is_some() }
}

/// Most memory the lost-write tables may take, all workers together (4 bytes per block).
const MAX_SEQUENCE_TABLE_BYTES: u64 = 512 << 20;

/// Whether workers keep the last sequence written to each block (to catch lost writes).
pub(super) fn tracks_sequences(spec: &Spec, layout: &RegionLayout) -> bool {
    let blocks: u64 = (0..layout.threads).map(|w| layout.worker(w).blocks).sum();
    spec.writes() && blocks.saturating_mul(4) <= MAX_SEQUENCE_TABLE_BYTES
}

/// A number that tells this run's writes from other runs' (the same in every worker).
pub(super) fn run_nonce(spec: &Spec) -> u16 {
    let mut state = spec.seed ^ u64::from(std::process::id()).rotate_left(17);
    (crate::base::primitives::rng::splitmix64(&mut state) as u16).max(1)
}
