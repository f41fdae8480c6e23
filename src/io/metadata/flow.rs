//! One worker of a flow (`--meta-flow`): filebench's flowops in order, over and over, on the
//! worker's own files, until the window ends. The steps between an `open` (or `create`) and
//! its `close` act on the file it holds; `delete`, `open` and `stat` take the worker's next
//! existing file and `create` its next absent name, each by a rotor over its files in index
//! order (filebench's per-thread rotor, here over the files the worker owns: file `i` is
//! worker `i mod threads`'s, so no two workers ever hold one file); `append-log` writes to
//! the run's one log file, which each worker opens at its first append and holds.
//!
//! Each step is timed on its own (two clock reads) into its own figures, and into its
//! kind's interval with a time series. A step that finds nothing to act on (no existing
//! file to delete, no name left to create, no file held after an `open` that found none)
//! is skipped, uncounted. It must not print or compute figures beyond recording them.

use super::tap::Tap;
use super::tree::{RelPath, TreeNames};
use super::worker::{OpFailure, Shared};
use crate::base::primitives::rng::Rng;
use crate::io::engine::tree_ops::calls;
use crate::io::engine::tree_ops::held::HeldFile;
use crate::io::metadata::workload::{FLOW_IO_BYTES, FlowStep};
use crate::io::stats::OpStats;
use std::sync::Barrier;

/// What one flow worker hands back.
pub struct FlowFigures {
    /// Per step of the flow, in its order.
    pub per_step: Vec<OpStats>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The tree's files this worker touched at least once.
    pub touched: u64,
    pub failure: Option<OpFailure>,
}

/// Which of a worker's files exist, and its two rotors (the next existing file, the next
/// absent name), by the worker's own numbering (its `k`-th file is `index + k × threads`).
struct Rotor {
    exists: Vec<u64>,
    count: u64,
    next_existing: u64,
    next_absent: u64,
}

impl Rotor {
    fn new(count: u64, exists: impl Fn(u64) -> bool) -> Rotor {
        let mut bits = vec![0u64; count.div_ceil(64) as usize];
        for k in (0..count).filter(|&k| exists(k)) {
            bits[(k / 64) as usize] |= 1 << (k % 64);
        }
        Rotor { exists: bits, count, next_existing: 0, next_absent: 0 }
    }

    fn set(&mut self, k: u64, exists: bool) {
        let bit = 1 << (k % 64);
        if exists {
            self.exists[(k / 64) as usize] |= bit;
        } else {
            self.exists[(k / 64) as usize] &= !bit;
        }
    }

    /// The first file at or after `from` (wrapping) that `exists` or not, as asked: a
    /// word of 64 files at a time, so that a worker whose every name exists (or none)
    /// learns it in `count / 64` steps.
    fn find(&self, from: u64, exists: bool) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let words = self.exists.len() as u64;
        let start = from % self.count;
        // The word holding `start` is looked at twice: from `start` on first, and up to
        // `start` last, after every other word.
        for step in 0..=words {
            let w = (start / 64 + step) % words;
            let mut bits = if exists { self.exists[w as usize] } else { !self.exists[w as usize] };
            if step == 0 {
                bits &= u64::MAX << (start % 64);
            }
            // The last word's bits past `count` are no files.
            let past = (w + 1) * 64;
            if past > self.count {
                bits &= u64::MAX >> (past - self.count);
            }
            if bits != 0 {
                return Some(w * 64 + u64::from(bits.trailing_zeros()));
            }
        }
        None
    }

    fn take_existing(&mut self) -> Option<u64> {
        let k = self.find(self.next_existing, true)?;
        self.next_existing = (k + 1) % self.count;
        Some(k)
    }

    fn take_absent(&mut self) -> Option<u64> {
        let k = self.find(self.next_absent, false)?;
        self.next_absent = (k + 1) % self.count;
        Some(k)
    }
}

struct FlowWorker<'a> {
    shared: &'a Shared<'a>,
    index: u64,
    threads: u64,
    rotor: Rotor,
    touched: Vec<u64>,
    rng: Rng,
    path: RelPath,
    buf: Vec<u8>,
    held: Option<(HeldFile, u64)>,
    log: Option<HeldFile>,
}

impl<'a> FlowWorker<'a> {
    fn new(shared: &'a Shared<'a>, index: u32) -> FlowWorker<'a> {
        let meta = shared.meta;
        let (i, t) = (u64::from(index), u64::from(shared.threads));
        let count = super::worker::owned_count(meta.files, index, shared.threads);
        let rotor = Rotor::new(count, |k| meta.made_at_setup(i + k * t));
        let mut rng = Rng::new(shared.seed, i);
        let mut buf = vec![0u8; FLOW_IO_BYTES];
        // Data that does not compress or dedupe away.
        rng.fill_bytes(&mut buf);
        FlowWorker {
            shared,
            index: i,
            threads: t,
            rotor,
            touched: vec![0; count.div_ceil(64) as usize],
            rng,
            path: RelPath::default(),
            buf,
            held: None,
            log: None,
        }
    }

    fn file_of(&self, k: u64) -> u64 {
        self.index + k * self.threads
    }

    fn touch(&mut self, k: u64) {
        self.touched[(k / 64) as usize] |= 1 << (k % 64);
    }

    fn set_path(&mut self, file: u64) {
        self.path.set_file(&self.shared.shape, file);
    }

    /// Runs `step`: the bytes it moved, `None` when it found nothing to act on, or the errno.
    fn run(&mut self, step: FlowStep) -> Option<calls::OpResult> {
        let root = self.shared.root;
        Some(match step {
            FlowStep::Delete => {
                let k = self.rotor.take_existing()?;
                self.set_path(self.file_of(k));
                let r = calls::unlink(root, &self.path);
                if r.is_ok() {
                    self.rotor.set(k, false);
                    self.touch(k);
                }
                r
            }
            FlowStep::Stat => {
                let k = self.rotor.take_existing()?;
                self.set_path(self.file_of(k));
                self.touch(k);
                calls::stat(root, &self.path)
            }
            FlowStep::Create | FlowStep::Open => {
                let create = step == FlowStep::Create;
                let k = if create { self.rotor.take_absent()? } else { self.rotor.take_existing()? };
                self.set_path(self.file_of(k));
                match HeldFile::open(root, &self.path, create) {
                    Ok(file) => {
                        self.rotor.set(k, true);
                        self.touch(k);
                        self.held = Some((file, k));
                        Ok(0)
                    }
                    Err(errno) => Err(errno),
                }
            }
            FlowStep::Close => self.held.take()?.0.close(),
            FlowStep::ReadWhole => self.held.as_ref()?.0.read_whole(&mut self.buf),
            FlowStep::WriteWhole => {
                let (file, k) = self.held.as_ref()?;
                let size = self.shared.meta.sizes.size_of(self.index + k * self.threads, 0);
                file.write_whole(&self.buf, size)
            }
            FlowStep::AppendRand => {
                let len = self.append_len();
                self.held.as_ref()?.0.append(&self.buf, len)
            }
            FlowStep::Fsync => self.held.as_ref()?.0.fsync(),
            FlowStep::AppendLog => {
                let len = self.append_len();
                match self.open_log()? {
                    Ok(()) => self.log.as_ref().map_or(Err(libc::EBADF), |log| log.append(&self.buf, len)),
                    Err(errno) => Err(errno),
                }
            }
        })
    }

    /// filebench's appendfilerand: 0 to iosize − 2 bytes, uniform (iosize is --block-size).
    fn append_len(&mut self) -> u64 {
        self.rng.below(self.shared.append_bytes.saturating_sub(1).max(1))
    }

    /// The run's log file, opened at the first append (untimed, as filebench opens a
    /// flowop's `fd` before it starts the clock); `None` when the flow has none.
    fn open_log(&mut self) -> Option<Result<(), i32>> {
        if self.log.is_none() {
            let file = self.shared.meta.log_file()?;
            self.path.set_file(&self.shared.shape, file);
            match HeldFile::open(self.shared.root, &self.path, false) {
                Ok(log) => self.log = Some(log),
                Err(errno) => return Some(Err(errno)),
            }
        }
        Some(Ok(()))
    }

    /// The path a failed step names: the held file's, or the one it last set.
    fn failed_path(&mut self, step: FlowStep) -> String {
        match (step, &self.held) {
            (FlowStep::AppendLog, _) => {
                if let Some(file) = self.shared.meta.log_file() {
                    self.path.set_file(&self.shared.shape, file);
                }
            }
            (_, Some((_, k))) if step.needs_held() => {
                let file = self.file_of(*k);
                self.set_path(file);
            }
            _ => {}
        }
        self.path.as_str().to_string()
    }
}

/// A flow in one window: until `end_ns` (after the start, on the shared clock), `ops_quota`
/// steps, or a stop; with `tap`, each step into its kind's interval too.
pub fn run_flow(
    shared: &Shared<'_>,
    index: u32,
    steps: &[FlowStep],
    start: &Barrier,
    duration_ns: Option<u64>,
    ops_quota: Option<u64>,
    mut tap: Option<Tap<'_>>,
) -> FlowFigures {
    crate::io::host::signals::block_in_this_thread();
    let mut worker = FlowWorker::new(shared, index);
    let mut out = FlowFigures {
        per_step: steps.iter().map(|_| OpStats::new()).collect(),
        start_ns: 0,
        end_ns: 0,
        touched: 0,
        failure: None,
    };
    start.wait();
    if !shared.phase_released() {
        return out;
    }
    let clock = shared.clock;
    out.start_ns = clock.now_ns();
    out.end_ns = out.start_ns;
    let end_ns = duration_ns.map(|d| out.start_ns + d);
    if let Some(tap) = tap.as_mut() {
        tap.begin(0, out.start_ns);
    }
    let mut done = 0u64;
    'window: while !shared.stopped() {
        for (i, &step) in steps.iter().enumerate() {
            if shared.stopped() || ops_quota.is_some_and(|q| done >= q) {
                break 'window;
            }
            let t0 = clock.now_ns();
            let result = worker.run(step);
            let t1 = clock.now_ns();
            match result {
                None => continue,
                Some(Ok(bytes)) => {
                    out.per_step[i].record(bytes, t1 - t0);
                    if let Some(tap) = tap.as_mut() {
                        tap.record(step.kind(), bytes, t1 - t0, t1);
                    }
                }
                Some(Err(errno)) => {
                    let path = worker.failed_path(step);
                    out.failure = Some(shared.fail(step.kind(), &path, errno));
                    out.end_ns = t1;
                    break 'window;
                }
            }
            done += 1;
            out.end_ns = t1;
            if end_ns.is_some_and(|end| t1 >= end) {
                break 'window;
            }
        }
        if ops_quota.is_some_and(|q| done >= q) {
            break;
        }
    }
    if let Some(tap) = tap.as_mut() {
        tap.end_phase();
    }
    out.touched = worker.touched.iter().map(|w| u64::from(w.count_ones())).sum();
    out
}

#[cfg(test)]
mod tests {
    use super::Rotor;

    #[test]
    fn the_rotor_walks_existing_files_and_absent_names_in_turn() {
        // Files 0, 1, 3 exist; 2 and 4 do not.
        let mut r = Rotor::new(5, |k| k != 2 && k != 4);
        assert_eq!([r.take_existing(), r.take_existing(), r.take_existing()], [Some(0), Some(1), Some(3)]);
        assert_eq!(r.take_existing(), Some(0), "wraps to the first existing file");
        assert_eq!(r.take_absent(), Some(2));
        r.set(2, true);
        assert_eq!(r.take_absent(), Some(4));
        r.set(4, true);
        assert_eq!(r.take_absent(), None, "every name exists");
        assert_eq!(r.take_existing(), Some(1));
        assert_eq!(r.take_existing(), Some(2), "a created file joins the existing ones");
        for k in 0..5 {
            r.set(k, false);
        }
        assert_eq!(r.take_existing(), None);
    }

    #[test]
    fn the_rotor_finds_across_words_and_wraps_as_a_scan_would() {
        // 200 files over four words; against a file-by-file scan from every start.
        for pattern in [0u64, 1, 7, 63, 64, 65, 127, 199] {
            let exists = |k: u64| k.is_multiple_of(pattern + 2) || k == pattern;
            let r = Rotor::new(200, exists);
            for from in 0..200 {
                for want in [true, false] {
                    let scan = (0..200).map(|d| (from + d) % 200).find(|&k| exists(k) == want);
                    assert_eq!(r.find(from, want), scan, "pattern {pattern}, from {from}, exists {want}");
                }
            }
        }
        let full = Rotor::new(130, |_| true);
        assert_eq!(full.find(77, false), None, "no absent name");
        assert_eq!(full.find(129, true), Some(129));
        assert_eq!(Rotor::new(0, |_| true).find(0, true), None);
    }
}
