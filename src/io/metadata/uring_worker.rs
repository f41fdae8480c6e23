//! A metadata worker on io_uring: the same files, names and choices as the sync worker
//! (`worker.rs`), with up to `queue_depth` operations in flight. Each operation is a short
//! chain of io_uring requests run by its slot: `openat`, then `read`/`write` chunks or
//! `fsync`, then `close`; or one `statx`, `unlinkat`, `renameat`, `mkdirat`. Its latency is
//! from its first submission to its last completion. readdir has no io_uring operation
//! here: it runs as a system call between two batches.
//!
//! A file chosen leaves the worker's present files while its operation is in flight
//! (`Worker::take`/`put_back`), so no two operations race on a name. Per batch: one
//! submission, one clock read per completion reaped, no allocation, no lock.

use super::tap::Tap;
use super::tree::{RelPath, TreeNames};
use super::worker::{OpFailure, PhaseFigures, RoundRobin, Shared, Worker, WorkerFigures};
use crate::io::engine::tree_ops::calls;
use crate::io::engine::tree_ops::ring::{CHUNK_BYTES, TreeRequest, TreeRing};
use crate::io::metadata::workload::{MetaOp, MetaShare};
use crate::io::stats::OpStats;
use std::sync::Barrier;
use std::sync::atomic::Ordering;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    Idle,
    Open,
    Io,
    Fsync,
    Close,
    Single,
}

/// One operation in flight: where its chain is (the memory its requests point at is the
/// ring's, `engine::tree_ops::ring`).
struct Slot {
    step: Step,
    op: MetaOp,
    file: u64,
    to: u64,
    fd: i32,
    done_bytes: u64,
    size_bytes: u64,
    start_ns: u64,
    /// The first failure of the chain (its close still runs).
    errno: i32,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            step: Step::Idle,
            op: MetaOp::Stat,
            file: 0,
            to: 0,
            fd: -1,
            done_bytes: 0,
            size_bytes: 0,
            start_ns: 0,
            errno: 0,
        }
    }
}

/// The worker's ring and slots.
struct Uring<'w, 'a> {
    worker: &'w mut Worker<'a>,
    ring: TreeRing,
    slots: Vec<Slot>,
    free: Vec<usize>,
    append_bytes: u64,
}

/// An operation that ended.
struct Completed {
    op: MetaOp,
    file: u64,
    to: u64,
    result: Result<u64, i32>,
    lat_ns: u64,
    /// When it completed, on the run's clock.
    end_ns: u64,
}

/// What a completion did to its slot.
enum Advance {
    /// Another request of the chain was queued.
    Queued,
    /// The operation completed: bytes moved, or the errno it failed with.
    Done(Result<u64, i32>),
}

impl<'w, 'a> Uring<'w, 'a> {
    fn new(worker: &'w mut Worker<'a>, depth: u32) -> std::io::Result<Self> {
        let ring = TreeRing::new(depth, worker.shared.root, &worker.buf)?;
        let slots: Vec<Slot> = (0..depth).map(|_| Slot::new()).collect();
        let free = (0..depth as usize).rev().collect();
        let append_bytes = worker.shared.append_bytes;
        Ok(Uring { worker, ring, slots, free, append_bytes })
    }

    /// Queues the request of slot `i`'s step (the ring has room: one request per slot).
    fn push(&mut self, i: usize) {
        let s = &self.slots[i];
        let req = match s.step {
            Step::Open => TreeRequest::Open {
                flags: match s.op {
                    MetaOp::Create => libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
                    MetaOp::Read => libc::O_RDONLY,
                    MetaOp::Write | MetaOp::Fsync => libc::O_WRONLY,
                    MetaOp::Append => libc::O_WRONLY | libc::O_APPEND,
                    _ => libc::O_RDONLY | libc::O_DIRECTORY,
                },
            },
            Step::Io if s.op == MetaOp::Read => TreeRequest::Read { fd: s.fd, offset_bytes: s.done_bytes },
            Step::Io => TreeRequest::Write {
                fd: s.fd,
                len_bytes: (s.size_bytes - s.done_bytes).min(CHUNK_BYTES as u64) as u32,
                // Appends write at the end (O_APPEND); the others from the file's start.
                offset_bytes: if s.op == MetaOp::Append { u64::MAX } else { s.done_bytes },
            },
            Step::Fsync => TreeRequest::Fsync { fd: s.fd },
            Step::Close => TreeRequest::Close { fd: s.fd },
            Step::Single => match s.op {
                MetaOp::Stat => TreeRequest::Stat,
                MetaOp::Unlink => TreeRequest::Unlink,
                MetaOp::Rmdir => TreeRequest::Rmdir,
                MetaOp::Mkdir => TreeRequest::Mkdir,
                _ => TreeRequest::Rename,
            },
            Step::Idle => unreachable!("an idle slot queues nothing"),
        };
        self.ring.push(i, req);
    }

    /// Starts `op` on `file` (`to`: a rename's new name) in a free slot.
    fn start(&mut self, op: MetaOp, file: u64, to: u64, now_ns: u64) {
        let i = self.free.pop().expect("a free slot");
        let shape = self.worker.shared.shape;
        let size = match op {
            MetaOp::Create | MetaOp::Write => self.worker.size_of(file),
            MetaOp::Append => self.append_bytes,
            _ => 0,
        };
        let s = &mut self.slots[i];
        s.op = op;
        s.file = file;
        s.to = to;
        s.fd = -1;
        s.done_bytes = 0;
        s.size_bytes = size;
        s.start_ns = now_ns;
        s.errno = 0;
        let (path, other) = self.ring.paths(i);
        match op {
            MetaOp::Mkdir | MetaOp::Rmdir => path.set_made_dir(&shape, file),
            MetaOp::FsyncDir => path.set_dir(&shape, shape.leaf_of(file), shape.depth),
            _ => path.set_file(&shape, file),
        }
        if op == MetaOp::Rename {
            other.set_file(&shape, to);
        }
        let s = &mut self.slots[i];
        s.step = match op {
            MetaOp::Stat | MetaOp::Unlink | MetaOp::Rename | MetaOp::Mkdir | MetaOp::Rmdir => Step::Single,
            _ => Step::Open,
        };
        self.push(i);
    }

    /// Slot `i`'s request completed with `res`: the next step of its chain, or its end.
    fn advance(&mut self, i: usize, res: i32) -> Advance {
        let s = &mut self.slots[i];
        let failed = res < 0;
        match s.step {
            Step::Single => return Advance::Done(if failed { Err(-res) } else { Ok(0) }),
            Step::Open if failed => return Advance::Done(Err(-res)),
            Step::Open => {
                s.fd = res;
                s.step = match s.op {
                    MetaOp::Fsync | MetaOp::FsyncDir => Step::Fsync,
                    MetaOp::Read => Step::Io,
                    _ if s.size_bytes > 0 => Step::Io,
                    _ => Step::Close,
                };
            }
            Step::Io if failed => {
                s.errno = -res;
                s.step = Step::Close;
            }
            Step::Io => {
                s.done_bytes += res as u64;
                let more = if s.op == MetaOp::Read { res > 0 } else { s.done_bytes < s.size_bytes && res > 0 };
                if !more {
                    if s.op != MetaOp::Read && s.done_bytes < s.size_bytes {
                        s.errno = libc::EIO;
                    }
                    s.step = Step::Close;
                }
            }
            Step::Fsync => {
                if failed {
                    s.errno = -res;
                }
                s.step = Step::Close;
            }
            Step::Close => {
                s.fd = -1;
                if failed && s.errno == 0 {
                    s.errno = -res;
                }
                return Advance::Done(if s.errno != 0 { Err(s.errno) } else { Ok(s.done_bytes) });
            }
            Step::Idle => unreachable!("an idle slot has no request"),
        }
        self.push(i);
        Advance::Queued
    }

    /// Submits what is queued and waits for at least one completion; then handles every
    /// completion ready: `done(op, file, to, bytes or errno, latency)` for each operation
    /// that ended. The slot is free again after.
    ///
    /// The ring itself failing ends the worker: every operation in flight is lost (none
    /// would ever complete), and the failure is returned to be the run's.
    fn reap(&mut self, done: &mut dyn FnMut(&mut Worker<'a>, Completed)) -> Result<(), OpFailure> {
        if let Err(e) = self.ring.submit_and_wait() {
            self.worker.shared.failed.store(true, Ordering::Relaxed);
            let op = self.slots.iter().find(|s| s.step != Step::Idle).map_or(MetaOp::Stat, |s| s.op);
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            return Err(OpFailure { op, path: format!("(io_uring_enter: {e})"), errno });
        }
        let now_ns = self.worker.shared.clock.now_ns();
        let mut ready = [(0usize, 0i32); 64];
        loop {
            let n = self.ring.completions(&mut ready);
            if n == 0 {
                break;
            }
            for &(i, res) in &ready[..n] {
                if let Advance::Done(result) = self.advance(i, res) {
                    let s = &mut self.slots[i];
                    s.step = Step::Idle;
                    self.free.push(i);
                    let lat_ns = now_ns.saturating_sub(s.start_ns);
                    done(self.worker, Completed { op: s.op, file: s.file, to: s.to, result, lat_ns, end_ns: now_ns });
                }
            }
            // Chains went on: their next requests go now, without waiting.
            self.ring.submit();
        }
        Ok(())
    }

    /// The path of an operation that failed, for its message.
    fn failure(&self, op: MetaOp, file: u64, to: u64, errno: i32) -> OpFailure {
        let shape = self.worker.shared.shape;
        let mut p = RelPath::default();
        match op {
            MetaOp::Mkdir | MetaOp::Rmdir => p.set_made_dir(&shape, file),
            MetaOp::FsyncDir | MetaOp::Readdir => p.set_dir(&shape, shape.leaf_of(file), shape.depth),
            _ => p.set_file(&shape, file),
        }
        let _ = to;
        self.worker.shared.failed.store(true, Ordering::Relaxed);
        OpFailure { op, path: p.as_str().to_string(), errno }
    }
}

/// A mix on io_uring at `depth` operations in flight: until `end_ns`, `ops_quota` or a stop;
/// with `tap`, into its intervals instead
/// of its totals (the run's totals are their sum).
#[allow(clippy::too_many_arguments)]
pub fn run_mix(
    shared: &Shared<'_>,
    index: u32,
    shares: &[MetaShare],
    depth: u32,
    start: &Barrier,
    end_ns: Option<u64>,
    ops_quota: Option<u64>,
    mut tap: Option<Tap<'_>>,
) -> WorkerFigures {
    crate::io::host::signals::block_in_this_thread();
    let mut out = WorkerFigures::new(&super::worker::mix_kinds(shares));
    let mut worker = Worker::new(shared, index, true);
    let mut ring = match Uring::new(&mut worker, depth) {
        Ok(r) => r,
        Err(e) => {
            start.wait();
            let _ = shared.phase_released();
            shared.failed.store(true, Ordering::Relaxed);
            out.failure = Some(OpFailure {
                op: shares[0].op,
                path: format!("(io_uring_setup: {e})"),
                errno: e.raw_os_error().unwrap_or(libc::EIO),
            });
            return out;
        }
    };
    start.wait();
    if !shared.phase_released() {
        return out;
    }
    let clock = shared.clock;
    let end_ns = end_ns.map(|d| clock.now_ns() + d);
    out.start_ns = clock.now_ns();
    if let Some(tap) = tap.as_mut() {
        tap.begin(0, out.start_ns);
    }
    let mut turns = RoundRobin::default();
    let mut issued = 0u64;
    let mut failure: Option<OpFailure> = None;
    let mut over = false;
    loop {
        if !over {
            let now = clock.now_ns();
            over = shared.stopped() || end_ns.is_some_and(|e| now >= e);
        }
        // Fill the free slots (readdir, which has no request, runs here inline).
        while !over && !ring.free.is_empty() && ops_quota.is_none_or(|q| issued < q) {
            let asked = turns.next(shares);
            let (op, file, to) = ring.worker.take(asked);
            issued += 1;
            let now = clock.now_ns();
            if op == MetaOp::Readdir {
                let mut dir = RelPath::default();
                dir.set_dir(&shared.shape, file, shared.shape.depth);
                let r = calls::readdir(shared.root, &dir, &mut ring.worker.buf);
                let t1 = clock.now_ns();
                match r {
                    Ok(_) => match tap.as_mut() {
                        Some(tap) => tap.record(op, 0, t1 - now, t1),
                        None => out.per_op[op.index()].record(0, t1 - now),
                    },
                    Err(errno) => {
                        failure.get_or_insert_with(|| ring.failure(op, file, to, errno));
                        over = true;
                    }
                }
                continue;
            }
            ring.start(op, file, to, now);
        }
        if ops_quota.is_some_and(|q| issued >= q) {
            over = true;
        }
        if ring.ring.in_flight() == 0 {
            break;
        }
        let per_op = &mut out.per_op;
        let mut failed_now: Option<(MetaOp, u64, u64, i32)> = None;
        let tap_now = &mut tap;
        let reaped = ring.reap(&mut |w, c| match c.result {
            Ok(bytes) => {
                match tap_now.as_mut() {
                    Some(tap) => tap.record(c.op, bytes, c.lat_ns, c.end_ns),
                    None => per_op[c.op.index()].record(bytes, c.lat_ns),
                }
                w.put_back(c.op, c.file, c.to);
            }
            Err(errno) => {
                failed_now.get_or_insert((c.op, c.file, c.to, errno));
            }
        });
        if let Some((op, file, to, errno)) = failed_now {
            failure.get_or_insert_with(|| ring.failure(op, file, to, errno));
            over = true;
        }
        if let Err(lost) = reaped {
            failure.get_or_insert(lost);
            break;
        }
    }
    out.end_ns = clock.now_ns();
    if let Some(tap) = tap.as_mut() {
        tap.end_phase();
    }
    out.touched = ring.worker.touched();
    out.failure = failure;
    out
}

/// Phases on io_uring, as `worker::run_phases`, each with `depth` operations in flight;
/// with `tap`, into its intervals instead
/// of its totals (the run's totals are their sum).
pub fn run_phases(
    shared: &Shared<'_>,
    index: u32,
    phases: &[MetaOp],
    files_exist: bool,
    depth: u32,
    barrier: &Barrier,
    mut tap: Option<Tap<'_>>,
) -> (Vec<PhaseFigures>, u64, Option<OpFailure>) {
    crate::io::host::signals::block_in_this_thread();
    let mut worker = Worker::new(shared, index, files_exist);
    let mut figures: Vec<PhaseFigures> =
        phases.iter().map(|_| PhaseFigures { start_ns: 0, end_ns: 0, stats: OpStats::new() }).collect();
    let mut ring = Uring::new(&mut worker, depth);
    let mut failure = ring.as_ref().err().map(|e| OpFailure {
        op: phases[0],
        path: format!("(io_uring_setup: {e})"),
        errno: e.raw_os_error().unwrap_or(libc::EIO),
    });
    if failure.is_some() {
        shared.failed.store(true, Ordering::Relaxed);
    }
    let t = u64::from(shared.threads);
    // Every worker passes every barrier, stopped or not: none is left waiting.
    for (p, (op, fig)) in phases.iter().zip(&mut figures).enumerate() {
        barrier.wait();
        fig.start_ns = shared.clock.now_ns();
        if let Some(tap) = tap.as_mut() {
            tap.begin(p, fig.start_ns);
        }
        if let (None, Ok(ring)) = (&failure, ring.as_mut()) {
            failure = phase(ring, *op, u64::from(index), t, &mut fig.stats, tap.as_mut());
        }
        fig.end_ns = shared.clock.now_ns();
        if let Some(tap) = tap.as_mut() {
            tap.end_phase();
        }
        barrier.wait();
    }
    let touched = match &ring {
        Ok(r) => r.worker.touched(),
        Err(_) => 0,
    };
    drop(ring);
    (figures, touched, failure)
}

/// One phase on io_uring: `op` over items `first`, `first + step`, ...
fn phase(
    ring: &mut Uring<'_, '_>,
    op: MetaOp,
    first: u64,
    step: u64,
    stats: &mut OpStats,
    mut tap: Option<&mut Tap<'_>>,
) -> Option<OpFailure> {
    let shared = ring.worker.shared;
    let count = if op == MetaOp::Readdir { shared.shape.leaves } else { shared.meta.files };
    let clock = shared.clock;
    let mut item = first;
    let mut failure = None;
    loop {
        let stopped = failure.is_some() || shared.stopped();
        while !stopped && !ring.free.is_empty() && item < count {
            let now = clock.now_ns();
            if op == MetaOp::Readdir {
                let mut dir = RelPath::default();
                dir.set_dir(&shared.shape, item, shared.shape.depth);
                match calls::readdir(shared.root, &dir, &mut ring.worker.buf) {
                    Ok(_) => {
                        let t1 = clock.now_ns();
                        match tap.as_deref_mut() {
                            Some(tap) => tap.record(op, 0, t1 - now, t1),
                            None => stats.record(0, t1 - now),
                        }
                    }
                    Err(errno) => failure = Some(ring.failure(op, item, 0, errno)),
                }
            } else {
                ring.start(op, item, 0, now);
            }
            item += step;
            if failure.is_some() {
                break;
            }
        }
        if ring.ring.in_flight() == 0 {
            return failure;
        }
        let mut failed_now = None;
        let reaped = ring.reap(&mut |w, c| match c.result {
            Ok(bytes) => {
                match tap.as_deref_mut() {
                    Some(tap) => tap.record(c.op, bytes, c.lat_ns, c.end_ns),
                    None => stats.record(bytes, c.lat_ns),
                }
                w.touch(c.file);
            }
            Err(errno) => {
                failed_now.get_or_insert((c.op, c.file, errno));
            }
        });
        if let Some((op, file, errno)) = failed_now {
            failure.get_or_insert_with(|| ring.failure(op, file, 0, errno));
        }
        if let Err(lost) = reaped {
            return Some(failure.unwrap_or(lost));
        }
    }
}
