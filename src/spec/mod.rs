//! The `Spec`: what a run does, as plain data, and the checks that need no
//! file system. Everything a run does is decided by it; it is echoed into the
//! JSON result so a run can be repeated from it.
//!
//! Checks that need to look at the targets (is it a directory? what is its DIO
//! alignment?) live in `targets::plan`, which still touches nothing.

pub mod durability;
pub mod metadata;

use crate::data::Pattern;
use crate::diagnostics::error::UsageError;
use crate::engine::EngineOptions;
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

/// Which block comes next is `access/`'s; the spec names the order and the distribution.
pub use crate::access::{AccessOrder, Distribution};
/// The engines are listed in `engine/` (their one home); the spec names one.
pub use crate::engine::EngineKind;

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
    fn off() -> Self {
        FadviseHint::Off
    }
}

/// Everything a run does. Plain data: no file is opened to build it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// The targets as given; empty means the embedded default (a temp file).
    pub targets: Vec<PathBuf>,
    /// Size to lay files out to; `None` keeps an existing file's size.
    pub file_size_bytes: Option<u64>,
    /// Bytes per I/O; with a block-size mix (`block_sizes`), the alignment of offsets: the
    /// unit the region is counted in.
    pub block_size_bytes: u64,
    /// `--bssplit`, `--block-align`: the sizes of the I/Os and their shares per op type
    /// (absent: every I/O is `block_size_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<crate::access::block_sizes::BlockSizeMix>,
    pub run_length: RunLength,
    pub read_percent: u8,
    /// `--trim-percent`: the share of I/Os that are trims (discards); the rest split by
    /// `read_percent`. 0 (absent in JSON) without.
    #[serde(default, skip_serializing_if = "is_zero_percent")]
    pub trim_percent: u8,
    pub order: AccessOrder,
    /// `--random-percent`: the share of random I/Os that jump (the rest continue
    /// sequentially); `None` is fully random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<u8>,
    /// Offset distribution of random runs.
    pub distribution: Distribution,
    /// Scatter the hot blocks of zipf and pareto over the region (`--no-scramble` turns it off).
    pub scramble: bool,
    pub file_distribution: FileDistribution,
    /// Stop after this many I/Os in total (`--ops`, or `--io-limit` / block size).
    pub ops_limit: Option<u64>,
    /// Sequential workers on a shared target all start at the beginning (`--sequential-overlap`).
    pub sequential_overlap: bool,
    pub threads: u32,
    pub queue_depth: u32,
    pub engine: EngineKind,
    /// `--direct`: O_DIRECT asked for.
    pub direct: bool,
    /// `--strict-direct`: a refusal of O_DIRECT is an error, not a fallback.
    pub strict_direct: bool,
    /// `--cache`: the page-cache state of each region when the window opens. Results of
    /// versions before the flag read as `drop` (their `invalidate` says what was done).
    #[serde(default)]
    pub cache: CacheMode,
    /// The page cache of each target's region was to be dropped before the window: true
    /// exactly when `cache` is `drop`. Kept for readers of earlier results; false in results
    /// of versions that never dropped it.
    #[serde(default)]
    pub invalidate: bool,
    /// `--keep-holes`: a read run reads holes and unwritten extents as they are.
    #[serde(default)]
    pub keep_holes: bool,
    /// Seed of every random choice; always set (drawn at start when not given).
    pub seed: u64,
    /// `--force`: allow writes to block devices.
    pub force: bool,
    /// Engine-specific flags.
    pub engine_options: EngineOptions,
    /// CPU and NUMA placement of workers (`--cpu-cores`, `--cpu-policy`, `--numa-zones`).
    #[serde(default)]
    pub placement: crate::placement::PlacementSpec,
    /// Length of one time-series interval (`--interval`).
    #[serde(default = "default_interval_ns")]
    pub interval_ns: u64,
    /// Collect a time series (`--timeseries`, or `--interval` given).
    #[serde(default)]
    pub time_series: bool,
    /// Think time between I/Os (`--think-time`, `--think-adaptive-percent`).
    #[serde(default)]
    pub think: Option<crate::schedule::think::ThinkSpec>,
    /// Rate limit (`--rate-iops`, `--rate-bw`).
    #[serde(default)]
    pub rate: Option<crate::schedule::think::RateSpec>,
    /// What written blocks contain (without `--verify`).
    pub write_pattern: Pattern,
    /// `--dedupe-ratio`, `--compress-ratio` of random write data (none: fully unique).
    #[serde(default, skip_serializing_if = "crate::data::Reducibility::is_none")]
    pub reducibility: crate::data::Reducibility,
    /// `--verify`: written blocks carry a header and reads are checked.
    pub verify: Option<VerifySpec>,
    /// `--verify-state FILE`: the durable record of what each flush made durable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_state: Option<std::path::PathBuf>,
    /// `--verify-state-every N`: with writes durable at completion and no flush stream, the
    /// record is updated every N completed writes (none: the default, 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_state_every: Option<u64>,
    /// Seed of written data and of verification: `--seed`; when not given, 0 for verified
    /// data (so that a later run can check what an earlier one wrote) and the run's own
    /// `seed` otherwise (so that two runs never write the same bytes).
    pub data_seed: u64,
    /// `--fsync-on-close`: fsync every target at the end of the run, timed outside the window.
    #[serde(default)]
    pub fsync_on_close: bool,
    /// `--fadvise-hint`: buffered targets are advised of the access order (fio's
    /// fadvise_hint). Results of versions before the flag read as `off`.
    #[serde(default = "FadviseHint::off")]
    pub fadvise_hint: FadviseHint,
    /// `--end-fsync`: each worker fsyncs its files at the end of the window, counted in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end_fsync: bool,
    /// `--fsync-every N`, `--fdatasync-every N`: a flush after every N writes of a worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<crate::spec::durability::FlushSpec>,
    /// `--sync-writes dsync|sync`: the targets are opened with O_DSYNC / O_SYNC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_writes: Option<crate::spec::durability::SyncWrites>,
    /// `--continue-on-error` (or `--max-errors`): failed I/Os are counted and the run goes on.
    #[serde(default)]
    pub continue_on_error: bool,
    /// `--max-errors N`: the run stops once N I/Os have failed in all.
    #[serde(default)]
    pub max_errors: Option<u64>,
    /// `--io-timeout`: an I/O in flight longer than this ends the run (0: never).
    #[serde(default = "default_io_timeout_ns")]
    pub io_timeout_ns: u64,
    /// `--ramp`: I/O before the window, not counted (0: none); `run_length` is the window's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_ns: u64,
    /// `--steady-state`, `--steady-state-window`: stop once the window is steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateSpec>,
    /// `--expect`: bounds on the result's figures, as written (`read.p99<=2ms`); judged
    /// after the run (`expect::evaluate`), never during it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<String>,
    /// `iopulse replay`: the trace's I/Os are the run's, at the trace's times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySpec>,
    /// `--write-iolog`: each worker records the I/Os it issues (an output's, not the workload's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub record_iolog: bool,
    /// `--files`: a metadata run on a tree of files under the one target directory
    /// (`metadata/` runs it); absent for block I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<metadata::MetaSpec>,
}

/// A trace to replay (`iopulse replay`): its I/Os, in order, and how it is timed and
/// placed. The I/Os themselves are not part of the Spec's document (`trace_files` names
/// them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub trace_files: Vec<PathBuf>,
    pub format: crate::trace::TraceFormat,
    /// The trace's entries as read (moved here, not copied: a trace may be large).
    #[serde(skip)]
    pub ios: std::sync::Arc<Vec<crate::trace::TraceIo>>,
    /// `--speed`: the trace's times divided by this; `None`: `--as-fast-as-possible`.
    pub speed: Option<f64>,
    pub remap: crate::trace::remap::Remap,
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
    pub skipped: crate::trace::Skipped,
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
    pub criterion: crate::stats::steady_state::Criterion,
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
    /// `--files`: one target directory, an engine with metadata operations, and none of the
    /// block-I/O flags that would mean nothing on a tree.
    fn validate_metadata(&self) -> Result<(), UsageError> {
        if self.metadata.is_none() {
            return Ok(());
        }
        // None: a profile's, given its target when it runs (`commands/metadata.rs` refuses none).
        if self.targets.len() > 1 {
            return Err(UsageError::new(
                "--files runs on one directory: give exactly one TARGET, the tree's root (e.g. `iopulse /mnt/t --files 10000`)",
            ));
        }
        if self.engine.metadata_issue().is_none() {
            return Err(UsageError::new(format!(
                "--files with --engine {}: metadata operations run on the sync or io_uring engine; give --engine sync or io_uring",
                self.engine.name()
            )));
        }
        let refused = [
            (self.verify.is_some(), "--verify"),
            (self.trim_percent > 0, "--trim-percent"),
            (self.flush.is_some(), "--fsync-every/--fdatasync-every (use fsync in --meta-mix)"),
            (self.verify_state.is_some(), "--verify-state"),
            (self.ramp_ns > 0, "--ramp"),
            (self.steady_state.is_some(), "--steady-state"),
            (self.rate.is_some() || self.think.is_some(), "--rate-iops/--think-time"),
            (!self.expect.is_empty(), "--expect"),
            // What places, reads or writes blocks, which a tree's operations never do:
            // taken silently, it would say the run did what it did not.
            (self.direct || self.strict_direct, "--direct/--strict-direct"),
            (self.read_percent != 100, "--read-percent/--write-percent (a mix of operations is --meta-mix)"),
            (
                self.order == crate::access::AccessOrder::Random || self.random_percent.is_some(),
                "--random/--random-percent",
            ),
            (
                self.distribution != crate::access::Distribution::Uniform || !self.scramble,
                "--distribution/--no-scramble",
            ),
            (self.block_sizes.is_some(), "--bssplit/--block-align"),
            (self.file_size_bytes.is_some(), "--file-size (a tree's file sizes are --file-size-dist)"),
            (
                self.file_distribution != FileDistribution::Shared || self.sequential_overlap,
                "--file-distribution/--sequential-overlap",
            ),
            (
                self.write_pattern != crate::data::Pattern::Unique || !self.reducibility.is_none(),
                "--write-pattern/--dedupe-ratio/--compress-ratio",
            ),
            (
                self.sync_writes.is_some() || self.fsync_on_close || self.end_fsync,
                "--sync-writes/--fsync-on-close/--end-fsync (use fsync in --meta-mix)",
            ),
            (
                self.cache != CacheMode::Drop || self.keep_holes || self.fadvise_hint != FadviseHint::On,
                "--cache/--keep-holes/--fadvise-hint",
            ),
            (self.continue_on_error || self.max_errors.is_some(), "--continue-on-error/--max-errors"),
            (
                self.engine_options != EngineOptions::default(),
                "--sqpoll/--iopoll/--no-register/--submit-batch/--completion-wait",
            ),
            (
                self.placement != crate::placement::PlacementSpec::default(),
                "--cpu-cores/--cpu-policy/--numa-zones/--cpu-dma-latency",
            ),
        ];
        if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
            return Err(UsageError::new(format!("{flag} with --files: it applies to block I/O only; leave it out")));
        }
        Ok(())
    }

    /// `--fsync-every`, `--fdatasync-every`, `--sync-writes`: refused where they would do nothing.
    fn validate_durability(&self) -> Result<(), UsageError> {
        if let Some(f) = self.flush {
            let flag = f.kind.flag();
            if f.every_writes == 0 {
                return Err(UsageError::new(format!(
                    "{flag} 0: give at least 1 (a flush after every N writes of each worker)"
                )));
            }
            if !self.writes() {
                return Err(UsageError::new(format!(
                    "{flag} needs writes: this run only reads; add --write-percent (e.g. --write-percent 100)"
                )));
            }
            if !self.engine.caps().touches_storage {
                return Err(UsageError::new(format!(
                    "{flag} cannot be used with --engine {}: it moves no bytes to storage; use --engine sync, libaio, io_uring or mmap",
                    self.engine.name()
                )));
            }
            if self.think.is_some() || self.rate.is_some() {
                return Err(UsageError::new(format!(
                    "{flag} cannot be combined with --rate-iops, --rate-bw or --think-time yet: the pacing would count each flush as an I/O; drop one of them"
                )));
            }
        }
        if let Some(s) = self.sync_writes {
            if !self.writes() {
                return Err(UsageError::new(format!(
                    "--sync-writes {} needs writes: this run only reads; add --write-percent (e.g. --write-percent 100)",
                    s.name()
                )));
            }
            if !self.engine.caps().touches_storage {
                return Err(UsageError::new(format!(
                    "--sync-writes cannot be used with --engine {}: it moves no bytes to storage; use --engine sync, libaio or io_uring",
                    self.engine.name()
                )));
            }
            if !self.engine.caps().writes_through_descriptor {
                return Err(UsageError::new(format!(
                    "--sync-writes cannot be used with --engine {}: its writes never go through write(2), so O_DSYNC/O_SYNC do nothing; use --fdatasync-every N instead",
                    self.engine.name()
                )));
            }
        }
        Ok(())
    }

    /// `--verify-state FILE`: a verifying write run whose completed writes become durable
    /// at known moments (a flush stream, or writes durable at completion: `--sync-writes`,
    /// or `--direct`, whose devices are looked at when the run is planned), its data not
    /// reduced.
    fn validate_verify_state(&self) -> Result<(), UsageError> {
        if self.verify_state.is_none() {
            if self.verify_state_every.is_some() {
                return Err(UsageError::new(
                    "--verify-state-every sets how often the --verify-state record is updated: add --verify-state FILE or drop it",
                ));
            }
            return Ok(());
        }
        if self.verify.is_none() {
            return Err(UsageError::new(
                "--verify-state records which verified writes each flush made durable: add --verify",
            ));
        }
        if self.flush.is_none() && self.sync_writes.is_none() && !self.direct {
            return Err(UsageError::new(
                "--verify-state needs writes that become durable at known moments: add --fdatasync-every N (or --fsync-every N), or --sync-writes dsync, or --direct on a block device whose write cache is write through",
            ));
        }
        if self.verify_state_every == Some(0) {
            return Err(UsageError::new("--verify-state-every 0: give at least 1 write between record updates"));
        }
        if self.verify_state_every.is_some() && self.flush.is_some() {
            return Err(UsageError::new(
                "--verify-state-every applies to writes durable at completion; with --fsync-every/--fdatasync-every the record is updated at each flush: drop --verify-state-every",
            ));
        }
        if !self.reducibility.is_none() {
            return Err(UsageError::new(
                "--verify-state with --dedupe-ratio or --compress-ratio: a duplicate block holds no write sequence; drop the ratio",
            ));
        }
        Ok(())
    }

    /// `--bssplit`, `--block-align`: refused where offsets or sizes would be wrong.
    fn validate_block_sizes(&self) -> Result<(), UsageError> {
        let Some(mix) = &self.block_sizes else { return Ok(()) };
        let flag = if mix.sizes().len() > 1 { "--bssplit" } else { "--block-align" };
        if let Some(&size) = mix.sizes().iter().find(|&&s| s > MAX_BLOCK_SIZE_BYTES) {
            return Err(UsageError::new(format!(
                "--bssplit {}: size {size} is above the largest accepted, 1G",
                mix.fio_syntax()
            )));
        }
        if self.run_length == RunLength::UntilCovered {
            return Err(UsageError::new(format!(
                "{flag} with --duration 0: a run until covered visits each block once, and blocks of mixed sizes do not tile the target; give a --duration or --ops"
            )));
        }
        if self.verify.is_some() {
            return Err(UsageError::new(format!(
                "{flag} with --verify: verification checks blocks of one size at fixed offsets; drop one of them"
            )));
        }
        Ok(())
    }

    /// The largest I/O of the run (the size of each slot's buffer).
    pub fn largest_block_bytes(&self) -> u64 {
        if let Some(r) = &self.replay {
            return r.largest_bytes.max(self.block_size_bytes);
        }
        self.block_sizes.as_ref().map_or(self.block_size_bytes, |m| m.largest_bytes())
    }

    pub fn write_percent(&self) -> u8 {
        100 - self.read_percent
    }

    /// The run changes the target: it writes, or trims (a trim discards data as a write
    /// overwrites it, and is refused or allowed as writes are).
    pub fn writes(&self) -> bool {
        self.read_percent < 100 || self.trims()
    }

    /// The run issues trims: `--trim-percent`, or a replayed trace's.
    pub fn trims(&self) -> bool {
        self.trim_percent > 0 || self.replay.as_ref().is_some_and(|r| r.trims > 0)
    }

    /// The run issues flushes: `--fsync-every`/`--fdatasync-every`, `--end-fsync`, or a
    /// replayed trace's.
    pub fn issues_flushes(&self) -> bool {
        self.flush.is_some() || self.end_fsync || self.replay.as_ref().is_some_and(|r| r.flushes > 0)
    }

    /// The run reads: some of its I/Os are reads (with every I/O a trim, none are).
    pub fn reads(&self) -> bool {
        self.read_percent > 0 && self.trim_percent < 100
    }

    /// The run issues I/Os of `op` (`read`, `write`, `trim`, `flush`).
    pub fn issues(&self, op: &str) -> bool {
        let replayed = |n: fn(&ReplaySpec) -> u64| self.replay.as_ref().map(n);
        match op {
            "read" => replayed(|r| r.reads).map_or(self.reads(), |n| n > 0),
            "write" => replayed(|r| r.writes).map_or(self.read_percent < 100 && self.trim_percent < 100, |n| n > 0),
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
        match (self.max_errors, self.continue_on_error) {
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(1),
        }
    }

    /// Checks that need no file system. Each message names the flag and what is accepted.
    pub fn validate(&self) -> Result<(), UsageError> {
        self.validate_metadata()?;
        if self.block_size_bytes == 0 {
            return Err(UsageError::new("--block-size 0: the block size must be at least 1 byte (e.g. 4k)"));
        }
        if self.block_size_bytes > MAX_BLOCK_SIZE_BYTES {
            return Err(UsageError::new(format!(
                "--block-size {}: the block size must be at most 1G",
                self.block_size_bytes
            )));
        }
        if let Some(size) = self.file_size_bytes
            && size < self.block_size_bytes
        {
            return Err(UsageError::new(format!(
                "--file-size {size} is smaller than one block (--block-size {}): give a file size of at least one block",
                self.block_size_bytes
            )));
        }
        if self.threads == 0 {
            return Err(UsageError::new("--threads 0: at least 1 worker thread is needed"));
        }
        if self.threads > MAX_THREADS {
            return Err(UsageError::new(format!(
                "--threads {}: at most {MAX_THREADS} worker threads are accepted",
                self.threads
            )));
        }
        if self.queue_depth == 0 {
            return Err(UsageError::new("--queue-depth 0: the queue depth must be at least 1"));
        }
        if let Some(us) = self.placement.cpu_dma_latency_us
            && us > crate::cpu_state::latency_request::MAX_US
        {
            return Err(UsageError::new(format!(
                "--cpu-dma-latency {us}: at most {} µs (a second); 0 keeps idle CPUs polling",
                crate::cpu_state::latency_request::MAX_US
            )));
        }
        if self.queue_depth > MAX_QUEUE_DEPTH {
            return Err(UsageError::new(format!(
                "--queue-depth {}: at most {MAX_QUEUE_DEPTH} (io_uring's ring limit) is accepted",
                self.queue_depth
            )));
        }
        match self.distribution {
            Distribution::Uniform => {}
            Distribution::Zipf { theta } => {
                if !(theta > 0.0 && theta.is_finite()) {
                    return Err(UsageError::new(format!(
                        "--zipf-theta {}: give a number above 0, e.g. 1.2",
                        crate::units::display::number(theta)
                    )));
                }
            }
            Distribution::Pareto { h } => {
                if !(h > 0.0 && h < 1.0) {
                    return Err(UsageError::new(format!(
                        "--pareto-h {}: give a number between 0 and 1 (exclusive), e.g. 0.9",
                        crate::units::display::number(h)
                    )));
                }
            }
            Distribution::Gaussian { stddev, center } => {
                if !(stddev > 0.0 && stddev.is_finite()) {
                    return Err(UsageError::new(format!(
                        "--gaussian-stddev {}: give a fraction of the region above 0, e.g. 0.1",
                        crate::units::display::number(stddev)
                    )));
                }
                if !(0.0..=1.0).contains(&center) {
                    return Err(UsageError::new(format!(
                        "--gaussian-center {}: give a fraction of the region from 0 to 1, e.g. 0.5",
                        crate::units::display::number(center)
                    )));
                }
            }
            Distribution::Zoned { zones } => {
                if let Some(smallest) = zones.smallest_bytes()
                    && smallest < self.largest_block_bytes()
                {
                    return Err(UsageError::new(format!(
                        "--zones {}: a zone of {smallest} bytes is smaller than one block ({} bytes): no I/O fits in it; give zones of whole blocks",
                        zones.to_text(),
                        self.largest_block_bytes()
                    )));
                }
                if let (Some(covered), Some(file)) = (zones.covered_bytes(), self.file_size_bytes)
                    && covered > file
                {
                    return Err(UsageError::new(format!(
                        "--zones {}: the zones cover {covered} bytes, more than --file-size ({file} bytes): shrink the zones or grow the file",
                        zones.to_text()
                    )));
                }
            }
        }
        if self.distribution != Distribution::Uniform && self.order != AccessOrder::Random {
            return Err(UsageError::new(format!(
                "--distribution {} needs --random (sequential runs have no offset distribution)",
                self.distribution.name()
            )));
        }
        if self.trim_percent > 0 {
            let t = self.trim_percent;
            if t > 100 {
                return Err(UsageError::new(format!("--trim-percent {t}: give a percentage from 0 to 100")));
            }
            if self.verify.is_some() {
                return Err(UsageError::new(format!(
                    "--trim-percent {t} with --verify: a trimmed block has no data to check; drop one of them"
                )));
            }
        }
        if let Some(p) = self.random_percent {
            if self.order != AccessOrder::Random {
                return Err(UsageError::new(format!(
                    "--random-percent {p} needs --random (it is the share of random I/Os that jump; the rest continue sequentially)"
                )));
            }
            if p > 100 {
                return Err(UsageError::new(format!("--random-percent {p}: give a percentage from 0 to 100")));
            }
            if p < 100 && self.run_length == RunLength::UntilCovered {
                return Err(UsageError::new(format!(
                    "--random-percent {p} with --duration 0: a run until covered visits each block once in a random order; give a --duration or --ops, or drop --random-percent"
                )));
            }
        }
        self.validate_block_sizes()?;
        if self.verify.is_some() && (self.block_size_bytes as usize) < crate::data::verify::HEADER_BYTES {
            return Err(UsageError::new(format!(
                "--block-size {} is too small for --verify: each block carries a {}-byte header; use at least 512",
                self.block_size_bytes,
                crate::data::verify::HEADER_BYTES
            )));
        }
        if self.max_errors == Some(0) {
            return Err(UsageError::new(
                "--max-errors 0: give at least 1 (the run stops once that many I/Os have failed)",
            ));
        }
        if self.ops_limit == Some(0) {
            return Err(UsageError::new("--ops 0 / --io-limit below one block: give at least one I/O"));
        }
        self.engine.check_options(&self.engine_options, self.direct)?;
        self.validate_durability()?;
        self.validate_verify_state()?;
        self.validate_cache()?;
        if self.read_percent > 100 {
            return Err(UsageError::new(format!(
                "--read-percent {}: give a percentage from 0 to 100",
                self.read_percent
            )));
        }
        if self.direct && !self.engine.caps().supports_direct {
            return Err(UsageError::new(format!(
                "--direct cannot be used with --engine {}: a memory mapping always goes through the page cache; for O_DIRECT use --engine io_uring, libaio or sync, or drop --direct",
                self.engine.name()
            )));
        }
        Ok(())
    }

    /// `--cache warm` needs a run whose I/O goes through the page cache; `--verify` needs an
    /// engine that moves bytes.
    fn validate_cache(&self) -> Result<(), UsageError> {
        let touches_storage = self.engine.caps().touches_storage;
        if self.verify.is_some() && !touches_storage {
            return Err(UsageError::new(format!(
                "--verify cannot be used with --engine {}: it moves no bytes, so there is nothing to check; drop --verify or use an engine that does I/O (sync, libaio, io_uring, mmap)",
                self.engine.name()
            )));
        }
        if self.cache == CacheMode::Warm && self.direct {
            return Err(UsageError::new(
                "--cache warm cannot be used with --direct: O_DIRECT I/O bypasses the page cache, so warming it changes nothing the run measures; drop --direct to measure a warm cache, or use --cache drop or keep",
            ));
        }
        if self.cache == CacheMode::Warm && !touches_storage {
            return Err(UsageError::new(format!(
                "--cache warm cannot be used with --engine {}: it touches no target, so there is nothing to warm; drop --cache warm",
                self.engine.name()
            )));
        }
        Ok(())
    }
}
