//! The time series and the live line: what happened in each `--interval`.
//!
//! Workers record each latency into a small interval histogram as well (2
//! significant digits) when a time series is wanted. Once per batch they look
//! at the run's epoch (a relaxed load); when the sampler has started a new
//! interval, a worker swaps its interval histograms for cleared spares (no
//! allocation: the spares are made before the start) and hands the full ones to
//! the sampler thread over a bounded channel. The sampler, never the workers,
//! merges them into rows, prints the live line and returns the spares.
//!
//! Interval rows therefore hold exact counts and latencies of the I/Os each
//! worker completed between two of its own epoch checks: a worker notices a new
//! interval at its next batch (microseconds, or the length of one blocking I/O).
//! Summed over all rows, the op counts equal the run's totals.

use crate::clock::Clock;
use crate::engine::Op;
use crate::stats::{LatencySummary, MAX_LATENCY_NS};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};
use std::time::Duration;

/// Significant digits of interval histograms (small: swapped and merged every interval).
const INTERVAL_DIGITS: u8 = 2;

fn interval_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, INTERVAL_DIGITS).expect("valid histogram bounds")
}

/// One worker's interval, handed to the sampler.
pub struct IntervalSample {
    pub worker: u32,
    pub epoch: u64,
    pub read: Histogram<u64>,
    pub write: Histogram<u64>,
}

/// The worker's side: records latencies and hands intervals over.
pub struct IntervalRecorder {
    worker: u32,
    epoch: u64,
    read: Histogram<u64>,
    write: Histogram<u64>,
    to_sampler: SyncSender<IntervalSample>,
    spares: Receiver<(Histogram<u64>, Histogram<u64>)>,
}

impl IntervalRecorder {
    #[inline(always)]
    pub fn record(&mut self, op: Op, lat_ns: u64) {
        match op {
            Op::Read => self.read.saturating_record(lat_ns),
            Op::Write => self.write.saturating_record(lat_ns),
        }
    }

    /// Once per batch: if the sampler started a new interval, hand this one over.
    #[inline]
    pub fn maybe_rotate(&mut self, epoch: &AtomicU64) {
        let now = epoch.load(Ordering::Relaxed);
        if now != self.epoch {
            self.rotate(now);
        }
    }

    #[cold]
    fn rotate(&mut self, new_epoch: u64) {
        // Without a spare (the sampler is behind), keep recording: this interval's
        // samples land in the next one.
        match self.spares.try_recv() {
            Ok((mut read, mut write)) => {
                std::mem::swap(&mut read, &mut self.read);
                std::mem::swap(&mut write, &mut self.write);
                let sample = IntervalSample { worker: self.worker, epoch: self.epoch, read, write };
                let _ = self.to_sampler.try_send(sample);
                self.epoch = new_epoch;
            }
            Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => {}
        }
    }

    /// At the end of the run: hands over what is left.
    pub fn flush(self) {
        let sample = IntervalSample { worker: self.worker, epoch: self.epoch, read: self.read, write: self.write };
        let _ = self.to_sampler.send(sample);
    }
}

/// One row of the time series.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimeSeriesRow {
    /// End of the interval, from the start of the window.
    pub t_ns: u64,
    pub interval_ns: u64,
    pub read: IntervalFigures,
    pub write: IntervalFigures,
    pub total: IntervalFigures,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct IntervalFigures {
    pub ops: u64,
    pub iops: f64,
    pub bw_bytes_per_sec: f64,
    /// p50, p99, p99.9 and max of this interval alone (other fields as in `LatencySummary`).
    pub latency_ns: LatencySummary,
}

/// The sampler's side, built by the coordinator before the workers start.
pub struct Sampler {
    rx: Receiver<IntervalSample>,
    spares: Vec<SyncSender<(Histogram<u64>, Histogram<u64>)>>,
}

/// Makes the sampler and one recorder per worker, with their spare histograms.
pub fn channels(workers: u32) -> (Sampler, Vec<IntervalRecorder>) {
    let (to_sampler, rx) = std::sync::mpsc::sync_channel(workers as usize * 4 + 4);
    let mut spares = Vec::with_capacity(workers as usize);
    let mut recorders = Vec::with_capacity(workers as usize);
    for w in 0..workers {
        let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel(3);
        for _ in 0..2 {
            let _ = spare_tx.send((interval_histogram(), interval_histogram()));
        }
        spares.push(spare_tx);
        recorders.push(IntervalRecorder {
            worker: w,
            epoch: 0,
            read: interval_histogram(),
            write: interval_histogram(),
            to_sampler: to_sampler.clone(),
            spares: spare_rx,
        });
    }
    (Sampler { rx, spares }, recorders)
}

/// How the sampler runs.
pub struct SamplerConfig {
    pub clock: Clock,
    pub start_ns: u64,
    pub interval_ns: u64,
    pub block_size_bytes: u64,
    /// The run's planned length, for the live line (`None`: until done).
    pub duration_ns: Option<u64>,
    /// Print the live line on stderr.
    pub live: bool,
}

/// Interval sums, before they become a row.
#[derive(Default)]
struct Accumulated {
    read: Option<Histogram<u64>>,
    write: Option<Histogram<u64>>,
}

impl Sampler {
    /// Runs until `done` is set and every worker has flushed; returns the rows.
    pub fn run(self, config: &SamplerConfig, epoch: &AtomicU64, done: &AtomicBool) -> Vec<TimeSeriesRow> {
        let mut rows: BTreeMap<u64, Accumulated> = BTreeMap::new();
        let mut tick_ns = Vec::new(); // end time of each epoch
        let mut current = 0u64;
        loop {
            let next_tick = config.start_ns + (current + 1) * config.interval_ns;
            // Collect until the next tick, then start a new interval.
            while config.clock.now_ns() < next_tick && !done.load(Ordering::Acquire) {
                let wait = (next_tick.saturating_sub(config.clock.now_ns())).min(50_000_000);
                if let Ok(sample) = self.rx.recv_timeout(Duration::from_nanos(wait.max(1))) {
                    self.absorb(sample, &mut rows);
                }
            }
            if done.load(Ordering::Acquire) {
                break;
            }
            tick_ns.push(next_tick - config.start_ns);
            current += 1;
            epoch.store(current, Ordering::Relaxed);
            if config.live {
                // Give workers a moment to hand over the interval that just ended.
                let until = config.clock.now_ns() + config.interval_ns / 20;
                while config.clock.now_ns() < until {
                    match self.rx.recv_timeout(Duration::from_millis(2)) {
                        Ok(sample) => self.absorb(sample, &mut rows),
                        Err(_) => continue,
                    }
                }
                if let Some(acc) = rows.get(&(current - 1)) {
                    let row = row_of(acc, tick_ns[current as usize - 1], config.interval_ns, config.block_size_bytes);
                    print_live_line(&row, config);
                }
            }
        }
        // Workers flushed their last interval before `done` was set and dropped their
        // senders: take everything left, until the channel is closed.
        drop(self.spares);
        while let Ok(sample) = self.rx.recv() {
            add_into(&mut rows, &sample);
        }
        if config.live {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
        let end_ns = config.clock.now_ns().saturating_sub(config.start_ns);
        rows.iter()
            .map(|(&e, acc)| {
                let t = tick_ns.get(e as usize).copied().unwrap_or(end_ns);
                let start = if e == 0 { 0 } else { tick_ns.get(e as usize - 1).copied().unwrap_or(0) };
                row_of(acc, t, t.saturating_sub(start).max(1), config.block_size_bytes)
            })
            .collect()
    }

    /// Adds a worker's interval to its row and gives the worker its histograms back, cleared.
    fn absorb(&self, mut sample: IntervalSample, rows: &mut BTreeMap<u64, Accumulated>) {
        add_into(rows, &sample);
        sample.read.reset();
        sample.write.reset();
        if let Some(tx) = self.spares.get(sample.worker as usize) {
            let _ = tx.try_send((sample.read, sample.write));
        }
    }
}

fn add_into(rows: &mut BTreeMap<u64, Accumulated>, sample: &IntervalSample) {
    let acc = rows.entry(sample.epoch).or_default();
    for (slot, hist) in [(&mut acc.read, &sample.read), (&mut acc.write, &sample.write)] {
        let _ = slot.get_or_insert_with(interval_histogram).add(hist);
    }
}

fn figures(hist: Option<&Histogram<u64>>, interval_ns: u64, bs: u64) -> IntervalFigures {
    let Some(h) = hist.filter(|h| !h.is_empty()) else { return IntervalFigures::default() };
    let ops = h.len();
    let seconds = interval_ns as f64 / 1e9;
    let (min, max) = (h.min(), h.max());
    let at = |q: f64| h.value_at_quantile(q).clamp(min, max);
    IntervalFigures {
        ops,
        iops: ops as f64 / seconds,
        bw_bytes_per_sec: (ops * bs) as f64 / seconds,
        latency_ns: LatencySummary {
            min,
            mean: h.mean() as u64,
            stddev: h.stdev() as u64,
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p99_9: at(0.999),
            p99_99: at(0.9999),
            max,
        },
    }
}

fn row_of(acc: &Accumulated, t_ns: u64, interval_ns: u64, bs: u64) -> TimeSeriesRow {
    let read = figures(acc.read.as_ref(), interval_ns, bs);
    let write = figures(acc.write.as_ref(), interval_ns, bs);
    let mut both = acc.read.clone();
    if let (Some(b), Some(w)) = (&mut both, &acc.write) {
        let _ = b.add(w);
    }
    let total = figures(both.as_ref().or(acc.write.as_ref()), interval_ns, bs);
    TimeSeriesRow { t_ns, interval_ns, read, write, total }
}

fn print_live_line(row: &TimeSeriesRow, config: &SamplerConfig) {
    use crate::report::units;
    let elapsed = units::seconds_ns(row.t_ns);
    let of = match config.duration_ns {
        Some(d) => format!("{elapsed} / {}", units::seconds_ns(d)),
        None => elapsed,
    };
    let mut parts = vec![format!("[{of}]")];
    for (name, f) in [("read", &row.read), ("write", &row.write)] {
        if f.ops > 0 {
            parts.push(format!(
                "{name} {} IOPS {} p99 {}",
                units::iops(f.iops),
                units::bandwidth(f.bw_bytes_per_sec),
                units::latency_ns(f.latency_ns.p99)
            ));
        }
    }
    eprint!("\r\x1b[2K{}", parts.join(" · "));
    let _ = std::io::stderr().flush();
}
