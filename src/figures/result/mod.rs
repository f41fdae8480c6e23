//! The result of a run as one plain-data document: what the JSON output is
//! (docs/json.md describes every field) and what the text report formats.
//! Built once by `coordination/run/assemble.rs` from the merged statistics; reports only
//! read it. `merge` combines whole results (hosts of a cluster run, `iopulse merge`);
//! `load` reads one from a file, bounded, and `figures` judges what it says.

pub use crate::io::cpu_state::CpuState;
pub use crate::io::host::environment::Environment;

pub mod field_path;
pub mod figures;
pub mod io_log;
pub mod jobs;
pub mod load;
pub mod merge;
pub mod meta_document;
pub mod metadata;
pub mod named;
pub mod profile_steps;

pub use crate::io::schedule::start_at::StartAtInfo;
pub use crate::io::stats::coverage::Coverage;
use crate::workload::spec::Spec;
use serde::{Deserialize, Serialize};

mod cluster;
mod data;
mod io_figures;
mod latency;
mod machine;
mod outcome;
mod pacing;
mod target;
mod window;

pub use cluster::{ClusterInfo, Combination, MergedSource, RankInfo, WindowSkew};
pub use data::{DataFacts, DataReductionInfo, MismatchInfo, VerificationInfo, WriteDataInfo};
pub use io_figures::IoFigures;
pub use latency::{BlockSizeFigures, Histograms, SizeHistograms, SteadyStateInfo, SteadyWindow, WholeRun, ZoneShare};
pub use machine::{
    AchievedQueueDepth, CpuInfo, IoDepths, MachineFacts, PlacementInfo, ToolTime, WorkerInfo, WorkerPlacementInfo,
};
pub use outcome::{ExpectationOutcome, RunOutcome};
pub use pacing::{
    PacedLatency, PacingInfo, RateInfo, ReplayCounts, ReplayFit, ReplayInfo, ReplayTiming, Schedule, ThinkInfo,
};
pub use target::{Durability, EngineInfo, StuckIo, TargetInfo, TargetStorage, ToolInfo};
pub use window::{RunWindow, StopReason};

/// Version of the JSON layout; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// A run's document: a few top-level facts and seven sections, each a type of its
/// concern's file, flattened so that the JSON keeps one flat layout (docs/json.md).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub spec: Spec,
    #[serde(flatten)]
    pub machine: MachineFacts,
    pub engine: EngineInfo,
    pub targets: Vec<TargetInfo>,
    #[serde(flatten)]
    pub data: DataFacts,
    #[serde(flatten)]
    pub window: RunWindow,
    #[serde(flatten)]
    pub figures: IoFigures,
    pub workers: Vec<WorkerInfo>,
    pub histograms: Histograms,
    #[serde(flatten)]
    pub outcome: RunOutcome,
    #[serde(flatten)]
    pub schedule: Schedule,
    /// One row per interval (`--timeseries`, `--interval`, or a live line on a terminal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_series: Vec<crate::io::stats::interval::TimeSeriesRow>,
    #[serde(flatten)]
    pub combined: Combination,
}
