//! The result's section of I/O figures over the window: each operation's, each block size's
//! and zone's, the region covered, the queue depth achieved and the tool's own time.
//! Plain data; `run/assemble` fills it, reports read it.

use super::{AchievedQueueDepth, BlockSizeFigures, Coverage, IoDepths, ToolTime, ZoneShare};
use crate::io::stats::OpSummary;
use serde::{Deserialize, Serialize};

/// The I/O figures over the window: per operation, per block size and zone, the region
/// covered, and the queue depth and tool time achieved.
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IoFigures {
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
    /// Blocks accessed / blocks in the region, and how concentrated the access was.
    pub coverage: Option<Coverage>,
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
}
