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
mod completion;
mod control;
mod ending;
pub mod heartbeat;
mod io_loop;
pub mod iolog;
mod issue;
mod op_mix;
mod outcome;
mod pacing;
mod plan;
mod replay;
mod setup;
mod size_mix;
mod sizing;
mod verifier;
mod watch;

pub use area::AreaShape;
pub use control::{RunControl, StartWord, stop_code};
pub use outcome::{
    DataOutcome, EngineReport, Failures, IoFailure, IoFailureKind, MachineSeen, OpTotals, PacedOutcome, PacingCounts,
    PacingLatency, TargetStats, VerifyCost, WorkerResult, WorkerStop,
};
pub use plan::{
    BufferMemory, DataPlan, DurabilityPlan, EnginePlan, ErrorPlan, FlushPlan, IoPlan, PacingPlan, RegionPlan,
    VerifyPlan, WindowPlan, WorkerFile, WorkerPlan,
};
pub use replay::{ReplayIo, ReplayPlan};
pub use size_mix::SizeStats;
pub use sizing::{SizingInputs, WorkerSizing};

use crate::access::BlockSource;
use crate::access::block_sizes::SizeFor;
use crate::data::verify::{self, VerifyCounts};
use crate::data::{self, Pattern, RandomPool};
use crate::engine::{Completion, Engine, EngineSetup, Op, Request};
use crate::host::rusage;
use crate::placement;
use crate::schedule::think::{RateSpec, ThinkSpec};
use crate::stats::coverage::CoverageTracker;
use crate::stats::depth_counts::DepthTally;
use crate::stats::interval::IntervalRecorder;
use crate::stats::io_errors::ErrorCounts;
use crate::stats::{CpuTimes, OpStats};
use crate::sys::buffer::{BufferAt, SlotBuffers};
use area::{DataArea, Placement};
use op_mix::OpMix;
use outcome::snapshot;
use pacing::{Paced, Unpaced};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use verifier::{Verifier, measure_verify_cost};
use watch::WatchState;
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

/// Runs one worker to the end. Called on the worker's own thread.
pub fn run<E: Engine>(plan: WorkerPlan, control: &RunControl) -> WorkerResult {
    let index = plan.index;
    let failed_setup = |message: String| {
        let _ = control.wait_for_start(false);
        WorkerResult {
            index,
            ops: OpTotals {
                read: OpStats::new(),
                write: OpStats::new(),
                flush: OpStats::unused(),
                trim: OpStats::unused(),
            },
            per_target: Vec::new(),
            coverage: None,
            end_ns: 0,
            stop: WorkerStop::SetupFailed,
            engine: EngineReport { engine_setup: Vec::new(), engine_notes: Vec::new() },
            failures: Failures { failure: None, engine_error: Some(message), errors: ErrorCounts::default() },
            machine: MachineSeen {
                cpu: CpuTimes::default(),
                cpu_seen: placement::bind::current_cpu(),
                buffer_node_seen: None,
                own_ns: 0,
                depths: DepthTally::default(),
            },
            data: DataOutcome {
                verify_counts: VerifyCounts::default(),
                mismatches: Vec::new(),
                verify_cost: VerifyCost::default(),
                duplicate_chunks_written: 0,
                sync_ns: None,
            },
            paced: PacedOutcome { pacing: PacingCounts::default(), pacing_latency: None },
            ramp_ops: 0,
            per_size: Vec::new(),
            zone_ios: Vec::new(),
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
    result.data.sync_ns = sync_ns;
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
    /// An empty ring for `depth` prepared requests.
    fn new(depth: usize) -> Self {
        let empty = Request { slot: 0, op: Op::Read, file: 0, offset_bytes: 0, len_bytes: 0, buffer: BufferAt::Slot };
        Self { depth, ready: vec![empty; depth].into_boxed_slice(), head: 0, len: 0, drawn_out: false, cutting: None }
    }

    /// Appends a request whose data is whole to the prepared ones.
    #[inline(always)]
    fn push(&mut self, req: Request) {
        self.ready[(self.head + self.len) % self.depth] = req;
        self.len += 1;
    }
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
