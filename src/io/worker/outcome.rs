//! What a worker hands back, once, at the end: why it stopped, its figures per target, its
//! failure if any, and the counts of pacing and verification. Plain data: nothing here
//! measures or formats.

use super::SizeStats;
use super::iolog;
use crate::io::data::verify::{Mismatch, VerifyCounts};
use crate::io::engine::Op;
use crate::io::stats::coverage::CoverageTracker;
use crate::io::stats::depth_counts::DepthTally;
use crate::io::stats::interval::Snapshot;
use crate::io::stats::io_errors::ErrorCounts;
use crate::io::stats::{CpuTimes, OpStats};

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
pub(super) fn snapshot(stats: &[TargetStats], into: &mut Snapshot) {
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
    pub ops: OpTotals,
    pub per_target: Vec<TargetStats>,
    pub coverage: Option<CoverageTracker>,
    /// Clock time it stopped issuing (deadline, last completion, or when it saw the stop word).
    pub end_ns: u64,
    pub machine: MachineSeen,
    pub stop: WorkerStop,
    pub failures: Failures,
    pub engine: EngineReport,
    pub data: DataOutcome,
    pub paced: PacedOutcome,
    /// `--ramp`: I/Os completed during the ramp (not counted in `read`, `write`).
    pub ramp_ops: u64,
    /// `--bssplit`, `--block-align`: the figures per size, ascending (empty without a mix).
    pub per_size: Vec<SizeStats>,
    /// `--distribution zoned`: I/Os drawn per zone (empty otherwise).
    pub zone_ios: Vec<u64>,
    /// `--write-iolog`: the I/Os it issued.
    pub iolog: Option<iolog::IoRecorder>,
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

/// The worker's counted I/Os per op type over the window (flushes and trims: `OpStats::unused` when the run asked for none).
/// A part of `WorkerResult`.
pub struct OpTotals {
    /// All of its targets together.
    pub read: OpStats,
    pub write: OpStats,
    pub flush: OpStats,
    /// Trims (`--trim-percent`; empty and tiny without).
    pub trim: OpStats,
}

/// What the engine said of itself: its set-up facts and its notes.
/// A part of `WorkerResult`.
pub struct EngineReport {
    pub engine_setup: Vec<(String, String)>,
    /// Notes from the engine (fallbacks taken at set-up), said once by the coordinator.
    pub engine_notes: Vec<String>,
}

/// What failed: the I/O or the engine that stopped the worker, and every failed I/O counted.
/// A part of `WorkerResult`.
pub struct Failures {
    pub failure: Option<IoFailure>,
    /// The engine could not start, or stopped working mid-run.
    pub engine_error: Option<String>,
    /// Failed I/Os per op type and errno.
    pub errors: ErrorCounts,
}

/// The worker's CPU time, where it ran and its buffers were, its own time and the depths it kept.
/// A part of `WorkerResult`.
pub struct MachineSeen {
    pub cpu: CpuTimes,
    /// The CPU the worker was on when it finished (sched_getcpu).
    pub cpu_seen: Option<u32>,
    /// The NUMA node its buffers' first page is on (get_mempolicy).
    pub buffer_node_seen: Option<u32>,
    /// The worker's own time in the window, between a completion and the next submission.
    pub own_ns: u64,
    /// The depth at each issue and the I/Os each submitting call and reap carried.
    pub depths: DepthTally,
}

/// What became of the data: verification's counts, mismatches and cost, the duplicate chunks written, and the time taken to make writes durable.
/// A part of `WorkerResult`.
pub struct DataOutcome {
    /// Verification counts and the first mismatches (with `--verify`).
    pub verify_counts: VerifyCounts,
    pub mismatches: Vec<Mismatch>,
    /// Measured cost of stamping and checking one verified block.
    pub verify_cost: VerifyCost,
    /// 4 KiB chunks of its counted writes that were duplicates by design (`--dedupe-ratio`).
    pub duplicate_chunks_written: u64,
    /// Time the engine took to make its writes durable after the window (mmap: msync),
    /// when it had anything to do. Not part of the window.
    pub sync_ns: Option<u64>,
}

/// A paced worker's think time, lateness and service time.
/// A part of `WorkerResult`.
pub struct PacedOutcome {
    /// Think time asked for and spent, and how far behind its rate schedule the worker fell (paced runs).
    pub pacing: PacingCounts,
    /// Rate schedules: the worker's lateness and the I/O's service time.
    pub pacing_latency: Option<PacingLatency>,
}
