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
//! Beside it: `ring_setup.rs` (the ring made once per worker: flags, registrations, the
//! fallbacks), `messages.rs` (what the engine tells a person when the kernel refuses
//! something) and `faults.rs` (test-only fault injection, compiled into debug builds
//! only: `IOPULSE_TEST_URING_FAULTS`, read once per process, makes `open` behave as if
//! the kernel refused something, so that every fallback and error message can be
//! tested on a kernel that refuses nothing; documented in docs/engines.md).

mod faults;
mod messages;
pub mod options;
mod sys;

pub use faults::Faults;
use messages::no_poll_queues_message;

use super::{Completion, Engine, EngineCaps, EngineError, EngineSetup, Op, Queued, Request};
use crate::base::primitives::spin_wait::SpinWait;
use crate::base::sys::buffer::{BufferAt, BufferRegion};
use io_uring::{IoUring, opcode, squeue, types};
use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

mod ring_setup;

use ring_setup::{fail, fd_path};

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
    /// How the ring was set up, and what the kernel offers it.
    features: RingFeatures,
    /// `--completion-wait`: how long to watch the CQ before sleeping in the kernel.
    spin: SpinWait,
    /// IORING_OP_FSYNC entries queued (`--fsync-every`, `--fdatasync-every`).
    flush_sqes: u64,
    /// What the engine says of itself in the result.
    said: EngineSays,
}

/// How a ring was set up, and what the kernel offers it.
pub(super) struct RingFeatures {
    pub(super) sqpoll: bool,
    pub(super) iopoll: bool,
    /// The kernel takes a timeout in io_uring_enter (IORING_FEAT_EXT_ARG, 5.11).
    pub(super) timed_wait: bool,
    /// The ring has TASKRUN_FLAG: IORING_SQ_TASKRUN tells that completions wait to be
    /// posted (`reap_batch`).
    pub(super) taskrun_flag: bool,
}

/// What the engine says of itself: its set-up's facts and notes, and whether an
/// EOPNOTSUPP under --iopoll was reported (once).
pub(super) struct EngineSays {
    pub(super) facts: Vec<(String, String)>,
    pub(super) notes: Vec<String>,
    pub(super) poll_failed: bool,
}

impl UringEngine {
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
        if self.features.sqpoll {
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
        if !self.features.sqpoll {
            self.pending -= submitted.min(self.pending);
        }
        Ok(())
    }

    /// Whether completions wait as deferred task work, to be posted by the next
    /// io_uring_enter (IORING_SQ_TASKRUN; a plain load from the SQ ring's flags).
    #[inline]
    fn completions_deferred(&mut self) -> bool {
        self.features.taskrun_flag && self.ring.submission().taskrun()
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
            if res == -libc::EOPNOTSUPP && self.features.iopoll && !self.said.poll_failed {
                self.said.poll_failed = true;
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
            while !self.features.sqpoll && self.pending > self.max_submit {
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
            let wait = if wait > 0 && !self.features.sqpoll && self.pending <= self.max_submit {
                let budget = self.spin.budget(self.in_flight as usize);
                if budget > 0 {
                    if self.pending > 0 {
                        match self.enter(0, None) {
                            Ok(()) => {}
                            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
                            Err(e) => return Err(EngineError::new("io_uring_enter", e)),
                        }
                    }
                    let (ring, taskrun_flag) = (&mut self.ring, self.features.taskrun_flag);
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
            if self.pending > 0 || wait > 0 || self.features.sqpoll || self.completions_deferred() {
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
    ) -> Result<(), crate::base::diagnostics::error::UsageError> {
        options::check(&options.io_uring, direct)
    }

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        Self::open_with(setup, faults::injected().map_err(|e| fail(e.clone()))?)
    }

    #[inline]
    unsafe fn queue(&mut self, req: Request) -> Queued {
        if req.op == Op::Trim && self.block_devices[req.file as usize] {
            let fd = self.fds[req.file as usize];
            return Queued::Done(crate::io::engine::discard::discard(fd, true, req.offset_bytes, req.len_bytes.into()));
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
                Ok(()) if self.pending == 0 || self.features.sqpoll => return Ok(()),
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
        if n > 0 || self.in_flight == 0 || !self.features.timed_wait || timeout_ns == 0 {
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
        let mut facts = self.said.facts.clone();
        facts.extend(self.spin.facts());
        if self.flush_sqes > 0 {
            facts.push(("flush_sqes".into(), self.flush_sqes.to_string()));
        }
        facts
    }

    fn notes(&self) -> Vec<String> {
        self.said.notes.clone()
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
