//! The flags that say what state the targets start the window in: their page cache, and
//! whether holes are laid out first (help heading "Targets and page cache").

use crate::base::diagnostics::error::UsageError;
use crate::workload::spec::CacheMode;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Targets and page cache")]
#[serde(default)]
pub struct TargetArgs {
    /// The page cache when the window opens [default: drop]
    ///
    /// The page cache of the region a run addresses when the window opens: drop (flush,
    /// then drop its cached pages, so that buffered reads reach the device; fio's
    /// invalidate=1), warm (read the whole region into the cache first, warning when it
    /// does not fit; not with --direct) or keep (leave it as it is; fio's invalidate=0).
    /// Residency at the window's start and end is reported either way (docs/cache.md).
    /// E.g. `iopulse data.dat --random --cache warm` measures reads served from memory.
    /// [default: drop]
    #[arg(long, value_enum, value_name = "STATE")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub cache: Option<CacheMode>,

    /// Former name of --cache keep.
    ///
    /// Former name of --cache keep.
    #[arg(long, hide = true)]
    pub no_invalidate: bool,

    /// Read a file as it is, holes included.
    ///
    /// Read the file as it is: holes and unwritten extents in the region a read run
    /// addresses are not laid out first (they are by default on files iopulse laid out,
    /// and with --force on others; a read of them in someone else's file is refused
    /// without one of the two). Every figure is then marked, in the report, the JSON
    /// (`holes_read`), the CSV and fio JSON (e.g. `iopulse thin.dat --random --keep-holes`
    /// to measure a sparse file on purpose).
    #[arg(long)]
    pub keep_holes: bool,

    /// Advise the kernel of the access (buffered I/O).
    ///
    /// Advise the kernel how buffered I/O will walk each target, as fio's fadvise_hint:
    /// random runs POSIX_FADV_RANDOM (no readahead pulls in blocks the run never asked
    /// for), sequential ones POSIX_FADV_SEQUENTIAL. Not with --direct, which bypasses the
    /// cache. E.g. `iopulse data.dat --random --fadvise-hint off` lets readahead run as a
    /// program that gives no advice would see it. [default: on]
    #[arg(long, value_enum, value_name = "on|off")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub fadvise_hint: Option<crate::workload::spec::FadviseHint>,

    /// Pages of the I/O buffers: huge or base [default: huge]
    ///
    /// The pages a worker's I/O buffers of 1 MiB or more are on: `huge` (2 MiB transparent
    /// huge pages: a large O_DIRECT request is a few contiguous segments, one request to
    /// the device) or `base` (4 KiB pages, as fio's default buffers: a request past the
    /// device's segment limit is split, 1 MiB on a virtio disk of 254 segments into two).
    /// The JSON's spec records it, and memory.huge_page_bytes what the kernel gave. E.g.
    /// `--direct --buffer-pages base` to compare with fio as it is usually run
    #[arg(long, value_enum, value_name = "huge|base")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub buffer_pages: Option<crate::workload::spec::io_path::BufferPages>,
}

impl TargetArgs {
    /// `--cache`, with `--no-invalidate` as a former name of `--cache keep`.
    pub fn cache_mode(&self) -> Result<CacheMode, UsageError> {
        match (self.no_invalidate, self.cache) {
            (false, mode) => Ok(mode.unwrap_or_default()),
            (true, None | Some(CacheMode::Drop | CacheMode::Keep)) => Ok(CacheMode::Keep),
            (true, Some(other)) => Err(UsageError::new(format!(
                "--no-invalidate (the former name of --cache keep) contradicts --cache {}: give one --cache",
                other.name()
            ))),
        }
    }
}
