//! The `Spec`: what a run does, as plain data, and the checks that need no
//! file system. Everything a run does is decided by it; it is echoed into the
//! JSON result so a run can be repeated from it.
//!
//! Checks that need to look at the targets (is it a directory? what is its DIO
//! alignment?) live in `targets::plan`, which still touches nothing.

pub mod access;
pub mod data;
pub mod durability;
pub mod errors;
pub mod io_path;
pub mod output;
pub mod pacing;
pub mod shape;
mod validate;
pub mod window;

use crate::base::diagnostics::error::UsageError;
use crate::io::data::Pattern;
use crate::io::engine::EngineOptions;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Largest block size accepted (one request's buffer).
pub const MAX_BLOCK_SIZE_BYTES: u64 = 1 << 30;
/// Largest queue depth accepted: io_uring's ring limit.
pub const MAX_QUEUE_DEPTH: u32 = 32_768;
/// Largest number of worker threads accepted.
pub const MAX_THREADS: u32 = 4_096;
/// File size used when a target must be created and `--file-size` is not given.
pub const DEFAULT_NEW_FILE_SIZE_BYTES: u64 = 1 << 30;
/// File size of the embedded default target (no TARGET given).
pub const EMBEDDED_FILE_SIZE_BYTES: u64 = 256 << 20;
/// Default `--io-timeout`: an I/O not completed after this long is reported as stuck.
pub const DEFAULT_IO_TIMEOUT_NS: u64 = 30_000_000_000;
/// Duration of a run on the embedded default target.
pub const EMBEDDED_DURATION_NS: u64 = 5_000_000_000;

/// Which block comes next is `io/access/`'s; the spec names the order and the distribution.
pub use crate::io::access::{AccessOrder, Distribution};
/// The engines are listed in `io/engine/` (their one home); the spec names one.
pub use crate::io::engine::EngineKind;

/// How long a run lasts. `Spec::ops_limit` can end any of them earlier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunLength {
    /// A fixed measurement window.
    Duration { ns: u64 },
    /// Until every block of the region has been accessed once (`--duration 0`); skewed
    /// distributions issue as many I/Os as there are blocks.
    UntilCovered,
    /// Until `ops_limit` I/Os are done (`--ops` or `--io-limit` without `--duration`).
    UntilLimit,
}

/// How targets are shared between workers (`--file-distribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum FileDistribution {
    /// every worker addresses the whole of every target
    Shared,
    /// each worker gets its own file, NAME.0, NAME.1, ... next to the path given
    PerWorker,
    /// each worker gets a disjoint, block-aligned slice of the targets
    Partitioned,
}

/// The page-cache state of each target's region when the window opens (`--cache`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// flush, then drop the region's cached pages: buffered reads reach the device (fio's invalidate=1)
    #[default]
    Drop,
    /// read the whole region into the page cache first: buffered reads measure memory
    Warm,
    /// leave the page cache as it is (fio's invalidate=0)
    Keep,
}

impl CacheMode {
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Drop => "drop",
            CacheMode::Warm => "warm",
            CacheMode::Keep => "keep",
        }
    }
}

/// `--fadvise-hint`: whether buffered targets are advised of the run's access order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum FadviseHint {
    /// random runs POSIX_FADV_RANDOM, sequential ones POSIX_FADV_SEQUENTIAL (fio's fadvise_hint=1)
    #[default]
    On,
    /// no advice: the kernel's default readahead (fio's fadvise_hint=0)
    Off,
}

impl FadviseHint {
    pub(super) fn off() -> Self {
        FadviseHint::Off
    }
}

/// Everything a run does. Plain data: no file is opened to build it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// The targets as given; empty means the embedded default (a temp file).
    pub targets: Vec<PathBuf>,
    /// Seed of every random choice; always set (drawn at start when not given).
    pub seed: u64,
    /// `--force`: allow writes to block devices.
    pub force: bool,
    /// CPU and NUMA placement of workers (`--cpu-cores`, `--cpu-policy`, `--numa-zones`).
    #[serde(default)]
    pub placement: crate::io::placement::PlacementSpec,
    /// `iopulse replay`: the trace's I/Os are the run's, at the trace's times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySpec>,
    /// `--files`: a metadata run on a tree of files under the one target directory
    /// (defined with its workers in `io/metadata/`, run by `coordination/metadata/`);
    /// absent for block I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<crate::io::metadata::workload::MetaSpec>,
    #[serde(flatten)]
    pub shape: shape::ShapeSpec,
    #[serde(flatten)]
    pub access: access::AccessSpec,
    #[serde(flatten)]
    pub window: window::WindowSpec,
    #[serde(flatten)]
    pub io: io_path::IoSpec,
    #[serde(flatten)]
    pub data: data::DataSpec,
    #[serde(flatten)]
    pub durability: durability::DurabilitySpec,
    #[serde(flatten)]
    pub pacing: pacing::PacingSpec,
    #[serde(flatten)]
    pub errors: errors::ErrorSpec,
    #[serde(flatten)]
    pub output: output::OutputSpec,
}

/// A trace to replay (`iopulse replay`): its I/Os, in order, and how it is timed and
/// placed. The I/Os themselves are not part of the Spec's document (`trace_files` names
/// them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub trace_files: Vec<PathBuf>,
    pub format: crate::io::trace::TraceFormat,
    /// The trace's entries as read (moved here, not copied: a trace may be large).
    #[serde(skip)]
    pub ios: std::sync::Arc<Vec<crate::io::trace::TraceIo>>,
    /// `--speed`: the trace's times divided by this; `None`: `--as-fast-as-possible`.
    pub speed: Option<f64>,
    pub remap: crate::io::trace::remap::Remap,
    /// The end of the trace's furthest I/O.
    pub extent_bytes: u64,
    pub largest_bytes: u64,
    /// The trace's first I/O to its last one's issue, as recorded.
    pub span_ns: u64,
    pub reads: u64,
    pub writes: u64,
    /// The trace's trims and flushes (a blktrace's PREFLUSH and FUA writes each add one),
    /// issued as the benchmark's trims and fsync/fdatasync.
    #[serde(default)]
    pub trims: u64,
    #[serde(default)]
    pub flushes: u64,
    pub skipped: crate::io::trace::Skipped,
    /// The files (iolog) or devices (blktrace) the trace names.
    pub names: Vec<String>,
}

fn is_zero_percent(p: &u8) -> bool {
    *p == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `--steady-state METRIC:LIMIT` over a rolling window of `window_intervals` intervals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateSpec {
    pub criterion: crate::io::stats::steady_state::Criterion,
    /// Intervals in the window (at least 2); `window_intervals × interval_ns` long.
    pub window_intervals: u32,
}

fn default_io_timeout_ns() -> u64 {
    DEFAULT_IO_TIMEOUT_NS
}

fn default_interval_ns() -> u64 {
    1_000_000_000
}

/// How verification is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifySpec {
    pub pattern: Pattern,
    /// Failed blocks described in full (the others are counted).
    pub max_reports: u32,
}

impl Spec {
    /// The largest I/O of the run (the size of each slot's buffer).
    pub fn largest_block_bytes(&self) -> u64 {
        if let Some(r) = &self.replay {
            return r.largest_bytes.max(self.shape.block_size_bytes);
        }
        self.shape.block_sizes.as_ref().map_or(self.shape.block_size_bytes, |m| m.largest_bytes())
    }

    pub fn write_percent(&self) -> u8 {
        100 - self.access.read_percent
    }

    /// The run changes the target: it writes, or trims (a trim discards data as a write
    /// overwrites it, and is refused or allowed as writes are).
    pub fn writes(&self) -> bool {
        self.access.read_percent < 100 || self.trims()
    }

    /// The run issues trims: `--trim-percent`, or a replayed trace's.
    pub fn trims(&self) -> bool {
        self.access.trim_percent > 0 || self.replay.as_ref().is_some_and(|r| r.trims > 0)
    }

    /// The run issues flushes: `--fsync-every`/`--fdatasync-every`, `--end-fsync`, or a
    /// replayed trace's.
    pub fn issues_flushes(&self) -> bool {
        self.durability.flush.is_some()
            || self.durability.end_fsync
            || self.replay.as_ref().is_some_and(|r| r.flushes > 0)
    }

    /// The run reads: some of its I/Os are reads (with every I/O a trim, none are).
    pub fn reads(&self) -> bool {
        self.access.read_percent > 0 && self.access.trim_percent < 100
    }

    /// The run issues I/Os of `op` (`read`, `write`, `trim`, `flush`).
    pub fn issues(&self, op: &str) -> bool {
        let replayed = |n: fn(&ReplaySpec) -> u64| self.replay.as_ref().map(n);
        match op {
            "read" => replayed(|r| r.reads).map_or(self.reads(), |n| n > 0),
            "write" => replayed(|r| r.writes)
                .map_or(self.access.read_percent < 100 && self.access.trim_percent < 100, |n| n > 0),
            "trim" => self.trims(),
            "flush" => self.issues_flushes(),
            _ => true,
        }
    }

    pub fn is_embedded_default(&self) -> bool {
        self.targets.is_empty()
    }

    /// Failed I/Os after which the run stops: 1 by default, N with `--max-errors N`,
    /// `None` (no limit) with `--continue-on-error` alone.
    pub fn error_limit(&self) -> Option<u64> {
        match (self.errors.max_errors, self.errors.continue_on_error) {
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(1),
        }
    }
}
