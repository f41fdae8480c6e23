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
mod state;
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

use crate::base::sys::buffer::{BufferAt, SlotBuffers};
use crate::io::access::BlockSource;
use crate::io::access::block_sizes::SizeFor;
use crate::io::data::verify::{self, VerifyCounts};
use crate::io::data::{self, Pattern, RandomPool};
use crate::io::engine::{Completion, Engine, EngineSetup, Op, Request};
use crate::io::host::rusage;
use crate::io::placement;
use crate::io::schedule::think::{RateSpec, ThinkSpec};
use crate::io::stats::coverage::CoverageTracker;
use crate::io::stats::depth_counts::DepthTally;
use crate::io::stats::interval::IntervalRecorder;
use crate::io::stats::io_errors::ErrorCounts;
use crate::io::stats::{CpuTimes, OpStats};
use area::{DataArea, Placement};
use op_mix::OpMix;
use outcome::snapshot;
use pacing::{Paced, Unpaced};
use state::{Draw, Durability, Faults, PacingState, SlotTable, Tallies, WindowState, Worker, WriteState};
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

/// Runs one worker to the end on the engine `kind` names. Called on the worker's own
/// thread. The loop is generic over the engine; here, in the I/O crate, is where each
/// engine's loop is instantiated, so that it is compiled with this crate's optimisation
/// (Cargo.toml's release profile): instantiated in the crate above, which builds at
/// opt-level 1, null QD 1 took 845 instructions per I/O instead of 749.
pub fn run_on(kind: crate::io::engine::EngineKind, plan: WorkerPlan, control: &RunControl) -> WorkerResult {
    struct RunWorker<'a>(WorkerPlan, &'a RunControl);
    impl crate::io::engine::WithEngine for RunWorker<'_> {
        type Output = WorkerResult;
        fn with<E: Engine + 'static>(self) -> WorkerResult {
            run::<E>(self.0, self.1)
        }
    }
    kind.dispatch(RunWorker(plan, control))
}

/// Runs one worker to the end on engine `E` (`run_on` for the engines of a kind; the tests'
/// and benches' own engines here).
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
    let pacing_latency = worker.paced.rate.is_some().then(PacingLatency::new);
    let replay_timed = worker.draw.replay_timed;
    let replay_lag = replay_timed.then(OpStats::new);
    if worker.paced.rate.is_some() || replay_timed {
        // A sleep before a due time may overshoot by the thread's timer slack (50 µs by
        // default): the pacer sleeps to shortly before it, then spins, and asks for none.
        let _ = nix::sys::prctl::set_timerslack(1);
    }
    let Some(start_ns) = control.wait_for_start(true) else {
        return worker.finish(control, WorkerStop::Stopped, 0, CpuTimes::default());
    };
    let cpu_start = rusage::thread_cpu();
    let ramp_ns = worker.window.ramp_ns;
    worker.window.ramp_end_ns = (ramp_ns > 0).then(|| start_ns.saturating_add(ramp_ns));
    let deadline_ns =
        worker.window.duration_ns.map_or(u64::MAX, |d| start_ns.saturating_add(ramp_ns).saturating_add(d));
    // The policy is chosen once: an unpaced run compiles to a loop with no pacing in it.
    // So is drawing ahead (`AHEAD`): a reader's loop has none of it.
    // And so is a block-size mix (`MIX`): a run of one size has none of it.
    let ahead = !E::CAPS.completes_inline && worker.io.ahead.is_some();
    // (`--write-iolog` records in the `MIX` loop: the others have no test for it.)
    let mixed = worker.draw.sizes.is_some() || worker.draw.replay.is_some() || worker.tallies.iolog.is_some();
    let (stop, end_ns) = if let Some(lag) = replay_lag {
        // A timed replay, out of line: the other policies' loops are compiled as before.
        run_replayed(&mut worker, control, deadline_ns, start_ns, lag, ahead)
    } else if worker.paced.think.is_some() || worker.paced.rate.is_some() {
        let mut pacing = Paced::new(worker.paced.think, worker.paced.rate, start_ns, pacing_latency);
        let (stop, end_ns) = match (ahead, mixed) {
            (true, false) => worker.run_loop::<_, true, false>(control, deadline_ns, &mut pacing),
            (false, false) => worker.run_loop::<_, false, false>(control, deadline_ns, &mut pacing),
            (true, true) => worker.run_loop::<_, true, true>(control, deadline_ns, &mut pacing),
            (false, true) => worker.run_loop::<_, false, true>(control, deadline_ns, &mut pacing),
        };
        worker.paced.pacing = pacing::Pacing::counts(&pacing, end_ns);
        // Stopped before the ramp's end: nothing was measured, the lateness neither.
        if worker.window.ramp_end_ns.is_some() {
            pacing::Pacing::reset_figures(&mut pacing);
        }
        worker.paced.pacing_latency = pacing::Pacing::take_latency(&mut pacing);
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
    if worker.window.ramp_end_ns.is_some() {
        worker.end_ramp(0);
    }
    worker.close_record();
    // `--end-fsync`: the window of a worker that ran to its end takes in its flushes.
    let end_ns = if worker.durability.end_fsync
        && E::CAPS.touches_storage
        && matches!(stop, WorkerStop::Deadline | WorkerStop::Done)
    {
        worker.end_fsync(control, end_ns)
    } else {
        end_ns
    };
    let cpu = rusage::thread_cpu().since(&worker.window.window_cpu_start.unwrap_or(cpu_start));
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
    let ios = worker.draw.replay.as_ref().map_or_else(|| Arc::from(Vec::new()), |c| Arc::clone(&c.ios));
    let mut pacing = replay::Replayed::new(ios, start_ns, lag);
    let (stop, end_ns) = if ahead {
        worker.run_loop::<_, true, true>(control, deadline_ns, &mut pacing)
    } else {
        worker.run_loop::<_, false, true>(control, deadline_ns, &mut pacing)
    };
    worker.paced.pacing = pacing::Pacing::counts(&pacing, end_ns);
    if worker.window.ramp_end_ns.is_some() {
        pacing::Pacing::reset_figures(&mut pacing);
    }
    worker.paced.pacing_latency = pacing::Pacing::take_latency(&mut pacing);
    (stop, end_ns)
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
