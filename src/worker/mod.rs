//! One worker thread: its plan (decided by the coordinator before the start), its
//! state, and the result it hands back once, at the end.
//!
//! The loop itself is `io_loop` (one loop for every engine), with pacing as a policy
//! (`pacing`), verification (`verifier`), the choice of reads and writes (`op_mix`),
//! where `unique` writes take their bytes (`area`) and the heartbeat the watchdog reads
//! (`watch`) beside it; `control` is what all workers of a run share.
//!
//! Rules (docs/architecture.md): per I/O no allocation, no lock, no atomic
//! read-modify-write, no formatting, at most two clock reads. Everything is allocated
//! before the start line; the result is handed back once, at the end.

mod area;
mod control;
pub mod heartbeat;
mod io_loop;
pub mod iolog;
mod op_mix;
mod pacing;
mod replay;
mod size_mix;
mod verifier;
mod watch;

pub use area::AreaShape;
pub use control::{RunControl, StartWord, stop_code};
pub use replay::{ReplayIo, ReplayPlan};
pub use size_mix::SizeStats;

use crate::access::BlockSource;
use crate::access::block_sizes::SizeFor;
use crate::data::verify::{self, Mismatch, VerifyCounts};
use crate::data::{self, Pattern, RandomPool, Reducibility};
use crate::engine::{Completion, Engine, EngineOptions, EngineSetup, Op, Request};
use crate::host::rusage;
use crate::placement::{self, WorkerPlacement};
use crate::primitives::buffer::{BufferAt, SlotBuffers};
use crate::schedule::think::{RateSpec, ThinkSpec};
use crate::stats::coverage::CoverageTracker;
use crate::stats::depth_counts::DepthTally;
use crate::stats::interval::{IntervalRecorder, Snapshot};
use crate::stats::io_errors::ErrorCounts;
use crate::stats::{CpuTimes, OpStats};
use area::{DataArea, Placement};
use op_mix::OpMix;
use pacing::{Paced, Unpaced};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use verifier::{Verifier, measure_verify_cost};
use watch::WatchState;

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

/// Everything a worker needs, decided by the coordinator before the start.
pub struct WorkerPlan {
    pub index: u32,
    pub seed: u64,
    /// Bytes per I/O; with a block-size mix, the alignment (the unit blocks are counted in).
    pub block_size_bytes: u64,
    /// `--bssplit`, `--block-align`: the sizes of the I/Os (`None`: all `block_size_bytes`).
    pub block_sizes: Option<crate::access::block_sizes::BlockSizeMix>,
    /// Slots (I/Os in flight at most); 1 for engines that complete inline.
    pub queue_depth: u32,
    pub read_percent: u8,
    /// `--trim-percent`: the share of I/Os that are trims (the rest split by `read_percent`).
    pub trim_percent: u8,
    /// Block numbers relative to the worker's region.
    pub source: BlockSource,
    /// Where the region starts among the worker's files' blocks.
    pub region_first_block: u64,
    /// At most this many I/Os (`None`: no limit).
    pub ops_limit: Option<u64>,
    /// Tracks which blocks of the region were touched.
    pub coverage: Option<CoverageTracker>,
    pub files: Vec<WorkerFile>,
    pub buffer_align_bytes: usize,
    /// Measurement ends at start + `ramp_ns` + this; `None` runs until the source is exhausted.
    pub duration_ns: Option<u64>,
    /// `--ramp`: I/O from the start for this long is not counted (0: none). The worker
    /// resets its figures once, at its first batch at or after the ramp's end.
    pub ramp_ns: u64,
    /// The files were opened with O_DIRECT.
    pub direct: bool,
    pub engine_options: EngineOptions,
    /// CPUs and NUMA node: applied on the worker's thread before its buffers are allocated.
    pub placement: WorkerPlacement,
    /// What writes put in blocks, and whether reads are verified.
    pub data: DataPlan,
    /// Think time and rate limit; `None` for both runs the loop unpaced.
    pub think: Option<ThinkSpec>,
    pub rate: Option<RateSpec>,
    /// Interval histograms for the time series and the live line, when wanted.
    pub interval: Option<IntervalRecorder>,
    /// Failed I/Os (run-wide, counted in `errors_seen`) after which the worker stops:
    /// 1 by default, `--max-errors N`, `u64::MAX` with `--continue-on-error` alone.
    pub error_limit: u64,
    /// The run-wide count of failed I/Os (`RunControl::errors_seen`).
    pub errors_seen: Arc<AtomicU64>,
    /// `--fsync-every N`, `--fdatasync-every N`: a flush after every N writes issued; or a
    /// replay's flushes, its schedule's entries (`every_writes` then `u64::MAX`: never).
    pub flush: Option<FlushPlan>,
    /// `--verify-state`: this worker's writer of the durable record, updated at each
    /// completed flush (with `data.verify` and `flush` only).
    pub durable_record: Option<crate::durable_record::format::RecordWriter>,
    /// `--end-fsync`: fsync each file at the end of the window, counted in it.
    pub end_fsync: bool,
    /// `iopulse replay`: the I/Os come from this schedule (on file 0), not from `source`.
    pub replay: Option<ReplayPlan>,
    /// `--write-iolog`: record each I/O issued, in a table of this many (allocated at set-up).
    pub iolog_capacity: Option<usize>,
}

/// A flush (`op`: `Op::Fsync` or `Op::Fdatasync`) after every `every_writes` writes the
/// worker issues, of the file the last of them went to. The flush is a barrier: it is
/// issued once the writes before it completed, and nothing is issued until it completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushPlan {
    pub every_writes: u64,
    pub op: Op,
}

/// The worker's flush state (`FlushPlan` and where it stands).
#[derive(Clone, Copy, Debug)]
struct FlushState {
    plan: FlushPlan,
    /// Writes issued since the last flush was due.
    writes_since: u64,
    /// A flush is owed (of `file`): nothing more is issued until it has been.
    due: bool,
    file: u32,
    /// The flush is in flight (queued engines): nothing is issued until it completes.
    in_flight: bool,
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

/// Why a worker stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerStop {
    Deadline,
    /// Its share of the region was done (or it had no share).
    Done,
    /// The stop word was set (signal, or another worker failed).
    Stopped,
    /// One of its I/Os failed.
    Failed,
    /// It could not start.
    SetupFailed,
}

/// A failed I/O, as data (the coordinator names the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoFailure {
    pub op: Op,
    /// Index of the target among the run's targets.
    pub target: u32,
    pub offset_bytes: u64,
    pub kind: IoFailureKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoFailureKind {
    /// The kernel returned this errno.
    Errno(i32),
    /// Fewer bytes than asked were moved and no more could be (end of file).
    Short { done_bytes: u64, len_bytes: u64 },
    /// The flush completed, but the `--verify-state` record of it could not be written
    /// (this errno).
    Record(i32),
}

/// One target's figures in one worker.
pub struct TargetStats {
    pub target: u32,
    pub read: OpStats,
    pub write: OpStats,
    /// Flushes (`--fsync-every`, `--fdatasync-every`): ops and latency, no bytes.
    pub flush: OpStats,
    /// Trims (`--trim-percent`): ops, bytes discarded, latency.
    pub trim: OpStats,
}

/// Overwrites `into` with the worker's cumulative latency histograms and bytes, summed
/// over its targets (for the time series; see `live`).
fn snapshot(stats: &[TargetStats], into: &mut Snapshot) {
    into.read.reset();
    into.write.reset();
    into.flush.reset();
    into.read_bytes = 0;
    into.write_bytes = 0;
    for t in stats {
        let _ = into.read.add(&t.read.latency);
        let _ = into.write.add(&t.write.latency);
        if !t.flush.latency.is_empty() {
            let _ = into.flush.add(&t.flush.latency);
        }
        into.read_bytes += t.read.bytes;
        into.write_bytes += t.write.bytes;
    }
}

/// What a worker hands back, once, at the end.
pub struct WorkerResult {
    pub index: u32,
    /// All of its targets together.
    pub read: OpStats,
    pub write: OpStats,
    pub flush: OpStats,
    /// Trims (`--trim-percent`; empty and tiny without).
    pub trim: OpStats,
    pub per_target: Vec<TargetStats>,
    pub coverage: Option<CoverageTracker>,
    /// Clock time it stopped issuing (deadline, last completion, or when it saw the stop word).
    pub end_ns: u64,
    pub cpu: CpuTimes,
    pub stop: WorkerStop,
    pub failure: Option<IoFailure>,
    /// The engine could not start, or stopped working mid-run.
    pub engine_error: Option<String>,
    pub engine_setup: Vec<(String, String)>,
    /// Verification counts and the first mismatches (with `--verify`).
    pub verify_counts: VerifyCounts,
    pub mismatches: Vec<Mismatch>,
    /// Measured cost of stamping and checking one verified block.
    pub verify_cost: VerifyCost,
    /// The CPU the worker was on when it finished (sched_getcpu).
    pub cpu_seen: Option<u32>,
    /// The NUMA node its buffers' first page is on (get_mempolicy).
    pub buffer_node_seen: Option<u32>,
    /// Time the engine took to make its writes durable after the window (mmap: msync),
    /// when it had anything to do. Not part of the window.
    pub sync_ns: Option<u64>,
    /// Think time asked for and spent, and how far behind its rate schedule the worker fell (paced runs).
    pub pacing: PacingCounts,
    /// Rate schedules: the worker's lateness and the I/O's service time.
    pub pacing_latency: Option<PacingLatency>,
    /// Notes from the engine (fallbacks taken at set-up), said once by the coordinator.
    pub engine_notes: Vec<String>,
    /// Failed I/Os per op type and errno.
    pub errors: ErrorCounts,
    /// 4 KiB chunks of its counted writes that were duplicates by design (`--dedupe-ratio`).
    pub duplicate_chunks_written: u64,
    /// `--ramp`: I/Os completed during the ramp (not counted in `read`, `write`).
    pub ramp_ops: u64,
    /// `--bssplit`, `--block-align`: the figures per size, ascending (empty without a mix).
    pub per_size: Vec<SizeStats>,
    /// `--distribution zoned`: I/Os drawn per zone (empty otherwise).
    pub zone_ios: Vec<u64>,
    /// The worker's own time in the window, between a completion and the next submission.
    pub own_ns: u64,
    /// The depth at each issue and the I/Os each submitting call and reap carried.
    pub depths: DepthTally,
    /// `--write-iolog`: the I/Os it issued.
    pub iolog: Option<iolog::IoRecorder>,
}

/// Per-slot facts about the request in flight on it.
#[derive(Clone, Copy, Debug)]
struct SlotState {
    op: Op,
    file: u32,
    offset_bytes: u64,
    /// When its latency counts from: its due time under a rate schedule, else `issued_ns`.
    submit_ns: u64,
    /// Paced runs only: when it was really issued (unpaced runs never write it).
    issued_ns: u64,
    /// Block number within the worker's region.
    region_block: u64,
    /// Sequence of the write on this slot.
    sequence: u64,
    /// The buffer still holds the (fixed) write pattern: no read has overwritten it.
    holds_pattern: bool,
    /// 4 KiB chunks of the write on this slot that are duplicates (`--dedupe-ratio`).
    duplicate_chunks: u32,
    /// Bytes of the I/O on this slot, and which size of the mix it is (0 without one).
    len_bytes: u32,
    size_index: u8,
    /// The window of the area this slot's write holds (`NO_WINDOW`: none; see `area`).
    window: u64,
}

/// `SlotState::window` of a slot that holds no window of the area.
const NO_WINDOW: u64 = u64::MAX;

/// Bytes of each slot's own buffer: the largest I/O, or a page when every write of the
/// worker is certain to find a window of its area and it reads nothing (the buffers would
/// never be used; with 16 MiB blocks they would double the memory). The one rule, for the
/// worker and for the memory plan (`run/limits.rs`).
pub fn private_slot_bytes(area: Option<AreaShape>, read_percent: u8, largest_bytes: u64) -> u64 {
    match area {
        Some(a) if a.guaranteed && read_percent == 0 => largest_bytes.min(4096),
        _ => largest_bytes,
    }
}

/// Think time and rate figures of one worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacingCounts {
    pub think_requested_ns: u64,
    pub think_spent_ns: u64,
    pub thinks: u64,
    /// Scheduled I/Os not yet issued when the worker stopped (the target was not reached).
    pub backlog_ios: u64,
    /// The most an I/O was issued behind its due time.
    pub max_behind_ns: u64,
}

/// Under a rate schedule, per counted I/O: how late the worker issued it after its due
/// time (the tool's own lateness, not the storage's) and how long it then took (service
/// time, submission to completion). Both sum to the latency the report headlines, which
/// counts from the due time. Allocated before the start line, merged at the end.
pub struct PacingLatency {
    pub lateness: OpStats,
    pub service: OpStats,
}

impl PacingLatency {
    pub fn new() -> Self {
        Self { lateness: OpStats::new(), service: OpStats::new() }
    }

    pub fn merge(&mut self, other: &PacingLatency) {
        self.lateness.merge(&other.lateness);
        self.service.merge(&other.service);
    }
}

impl Default for PacingLatency {
    fn default() -> Self {
        Self::new()
    }
}

/// Measured cost of verification per block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyCost {
    pub stamp_ns: u64,
    pub check_ns: u64,
}

/// Runs one worker to the end. Called on the worker's own thread.
pub fn run<E: Engine>(plan: WorkerPlan, control: &RunControl) -> WorkerResult {
    let index = plan.index;
    let failed_setup = |message: String| {
        let _ = control.wait_for_start(false);
        WorkerResult {
            index,
            read: OpStats::new(),
            write: OpStats::new(),
            flush: OpStats::unused(),
            trim: OpStats::unused(),
            per_target: Vec::new(),
            coverage: None,
            end_ns: 0,
            cpu: CpuTimes::default(),
            stop: WorkerStop::SetupFailed,
            failure: None,
            engine_error: Some(message),
            engine_setup: Vec::new(),
            verify_counts: VerifyCounts::default(),
            mismatches: Vec::new(),
            verify_cost: VerifyCost::default(),
            cpu_seen: placement::bind::current_cpu(),
            buffer_node_seen: None,
            sync_ns: None,
            pacing: PacingCounts::default(),
            pacing_latency: None,
            engine_notes: Vec::new(),
            duplicate_chunks_written: 0,
            errors: ErrorCounts::default(),
            ramp_ops: 0,
            per_size: Vec::new(),
            zone_ios: Vec::new(),
            own_ns: 0,
            depths: DepthTally::default(),
            iolog: None,
        }
    };
    let mut worker = match Worker::<E>::new(plan) {
        Ok(w) => w,
        Err(message) => return failed_setup(message),
    };
    // Allocated before the start line, as every figure the loop records into.
    let pacing_latency = worker.rate.is_some().then(PacingLatency::new);
    let replay_timed = worker.replay_timed;
    let replay_lag = replay_timed.then(OpStats::new);
    if worker.rate.is_some() || replay_timed {
        // A sleep before a due time may overshoot by the thread's timer slack (50 µs by
        // default): the pacer sleeps to shortly before it, then spins, and asks for none.
        let _ = nix::sys::prctl::set_timerslack(1);
    }
    let Some(start_ns) = control.wait_for_start(true) else {
        return worker.finish(control, WorkerStop::Stopped, 0, CpuTimes::default());
    };
    let cpu_start = rusage::thread_cpu();
    let ramp_ns = worker.ramp_ns;
    worker.ramp_end_ns = (ramp_ns > 0).then(|| start_ns.saturating_add(ramp_ns));
    let deadline_ns = worker.duration_ns.map_or(u64::MAX, |d| start_ns.saturating_add(ramp_ns).saturating_add(d));
    // The policy is chosen once: an unpaced run compiles to a loop with no pacing in it.
    // So is drawing ahead (`AHEAD`): a reader's loop has none of it.
    // And so is a block-size mix (`MIX`): a run of one size has none of it.
    let ahead = !E::CAPS.completes_inline && worker.ahead.is_some();
    // (`--write-iolog` records in the `MIX` loop: the others have no test for it.)
    let mixed = worker.sizes.is_some() || worker.replay.is_some() || worker.iolog.is_some();
    let (stop, end_ns) = if let Some(lag) = replay_lag {
        // A timed replay, out of line: the other policies' loops are compiled as before.
        run_replayed(&mut worker, control, deadline_ns, start_ns, lag, ahead)
    } else if worker.think.is_some() || worker.rate.is_some() {
        let mut pacing = Paced::new(worker.think, worker.rate, start_ns, pacing_latency);
        let (stop, end_ns) = match (ahead, mixed) {
            (true, false) => worker.run_loop::<_, true, false>(control, deadline_ns, &mut pacing),
            (false, false) => worker.run_loop::<_, false, false>(control, deadline_ns, &mut pacing),
            (true, true) => worker.run_loop::<_, true, true>(control, deadline_ns, &mut pacing),
            (false, true) => worker.run_loop::<_, false, true>(control, deadline_ns, &mut pacing),
        };
        worker.pacing = pacing::Pacing::counts(&pacing, end_ns);
        // Stopped before the ramp's end: nothing was measured, the lateness neither.
        if worker.ramp_end_ns.is_some() {
            pacing::Pacing::reset_figures(&mut pacing);
        }
        worker.pacing_latency = pacing::Pacing::take_latency(&mut pacing);
        (stop, end_ns)
    } else {
        match (ahead, mixed) {
            (true, false) => worker.run_loop::<_, true, false>(control, deadline_ns, &mut Unpaced),
            (false, false) => worker.run_loop::<_, false, false>(control, deadline_ns, &mut Unpaced),
            (true, true) => worker.run_loop::<_, true, true>(control, deadline_ns, &mut Unpaced),
            (false, true) => worker.run_loop::<_, false, true>(control, deadline_ns, &mut Unpaced),
        }
    };
    // Stopped before the ramp's end (a signal, a failure): nothing was measured.
    if worker.ramp_end_ns.is_some() {
        worker.end_ramp(0);
    }
    worker.close_record();
    // `--end-fsync`: the window of a worker that ran to its end takes in its flushes.
    let end_ns =
        if worker.end_fsync && E::CAPS.touches_storage && matches!(stop, WorkerStop::Deadline | WorkerStop::Done) {
            worker.end_fsync(control, end_ns)
        } else {
            end_ns
        };
    let cpu = rusage::thread_cpu().since(&worker.window_cpu_start.unwrap_or(cpu_start));
    let sync_ns = worker.sync_writes(control);
    let mut result = worker.finish(control, stop, end_ns, cpu);
    result.sync_ns = sync_ns;
    result
}

/// A timed replay's loop (`replay::Replayed`; a replay has its own sizes: `MIX`), and its
/// lag kept. Not inlined into `run`, whose loops for the other policies stay as they were.
#[inline(never)]
fn run_replayed<E: Engine>(
    worker: &mut Worker<E>,
    control: &RunControl,
    deadline_ns: u64,
    start_ns: u64,
    lag: OpStats,
    ahead: bool,
) -> (WorkerStop, u64) {
    let ios = worker.replay.as_ref().map_or_else(|| Arc::from(Vec::new()), |c| Arc::clone(&c.ios));
    let mut pacing = replay::Replayed::new(ios, start_ns, lag);
    let (stop, end_ns) = if ahead {
        worker.run_loop::<_, true, true>(control, deadline_ns, &mut pacing)
    } else {
        worker.run_loop::<_, false, true>(control, deadline_ns, &mut pacing)
    };
    worker.pacing = pacing::Pacing::counts(&pacing, end_ns);
    if worker.ramp_end_ns.is_some() {
        pacing::Pacing::reset_figures(&mut pacing);
    }
    worker.pacing_latency = pacing::Pacing::take_latency(&mut pacing);
    (stop, end_ns)
}

/// The worker's state. `engine` is declared first so it is dropped (and has
/// drained any I/O in flight) before the buffers it points into are freed.
struct Worker<E: Engine> {
    engine: E,
    buffers: SlotBuffers,
    slots: Box<[SlotState]>,
    completions: Box<[Completion]>,
    source: BlockSource,
    region_first_block: u64,
    /// I/Os this worker may still draw (`--ops`, `--io-limit`; `u64::MAX` without, and
    /// during a ramp: the ramp's I/Os never count against the budget).
    remaining_ops: u64,
    /// `--ramp` with `--ops` or `--io-limit`: the worker's share of the budget, given to
    /// the window at the ramp's end.
    window_ops_limit: Option<u64>,
    coverage: Option<CoverageTracker>,
    mix: OpMix,
    files: Box<[WorkerFile]>,
    block_size_bytes: u64,
    duration_ns: Option<u64>,
    ramp_ns: u64,
    /// `--ramp`: when the ramp ends (clock time), until the worker has reset its figures.
    ramp_end_ns: Option<u64>,
    /// I/Os completed during the ramp, counted at the reset.
    ramp_ops: u64,
    /// The worker thread's CPU time at the ramp's end: the window's CPU counts from there.
    window_cpu_start: Option<CpuTimes>,
    write_sequence: u64,
    /// Figures per file (index as `files`); totals are merged at the end.
    stats: Box<[TargetStats]>,
    failure: Option<IoFailure>,
    engine_error: Option<String>,
    index: u32,
    data: DataPlan,
    /// High bits of this worker's write sequences: worker index and run nonce.
    sequence_base: u64,
    verifier: Option<Verifier>,
    verify_cost: VerifyCost,
    think: Option<ThinkSpec>,
    rate: Option<RateSpec>,
    pacing: PacingCounts,
    pacing_latency: Option<PacingLatency>,
    interval: Option<IntervalRecorder>,
    buffer_node_seen: Option<u32>,
    errors: ErrorCounts,
    error_limit: u64,
    errors_seen: Arc<AtomicU64>,
    watch: WatchState,
    /// Slots with no I/O in flight and nothing prepared in them, as a stack (capacity:
    /// the slots; never grows).
    free: Vec<u32>,
    /// Unverified random writes: the pool their data is cut from (`data::RandomPool`).
    pool: Option<RandomPool>,
    /// Unverified `unique` writes: the windows of the area they are submitted from.
    area: Option<DataArea>,
    /// Queued engines with per-write data: the requests drawn ahead (`Ahead`).
    ahead: Option<Ahead>,
    /// Set while `prepare_ahead` draws a request: its pool data (or `unique` keys) is cut
    /// there, in pieces, instead of in `fill_slot`.
    cut_later: bool,
    /// 4 KiB chunks of counted writes that were duplicates (`--dedupe-ratio`).
    duplicate_chunks_written: u64,
    /// `--fsync-every`, `--fdatasync-every`.
    flush: Option<FlushState>,
    /// `--end-fsync`.
    end_fsync: bool,
    /// `--trim-percent` is above 0 (the trims' figures are kept).
    trimming: bool,
    /// `--bssplit`, `--block-align`: each I/O's size and the figures per size.
    sizes: Option<size_mix::SizeMix>,
    /// Queued engines, unpaced: the slots handed to the engine since the last submitting
    /// call. Their latency starts at the clock reading just before that call
    /// (`stamp_submission`), not at the reap that freed their slot, so the worker's own
    /// time between the two is not counted as the device's (capacity: the slots).
    unstamped: Box<[u32]>,
    unstamped_len: usize,
    /// The clock reading the worker's own time counts from: the last reap's, or the last
    /// submission's.
    own_mark_ns: u64,
    /// The tool's own time in the window: the worker's wall time from a completion's clock
    /// reading to the next submission's (`ToolTime`).
    own_ns: u64,
    /// I/Os handed to the engine since its last submitting call (every pacing; `unstamped`
    /// holds the same count for unpaced runs, but a paced run stamps none).
    queued_since_submit: usize,
    /// The depth at each issue, the I/Os per submitting call and per reap (fio's
    /// iodepth maps, counted).
    depths: DepthTally,
    /// `iopulse replay`: the schedule the requests are drawn from.
    replay: Option<replay::ReplayCursor>,
    /// The replay honours the trace's times (`replay::Replayed`).
    replay_timed: bool,
    /// `--write-iolog`: the I/Os issued.
    iolog: Option<iolog::IoRecorder>,
}

/// Writes whose data is ready before their slot frees (queued engines, data that varies
/// per write, verified or not). The worker has twice the engine's depth in slots: while
/// `depth` I/Os are in flight, the other slots hold the next requests, drawn from the
/// source ahead of time and their data generated after the last submission, while the
/// device works. A completion is answered at once with the oldest prepared request, so
/// no write waits for its data and the order of the source is kept.
struct Ahead {
    /// I/Os in flight at most (the engine's depth).
    depth: usize,
    /// Prepared requests, oldest first: a ring of `depth` entries.
    ready: Box<[Request]>,
    head: usize,
    len: usize,
    /// The source (or the ops limit) gave no more requests.
    drawn_out: bool,
    /// The newest request drawn, while its data is still being cut from the pool a piece
    /// at a time (`CUT_PIECE_BYTES`, a look at the completion queue between pieces): a
    /// completion then waits for one piece, not for a whole large block's data.
    cutting: Option<Cutting>,
}

/// A request drawn ahead whose data is made (cut from the pool, or its keys written) up to
/// `done_bytes`.
#[derive(Clone, Copy, Debug)]
struct Cutting {
    req: Request,
    done_bytes: u32,
}

/// Bytes of pool data cut (or of `unique` data keyed) between two looks at the completion
/// queue while drawing ahead: a few microseconds of copying (a multiple of the 4 KiB chunk,
/// so that pieces join into exactly the data of a whole fill).
const CUT_PIECE_BYTES: u32 = 64 * 1024;

impl Ahead {
    /// Appends a request whose data is whole to the prepared ones.
    #[inline(always)]
    fn push(&mut self, req: Request) {
        self.ready[(self.head + self.len) % self.depth] = req;
        self.len += 1;
    }
}

/// Whether a worker draws its requests ahead (`Ahead`): a queued engine whose writes
/// each need data of their own (a varying pattern, or verification's stamped blocks).
/// The one rule, for the worker and for the memory plan (`run/limits.rs`).
pub fn draws_ahead(completes_inline: bool, read_percent: u8, verifying: bool, pattern: Pattern) -> bool {
    !completes_inline && read_percent < 100 && (verifying || pattern.varies_per_write())
}

/// Slots (each with its I/O buffer) of a worker of `queue_depth`: twice that when it
/// draws ahead (the spares hold the prepared requests); the engine's depth stays the same.
pub fn slot_count(queue_depth: u32, draws_ahead: bool) -> u32 {
    if draws_ahead { 2 * queue_depth.max(1) } else { queue_depth.max(1) }
}

/// The `unique` data of one write, or a piece of it: keys written into the area's window
/// it holds, or (no window: `Placement::Copy`) the base copied from the area into the
/// slot's own buffer and keyed there.
#[derive(Clone, Copy, Debug)]
struct UniquePiece {
    slot: u32,
    window: u64,
    /// Where in the area the write's base starts (`DataArea::copy_source`).
    source: u64,
    offset_bytes: u64,
    sequence: u64,
}

impl UniquePiece {
    /// Makes bytes `from..to` of the write's data.
    #[inline(always)]
    fn make(&self, buffers: &mut SlotBuffers, seed: u64, from: usize, to: usize) {
        let at = self.offset_bytes + from as u64;
        if self.window != NO_WINDOW {
            let start = self.window as usize;
            data::unique::key_sectors(&mut buffers.area_mut()[start + from..start + to], seed, at, self.sequence);
        } else {
            let (own, area) = buffers.slot_and_area_mut(self.slot);
            let source = self.source as usize;
            own[from..to].copy_from_slice(&area[source + from..source + to]);
            data::unique::key_sectors(&mut own[from..to], seed, at, self.sequence);
        }
    }
}

/// What the issue loop does about flushing (`Worker::flush_gate`).
enum FlushGate {
    /// Nothing owed: issue as usual.
    Open,
    /// A flush waits for writes in flight, or is in flight itself: issue nothing.
    Hold,
    /// Issue this flush now.
    Issue(Request),
}

/// `SlotState::submit_ns` of a slot with no I/O in flight.
const IDLE_NS: u64 = u64::MAX;

/// Whose zones (and sizes) an op draws from: a flush counts as a write, as in fio.
#[inline(always)]
fn direction(op: Op) -> SizeFor {
    match op {
        Op::Read => SizeFor::Read,
        Op::Trim => SizeFor::Trim,
        Op::Write | Op::Fsync | Op::Fdatasync => SizeFor::Write,
    }
}

impl<E: Engine> Worker<E> {
    fn new(mut plan: WorkerPlan) -> Result<Self, String> {
        let durable_record = plan.durable_record.take();
        // Trims are counted when the mix has them, or the replayed trace does.
        let trimming =
            plan.trim_percent > 0 || plan.replay.as_ref().is_some_and(|r| r.ios.iter().any(|io| io.op == Op::Trim));
        let depth = plan.queue_depth.max(1);
        let writes_vary = plan.read_percent < 100 && plan.data.verify.is_none();
        // A flushing worker does not draw ahead: its writes are counted as they are
        // issued, and a flush must come between the Nth and the next.
        let draws =
            draws_ahead(E::CAPS.completes_inline, plan.read_percent, plan.data.verify.is_some(), plan.data.pattern)
                && plan.flush.is_none();
        let ahead = draws.then(|| Ahead {
            depth: depth as usize,
            ready: vec![
                Request {
                    slot: 0,
                    op: Op::Read,
                    file: 0,
                    offset_bytes: 0,
                    len_bytes: 0,
                    buffer: BufferAt::Slot
                };
                depth as usize
            ]
            .into_boxed_slice(),
            head: 0,
            len: 0,
            drawn_out: false,
            cutting: None,
        });
        let pool = (writes_vary && plan.data.pattern == Pattern::Random)
            .then(|| RandomPool::reducible(plan.data.seed, plan.data.reducibility));
        let slot_count = slot_count(depth, draws);
        // Bind first, then allocate and touch: the buffers' pages land on the worker's node.
        placement::apply_to_current_thread(&plan.placement)?;
        // A replay's trims and flushes move no data: its buffers are as long as its transfers.
        let buffer_len_bytes = match &plan.replay {
            Some(r) => r
                .ios
                .iter()
                .filter(|io| matches!(io.op, Op::Read | Op::Write))
                .map(|io| u64::from(io.len_bytes))
                .max()
                .unwrap_or(0)
                .max(plan.block_size_bytes),
            None => plan.block_sizes.as_ref().map_or(plan.block_size_bytes, |m| m.largest_bytes()),
        };
        let area_shape = AreaShape::of(
            plan.data.pattern,
            plan.read_percent < 100,
            plan.data.verify.is_some(),
            E::CAPS.completes_inline,
            slot_count,
            buffer_len_bytes,
            plan.block_sizes.is_some() || plan.replay.is_some(),
        );
        let private_bytes = private_slot_bytes(area_shape, plan.read_percent, buffer_len_bytes);
        let mut buffers = SlotBuffers::with_area(
            slot_count as usize,
            private_bytes as usize,
            plan.buffer_align_bytes,
            area_shape.map_or(0, |a| a.len_bytes as usize),
        )?;
        placement::bind_buffer(&plan.placement, buffers.region().base, buffers.len_bytes())?;
        if let Some(a) = area_shape {
            placement::bind_buffer(&plan.placement, buffers.region().area, a.len_bytes as usize)?;
        }
        buffers.touch_pages();
        let buffer_node_seen = placement::bind::node_of_address(buffers.region().base);
        let period_bytes = data::unique::period_bytes(buffer_len_bytes);
        if let Some(a) = area_shape {
            // The base, once: every `unique` write is a window of it with its keys rewritten.
            data::unique::fill_area(buffers.area_mut(), plan.data.seed, a.period_bytes);
        } else {
            for slot in 0..slot_count {
                let buf = buffers.slot_mut(slot);
                data::fill(buf, plan.data.pattern, plan.data.seed, 0, u64::from(slot), period_bytes);
            }
        }
        let area = area_shape.map(|a| DataArea::new(a, E::CAPS.completes_inline));
        let region_blocks = plan.source.region_blocks();
        let verifier = plan.data.verify.map(|v| Verifier {
            plan: v,
            in_flight: vec![u64::MAX; slot_count as usize].into_boxed_slice(),
            last_written: if v.track_sequences { vec![0u32; region_blocks as usize] } else { Vec::new() },
            scratch: vec![0u8; plan.block_size_bytes as usize],
            reduction: data::Reduction::new(plan.data.reducibility),
            counts: VerifyCounts::default(),
            mismatches: Vec::with_capacity(v.max_reports as usize),
            durable_record: None,
        });
        let mut verifier = verifier;
        if let Some(v) = &mut verifier {
            v.durable_record = durable_record;
        }
        let sequence_base =
            (u64::from(plan.index) << 48) | (u64::from(plan.data.verify.map_or(0, |v| v.run_nonce)) << 32);
        let verify_cost = measure_verify_cost(&plan);
        let fds: Vec<RawFd> = plan.files.iter().map(|f| f.fd).collect();
        let setup = EngineSetup {
            fds: &fds,
            buffers: buffers.region(),
            queue_depth: depth,
            direct: plan.direct,
            options: &plan.engine_options,
        };
        let engine = E::open(&setup).map_err(|e| e.to_string())?;
        Ok(Self {
            engine,
            buffers,
            slots: vec![
                SlotState {
                    op: Op::Read,
                    file: 0,
                    offset_bytes: 0,
                    submit_ns: IDLE_NS,
                    issued_ns: IDLE_NS,
                    region_block: 0,
                    sequence: 0,
                    holds_pattern: true,
                    duplicate_chunks: 0,
                    len_bytes: plan.block_size_bytes as u32,
                    size_index: 0,
                    window: NO_WINDOW,
                };
                slot_count as usize
            ]
            .into_boxed_slice(),
            completions: vec![Completion::default(); depth as usize].into_boxed_slice(),
            source: plan.source,
            region_first_block: plan.region_first_block,
            remaining_ops: if plan.ramp_ns > 0 { u64::MAX } else { plan.ops_limit.unwrap_or(u64::MAX) },
            window_ops_limit: if plan.ramp_ns > 0 { plan.ops_limit } else { None },
            coverage: plan.coverage,
            stats: plan
                .files
                .iter()
                .map(|f| TargetStats {
                    target: f.target,
                    read: OpStats::new(),
                    write: OpStats::new(),
                    flush: if plan.flush.is_some() || plan.end_fsync { OpStats::new() } else { OpStats::unused() },
                    trim: if trimming { OpStats::new() } else { OpStats::unused() },
                })
                .collect(),
            mix: OpMix::new(plan.read_percent, plan.trim_percent, plan.seed, plan.index),
            files: plan.files.into_boxed_slice(),
            block_size_bytes: plan.block_size_bytes,
            duration_ns: plan.duration_ns,
            ramp_ns: plan.ramp_ns,
            ramp_end_ns: None,
            ramp_ops: 0,
            window_cpu_start: None,
            write_sequence: 0,
            failure: None,
            engine_error: None,
            index: plan.index,
            data: plan.data,
            sequence_base,
            verifier,
            verify_cost,
            think: plan.think,
            interval: plan.interval,
            rate: plan.rate,
            pacing: PacingCounts::default(),
            pacing_latency: None,
            buffer_node_seen,
            errors: ErrorCounts::default(),
            error_limit: plan.error_limit.max(1),
            errors_seen: plan.errors_seen,
            watch: WatchState::default(),
            free: (0..slot_count).rev().collect(),
            pool,
            area,
            ahead,
            cut_later: false,
            duplicate_chunks_written: 0,
            flush: plan.flush.map(|plan| FlushState { plan, writes_since: 0, due: false, file: 0, in_flight: false }),
            end_fsync: plan.end_fsync,
            trimming,
            sizes: plan
                .block_sizes
                .as_ref()
                .map(|m| size_mix::SizeMix::new(m, plan.seed, plan.index, plan.trim_percent > 0)),
            unstamped: vec![0; slot_count as usize].into_boxed_slice(),
            unstamped_len: 0,
            own_mark_ns: 0,
            own_ns: 0,
            queued_since_submit: 0,
            depths: DepthTally::default(),
            replay_timed: plan.replay.as_ref().is_some_and(|r| r.timed),
            replay: plan.replay.map(|r| replay::ReplayCursor { ios: r.ios, next: 0 }),
            iolog: plan.iolog_capacity.map(iolog::IoRecorder::with_capacity),
        })
    }

    /// Chooses the next I/O for `slot`, or `None` when the worker's share is done.
    #[inline(always)]
    fn next_request<const MIX: bool>(&mut self, slot: u32) -> Option<Request> {
        if self.remaining_ops == 0 {
            return None;
        }
        if MIX {
            return self.next_mixed_request(slot);
        }
        // The op first: zones per direction draw its block from its direction's zones.
        let op = self.mix.next();
        let mut region_block = self.source.next_block_for(|| direction(op))?;
        if let Some(v) = &self.verifier {
            // Never two I/Os on one block at once: a read racing a write would see either.
            while v.in_flight.contains(&region_block) {
                region_block = self.source.next_block_for(|| direction(op))?;
            }
        }
        self.remaining_ops -= 1;
        if let Some(tracker) = &mut self.coverage {
            tracker.touch(region_block);
        }
        let block = self.region_first_block + region_block;
        let file = self.locate(block);
        let offset_bytes = (block - self.files[file as usize].first_block) * self.block_size_bytes;
        Some(self.fill_slot::<false>(slot, op, file, offset_bytes, region_block, self.block_size_bytes as u32))
    }

    /// With a block-size mix: the next I/O's size (drawn for its op) and the first of the
    /// blocks it covers (units of the alignment), inside the region and inside its file.
    /// Verification is refused with a mix (no in-flight check here).
    #[inline(always)]
    fn next_mixed_request(&mut self, slot: u32) -> Option<Request> {
        if let Some(cursor) = &mut self.replay {
            // A replay: the trace's next I/O, placed on file 0 before the start line. (Its
            // flushes never come here: `flush_gate` takes them first.)
            let io = cursor.take()?;
            self.remaining_ops -= 1;
            let region_block = io.offset_bytes / self.block_size_bytes;
            if let Some(tracker) = &mut self.coverage {
                tracker.touch_extent(region_block, u64::from(io.len_bytes).div_ceil(self.block_size_bytes));
            }
            let req = self.fill_slot::<true>(slot, io.op, 0, io.offset_bytes, region_block, io.len_bytes);
            let state = &mut self.slots[slot as usize];
            state.len_bytes = io.len_bytes;
            state.size_index = 0;
            return Some(req);
        }
        if self.sizes.is_none() {
            // A run of one size compiled as `MIX` to record its log: the plain draw, its
            // length kept in the slot (which `MIX` reads).
            let req = self.next_request::<false>(slot)?;
            let state = &mut self.slots[slot as usize];
            state.len_bytes = req.len_bytes;
            state.size_index = 0;
            return Some(req);
        }
        let op = self.mix.next();
        let (size_index, len_bytes, units) = self.sizes.as_mut()?.pick(op);
        let mut region_block = self.source.next_extent(units, || direction(op))?;
        self.remaining_ops -= 1;
        let mut block = self.region_first_block + region_block;
        let file = self.locate(block);
        let f = self.files[file as usize];
        if block + units > f.first_block + f.blocks {
            // An I/O of several blocks stays inside its file: it moves back to end with it.
            block = (f.first_block + f.blocks).saturating_sub(units).max(f.first_block);
            region_block = block.saturating_sub(self.region_first_block);
        }
        if let Some(tracker) = &mut self.coverage {
            tracker.touch_extent(region_block, units);
        }
        let offset_bytes = (block - f.first_block) * self.block_size_bytes;
        let req = self.fill_slot::<true>(slot, op, file, offset_bytes, region_block, len_bytes);
        let state = &mut self.slots[slot as usize];
        state.len_bytes = len_bytes;
        state.size_index = size_index;
        Some(req)
    }

    /// The request's data (a write's) and the slot's record of it. `MIX`: its length may
    /// be less than the slot's buffer (without a mix, a slot's length stays the block size
    /// it was made with).
    #[inline(always)]
    fn fill_slot<const MIX: bool>(
        &mut self,
        slot: u32,
        op: Op,
        file: u32,
        offset_bytes: u64,
        region_block: u64,
        len_bytes: u32,
    ) -> Request {
        let mut sequence = 0;
        let mut duplicate_chunks = 0;
        let mut window = NO_WINDOW;
        if op == Op::Write {
            if let Some(f) = &mut self.flush {
                f.writes_since += 1;
                if f.writes_since == f.plan.every_writes {
                    f.writes_since = 0;
                    f.due = true;
                    f.file = file;
                }
            }
            self.write_sequence += 1;
            sequence = self.sequence_base | (self.write_sequence & 0xffff_ffff);
            let buf = self.buffers.slot_mut(slot);
            // (A slot is shorter than the I/O only when its writes all go to the area,
            // which does not use the slot's buffer: `private_slot_bytes`.)
            let mix_len = (len_bytes as usize).min(buf.len());
            let buf = if MIX { &mut buf[..mix_len] } else { buf };
            if let Some(v) = &self.verifier {
                if v.reduction.is_none() {
                    verify::stamp(buf, v.plan.pattern, self.data.seed, offset_bytes, sequence);
                } else {
                    duplicate_chunks = verifier::stamp_reduced(buf, v, self.data.seed, offset_bytes, sequence);
                }
            } else if let Some(pool) = &self.pool {
                if !self.cut_later {
                    duplicate_chunks = pool.fill(buf, offset_bytes, sequence);
                }
            } else if let Some(area) = &mut self.area {
                if let Placement::Window(at) = area.place(offset_bytes, u64::from(len_bytes)) {
                    window = at;
                }
                if !self.cut_later {
                    let source = area.copy_source(offset_bytes);
                    let piece = UniquePiece { slot, window, source, offset_bytes, sequence };
                    piece.make(&mut self.buffers, self.data.seed, 0, len_bytes as usize);
                }
            } else if self.data.pattern == Pattern::Keyed && self.slots[slot as usize].holds_pattern {
                // The slot still holds the base: only the keys change.
                data::keyed::key_chunks(buf, self.data.seed, offset_bytes, sequence);
            } else if self.data.pattern.varies_per_write() || !self.slots[slot as usize].holds_pattern {
                // (`unique` data always has its area: the period does not matter here.)
                let period_bytes = data::unique::MIN_PERIOD_BYTES;
                data::fill(buf, self.data.pattern, self.data.seed, offset_bytes, sequence, period_bytes);
            }
        }
        if let Some(v) = &mut self.verifier {
            v.in_flight[slot as usize] = region_block;
        }
        let state = &mut self.slots[slot as usize];
        state.op = op;
        state.file = file;
        state.offset_bytes = offset_bytes;
        state.region_block = region_block;
        state.sequence = sequence;
        state.holds_pattern = op == Op::Write;
        state.duplicate_chunks = duplicate_chunks;
        state.window = window;
        let buffer = if window == NO_WINDOW { BufferAt::Slot } else { BufferAt::Area(window) };
        Request { slot, op, file, offset_bytes, len_bytes, buffer }
    }

    /// The next request to issue (queued engines drawing ahead): the oldest prepared one,
    /// else one drawn now into a free slot (at the start, or when the source ran dry
    /// of prepared ones). `None` when the worker's share is done.
    #[inline(always)]
    fn take_prepared<const MIX: bool>(&mut self) -> Option<Request> {
        if self.ahead.as_ref().is_some_and(|a| a.len == 0 && a.cutting.is_some()) {
            // The next request in the source's order is partly cut: finish it now.
            while self.ahead.as_ref().is_some_and(|a| a.cutting.is_some()) {
                self.cut_piece();
            }
        }
        let a = self.ahead.as_mut()?;
        if a.len > 0 {
            let req = a.ready[a.head];
            a.head = (a.head + 1) % a.depth;
            a.len -= 1;
            return Some(req);
        }
        if a.drawn_out {
            return None;
        }
        let slot = self.free.pop()?;
        let req = self.next_request::<MIX>(slot);
        if req.is_none() {
            self.free.push(slot);
            if let Some(a) = &mut self.ahead {
                a.drawn_out = true;
            }
        }
        req
    }

    /// Draws the next requests into free slots and generates their data, one at a time,
    /// until `depth` are prepared, the source is done, or a completion has arrived: after
    /// each (for pool data, after each piece of `CUT_PIECE_BYTES`), the completion queue
    /// is looked at without waiting (no system call for libaio's ring, nor for io_uring's
    /// unless the kernel says completions wait to be posted), so a completion never waits
    /// for a batch of generations and the device is never left idle by them. Called after
    /// a submission: the device works meanwhile. Returns the completions taken into
    /// `completions`.
    #[inline(always)]
    fn prepare_ahead<const MIX: bool>(&mut self) -> Result<usize, crate::engine::EngineError> {
        loop {
            let Some(a) = &self.ahead else { return Ok(0) };
            if a.cutting.is_none() {
                if a.drawn_out || a.len == a.depth {
                    return Ok(0);
                }
                let Some(slot) = self.free.pop() else { return Ok(0) };
                let cut_later = self.pool.is_some() || self.area.is_some();
                self.cut_later = cut_later;
                let req = self.next_request::<MIX>(slot);
                self.cut_later = false;
                let Some(a) = &mut self.ahead else { return Ok(0) };
                match req {
                    Some(req) if cut_later => a.cutting = Some(Cutting { req, done_bytes: 0 }),
                    Some(req) => a.push(req),
                    None => {
                        a.drawn_out = true;
                        self.free.push(slot);
                        return Ok(0);
                    }
                }
            }
            self.cut_piece();
            let reaped = self.engine.reap(0, &mut self.completions)?;
            if reaped > 0 {
                return Ok(reaped);
            }
        }
    }

    /// Cuts the next piece of the data of the request being cut (`Ahead::cutting`) from
    /// the pool; once its data is whole, it joins the prepared requests.
    #[inline(always)]
    fn cut_piece(&mut self) {
        let Some(a) = &mut self.ahead else { return };
        let Some(mut c) = a.cutting else { return };
        let end = c.done_bytes.saturating_add(CUT_PIECE_BYTES).min(c.req.len_bytes);
        let state = &mut self.slots[c.req.slot as usize];
        if let Some(pool) = &self.pool {
            let piece = &mut self.buffers.slot_mut(c.req.slot)[c.done_bytes as usize..end as usize];
            state.duplicate_chunks += pool.fill(piece, c.req.offset_bytes + u64::from(c.done_bytes), state.sequence);
        } else if let Some(area) = &self.area {
            let piece = UniquePiece {
                slot: c.req.slot,
                window: state.window,
                source: area.copy_source(c.req.offset_bytes),
                offset_bytes: c.req.offset_bytes,
                sequence: state.sequence,
            };
            piece.make(&mut self.buffers, self.data.seed, c.done_bytes as usize, end as usize);
        }
        c.done_bytes = end;
        if end == c.req.len_bytes {
            a.cutting = None;
            a.push(c.req);
        } else {
            a.cutting = Some(c);
        }
    }

    /// Whether drawing ahead has slots to prepare (the loop then submits first).
    #[inline(always)]
    fn wants_prepare(&self) -> bool {
        self.ahead
            .as_ref()
            .is_some_and(|a| a.cutting.is_some() || (!a.drawn_out && a.len < a.depth && !self.free.is_empty()))
    }

    /// At the stop: requests prepared (or being cut) but never issued reached nothing
    /// (coverage counted them when they were drawn).
    fn discard_prepared(&mut self) {
        let Some(a) = &mut self.ahead else { return };
        let cutting = a.cutting.take().map(|c| c.req);
        for req in (0..a.len).map(|i| a.ready[(a.head + i) % a.depth]).chain(cutting) {
            self.free.push(req.slot);
            if let Some(v) = &mut self.verifier {
                v.in_flight[req.slot as usize] = u64::MAX;
            }
            if let Some(tracker) = &mut self.coverage {
                tracker.untouch(self.slots[req.slot as usize].region_block);
            }
        }
        a.len = 0;
    }

    /// Which file holds region block `block` (targets are few: a short scan).
    #[inline(always)]
    fn locate(&self, block: u64) -> u32 {
        let mut file = 0;
        while file + 1 < self.files.len() && self.files[file + 1].first_block <= block {
            file += 1;
        }
        file as u32
    }

    /// Once per batch, with a time series: at a new interval, hands the sampler a copy of
    /// this worker's cumulative histograms (see `live`).
    #[inline(always)]
    fn maybe_rotate_interval(&mut self, epoch: &AtomicU64) {
        if let Some(rec) = &mut self.interval {
            rec.maybe_rotate(epoch, |into| snapshot(&self.stats, into));
        }
    }

    /// The ramp's end, at the first batch past it (the loop's `next_event_ns`): the time
    /// series gets the ramp's tail, then the counters and
    /// histograms are reset in place (no allocation), once. Coverage, verification,
    /// failed I/Os and pacing keep counting over the whole run. With `--ops` or
    /// `--io-limit`, the budget starts here: `in_flight` I/Os issued in the ramp and the
    /// requests drawn ahead will complete in the window and count against it, so that the
    /// window completes the budget exactly (the ramp drew without a limit).
    #[cold]
    #[inline(never)]
    fn end_ramp(&mut self, in_flight: usize) {
        self.ramp_end_ns = None;
        if let Some(limit) = self.window_ops_limit.take() {
            let drawn_ahead = self.ahead.as_ref().map_or(0, |a| a.len + usize::from(a.cutting.is_some()));
            self.remaining_ops = limit.saturating_sub((in_flight + drawn_ahead) as u64);
        }
        if let Some(rec) = &mut self.interval {
            rec.end_ramp(|into| snapshot(&self.stats, into));
        }
        for t in self.stats.iter_mut() {
            self.ramp_ops += t.read.ops + t.write.ops + t.flush.ops + t.trim.ops;
            t.read.reset();
            t.write.reset();
            t.flush.reset();
            t.trim.reset();
        }
        if let Some(m) = &mut self.sizes {
            m.reset();
        }
        // The written chunks are counted from the window's writes (`write.ops`): so are
        // their duplicates.
        self.duplicate_chunks_written = 0;
        self.own_ns = 0;
        self.depths = DepthTally::default();
        self.window_cpu_start = Some(rusage::thread_cpu());
    }

    /// Accounts one completion; `counts` is false for I/O that finished after the window.
    #[inline(always)]
    fn complete<const MIX: bool>(&mut self, slot: u32, result: i64, lat_ns: u64, counts: bool) {
        let state = self.slots[slot as usize];
        self.slots[slot as usize].submit_ns = IDLE_NS;
        if state.window != NO_WINDOW {
            // The write is done with its window: another may take it.
            if let Some(area) = &mut self.area {
                area.release(state.window, u64::from(state.len_bytes));
            }
            self.slots[slot as usize].window = NO_WINDOW;
        }
        let len_bytes = if MIX { u64::from(state.len_bytes) } else { self.block_size_bytes };
        if result == len_bytes as i64 && self.verifier.is_some() {
            self.verify_completion(slot, &state);
        }
        if result == len_bytes as i64 {
            if counts {
                let stats = &mut self.stats[state.file as usize];
                match state.op {
                    Op::Read => stats.read.record(len_bytes, lat_ns),
                    Op::Write => {
                        stats.write.record(len_bytes, lat_ns);
                        self.duplicate_chunks_written += u64::from(state.duplicate_chunks);
                    }
                    Op::Fsync | Op::Fdatasync | Op::Trim => {}
                }
                if MIX && let Some(m) = &mut self.sizes {
                    m.record(state.size_index, state.op, len_bytes, lat_ns);
                }
            }
        } else if result == 0 && state.op.is_flush() {
            self.flush_completed(&state, lat_ns, counts);
        } else if result == 0 && state.op == Op::Trim {
            if counts {
                self.stats[state.file as usize].trim.record(len_bytes, lat_ns);
                if MIX && let Some(m) = &mut self.sizes {
                    m.record(state.size_index, Op::Trim, len_bytes, lat_ns);
                }
            }
        } else {
            self.record_error(slot, &state, result);
        }
    }

    /// A flush completed: its latency is recorded (no bytes) and issuing may go on.
    #[cold]
    #[inline(never)]
    fn flush_completed(&mut self, state: &SlotState, lat_ns: u64, counts: bool) {
        if let Some(f) = &mut self.flush {
            f.in_flight = false;
        }
        // The flush was issued once every write before it had completed, and nothing was
        // issued since: the table of last writes is exactly what it made durable.
        if let Some(v) = &mut self.verifier
            && let Some(record) = &mut v.durable_record
            && let Err(e) = record.flushed(state.file, &v.last_written)
        {
            let target = self.files[state.file as usize].target;
            self.failure = Some(verifier::record_failure(state.op, target, &e));
        }
        if counts {
            self.stats[state.file as usize].flush.record(0, lat_ns);
        }
    }

    /// With `--fsync-every`/`--fdatasync-every` (the caller tests the `Option`): what the
    /// issue loop does next. A due flush is handed out once nothing is in flight, on a
    /// free slot; while it is in flight (queued engines) the loop holds back.
    #[inline(never)]
    fn flush_gate(&mut self, in_flight: usize) -> FlushGate {
        let Some(f) = &mut self.flush else { return FlushGate::Open };
        if f.in_flight || (f.due && in_flight > 0) {
            return FlushGate::Hold;
        }
        if !f.due {
            // A replay: the schedule's next entry may be a flush (of its own kind). It is
            // taken from the schedule here, and is due like a counted flush: it waits for
            // the I/Os before it, and nothing after it goes before it completes.
            let Some(cursor) = &mut self.replay else { return FlushGate::Open };
            let Some(io) = cursor.peek().filter(|io| io.op.is_flush()) else { return FlushGate::Open };
            cursor.next += 1;
            self.remaining_ops = self.remaining_ops.saturating_sub(1);
            f.due = true;
            f.plan.op = io.op;
            f.file = 0;
            if in_flight > 0 {
                return FlushGate::Hold;
            }
        }
        let slot = if E::CAPS.completes_inline { Some(0) } else { self.free.pop() };
        let Some(slot) = slot else { return FlushGate::Hold };
        f.due = false;
        f.in_flight = !E::CAPS.completes_inline;
        let (op, file) = (f.plan.op, f.file);
        let state = &mut self.slots[slot as usize];
        state.op = op;
        state.file = file;
        state.offset_bytes = 0;
        state.duplicate_chunks = 0;
        state.window = NO_WINDOW;
        FlushGate::Issue(Request { slot, op, file, offset_bytes: 0, len_bytes: 0, buffer: BufferAt::Slot })
    }

    /// Counts a failed I/O (per op type and errno) and, once the run has seen as many
    /// as `error_limit` (1 by default), records it as the failure that stops the worker.
    #[cold]
    #[inline(never)]
    fn record_error(&mut self, slot: u32, state: &SlotState, result: i64) {
        let kind = if result < 0 {
            IoFailureKind::Errno((-result) as i32)
        } else {
            IoFailureKind::Short { done_bytes: result as u64, len_bytes: u64::from(state.len_bytes) }
        };
        let errno = match kind {
            IoFailureKind::Errno(errno) | IoFailureKind::Record(errno) => errno,
            IoFailureKind::Short { .. } => crate::stats::io_errors::SHORT_TRANSFER,
        };
        let target = self.files[state.file as usize].target;
        if let Some(v) = &mut self.verifier {
            v.in_flight[slot as usize] = u64::MAX;
        }
        if state.op.is_flush() {
            // A failed flush (counted below) releases the barrier; it touched no block.
            if let Some(f) = &mut self.flush {
                f.in_flight = false;
            }
        } else if let Some(tracker) = &mut self.coverage {
            tracker.untouch_extent(state.region_block, u64::from(state.len_bytes).div_ceil(self.block_size_bytes));
        }
        // The block was counted as covered when the I/O was issued (the cheap place, on
        // the hot path); a failed I/O reached nothing, so it is taken back here (above).
        // Only failed I/Os touch the run-wide counter. Each failure draws a distinct number
        // from it, so exactly `error_limit` are counted across all workers: I/Os that fail
        // after the limit was reached (in flight in this or another worker while the run
        // stops) are not counted, as I/Os completing after the window are not.
        let seen = self.errors_seen.fetch_add(1, Ordering::Relaxed) + 1;
        if seen > self.error_limit {
            return;
        }
        self.errors.record(state.op, errno, target, state.offset_bytes);
        if seen == self.error_limit && self.failure.is_none() {
            self.failure = Some(IoFailure { op: state.op, target, offset_bytes: state.offset_bytes, kind });
        }
    }

    /// Waits for I/O still in flight so no buffer is freed under the kernel. Reaps one
    /// batch at a time, naming an I/O still in flight in the heartbeat before each wait,
    /// so that a drain stuck on one I/O is reported with the right offset.
    ///
    /// With `counting` (the worker stopped before any deadline: signal, failure, share
    /// done) the I/Os drained completed inside the window and count as any other
    /// (`complete`): what reached the storage is what the report says. Without it (the
    /// deadline passed) they are outside the window and not counted. Returns the clock
    /// time of the last completion counted (0 if none).
    fn drain<P: pacing::Pacing>(
        &mut self,
        control: &RunControl,
        mut in_flight: usize,
        counting: bool,
        pacing: &mut P,
    ) -> u64 {
        let mut last_counted_ns = 0;
        while in_flight > 0 {
            self.publish_wait(control, control.clock.now_ns(), in_flight);
            self.stamp_submission(&control.clock);
            let reaped = self.engine.submit_and_reap(1, &mut self.completions);
            if let Ok(n @ 1..) = reaped {
                self.depths.reaped(n);
            }
            match reaped {
                Ok(0) | Err(_) => break,
                Ok(n) if counting => {
                    in_flight = in_flight.saturating_sub(n);
                    let now = control.clock.now_ns();
                    for i in 0..n {
                        let Completion { slot, result } = self.completions[i];
                        let state = &self.slots[slot as usize];
                        let lat_ns = now.saturating_sub(state.submit_ns);
                        let service_ns = now.saturating_sub(state.issued_ns);
                        // (Cold: the lengths are the slots' own, with or without a mix.)
                        self.complete::<true>(slot, result, lat_ns, true);
                        if P::PACED {
                            pacing.completed(lat_ns, service_ns, now);
                        }
                    }
                    last_counted_ns = now;
                }
                Ok(n) => {
                    in_flight = in_flight.saturating_sub(n);
                    for c in &self.completions[..n] {
                        let slot = &mut self.slots[c.slot as usize];
                        slot.submit_ns = IDLE_NS;
                        // Not counted, but a block an I/O failed on is not covered either.
                        if c.result != i64::from(slot.len_bytes)
                            && !slot.op.is_flush()
                            && let Some(tracker) = &mut self.coverage
                        {
                            tracker.untouch(slot.region_block);
                        }
                    }
                }
            }
        }
        // I/Os whose completion never came back (the engine failed): nothing says they
        // reached their blocks.
        if in_flight > 0
            && let Some(tracker) = &mut self.coverage
        {
            for slot in self.slots.iter().filter(|s| s.submit_ns != IDLE_NS && !s.op.is_flush()) {
                tracker.untouch(slot.region_block);
            }
        }
        if let Some(hb) = control.heartbeat(self.index as usize) {
            hb.done_waiting();
        }
        last_counted_ns
    }

    fn engine_failure<P: pacing::Pacing>(
        &mut self,
        control: &RunControl,
        message: String,
        in_flight: usize,
        pacing: &mut P,
    ) -> (WorkerStop, u64) {
        control.stop.store(stop_code::FAILED, Ordering::Relaxed);
        self.engine_error = Some(message);
        self.drain(control, in_flight, true, pacing);
        (WorkerStop::Failed, control.clock.now_ns())
    }

    /// `--end-fsync` (fio's end_fsync): fsyncs each of the worker's files once its I/O is
    /// drained and counts each flush as an I/O of the window, whose end moves by the
    /// time they took. Returns the worker's new end. A failed fsync is the worker's failure.
    #[cold]
    fn end_fsync(&mut self, control: &RunControl, end_ns: u64) -> u64 {
        let clock = control.clock;
        let mut flushed_ns = 0;
        for i in 0..self.files.len() {
            let file = self.files[i];
            let t0 = clock.now_ns();
            // The descriptor belongs to a target the coordinator keeps open until every
            // worker has finished.
            let synced = crate::sys::process::fsync(file.fd);
            let lat_ns = clock.now_ns().saturating_sub(t0);
            if let Err(e) = synced {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.failure.get_or_insert(IoFailure {
                    op: Op::Fsync,
                    target: file.target,
                    offset_bytes: 0,
                    kind: IoFailureKind::Errno(errno),
                });
                break;
            }
            self.stats[i].flush.record(0, lat_ns);
            flushed_ns += lat_ns;
        }
        end_ns.saturating_add(flushed_ns)
    }

    /// Outside the window, after the loop drained: lets the engine make its writes
    /// durable (mmap: msync) and times it. A failure there fails the run.
    fn sync_writes(&mut self, control: &RunControl) -> Option<u64> {
        let t0 = control.clock.now_ns();
        match self.engine.sync_writes() {
            Ok(true) => Some(control.clock.now_ns().saturating_sub(t0)),
            Ok(false) => None,
            Err(e) => {
                control.stop.store(stop_code::FAILED, Ordering::Relaxed);
                if self.engine_error.is_none() {
                    self.engine_error = Some(e.to_string());
                }
                None
            }
        }
    }

    fn finish(mut self, _control: &RunControl, stop: WorkerStop, end_ns: u64, cpu: CpuTimes) -> WorkerResult {
        if let Some(rec) = self.interval.take() {
            rec.flush(|into| snapshot(&self.stats, into));
        }
        let engine_setup = self.engine.setup_facts();
        let mut read = OpStats::new();
        let mut write = OpStats::new();
        let mut flush = if self.flush.is_some() || self.end_fsync { OpStats::new() } else { OpStats::unused() };
        let mut trim = if self.trimming { OpStats::new() } else { OpStats::unused() };
        for t in self.stats.iter() {
            read.merge(&t.read);
            write.merge(&t.write);
            flush.merge(&t.flush);
            trim.merge(&t.trim);
        }
        let engine_notes = self.engine.notes();
        WorkerResult {
            index: self.index,
            read,
            write,
            flush,
            trim,
            per_target: self.stats.into_vec(),
            coverage: self.coverage,
            verify_counts: self.verifier.as_ref().map(|v| v.counts.clone()).unwrap_or_default(),
            mismatches: self.verifier.map(|v| v.mismatches).unwrap_or_default(),
            verify_cost: self.verify_cost,
            end_ns,
            cpu,
            stop,
            failure: self.failure,
            engine_error: self.engine_error,
            engine_setup,
            cpu_seen: placement::bind::current_cpu(),
            buffer_node_seen: self.buffer_node_seen,
            sync_ns: None,
            pacing: self.pacing,
            pacing_latency: self.pacing_latency.take(),
            engine_notes,
            errors: self.errors,
            duplicate_chunks_written: self.duplicate_chunks_written,
            ramp_ops: self.ramp_ops,
            per_size: self.sizes.map(|m| m.stats.into_vec()).unwrap_or_default(),
            zone_ios: self.source.zone_counts(),
            own_ns: self.own_ns,
            depths: self.depths,
            iolog: self.iolog,
        }
    }
}
