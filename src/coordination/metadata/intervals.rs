//! The time series of a metadata run (`--timeseries`, `--interval`): per phase (the mix is
//! one), one row per interval per operation kind, with that interval's operations, bytes
//! and latency.
//!
//! With a time series, each worker records every operation into its own per-interval
//! figures (a `Tap`, `io/metadata/tap.rs`: one `OpStats` per kind it runs, allocated before
//! the window) instead of its totals, and the run's totals are the sum of what it hands
//! over: the rows add up to them by construction, and an operation costs what it costs
//! without a series (one record) plus a comparison with the interval's end. The intervals
//! are on a grid from the phase's origin, the clock of the first worker to start the phase; a
//! worker notices a boundary from the completion time it already read (no clock read, no
//! atomic, no lock per operation). At a boundary it sends its finished figures to the
//! collector over a bounded channel and carries on with a spare set the collector sent back
//! (reset, no allocation); without a spare (the collector is behind) it keeps the figures,
//! and those operations land in the next interval. At a phase's end it hands over what is
//! left, so each phase's rows hold exactly its operations.
//!
//! Why not the block runs' snapshots (`stats::interval`): those copy a fixed
//! read/write/flush triple of cumulative histograms on epochs a sampler thread sets; a
//! metadata run has up to twelve kinds, and per-interval figures need no subtraction.
//!
//! The collector (a thread of the run) adds the workers' figures into rows and into each
//! phase's totals, and shrinks a row to its summary and encoded histogram once every worker
//! has moved past it. Summed over the rows, each kind's operations, bytes and histogram
//! equal the phase's. It must not format a report (`report::timeseries::render_metadata`
//! does).

use crate::figures::result::meta_document::MetaIntervalRow;
pub use crate::io::metadata::tap::Tap;
use crate::io::metadata::tap::{Piece, per_kind_stats};
use crate::io::metadata::workload::MetaOp;
use crate::io::stats::interval::{IntervalFigures, TimeSeriesRow};
use crate::io::stats::live::{KindFigures, LiveFrame, LiveView};
use crate::io::stats::{LatencySummary, OpStats};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, SyncSender};

/// The collector's side: adds the workers' pieces into rows.
pub struct Collector {
    rx: Receiver<Piece>,
    spares: Vec<SyncSender<Vec<OpStats>>>,
    kinds: Vec<MetaOp>,
    /// A live view (`stats::live`), handed each row once it is complete, with the phases'
    /// names and the intervals' length.
    live: Option<LiveRows>,
}

/// What a live view of a metadata run needs besides the rows.
pub struct LiveRows {
    pub view: LiveView,
    /// Each phase's name (`create`, ..., or `mix`), by phase index.
    pub phases: Vec<String>,
    pub interval_ns: u64,
}

impl LiveRows {
    /// Hands the view the row of `phase`'s interval `epoch`: each kind's figures (`rows`,
    /// as the time series keeps them) and all kinds together (from `stats`).
    fn show(&mut self, (phase, epoch): (u32, u64), rows: &[Finished], stats: &[OpStats]) {
        let interval_ns = self.interval_ns.max(1);
        let seconds = interval_ns as f64 / 1e9;
        let figures = |ops: u64, bytes: u64, latency_ns: LatencySummary| IntervalFigures {
            ops,
            iops: ops as f64 / seconds,
            bw_bytes_per_sec: bytes as f64 / seconds,
            latency_ns,
        };
        let kinds: Vec<KindFigures> = rows
            .iter()
            .map(|f| KindFigures { name: f.op.name(), figures: figures(f.ops, f.bytes, f.latency_ns) })
            .collect();
        // Every kind together: the operations' rate and their latencies merged.
        let mut all = OpStats::new();
        for s in stats.iter().filter(|s| s.ops > 0) {
            all.merge(s);
        }
        let row = TimeSeriesRow {
            t_ns: (epoch + 1) * interval_ns,
            interval_ns,
            ramp: false,
            read: IntervalFigures::default(),
            write: IntervalFigures::default(),
            total: figures(all.ops, all.bytes, all.latency_summary()),
            flush: None,
        };
        let frame = LiveFrame {
            row,
            workers: Vec::new(),
            devices: Vec::new(),
            cpu: None,
            steady: None,
            kinds,
            phase: self.phases.get(phase as usize).cloned(),
        };
        (self.view)(Some(&frame));
    }
}

/// The rows of every phase, by (phase, interval), each kind's figures finished, and each
/// phase's totals.
pub struct Collected {
    rows: BTreeMap<(u32, u64), Vec<Finished>>,
    totals: BTreeMap<u32, Vec<OpStats>>,
}

/// One kind's figures of one interval, its histogram encoded.
struct Finished {
    op: MetaOp,
    ops: u64,
    bytes: u64,
    latency_ns: LatencySummary,
    histogram: String,
}

/// Makes the collector and one tap per worker (`threads`), for intervals of `interval_ns`
/// over `phases` phases whose operations are among `kinds`; `origins` (one per phase)
/// receives each phase's start.
pub fn channels<'a>(
    threads: u32,
    kinds: &[MetaOp],
    interval_ns: u64,
    origins: &'a [OnceLock<u64>],
    live: Option<LiveRows>,
) -> (Collector, Vec<Tap<'a>>) {
    // Two sets per worker, one recording and one spare: at most that many pieces in flight.
    let (to_collector, rx) = std::sync::mpsc::sync_channel(threads as usize * 2 + 1);
    let mut spares = Vec::with_capacity(threads as usize);
    let mut taps = Vec::with_capacity(threads as usize);
    for worker in 0..threads {
        let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel(2);
        let _ = spare_tx.send(per_kind_stats(kinds));
        spares.push(spare_tx);
        taps.push(Tap::new(worker, interval_ns, origins, per_kind_stats(kinds), to_collector.clone(), spare_rx));
    }
    (Collector { rx, spares, kinds: kinds.to_vec(), live }, taps)
}

impl Collector {
    /// Runs until every tap is dropped.
    pub fn run(mut self) -> Collected {
        let mut open: BTreeMap<(u32, u64), Vec<OpStats>> = BTreeMap::new();
        let mut done = BTreeMap::new();
        let mut totals: BTreeMap<u32, Vec<OpStats>> = BTreeMap::new();
        // The last (phase, interval) each worker handed in: it sends only later ones.
        let mut handed: Vec<Option<(u32, u64)>> = vec![None; self.spares.len()];
        while let Ok(mut piece) = self.rx.recv() {
            if piece.stats.iter().any(|s| s.ops > 0) {
                let row = open.entry((piece.phase, piece.epoch)).or_insert_with(|| per_kind_stats(&self.kinds));
                let total = totals.entry(piece.phase).or_insert_with(|| per_kind_stats(&self.kinds));
                for ((sum, all), one) in row.iter_mut().zip(total.iter_mut()).zip(&piece.stats) {
                    if one.ops > 0 {
                        sum.merge(one);
                        all.merge(one);
                    }
                }
            }
            let w = piece.worker as usize;
            handed[w] = Some((piece.phase, if piece.phase_end { u64::MAX } else { piece.epoch }));
            piece.stats.iter_mut().for_each(OpStats::reset);
            let _ = self.spares[w].try_send(piece.stats);
            // Rows no worker can add to any more are shrunk to their summaries.
            if let Some(low) = handed.iter().copied().min().flatten() {
                while let Some(entry) = open.first_entry() {
                    if *entry.key() > low {
                        break;
                    }
                    let (key, stats) = entry.remove_entry();
                    done.insert(key, self.close(key, &stats));
                }
            }
        }
        for (key, stats) in open {
            done.insert(key, self.close(key, &stats));
        }
        if let Some(live) = &mut self.live {
            (live.view)(None);
        }
        Collected { rows: done, totals }
    }
}

impl Collector {
    /// A row no worker adds to any more: its summaries, shown to the live view if any.
    fn close(&mut self, key: (u32, u64), stats: &[OpStats]) -> Vec<Finished> {
        let rows = finish(stats);
        if let Some(live) = &mut self.live {
            live.show(key, &rows, stats);
        }
        rows
    }
}

fn finish(stats: &[OpStats]) -> Vec<Finished> {
    MetaOp::ALL
        .iter()
        .zip(stats)
        .filter(|(_, s)| s.ops > 0)
        .map(|(&op, s)| Finished {
            op,
            ops: s.ops,
            bytes: s.bytes,
            latency_ns: s.latency_summary(),
            histogram: crate::io::stats::encode_histogram(&s.latency),
        })
        .collect()
}

/// What the rows of one phase need to know of it.
pub struct PhaseSpan<'a> {
    pub name: &'a str,
    /// When its first worker started (none: no worker ran it).
    pub origin_ns: Option<u64>,
    /// When its last worker ended.
    pub end_ns: u64,
    /// The kinds its result lists: each has a row in every interval, zeros included.
    pub kinds: Vec<MetaOp>,
}

impl Collected {
    /// Phase `phase`'s figures of each kind (`MetaOp::index`), the sum of its rows: the
    /// run's totals when it has a time series (none: nothing completed in it).
    pub fn take_totals(&mut self, phase: usize) -> Option<Vec<OpStats>> {
        self.totals.remove(&(phase as u32))
    }

    /// The rows of each phase in order: every interval from its start to its end, each kind.
    pub fn rows(&self, phases: &[PhaseSpan<'_>], interval_ns: u64) -> Vec<MetaIntervalRow> {
        let interval_ns = interval_ns.max(1);
        let mut out = Vec::new();
        for (p, span) in phases.iter().enumerate() {
            let Some(origin) = span.origin_ns else { continue };
            let p = p as u32;
            let last_seen = self.rows.range((p, 0)..=(p, u64::MAX)).next_back().map(|(k, _)| k.1 + 1).unwrap_or(0);
            let count = span.end_ns.saturating_sub(origin).div_ceil(interval_ns).max(last_seen).max(1);
            for e in 0..count {
                let start = e * interval_ns;
                let end = (start + interval_ns).min(span.end_ns.saturating_sub(origin).max(start + 1));
                let length = end - start;
                let seconds = length as f64 / 1e9;
                let row = self.rows.get(&(p, e));
                for &op in &span.kinds {
                    let f = row.and_then(|r| r.iter().find(|f| f.op == op));
                    let (ops, bytes) = f.map(|f| (f.ops, f.bytes)).unwrap_or((0, 0));
                    out.push(MetaIntervalRow {
                        phase: span.name.to_string(),
                        op,
                        t_ns: end,
                        interval_ns: length,
                        ops,
                        ops_per_sec: ops as f64 / seconds,
                        bytes,
                        bytes_per_sec: bytes as f64 / seconds,
                        latency_ns: f.map(|f| f.latency_ns).unwrap_or_default(),
                        histogram: f.map(|f| f.histogram.clone()).unwrap_or_default(),
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers over two phases, one with no spare at a boundary: every operation lands
    /// in exactly one row of its phase, and the rows add up to what was recorded.
    #[test]
    fn rows_add_up_to_what_the_workers_recorded() {
        let origins: Vec<OnceLock<u64>> = (0..2).map(|_| OnceLock::new()).collect();
        let kinds = [MetaOp::Create, MetaOp::Stat];
        let (collector, taps) = channels(2, &kinds, 100, &origins, None);
        let rows = std::thread::scope(|s| {
            let c = s.spawn(move || collector.run());
            for (w, mut tap) in taps.into_iter().enumerate() {
                s.spawn(move || {
                    tap.begin(0, 1000 + w as u64);
                    for i in 0..50u64 {
                        tap.record(MetaOp::Create, 10, 5 + i, 1000 + i * 7);
                    }
                    tap.end_phase();
                    tap.begin(1, 5000);
                    for i in 0..30u64 {
                        tap.record(MetaOp::Stat, 0, 3, 5000 + i * 11);
                    }
                    tap.end_phase();
                });
            }
            c.join().unwrap()
        });
        let spans = [
            PhaseSpan {
                name: "create",
                origin_ns: origins[0].get().copied(),
                end_ns: 1400,
                kinds: vec![MetaOp::Create],
            },
            PhaseSpan { name: "stat", origin_ns: Some(5000), end_ns: 5330, kinds: vec![MetaOp::Stat] },
        ];
        let mut rows = rows;
        let create = rows.take_totals(0).unwrap();
        assert_eq!((create[MetaOp::Create.index()].ops, create[MetaOp::Create.index()].latency.len()), (100, 100));
        let out = rows.rows(&spans, 100);
        let sum = |phase: &str| {
            out.iter()
                .filter(|r| r.phase == phase)
                .map(|r| (r.ops, r.bytes))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        };
        assert_eq!(sum("create"), (100, 1000));
        assert_eq!(sum("stat"), (60, 0));
        assert_eq!(out.iter().filter(|r| r.phase == "stat").count(), 4, "330 ns in intervals of 100: 4 rows");
        assert!(out.iter().all(|r| r.interval_ns > 0 && r.interval_ns <= 100));
    }

    /// With the collector behind (no spare at a boundary), a worker keeps its figures: they
    /// count in a later interval, and nothing is lost or counted twice.
    #[test]
    fn a_boundary_without_a_spare_moves_the_operations_to_a_later_interval() {
        let origins = [OnceLock::new()];
        let (collector, mut taps) = channels(1, &[MetaOp::Stat], 100, &origins, None);
        let mut tap = taps.pop().unwrap();
        tap.begin(0, 0);
        tap.record(MetaOp::Stat, 1, 10, 50); // interval 0
        tap.record(MetaOp::Stat, 1, 10, 150); // interval 1: interval 0 handed over, the spare taken
        tap.record(MetaOp::Stat, 1, 10, 250); // interval 2: no spare yet, interval 1's kept
        tap.record(MetaOp::Stat, 1, 10, 260);
        let collected = std::thread::scope(|s| {
            let c = s.spawn(move || collector.run());
            tap.end_phase();
            drop(tap);
            c.join().unwrap()
        });
        let span = PhaseSpan { name: "mix", origin_ns: Some(0), end_ns: 300, kinds: vec![MetaOp::Stat] };
        let ops: Vec<u64> = collected.rows(&[span], 100).iter().map(|r| r.ops).collect();
        assert_eq!(ops, [1, 0, 3]);
    }
}
