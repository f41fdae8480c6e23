//! A metadata run's result: the tree (its shape, set-up, what was kept or removed), the
//! figures of each operation kind of each phase (the mix is one phase), coverage, and how
//! the run ended. Plain data, written as JSON (docs/metadata.md describes it); reports
//! format it, and nothing here formats.

use crate::io::stats::LatencySummary;
use crate::workload::spec::Spec;
use serde::{Deserialize, Serialize};

/// What the document is: a metadata run's result.
pub const KIND: &str = "iopulse-metadata";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetaResult {
    pub kind: String,
    pub schema_version: u32,
    pub tool_version: String,
    #[serde(flatten)]
    pub window: MetaWindow,
    /// The tree's root.
    pub target: String,
    pub spec: Spec,
    pub tree: TreeInfo,
    /// The mix's window (one phase named `mix`), or each phase in order.
    pub phases: Vec<PhaseResult>,
    /// Files of the tree touched at least once by a measured operation, over its files.
    pub coverage_percent: f64,
    #[serde(flatten)]
    pub messages: MetaMessages,
    /// `--timeseries`, `--interval`: per phase, one row per interval per operation kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_series: Vec<MetaIntervalRow>,
    /// Only in a result of `iopulse merge`: each input, in the order given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MetaMergedSource>>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One input of a merged metadata result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetaMergedSource {
    /// The file as given.
    pub file: String,
    /// Its tree's root.
    pub target: String,
    pub started_at: String,
    pub seed: u64,
    /// Its operations, all phases together.
    pub ops: u64,
    /// Its phases' windows, added.
    pub window_ns: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TreeInfo {
    pub files: u64,
    pub directories: u64,
    pub leaf_directories: u64,
    pub dirs_per_dir: u32,
    pub depth: u32,
    /// The tree was there from an earlier `--keep-tree` run, and used as it was.
    pub reused: bool,
    pub setup_ns: u64,
    pub setup_files_created: u64,
    pub setup_directories_created: u64,
    pub setup_bytes_written: u64,
    /// Kept after the run (`--keep-tree`, or a removal that could not be done).
    pub kept: bool,
    pub removed_files: u64,
    pub removed_directories: u64,
    /// Directories left in place because they hold entries iopulse did not create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_directories: Vec<String>,
    /// Entries with iopulse's names that the removal found not as the tree made them (a
    /// link, a mount point, a hard-linked file) and left alone, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_entries: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhaseResult {
    /// `mix`, `flow`, or the phase's operation.
    pub name: String,
    pub window_ns: u64,
    pub ops: u64,
    pub ops_per_sec: f64,
    pub files_per_sec: f64,
    pub bytes_per_sec: f64,
    pub per_op: Vec<OpFigures>,
    /// A flow only (`--meta-flow`): each step's figures, in the flow's order (filebench
    /// reports each flowop so); `per_op` adds the steps of each kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepFigures>,
}

/// One step of a flow, over the window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepFigures {
    /// Its place in the flow, from 1.
    pub step: usize,
    pub name: crate::io::metadata::workload::FlowStep,
    /// The filebench flowop it follows.
    pub filebench: String,
    pub ops: u64,
    pub bytes: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub latency_ns: LatencySummary,
    /// The exact HDR histogram of the latencies (base64 of its V2 deflate serialisation).
    pub histogram: String,
}

/// One operation kind's figures over a phase's window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpFigures {
    pub op: crate::io::metadata::workload::MetaOp,
    pub ops: u64,
    /// Operations on one file of the tree (all but readdir, mkdir, rmdir, fsync-dir).
    pub files: u64,
    pub bytes: u64,
    pub ops_per_sec: f64,
    pub files_per_sec: f64,
    pub bytes_per_sec: f64,
    /// Mix only: the share asked for and the share achieved, in percent of the operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_asked_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_achieved_percent: Option<f64>,
    pub latency_ns: LatencySummary,
    /// The exact HDR histogram of the latencies (base64 of its V2 deflate serialisation).
    pub histogram: String,
}

/// When a metadata run's window opened and why it ended.
/// Flattened: its keys sit beside `MetaResult`'s own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetaWindow {
    pub started_at: String,
    /// In a phase of a job file beside other jobs: the window's start on the wall clock
    /// (ns since the Unix epoch), the instant the phase's start word released every job.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub window_start_unix_ns: u64,
    /// In such a phase: how long after that release the first of this job's workers began
    /// its first operation (on the phase's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start_lag_ns: Option<u64>,
    /// `complete`, `duration`, `ops`, `interrupted`, `limit` (a filesystem or process
    /// limit) or `error`.
    pub stop_reason: String,
}

/// What a metadata run says beside its figures: the error or limit that stopped it,
/// its warnings and notes.
/// Flattened: its keys sit beside `MetaResult`'s own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetaMessages {
    /// What stopped the run early: the failed operation, its path and errno.
    pub error: Option<String>,
    /// The limit met (ENOSPC, EDQUOT, EMFILE, ENFILE), in words.
    pub limit: Option<String>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

/// One row: one operation kind over one interval of one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaIntervalRow {
    /// `mix`, or the phase's operation.
    pub phase: String,
    pub op: crate::io::metadata::workload::MetaOp,
    /// End of the interval, from the phase's start (the mix's window start).
    pub t_ns: u64,
    /// The interval's length (the last of a phase ends with the phase: shorter).
    pub interval_ns: u64,
    pub ops: u64,
    pub ops_per_sec: f64,
    pub bytes: u64,
    pub bytes_per_sec: f64,
    /// Of this interval's operations of this kind alone.
    pub latency_ns: LatencySummary,
    /// The exact HDR histogram of those latencies (base64 of its V2 deflate serialisation);
    /// empty when the interval had none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub histogram: String,
}
