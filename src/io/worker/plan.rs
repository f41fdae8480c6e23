//! A worker's plan: everything the coordinator decides for it before the start (its files,
//! sizes, what it allocates, depth, data, verification, flushes, pacing). Plain data:
//! nothing here does I/O.

use super::ReplayPlan;
use super::WorkerSizing;
use crate::io::access::BlockSource;
use crate::io::data::{Pattern, Reducibility};
use crate::io::engine::{EngineOptions, Op};
use crate::io::placement::WorkerPlacement;
use crate::io::schedule::think::{RateSpec, ThinkSpec};
use crate::io::stats::coverage::CoverageTracker;
use crate::io::stats::interval::IntervalRecorder;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// One of the worker's files: its descriptor and where its blocks sit in the region.
#[derive(Clone, Copy, Debug)]
pub struct WorkerFile {
    pub fd: RawFd,
    /// Number of the file's first block among the worker's files.
    pub first_block: u64,
    /// Blocks of the file in the worker's numbering (an I/O of several blocks stays inside).
    pub blocks: u64,
    /// Which target of the run it is (index into the run's targets).
    pub target: u32,
}

/// How a worker's I/O buffers are allocated: aligned to the targets' O_DIRECT memory
/// alignment, on huge pages or base pages (`sys::buffer::SlotBuffers::with_area`).
#[derive(Clone, Copy, Debug)]
pub struct BufferMemory {
    pub align_bytes: usize,
    pub huge_pages: bool,
}

/// Everything a worker needs, decided by the coordinator before the start, in sections.
pub struct WorkerPlan {
    pub index: u32,
    pub seed: u64,
    /// The size, depth and kind of its I/Os.
    pub io: IoPlan,
    /// What it allocates: slots, buffers, the data's area (the memory check's figures).
    pub sizing: WorkerSizing,
    /// The blocks it addresses, in which files, and how many I/Os at most.
    pub region: RegionPlan,
    /// How its files were opened, the engine's options and its buffers' memory.
    pub engine: EnginePlan,
    /// When its window ends.
    pub window: WindowPlan,
    /// CPUs and NUMA node: applied on the worker's thread before its buffers are allocated.
    pub placement: WorkerPlacement,
    /// What writes put in blocks, and whether reads are verified.
    pub data: DataPlan,
    /// Think time and rate limit; `None` for both runs the loop unpaced.
    pub pacing: PacingPlan,
    /// Interval histograms for the time series and the live line, when wanted.
    pub interval: Option<IntervalRecorder>,
    /// When failed I/Os stop it.
    pub errors: ErrorPlan,
    /// Its flushes and the record they keep.
    pub durability: DurabilityPlan,
    /// `iopulse replay`: the I/Os come from this schedule (on file 0), not from `source`.
    pub replay: Option<ReplayPlan>,
    /// `--write-iolog`: record each I/O issued, in a table of this many (allocated at set-up).
    pub iolog_capacity: Option<usize>,
}

/// The size, depth and kind of a worker's I/Os.
pub struct IoPlan {
    /// Bytes per I/O; with a block-size mix, the alignment (the unit blocks are counted in).
    pub block_size_bytes: u64,
    /// `--bssplit`, `--block-align`: the sizes of the I/Os (`None`: all `block_size_bytes`).
    pub block_sizes: Option<crate::io::access::block_sizes::BlockSizeMix>,
    /// Slots (I/Os in flight at most); 1 for engines that complete inline.
    pub queue_depth: u32,
    pub read_percent: u8,
    /// `--trim-percent`: the share of I/Os that are trims (the rest split by `read_percent`).
    pub trim_percent: u8,
}

/// The blocks a worker addresses.
pub struct RegionPlan {
    /// Block numbers relative to the worker's region.
    pub source: BlockSource,
    /// Where the region starts among the worker's files' blocks.
    pub region_first_block: u64,
    /// At most this many I/Os (`None`: no limit).
    pub ops_limit: Option<u64>,
    /// Tracks which blocks of the region were touched.
    pub coverage: Option<CoverageTracker>,
    pub files: Vec<WorkerFile>,
}

/// How a worker's files were opened, its engine's options, and its buffers' memory.
pub struct EnginePlan {
    /// The files were opened with O_DIRECT.
    pub direct: bool,
    pub options: EngineOptions,
    /// The I/O buffers' alignment, and whether they go on huge pages (`--buffer-pages`).
    pub buffers: BufferMemory,
}

/// When a worker's window ends.
pub struct WindowPlan {
    /// Measurement ends at start + `ramp_ns` + this; `None` runs until the source is exhausted.
    pub duration_ns: Option<u64>,
    /// `--ramp`: I/O from the start for this long is not counted (0: none). The worker
    /// resets its figures once, at its first batch at or after the ramp's end.
    pub ramp_ns: u64,
}

/// Think time and rate limit; `None` for both runs the loop unpaced.
pub struct PacingPlan {
    pub think: Option<ThinkSpec>,
    pub rate: Option<RateSpec>,
}

/// When failed I/Os stop a worker.
pub struct ErrorPlan {
    /// Failed I/Os (run-wide, counted in `errors_seen`) after which the worker stops:
    /// 1 by default, `--max-errors N`, `u64::MAX` with `--continue-on-error` alone.
    pub error_limit: u64,
    /// The run-wide count of failed I/Os (`RunControl::errors_seen`).
    pub errors_seen: Arc<AtomicU64>,
}

/// A worker's flushes and the record they keep.
pub struct DurabilityPlan {
    /// `--fsync-every N`, `--fdatasync-every N`: a flush after every N writes issued; or a
    /// replay's flushes, its schedule's entries (`every_writes` then `u64::MAX`: never).
    pub flush: Option<FlushPlan>,
    /// `--verify-state`: this worker's writer of the durable record, updated at each
    /// completed flush (with `data.verify` and `flush` only).
    pub durable_record: Option<crate::io::durable_format::RecordWriter>,
    /// `--end-fsync`: fsync each file at the end of the window, counted in it.
    pub end_fsync: bool,
}

/// A flush (`op`: `Op::Fsync` or `Op::Fdatasync`) after every `every_writes` writes the
/// worker issues, of the file the last of them went to. The flush is a barrier: it is
/// issued once the writes before it completed, and nothing is issued until it completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushPlan {
    pub every_writes: u64,
    pub op: Op,
}

/// What written blocks contain and how reads are checked.
#[derive(Clone, Copy, Debug)]
pub struct DataPlan {
    pub pattern: Pattern,
    /// `--dedupe-ratio`, `--compress-ratio` (random data; with `--verify` too).
    pub reducibility: Reducibility,
    pub seed: u64,
    pub verify: Option<VerifyPlan>,
}

#[derive(Clone, Copy, Debug)]
pub struct VerifyPlan {
    pub pattern: Pattern,
    pub max_reports: u32,
    /// Keep the sequence last written to each block of the region (4 bytes per
    /// block), to catch lost writes.
    pub track_sequences: bool,
    /// Distinguishes this run's writes from other runs' (high bits of sequences).
    pub run_nonce: u16,
}
