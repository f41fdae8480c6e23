//! Durability asked of a run: flushes in the I/O stream (`--fsync-every N`,
//! `--fdatasync-every N`) and synchronous writes (`--sync-writes dsync|sync`).
//!
//! Plain data, part of the `Spec`; the worker issues the flushes (through its engine)
//! and the target opener applies the open flags. Must not do I/O itself.

use crate::io::engine::Op;
use serde::{Deserialize, Serialize};

/// Which flush a worker issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlushKind {
    /// fsync(2): data and all metadata.
    Fsync,
    /// fdatasync(2): data and the metadata needed to read it back.
    Fdatasync,
}

impl FlushKind {
    pub fn name(self) -> &'static str {
        match self {
            FlushKind::Fsync => "fsync",
            FlushKind::Fdatasync => "fdatasync",
        }
    }

    /// The command-line flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            FlushKind::Fsync => "--fsync-every",
            FlushKind::Fdatasync => "--fdatasync-every",
        }
    }

    pub fn op(self) -> Op {
        match self {
            FlushKind::Fsync => Op::Fsync,
            FlushKind::Fdatasync => Op::Fdatasync,
        }
    }
}

/// A flush after every `every_writes` writes each worker issues (fio: `fsync=N`,
/// `fdatasync=N`, counted the same way, per worker).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlushSpec {
    pub kind: FlushKind,
    pub every_writes: u64,
}

/// `--sync-writes`: the targets are opened so that every write is durable when it completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum SyncWrites {
    /// O_DSYNC: each write waits for its data (and the metadata to read it back).
    Dsync,
    /// O_SYNC: each write waits for its data and all metadata.
    Sync,
}

impl SyncWrites {
    pub fn name(self) -> &'static str {
        match self {
            SyncWrites::Dsync => "dsync",
            SyncWrites::Sync => "sync",
        }
    }

    /// The open(2) flag.
    pub fn open_flag(self) -> libc::c_int {
        match self {
            SyncWrites::Dsync => libc::O_DSYNC,
            SyncWrites::Sync => libc::O_SYNC,
        }
    }
}

/// What makes writes durable, and when (`front/cli/durability.rs`).
/// A section of the `Spec`, flattened into its JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DurabilitySpec {
    /// `--fsync-on-close`: fsync every target at the end of the run, timed outside the window.
    #[serde(default)]
    pub fsync_on_close: bool,
    /// `--end-fsync`: each worker fsyncs its files at the end of the window, counted in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end_fsync: bool,
    /// `--fsync-every N`, `--fdatasync-every N`: a flush after every N writes of a worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<crate::workload::spec::durability::FlushSpec>,
    /// `--sync-writes dsync|sync`: the targets are opened with O_DSYNC / O_SYNC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_writes: Option<crate::workload::spec::durability::SyncWrites>,
}
