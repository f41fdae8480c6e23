//! A paced or replayed run's sections of the result: think time, a rate schedule's
//! lateness and service time, and a replay's trace, speed and lag. Plain data.

use super::io_log;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PacingInfo {
    pub think: Option<ThinkInfo>,
    pub rate: Option<RateInfo>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThinkInfo {
    pub mode: crate::io::schedule::think::ThinkMode,
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
    pub given_as: crate::io::schedule::think::RateGivenAs,
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
    pub format: crate::io::trace::TraceFormat,
    /// The files (iolog) or devices (blktrace) the trace names.
    pub names: Vec<String>,
    #[serde(flatten)]
    pub counts: ReplayCounts,
    #[serde(flatten)]
    pub timing: ReplayTiming,
    #[serde(flatten)]
    pub fit: ReplayFit,
}

/// One of the two parts of a paced run's latency (`RateInfo::lateness`, `service`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PacedLatency {
    /// I/Os measured: every counted I/O of the window.
    pub ios: u64,
    pub latency_ns: crate::io::stats::LatencySummary,
    /// Its HDR histogram, encoded as those of `histograms` (ns).
    pub histogram: String,
}

/// When I/Os were issued, when that was not as fast as possible: pacing (think time, a
/// rate) and a replay's trace and lag; and the `--write-iolog` record of every issue.
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Schedule {
    /// Think time and rate limit, when asked for.
    #[serde(default)]
    pub pacing: Option<PacingInfo>,
    /// `iopulse replay`: the trace, its timing and each I/O's lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayInfo>,
    /// `--write-iolog`: the I/Os issued (written by the report, not part of the document).
    #[serde(skip)]
    pub iolog: Option<std::sync::Arc<io_log::IoLog>>,
}

/// What the trace holds and what of it was issued.
/// Flattened: its keys sit beside `ReplayInfo`'s own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayCounts {
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
    pub skipped: crate::io::trace::Skipped,
    /// I/Os issued (all of the trace's unless the run stopped early).
    pub issued: u64,
}

/// A replay's time against its trace's: the speed, the spans, the error and each I/O's lag.
/// Flattened: its keys sit beside `ReplayInfo`'s own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayTiming {
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
    /// Per I/O issued, its due time to its submission: the replayer's own lateness, not
    /// in the latencies (absent as fast as possible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<PacedLatency>,
}

/// Where the trace's offsets went: the extent it spans against the target's size,
/// and the remap when it did not fit.
/// Flattened: its keys sit beside `ReplayInfo`'s own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayFit {
    pub remap: crate::io::trace::remap::Remap,
    /// The end of the trace's furthest I/O, and the bytes of the target it was put on.
    pub trace_extent_bytes: u64,
    pub target_bytes: u64,
    /// The trace did not fit: its offsets were remapped (`remap`).
    pub remapped: bool,
}
