//! The engine list: the names a user chooses from (`--engine`), and what each
//! engine declares about itself (its capabilities, its note about buffered
//! runs). Adding an engine means a variant here and a folder beside this one;
//! nothing outside `io/engine/` matches on engine names.

use super::aio::AioEngine;
use super::mmap::MmapEngine;
use super::null::NullEngine;
use super::sync::SyncEngine;
use super::uring::UringEngine;
use super::{Engine, EngineCaps};
use crate::base::diagnostics::error::UsageError;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time per worker
    Sync,
    /// completes every request at once without touching storage: the tool's own ceiling
    Null,
    /// Linux native AIO (io_submit/io_getevents); asynchronous with --direct only
    Libaio,
    /// memcpy to and from a shared mapping of the target; page faults included, no O_DIRECT
    Mmap,
    /// one ring per worker, batched submission and completion, registered buffers and files
    #[value(name = "io_uring")]
    #[serde(rename = "io_uring")]
    IoUring,
}

/// How a metadata run (`--files`) issues its operations with an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataIssue {
    /// Plain system calls, one at a time per worker.
    SystemCalls,
    /// io_uring's own operations (openat, statx, read, write, close, ...), many in flight.
    Uring,
}

impl EngineKind {
    /// How this engine issues metadata operations; none: it has none.
    pub fn metadata_issue(self) -> Option<MetadataIssue> {
        match self {
            EngineKind::Sync => Some(MetadataIssue::SystemCalls),
            EngineKind::IoUring => Some(MetadataIssue::Uring),
            EngineKind::Null | EngineKind::Libaio | EngineKind::Mmap => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::Libaio => "libaio",
            EngineKind::Mmap => "mmap",
            EngineKind::IoUring => "io_uring",
        }
    }
}

/// Something to do with the engine a kind names, as a type: `EngineKind::dispatch` calls
/// `with::<E>()` for the engine chosen. This is the one place the engine list meets the
/// generic code (the worker's loop is compiled once per engine through it).
pub trait WithEngine {
    type Output;
    fn with<E: Engine + 'static>(self) -> Self::Output;
}

impl EngineKind {
    /// Runs `job` with the engine this kind names.
    pub fn dispatch<W: WithEngine>(self, job: W) -> W::Output {
        match self {
            EngineKind::Sync => job.with::<SyncEngine>(),
            EngineKind::Null => job.with::<NullEngine>(),
            EngineKind::Libaio => job.with::<AioEngine>(),
            EngineKind::Mmap => job.with::<MmapEngine>(),
            EngineKind::IoUring => job.with::<UringEngine>(),
        }
    }

    /// What the engine declares about itself (`Engine::CAPS`).
    pub fn caps(self) -> EngineCaps {
        struct Caps;
        impl WithEngine for Caps {
            type Output = EngineCaps;
            fn with<E: Engine + 'static>(self) -> EngineCaps {
                E::CAPS
            }
        }
        self.dispatch(Caps)
    }

    /// The engine's refusals of its options (`Engine::check_options`).
    pub fn check_options(self, options: &super::EngineOptions, direct: bool) -> Result<(), UsageError> {
        struct Check<'a>(&'a super::EngineOptions, bool);
        impl WithEngine for Check<'_> {
            type Output = Result<(), UsageError>;
            fn with<E: Engine + 'static>(self) -> Self::Output {
                E::check_options(self.0, self.1)
            }
        }
        self.dispatch(Check(options, direct))
    }

    /// The kernel's limits on the engine (`Engine::check_limits`).
    pub fn check_limits(self, workers: u32, depth: u32) -> Result<(), UsageError> {
        struct Check(u32, u32);
        impl WithEngine for Check {
            type Output = Result<(), UsageError>;
            fn with<E: Engine + 'static>(self) -> Self::Output {
                E::check_limits(self.0, self.1)
            }
        }
        self.dispatch(Check(workers, depth))
    }

    /// The engines whose capabilities satisfy `wanted`, by name ("libaio, io_uring").
    pub fn names_where(wanted: impl Fn(EngineCaps) -> bool) -> String {
        use clap::ValueEnum;
        EngineKind::value_variants()
            .iter()
            .filter(|k| wanted(k.caps()))
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What the engine says about runs without O_DIRECT (`Engine::BUFFERED_NOTE`).
    pub fn buffered_note(self) -> Option<&'static str> {
        struct BufferedNote;
        impl WithEngine for BufferedNote {
            type Output = Option<&'static str>;
            fn with<E: Engine + 'static>(self) -> Option<&'static str> {
                E::BUFFERED_NOTE
            }
        }
        self.dispatch(BufferedNote)
    }
}
