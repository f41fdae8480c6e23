//! The result's sections about the data: what writes put on the storage, what dedupe and
//! compression could make of it, and what verification found. Plain data.

use super::Durability;
use crate::storage::targets::DirectOutcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The data a run wrote (and laid out).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WriteDataInfo {
    /// `--write-pattern` (its default: `unique`), or with `--verify` the verify pattern.
    pub pattern: crate::io::data::Pattern,
    /// Each block begins with the 48-byte verify header (`--verify`).
    pub verified: bool,
    /// What a deduplicating or compressing store can make of it, as measured
    /// (docs/usage.md, "Write data and ratios").
    pub reducibility: crate::io::data::ReducibilityClass,
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
    pub pattern: crate::io::data::Pattern,
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
    pub failure: crate::io::data::verify::Failure,
    /// Offset within the block of the 16-byte windows below.
    pub window_at: u32,
    pub expected_hex: String,
    pub found_hex: String,
}

/// What the run did to and with the data: whether storage was touched, O_DIRECT, what was
/// made durable, verified, reduced and written, and holes read.
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DataFacts {
    /// The run's I/Os reached its targets. False with an engine that moves no bytes (null):
    /// no target was created, laid out, written or opened, and the figures are iopulse's
    /// own ceiling, not storage's. True in results of versions that did not record it.
    #[serde(default = "storage_touched_default")]
    pub storage_touched: bool,
    /// O_DIRECT over the whole run: requested, effective on every target, and why not.
    pub direct: DirectOutcome,
    /// Time spent making writes durable after the window (mmap msync, --fsync-on-close);
    /// absent when nothing was synced. Never part of the I/O figures.
    #[serde(default)]
    pub durability: Option<Durability>,
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
}

/// Results of versions that did not record `storage_touched` ran storage engines only.
fn storage_touched_default() -> bool {
    true
}
