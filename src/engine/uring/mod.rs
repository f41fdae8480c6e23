//! `io_uring`: one ring per worker, created in the worker thread, kept full.
//!
//! - Set-up: SINGLE_ISSUER + DEFER_TASKRUN + COOP_TASKRUN + TASKRUN_FLAG, dropping
//!   them one at a time (newest kernel feature first) while the kernel answers EINVAL;
//!   the flags used are a setup fact. Deferred completions are posted only inside
//!   io_uring_enter; TASKRUN_FLAG makes the kernel say in the SQ ring's flags that some
//!   wait, so that a look at the completion queue without waiting (`reap(0, ..)`, which
//!   a writer drawing ahead makes between two generations) enters the kernel only then. With `--sqpoll` only SINGLE_ISSUER is tried
//!   (the kernel refuses the task-run flags with SQPOLL by design).
//! - The worker's slot buffers and files are registered (ReadFixed/WriteFixed,
//!   fixed files) unless `--no-register`; a refused registration falls back to
//!   plain Read/Write and says so once. The ring's own fd is registered too
//!   (not with `--no-register`), so `io_uring_enter` skips the fd lookup.
//! - `submit_and_reap` submits what is queued and waits for completions in the
//!   same `io_uring_enter` (GETEVENTS), handing over at most `--submit-batch`
//!   entries per call: by default all of them for buffered I/O, and 2 for
//!   O_DIRECT, so that the block layer never plugs a batch (see
//!   `engine::DEFAULT_SUBMIT_BATCH`).
//! - A short transfer is resubmitted for the remainder inside `reap` and is
//!   never returned as a completion; a read that returns 0 (end of file)
//!   completes with what was moved.
//! - `--iopoll` on a device without poll queues: the kernel fails each I/O
//!   with EOPNOTSUPP; the first one stops the run with an error that says how
//!   to get poll queues.
//! - Dropped with I/O in flight, the engine waits for it before the ring (and
//!   the caller's buffers) go away.
//!
//! Beside it: `messages.rs` (what the engine tells a person when the kernel refuses
//! something) and `faults.rs` (test-only fault injection, compiled into debug builds
//! only: `IOPULSE_TEST_URING_FAULTS`, read once per process, makes `open` behave as if
//! the kernel refused something, so that every fallback and error message can be
//! tested on a kernel that refuses nothing; documented in docs/engines.md).

mod faults;
mod messages;
pub mod options;
mod sys;

pub use faults::Faults;
use messages::{describe_errno, describe_io_error, no_poll_queues_message, unavailable_message};

use super::{Completion, Engine, EngineCaps, EngineError, EngineSetup, Op, Queued, Request};
use crate::primitives::buffer::{BufferAt, BufferRegion};
use crate::primitives::spin_wait::{CompletionWait, SpinWait};
use io_uring::{IoUring, opcode, squeue, types};
use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// The io_uring flags of the command line (part of the Spec).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UringOptions {
    /// Register buffers, files and the ring fd (`--no-register` clears it).
    pub register: bool,
    /// `--sqpoll`: a kernel thread consumes the submission queue.
    pub sqpoll: bool,
    /// `--sqpoll-cpu N`: the CPU the SQPOLL thread is bound to.
    pub sqpoll_cpu: Option<u32>,
    /// `--iopoll`: completions are polled from the device (O_DIRECT only).
    pub iopoll: bool,
}

impl Default for UringOptions {
    fn default() -> Self {
        Self { register: true, sqpoll: false, sqpoll_cpu: None, iopoll: false }
    }
}

/// The most buffers one ring can register (IORING_MAX_REG_BUFFERS).
const MAX_REGISTERED_BUFFERS: usize = 1 << 14;
/// The largest single registered buffer the kernel accepts.
const MAX_REGISTERED_BUFFER_BYTES: usize = 1 << 30;
/// How long an idle SQPOLL thread spins before it sleeps.
const SQPOLL_IDLE_MS: u32 = 1000;

/// Optional set-up flags, in the order they are given up when the kernel refuses:
/// newest first (DEFER_TASKRUN 6.1, SINGLE_ISSUER 6.0, COOP_TASKRUN and TASKRUN_FLAG
/// 5.19), so an older kernel keeps every flag it knows. DEFER_TASKRUN needs
/// SINGLE_ISSUER and goes first; TASKRUN_FLAG needs one of the task-run modes and goes
/// last (alone, the kernel refuses it, and it is given up too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SetupFlag {
    DeferTaskrun,
    SingleIssuer,
    CoopTaskrun,
    TaskrunFlag,
}

impl SetupFlag {
    fn name(self) -> &'static str {
        match self {
            SetupFlag::DeferTaskrun => "DEFER_TASKRUN",
            SetupFlag::SingleIssuer => "SINGLE_ISSUER",
            SetupFlag::CoopTaskrun => "COOP_TASKRUN",
            SetupFlag::TaskrunFlag => "TASKRUN_FLAG",
        }
    }
}

/// Per-slot state of the request in flight on it.
#[derive(Clone, Copy, Debug)]
struct SlotIo {
    offset_bytes: u64,
    file: u32,
    len_bytes: u32,
    /// Bytes already moved (short transfers are continued from here).
    done_bytes: u32,
    /// Registered buffer holding this slot.
    buf_index: u16,
    /// Where the request's bytes are (the slot's buffer or a window of the area).
    buffer: BufferAt,
    op: Op,
}

/// Builds submission entries: everything that does not change per I/O.
struct SqeMaker {
    /// Per file: the registered index (fixed files) or the descriptor.
    files: Box<[RawFd]>,
    sqe_flags: squeue::Flags,
    fixed_buffers: bool,
    buffers: BufferRegion,
    /// The registered index of the area's first piece (of `MAX_REGISTERED_BUFFER_BYTES`),
    /// when the buffers are registered and there is an area.
    area_index: Option<u16>,
}

impl SqeMaker {
    /// The entry moving the rest of slot `slot`'s request.
    #[inline(always)]
    fn entry(&self, slot: u32, s: &SlotIo) -> squeue::Entry {
        let fd = types::Fd(self.files[s.file as usize]);
        let ptr = self.buffers.data_ptr(slot, s.buffer).wrapping_add(s.done_bytes as usize);
        let len = s.len_bytes - s.done_bytes;
        let offset = s.offset_bytes + u64::from(s.done_bytes);
        // A window of the area is registered if it lies inside one registered piece.
        let fixed = match s.buffer {
            BufferAt::Slot => self.fixed_buffers.then_some(s.buf_index),
            BufferAt::Area(at) => self.area_index.and_then(|first| {
                let piece = at as usize / MAX_REGISTERED_BUFFER_BYTES;
                let last = (at as usize + s.len_bytes.max(1) as usize - 1) / MAX_REGISTERED_BUFFER_BYTES;
                (piece == last).then(|| first + piece as u16)
            }),
        };
        let entry = match (s.op, fixed.is_some()) {
            (Op::Read, true) => opcode::ReadFixed::new(fd, ptr, len, fixed.unwrap_or(0)).offset(offset).build(),
            (Op::Read, false) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            (Op::Write, true) => {
                opcode::WriteFixed::new(fd, ptr.cast_const(), len, fixed.unwrap_or(0)).offset(offset).build()
            }
            (Op::Write, false) => opcode::Write::new(fd, ptr.cast_const(), len).offset(offset).build(),
            (Op::Fsync, _) => opcode::Fsync::new(fd).build(),
            (Op::Fdatasync, _) => opcode::Fsync::new(fd).flags(types::FsyncFlags::DATASYNC).build(),
            // A file's trim: a punched hole, through the ring (block devices' trims are done
            // at once in `queue`). It completes with 0, which `consume` passes on as the
            // result (nothing was "moved").
            (Op::Trim, _) => opcode::Fallocate::new(fd, u64::from(len))
                .offset(offset)
                .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                .build(),
        };
        entry.flags(self.sqe_flags).user_data(u64::from(slot))
    }
}

pub struct UringEngine {
    ring: IoUring,
    maker: SqeMaker,
    slots: Box<[SlotIo]>,
    /// The worker's descriptors (for error messages, and block devices' trims).
    fds: Box<[RawFd]>,
    /// Which descriptors are block devices: their trims are BLKDISCARD, done in `queue`.
    block_devices: Box<[bool]>,
    /// Entries queued in the SQ and not yet handed to the kernel.
    pending: u32,
    /// The most entries handed over per io_uring_enter (`--submit-batch`).
    max_submit: u32,
    /// Requests queued and not yet completed (pending included).
    in_flight: u32,
    /// The ring's index among this thread's registered ring fds, if registered.
    ring_index: Option<u32>,
    sqpoll: bool,
    iopoll: bool,
    /// The kernel takes a timeout in io_uring_enter (IORING_FEAT_EXT_ARG, 5.11).
    timed_wait: bool,
    /// The ring has TASKRUN_FLAG: IORING_SQ_TASKRUN tells that completions wait to be
    /// posted (`reap_batch`).
    taskrun_flag: bool,
    /// `--completion-wait`: how long to watch the CQ before sleeping in the kernel.
    spin: SpinWait,
    /// An EOPNOTSUPP under --iopoll was reported (once).
    poll_failed: bool,
    /// IORING_OP_FSYNC entries queued (`--fsync-every`, `--fdatasync-every`).
    flush_sqes: u64,
    facts: Vec<(String, String)>,
    notes: Vec<String>,
}

/// What `build_ring` settled on.
struct Ring {
    ring: IoUring,
    flags: Vec<&'static str>,
    refused: Vec<SetupFlag>,
}

/// Creates the ring, giving up optional flags one at a time while the kernel says EINVAL.
fn build_ring(entries: u32, options: &UringOptions, faults: &Faults) -> Result<Ring, EngineError> {
    let mut optional: Vec<SetupFlag> = if options.sqpoll {
        vec![SetupFlag::SingleIssuer]
    } else {
        vec![SetupFlag::DeferTaskrun, SetupFlag::SingleIssuer, SetupFlag::CoopTaskrun, SetupFlag::TaskrunFlag]
    };
    let mut refused = Vec::new();
    loop {
        let mut builder = IoUring::builder();
        let mut flags = Vec::new();
        if options.iopoll {
            builder.setup_iopoll();
            flags.push("IOPOLL");
        }
        if options.sqpoll {
            builder.setup_sqpoll(SQPOLL_IDLE_MS);
            flags.push("SQPOLL");
            if let Some(cpu) = options.sqpoll_cpu {
                builder.setup_sqpoll_cpu(cpu);
                flags.push("SQ_AFF");
            }
        }
        for flag in &optional {
            match flag {
                SetupFlag::DeferTaskrun => builder.setup_defer_taskrun(),
                SetupFlag::SingleIssuer => builder.setup_single_issuer(),
                SetupFlag::CoopTaskrun => builder.setup_coop_taskrun(),
                SetupFlag::TaskrunFlag => builder.setup_taskrun_flag(),
            };
            flags.push(flag.name());
        }
        let result = if let Some(errno) = faults.setup_errno {
            Err(io::Error::from_raw_os_error(errno))
        } else if optional.iter().any(|f| faults.refuse.contains(f)) {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            builder.build(entries)
        };
        match result {
            Ok(ring) => return Ok(Ring { ring, flags, refused }),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !optional.is_empty() => {
                refused.push(optional.remove(0));
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let message = if errno == libc::EINVAL {
                    let cpu = options
                        .sqpoll_cpu
                        .map(|c| format!(" (--sqpoll-cpu {c}: is CPU {c} online and allowed to this process?)"))
                        .unwrap_or_default();
                    format!(
                        "io_uring_setup refused a ring of {entries} entries with {} ({}){cpu}",
                        if flags.is_empty() { "no flags".to_string() } else { flags.join("|") },
                        describe_errno(errno)
                    )
                } else {
                    let disabled = faults.disabled.or_else(read_io_uring_disabled);
                    unavailable_message(errno, disabled)
                };
                return Err(fail(message));
            }
        }
    }
}

/// An engine error that is all message ("io_uring: <message>").
fn fail(message: impl Into<String>) -> EngineError {
    EngineError::new("io_uring", io::Error::other(message.into()))
}

/// /proc/sys/kernel/io_uring_disabled (absent before 6.6).
fn read_io_uring_disabled() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok()?.trim().parse().ok()
}

/// The path behind a descriptor, for messages.
fn fd_path(fd: RawFd) -> String {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| format!("descriptor {fd}"))
}

/// How the slots map onto registered buffers: `slots_per_buffer` consecutive slots per iovec.
fn buffer_layout(region: &BufferRegion) -> Option<usize> {
    let per_buffer = region.slots.div_ceil(MAX_REGISTERED_BUFFERS).max(1);
    (per_buffer * region.slot_stride_bytes <= MAX_REGISTERED_BUFFER_BYTES).then_some(per_buffer)
}

/// Records how a registration went; returns whether it is in use.
fn registered(
    fact: &str,
    result: Result<(), String>,
    facts: &mut Vec<(String, String)>,
    notes: &mut Vec<String>,
    note: impl FnOnce(&str) -> String,
) -> bool {
    match result {
        Ok(()) => {
            facts.push((fact.into(), "true".into()));
            true
        }
        Err(why) => {
            facts.push((fact.into(), format!("false (refused: {why})")));
            notes.push(note(&why));
            false
        }
    }
}

/// Registers the slot buffers (one iovec per `buffer_layout` group of slots), then the
/// area in pieces of at most `MAX_REGISTERED_BUFFER_BYTES`, and records each slot's buffer
/// index; returns the area's first index (if there is an area). The error says why, for
/// people.
fn register_slot_buffers(
    ring: &IoUring,
    region: &BufferRegion,
    slots: &mut [SlotIo],
    faults: &Faults,
) -> Result<Option<u16>, String> {
    let total_bytes = region.slots * region.slot_stride_bytes + region.area_len_bytes;
    let per_buffer = buffer_layout(region)
        .ok_or_else(|| format!("the {total_bytes} bytes of slot buffers exceed what one ring can register"))?;
    let mut iovecs: Vec<libc::iovec> = (0..region.slots.div_ceil(per_buffer))
        .map(|i| {
            let first = i * per_buffer;
            let count = per_buffer.min(region.slots - first);
            libc::iovec { iov_base: region.slot_ptr(first as u32).cast(), iov_len: count * region.slot_stride_bytes }
        })
        .collect();
    let area_index = (region.area_len_bytes > 0).then_some(iovecs.len() as u16);
    iovecs.extend((0..region.area_len_bytes.div_ceil(MAX_REGISTERED_BUFFER_BYTES)).map(|i| {
        let at = i * MAX_REGISTERED_BUFFER_BYTES;
        let len = (region.area_len_bytes - at).min(MAX_REGISTERED_BUFFER_BYTES);
        libc::iovec { iov_base: region.area.wrapping_add(at).cast(), iov_len: len }
    }));
    if iovecs.len() > MAX_REGISTERED_BUFFERS {
        return Err(format!("the {total_bytes} bytes of slot buffers and area exceed what one ring can register"));
    }
    let result = match faults.register_buffers_errno {
        Some(errno) => Err(io::Error::from_raw_os_error(errno)),
        // SAFETY: every iovec lies inside the worker's slot allocation, which outlives the
        // engine (EngineSetup contract); the registration goes away with the ring, which is
        // dropped with the engine.
        None => unsafe { ring.submitter().register_buffers(&iovecs) },
    };
    result.map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
            format!(": the locked-memory limit (ulimit -l) is below the {total_bytes} bytes of slot buffers")
        } else {
            String::new()
        };
        format!("{}{hint}", describe_io_error(&e))
    })?;
    for (i, s) in slots.iter_mut().enumerate() {
        s.buf_index = (i / per_buffer) as u16;
    }
    Ok(area_index)
}

impl UringEngine {
    /// `open` with the fault injection given explicitly (tests call this).
    fn open_with(setup: &EngineSetup<'_>, faults: &Faults) -> Result<Self, EngineError> {
        let options = &setup.options.io_uring;
        if options.iopoll && !setup.direct {
            return Err(fail(
                "--iopoll needs O_DIRECT, but the filesystem refused O_DIRECT and the run fell back to buffered \
                 I/O: use a target that accepts O_DIRECT (--strict-direct makes the refusal an error), or drop --iopoll",
            ));
        }
        let depth = setup.queue_depth.max(1);
        let Ring { ring, flags, refused } = build_ring(depth, options, faults)?;
        let mut facts = vec![
            ("setup_flags".to_string(), if flags.is_empty() { "none".to_string() } else { flags.join("|") }),
            ("sq_entries".to_string(), ring.params().sq_entries().to_string()),
            ("cq_entries".to_string(), ring.params().cq_entries().to_string()),
        ];
        let mut notes = Vec::new();
        if !refused.is_empty() {
            let names: Vec<&str> = refused.iter().map(|f| f.name()).collect();
            facts.push(("refused_flags".to_string(), names.join("|")));
            notes.push(format!(
                "io_uring: the kernel refused IORING_SETUP_{} (EINVAL); the ring runs with {}",
                names.join(", IORING_SETUP_"),
                if flags.is_empty() { "no set-up flags".to_string() } else { flags.join("|") }
            ));
        }

        let region = setup.buffers;
        let mut slots = vec![
            SlotIo {
                offset_bytes: 0,
                file: 0,
                len_bytes: 0,
                done_bytes: 0,
                buf_index: 0,
                buffer: BufferAt::Slot,
                op: Op::Read
            };
            region.slots
        ]
        .into_boxed_slice();

        let mut area_index = None;
        let fixed_buffers = if options.register {
            let result = register_slot_buffers(&ring, &region, &mut slots, faults).map(|index| area_index = index);
            registered("registered_buffers", result, &mut facts, &mut notes, |why| {
                format!(
                    "io_uring: registering the slot buffers failed ({why}); using plain Read/Write instead \
                     (raise ulimit -l, or pass --no-register to compare without registration)"
                )
            })
        } else {
            facts.push(("registered_buffers".into(), "false (--no-register)".into()));
            false
        };
        let fixed_files = if options.register {
            let result = match faults.register_files_errno {
                Some(errno) => Err(describe_errno(errno)),
                None => ring.submitter().register_files(setup.fds).map_err(|e| describe_io_error(&e)),
            };
            registered("registered_files", result, &mut facts, &mut notes, |why| {
                format!("io_uring: registering the files failed ({why}); using plain descriptors instead")
            })
        } else {
            facts.push(("registered_files".into(), "false (--no-register)".into()));
            false
        };

        let ring_index = if options.register { sys::register_ring_fd(ring.as_raw_fd()) } else { None };
        facts.push(("registered_ring_fd".into(), ring_index.is_some().to_string()));
        let depth = setup.queue_depth.max(1);
        let max_submit =
            super::submit_batch(setup.options, if setup.direct { super::DEFAULT_SUBMIT_BATCH } else { depth }, depth);
        facts.push(("submit_batch_max".into(), max_submit.to_string()));

        let files: Box<[RawFd]> =
            if fixed_files { (0..setup.fds.len() as RawFd).collect() } else { setup.fds.to_vec().into_boxed_slice() };
        let sqe_flags = if fixed_files { squeue::Flags::FIXED_FILE } else { squeue::Flags::empty() };
        let timed_wait = ring.params().is_feature_ext_arg();
        let mut engine = Self {
            ring,
            maker: SqeMaker { files, sqe_flags, fixed_buffers, buffers: region, area_index },
            slots,
            fds: setup.fds.to_vec().into_boxed_slice(),
            block_devices: crate::engine::discard::block_devices(setup.fds),
            pending: 0,
            max_submit,
            in_flight: 0,
            ring_index,
            sqpoll: options.sqpoll,
            iopoll: options.iopoll,
            timed_wait,
            taskrun_flag: flags.contains(&SetupFlag::TaskrunFlag.name()),
            spin: SpinWait::new(if options.iopoll { CompletionWait::Sleep } else { setup.options.completion_wait }),
            poll_failed: false,
            flush_sqes: 0,
            facts,
            notes,
        };
        if options.iopoll {
            engine.probe_polling(setup)?;
        }
        Ok(engine)
    }

    /// With --iopoll, reads the first block of each file once before the run starts, so a
    /// device without poll queues is an error at set-up (no report of a run that never ran).
    /// Slot 0's bytes are saved and put back: they may hold the data the worker will write.
    fn probe_polling(&mut self, setup: &EngineSetup<'_>) -> Result<(), EngineError> {
        let region = setup.buffers;
        let len = region.slot_len_bytes;
        // SAFETY: slot 0 lies inside the region (it has at least one slot) and no I/O is in flight.
        let saved = unsafe { std::slice::from_raw_parts(region.slot_ptr(0), len) }.to_vec();
        let mut result = Ok(());
        for file in 0..setup.fds.len() as u32 {
            let req =
                Request { slot: 0, op: Op::Read, file, offset_bytes: 0, len_bytes: len as u32, buffer: BufferAt::Slot };
            // SAFETY: slot 0 is free (nothing is in flight) and we wait for the read below.
            if unsafe { self.queue(req) } != Queued::InFlight {
                break;
            }
            let mut out = [Completion::default()];
            result = self.reap_batch(1, &mut out).map(drop);
            if result.is_err() {
                break;
            }
        }
        if self.in_flight == 0 {
            // SAFETY: as above, and the probe reads have all completed; `saved` holds `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(saved.as_ptr(), region.slot_ptr(0), len) };
        }
        result
    }

    /// One io_uring_enter: hands the kernel up to `--submit-batch` queued entries and,
    /// when `wait` > 0, waits until the completion queue holds `wait` entries (callers
    /// wait only once the rest is handed over: see `reap_batch`), for at most `timeout_ns`
    /// when given (IORING_ENTER_EXT_ARG; ETIME when the time ran out). GETEVENTS is always
    /// set so that deferred completions (DEFER_TASKRUN) and polled ones (IOPOLL) are reaped.
    #[inline]
    fn enter(&mut self, wait: u32, timeout_ns: Option<u64>) -> io::Result<()> {
        let mut flags = sys::ENTER_GETEVENTS;
        if self.sqpoll {
            // The kernel thread consumes the queue; a syscall is needed only to wake it or to wait.
            self.pending = 0;
            if self.ring.submission().need_wakeup() {
                flags |= sys::ENTER_SQ_WAKEUP;
            } else if wait == 0 {
                return Ok(());
            }
        }
        let ring = match self.ring_index {
            Some(index) => sys::Ring::Registered(index),
            None => sys::Ring::Fd(self.ring.as_raw_fd()),
        };
        // SAFETY: `ring` is this engine's ring; every queued entry points into the slot
        // buffers, which outlive the engine and are not touched by the worker until the
        // slot's completion is reaped.
        let submitted = unsafe { sys::enter(ring, self.pending.min(self.max_submit), wait, flags, timeout_ns) }?;
        if !self.sqpoll {
            self.pending -= submitted.min(self.pending);
        }
        Ok(())
    }

    /// Whether completions wait as deferred task work, to be posted by the next
    /// io_uring_enter (IORING_SQ_TASKRUN; a plain load from the SQ ring's flags).
    #[inline]
    fn completions_deferred(&mut self) -> bool {
        self.taskrun_flag && self.ring.submission().taskrun()
    }

    /// Moves completions from the CQ into `out`: whole requests, end-of-file short
    /// counts and errors. Short transfers are queued again for their remainder.
    #[inline]
    fn consume(&mut self, out: &mut [Completion]) -> Result<usize, EngineError> {
        let (_, mut sq, mut cq) = self.ring.split();
        let mut n = 0;
        while n < out.len() {
            let Some(cqe) = cq.next() else { break };
            let slot = cqe.user_data() as u32;
            let res = cqe.result();
            let s = &mut self.slots[slot as usize];
            let rest = s.len_bytes - s.done_bytes;
            if res >= 0 && res as u32 == rest {
                out[n] = Completion { slot, result: i64::from(s.len_bytes) };
                n += 1;
                self.in_flight -= 1;
                continue;
            }
            if res > 0 || res == -libc::EAGAIN {
                // Short transfer (or a polled request the block layer could not take now):
                // continue it where it stopped. The SQ has room: its capacity is at least
                // the queue depth and this slot's previous entry was consumed.
                if res > 0 {
                    s.done_bytes += res as u32;
                }
                let entry = self.maker.entry(slot, s);
                // SAFETY: the entry points into slot `slot`'s buffer (within its length),
                // which the worker leaves alone until this slot's completion is returned.
                if unsafe { sq.push(&entry) }.is_ok() {
                    self.pending += 1;
                    continue;
                }
                // No room after all: report what was moved rather than lose the request.
                out[n] = Completion { slot, result: i64::from(s.done_bytes) };
                n += 1;
                self.in_flight -= 1;
                continue;
            }
            self.in_flight -= 1;
            if res == 0 {
                // End of file: the short count is the result.
                out[n] = Completion { slot, result: i64::from(s.done_bytes) };
                n += 1;
                continue;
            }
            if res == -libc::EOPNOTSUPP && self.iopoll && !self.poll_failed {
                self.poll_failed = true;
                let path = fd_path(self.fds[s.file as usize]);
                return Err(fail(no_poll_queues_message(&path)));
            }
            out[n] = Completion { slot, result: i64::from(res) };
            n += 1;
        }
        sq.sync();
        Ok(n)
    }

    fn reap_batch(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        let min = min.min(self.in_flight as usize).min(out.len());
        let mut n = 0;
        loop {
            // More queued than one call may hand over: the first batches go without waiting.
            while !self.sqpoll && self.pending > self.max_submit {
                match self.enter(0, None) {
                    Ok(()) => {}
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => break,
                    Err(e) => return Err(EngineError::new("io_uring_enter", e)),
                }
            }
            let ready = self.ring.completion().len();
            let wait = if n + ready >= min || self.pending > self.max_submit { 0 } else { (min - n) as u32 };
            // Nothing to hand over and no wait: the kernel is entered only when it has
            // completions to post (deferred task work), so that a look without waiting
            // sees every I/O that has completed.
            // Watching the CQ before sleeping (`--completion-wait`): the queue is handed
            // over first, then the worker spins on the CQ and on the flag that says
            // completions wait as task work, and enters the kernel only to post them.
            let wait = if wait > 0 && !self.sqpoll && self.pending <= self.max_submit {
                let budget = self.spin.budget(self.in_flight as usize);
                if budget > 0 {
                    if self.pending > 0 {
                        match self.enter(0, None) {
                            Ok(()) => {}
                            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
                            Err(e) => return Err(EngineError::new("io_uring_enter", e)),
                        }
                    }
                    let (ring, taskrun_flag) = (&mut self.ring, self.taskrun_flag);
                    self.spin.spin_for(budget, || {
                        !ring.completion().is_empty() || (taskrun_flag && ring.submission().taskrun())
                    });
                    let ready = self.ring.completion().len();
                    if n + ready >= min { 0 } else { wait }
                } else {
                    wait
                }
            } else {
                wait
            };
            if self.pending > 0 || wait > 0 || self.sqpoll || self.completions_deferred() {
                match self.enter(wait, None) {
                    Ok(()) => {}
                    // A signal: return what there is, so that the worker sees its stop word.
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                        return Ok(n + self.consume(&mut out[n..])?);
                    }
                    // The kernel is short of resources or must flush completions first: reap and retry.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => {}
                    Err(e) => return Err(EngineError::new("io_uring_enter", e)),
                }
            }
            n += self.consume(&mut out[n..])?;
            if n >= min || self.in_flight == 0 {
                return Ok(n);
            }
        }
    }
}

impl Engine for UringEngine {
    const NAME: &'static str = "io_uring";
    const CAPS: EngineCaps = EngineCaps {
        completes_inline: false,
        touches_storage: true,
        supports_direct: true,
        batches_submissions: true,
        writes_through_descriptor: true,
    };

    fn check_options(
        options: &super::EngineOptions,
        direct: bool,
    ) -> Result<(), crate::diagnostics::error::UsageError> {
        options::check(&options.io_uring, direct)
    }

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        Self::open_with(setup, faults::injected().map_err(|e| fail(e.clone()))?)
    }

    #[inline]
    unsafe fn queue(&mut self, req: Request) -> Queued {
        if req.op == Op::Trim && self.block_devices[req.file as usize] {
            let fd = self.fds[req.file as usize];
            return Queued::Done(crate::engine::discard::discard(fd, true, req.offset_bytes, req.len_bytes.into()));
        }
        let s = &mut self.slots[req.slot as usize];
        s.op = req.op;
        s.file = req.file;
        s.offset_bytes = req.offset_bytes;
        s.len_bytes = req.len_bytes;
        s.done_bytes = 0;
        s.buffer = req.buffer;
        self.flush_sqes += u64::from(req.op.is_flush());
        let entry = self.maker.entry(req.slot, s);
        // SAFETY: by `queue`'s contract the slot's buffer holds `len_bytes` and is left
        // alone by the caller until the completion is reaped; the region outlives the engine.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Queued::Full;
        }
        self.pending += 1;
        self.in_flight += 1;
        Queued::InFlight
    }

    /// Hands the kernel everything queued, `--submit-batch` entries per call.
    fn submit(&mut self) -> Result<(), EngineError> {
        loop {
            match self.enter(0, None) {
                Ok(()) if self.pending == 0 || self.sqpoll => return Ok(()),
                Ok(()) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {
                    if self.pending == 0 {
                        return Ok(());
                    }
                }
                Err(e) => return Err(EngineError::new("io_uring_enter", e)),
            }
        }
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        self.reap_batch(min, out)
    }

    fn reap_within(&mut self, out: &mut [Completion], timeout_ns: u64) -> Result<usize, EngineError> {
        let n = self.reap_batch(0, out)?;
        if n > 0 || self.in_flight == 0 || !self.timed_wait || timeout_ns == 0 {
            return Ok(n);
        }
        match self.enter(1, Some(timeout_ns)) {
            Ok(()) => {}
            // The time ran out, a signal came, or the kernel asks to reap first: take what there is.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
            Err(e) => return Err(EngineError::new("io_uring_enter", e)),
        }
        self.consume(out)
    }

    #[inline]
    fn submit_and_reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        self.reap_batch(min, out)
    }

    fn setup_facts(&self) -> Vec<(String, String)> {
        let mut facts = self.facts.clone();
        facts.extend(self.spin.facts());
        if self.flush_sqes > 0 {
            facts.push(("flush_sqes".into(), self.flush_sqes.to_string()));
        }
        facts
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

impl Drop for UringEngine {
    /// Waits for every request in flight: the kernel may still write into the slot
    /// buffers, which the worker frees after the engine.
    fn drop(&mut self) {
        while self.in_flight > 0 {
            // Entries still queued are handed over first (`--submit-batch` per call): waiting
            // for all of `in_flight` before the last of them is submitted would never end.
            let wait = if self.pending > self.max_submit { 0 } else { self.in_flight };
            match self.enter(wait, None) {
                Ok(()) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
                Err(_) => break,
            }
            let mut cq = self.ring.completion();
            for _ in &mut cq {
                self.in_flight -= 1;
            }
        }
        if self.maker.sqe_flags.contains(squeue::Flags::FIXED_FILE) {
            // The ring's references to the files are dropped here, in this thread, so the
            // files are closed when the worker closes them. Left to the ring's teardown,
            // they close in a kernel worker tens of milliseconds after the process has
            // gone, and a block device written to stays claimed (O_EXCL) meanwhile: the
            // next run on it would be refused as "in use".
            let _ = self.ring.submitter().unregister_files();
        }
        if let Some(index) = self.ring_index {
            sys::unregister_ring_fd(self.ring.as_raw_fd(), index);
        }
    }
}

#[cfg(test)]
mod tests;
