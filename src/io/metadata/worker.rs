//! One metadata worker: the files it owns (file `i` is worker `i mod threads`'s, and so
//! is every name it makes), the operations it runs on them (a mix at set shares until the
//! window ends, or phases in order, meeting the other workers between phases), timed one
//! by one into a histogram per operation kind.
//!
//! Per operation: two clock reads, one relaxed load of each stop word, no lock and no
//! formatting; the lists of its files are allocated before the window. It must not print
//! or compute figures beyond recording them.

use super::tap::Tap;
use super::tree::{RelPath, Shape, TreeNames};
use crate::base::primitives::clock::Clock;
use crate::base::primitives::rng::Rng;
use crate::io::engine::tree_ops::calls::{self, OpResult};
use crate::io::metadata::workload::{MetaOp, MetaShare, MetaSpec};
use crate::io::stats::OpStats;
use std::os::fd::RawFd;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Bytes of a worker's data buffer: reads and writes move files in chunks of it.
const BUFFER_BYTES: usize = 64 << 10;
/// Room for files a worker creates in a mix, reserved before the window.
const NEW_FILES_RESERVED: usize = 1 << 16;

/// What every worker shares.
pub struct Shared<'a> {
    pub root: RawFd,
    pub shape: Shape,
    pub meta: &'a MetaSpec,
    pub threads: u32,
    pub append_bytes: u64,
    pub clock: Clock,
    pub stop: &'a AtomicUsize,
    /// Set by the first worker whose operation failed: every worker stops.
    pub failed: &'a AtomicBool,
    pub seed: u64,
    /// In a phase of a job file beside other jobs: the phase's start word, which the
    /// workers wait on after the set-up (released with every other job's workers), and a
    /// failure also stops the phase's other jobs (their stop word is `stop`).
    pub window: Option<&'a crate::io::worker::StartWord>,
    /// A live view of the run (`stats::live`), taken by the window's interval collector.
    pub live: &'a std::sync::Mutex<Option<crate::io::stats::live::LiveView>>,
}

impl Shared<'_> {
    /// In a phase beside other jobs: waits for the phase's start word; false when the
    /// start was called off (another job failed, or a signal), and nothing is to be run.
    pub(super) fn phase_released(&self) -> bool {
        self.window.is_none_or(|w| w.wait().is_some())
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0 || self.failed.load(Ordering::Relaxed)
    }

    /// `op` on `path` failed with `errno`: every worker stops.
    #[cold]
    pub(super) fn fail(&self, op: MetaOp, path: &str, errno: i32) -> OpFailure {
        self.failed.store(true, Ordering::Relaxed);
        if self.window.is_some() {
            // The phase's other jobs stop too (ENOSPC of a shared filesystem ends the phase);
            // a signal's code already there is kept.
            let _ = self.stop.compare_exchange(
                crate::io::worker::stop_code::RUNNING,
                crate::io::worker::stop_code::FAILED,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        OpFailure { op, path: path.to_string(), errno }
    }
}

/// A failed operation.
#[derive(Clone, Debug)]
pub struct OpFailure {
    pub op: MetaOp,
    pub path: String,
    pub errno: i32,
}

/// What one worker hands back.
pub struct WorkerFigures {
    /// Per operation kind (`MetaOp::index`), over the mix's window or per phase.
    pub per_op: Vec<OpStats>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The tree's files this worker touched at least once.
    pub touched: u64,
    pub failure: Option<OpFailure>,
}

/// The kinds a mix of `shares` records: those asked for, and those a worker falls back to
/// (create, mkdir).
pub fn mix_kinds(shares: &[MetaShare]) -> Vec<MetaOp> {
    let mut kinds: Vec<MetaOp> = shares.iter().map(|s| s.op).collect();
    kinds.extend([MetaOp::Create, MetaOp::Mkdir]);
    kinds
}

impl WorkerFigures {
    pub(super) fn new(ops: &[MetaOp]) -> WorkerFigures {
        WorkerFigures { per_op: super::tap::per_kind_stats(ops), start_ns: 0, end_ns: 0, touched: 0, failure: None }
    }
}

/// A worker's own state: its files, its names, its buffers.
pub(super) struct Worker<'a> {
    pub(super) shared: &'a Shared<'a>,
    index: u32,
    rng: Rng,
    path: RelPath,
    other: RelPath,
    pub(super) buf: Vec<u8>,
    present: Vec<u64>,
    next_new: u64,
    made_dirs: Vec<u64>,
    next_made: u64,
    touched_bits: Vec<u64>,
    /// Where in `present` the chosen file is.
    chosen_slot: usize,
}

impl<'a> Worker<'a> {
    pub(super) fn new(shared: &'a Shared<'a>, index: u32, files_exist: bool) -> Worker<'a> {
        let t = u64::from(shared.threads);
        let files = shared.meta.files;
        let first_new = files + (u64::from(index) + t - files % t) % t;
        let owned = owned_count(files, index, shared.threads);
        let mut present = Vec::with_capacity(owned as usize + NEW_FILES_RESERVED);
        if files_exist {
            present.extend((0..owned).map(|k| u64::from(index) + k * t));
        }
        let mut buf = vec![0u8; BUFFER_BYTES];
        let mut rng = Rng::new(shared.seed, u64::from(index));
        // Data that does not compress or dedupe away.
        rng.fill_bytes(&mut buf);
        Worker {
            shared,
            index,
            rng,
            path: RelPath::default(),
            other: RelPath::default(),
            buf,
            present,
            next_new: first_new,
            made_dirs: Vec::with_capacity(NEW_FILES_RESERVED),
            next_made: u64::from(index),
            touched_bits: vec![0; owned.div_ceil(64) as usize],
            chosen_slot: 0,
        }
    }

    pub(super) fn touch(&mut self, file: u64) {
        if file < self.shared.meta.files {
            let k = file / u64::from(self.shared.threads);
            self.touched_bits[(k / 64) as usize] |= 1 << (k % 64);
        }
    }

    pub(super) fn size_of(&self, file: u64) -> u64 {
        self.shared.meta.sizes.size_of(file, 0)
    }

    /// Runs `op` on `file` (or a directory); the bytes moved, or the errno.
    pub(super) fn file_op(&mut self, op: MetaOp, file: u64) -> OpResult {
        let s = self.shared;
        let root = s.root;
        match op {
            MetaOp::Create => {
                self.path.set_file(&s.shape, file);
                calls::create(root, &self.path, &self.buf, self.size_of(file))
            }
            MetaOp::Read => {
                self.path.set_file(&s.shape, file);
                calls::read_whole(root, &self.path, &mut self.buf)
            }
            MetaOp::Write => {
                self.path.set_file(&s.shape, file);
                calls::write_whole(root, &self.path, &self.buf, self.size_of(file))
            }
            MetaOp::Append => {
                self.path.set_file(&s.shape, file);
                calls::append(root, &self.path, &self.buf, s.append_bytes)
            }
            MetaOp::Stat => {
                self.path.set_file(&s.shape, file);
                calls::stat(root, &self.path)
            }
            MetaOp::Unlink => {
                self.path.set_file(&s.shape, file);
                calls::unlink(root, &self.path)
            }
            MetaOp::Fsync => {
                self.path.set_file(&s.shape, file);
                calls::fsync(root, &self.path, false)
            }
            MetaOp::FsyncDir => {
                self.path.set_dir(&s.shape, s.shape.leaf_of(file), s.shape.depth);
                calls::fsync(root, &self.path, true)
            }
            MetaOp::Readdir => {
                self.path.set_dir(&s.shape, file, s.shape.depth);
                calls::readdir(root, &self.path, &mut self.buf).map(|_entries| 0)
            }
            MetaOp::Rename => {
                self.path.set_file(&s.shape, file);
                self.other.set_file(&s.shape, self.next_new);
                calls::rename(root, &self.path, &self.other)
            }
            MetaOp::Mkdir => {
                self.path.set_made_dir(&s.shape, file);
                calls::mkdir(root, &self.path)
            }
            MetaOp::Rmdir => {
                self.path.set_made_dir(&s.shape, file);
                calls::rmdir(root, &self.path)
            }
            // A flow's steps on a held file (`flow.rs`): never drawn by a mix or a phase.
            MetaOp::Open | MetaOp::Close => Err(libc::EINVAL),
        }
    }

    #[cold]
    pub(super) fn failed(&self, op: MetaOp, errno: i32) -> OpFailure {
        self.shared.fail(op, self.path.as_str(), errno)
    }

    /// The mix: `shares` picked by smooth weighted round robin (each kind exactly at its
    /// share over every cycle of the weights' sum), until `end_ns`, `ops_quota` or a stop.
    fn mix(
        &mut self,
        shares: &[MetaShare],
        end_ns: Option<u64>,
        ops_quota: Option<u64>,
        out: &mut WorkerFigures,
        mut tap: Option<&mut Tap<'_>>,
    ) {
        let mut turns = RoundRobin::default();
        let mut done = 0u64;
        let clock = self.shared.clock;
        out.start_ns = clock.now_ns();
        out.end_ns = out.start_ns;
        if let Some(tap) = tap.as_deref_mut() {
            tap.begin(0, out.start_ns);
        }
        while !self.shared.stopped() && ops_quota.is_none_or(|q| done < q) {
            let asked = turns.next(shares);
            let (op, target) = self.choose(asked);
            let t0 = clock.now_ns();
            let result = self.file_op(op, target);
            let t1 = clock.now_ns();
            match result {
                Ok(bytes) => {
                    match tap.as_deref_mut() {
                        Some(tap) => tap.record(op, bytes, t1 - t0, t1),
                        None => out.per_op[op.index()].record(bytes, t1 - t0),
                    }
                    self.after(op, target);
                }
                Err(errno) => {
                    out.failure = Some(self.failed(op, errno));
                    out.end_ns = t1;
                    break;
                }
            }
            done += 1;
            out.end_ns = t1;
            if end_ns.is_some_and(|end| t1 >= end) {
                break;
            }
        }
    }

    /// The file (or directory) the operation `asked` runs on, and the operation itself: one
    /// that needs a file when the worker has none creates one, an rmdir with no directory
    /// of its own makes one.
    fn choose(&mut self, asked: MetaOp) -> (MetaOp, u64) {
        let s = self.shared;
        match asked {
            MetaOp::Create => (MetaOp::Create, self.next_new),
            MetaOp::Mkdir => (MetaOp::Mkdir, self.next_made),
            MetaOp::Rmdir => match self.made_dirs.last() {
                Some(&d) => (MetaOp::Rmdir, d),
                None => (MetaOp::Mkdir, self.next_made),
            },
            MetaOp::Readdir => (MetaOp::Readdir, self.rng.below(s.shape.leaves)),
            _ if self.present.is_empty() => (MetaOp::Create, self.next_new),
            op => {
                let i = self.rng.below(self.present.len() as u64) as usize;
                self.chosen_slot = i;
                (op, self.present[i])
            }
        }
    }

    /// The worker's lists after `op` on `target` succeeded.
    fn after(&mut self, op: MetaOp, target: u64) {
        let t = u64::from(self.shared.threads);
        match op {
            MetaOp::Create => {
                self.present.push(target);
                self.next_new += t;
            }
            MetaOp::Mkdir => {
                self.made_dirs.push(target);
                self.next_made += t;
            }
            MetaOp::Rmdir => {
                self.made_dirs.pop();
            }
            MetaOp::Readdir => {}
            MetaOp::Rename => {
                self.touch(target);
                self.present[self.chosen_slot] = self.next_new;
                self.next_new += t;
            }
            MetaOp::Unlink => {
                self.touch(target);
                self.present.swap_remove(self.chosen_slot);
            }
            _ => self.touch(target),
        }
    }

    /// As `choose`, for many operations in flight: the file chosen leaves the worker's
    /// present files until its operation completes (`put_back`), so that no two operations
    /// in flight act on one name. The third value is a rename's new name.
    pub(super) fn take(&mut self, asked: MetaOp) -> (MetaOp, u64, u64) {
        let t = u64::from(self.shared.threads);
        let fresh = |next: &mut u64| {
            let n = *next;
            *next += t;
            n
        };
        match asked {
            MetaOp::Create => (MetaOp::Create, fresh(&mut self.next_new), 0),
            MetaOp::Mkdir => (MetaOp::Mkdir, fresh(&mut self.next_made), 0),
            MetaOp::Rmdir => match self.made_dirs.pop() {
                Some(d) => (MetaOp::Rmdir, d, 0),
                None => (MetaOp::Mkdir, fresh(&mut self.next_made), 0),
            },
            MetaOp::Readdir => (MetaOp::Readdir, self.rng.below(self.shared.shape.leaves), 0),
            _ if self.present.is_empty() => (MetaOp::Create, fresh(&mut self.next_new), 0),
            op => {
                let i = self.rng.below(self.present.len() as u64) as usize;
                let file = self.present.swap_remove(i);
                let to = if op == MetaOp::Rename { fresh(&mut self.next_new) } else { 0 };
                (op, file, to)
            }
        }
    }

    /// The worker's lists once an operation `take` gave completed.
    pub(super) fn put_back(&mut self, op: MetaOp, file: u64, to: u64) {
        match op {
            MetaOp::Create => self.present.push(file),
            MetaOp::Mkdir => self.made_dirs.push(file),
            MetaOp::Rmdir | MetaOp::Readdir => {}
            MetaOp::Rename => {
                self.touch(file);
                self.present.push(to);
            }
            MetaOp::Unlink => self.touch(file),
            _ => {
                self.touch(file);
                self.present.push(file);
            }
        }
    }

    pub(super) fn touched(&self) -> u64 {
        self.touched_bits.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// One phase: `op` over every file (or leaf directory, for readdir) the worker owns.
    fn phase(&mut self, op: MetaOp, stats: &mut OpStats, mut tap: Option<&mut Tap<'_>>) -> Option<OpFailure> {
        let s = self.shared;
        let t = u64::from(s.threads);
        let count = if op == MetaOp::Readdir { s.shape.leaves } else { s.meta.files };
        let clock = s.clock;
        let mut item = u64::from(self.index);
        while item < count {
            if s.stopped() {
                return None;
            }
            let t0 = clock.now_ns();
            let result = self.file_op(op, item);
            let t1 = clock.now_ns();
            match result {
                Ok(bytes) => {
                    match tap.as_deref_mut() {
                        Some(tap) => tap.record(op, bytes, t1 - t0, t1),
                        None => stats.record(bytes, t1 - t0),
                    }
                    if op != MetaOp::Readdir {
                        self.touch(item);
                    }
                }
                Err(errno) => return Some(self.failed(op, errno)),
            }
            item += t;
        }
        None
    }
}

/// Smooth weighted round robin over a mix's shares: over every cycle of the weights' sum,
/// each kind comes exactly its weight's number of times, spread out.
#[derive(Default)]
pub(super) struct RoundRobin {
    current: [i64; MetaOp::ALL.len()],
}

impl RoundRobin {
    pub(super) fn next(&mut self, shares: &[MetaShare]) -> MetaOp {
        let mut total = 0;
        let mut best = 0usize;
        for (i, s) in shares.iter().enumerate() {
            self.current[i] += i64::from(s.weight);
            total += i64::from(s.weight);
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= total;
        shares[best].op
    }
}

/// Files of `files` that worker `index` of `threads` owns.
pub fn owned_count(files: u64, index: u32, threads: u32) -> u64 {
    let (i, t) = (u64::from(index), u64::from(threads));
    if i >= files { 0 } else { (files - i).div_ceil(t) }
}

/// A mix in one window: until `end_ns` (on the shared clock), `ops_quota` operations, or a
/// stop; with `tap`, into its intervals instead
/// of its totals (the run's totals are their sum).
pub fn run_mix(
    shared: &Shared<'_>,
    index: u32,
    shares: &[MetaShare],
    start: &Barrier,
    end_ns: Option<u64>,
    ops_quota: Option<u64>,
    mut tap: Option<Tap<'_>>,
) -> WorkerFigures {
    crate::io::host::signals::block_in_this_thread();
    let mut out = WorkerFigures::new(&mix_kinds(shares));
    let mut worker = Worker::new(shared, index, true);
    start.wait();
    if !shared.phase_released() {
        return out;
    }
    let end_ns = end_ns.map(|d| shared.clock.now_ns() + d);
    worker.mix(shares, end_ns, ops_quota, &mut out, tap.as_mut());
    if let Some(tap) = tap.as_mut() {
        tap.end_phase();
    }
    out.touched = worker.touched_bits.iter().map(|w| u64::from(w.count_ones())).sum();
    out
}

/// One worker's figures of each phase: (start, end) on the shared clock and the phase's stats.
pub struct PhaseFigures {
    pub start_ns: u64,
    pub end_ns: u64,
    pub stats: OpStats,
}

/// Phases in order, meeting the other workers at `barrier` before and after each, so that
/// every phase starts together and its window is the slowest worker's; with `tap`, into its
/// intervals instead of its totals (the run's totals are their sum).
pub fn run_phases(
    shared: &Shared<'_>,
    index: u32,
    phases: &[MetaOp],
    files_exist: bool,
    barrier: &Barrier,
    mut tap: Option<Tap<'_>>,
) -> (Vec<PhaseFigures>, u64, Option<OpFailure>) {
    crate::io::host::signals::block_in_this_thread();
    let mut worker = Worker::new(shared, index, files_exist);
    let mut figures: Vec<PhaseFigures> =
        phases.iter().map(|_| PhaseFigures { start_ns: 0, end_ns: 0, stats: OpStats::new() }).collect();
    let mut failure = None;
    // Every worker passes every barrier, stopped or not: none is left waiting.
    for (p, (op, fig)) in phases.iter().zip(&mut figures).enumerate() {
        barrier.wait();
        fig.start_ns = shared.clock.now_ns();
        if let Some(tap) = tap.as_mut() {
            tap.begin(p, fig.start_ns);
        }
        if failure.is_none() {
            failure = worker.phase(*op, &mut fig.stats, tap.as_mut());
        }
        fig.end_ns = shared.clock.now_ns();
        if let Some(tap) = tap.as_mut() {
            tap.end_phase();
        }
        barrier.wait();
    }
    let touched = worker.touched_bits.iter().map(|w| u64::from(w.count_ones())).sum();
    (figures, touched, failure)
}
