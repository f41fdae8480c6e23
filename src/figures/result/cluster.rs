//! The result's sections about runs side by side: each merged source, how far apart the
//! windows opened, and a cluster's ranks. Plain data.

use super::RunResult;
use serde::{Deserialize, Serialize};

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

/// Set only on results that combine others (`iopulse merge`, cluster runs).
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Combination {
    /// Set only by `iopulse merge` and cluster runs: the results this document combines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedSource>>,
    /// Set only with `merged_from`: how far apart the combined runs' windows were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_skew: Option<WindowSkew>,
    /// Set only by a cluster run (MPI): every rank's figures and result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterInfo>,
}
