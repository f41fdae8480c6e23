//! `libaio`: Linux native AIO through the io_setup / io_submit / io_getevents /
//! io_destroy system calls, called directly (no C library, `sys.rs`, where the
//! `iocb` and `io_event` layouts of `<linux/aio_abi.h>` are defined with their
//! sizes checked at compile time).
//!
//! One context per worker, sized to the queue depth; one `iocb` per slot (the
//! slot index is the iocb's `aio_data`). Requests queued between two `submit`
//! calls go to the kernel in one io_submit. Completions are taken from the
//! context's ring in user space when the kernel's ring layout is the one
//! known here (no system call while completions are waiting), otherwise and
//! whenever the caller must wait, through io_getevents.
//!
//! A short transfer is continued by resubmitting the remainder; a transfer
//! that makes no progress (end of file) completes with what was moved. When
//! io_submit says EAGAIN (no room in the context) the engine reaps first, keeps
//! those completions for the next `reap`, and submits again.
//!
//! Without O_DIRECT, native AIO is not asynchronous: the kernel performs
//! buffered reads and writes synchronously inside io_submit. The engine still
//! works, and the run says so once at start (`BUFFERED_NOTE`).

mod sys;

use super::{Completion, Engine, EngineCaps, EngineError, EngineSetup, Op, Queued, Request};
use crate::base::primitives::spin_wait::{CompletionWait, SpinWait};
use crate::base::sys::buffer::BufferRegion;
use std::io;
use std::os::fd::RawFd;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use sys::{AioRing, IOCB_CMD_FDSYNC, IOCB_CMD_FSYNC, IOCB_CMD_PREAD, IOCB_CMD_PWRITE, IoEvent, Iocb};

/// Most iocbs per io_submit on buffered descriptors. io_submit plugs the block
/// layer for batches larger than 2 (AIO_PLUG_THRESHOLD, fs/aio.c); a buffered
/// read that misses the page cache then sleeps inside io_submit with its
/// request held in the plug, which is only flushed from the scheduler and
/// dispatched by kblockd. Measured here: 4 KiB random buffered reads at QD 32
/// from a cold cache ran at 340-550 IOPS with 32 per call, 7.7-10.3K with 2,
/// 6.8K with 1 (fio: 6.7-8.0K). Since buffered AIO is synchronous anyway, a
/// larger batch only saves system calls. O_DIRECT submits 2 per call too, for
/// another reason (`engine::DEFAULT_SUBMIT_BATCH`); `--submit-batch` overrides both.
const BUFFERED_SUBMIT_BATCH: usize = 2;
/// The part of a request still to be moved, for resubmitting short transfers.
#[derive(Clone, Copy, Debug, Default)]
struct SlotIo {
    len_bytes: u64,
    done_bytes: u64,
}

/// Counters of what the engine did, reported once at the end (plain adds, no atomics).
#[derive(Clone, Copy, Debug, Default)]
pub struct AioCounters {
    pub io_submit_calls: u64,
    pub io_getevents_calls: u64,
    /// Completions taken from the ring in user space (no system call).
    pub ring_reaped: u64,
    /// io_submit answered EAGAIN and the engine reaped before submitting again.
    pub submit_eagain: u64,
    /// Short transfers whose remainder was resubmitted.
    pub short_resubmits: u64,
    /// IOCB_CMD_FSYNC / IOCB_CMD_FDSYNC iocbs queued (`--fsync-every`, `--fdatasync-every`).
    pub flush_iocbs: u64,
}

pub struct AioEngine {
    ctx: u64,
    /// The context's completion ring, when its layout is the known one; null otherwise.
    ring: *const AioRing,
    context_events: u32,
    files: AioFiles,
    buffers: BufferRegion,
    /// One iocb per slot. Never reallocated: `pending` points into it.
    iocbs: Box<[Iocb]>,
    slots: Box<[SlotIo]>,
    /// Queued, not yet handed to the kernel, in order.
    pending: Box<[*mut Iocb]>,
    pending_len: usize,
    /// Submitted to the kernel and not yet reaped.
    in_flight: usize,
    events: Box<[IoEvent]>,
    /// Completions found while making room (EAGAIN) or refused by io_submit, returned first by `reap`.
    ready: ReadyCompletions,
    /// Most iocbs per io_submit.
    max_submit: usize,
    pub counters: AioCounters,
    /// `--completion-wait`: how long to watch the user-space ring before io_getevents.
    spin: SpinWait,
}

/// The worker's files as the engine sees them.
struct AioFiles {
    fds: Box<[RawFd]>,
    /// Which descriptors are block devices (a trim is then BLKDISCARD).
    block_devices: Box<[bool]>,
    /// Opened with O_DIRECT (without it, the kernel does each I/O inside io_submit).
    direct: bool,
}

/// Completions the engine holds for the next `reap`: `completions[..len]`.
struct ReadyCompletions {
    completions: Box<[Completion]>,
    len: usize,
}

impl Engine for AioEngine {
    const NAME: &'static str = "libaio";
    const CAPS: EngineCaps = EngineCaps {
        completes_inline: false,
        touches_storage: true,
        supports_direct: true,
        batches_submissions: true,
        writes_through_descriptor: true,
    };
    const BUFFERED_NOTE: Option<&'static str> = Some(
        "engine libaio without O_DIRECT: Linux native AIO performs buffered reads and writes synchronously \
         inside io_submit, so the queue depth overlaps no I/O (add --direct, or use --engine io_uring, for \
         asynchronous buffered I/O)",
    );

    /// Native AIO requests are a system-wide budget (fs.aio-max-nr): each worker's context
    /// takes `depth` of them at set-up, so a run that needs more than are free would fail
    /// after its targets were laid out.
    fn check_limits(workers: u32, depth: u32) -> Result<(), crate::base::diagnostics::error::UsageError> {
        let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
        let (Some(max), Some(used)) = (read("/proc/sys/fs/aio-max-nr"), read("/proc/sys/fs/aio-nr")) else {
            return Ok(());
        };
        let free = max.saturating_sub(used);
        let needed = u64::from(workers) * u64::from(depth);
        if needed <= free {
            return Ok(());
        }
        let per_worker = free / u64::from(workers.max(1));
        let hint = if per_worker > 0 {
            format!("at most --queue-depth {per_worker} with --threads {workers}")
        } else {
            "no libaio worker can start now".to_string()
        };
        Err(crate::base::diagnostics::error::UsageError::new(format!(
            "--queue-depth {depth} with --threads {workers} needs {needed} native AIO requests, but the kernel allows {free} more (fs.aio-max-nr = {max}, {used} in use): {hint}, or raise the limit (sysctl -w fs.aio-max-nr={})",
            (used + needed).next_power_of_two()
        )))
    }

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        Self::open_with_context(setup, setup.queue_depth.max(1))
    }

    #[inline]
    unsafe fn queue(&mut self, req: Request) -> Queued {
        if self.pending_len == self.pending.len() {
            return Queued::Full;
        }
        if req.op == Op::Trim {
            // Native AIO has no discard command: the trim is done here, at once.
            let fd = self.files.fds[req.file as usize];
            let block_device = self.files.block_devices[req.file as usize];
            return Queued::Done(super::discard::discard(fd, block_device, req.offset_bytes, req.len_bytes.into()));
        }
        let slot = req.slot as usize;
        let iocb = &mut self.iocbs[slot];
        iocb.aio_data = u64::from(req.slot);
        iocb.aio_lio_opcode = match req.op {
            Op::Read => IOCB_CMD_PREAD,
            Op::Write => IOCB_CMD_PWRITE,
            Op::Fsync => {
                self.counters.flush_iocbs += 1;
                IOCB_CMD_FSYNC
            }
            Op::Fdatasync => {
                self.counters.flush_iocbs += 1;
                IOCB_CMD_FDSYNC
            }
            Op::Trim => unreachable!("trims return above"),
        };
        iocb.aio_fildes = self.files.fds[req.file as usize] as u32;
        // A flush names no buffer: the kernel refuses (EINVAL) an FSYNC/FDSYNC iocb whose
        // buffer, length or offset is not zero (fs/aio.c, aio_fsync); the length and
        // offset of a flush request are zero.
        iocb.aio_buf = if req.op.is_flush() { 0 } else { self.buffers.data_ptr(req.slot, req.buffer) as u64 };
        iocb.aio_nbytes = u64::from(req.len_bytes);
        iocb.aio_offset = req.offset_bytes as i64;
        self.slots[slot] = SlotIo { len_bytes: u64::from(req.len_bytes), done_bytes: 0 };
        self.pending[self.pending_len] = iocb;
        self.pending_len += 1;
        Queued::InFlight
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        while self.pending_len > 0 {
            self.counters.io_submit_calls += 1;
            let nr = self.pending_len.min(self.max_submit);
            // SAFETY: `pending[..nr]` point to iocbs we own, each describing a slot buffer
            // the worker leaves alone until its completion is reaped.
            let r = unsafe { sys::io_submit(self.ctx, &self.pending[..nr]) };
            if let Ok(n @ 1..) = r {
                self.in_flight += n;
                self.pending.copy_within(n..self.pending_len, 0);
                self.pending_len -= n;
                continue;
            }
            let errno = match r {
                Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
                Ok(_) => libc::EAGAIN,
            };
            match errno {
                libc::EINTR => {}
                libc::EAGAIN => {
                    // No room in the context: reap first, keep what completes for `reap`.
                    if self.in_flight == 0 {
                        return Err(EngineError::new(
                            "io_submit",
                            io::Error::other("the kernel refused the request (EAGAIN) with nothing in flight"),
                        ));
                    }
                    self.counters.submit_eagain += 1;
                    let mut ready = std::mem::take(&mut self.ready.completions);
                    let got = self.harvest(1, &mut ready[self.ready.len..]);
                    self.ready.completions = ready;
                    self.ready.len += got?;
                }
                libc::EBADF | libc::EINVAL | libc::EFAULT | libc::EOPNOTSUPP => {
                    // The first iocb was refused: it completes with the error, the rest go on.
                    // SAFETY: `pending[0]` points to one of our iocbs.
                    let slot = unsafe { (*self.pending[0]).aio_data } as u32;
                    self.ready.completions[self.ready.len] = Completion { slot, result: -i64::from(errno) };
                    self.ready.len += 1;
                    self.pending.copy_within(1..self.pending_len, 0);
                    self.pending_len -= 1;
                }
                _ => return Err(EngineError::new("io_submit", io::Error::from_raw_os_error(errno))),
            }
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        let mut n = self.take_ready(out);
        if min == 0 {
            return Ok(n + self.reap_ring(&mut out[n..]));
        }
        while n < min && n < out.len() {
            if self.pending_len > 0 {
                // Remainders of short transfers.
                self.submit()?;
                n += self.take_ready(&mut out[n..]);
                continue;
            }
            if self.in_flight == 0 {
                break;
            }
            n += self.harvest(min - n, &mut out[n..])?;
        }
        Ok(n)
    }

    fn reap_within(&mut self, out: &mut [Completion], timeout_ns: u64) -> Result<usize, EngineError> {
        let mut n = self.take_ready(out);
        n += self.reap_ring(&mut out[n..]);
        let room = (out.len() - n).min(self.events.len()).min(self.in_flight);
        if n > 0 || room == 0 || self.pending_len > 0 || timeout_ns == 0 {
            return Ok(n);
        }
        let mut timeout = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        match self.get_events(1, room, Some(&mut timeout)) {
            Ok(r) => Ok(self.deliver(r, out, n)),
            // A signal: return what there is, so that the worker sees its stop word.
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(n),
            Err(e) => Err(EngineError::new("io_getevents", e)),
        }
    }

    fn setup_facts(&self) -> Vec<(String, String)> {
        let c = &self.counters;
        let mut facts = vec![
            ("context_events".to_string(), self.context_events.to_string()),
            ("submit_batch_max".to_string(), self.max_submit.to_string()),
            (
                "completion_reaping".to_string(),
                if self.ring.is_null() { "io_getevents" } else { "user-space ring, io_getevents to wait" }.to_string(),
            ),
            ("io_submit_calls".to_string(), c.io_submit_calls.to_string()),
            ("io_getevents_calls".to_string(), c.io_getevents_calls.to_string()),
            ("ring_reaped".to_string(), c.ring_reaped.to_string()),
            ("submit_eagain".to_string(), c.submit_eagain.to_string()),
            ("short_resubmits".to_string(), c.short_resubmits.to_string()),
            ("flush_iocbs".to_string(), c.flush_iocbs.to_string()),
        ];
        facts.extend(self.spin.facts());
        if !self.files.direct {
            facts
                .push(("buffered_io".to_string(), "synchronous inside io_submit (native AIO without O_DIRECT)".into()));
        }
        facts
    }
}

/// Whether the context's ring holds events (a null ring, of an unknown layout, never does).
#[inline]
fn ring_has_events(ring: *const AioRing) -> bool {
    if ring.is_null() {
        return false;
    }
    // SAFETY: as in `reap_ring`: the header stays mapped while the context lives, and
    // `head` and `tail` are read as atomics (loads only).
    unsafe {
        let head = &*(ptr::addr_of!((*ring).head) as *const AtomicU32);
        let tail = &*(ptr::addr_of!((*ring).tail) as *const AtomicU32);
        head.load(Ordering::Relaxed) != tail.load(Ordering::Acquire)
    }
}

impl AioEngine {
    /// `open`, with a context of `context_events` events instead of the queue depth
    /// (tests use a small context to make io_submit answer EAGAIN).
    fn open_with_context(setup: &EngineSetup<'_>, context_events: u32) -> Result<Self, EngineError> {
        let depth = setup.queue_depth.max(1) as usize;
        let ctx = sys::io_setup(context_events).map_err(|e| setup_error(context_events, e))?;
        let ring = ctx as *const AioRing;
        // SAFETY: the kernel maps the ring at the context's address for as long as the
        // context lives; its header is only read here.
        let known = unsafe { sys::ring_layout_is_known(ring) };
        Ok(Self {
            ctx,
            ring: if known { ring } else { ptr::null() },
            context_events,
            files: AioFiles {
                fds: setup.fds.into(),
                block_devices: super::discard::block_devices(setup.fds),
                direct: setup.direct,
            },
            buffers: setup.buffers,
            iocbs: vec![Iocb::default(); depth.max(setup.buffers.slots)].into_boxed_slice(),
            slots: vec![SlotIo::default(); depth.max(setup.buffers.slots)].into_boxed_slice(),
            pending: vec![ptr::null_mut(); depth].into_boxed_slice(),
            pending_len: 0,
            in_flight: 0,
            events: vec![IoEvent::default(); depth].into_boxed_slice(),
            ready: ReadyCompletions { completions: vec![Completion::default(); depth].into_boxed_slice(), len: 0 },
            max_submit: super::submit_batch(
                setup.options,
                if setup.direct { super::DEFAULT_SUBMIT_BATCH } else { BUFFERED_SUBMIT_BATCH as u32 },
                depth as u32,
            ) as usize,
            counters: AioCounters::default(),
            // Without the user-space ring there is nothing to watch.
            spin: SpinWait::new(if known { setup.options.completion_wait } else { CompletionWait::Sleep }),
        })
    }

    /// Requests handed to the kernel and not yet reaped.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Moves kept completions into `out`.
    #[inline]
    fn take_ready(&mut self, out: &mut [Completion]) -> usize {
        if self.ready.len == 0 {
            return 0;
        }
        let n = self.ready.len.min(out.len());
        out[..n].copy_from_slice(&self.ready.completions[..n]);
        self.ready.completions.copy_within(n..self.ready.len, 0);
        self.ready.len -= n;
        n
    }

    /// Waits for at least `min` completions (fewer if fewer are in flight, or as soon
    /// as a short transfer goes back to `pending`, so that its remainder is submitted
    /// without waiting for other requests), writing them to `out`. Takes what the ring
    /// holds first; enters the kernel only to wait.
    fn harvest(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        let pending_before = self.pending_len;
        let mut n = self.reap_ring(out);
        while n < min && self.in_flight > 0 && self.pending_len == pending_before {
            let room = (out.len() - n).min(self.events.len()).min(self.in_flight);
            if room == 0 {
                break;
            }
            // Watching the ring before sleeping in io_getevents (`--completion-wait`).
            let ring = self.ring;
            if self.spin.spin(self.in_flight, || ring_has_events(ring)) {
                n += self.reap_ring(&mut out[n..]);
                continue;
            }
            let want = (min - n).min(room);
            match self.get_events(want, room, None) {
                Ok(r) => n = self.deliver(r, out, n),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(EngineError::new("io_getevents", e)),
            }
        }
        Ok(n)
    }

    /// One io_getevents call: waits for at least `min` of at most `room` events into
    /// `events` (no longer than `timeout`, if given); returns how many arrived.
    fn get_events(&mut self, min: usize, room: usize, timeout: Option<&mut libc::timespec>) -> io::Result<usize> {
        debug_assert!(room <= self.events.len());
        self.counters.io_getevents_calls += 1;
        sys::io_getevents(self.ctx, min, &mut self.events[..room], timeout)
    }

    /// Hands the first `arrived` events of `events` to `on_event`, writing whole
    /// completions to `out` from `n`; returns the new count.
    fn deliver(&mut self, arrived: usize, out: &mut [Completion], mut n: usize) -> usize {
        for i in 0..arrived {
            let event = self.events[i];
            if let Some(c) = self.on_event(event) {
                out[n] = c;
                n += 1;
            }
        }
        n
    }

    /// Takes completions waiting in the context's ring without a system call.
    #[inline]
    fn reap_ring(&mut self, out: &mut [Completion]) -> usize {
        if self.ring.is_null() || self.in_flight == 0 {
            return 0;
        }
        let ring = self.ring;
        // SAFETY: the ring header stays mapped while the context lives; `head` and `tail`
        // are u32s the kernel also accesses, so they are read and written as atomics
        // (loads and stores only). The kernel publishes an event before moving `tail`
        // (write barrier), hence the acquire load; the events read lie between head and
        // tail, inside the ring of `nr` events that follows the header. This thread is the
        // only consumer (io_getevents is called from it too, never concurrently).
        unsafe {
            let nr = (*ring).nr;
            let head_ref = &*(ptr::addr_of!((*ring).head) as *const AtomicU32);
            let tail_ref = &*(ptr::addr_of!((*ring).tail) as *const AtomicU32);
            let first = ring.add(1) as *const IoEvent;
            let mut head = head_ref.load(Ordering::Relaxed);
            let tail = tail_ref.load(Ordering::Acquire);
            let mut n = 0;
            while head != tail && n < out.len() {
                if head >= nr {
                    break; // not a ring state the kernel makes: leave it to io_getevents
                }
                let event = ptr::read_volatile(first.add(head as usize));
                head = if head + 1 == nr { 0 } else { head + 1 };
                self.counters.ring_reaped += 1;
                if let Some(c) = self.on_event(event) {
                    out[n] = c;
                    n += 1;
                }
            }
            head_ref.store(head, Ordering::Release);
            n
        }
    }

    /// One kernel completion: a whole request (or an error) becomes a `Completion`;
    /// a short transfer is queued again for its remainder.
    #[inline]
    fn on_event(&mut self, event: IoEvent) -> Option<Completion> {
        self.in_flight -= 1;
        let slot = event.data as u32;
        if event.res < 0 {
            return Some(Completion { slot, result: event.res });
        }
        let io = &mut self.slots[slot as usize];
        let moved = event.res as u64;
        io.done_bytes += moved;
        if moved == 0 || io.done_bytes >= io.len_bytes {
            return Some(Completion { slot, result: io.done_bytes as i64 });
        }
        let iocb = &mut self.iocbs[slot as usize];
        iocb.aio_buf += moved;
        iocb.aio_nbytes -= moved;
        iocb.aio_offset += moved as i64;
        self.pending[self.pending_len] = iocb;
        self.pending_len += 1;
        self.counters.short_resubmits += 1;
        None
    }
}

impl Drop for AioEngine {
    fn drop(&mut self) {
        // Queued but never submitted: the kernel never saw them.
        self.pending_len = 0;
        while self.in_flight > 0 {
            let room = self.events.len().min(self.in_flight);
            let r = match self.get_events(1, room, None) {
                Ok(r) => r,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(_) => break, // io_destroy below still waits for what is left
            };
            self.in_flight -= r;
        }
        // The context is ours and destroyed once; io_destroy waits for any request still in
        // flight before it returns, so no buffer is written afterwards.
        sys::io_destroy(self.ctx);
    }
}

/// The error for a failed io_setup; EAGAIN means the system-wide limit `fs.aio-max-nr` is reached.
fn setup_error(context_events: u32, e: io::Error) -> EngineError {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => {
            let read = |name: &str| {
                std::fs::read_to_string(format!("/proc/sys/fs/{name}"))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|_| "?".into())
            };
            EngineError::new(
                format!(
                    "io_setup({context_events}): the system-wide limit of native AIO requests is reached \
                     (sysctl fs.aio-max-nr = {}, fs.aio-nr = {} in use; each libaio worker needs --queue-depth of them): \
                     raise it (sysctl -w fs.aio-max-nr=1048576) or lower --queue-depth or --threads",
                    read("aio-max-nr"),
                    read("aio-nr")
                ),
                e,
            )
        }
        Some(libc::ENOSYS) => EngineError::new("io_setup: native AIO is not available in this kernel (CONFIG_AIO)", e),
        _ => EngineError::new(format!("io_setup({context_events})"), e),
    }
}

#[cfg(test)]
mod tests;
