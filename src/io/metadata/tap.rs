//! A metadata worker's side of the time series (`--timeseries`, `--interval`): its figures
//! of the current interval (a `Tap`: one `OpStats` per kind it runs, allocated before the
//! window), handed to the collector (`coordination/metadata/intervals.rs`) at each interval
//! boundary in exchange for a spare set. Why and how the rows add up to the totals: that
//! module's header.
//!
//! Per operation: one record and one comparison with the interval's end; no clock read, no
//! allocation, no lock, no atomic. It must not add pieces into rows (the collector does).

use super::workload::MetaOp;
use crate::io::stats::OpStats;
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, SyncSender};

/// What a worker sends: its figures of interval `epoch` of `phase`.
pub struct Piece {
    pub worker: u32,
    pub phase: u32,
    pub epoch: u64,
    /// The worker's last piece of the phase.
    pub phase_end: bool,
    pub stats: Vec<OpStats>,
}

/// Figures of each kind (`MetaOp::index`): full histograms for the kinds in `kinds`, small
/// stand-ins (never recorded into) for the others. A worker's totals, an interval's and a
/// window's sums are all of this shape.
pub fn per_kind_stats(kinds: &[MetaOp]) -> Vec<OpStats> {
    MetaOp::ALL.iter().map(|op| if kinds.contains(op) { OpStats::new() } else { OpStats::unused() }).collect()
}

/// A worker's side: its figures of the current interval.
pub struct Tap<'a> {
    worker: u32,
    interval_ns: u64,
    /// Each phase's origin, set by the first worker to start it.
    origins: &'a [OnceLock<u64>],
    phase: u32,
    origin_ns: u64,
    epoch: u64,
    /// The end of the current interval on the run's clock: a completion at or after it
    /// belongs to a later one.
    next_ns: u64,
    current: Vec<OpStats>,
    to_collector: SyncSender<Piece>,
    spares: Receiver<Vec<OpStats>>,
}

impl<'a> Tap<'a> {
    /// Worker `worker`'s tap for intervals of `interval_ns`, recording into `current` (from
    /// `figures`), sending to the collector and taking spares back over the channels given.
    pub fn new(
        worker: u32,
        interval_ns: u64,
        origins: &'a [OnceLock<u64>],
        current: Vec<OpStats>,
        to_collector: SyncSender<Piece>,
        spares: Receiver<Vec<OpStats>>,
    ) -> Tap<'a> {
        Tap {
            worker,
            interval_ns: interval_ns.max(1),
            origins,
            phase: 0,
            origin_ns: 0,
            epoch: 0,
            next_ns: u64::MAX,
            current,
            to_collector,
            spares,
        }
    }

    /// At the start of phase `phase` (0 for the mix), before its first operation.
    pub fn begin(&mut self, phase: usize, now_ns: u64) {
        self.phase = phase as u32;
        self.origin_ns = *self.origins[phase].get_or_init(|| now_ns);
        self.epoch = 0;
        self.next_ns = self.origin_ns + self.interval_ns;
    }

    /// One operation that completed at `end_ns`. No allocation, no lock, no atomic.
    #[inline(always)]
    pub fn record(&mut self, op: MetaOp, bytes: u64, lat_ns: u64, end_ns: u64) {
        if end_ns >= self.next_ns {
            self.rotate(end_ns);
        }
        self.current[op.index()].record(bytes, lat_ns);
    }

    /// A boundary passed: hand the interval over if a spare is there, else keep it (its
    /// operations then count in the interval of `end_ns`).
    #[cold]
    #[inline(never)]
    fn rotate(&mut self, end_ns: u64) {
        if self.current.iter().any(|s| s.ops > 0)
            && let Ok(spare) = self.spares.try_recv()
        {
            let stats = std::mem::replace(&mut self.current, spare);
            let piece = Piece { worker: self.worker, phase: self.phase, epoch: self.epoch, phase_end: false, stats };
            // The channel holds every set there is: never full.
            let _ = self.to_collector.send(piece);
        }
        self.epoch = (end_ns - self.origin_ns) / self.interval_ns;
        self.next_ns = self.origin_ns + (self.epoch + 1) * self.interval_ns;
    }

    /// At the end of a phase (the mix's window): hands over what is left. Waits for a spare
    /// (the collector sends one back at once): not on the hot path.
    pub fn end_phase(&mut self) {
        match self.spares.recv() {
            Ok(spare) => {
                let stats = std::mem::replace(&mut self.current, spare);
                let piece = Piece { worker: self.worker, phase: self.phase, epoch: self.epoch, phase_end: true, stats };
                let _ = self.to_collector.send(piece);
            }
            // The collector is gone (it panicked): the series is lost anyway.
            Err(_) => self.current.iter_mut().for_each(OpStats::reset),
        }
    }
}
