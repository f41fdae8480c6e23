//! The result of a run as one plain-data document: what the JSON output is
//! (docs/json.md describes every field) and what the text report formats.
//! Built once by the coordinator from the merged statistics; reports only
//! read it.

pub use crate::coverage::Coverage;
use crate::spec::Spec;
use crate::stats::{CpuTimes, OpSummary};
use crate::target::{DirectOutcome, TargetKind};
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
    pub spec: Spec,
    pub environment: Environment,
    pub engine: EngineInfo,
    pub targets: Vec<TargetInfo>,
    /// O_DIRECT over the whole run: requested, effective on every target, and why not.
    pub direct: DirectOutcome,
    /// Length of the measurement window: from the start line to the stop.
    pub window_ns: u64,
    pub stop_reason: StopReason,
    pub interrupted: bool,
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
    pub cpu: CpuInfo,
    /// Blocks accessed / blocks in the region, and how concentrated the access was.
    pub coverage: Option<Coverage>,
    pub workers: Vec<WorkerInfo>,
    /// The queue depth really achieved (Little's law), next to the requested one in `engine`.
    #[serde(default)]
    pub achieved_queue_depth: AchievedQueueDepth,
    pub histograms: Histograms,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    /// What stopped the run, when something failed.
    pub error: Option<String>,
    /// Set only by `iopulse merge`: the results this document combines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedSource>>,
}

/// Mean I/Os in flight over the window by Little's law (IOPS × mean latency).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AchievedQueueDepth {
    /// Summed over all workers.
    pub total: f64,
    /// `total` / number of workers: compare with `engine.effective_queue_depth`.
    pub mean_per_worker: f64,
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
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: u32,
    pub memory_total_bytes: u64,
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
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CpuInfo {
    /// CPU time of the worker threads inside the window.
    pub workers: CpuTimes,
    /// CPU time of the whole process, set-up and layout included.
    pub process: CpuTimes,
    /// Worker CPU time per completed I/O.
    pub per_io_ns: f64,
    /// Worker CPU time as a share of the window, in cores (1.0 = one core busy).
    pub cores_busy: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub index: u32,
    pub read: OpSummary,
    pub write: OpSummary,
    pub cpu: CpuTimes,
    pub stop: String,
    /// This worker's mean I/Os in flight (Little's law).
    #[serde(default)]
    pub achieved_queue_depth: f64,
}

/// The merged latency histograms, serialized so results can be merged exactly later.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Histograms {
    /// Always "hdrhistogram-v2-deflate-base64".
    pub encoding: String,
    pub unit: String,
    pub read: String,
    pub write: String,
}
