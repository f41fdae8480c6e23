//! A metadata run's window: the workers of a mix (until the duration or the quota), or of
//! the phases (one operation at a time, every worker behind a barrier between phases), run
//! on scoped threads; their figures added, per phase, and the time series collected. It
//! must not touch the tree beyond the workers' operations (the set-up and the removal are
//! `tree_life.rs`).

use super::result::PhaseResult;
use super::worker::{self, OpFailure, Shared};
use super::{intervals, merge, phase_result, series_parts, uring_worker};
use crate::spec::metadata::{MetaOp, MetaShare};
use crate::spec::{RunLength, Spec};
use crate::stats::OpStats;
use std::sync::{Barrier, OnceLock};

/// What a window did: its phases' figures, the time series, the files it touched, the
/// operation that failed, why it never opened (another job of the phase failed first),
/// how late its first worker started after the phase's release, and why it ended.
pub(super) struct Window {
    pub(super) phases: Vec<PhaseResult>,
    pub(super) time_series: Vec<intervals::MetaIntervalRow>,
    pub(super) touched: u64,
    pub(super) failure: Option<OpFailure>,
    pub(super) called_off: Option<String>,
    pub(super) start_lag_ns: Option<u64>,
    pub(super) stop_reason: &'static str,
}

impl Window {
    /// No window: the set-up did not complete.
    pub(super) fn none() -> Self {
        Self {
            phases: Vec::new(),
            time_series: Vec::new(),
            touched: 0,
            failure: None,
            called_off: None,
            start_lag_ns: None,
            stop_reason: "complete",
        }
    }
}

/// A mix in one window: every worker draws its operations by the shares until the
/// duration, or its part of the quota. Beside other jobs (`line`) this thread opens the
/// phase's window once every worker waits at the start.
pub(super) fn run_mix(
    spec: &Spec,
    shared: &Shared<'_>,
    shares: &[MetaShare],
    uring_depth: Option<u32>,
    line: Option<&dyn super::PhaseLine>,
) -> Window {
    let mut called_off: Option<String> = None;
    let mut start_lag_ns: Option<u64> = None;
    let (duration_ns, quota) = match spec.window.run_length {
        RunLength::Duration { ns } if ns > 0 => (Some(ns), spec.window.ops_limit),
        _ => (None, spec.window.ops_limit),
    };
    let stop_reason = if duration_ns.is_some() { "duration" } else { "ops" };
    let t = u64::from(spec.shape.threads);
    // Beside other jobs this thread is at the start line too: it opens the
    // phase's window once every worker is waiting on the start word.
    let start = Barrier::new(spec.shape.threads as usize + usize::from(line.is_some()));
    let origins = [OnceLock::new()];
    // The kinds asked for, and those a worker falls back to (create, mkdir).
    let mut kinds: Vec<MetaOp> = shares.iter().map(|s| s.op).collect();
    kinds.extend([MetaOp::Create, MetaOp::Mkdir]);
    let (collector, taps) = series_parts(spec, &kinds, &origins);
    let (figures, mut collected): (Vec<worker::WorkerFigures>, _) = std::thread::scope(|s| {
        let collector = collector.map(|c| s.spawn(move || c.run()));
        let handles: Vec<_> = taps
            .into_iter()
            .enumerate()
            .map(|(w, tap)| {
                let w = w as u32;
                let quota = quota.map(|q| q / t + u64::from(u64::from(w) < q % t));
                let start = &start;
                s.spawn(move || match uring_depth {
                    None => worker::run_mix(shared, w, shares, start, duration_ns, quota, tap),
                    Some(depth) => uring_worker::run_mix(shared, w, shares, depth, start, duration_ns, quota, tap),
                })
            })
            .collect();
        if let Some(line) = line {
            start.wait();
            if let Err(e) = line.open(shared.stop) {
                called_off = Some(e.to_string());
            }
        }
        let figures = handles.into_iter().map(|h| h.join().expect("a metadata worker panicked")).collect();
        (figures, collector.map(|c| c.join().expect("the time series' collector panicked")))
    });
    let figures_end_ns = figures.iter().map(|f| f.end_ns).max().unwrap_or(0);
    // Beside other jobs: the first worker's start after the phase's release
    // (its start word was set; `wait` returns at once with its instant).
    if let Some(released_ns) = shared.window.and_then(|w| w.wait())
        && let Some(first_ns) = figures.iter().map(|f| f.start_ns).filter(|&s| s > 0).min()
    {
        start_lag_ns = Some(first_ns.saturating_sub(released_ns));
    }
    let window_ns = figures_end_ns - figures.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let mut per_op: Vec<OpStats> = MetaOp::ALL.iter().map(|op| figures[0].per_op[op.index()].clone()).collect();
    for f in &figures[1..] {
        for (sum, one) in per_op.iter_mut().zip(&f.per_op) {
            merge(sum, one);
        }
    }
    // With a time series the workers recorded into their intervals: the totals are
    // those intervals added.
    if let Some(totals) = collected.as_mut().and_then(|c| c.take_totals(0)) {
        per_op = totals;
    }
    let touched = figures.iter().map(|f| f.touched).sum();
    let failure = figures.into_iter().find_map(|f| f.failure);
    let total_weight: u32 = shares.iter().map(|s| s.weight).sum();
    let asked = |op: MetaOp| {
        shares.iter().find(|s| s.op == op).map(|s| f64::from(s.weight) * 100.0 / f64::from(total_weight)).unwrap_or(0.0)
    };
    let phases = vec![phase_result("mix", window_ns, &per_op, Some(&asked))];
    if let Some(collected) = collected {
        let span = intervals::PhaseSpan {
            name: "mix",
            origin_ns: origins[0].get().copied(),
            end_ns: figures_end_ns,
            kinds: phases[0].per_op.iter().map(|f| f.op).collect(),
        };
        return Window {
            time_series: collected.rows(&[span], spec.output.interval_ns),
            phases,
            touched,
            failure,
            called_off,
            start_lag_ns,
            stop_reason,
        };
    }
    Window { time_series: Vec::new(), phases, touched, failure, called_off, start_lag_ns, stop_reason }
}

/// The phases, one operation each, every worker finishing a phase before any starts the
/// next.
pub(super) fn run_phases(spec: &Spec, shared: &Shared<'_>, ops: &[MetaOp], uring_depth: Option<u32>) -> Window {
    let mut phases = Vec::new();
    let barrier = Barrier::new(spec.shape.threads as usize);
    let files_exist = shared.meta.setup_creates_files();
    let origins: Vec<OnceLock<u64>> = ops.iter().map(|_| OnceLock::new()).collect();
    let (collector, taps) = series_parts(spec, ops, &origins);
    let (outs, mut collected): (Vec<_>, _) = std::thread::scope(|s| {
        let collector = collector.map(|c| s.spawn(move || c.run()));
        let handles: Vec<_> = taps
            .into_iter()
            .enumerate()
            .map(|(w, tap)| {
                let w = w as u32;
                let barrier = &barrier;
                s.spawn(move || match uring_depth {
                    None => worker::run_phases(shared, w, ops, files_exist, barrier, tap),
                    Some(depth) => uring_worker::run_phases(shared, w, ops, files_exist, depth, barrier, tap),
                })
            })
            .collect();
        let outs = handles.into_iter().map(|h| h.join().expect("a metadata worker panicked")).collect();
        (outs, collector.map(|c| c.join().expect("the time series' collector panicked")))
    });
    let mut spans = Vec::new();
    for (p, op) in ops.iter().enumerate() {
        let start = outs.iter().map(|o: &(Vec<worker::PhaseFigures>, u64, _)| o.0[p].start_ns).min();
        let end = outs.iter().map(|o| o.0[p].end_ns).max();
        let window_ns = end.unwrap_or(0).saturating_sub(start.unwrap_or(0));
        let mut per_op: Vec<OpStats> = MetaOp::ALL.iter().map(|_| OpStats::unused()).collect();
        let mut stats = OpStats::new();
        for o in &outs {
            stats.merge(&o.0[p].stats);
        }
        // With a time series the workers recorded into their intervals.
        if let Some(mut totals) = collected.as_mut().and_then(|c| c.take_totals(p)) {
            stats = std::mem::replace(&mut totals[op.index()], OpStats::unused());
        }
        per_op[op.index()] = stats;
        phases.push(phase_result(op.name(), window_ns, &per_op, None));
        spans.push(intervals::PhaseSpan {
            name: op.name(),
            origin_ns: origins[p].get().copied(),
            end_ns: end.unwrap_or(0),
            kinds: phases[p].per_op.iter().map(|f| f.op).collect(),
        });
    }
    let time_series = collected.map_or_else(Vec::new, |c| c.rows(&spans, spec.output.interval_ns));
    let touched = outs.iter().map(|o| o.1).sum();
    let failure = outs.into_iter().find_map(|o| o.2);
    Window { phases, time_series, touched, failure, called_off: None, start_lag_ns: None, stop_reason: "complete" }
}
