//! The result of a run as one plain-data document: what the JSON output is
//! (docs/json.md describes every field) and what the text report formats.
//! Built once by `run/assemble.rs` from the merged statistics; reports only
//! read it. `merge` combines whole results (hosts of a cluster run, `iopulse merge`);
//! `load` reads one from a file, bounded, and `figures` judges what it says.

pub use crate::cpu_state::CpuState;
pub use crate::host::environment::Environment;

pub mod figures;
pub mod io_log;
pub mod jobs;
pub mod load;
pub mod merge;
pub mod metadata;
pub mod named;
pub mod profile_steps;

use crate::placement::TopologySummary;

pub use crate::schedule::start_at::StartAtInfo;
use crate::spec::Spec;
pub use crate::stats::coverage::Coverage;
use crate::stats::{CpuTimes, OpSummary};
use crate::targets::{Allocation, DirectOutcome, TargetKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON layout; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// Wall-clock time the measurement window opened (the start line's release), ns since
    /// the Unix epoch; 0 in results of versions that did not record it. What `iopulse merge`
    /// and cluster runs compare to say how far apart the windows were.
    #[serde(default)]
    pub window_start_unix_ns: u64,
    /// `--start-at`: the wall-clock time asked for, and how late the window opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<StartAtInfo>,
    pub spec: Spec,
    pub environment: Environment,
    pub engine: EngineInfo,
    pub targets: Vec<TargetInfo>,
    /// O_DIRECT over the whole run: requested, effective on every target, and why not.
    pub direct: DirectOutcome,
    /// The run's I/Os reached its targets. False with an engine that moves no bytes (null):
    /// no target was created, laid out, written or opened, and the figures are iopulse's
    /// own ceiling, not storage's. True in results of versions that did not record it.
    #[serde(default = "storage_touched_default")]
    pub storage_touched: bool,
    /// Length of the measurement window: from the start line (or the ramp's end) to the
    /// stop; with a steady state reached, the steady window's length (see `steady_state`).
    pub window_ns: u64,
    /// `--ramp`: how long I/O ran before the window without being counted (absent: no ramp).
    /// `window_start_unix_ns` is the ramp's end; time-series rows count from the release.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_ns: u64,
    /// `--ramp`: I/Os completed during the ramp, in no figure of the result.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_ops: u64,
    /// `--steady-state`: whether, when and over which window the run was steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateInfo>,
    pub stop_reason: StopReason,
    pub interrupted: bool,
    pub read: OpSummary,
    pub write: OpSummary,
    /// Read and write together (flushes are not in it: they move no bytes).
    pub total: OpSummary,
    /// `--fsync-every`, `--fdatasync-every`: the flushes, an operation of their own (ops,
    /// rate, latency; no bytes). Absent when the run issued none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<OpSummary>,
    /// `--trim-percent`: the trims, an operation of their own (ops, bytes discarded, rate,
    /// latency; not in `total`). Absent when the run asked for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    /// `--bssplit`, `--block-align`: the figures of each size, ascending, over the
    /// measured window (absent without a mix). Per-size ops and bytes sum to the totals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_sizes: Vec<BlockSizeFigures>,
    /// `--distribution zoned` or `zoned-abs`: each zone's share of the I/Os, asked and
    /// achieved (over the whole run, ramp included; absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<ZoneShare>,
    pub cpu: CpuInfo,
    /// The CPU's state over the window: governor, boost, SMT, frequencies of the workers'
    /// CPUs, steal and other work on the machine (null in results of versions before it).
    #[serde(default)]
    pub cpu_state: Option<CpuState>,
    /// Blocks accessed / blocks in the region, and how concentrated the access was.
    pub coverage: Option<Coverage>,
    /// Time spent making writes durable after the window (mmap msync, --fsync-on-close);
    /// absent when nothing was synced. Never part of the I/O figures.
    #[serde(default)]
    pub durability: Option<Durability>,
    pub workers: Vec<WorkerInfo>,
    /// The queue depth really achieved (Little's law), next to the requested one in `engine`.
    #[serde(default)]
    pub achieved_queue_depth: AchievedQueueDepth,
    /// The tool's own time between a completion and the next submission (unpaced runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_time: Option<ToolTime>,
    /// The queue's depth at each issue and the I/Os per submitting call and per reap,
    /// counted (fio-json's iodepth maps are their shares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_depths: Option<IoDepths>,
    pub histograms: Histograms,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    /// What stopped the run, when something failed.
    pub error: Option<String>,
    /// The machine's topology and how workers were placed (per worker: `workers[].placement`).
    #[serde(default)]
    pub placement: PlacementInfo,
    /// With `--verify`: what was checked and what failed.
    pub verification: Option<VerificationInfo>,
    /// With `--dedupe-ratio` or `--compress-ratio`: what was asked and what the writes
    /// produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_reduction: Option<DataReductionInfo>,
    /// What the run's writes and layouts put on storage, and what a store that dedupes or
    /// compresses can make of it. Absent when the run wrote and laid out nothing (and in
    /// results of versions before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_data: Option<WriteDataInfo>,
    /// The run read holes or unwritten extents it did not lay out (`--keep-holes`, or a
    /// file it could not lay out): reads of them never reach the device, so every figure
    /// is marked by this note. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holes_read: Option<String>,
    /// Think time and rate limit, when asked for.
    #[serde(default)]
    pub pacing: Option<PacingInfo>,
    /// `iopulse replay`: the trace, its timing and each I/O's lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayInfo>,
    /// `--write-iolog`: the I/Os issued (written by the report, not part of the document).
    #[serde(skip)]
    pub iolog: Option<std::sync::Arc<io_log::IoLog>>,
    /// One row per interval (`--timeseries`, `--interval`, or a live line on a terminal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_series: Vec<crate::stats::interval::TimeSeriesRow>,
    /// Set only by `iopulse merge` and cluster runs: the results this document combines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedSource>>,
    /// Set only with `merged_from`: how far apart the combined runs' windows were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_skew: Option<WindowSkew>,
    /// Set only by a cluster run (MPI): every rank's figures and result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterInfo>,
    /// Failed I/Os per op type and errno (all of them, also with `--continue-on-error`).
    #[serde(default)]
    pub io_errors: crate::stats::io_errors::ErrorSummary,
    /// Workers left behind: an I/O that did not complete within `--io-timeout`, or a
    /// worker that had not stopped a second after SIGINT/SIGTERM. Their figures are
    /// not in the result; the process exited without waiting for them.
    #[serde(default)]
    pub stuck_io: Vec<StuckIo>,
    /// Memory the run planned for (computed before it started) and the memory available.
    #[serde(default)]
    pub memory: Option<crate::host::memory::MemoryEstimate>,
    /// `--expect`: each expectation judged against this result (absent without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationOutcome>,
}

/// One `--expect` item and what the run made of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectationOutcome {
    /// As given, spaces removed: `read.p99<=2ms`.
    pub expectation: String,
    /// The figure's name (`read.p99`).
    pub figure: String,
    /// `<=`, `>=`, `<` or `>`.
    pub comparison: String,
    /// The bound in the figure's unit.
    pub bound: f64,
    pub unit: named::Unit,
    /// The run's figure (null: the run has none, e.g. a read latency without reads).
    pub value: Option<f64>,
    pub passed: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `--steady-state`: the criterion, its window, and what the run did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SteadyStateInfo {
    /// As given: `iops:2%`, `bw_slope:0.5%`, `lat:100`.
    pub criterion: String,
    pub metric: crate::stats::steady_state::Metric,
    pub test: crate::stats::steady_state::Test,
    pub window_intervals: u32,
    pub window_ns: u64,
    pub reached: bool,
    /// End of the steady window, from the release (ramp included); the run stopped then.
    pub reached_at_ns: Option<u64>,
    /// The window judged: the steady one, else the last full one (absent: never full).
    pub window: Option<SteadyWindow>,
    /// The result's `read`, `write`, `total` and `window_ns` are the steady window's.
    pub figures_are_window: bool,
    /// The whole run's figures (after the ramp), when the result's are the window's.
    pub whole_run: Option<WholeRun>,
}

/// The window the steady-state test judged.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SteadyWindow {
    /// Its start and end, from the release.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The test's figures: mean, largest deviation, slope per second, figure and bound.
    pub test: crate::stats::steady_state::WindowFigures,
    /// From the merged interval histograms of its rows.
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
}

/// A run's figures over its whole window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WholeRun {
    pub window_ns: u64,
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
}

/// A worker that was abandoned, and the I/O it was waiting for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StuckIo {
    pub worker: u32,
    /// `io_timeout`, `signal` (not stopped a second after the signal) or `no_stop`.
    pub cause: String,
    /// The I/O it was waiting for (one of them when several were in flight).
    pub op: Option<String>,
    pub target: Option<String>,
    pub offset_bytes: Option<u64>,
    /// How long that I/O had been in flight when the worker was abandoned.
    pub in_flight_ns: u64,
    /// I/Os the worker had in flight.
    pub in_flight_ios: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PacingInfo {
    pub think: Option<ThinkInfo>,
    pub rate: Option<RateInfo>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThinkInfo {
    pub mode: crate::schedule::think::ThinkMode,
    pub every: u32,
    pub fixed_ns: Option<u64>,
    pub adaptive_percent: Option<u32>,
    /// Thinks, all workers together.
    pub thinks: u64,
    /// Think time asked for, all workers together.
    pub requested_ns: u64,
    /// Think time really spent (sleep overshoots are in it), all workers together.
    pub spent_ns: u64,
    /// Share of the workers' time in the window spent thinking.
    pub share_of_run: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RateInfo {
    pub given_as: crate::schedule::think::RateGivenAs,
    /// The target was given for the whole run (`--rate-total`).
    pub total: bool,
    pub target_iops_per_worker: f64,
    pub target_iops: f64,
    pub achieved_iops: f64,
    /// Scheduled I/Os not yet issued when the window closed, all workers together: the
    /// queue an open-loop client would have built (none is skipped).
    pub backlog_at_end: u64,
    /// The most any I/O was issued behind its due time (its latency includes it).
    pub max_behind_ns: u64,
    /// The tool's own lateness: per counted I/O, the time from its due time to its
    /// submission (in the headline latency, which counts from the due time; not the
    /// storage's doing). Absent in results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<PacedLatency>,
    /// Per counted I/O, the time from its submission to its completion: what the
    /// storage took, without the tool's lateness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<PacedLatency>,
    /// The target rate was reached.
    pub reached: bool,
    /// What latency is measured from under a rate limit.
    pub latency_from: String,
}

/// A replayed trace (`iopulse replay`): what it held, how it was timed and placed, and
/// how late the replayer issued each I/O against its due time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayInfo {
    /// The trace's files (a blktrace: every CPU's).
    pub trace_files: Vec<String>,
    pub format: crate::trace::TraceFormat,
    /// The files (iolog) or devices (blktrace) the trace names.
    pub names: Vec<String>,
    /// The trace's reads, writes, trims and flushes (each replayed once; a blktrace's
    /// PREFLUSH and FUA writes each add a flush). The trims and flushes issued are the
    /// result's `trim` and `flush`.
    pub reads: u64,
    pub writes: u64,
    #[serde(default)]
    pub trims: u64,
    #[serde(default)]
    pub flushes: u64,
    /// Entries not replayed: empty I/Os.
    pub skipped: crate::trace::Skipped,
    /// I/Os issued (all of the trace's unless the run stopped early).
    pub issued: u64,
    /// `--speed`; absent: `--as-fast-as-possible`.
    pub speed: Option<f64>,
    /// The trace's first I/O to its last one's issue, as recorded.
    pub trace_span_ns: u64,
    /// The same at `--speed`: when the last I/O was due (absent as fast as possible).
    pub scheduled_span_ns: Option<u64>,
    /// The replay: from the start line to the last completion.
    pub replay_ns: u64,
    /// `replay_ns` against `scheduled_span_ns`, in percent (positive: the replay took longer).
    pub duration_error_percent: Option<f64>,
    pub remap: crate::trace::remap::Remap,
    /// The end of the trace's furthest I/O, and the bytes of the target it was put on.
    pub trace_extent_bytes: u64,
    pub target_bytes: u64,
    /// The trace did not fit: its offsets were remapped (`remap`).
    pub remapped: bool,
    /// Per I/O issued, its due time to its submission: the replayer's own lateness, not
    /// in the latencies (absent as fast as possible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<PacedLatency>,
}

/// One of the two parts of a paced run's latency (`RateInfo::lateness`, `service`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PacedLatency {
    /// I/Os measured: every counted I/O of the window.
    pub ios: u64,
    pub latency_ns: crate::stats::LatencySummary,
    /// Its HDR histogram, encoded as those of `histograms` (ns).
    pub histogram: String,
}

/// The data a run wrote (and laid out).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WriteDataInfo {
    /// `--write-pattern` (its default: `unique`), or with `--verify` the verify pattern.
    pub pattern: crate::data::Pattern,
    /// Each block begins with the 48-byte verify header (`--verify`).
    pub verified: bool,
    /// What a deduplicating or compressing store can make of it, as measured
    /// (docs/usage.md, "Write data and ratios").
    pub reducibility: crate::data::ReducibilityClass,
    /// `unique` data: its period (a stretch of a file shorter than this holds no base byte
    /// twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_bytes: Option<u64>,
}

/// `--dedupe-ratio` and `--compress-ratio`: asked, and produced by the counted writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DataReductionInfo {
    pub dedupe_ratio_asked: Option<f64>,
    pub compress_ratio_asked: Option<f64>,
    /// 4 KiB chunks the counted writes carried.
    pub chunks_written: u64,
    /// Of those, chunks that were duplicates by design.
    pub duplicate_chunks_written: u64,
    /// Chunks written per distinct chunk among them (`data::dedupe_ratio_produced`).
    pub dedupe_ratio_produced: f64,
    /// Bytes of a chunk to its random bytes (the rest are zeros): the ratio by construction,
    /// which a compressor reaches within its own overhead.
    pub compress_ratio_produced: f64,
}

/// The outcome of `--verify`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VerificationInfo {
    pub pattern: crate::data::Pattern,
    pub seed: u64,
    /// Blocks read and checked.
    pub operations: u64,
    pub failures: u64,
    pub success_percent: f64,
    /// Failures per kind: never_written_zeros, never_written_stale, other_run,
    /// misplaced, torn, corrupted, lost_write.
    pub failures_by_kind: BTreeMap<String, u64>,
    /// The first failed blocks in full (up to --verify-max-reports).
    pub mismatches: Vec<MismatchInfo>,
    /// Reads were also checked against the write this run made last to the block.
    pub lost_write_detection: bool,
    /// How blocks are kept from being written by two workers at once.
    pub ownership: String,
    /// Measured CPU cost of stamping one block for a write (pattern, header, crc32c).
    pub stamp_ns_per_write: u64,
    /// Measured CPU cost of checking one block read (header and crc32c).
    pub check_ns_per_read: u64,
    /// Those costs times the writes and reads, as a share of the workers' CPU time in
    /// the window: about how much faster the run would have been without --verify.
    pub estimated_slowdown_percent: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MismatchInfo {
    pub target: String,
    pub offset_bytes: u64,
    pub failure: crate::data::verify::Failure,
    /// Offset within the block of the 16-byte windows below.
    pub window_at: u32,
    pub expected_hex: String,
    pub found_hex: String,
}

/// Mean I/Os in flight over the window by Little's law (IOPS × mean latency).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AchievedQueueDepth {
    /// Summed over all workers.
    pub total: f64,
    /// `total` / number of workers: compare with `engine.effective_queue_depth`.
    pub mean_per_worker: f64,
}

/// The tool's own time: each worker's wall time from the clock reading that ends one
/// I/O's latency (after the call that reaped it) to the one that starts the next's
/// (before the call that hands it to the kernel): its accounting, the next offset and the
/// data. Every latency excludes it; at queue depth 1 it is what the tool takes from the
/// IOPS. Measured on the clock readings every I/O has anyway (no extra reading).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolTime {
    /// Summed over the workers, ns.
    pub total_ns: u64,
    /// `total_ns` per completed I/O.
    pub per_io_ns: f64,
    /// `total_ns` over the workers' windows together (window × workers): the share of
    /// each worker's time that was the tool's own.
    pub share_of_window: f64,
}

/// How deep the queue ran, counted per event by exact value: each entry is a
/// `[value, count]` pair, ascending, zeros left out; the value 64 stands for 64 or more.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoDepths {
    /// I/Os by the number in flight once each was issued (itself included).
    pub at_issue: Vec<(u32, u64)>,
    /// Submitting system calls by the I/Os each carried, as the engine made them (a batch
    /// the worker handed over is split into calls of at most `engine.setup`'s
    /// `submit_batch_max`); an inline engine's every I/O is one call of 1.
    pub per_submit: Vec<(u32, u64)>,
    /// Reaps that returned completions, by how many each returned.
    pub per_reap: Vec<(u32, u64)>,
}

/// One result a merged document was made from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedSource {
    /// The file as given to `iopulse merge`.
    pub file: String,
    pub hostname: String,
    pub started_at: String,
    pub window_ns: u64,
    pub seed: u64,
    pub ops: u64,
    pub iops: f64,
    /// Its `window_start_unix_ns` (0: not recorded).
    #[serde(default)]
    pub window_start_unix_ns: u64,
}

/// How far apart the windows of combined runs were, from their `window_start_unix_ns`
/// and `window_ns` (wall clocks: as close as the hosts' clocks agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSkew {
    /// Latest window start − earliest window start.
    pub start_ns: u64,
    /// Latest window end − earliest window end.
    pub end_ns: u64,
    /// How long every window was open at once: earliest end − latest start (0 if never).
    pub overlap_ns: u64,
    /// The results this was computed from (those that recorded their window start).
    pub results: u32,
}

/// A cluster run: the ranks of an MPI job, each with its own figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClusterInfo {
    /// How the ranks were launched and met: "mpi".
    pub launcher: String,
    /// Ranks in the job.
    pub size: u32,
    /// The distinct hosts, in rank order.
    pub hosts: Vec<String>,
    /// A rank whose IOPS are below this fraction of the median rank's is a straggler.
    pub straggler_below_median: f64,
    /// Median of the ranks' IOPS (ranks with a result).
    pub median_iops: f64,
    pub ranks: Vec<RankInfo>,
}

/// One rank of a cluster run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankInfo {
    pub rank: u32,
    pub host: String,
    /// The exit code the rank's run alone would have had.
    pub exit_code: i32,
    /// All op types together.
    pub ops: u64,
    pub iops: f64,
    pub bw_bytes_per_sec: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub window_start_unix_ns: u64,
    pub window_ns: u64,
    /// IOPS below `straggler_below_median` × the median rank's.
    pub straggler: bool,
    /// What stopped this rank, when something failed.
    pub error: Option<String>,
    /// The rank's whole result, as its own run would have written it (null if it had none).
    pub result: Option<Box<RunResult>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EngineInfo {
    pub name: String,
    pub requested_queue_depth: u32,
    /// Slots per worker the engine really used (1 for engines that complete inline).
    pub effective_queue_depth: u32,
    /// How the engine was set up (worker 0's), e.g. {"registered_buffers": "true"}.
    pub setup: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: String,
    pub kind: TargetKind,
    pub size_bytes: u64,
    pub blocks: u64,
    pub filesystem: Option<String>,
    pub device: Option<String>,
    pub mount_point: Option<String>,
    pub created: bool,
    pub laid_out_bytes: u64,
    pub direct: DirectOutcome,
    /// Regular files: how much of the region held written data when the window opened
    /// (reads of holes and unwritten extents never reach the device); `None` for block
    /// devices, and in results of versions that did not measure it.
    #[serde(default)]
    pub allocation: Option<Allocation>,
    /// The region's page-cache residency when the window opened and closed, and whether its
    /// cache was dropped before the window (`crate::targets::PageCache`); `None` in results of
    /// versions that did not measure it.
    #[serde(default)]
    pub page_cache: Option<crate::targets::PageCache>,
    /// What the block device under the target counted over the window, and the share of
    /// this run's reads and writes it saw (`crate::targets::DeviceWitness`); `None` when no
    /// block device is under the target (tmpfs, the null engine), and in results of versions
    /// that did not measure it.
    #[serde(default)]
    pub device_witness: Option<crate::targets::DeviceWitness>,
    /// The target was a temporary file removed after the run (the embedded default).
    pub removed_after_run: bool,
    /// This target's share of the figures.
    pub read: OpSummary,
    pub write: OpSummary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The duration ran out.
    Duration,
    /// Every worker finished its share (runs until covered).
    Complete,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// An I/O or the engine failed.
    Error,
    /// `--steady-state` was reached.
    SteadyState,
}

/// Results of versions that did not record `storage_touched` ran storage engines only.
fn storage_touched_default() -> bool {
    true
}

/// CPU time of the run (getrusage). The window's figures (`window`, `other_ns`, `per_io_ns`,
/// `cores_busy`) are the whole process's CPU time from the release of the start line to
/// the moment every worker has stopped: on Linux that counts every thread of the process,
/// io_uring's kernel threads (io-wq workers, the SQPOLL thread) included, and nothing of
/// set-up or layout.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CpuInfo {
    /// CPU time of the worker threads inside the window (each thread's own getrusage).
    pub workers: CpuTimes,
    /// CPU time of the whole process over its life, set-up and layout included.
    pub process: CpuTimes,
    /// CPU time of the whole process inside the window (zero in results of versions that
    /// did not record it).
    #[serde(default)]
    pub window: CpuTimes,
    /// `window` − `workers` (user + sys): the sampler, the watchdog and the coordinator,
    /// and the kernel's I/O threads (io_uring io-wq, SQPOLL). Only the total is given: the
    /// kernel splits user from sys separately for a thread and for the process.
    #[serde(default)]
    pub other_ns: u64,
    /// The whole process's CPU time in the window per completed I/O (`window` / ops).
    pub per_io_ns: f64,
    /// The worker threads' CPU time per completed I/O (`workers` / ops): the figure fio's
    /// per-job CPU compares with (it counts its job threads only).
    #[serde(default)]
    pub workers_per_io_ns: f64,
    /// The whole process's CPU time in the window as a share of the window, in cores
    /// (1.0 = one core busy).
    pub cores_busy: f64,
}

/// Making the run's writes durable, after the I/O window closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Durability {
    /// The engine's own flush (mmap: msync of each worker's mappings), longest worker, ns.
    pub msync_ns: Option<u64>,
    /// `--fsync-on-close`: fsync of every target once all workers stopped, ns.
    pub fsync_ns: Option<u64>,
    /// Both together: the time writes took to become durable, outside the window.
    pub sync_ns: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub index: u32,
    pub read: OpSummary,
    pub write: OpSummary,
    /// This worker's flushes (absent when the run issued none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<OpSummary>,
    /// This worker's trims (absent when the run asked for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    pub cpu: CpuTimes,
    pub stop: String,
    /// Where this worker was placed and where it was seen running.
    #[serde(default)]
    pub placement: WorkerPlacementInfo,
    /// This worker's mean I/Os in flight (Little's law).
    #[serde(default)]
    pub achieved_queue_depth: f64,
}

/// The machine's topology and the placement flags' effect.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlacementInfo {
    /// Which reader produced the topology: "sysfs" or "hwloc" (empty if it could not be read).
    pub backend: String,
    pub topology: TopologySummary,
    /// Online CPUs this process may use (sched_getaffinity).
    pub allowed_cpus: Vec<u32>,
    /// Some worker is pinned to a CPU set.
    pub pinned: bool,
    /// "scatter" or "compact" when workers are pinned to single CPUs.
    pub policy: Option<String>,
}

/// One worker's placement: planned, then seen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerPlacementInfo {
    /// CPUs it was pinned to; null: not pinned.
    pub cpus: Option<Vec<u32>>,
    /// Its NUMA node (the node it was placed on, or its single CPU's node).
    pub node: Option<u32>,
    /// Its buffers were bound to `node` (set_mempolicy, mbind).
    pub memory_bound: bool,
    /// The CPU it was running on when it finished (sched_getcpu).
    pub cpu_seen: Option<u32>,
    /// The node its buffers' first page was on after set-up (get_mempolicy).
    pub buffer_node_seen: Option<u32>,
}

/// The merged latency histograms, serialized so results can be merged exactly later.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Histograms {
    /// Always "hdrhistogram-v2-deflate-base64".
    pub encoding: String,
    pub unit: String,
    pub read: String,
    pub write: String,
    /// The flushes' latencies (absent when the run issued none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<String>,
    /// The trims' latencies (absent when the run asked for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
    /// `--bssplit`, `--block-align`: each size's latencies (absent without a mix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_sizes: Vec<SizeHistograms>,
}

/// One size's latency histograms (encoded as the others).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeHistograms {
    pub size_bytes: u64,
    pub read: String,
    pub write: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
}

/// One zone of a zoned distribution: the share of the I/Os it was asked to get and got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneShare {
    /// Zones per direction: whose zone it is (`read`, `write`, `trim`; trims are drawn from
    /// the writes' zones when they have none of their own). Absent when one set of zones
    /// serves every I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    pub io_percent_asked: f64,
    /// I/Os drawn in the zone, by every worker.
    pub ios: u64,
    /// Of the I/Os drawn from its set of zones (its direction's).
    pub io_percent_achieved: f64,
}

impl ZoneShare {
    /// The shares of zones asked `asked` (percent) that received `ios` I/Os each, of
    /// `direction` (`None`: one set for every I/O).
    pub fn of(direction: Option<&str>, asked: &[f64], ios: &[u64]) -> Vec<ZoneShare> {
        let mut zones: Vec<ZoneShare> = asked
            .iter()
            .zip(ios)
            .map(|(&a, &n)| ZoneShare {
                direction: direction.map(str::to_string),
                io_percent_asked: a,
                ios: n,
                io_percent_achieved: 0.0,
            })
            .collect();
        ZoneShare::refigure(&mut zones);
        zones
    }

    /// Each zone's achieved share, of the I/Os of the zones of its direction.
    pub fn refigure(zones: &mut [ZoneShare]) {
        for zone in 0..zones.len() {
            let total: u64 = zones.iter().filter(|z| z.direction == zones[zone].direction).map(|z| z.ios).sum();
            let n = zones[zone].ios;
            zones[zone].io_percent_achieved = if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 };
        }
    }
}

/// `--bssplit`, `--block-align`: one size's figures, and its share of each op type's
/// I/Os: achieved, and what the split asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSizeFigures {
    pub size_bytes: u64,
    pub read: OpSummary,
    pub write: OpSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    /// Percent of the run's reads that had this size (0 when there were none).
    pub read_share_percent: f64,
    pub write_share_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_share_percent: Option<f64>,
    /// Percent of reads (writes, trims) the split asked to have this size.
    pub read_asked_percent: f64,
    pub write_asked_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_asked_percent: Option<f64>,
}
