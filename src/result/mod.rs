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

pub use crate::schedule::start_at::StartAtInfo;
use crate::spec::Spec;
use crate::stats::OpSummary;
pub use crate::stats::coverage::Coverage;
use crate::targets::DirectOutcome;
use serde::{Deserialize, Serialize};

mod cluster;
mod data;
mod latency;
mod machine;
mod pacing;
mod target;

pub use cluster::{ClusterInfo, MergedSource, RankInfo, WindowSkew};
pub use data::{DataReductionInfo, MismatchInfo, VerificationInfo, WriteDataInfo};
pub use latency::{BlockSizeFigures, Histograms, SizeHistograms, SteadyStateInfo, SteadyWindow, WholeRun, ZoneShare};
pub use machine::{AchievedQueueDepth, CpuInfo, IoDepths, PlacementInfo, ToolTime, WorkerInfo, WorkerPlacementInfo};
pub use pacing::{PacedLatency, PacingInfo, RateInfo, ReplayInfo, ThinkInfo};
pub use target::{Durability, EngineInfo, StuckIo, TargetInfo, ToolInfo};

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
