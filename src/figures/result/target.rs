//! The result's sections about what was run: the tool, the engine, each target as it was,
//! what was made durable after the window, and I/O left stuck. Plain data.

use crate::io::stats::OpSummary;
use crate::storage::targets::{Allocation, DirectOutcome, TargetKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    #[serde(flatten)]
    pub storage: TargetStorage,
    pub created: bool,
    pub laid_out_bytes: u64,
    pub direct: DirectOutcome,
    /// The target was a temporary file removed after the run (the embedded default).
    pub removed_after_run: bool,
    /// This target's share of the figures.
    pub read: OpSummary,
    pub write: OpSummary,
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

/// Where a target lives and how its storage behaved: filesystem, device, mount point,
/// allocation, page cache and the device's own counters.
/// Flattened: its keys sit beside `TargetInfo`'s own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetStorage {
    pub filesystem: Option<String>,
    pub device: Option<String>,
    pub mount_point: Option<String>,
    /// Regular files: how much of the region held written data when the window opened
    /// (reads of holes and unwritten extents never reach the device); `None` for block
    /// devices, and in results of versions that did not measure it.
    #[serde(default)]
    pub allocation: Option<Allocation>,
    /// The region's page-cache residency when the window opened and closed, and whether its
    /// cache was dropped before the window (`crate::storage::targets::PageCache`); `None` in results of
    /// versions that did not measure it.
    #[serde(default)]
    pub page_cache: Option<crate::storage::targets::PageCache>,
    /// What the block device under the target counted over the window, and the share of
    /// this run's reads and writes it saw (`crate::storage::targets::DeviceWitness`); `None` when no
    /// block device is under the target (tmpfs, the null engine), and in results of versions
    /// that did not measure it.
    #[serde(default)]
    pub device_witness: Option<crate::storage::targets::DeviceWitness>,
}
