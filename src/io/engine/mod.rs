//! The engine seam: how a worker hands requests to the kernel and gets
//! completions back, in batches.
//!
//! Engines only move bytes. They know nothing of timing, statistics,
//! verification or reports: the worker does all accounting. A short read or
//! write is finished inside the engine by resubmitting the remainder, so a
//! completion always covers the whole request (or carries an error).
//!
//! The contract with the worker: a request names a slot and where its bytes are (the
//! slot's buffer, or a window of the worker's area); the engine reads or writes them
//! until the completion for that slot is reaped, and the worker does not touch them
//! meanwhile (hence `queue` is `unsafe`).
//! An engine dropped with I/O in flight must wait for it first.
//!
//! Each engine is a folder (`aio/`, `mmap/`, `sync/`, `uring/`; `null.rs`, which touches no
//! kernel interface, is a file): the engine in `mod.rs`, its own flags and their checks in
//! `options.rs` (a clap group flattened into `options.rs` here, refused with another engine;
//! `Engine::check_options`, `Engine::check_limits`), and its raw structures and system calls
//! in a private `sys.rs`. Nothing outside `io/engine/` names an engine.

pub mod aio;
pub mod discard;
mod kind;
pub mod mmap;
pub mod null;
pub mod options;
pub mod sync;
pub mod tree_ops;
pub mod uring;

pub use kind::{EngineKind, MetadataIssue, WithEngine};
pub use mmap::options::Madvise;

pub use crate::base::sys::buffer::BufferAt;
use crate::base::sys::buffer::BufferRegion;
use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::RawFd;

/// What a request does.
///
/// `Fsync` and `Fdatasync` flush the file to stable storage (`--fsync-every`,
/// `--fdatasync-every`): they move no bytes, use no buffer (`len_bytes` 0, the slot is
/// only the request's name) and complete with result 0. An engine issues them through
/// its own interface (fsync(2)/fdatasync(2), IORING_OP_FSYNC, IOCB_CMD_FSYNC/FDSYNC,
/// msync); the worker issues one only when nothing else is in flight, so it covers
/// every write before it.
///
/// `Trim` discards `len_bytes` at `offset_bytes` (`--trim-percent`): BLKDISCARD on a block
/// device, a punched hole (fallocate PUNCH_HOLE|KEEP_SIZE) in a file (`discard.rs`). It
/// uses no buffer either, and completes with result 0, like a flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
    Fdatasync,
    Trim,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::Trim => "trim",
        }
    }

    /// A flush (fsync or fdatasync), not a transfer.
    #[inline(always)]
    pub fn is_flush(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync)
    }
}

/// One I/O: `len_bytes` at `offset_bytes` of file `file`, into or out of slot `slot`'s
/// buffer, or out of a window of the worker's area (`buffer`: writes of `unique` data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub slot: u32,
    pub op: Op,
    pub file: u32,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub buffer: BufferAt,
}

/// A finished request: `result` is the number of bytes moved (the whole
/// request unless end of file was reached) or a negated errno.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// What happened to a queued request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// The engine performed it at once; the value is as `Completion::result`.
    Done(i64),
    /// It will come back from `reap`.
    InFlight,
    /// The engine has no room: submit and reap first, then queue it again.
    Full,
}

/// What an engine can do, declared once so that no caller tests engine names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineCaps {
    /// Every request completes inside `queue` (one I/O at a time per worker).
    pub completes_inline: bool,
    /// The engine moves bytes to and from storage (false for `null`).
    pub touches_storage: bool,
    /// O_DIRECT file descriptors can be used with this engine.
    pub supports_direct: bool,
    /// Several requests go to the kernel in one call (`--submit-batch` applies).
    pub batches_submissions: bool,
    /// Writes go through the file descriptor (write(2), io_submit, io_uring), so O_DSYNC
    /// and O_SYNC apply (`--sync-writes`); stores into a mapping never do.
    pub writes_through_descriptor: bool,
}

/// Engine-specific settings from the command line (plain data, part of the
/// `Spec`). Each engine reads only its own part; an engine that gains flags
/// adds a field here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineOptions {
    /// mmap: `--mmap-populate`, prefault the mapping (MAP_POPULATE) before the start.
    pub mmap_populate: bool,
    /// mmap: `--madvise`, advice passed to the kernel for the whole mapping.
    pub madvise: Option<Madvise>,
    /// `--engine io_uring`: registration, SQPOLL, IOPOLL.
    pub io_uring: uring::UringOptions,
    /// `--submit-batch N` (libaio, io_uring): at most N requests per submission call;
    /// `None` for the engine's default (see `submit_batch`).
    pub submit_batch: Option<u32>,
    /// `--completion-wait` (libaio, io_uring): spin before sleeping for a completion.
    pub completion_wait: crate::base::primitives::spin_wait::CompletionWait,
}

/// Requests per submission call when `--submit-batch` is not given, for libaio and
/// io_uring: 2, the most the kernel submits without plugging. With 3 or more, io_submit
/// (`AIO_PLUG_THRESHOLD`) and io_uring_enter (`need_plug`) hold the block layer's plug
/// until the whole batch is built, so the device sees nothing until then, and at depth
/// the requests travel in waves: on this VM's virtio disk one call of 32 gave 42K IOPS
/// and a p50 of 730 µs at QD 32 where batches of 1 or 2 gave 50K+ and 600 µs, like fio
/// (whose default is one request per call). Warm-cache buffered io_uring reads never
/// reach the device and keep whole batches (fewer system calls).
pub const DEFAULT_SUBMIT_BATCH: u32 = 2;

/// The most requests per submission call: `--submit-batch`, else `default`, within 1..=depth.
pub fn submit_batch(options: &EngineOptions, default: u32, depth: u32) -> u32 {
    options.submit_batch.unwrap_or(default).clamp(1, depth.max(1))
}

/// What an engine is given to start: the worker's files and slot buffers.
#[derive(Clone, Copy, Debug)]
pub struct EngineSetup<'a> {
    pub fds: &'a [RawFd],
    pub buffers: BufferRegion,
    pub queue_depth: u32,
    /// The descriptors were opened with O_DIRECT (and the filesystem accepted it).
    pub direct: bool,
    pub options: &'a EngineOptions,
}

/// An engine that could not start or stopped working (not a failed I/O: those
/// come back as completions with a negative result).
#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct EngineError {
    pub context: String,
    #[source]
    pub source: io::Error,
}

impl EngineError {
    pub fn new(context: impl Into<String>, source: io::Error) -> Self {
        Self { context: context.into(), source }
    }
}

/// A way to move bytes between slot buffers and files.
pub trait Engine: Sized {
    const NAME: &'static str;
    const CAPS: EngineCaps;
    /// Said once at start (a note, recorded in the result) when the run's
    /// descriptors are not O_DIRECT: how buffered I/O behaves with this engine.
    const BUFFERED_NOTE: Option<&'static str> = None;

    /// Refuses, before anything is touched, options of this engine that cannot work
    /// (`direct`: O_DIRECT was asked for). Only the chosen engine's is called.
    fn check_options(options: &EngineOptions, direct: bool) -> Result<(), crate::base::diagnostics::error::UsageError> {
        let _ = (options, direct);
        Ok(())
    }

    /// Refuses, before anything is touched, a run the kernel's limits on this engine
    /// cannot hold: `workers` workers of `depth` requests each.
    fn check_limits(workers: u32, depth: u32) -> Result<(), crate::base::diagnostics::error::UsageError> {
        let _ = (workers, depth);
        Ok(())
    }

    /// Sets the engine up inside the worker thread that will use it.
    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError>;

    /// Queues one request.
    ///
    /// # Safety
    /// `req.slot` is a slot of the region given to `open`, `req.len_bytes` is at
    /// most the slot length (or, with `BufferAt::Area`, the window lies inside the
    /// region's area), the region outlives the engine, and the caller does not read or
    /// write those bytes until the slot's completion has been reaped (or `Queued::Done`
    /// was returned).
    unsafe fn queue(&mut self, req: Request) -> Queued;

    /// Hands everything queued so far to the kernel (one system call where the
    /// engine can batch).
    fn submit(&mut self) -> Result<(), EngineError>;

    /// Waits until at least `min` completions are available (fewer only if
    /// fewer are in flight), writes up to `out.len()` of them into `out` and
    /// returns how many.
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError>;

    /// `submit` then `reap(min, out)`. Engines whose kernel interface does both in one
    /// system call (io_uring_enter) override it; the worker's loop calls this once per batch.
    fn submit_and_reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        self.submit()?;
        self.reap(min, out)
    }

    /// Waits at most `timeout_ns` for a completion, writes what is available (up to
    /// `out.len()`) into `out` and returns how many: 0 when the time ran out. A paced
    /// worker waits here until its next I/O is due. The default only polls (`reap(0)`),
    /// and the worker pauses briefly between polls; engines whose kernel interface can
    /// wait with a timeout override it.
    fn reap_within(&mut self, out: &mut [Completion], timeout_ns: u64) -> Result<usize, EngineError> {
        let _ = timeout_ns;
        self.reap(0, out)
    }

    /// Facts about how the engine was set up, said once at the end of the run
    /// and recorded in the JSON result (`engine.setup`), e.g. ("registered_buffers", "true").
    fn setup_facts(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Makes the writes of the run durable where they would otherwise sit only
    /// in memory the engine owns (mmap: msync of its mappings). Called once by
    /// the worker after its window closed and its I/O drained, and timed
    /// outside the window. Returns whether there was anything to do.
    fn sync_writes(&mut self) -> Result<bool, EngineError> {
        Ok(false)
    }

    /// Things a person should read once (a fallback the engine took at set-up, e.g.
    /// registration refused). The coordinator prints each distinct note once, as a
    /// note on stderr, and records it in the JSON result.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The errno of the last failed libc call, as a negative `Completion::result`.
#[inline]
pub fn neg_errno() -> i64 {
    -i64::from(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
}
