//! The flags that make writes durable: flushes in the I/O stream, synchronous writes, a
//! flush at the end (help heading "Durability").

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::Count;
use crate::workload::spec::durability::{FlushKind, FlushSpec, SyncWrites};
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Durability")]
#[serde(default)]
pub struct DurabilityArgs {
    /// fsync each worker's file every N writes.
    ///
    /// fsync(2) the file after every N writes of each worker, through the engine
    /// (IORING_OP_FSYNC, IOCB_CMD_FSYNC, msync for mmap); fio's fsync=N. The flush waits
    /// for the writes before it and is reported as its own operation (`flush`).
    /// E.g. `iopulse db.dat --write-percent 100 --fsync-every 8`.
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub fsync_every: Option<Count<u64>>,

    /// fdatasync each worker's file every N writes.
    ///
    /// fdatasync(2) the file after every N writes of each worker (fio's fdatasync=N); as
    /// --fsync-every otherwise. E.g. the etcd check: `iopulse wal.dat --write-percent 100
    /// --block-size 2300 --fdatasync-every 1 --io-limit 22m` (or `--profile etcd`).
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub fdatasync_every: Option<Count<u64>>,

    /// Open targets O_DSYNC (dsync) or O_SYNC (sync).
    ///
    /// Open the targets with O_DSYNC (dsync) or O_SYNC (sync): every write returns once
    /// durable. E.g. `iopulse log.dat --write-percent 100 --sync-writes dsync`.
    #[arg(long, value_enum, value_name = "MODE")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub sync_writes: Option<SyncWrites>,

    /// fsync every target after the run, timed apart.
    ///
    /// At the end of the run, fsync every target (msync first for --engine mmap) and report
    /// the time it took apart from the I/O window, which it never counts in.
    /// E.g. `iopulse t.dat --write-percent 100 --fsync-on-close`
    #[arg(long)]
    pub fsync_on_close: bool,

    /// fsync at the window's end, inside the window.
    ///
    /// At the end of the window, each worker fsyncs its files (fio's end_fsync): the flush
    /// is part of the window, its time and its figures (`flush`), so the figures say what
    /// it took to have the writes on the device. E.g. `iopulse t.dat --write-percent 100
    /// --duration 10 --end-fsync`
    #[arg(long)]
    pub end_fsync: bool,
}

impl DurabilityArgs {
    /// `--fsync-every` or `--fdatasync-every`, one of them.
    pub fn flush(&self) -> Result<Option<FlushSpec>, UsageError> {
        match (self.fsync_every, self.fdatasync_every) {
            (Some(_), Some(_)) => Err(UsageError::new(
                "--fsync-every and --fdatasync-every both given: give one of them (fsync also flushes all metadata)",
            )),
            (Some(Count(n)), None) => Ok(Some(FlushSpec { kind: FlushKind::Fsync, every_writes: n })),
            (None, Some(Count(n))) => Ok(Some(FlushSpec { kind: FlushKind::Fdatasync, every_writes: n })),
            (None, None) => Ok(None),
        }
    }
}
