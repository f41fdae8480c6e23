//! The worker's state, in parts by concern: the slots and what is in flight on them, where
//! requests are drawn from, the window's clock, the data of writes, pacing, faults,
//! durability and the tallies kept beside the figures. Each part is a plain struct of the
//! worker's own; the loop reaches its fields directly (a field path costs what a flat
//! field did), so the parts name concerns without adding a call per I/O.
//!
//! What it must not do: hold anything allocated after the start line, or anything another
//! thread writes (the heartbeat and the shared error count are the coordinator's, reached
//! through `Arc`s made before the start).

use super::*;

/// The worker's state. `engine` is declared first so it is dropped (and has drained any
/// I/O in flight) before the buffers it points into (`io.buffers`) are freed.
pub(super) struct Worker<E: Engine> {
    pub(super) engine: E,
    pub(super) io: SlotTable,
    pub(super) draw: Draw,
    pub(super) files: Box<[WorkerFile]>,
    /// Figures per file (index as `files`); totals are merged at the end.
    pub(super) stats: Box<[TargetStats]>,
    pub(super) block_size_bytes: u64,
    pub(super) index: u32,
    pub(super) window: WindowState,
    pub(super) writes: WriteState,
    pub(super) paced: PacingState,
    pub(super) faults: Faults,
    pub(super) durability: Durability,
    pub(super) tallies: Tallies,
}

/// The slots: their buffers, what is in flight on each, and the requests prepared for them.
pub(super) struct SlotTable {
    pub(super) buffers: SlotBuffers,
    pub(super) slots: Box<[SlotState]>,
    pub(super) completions: Box<[Completion]>,
    /// Slots with no I/O in flight and nothing prepared in them, as a stack (capacity:
    /// the slots; never grows).
    pub(super) free: Vec<u32>,
    /// Queued engines, unpaced: the slots handed to the engine since the last submitting
    /// call. Their latency starts at the clock reading just before that call
    /// (`stamp_submission`), not at the reap that freed their slot, so the worker's own
    /// time between the two is not counted as the device's (capacity: the slots).
    pub(super) unstamped: Box<[u32]>,
    pub(super) unstamped_len: usize,
    /// I/Os handed to the engine since its last submitting call (every pacing; `unstamped`
    /// holds the same count for unpaced runs, but a paced run stamps none).
    pub(super) queued_since_submit: usize,
    /// Queued engines with per-write data: the requests drawn ahead (`Ahead`).
    pub(super) ahead: Option<Ahead>,
    /// Set while `prepare_ahead` draws a request: its pool data (or `unique` keys) is cut
    /// there, in pieces, instead of in `fill_slot`.
    pub(super) cut_later: bool,
}

/// Where the requests come from, and how many may still be drawn.
pub(super) struct Draw {
    pub(super) source: BlockSource,
    pub(super) region_first_block: u64,
    /// I/Os this worker may still draw (`--ops`, `--io-limit`; `u64::MAX` without, and
    /// during a ramp: the ramp's I/Os never count against the budget).
    pub(super) remaining_ops: u64,
    /// `--ramp` with `--ops` or `--io-limit`: the worker's share of the budget, given to
    /// the window at the ramp's end.
    pub(super) window_ops_limit: Option<u64>,
    pub(super) coverage: Option<CoverageTracker>,
    pub(super) mix: OpMix,
    /// `--bssplit`, `--block-align`: each I/O's size and the figures per size.
    pub(super) sizes: Option<size_mix::SizeMix>,
    /// `iopulse replay`: the schedule the requests are drawn from.
    pub(super) replay: Option<replay::ReplayCursor>,
    /// The replay honours the trace's times (`replay::Replayed`).
    pub(super) replay_timed: bool,
}

/// The window's bounds in time, and the ramp before it.
pub(super) struct WindowState {
    pub(super) duration_ns: Option<u64>,
    pub(super) ramp_ns: u64,
    /// `--ramp`: when the ramp ends (clock time), until the worker has reset its figures.
    pub(super) ramp_end_ns: Option<u64>,
    /// I/Os completed during the ramp, counted at the reset.
    pub(super) ramp_ops: u64,
    /// The worker thread's CPU time at the ramp's end: the window's CPU counts from there.
    pub(super) window_cpu_start: Option<CpuTimes>,
}

/// What writes carry: the data plan, their sequences, where their bytes come from, and
/// their verification.
pub(super) struct WriteState {
    pub(super) data: DataPlan,
    /// High bits of this worker's write sequences: worker index and run nonce.
    pub(super) sequence_base: u64,
    pub(super) write_sequence: u64,
    /// Unverified random writes: the pool their data is cut from (`data::RandomPool`).
    pub(super) pool: Option<RandomPool>,
    /// Unverified `unique` writes: the windows of the area they are submitted from.
    pub(super) area: Option<DataArea>,
    /// 4 KiB chunks of counted writes that were duplicates (`--dedupe-ratio`).
    pub(super) duplicate_chunks_written: u64,
    pub(super) verifier: Option<Verifier>,
    pub(super) verify_cost: VerifyCost,
}

/// `--think-time`, `--rate`: the pacing asked for and what it came to.
pub(super) struct PacingState {
    pub(super) think: Option<ThinkSpec>,
    pub(super) rate: Option<RateSpec>,
    pub(super) pacing: PacingCounts,
    pub(super) pacing_latency: Option<PacingLatency>,
}

/// What went wrong: the failure that ended the worker, the engine's word, the errors
/// counted (`--continue-on-error`) and the run's shared count of them.
pub(super) struct Faults {
    pub(super) failure: Option<IoFailure>,
    pub(super) engine_error: Option<String>,
    pub(super) errors: ErrorCounts,
    pub(super) error_limit: u64,
    pub(super) errors_seen: Arc<AtomicU64>,
}

impl Faults {
    /// None yet, with the plan's limit (at least one) and the run's shared count.
    pub(super) fn new(plan: ErrorPlan) -> Self {
        Self {
            failure: None,
            engine_error: None,
            errors: ErrorCounts::default(),
            error_limit: plan.error_limit.max(1),
            errors_seen: plan.errors_seen,
        }
    }
}

/// Flushes owed: `--fsync-every`, `--fdatasync-every`, and `--end-fsync`.
pub(super) struct Durability {
    pub(super) flush: Option<FlushState>,
    pub(super) end_fsync: bool,
}

/// What is tallied beside the figures: intervals, depths, the tool's own time, the I/O
/// log, the buffers' node and the heartbeat.
pub(super) struct Tallies {
    pub(super) interval: Option<IntervalRecorder>,
    /// The depth at each issue, the I/Os per submitting call and per reap (fio's
    /// iodepth maps, counted).
    pub(super) depths: DepthTally,
    /// The clock reading the worker's own time counts from: the last reap's, or the last
    /// submission's.
    pub(super) own_mark_ns: u64,
    /// The tool's own time in the window: the worker's wall time from a completion's clock
    /// reading to the next submission's (`ToolTime`).
    pub(super) own_ns: u64,
    /// `--write-iolog`: the I/Os issued.
    pub(super) iolog: Option<iolog::IoRecorder>,
    pub(super) buffer_node_seen: Option<u32>,
    pub(super) watch: WatchState,
    /// `--trim-percent` is above 0 (the trims' figures are kept).
    pub(super) trimming: bool,
}
