//! The time series: what happened in each `--interval`.
//!
//! Workers record each latency once, into their cumulative histograms (see
//! `stats`). Once per batch they look at the run's epoch (a relaxed load); when
//! the sampler has started a new interval, a worker copies its cumulative read
//! and write histograms into a spare pair (no allocation: the spares exist
//! before the start, and are handed back by the sampler) and sends the copy to
//! the sampler thread over a bounded channel. The sampler, never the workers,
//! subtracts the worker's previous snapshot from the new one: the difference is
//! exactly the interval's histogram, at the full 3 significant digits. It then
//! merges the workers' differences into rows, hands each finished row to an
//! observer (a live view, `stats::live`: each worker's part with it, `parts.rs`) and returns the older snapshot
//! as the next spare. An interval in which nothing completed is a row of zeros.
//!
//! Why snapshots and not a second, per-interval histogram: recording every
//! latency twice cost 12 % of the null engine's IOPS at queue depth 1; a copy of
//! two histograms once per interval costs tens of microseconds per second.
//!
//! Interval rows therefore hold exact counts and latencies of the I/Os each
//! worker completed between two of its own epoch checks: a worker notices a new
//! interval at its next batch (microseconds, or the length of one blocking I/O).
//! Summed over all rows, the op counts equal the run's totals.
//!
//! `--ramp`: the ramp's end is a boundary of its own (the rows before it are ramp rows,
//! `ramp: true`, and the first row of the window starts there). At the ramp's end each
//! worker hands over what it did since its last snapshot as the ramp's tail
//! (`IntervalRecorder::end_ramp`), then resets its figures; its later snapshots are
//! marked as the window's, and the sampler subtracts nothing from the first of them.
//! Summed over the rows that are not ramp rows, the op counts equal the run's totals.
//!
//! `--steady-state`: each finished row after the ramp is handed to a `SteadyWatch`;
//! once steady, the sampler sets the run's stop word, and at the end it merges the
//! histograms of the steady window's rows (`SamplerOutput::window`).

mod parts;
pub use parts::{SampledInterval, WorkerInterval};

use crate::base::primitives::clock::Clock;
use crate::io::stats::steady_state::{SteadyWatch, WatchedInterval};
use crate::io::stats::{LatencySummary, new_latency_histogram};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};
use std::time::Duration;

/// A worker's cumulative figures as the time series takes them: latency histograms of
/// reads, writes and flushes (`--fsync-every`, `--fdatasync-every`; a stand-in of a few
/// bytes that stays empty when the run does not flush), and the bytes read and written
/// (I/Os of a block-size mix differ in size: bandwidth is not ops times one size).
pub struct Snapshot {
    pub read: Histogram<u64>,
    pub write: Histogram<u64>,
    pub flush: Histogram<u64>,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// A paced run's lateness (a replay's lag) so far: how many I/Os and their sum (0 for
    /// a run without a schedule, and in the last snapshot at the worker's end).
    pub lateness_ops: u64,
    pub lateness_sum_ns: u128,
}

impl Snapshot {
    fn reset(&mut self) {
        self.read.reset();
        self.write.reset();
        self.flush.reset();
        self.read_bytes = 0;
        self.write_bytes = 0;
        self.lateness_ops = 0;
        self.lateness_sum_ns = 0;
    }
}

/// One worker's cumulative histograms at the end of interval `epoch`, handed to the sampler.
pub struct IntervalSample {
    pub worker: u32,
    pub epoch: u64,
    /// The worker has handed in every interval before this one (it moved on to it):
    /// those rows are complete as far as it is concerned (`u64::MAX`: its last sample).
    pub next_epoch: u64,
    /// Taken after the worker reset its figures at the ramp's end (always, without a ramp).
    pub in_window: bool,
    /// The last snapshot before that reset: it belongs to the last ramp row.
    pub ramp_tail: bool,
    pub snapshot: Snapshot,
}

/// The worker's side: copies its cumulative histograms at interval boundaries.
pub struct IntervalRecorder {
    worker: u32,
    epoch: u64,
    /// The first epoch of the window (the number of ramp rows; 0 without a ramp).
    first_window_epoch: u64,
    in_window: bool,
    to_sampler: SyncSender<IntervalSample>,
    spares: Receiver<Snapshot>,
}

impl IntervalRecorder {
    /// Once per batch: if the sampler started a new interval, hand over a snapshot made
    /// by `snapshot`, which must overwrite the pair with the worker's cumulative read and
    /// write histograms.
    #[inline]
    pub fn maybe_rotate(&mut self, epoch: &AtomicU64, snapshot: impl FnOnce(&mut Snapshot)) {
        let now = epoch.load(Ordering::Relaxed);
        // Greater, not different: after the ramp's end a worker may be ahead of the sampler.
        if now > self.epoch {
            self.rotate(now, snapshot);
        }
    }

    /// At the ramp's end, before the worker resets its figures: hands over what it did
    /// since its last snapshot (the ramp's tail; skipped without a spare, which loses
    /// nothing of the window), and marks its later snapshots as the window's.
    #[cold]
    #[inline(never)]
    pub fn end_ramp(&mut self, snapshot: impl FnOnce(&mut Snapshot)) {
        if let Ok(mut taken) = self.spares.try_recv() {
            snapshot(&mut taken);
            let sample = IntervalSample {
                worker: self.worker,
                epoch: self.epoch,
                next_epoch: self.epoch.max(self.first_window_epoch),
                in_window: false,
                ramp_tail: true,
                snapshot: taken,
            };
            let _ = self.to_sampler.try_send(sample);
        }
        self.in_window = true;
        self.epoch = self.epoch.max(self.first_window_epoch);
    }

    #[cold]
    #[inline(never)]
    fn rotate(&mut self, new_epoch: u64, snapshot: impl FnOnce(&mut Snapshot)) {
        // Without a spare (the sampler is behind), skip this boundary: the I/Os of this
        // interval land in the next one.
        match self.spares.try_recv() {
            Ok(mut taken) => {
                snapshot(&mut taken);
                let sample = IntervalSample {
                    worker: self.worker,
                    epoch: self.epoch,
                    next_epoch: new_epoch,
                    in_window: self.in_window,
                    ramp_tail: false,
                    snapshot: taken,
                };
                let _ = self.to_sampler.try_send(sample);
                self.epoch = new_epoch;
            }
            Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => {}
        }
    }

    /// At the end of the run: hands over the final cumulative histograms.
    pub fn flush(self, snapshot: impl FnOnce(&mut Snapshot)) {
        let mut taken = self.spares.try_recv().unwrap_or_else(|_| empty_pair(true));
        snapshot(&mut taken);
        let sample = IntervalSample {
            worker: self.worker,
            epoch: self.epoch,
            next_epoch: u64::MAX,
            in_window: self.in_window,
            ramp_tail: false,
            snapshot: taken,
        };
        let _ = self.to_sampler.send(sample);
    }
}

/// One row of the time series.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimeSeriesRow {
    /// End of the interval, from the release (the start of the ramp, or of the window
    /// without one).
    pub t_ns: u64,
    pub interval_ns: u64,
    /// A row of the ramp (`--ramp`): its I/Os are not counted in the run's figures.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ramp: bool,
    pub read: IntervalFigures,
    pub write: IntervalFigures,
    /// Read and write together (not the flushes).
    pub total: IntervalFigures,
    /// The flushes of the interval (`--fsync-every`, `--fdatasync-every`; no bytes);
    /// absent when the run does not flush.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<IntervalFigures>,
}

impl TimeSeriesRow {
    /// What a `--steady-state` watch reads of the row: read and write together.
    pub fn watched(&self) -> WatchedInterval {
        WatchedInterval {
            end_ns: self.t_ns,
            ops: self.total.ops,
            iops: self.total.iops,
            bw_bytes_per_sec: self.total.bw_bytes_per_sec,
            mean_latency_ns: self.total.latency_ns.mean,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct IntervalFigures {
    pub ops: u64,
    pub iops: f64,
    pub bw_bytes_per_sec: f64,
    /// p50, p99, p99.9 and max of this interval alone (other fields as in `LatencySummary`).
    pub latency_ns: LatencySummary,
}

impl IntervalFigures {
    /// The same I/Os over an interval of `to_ns` instead of `from_ns`: the counts stay, the
    /// rates are over the new length.
    fn over(&mut self, from_ns: u64, to_ns: u64) {
        let factor = from_ns as f64 / to_ns.max(1) as f64;
        self.iops *= factor;
        self.bw_bytes_per_sec *= factor;
    }
}

/// Ends the rows with the window (`window_end_ns` from the release): a row the sampler began
/// after the window closed and that holds nothing of it is dropped, and the last row ends
/// when the window did, not when the sampler stopped, its rates over that length (its I/Os
/// all completed inside the window).
pub fn close_at(rows: &mut Vec<TimeSeriesRow>, window_end_ns: u64) {
    while rows.len() > 1
        && rows.last().is_some_and(|r| r.total.ops == 0 && r.t_ns.saturating_sub(r.interval_ns) >= window_end_ns)
    {
        rows.pop();
    }
    if let Some(last) = rows.last_mut() {
        let start = last.t_ns.saturating_sub(last.interval_ns);
        let t_ns = last.t_ns.min(window_end_ns).max(start);
        let interval_ns = (t_ns - start).max(1);
        for figures in [&mut last.read, &mut last.write, &mut last.total].into_iter().chain(last.flush.as_mut()) {
            figures.over(last.interval_ns, interval_ns);
        }
        last.t_ns = t_ns;
        last.interval_ns = interval_ns;
    }
}

/// The sampler's side, built by the coordinator before the workers start.
pub struct Sampler {
    rx: Receiver<IntervalSample>,
    spares: Vec<SyncSender<Snapshot>>,
    /// Each worker's latest snapshot, to subtract from its next one, and whether it was
    /// taken in the window (after the worker's reset at the ramp's end).
    previous: Vec<(Snapshot, bool)>,
    /// The number of ramp rows.
    first_window_epoch: u64,
    /// The run flushes: rows have flush figures.
    flushing: bool,
    /// Per worker, the first interval it has not handed in yet (`IntervalSample::next_epoch`):
    /// an interval before every worker's is complete, and only then judged.
    handed_in: Vec<u64>,
    /// Each interval is also split by worker (a live view shows each worker's part).
    per_worker: bool,
}

/// Histograms per worker the time series adds: one spare pair, and the sampler's copy
/// of the previous snapshot (the pair in transit is one of these two).
pub const HISTOGRAMS_PER_WORKER: u64 = 4;

/// Histograms for a worker's snapshot; the flush one is a stand-in unless `flushing`.
fn empty_pair(flushing: bool) -> Snapshot {
    let flush = if flushing {
        new_latency_histogram()
    } else {
        // Never recorded into: a non-flushing worker's flush histograms are empty.
        Histogram::new_with_bounds(1, 2, 0).expect("valid bounds")
    };
    Snapshot {
        read: new_latency_histogram(),
        write: new_latency_histogram(),
        flush,
        read_bytes: 0,
        write_bytes: 0,
        lateness_ops: 0,
        lateness_sum_ns: 0,
    }
}

/// Makes the sampler and one recorder per worker, with their spare histograms;
/// `ramp_rows` is the number of intervals of the ramp (`ramp_rows`; 0 without one);
/// `flushing`: the workers issue flushes (their histograms are kept too).
pub fn channels(workers: u32, ramp_rows: u64, flushing: bool) -> (Sampler, Vec<IntervalRecorder>) {
    let (to_sampler, rx) = std::sync::mpsc::sync_channel(workers as usize * 2 + 4);
    let mut spares = Vec::with_capacity(workers as usize);
    let mut recorders = Vec::with_capacity(workers as usize);
    for w in 0..workers {
        let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel(2);
        let _ = spare_tx.send(empty_pair(flushing));
        spares.push(spare_tx);
        recorders.push(IntervalRecorder {
            worker: w,
            epoch: 0,
            first_window_epoch: ramp_rows,
            in_window: ramp_rows == 0,
            to_sampler: to_sampler.clone(),
            spares: spare_rx,
        });
    }
    let previous = (0..workers).map(|_| (empty_pair(flushing), ramp_rows == 0)).collect();
    let handed_in = vec![0; workers as usize];
    (Sampler { rx, spares, previous, first_window_epoch: ramp_rows, flushing, handed_in, per_worker: false }, recorders)
}

/// The number of rows of a ramp of `ramp_ns` in intervals of `interval_ns` (the last one
/// shorter when the ramp is not a multiple of the interval).
pub fn ramp_rows(ramp_ns: u64, interval_ns: u64) -> u64 {
    ramp_ns.div_ceil(interval_ns.max(1))
}

/// How the sampler runs.
pub struct SamplerConfig {
    pub clock: Clock,
    pub start_ns: u64,
    pub interval_ns: u64,
    /// The run's planned length from the release, ramp included (`None`: until done): an
    /// interval starting at or after it gets a row only if something completed in it.
    pub duration_ns: Option<u64>,
    /// `--ramp`: its length (0: none); its end is a boundary of the rows.
    pub ramp_ns: u64,
}

impl SamplerConfig {
    /// The end of interval `e`, from the release: intervals of the ramp, the ramp's end,
    /// then intervals of the window.
    fn tick_ns(&self, e: u64) -> u64 {
        let ramp_rows = ramp_rows(self.ramp_ns, self.interval_ns);
        if e < ramp_rows {
            ((e + 1) * self.interval_ns).min(self.ramp_ns)
        } else {
            self.ramp_ns + (e + 1 - ramp_rows) * self.interval_ns
        }
    }
}

/// `--steady-state`: the watch the sampler feeds, and the stop word it sets (with `code`)
/// once the watch says steady.
pub struct SteadyHook<'a> {
    pub watch: SteadyWatch,
    pub stop: &'a AtomicUsize,
    pub code: usize,
}

/// What the sampler hands back.
pub struct SamplerOutput {
    pub rows: Vec<TimeSeriesRow>,
    /// `--steady-state`: the watch, and the merged read and write histograms of its
    /// window's rows (the steady one, else the last full one).
    pub steady: Option<(SteadyWatch, Option<Snapshot>)>,
}

/// Told each finished interval's row and each worker's part of it while the run goes on
/// (`Some`), and once at the end (`None`): a live view (`stats::live`) through `run::live`.
pub type RowObserver<'a> = &'a mut dyn FnMut(Option<SampledInterval<'_>>);

/// Interval sums, before they become a row.
#[derive(Default)]
struct Accumulated {
    read: Option<Histogram<u64>>,
    write: Option<Histogram<u64>>,
    flush: Option<Histogram<u64>>,
    read_bytes: u64,
    write_bytes: u64,
    /// Each worker's part, in worker order (only for an observer: `Sampler::per_worker`).
    workers: Vec<WorkerInterval>,
}

impl Sampler {
    /// Runs until `done` is set and every worker has flushed; returns the rows (and, with
    /// a steady-state hook, its watch and window).
    pub fn run(
        mut self,
        config: &SamplerConfig,
        epoch: &AtomicU64,
        done: &AtomicBool,
        mut observer: Option<RowObserver<'_>>,
        mut steady: Option<SteadyHook<'_>>,
    ) -> SamplerOutput {
        let mut rows: BTreeMap<u64, Accumulated> = BTreeMap::new();
        let mut tick_ns = Vec::new(); // end time of each epoch
        let mut current = 0u64;
        // The next interval to hand to the observer and the watch: each is judged once
        // complete (every worker handed it in), however long an I/O kept one from it.
        let mut judged = 0u64;
        let judging = observer.is_some() || steady.is_some();
        self.per_worker = observer.is_some();
        loop {
            let next_tick = config.start_ns + config.tick_ns(current);
            // Collect until the next tick, then start a new interval.
            while config.clock.now_ns() < next_tick && !done.load(Ordering::Acquire) {
                let wait = (next_tick.saturating_sub(config.clock.now_ns())).min(50_000_000);
                if let Ok(sample) = self.rx.recv_timeout(Duration::from_nanos(wait.max(1))) {
                    self.absorb(sample, &mut rows, true);
                    if judging {
                        self.judge(&mut judged, current, &rows, &tick_ns, &mut observer, &mut steady);
                    }
                }
            }
            if done.load(Ordering::Acquire) {
                break;
            }
            tick_ns.push(next_tick - config.start_ns);
            current += 1;
            epoch.store(current, Ordering::Relaxed);
            // Workers that have finished hand in nothing more: what they complete is judged now.
            if judging {
                self.judge(&mut judged, current, &rows, &tick_ns, &mut observer, &mut steady);
            }
        }
        // Workers flushed their last interval before `done` was set and dropped their
        // senders: take everything left, until the channel is closed.
        let spares = std::mem::take(&mut self.spares);
        drop(spares);
        while let Ok(sample) = self.rx.recv() {
            self.absorb(sample, &mut rows, false);
        }
        if let Some(observe) = &mut observer {
            observe(None);
        }
        let end_ns = config.clock.now_ns().saturating_sub(config.start_ns);
        // Every interval that ended and began inside the planned window has a row, of zeros
        // when nothing completed in it (a stall is a row of zeros, not a gap); the last,
        // partial interval has one when something completed in it.
        let started_in_window = |e: usize| {
            let start = if e == 0 { 0 } else { tick_ns[e - 1] };
            config.duration_ns.is_none_or(|d| start < d)
        };
        let ended = (0..tick_ns.len()).take_while(|&e| started_in_window(e)).count() as u64;
        let last = rows.keys().next_back().map_or(0, |&e| e + 1).max(ended);
        let empty = Accumulated::default();
        let steady = steady.map(|mut hook| {
            // The window's figures, recomputed from its rows as the result holds them.
            if let Some((first, last)) = hook.watch.window_epochs() {
                let watched: Vec<WatchedInterval> = (first..=last)
                    .map(|e| {
                        let end = tick_ns.get(e as usize).copied().unwrap_or(end_ns);
                        let start = if e == 0 { 0 } else { tick_ns.get(e as usize - 1).copied().unwrap_or(0) };
                        let acc = rows.get(&e).unwrap_or(&empty);
                        row_of(acc, end, end.saturating_sub(start).max(1), false, self.flushing).watched()
                    })
                    .collect();
                hook.watch.refigure(&watched);
            }
            // The window's rows as they finally are.
            let window = hook.watch.window_epochs().map(|(first, last)| {
                let mut window = empty_pair(self.flushing);
                for acc in rows.range(first..=last).map(|(_, acc)| acc) {
                    if let Some(h) = &acc.read {
                        let _ = window.read.add(h);
                    }
                    if let Some(h) = &acc.write {
                        let _ = window.write.add(h);
                    }
                    if let Some(h) = &acc.flush {
                        let _ = window.flush.add(h);
                    }
                    window.read_bytes += acc.read_bytes;
                    window.write_bytes += acc.write_bytes;
                }
                window
            });
            (hook.watch, window)
        });
        let rows = (0..last)
            .map(|e| {
                let acc = rows.get(&e).unwrap_or(&empty);
                let t = tick_ns.get(e as usize).copied().unwrap_or(end_ns);
                let start = if e == 0 { 0 } else { tick_ns.get(e as usize - 1).copied().unwrap_or(0) };
                let ramp = e < self.first_window_epoch;
                row_of(acc, t, t.saturating_sub(start).max(1), ramp, self.flushing)
            })
            .collect();
        SamplerOutput { rows, steady }
    }

    /// Hands every interval that has ended (`ended` of them) and that every worker has
    /// handed in to the observer and the steady-state watch, in order. Such a row is
    /// final: no later sample is added to it.
    fn judge(
        &self,
        judged: &mut u64,
        ended: u64,
        rows: &BTreeMap<u64, Accumulated>,
        tick_ns: &[u64],
        observer: &mut Option<RowObserver<'_>>,
        steady: &mut Option<SteadyHook<'_>>,
    ) {
        let complete_before = self.handed_in.iter().copied().min().unwrap_or(u64::MAX);
        while *judged < ended && *judged < complete_before {
            let e = *judged;
            *judged += 1;
            let start = if e == 0 { 0 } else { tick_ns[e as usize - 1] };
            let end = tick_ns[e as usize];
            let empty = Accumulated::default();
            let acc = rows.get(&e).unwrap_or(&empty);
            let row = row_of(acc, end, end - start, e < self.first_window_epoch, self.flushing);
            if let Some(hook) = steady
                && !row.ramp
                && hook.watch.observe(e, &row.watched())
            {
                let _ = hook.stop.compare_exchange(0, hook.code, Ordering::Relaxed, Ordering::Relaxed);
            }
            if let Some(observe) = observer
                && rows.contains_key(&e)
            {
                let steady = steady.as_ref().map(|hook| hook.watch.progress());
                observe(Some(SampledInterval { row: &row, workers: &acc.workers, steady }));
            }
        }
    }

    /// Adds a worker's interval (its snapshot less its previous one) to the interval's
    /// row, keeps the snapshot as the worker's previous one, and gives the older one back
    /// to the worker as its next spare (unless the run is over: `give_back` false).
    fn absorb(&mut self, sample: IntervalSample, rows: &mut BTreeMap<u64, Accumulated>, give_back: bool) {
        if let Some(h) = self.handed_in.get_mut(sample.worker as usize) {
            *h = (*h).max(sample.next_epoch);
        }
        let workers = self.previous.len();
        let Some((previous, previous_in_window)) = self.previous.get_mut(sample.worker as usize) else { return };
        // The ramp's tail belongs to the last ramp row, whenever the worker took it.
        let epoch =
            if sample.ramp_tail { sample.epoch.min(self.first_window_epoch.saturating_sub(1)) } else { sample.epoch };
        // The worker's first snapshot after its reset at the ramp's end: nothing to subtract.
        if sample.in_window && !*previous_in_window {
            previous.reset();
        }
        *previous_in_window = sample.in_window;
        let acc = rows.entry(epoch).or_default();
        let now = &sample.snapshot;
        acc.read_bytes += now.read_bytes.saturating_sub(previous.read_bytes);
        acc.write_bytes += now.write_bytes.saturating_sub(previous.write_bytes);
        if self.per_worker {
            let w = sample.worker as usize;
            if acc.workers.len() <= w {
                acc.workers.resize(workers, WorkerInterval::default());
            }
            let part = &mut acc.workers[w];
            part.ops += (now.read.len() + now.write.len()).saturating_sub(previous.read.len() + previous.write.len());
            part.bytes += (now.read_bytes + now.write_bytes).saturating_sub(previous.read_bytes + previous.write_bytes);
            part.latency_sum_ns += latency_sum_ns(now).saturating_sub(latency_sum_ns(previous));
            if now.lateness_ops > previous.lateness_ops {
                part.late_ops += now.lateness_ops - previous.lateness_ops;
                part.late_sum_ns += now.lateness_sum_ns.saturating_sub(previous.lateness_sum_ns) as u64;
            }
        }
        for (slot, now, before) in [
            (&mut acc.read, &now.read, &previous.read),
            (&mut acc.write, &now.write, &previous.write),
            (&mut acc.flush, &now.flush, &previous.flush),
        ] {
            if now.is_empty() && before.is_empty() {
                continue; // nothing of this kind (a run without flushes)
            }
            let row = slot.get_or_insert_with(new_latency_histogram);
            // A snapshot holds at least its predecessor's counts, bucket by bucket (the
            // reset at the ramp's end is handled above): row + now - before stays >= 0.
            let _ = row.add(now);
            let _ = row.subtract(before);
        }
        let mut older = std::mem::replace(previous, sample.snapshot);
        if give_back && let Some(tx) = self.spares.get(sample.worker as usize) {
            older.reset();
            let _ = tx.try_send(older);
        }
    }
}

/// The sum of a snapshot's read and write latencies (from each histogram's mean: within
/// its buckets' precision).
fn latency_sum_ns(s: &Snapshot) -> u64 {
    [&s.read, &s.write].iter().map(|h| if h.is_empty() { 0 } else { (h.mean() * h.len() as f64) as u64 }).sum()
}

fn figures(hist: Option<&Histogram<u64>>, interval_ns: u64, bytes: u64) -> IntervalFigures {
    let Some(h) = hist.filter(|h| !h.is_empty()) else { return IntervalFigures::default() };
    let ops = h.len();
    let seconds = interval_ns as f64 / 1e9;
    IntervalFigures {
        ops,
        iops: ops as f64 / seconds,
        bw_bytes_per_sec: bytes as f64 / seconds,
        // The one summary of a histogram, as the run's totals use it.
        latency_ns: LatencySummary::from_histogram(h, h.min(), h.max(), h.mean().round() as u64),
    }
}

fn row_of(acc: &Accumulated, t_ns: u64, interval_ns: u64, ramp: bool, flushing: bool) -> TimeSeriesRow {
    let read = figures(acc.read.as_ref(), interval_ns, acc.read_bytes);
    let write = figures(acc.write.as_ref(), interval_ns, acc.write_bytes);
    let mut both = acc.read.clone();
    if let (Some(b), Some(w)) = (&mut both, &acc.write) {
        let _ = b.add(w);
    }
    let total = figures(both.as_ref().or(acc.write.as_ref()), interval_ns, acc.read_bytes + acc.write_bytes);
    // A flush moves no bytes: its figures have no bandwidth.
    let flush = flushing.then(|| figures(acc.flush.as_ref(), interval_ns, 0));
    TimeSeriesRow { t_ns, interval_ns, ramp, read, write, total, flush }
}

#[cfg(test)]
mod tests;
