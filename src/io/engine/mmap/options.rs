//! The mmap engine's own flags (help heading "mmap").

use serde::{Deserialize, Serialize};

/// `--madvise`: what the mmap engine tells the kernel about its access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Madvise {
    /// MADV_RANDOM: no read-ahead around faults
    Random,
    /// MADV_SEQUENTIAL: aggressive read-ahead, pages freed soon after access
    Sequential,
    /// MADV_HUGEPAGE: back the mapping with transparent huge pages where the filesystem can
    Hugepage,
    /// MADV_WILLNEED: start reading the whole mapping in now
    Willneed,
}

impl Madvise {
    pub fn name(self) -> &'static str {
        match self {
            Madvise::Random => "random",
            Madvise::Sequential => "sequential",
            Madvise::Hugepage => "hugepage",
            Madvise::Willneed => "willneed",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "mmap")]
#[serde(default)]
pub struct MmapArgs {
    /// Prefault the mapping before the start.
    ///
    /// Prefault the whole mapping before the start (MAP_POPULATE), so page faults are not
    /// measured. Default: faults happen during the run and are part of each I/O's latency.
    /// E.g. `--engine mmap --mmap-populate`
    #[arg(long)]
    pub mmap_populate: bool,

    /// Advice for the whole mapping.
    ///
    /// Advice for the whole mapping (madvise). E.g. `--engine mmap --madvise random`
    #[arg(long, value_enum, value_name = "ADVICE")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub madvise: Option<Madvise>,
}

impl MmapArgs {
    /// The first of these flags given, to refuse it with another engine.
    pub fn given(&self) -> Option<&'static str> {
        if self.mmap_populate {
            Some("--mmap-populate")
        } else if self.madvise.is_some() {
            Some("--madvise")
        } else {
            None
        }
    }
}
