//! A metadata run's window: the workers of a mix or a flow (until the duration or the
//! quota), or of the phases (one operation at a time, every worker behind a barrier between phases), run
//! on scoped threads; their figures added, per phase, and the time series collected. It
//! must not touch the tree beyond the workers' operations (the set-up and the removal are
//! `tree_life.rs`).

use super::{intervals, merge, phase_result, series_parts};
use crate::figures::result::meta_document::{PhaseResult, StepFigures};
use crate::io::metadata::worker::{self, OpFailure, Shared};
use crate::io::metadata::workload::{FlowStep, MetaOp, MetaShare};
use crate::io::metadata::{flow, uring_worker};
use crate::io::stats::OpStats;
use crate::workload::spec::{RunLength, Spec};
use std::sync::{Barrier, OnceLock};

/// What a window did: its phases' figures, the time series, the files it touched, the
/// operation that failed, why it never opened (another job of the phase failed first),
/// how late its first worker started after the phase's release, and why it ended.
pub(super) struct Window {
    pub(super) phases: Vec<PhaseResult>,
    pub(super) time_series: Vec<crate::figures::result::meta_document::MetaIntervalRow>,
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

/// What the workers of one window (a mix or a flow) handed back, with the time series'
/// collector's rows and whether the phase's start was called off.
struct OneWindow<T> {
    figures: Vec<T>,
    collected: Option<intervals::Collected>,
    called_off: Option<String>,
    origin_ns: Option<u64>,
}

/// Runs `worker(index, start, duration, quota, tap)` on every worker thread in one window
/// (until the duration, or each worker's part of the quota). Beside other jobs (`line`)
/// this thread opens the phase's window once every worker waits at the start.
fn one_window<T: Send>(
    spec: &Spec,
    shared: &Shared<'_>,
    kinds: &[MetaOp],
    line: Option<&dyn super::PhaseLine>,
    worker: impl Fn(u32, &Barrier, Option<u64>, Option<u64>, Option<intervals::Tap<'_>>) -> T + Sync,
) -> OneWindow<T> {
    let mut called_off: Option<String> = None;
    let (duration_ns, quota) = match spec.window.run_length {
        RunLength::Duration { ns } if ns > 0 => (Some(ns), spec.window.ops_limit),
        _ => (None, spec.window.ops_limit),
    };
    let t = u64::from(spec.shape.threads);
    let start = Barrier::new(spec.shape.threads as usize + usize::from(line.is_some()));
    let origins = [OnceLock::new()];
    let name = if matches!(shared.meta.workload, crate::io::metadata::workload::MetaWorkload::Flow(_)) {
        "flow"
    } else {
        "mix"
    };
    let (collector, taps) = series_parts(spec, kinds, &origins, shared.live, vec![name.to_string()]);
    let (figures, collected) = std::thread::scope(|s| {
        let collector = collector.map(|c| s.spawn(move || c.run()));
        let handles: Vec<_> = taps
            .into_iter()
            .enumerate()
            .map(|(w, tap)| {
                let w = w as u32;
                let quota = quota.map(|q| q / t + u64::from(u64::from(w) < q % t));
                let (start, worker) = (&start, &worker);
                s.spawn(move || worker(w, start, duration_ns, quota, tap))
            })
            .collect();
        if let Some(line) = line {
            start.wait();
            if let Err(e) = line.open(shared.stop) {
                called_off = Some(e.to_string());
            }
        }
        let figures: Vec<T> = handles.into_iter().map(|h| h.join().expect("a metadata worker panicked")).collect();
        (figures, collector.map(|c| c.join().expect("the time series' collector panicked")))
    });
    OneWindow { figures, collected, called_off, origin_ns: origins[0].get().copied() }
}

/// Why a window of a mix or a flow ended when nothing failed.
fn length_reason(spec: &Spec) -> &'static str {
    match spec.window.run_length {
        RunLength::Duration { ns } if ns > 0 => "duration",
        _ => "ops",
    }
}

/// Beside other jobs: how late the first worker started after the phase's release (its
/// start word was set; `wait` returns at once with its instant).
fn start_lag(shared: &Shared<'_>, starts: impl Iterator<Item = u64>) -> Option<u64> {
    let released_ns = shared.window.and_then(|w| w.wait())?;
    let first_ns = starts.filter(|&s| s > 0).min()?;
    Some(first_ns.saturating_sub(released_ns))
}

/// A mix in one window: every worker draws its operations by the shares until the
/// duration, or its part of the quota.
pub(super) fn run_mix(
    spec: &Spec,
    shared: &Shared<'_>,
    shares: &[MetaShare],
    uring_depth: Option<u32>,
    line: Option<&dyn super::PhaseLine>,
) -> Window {
    let kinds = worker::mix_kinds(shares);
    let OneWindow { figures, mut collected, called_off, origin_ns } =
        one_window(spec, shared, &kinds, line, |w, start, duration_ns, quota, tap| match uring_depth {
            None => worker::run_mix(shared, w, shares, start, duration_ns, quota, tap),
            Some(depth) => uring_worker::run_mix(shared, w, shares, depth, start, duration_ns, quota, tap),
        });
    let figures_end_ns = figures.iter().map(|f| f.end_ns).max().unwrap_or(0);
    let start_lag_ns = start_lag(shared, figures.iter().map(|f| f.start_ns));
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
    let time_series = series_rows(spec, collected, "mix", origin_ns, figures_end_ns, &phases[0]);
    Window { time_series, phases, touched, failure, called_off, start_lag_ns, stop_reason: length_reason(spec) }
}

/// A flow in one window: every worker runs the steps in order, over and over, until the
/// duration, or its part of the quota (counted in steps). Its phase is named `flow`, with
/// each step's figures beside each kind's.
pub(super) fn run_flow(
    spec: &Spec,
    shared: &Shared<'_>,
    steps: &[FlowStep],
    line: Option<&dyn super::PhaseLine>,
) -> Window {
    let mut kinds: Vec<MetaOp> = steps.iter().map(|s| s.kind()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let OneWindow { figures, mut collected, called_off, origin_ns } =
        one_window(spec, shared, &kinds, line, |w, start, duration_ns, quota, tap| {
            flow::run_flow(shared, w, steps, start, duration_ns, quota, tap)
        });
    let figures_end_ns = figures.iter().map(|f| f.end_ns).max().unwrap_or(0);
    let start_lag_ns = start_lag(shared, figures.iter().map(|f| f.start_ns));
    let window_ns = figures_end_ns - figures.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let mut per_step: Vec<OpStats> = steps.iter().map(|_| OpStats::new()).collect();
    for f in &figures {
        for (sum, one) in per_step.iter_mut().zip(&f.per_step) {
            sum.merge(one);
        }
    }
    // Each kind's figures: its steps added (with a time series, its intervals added,
    // which hold the same operations).
    let mut per_op = crate::io::metadata::tap::per_kind_stats(&kinds);
    for (step, stats) in steps.iter().zip(&per_step) {
        per_op[step.kind().index()].merge(stats);
    }
    if let Some(totals) = collected.as_mut().and_then(|c| c.take_totals(0)) {
        per_op = totals;
    }
    let touched = figures.iter().map(|f| f.touched).sum();
    let failure = figures.into_iter().find_map(|f| f.failure);
    let mut phase = phase_result("flow", window_ns, &per_op, None);
    phase.steps =
        steps.iter().zip(&per_step).enumerate().map(|(i, (s, st))| step_figures(i, *s, st, window_ns)).collect();
    let phases = vec![phase];
    let time_series = series_rows(spec, collected, "flow", origin_ns, figures_end_ns, &phases[0]);
    Window { time_series, phases, touched, failure, called_off, start_lag_ns, stop_reason: length_reason(spec) }
}

/// Step `i`'s figures over the window.
fn step_figures(i: usize, step: FlowStep, s: &OpStats, window_ns: u64) -> StepFigures {
    let seconds = window_ns.max(1) as f64 / 1e9;
    StepFigures {
        step: i + 1,
        name: step,
        filebench: step.filebench_name().to_string(),
        ops: s.ops,
        bytes: s.bytes,
        ops_per_sec: s.ops as f64 / seconds,
        bytes_per_sec: s.bytes as f64 / seconds,
        latency_ns: s.latency_summary(),
        histogram: if s.ops == 0 { String::new() } else { crate::io::stats::encode_histogram(&s.latency) },
    }
}

/// The window's time series rows, when collected.
fn series_rows(
    spec: &Spec,
    collected: Option<intervals::Collected>,
    name: &'static str,
    origin_ns: Option<u64>,
    end_ns: u64,
    phase: &PhaseResult,
) -> Vec<crate::figures::result::meta_document::MetaIntervalRow> {
    let Some(collected) = collected else { return Vec::new() };
    let span = intervals::PhaseSpan { name, origin_ns, end_ns, kinds: phase.per_op.iter().map(|f| f.op).collect() };
    collected.rows(&[span], spec.output.interval_ns)
}

/// The phases, one operation each, every worker finishing a phase before any starts the
/// next.
pub(super) fn run_phases(spec: &Spec, shared: &Shared<'_>, ops: &[MetaOp], uring_depth: Option<u32>) -> Window {
    let mut phases = Vec::new();
    let barrier = Barrier::new(spec.shape.threads as usize);
    let files_exist = shared.meta.setup_creates_files();
    let origins: Vec<OnceLock<u64>> = ops.iter().map(|_| OnceLock::new()).collect();
    let names = ops.iter().map(|op| op.name().to_string()).collect();
    let (collector, taps) = series_parts(spec, ops, &origins, shared.live, names);
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
