use super::*;

#[test]
fn the_last_row_ends_with_the_window_and_keeps_its_ios() {
    let figures = |ops: u64, interval_ns: u64, bytes: u64| IntervalFigures {
        ops,
        iops: ops as f64 / (interval_ns as f64 / 1e9),
        bw_bytes_per_sec: bytes as f64 / (interval_ns as f64 / 1e9),
        latency_ns: LatencySummary::default(),
    };
    let row = |t_ns: u64, interval_ns: u64, ops: u64| TimeSeriesRow {
        t_ns,
        interval_ns,
        ramp: false,
        read: figures(ops, interval_ns, ops * 4096),
        write: IntervalFigures::default(),
        total: figures(ops, interval_ns, ops * 4096),
        flush: None,
    };
    // The sampler stopped 4 ms after the 1 s window: its last row was 104 ms long.
    let mut rows = vec![row(900_000_000, 100_000_000, 1000), row(1_004_000_000, 104_000_000, 1000)];
    close_at(&mut rows, 1_000_000_000);
    let last = rows.last().unwrap();
    assert_eq!((last.t_ns, last.interval_ns), (1_000_000_000, 100_000_000));
    // The rates times the interval give back the row's I/Os and bytes.
    let bytes = last.total.bw_bytes_per_sec * last.interval_ns as f64 / 1e9;
    assert!((bytes - 1000.0 * 4096.0).abs() < 1e-3, "{bytes}");
    assert!((last.read.iops * 0.1 - 1000.0).abs() < 1e-6, "{}", last.read.iops);
    // A row begun after the window, with nothing in it, goes.
    let mut rows = vec![row(1_000_000_000, 100_000_000, 1000), row(1_002_000_000, 2_000_000, 0)];
    close_at(&mut rows, 1_000_000_000);
    assert_eq!(rows.len(), 1);
}

/// A worker's cumulative histograms, as `stats` keeps them.
struct FakeWorker {
    read: Histogram<u64>,
    write: Histogram<u64>,
}

impl FakeWorker {
    fn snapshot(&self) -> impl FnOnce(&mut Snapshot) + '_ {
        |s| {
            s.read.set_to(&self.read).unwrap();
            s.write.set_to(&self.write).unwrap();
            s.read_bytes = self.read.len() * 4096;
            s.write_bytes = self.write.len() * 4096;
        }
    }
}

#[test]
fn interval_rows_are_the_differences_of_snapshots() {
    let (mut sampler, mut recorders) = channels(2, 0, false);
    let epoch = AtomicU64::new(0);
    let mut rows = BTreeMap::new();
    let mut workers: Vec<FakeWorker> =
        (0..2).map(|_| FakeWorker { read: new_latency_histogram(), write: new_latency_histogram() }).collect();

    // Interval 0: fast reads on both workers, one slow write on worker 1.
    for w in &mut workers {
        for _ in 0..10 {
            w.read.record(1_000).unwrap();
        }
    }
    workers[1].write.record(5_000_000).unwrap();
    epoch.store(1, Ordering::Relaxed);
    for (rec, w) in recorders.iter_mut().zip(&workers) {
        rec.maybe_rotate(&epoch, w.snapshot());
    }
    for _ in 0..2 {
        let sample = sampler.rx.try_recv().unwrap();
        sampler.absorb(sample, &mut rows, true);
    }

    // Interval 1: slow reads only.
    for w in &mut workers {
        for _ in 0..3 {
            w.read.record(2_000_000).unwrap();
        }
    }
    epoch.store(2, Ordering::Relaxed);
    for (rec, w) in recorders.iter_mut().zip(&workers) {
        rec.maybe_rotate(&epoch, w.snapshot());
    }
    for _ in 0..2 {
        let sample = sampler.rx.try_recv().unwrap();
        sampler.absorb(sample, &mut rows, true);
    }

    let first = row_of(&rows[&0], 1_000_000_000, 1_000_000_000, false, false);
    assert_eq!(first.read.ops, 20);
    assert_eq!(first.write.ops, 1);
    assert!(first.read.latency_ns.max < 1_100, "{:?}", first.read.latency_ns);
    let second = row_of(&rows[&1], 2_000_000_000, 1_000_000_000, false, false);
    assert_eq!(second.read.ops, 6);
    assert_eq!(second.write.ops, 0);
    // Only this interval's latencies: nothing of the fast reads before it.
    assert!(second.read.latency_ns.min >= 1_990_000, "{:?}", second.read.latency_ns);
    assert_eq!(second.total.ops, 6);
}

#[test]
fn a_flushing_run_has_the_intervals_flushes_apart_from_its_writes() {
    let (mut sampler, mut recorders) = channels(1, 0, true);
    let epoch = AtomicU64::new(0);
    let mut rows = BTreeMap::new();
    let (mut write, mut flush) = (new_latency_histogram(), new_latency_histogram());
    let mut hand_over = |e: u64, write: &Histogram<u64>, flush: &Histogram<u64>, rows: &mut BTreeMap<_, _>| {
        epoch.store(e, Ordering::Relaxed);
        recorders[0].maybe_rotate(&epoch, |s| {
            s.write.set_to(write).unwrap();
            s.flush.set_to(flush).unwrap();
            s.write_bytes = write.len() * 4096;
        });
        let sample = sampler.rx.try_recv().unwrap();
        sampler.absorb(sample, rows, true);
    };
    // Interval 0: 8 writes, 2 flushes of 3 ms; interval 1: 4 writes, 1 flush of 9 ms.
    (0..8).for_each(|_| write.record(10_000).unwrap());
    (0..2).for_each(|_| flush.record(3_000_000).unwrap());
    hand_over(1, &write, &flush, &mut rows);
    (0..4).for_each(|_| write.record(10_000).unwrap());
    flush.record(9_000_000).unwrap();
    hand_over(2, &write, &flush, &mut rows);
    let first = row_of(&rows[&0], 1_000_000_000, 1_000_000_000, false, true);
    let second = row_of(&rows[&1], 2_000_000_000, 1_000_000_000, false, true);
    let (f1, f2) = (first.flush.unwrap(), second.flush.unwrap());
    assert_eq!((first.write.ops, f1.ops, second.write.ops, f2.ops), (8, 2, 4, 1));
    assert_eq!(first.total.ops, 8, "total counts transfers, not flushes");
    assert_eq!(f1.bw_bytes_per_sec, 0.0, "a flush moves no bytes");
    assert!(f2.latency_ns.min >= 8_990_000, "only this interval's flush: {:?}", f2.latency_ns);
    // A run without flushes has no flush figures in its rows.
    assert!(row_of(&rows[&0], 1, 1, false, false).flush.is_none());
}

#[test]
fn a_worker_without_a_spare_skips_the_boundary_and_loses_nothing() {
    let (mut sampler, mut recorders) = channels(1, 0, false);
    let epoch = AtomicU64::new(0);
    let mut rows = BTreeMap::new();
    let mut w = FakeWorker { read: new_latency_histogram(), write: new_latency_histogram() };
    w.read.record(1_000).unwrap();
    epoch.store(1, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, w.snapshot());
    // The sampler has not handed the spare back yet: the next boundary is skipped.
    w.read.record(1_000).unwrap();
    epoch.store(2, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, w.snapshot());
    let sample = sampler.rx.try_recv().unwrap();
    sampler.absorb(sample, &mut rows, true);
    assert!(sampler.rx.try_recv().is_err());
    w.read.record(1_000).unwrap();
    let rec = recorders.pop().unwrap();
    rec.flush(w.snapshot());
    let sample = sampler.rx.try_recv().unwrap();
    sampler.absorb(sample, &mut rows, false);
    let total: u64 = rows.values().map(|acc| acc.read.as_ref().map_or(0, |h| h.len())).sum();
    assert_eq!(total, 3);
    assert_eq!(rows[&0].read.as_ref().unwrap().len(), 1);
    assert_eq!(rows[&1].read.as_ref().unwrap().len(), 2);
}

fn drain(sampler: &mut Sampler, rows: &mut BTreeMap<u64, Accumulated>) {
    while let Ok(sample) = sampler.rx.try_recv() {
        sampler.absorb(sample, rows, true);
    }
}

fn reads(rows: &BTreeMap<u64, Accumulated>, e: u64) -> u64 {
    rows.get(&e).and_then(|a| a.read.as_ref()).map_or(0, |h| h.len())
}

#[test]
fn the_ramp_tail_lands_in_the_last_ramp_row_and_the_window_starts_from_zero() {
    // Two ramp rows; the worker resets its figures at the ramp's end.
    let (mut sampler, mut recorders) = channels(1, 2, false);
    let epoch = AtomicU64::new(0);
    let mut rows = BTreeMap::new();
    let mut w = FakeWorker { read: new_latency_histogram(), write: new_latency_histogram() };
    for _ in 0..5 {
        w.read.record(1_000).unwrap();
    }
    epoch.store(1, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, w.snapshot());
    drain(&mut sampler, &mut rows);
    for _ in 0..3 {
        w.read.record(1_000).unwrap();
    }
    // The ramp ends before the sampler's tick: the tail is handed over, then reset.
    recorders[0].end_ramp(w.snapshot());
    w.read.reset();
    drain(&mut sampler, &mut rows);
    // The sampler's tick at the ramp's end (epoch 2) is not a rotation for a worker
    // already in the window; the next one is.
    epoch.store(2, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, w.snapshot());
    assert!(sampler.rx.try_recv().is_err(), "a worker in the window rotated into the ramp's end");
    for _ in 0..4 {
        w.read.record(2_000).unwrap();
    }
    epoch.store(3, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, w.snapshot());
    drain(&mut sampler, &mut rows);
    assert_eq!((reads(&rows, 0), reads(&rows, 1), reads(&rows, 2)), (5, 3, 4));
    // Nothing of the ramp in the window's row.
    assert!(rows[&2].read.as_ref().unwrap().min() >= 1_990);
}

#[test]
fn a_window_row_is_whole_even_when_the_ramp_tail_was_not_handed_over() {
    let (mut sampler, mut recorders) = channels(1, 1, false);
    let epoch = AtomicU64::new(0);
    let mut rows = BTreeMap::new();
    let mut w = FakeWorker { read: new_latency_histogram(), write: new_latency_histogram() };
    for _ in 0..7 {
        w.read.record(1_000).unwrap();
    }
    epoch.store(1, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, w.snapshot());
    let ramp = sampler.rx.try_recv().unwrap();
    // The sampler has not handed the spare back yet: the tail cannot be sent.
    w.read.record(1_000).unwrap();
    recorders[0].end_ramp(w.snapshot());
    assert!(sampler.rx.try_recv().is_err());
    sampler.absorb(ramp, &mut rows, true);
    w.read.reset();
    for _ in 0..9 {
        w.read.record(1_000).unwrap();
    }
    let rec = recorders.pop().unwrap();
    rec.flush(w.snapshot());
    drain(&mut sampler, &mut rows);
    // The ramp's snapshot (7) is not subtracted from the window's first one (9).
    assert_eq!((reads(&rows, 0), reads(&rows, 1)), (7, 9));
}

#[test]
fn ticks_put_a_boundary_at_the_ramps_end() {
    let config = SamplerConfig {
        clock: Clock::new(),
        start_ns: 0,
        interval_ns: 1_000_000_000,
        duration_ns: None,
        ramp_ns: 1_500_000_000,
    };
    let ticks: Vec<u64> = (0..4).map(|e| config.tick_ns(e)).collect();
    assert_eq!(ticks, [1_000_000_000, 1_500_000_000, 2_500_000_000, 3_500_000_000]);
    assert_eq!(ramp_rows(1_500_000_000, 1_000_000_000), 2);
    let none = SamplerConfig { ramp_ns: 0, ..config };
    assert_eq!(none.tick_ns(0), 1_000_000_000);
    assert_eq!(none.tick_ns(2), 3_000_000_000);
}

#[test]
fn a_live_views_split_gives_each_worker_its_part_of_the_row() {
    let (mut sampler, mut recorders) = channels(2, 0, false);
    sampler.per_worker = true;
    let epoch = AtomicU64::new(0);
    let mut rows = BTreeMap::new();
    let mut workers: Vec<FakeWorker> =
        (0..2).map(|_| FakeWorker { read: new_latency_histogram(), write: new_latency_histogram() }).collect();
    for (e, (fast, slow)) in [(30u64, 2u64), (5, 9)].into_iter().enumerate() {
        for _ in 0..fast {
            workers[0].read.record(10_000).unwrap();
        }
        for _ in 0..slow {
            workers[1].write.record(1_000_000).unwrap();
        }
        epoch.store(e as u64 + 1, Ordering::Relaxed);
        for (rec, w) in recorders.iter_mut().zip(&workers) {
            rec.maybe_rotate(&epoch, w.snapshot());
        }
        for _ in 0..2 {
            let sample = sampler.rx.try_recv().unwrap();
            sampler.absorb(sample, &mut rows, true);
        }
        let acc = &rows[&(e as u64)];
        let row = row_of(acc, 1_000_000_000, 1_000_000_000, false, false);
        let parts = &acc.workers;
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].ops, parts[1].ops), (fast, slow), "this interval's I/Os only");
        assert_eq!(parts.iter().map(|p| p.ops).sum::<u64>(), row.total.ops);
        assert_eq!(parts.iter().map(|p| p.bytes).sum::<u64>(), (fast + slow) * 4096);
        // The latency sums within the histograms' precision (0.1 %).
        let within = |got: u64, want: u64| got.abs_diff(want) * 1000 <= want;
        assert!(within(parts[0].latency_sum_ns, fast * 10_000), "{:?}", parts[0]);
        assert!(within(parts[1].latency_sum_ns, slow * 1_000_000), "{:?}", parts[1]);
    }
    // Without a view nothing is split.
    let (mut plain, mut recorders) = channels(1, 0, false);
    epoch.store(1, Ordering::Relaxed);
    recorders[0].maybe_rotate(&epoch, workers[0].snapshot());
    let mut rows = BTreeMap::new();
    plain.absorb(plain.rx.try_recv().unwrap(), &mut rows, true);
    assert!(rows[&0].workers.is_empty());
}
