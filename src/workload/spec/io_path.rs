//! How I/O reaches the storage: the engine, O_DIRECT, the page cache (`io/engine/options.rs`, `front/cli/bench.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use super::{CacheMode, EngineKind, FadviseHint};
use crate::io::engine::EngineOptions;
use serde::{Deserialize, Serialize};

/// How I/O reaches the storage: the engine, O_DIRECT, the page cache (`io/engine/options.rs`, `front/cli/bench.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoSpec {
    pub engine: EngineKind,
    /// Engine-specific flags.
    pub engine_options: EngineOptions,
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
    /// `--fadvise-hint`: buffered targets are advised of the access order (fio's
    /// fadvise_hint). Results of versions before the flag read as `off`.
    #[serde(default = "FadviseHint::off")]
    pub fadvise_hint: FadviseHint,
    /// `--buffer-pages`: the pages the I/O buffers of 1 MiB or more are on. Results of
    /// versions before the flag read as `huge`, which they used.
    #[serde(default)]
    pub buffer_pages: BufferPages,
}

/// `--buffer-pages`: which pages a worker's I/O buffers are on (`base/sys/buffer.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum BufferPages {
    /// buffers of 1 MiB or more on 2 MiB transparent huge pages: a large O_DIRECT request
    /// is a few physically contiguous segments, one device request
    #[default]
    Huge,
    /// 4 KiB pages, as a program's own allocations (fio's default --iomem=malloc): a large
    /// request can exceed the device's segment limit and be split
    Base,
}

impl BufferPages {
    /// Whether buffers are asked for huge pages.
    pub fn huge(self) -> bool {
        self == BufferPages::Huge
    }
}
