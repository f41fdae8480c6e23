//! What the workers handed back, as one `RunResult`: figures merged across workers and
//! targets, the stop reason, failures worded (`messages`), coverage, verification,
//! pacing, placement and durability. Nothing is printed here except the engine notes
//! and the warnings about workers left behind (through `Diagnostics`).
//!
//! `assemble` builds the result in sections: the storage's (`storage.rs`), the machine's
//! (`machine.rs`), how the run ended (`outcome.rs`), and the sections a run has only when it
//! asked for them (`sections.rs`).

use super::execute::Execution;
use super::place::{Placed, placement_info};
use super::region::RegionLayout;
use crate::base::diagnostics::warnings::Diagnostics;
use crate::base::units::display::seconds_ns;
use crate::figures::result::SteadyStateInfo;
use crate::figures::result::{
    AchievedQueueDepth, BlockSizeFigures, Combination, DataFacts, EngineInfo, Histograms, IoDepths, IoFigures,
    MachineFacts, RunOutcome, RunResult, RunWindow, SCHEMA_VERSION, Schedule, SizeHistograms, StopReason, ToolInfo,
    ToolTime, WorkerInfo, WorkerPlacementInfo,
};
use crate::io::access::block_sizes::SizeFor;
use crate::io::host::environment;
use crate::io::stats::coverage::{self, CoverageTracker};
use crate::io::stats::depth_counts::{DEPTH_CAP, DepthTally, nonzero, split_calls};
use crate::io::stats::interval;
use crate::io::stats::steady_state::SteadyWatch;
use crate::io::stats::{CpuTimes, OpStats, OpSummary, encode_histogram};
use crate::io::worker::{SizeStats, WorkerResult};
use crate::storage::targets::PreparedTarget;
use crate::storage::targets::device_witness::Devices;
use crate::workload::spec::Spec;
use hdrhistogram::Histogram;
use std::sync::atomic::AtomicUsize;

mod machine;
mod outcome;
mod sections;
mod storage;

use machine::{count_idle_states, cpu_info, machine_state, say_engine_notes, worker_cpus};
use outcome::{Outcome, steady_info};
use sections::{data_reduction_info, io_log, pacing_info, replay_info, verification_info};
use storage::{
    device_witnesses, direct_outcome, holes_read, target_info, warn_unwritten_device_ranges, write_data_info,
};

/// What the run planned and prepared, as `assemble` needs it.
pub(super) struct Planned<'a> {
    pub(super) spec: &'a Spec,
    pub(super) diag: &'a Diagnostics,
    /// When the run started, RFC 3339 on the wall clock.
    pub(super) started_at: String,
    pub(super) targets: &'a [PreparedTarget],
    /// The targets are the embedded default's temporary file, removed after the run.
    pub(super) removed_after_run: bool,
    pub(super) layout: &'a RegionLayout,
    pub(super) effective_depth: u32,
    pub(super) placed: &'a Placed,
    /// The block devices under the targets (the witness's counters are theirs).
    pub(super) devices: &'a Devices,
}

/// Builds the result of a run from what it planned and what its workers handed back.
pub(super) fn assemble(planned: &Planned<'_>, execution: Execution, stop: &AtomicUsize) -> RunResult {
    let Planned { spec, diag, ref started_at, targets, removed_after_run, layout, effective_depth, placed, devices } =
        *planned;
    let Execution {
        start_ns,
        workers,
        abandoned,
        cpu_window,
        fsync,
        mut time_series,
        cpu_state,
        device_counters,
        ramp_ns,
        steady,
        latency_request_us,
        ..
    } = execution;
    let end_ns =
        workers.iter().map(|w| w.end_ns).max().or_else(|| abandoned.iter().map(|a| a.at_ns).max()).unwrap_or(start_ns);
    let window_ns = end_ns.saturating_sub(start_ns).max(1);

    let mut cpu_state = machine_state(
        cpu_state.state(&worker_cpus(placed), cpu_window.total_ns(), window_ns),
        latency_request_us.as_ref(),
        devices,
        diag,
    );
    say_engine_notes(&workers, diag);

    let merged = Merged::of(&workers, targets.len());
    let Merged { read, write, total, worker_cpu, per_target, .. } = &merged;
    let per_size = merge_sizes(&workers);
    let witnesses = device_witnesses(spec, devices, &device_counters, targets, per_target, diag);

    let steady_reached = steady.as_ref().is_some_and(|(watch, _)| watch.reached_at_ns().is_some());
    let Outcome { io_errors, stuck_io, failure, stop_reason, durability } =
        Outcome::of(spec, targets, &workers, &abandoned, fsync.as_ref(), write.bytes, stop, steady_reached, diag);

    let direct = direct_outcome(spec, targets, &witnesses, diag);
    warn_unwritten_device_ranges(spec, targets, diag);
    let ops = total.ops;
    let ramp_ops: u64 = workers.iter().map(|w| w.ramp_ops).sum();
    count_idle_states(&mut cpu_state, spec, ops + ramp_ops, effective_depth, (read, write), diag);
    if ramp_ns > 0 && window_ns <= 1 && total.ops == 0 {
        diag.warn(format!("the run stopped during the --ramp ({}): nothing was measured", seconds_ns(ramp_ns)));
    }
    // Flushes are shown whenever the run asked for them (zero when none completed).
    let flushing = spec.issues_flushes();
    // So are trims.
    let trimming = spec.trims();
    // Rows count from the release: the window closes a ramp after its length.
    crate::io::stats::interval::close_at(&mut time_series, ramp_ns + window_ns);
    let Headline { figures: headline, window_ns: shown_window_ns, histograms, steady_state } =
        Headline::of(spec, steady, &merged, &per_size, window_ns, diag);
    let figures = io_figures(spec, headline, &merged, &per_size, &workers, layout, window_ns);
    let data = DataFacts {
        storage_touched: spec.io.engine.caps().touches_storage,
        direct,
        durability,
        verification: spec.data.verify.map(|v| verification_info(spec, v, &workers, targets, layout, worker_cpu)),
        data_reduction: data_reduction_info(spec, &workers),
        write_data: write_data_info(spec, targets),
        holes_read: holes_read(spec, targets),
    };
    let schedule = Schedule {
        pacing: pacing_info(spec, &workers, window_ns, total.ops),
        replay: replay_info(spec, &workers, window_ns, layout),
        iolog: io_log(spec, &workers, start_ns, window_ns, targets, diag),
    };
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "iopulse".into(), version: env!("CARGO_PKG_VERSION").into() },
        spec: spec.clone(),
        machine: MachineFacts {
            environment: environment::collect(),
            cpu: cpu_info(*worker_cpu, cpu_window, ops, window_ns),
            cpu_state: Some(cpu_state),
            placement: placement_info(placed),
            memory: None,
        },
        engine: engine_info(spec, effective_depth, &workers),
        targets: targets
            .iter()
            .zip(per_target)
            .zip(witnesses)
            .map(|((t, rw), witness)| target_info(t, removed_after_run, rw, witness, window_ns))
            .collect(),
        data,
        window: RunWindow {
            started_at: started_at.clone(),
            window_start_unix_ns: 0,
            start_at: None,
            window_ns: shown_window_ns,
            ramp_ns,
            ramp_ops,
            steady_state,
            stop_reason,
            interrupted: stop_reason == StopReason::Interrupted,
        },
        figures,
        workers: worker_infos(&workers, placed, window_ns, flushing, trimming),
        histograms,
        // Last: every step above may have warned.
        outcome: RunOutcome {
            warnings: diag.warnings(),
            notes: diag.notes(),
            error: failure,
            io_errors,
            stuck_io,
            expectations: Vec::new(),
        },
        schedule,
        time_series,
        combined: Combination { merged_from: None, window_skew: None, cluster: None },
    }
}

/// The I/O figures over the window: the headline's per operation, then per size and zone,
/// the region covered, the queue depth achieved and the tool's own time.
fn io_figures(
    spec: &Spec,
    (read, write, total): (OpSummary, OpSummary, OpSummary),
    merged: &Merged,
    per_size: &[SizeStats],
    workers: &[WorkerResult],
    layout: &RegionLayout,
    window_ns: u64,
) -> IoFigures {
    let in_flight = merged.total.in_flight(window_ns);
    IoFigures {
        read,
        write,
        total,
        // Flushes and trims are shown whenever the run asked for them (zero when none
        // completed).
        flush: spec.issues_flushes().then(|| merged.flush.summarize(window_ns)),
        trim: spec.trims().then(|| merged.trim.summarize(window_ns)),
        block_sizes: size_figures(spec, per_size, window_ns),
        zones: zone_shares(spec, workers),
        coverage: coverage_of(workers, layout),
        achieved_queue_depth: AchievedQueueDepth {
            total: in_flight,
            mean_per_worker: in_flight / workers.len().max(1) as f64,
        },
        tool_time: tool_time(spec, workers, window_ns, merged.total.ops),
        io_depths: io_depths(workers),
    }
}

/// The workers' depth counts added up, each worker's submitting calls split as its engine
/// split them into system calls (`submit_batch_max` of its set-up facts); none when nothing
/// was issued.
fn io_depths(workers: &[WorkerResult]) -> Option<IoDepths> {
    let mut issued = DepthTally::default();
    let mut calls = [0; DEPTH_CAP + 1];
    for w in workers {
        issued.add(&w.machine.depths);
        let batch = w
            .engine
            .engine_setup
            .iter()
            .find(|(k, _)| k == "submit_batch_max")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        for (sum, n) in calls.iter_mut().zip(split_calls(&w.machine.depths.per_submit, batch)) {
            *sum += n;
        }
    }
    if issued.at_issue.iter().all(|&n| n == 0) {
        return None;
    }
    Some(IoDepths {
        at_issue: nonzero(&issued.at_issue),
        per_submit: nonzero(&calls),
        per_reap: nonzero(&issued.per_reap),
    })
}

/// Think time and rate figures, when the run was paced.
/// The workers' own time (`ToolTime`); none for a paced run or a timed replay (their
/// waits are the schedule's) or a run that completed nothing.
fn tool_time(spec: &Spec, workers: &[WorkerResult], window_ns: u64, ops: u64) -> Option<ToolTime> {
    let timed_replay = spec.replay.as_ref().is_some_and(|r| r.speed.is_some());
    if spec.pacing.rate.is_some() || spec.pacing.think.is_some() || timed_replay || ops == 0 || window_ns == 0 {
        return None;
    }
    let total_ns: u64 = workers.iter().map(|w| w.machine.own_ns).sum();
    Some(ToolTime {
        total_ns,
        per_io_ns: total_ns as f64 / ops as f64,
        share_of_window: total_ns as f64 / (window_ns as f64 * workers.len().max(1) as f64),
    })
}

/// `--bssplit`, `--block-align`: every worker's figures of each size, added (the workers
/// of a run have the same sizes, in the same order).
fn merge_sizes(workers: &[WorkerResult]) -> Vec<SizeStats> {
    let mut merged: Vec<SizeStats> = Vec::new();
    for w in workers {
        for s in &w.per_size {
            match merged.iter_mut().find(|m| m.size_bytes == s.size_bytes) {
                Some(m) => {
                    m.read.merge(&s.read);
                    m.write.merge(&s.write);
                    m.trim.merge(&s.trim);
                }
                None => merged.push(SizeStats {
                    size_bytes: s.size_bytes,
                    read: s.read.clone(),
                    write: s.write.clone(),
                    trim: s.trim.clone(),
                }),
            }
        }
    }
    merged.sort_by_key(|s| s.size_bytes);
    merged
}

/// Each size's figures and its share of each op type's I/Os, achieved and asked.
fn size_figures(spec: &Spec, per_size: &[SizeStats], window_ns: u64) -> Vec<BlockSizeFigures> {
    let Some(mix) = &spec.shape.block_sizes else { return Vec::new() };
    let trimming = spec.access.trim_percent > 0;
    let total = |f: fn(&SizeStats) -> u64| per_size.iter().map(f).sum::<u64>();
    let (reads, writes, trims) = (total(|s| s.read.ops), total(|s| s.write.ops), total(|s| s.trim.ops));
    let share = |ops: u64, of: u64| if of == 0 { 0.0 } else { 100.0 * ops as f64 / of as f64 };
    per_size
        .iter()
        .map(|s| BlockSizeFigures {
            size_bytes: s.size_bytes,
            read: s.read.summarize(window_ns),
            write: s.write.summarize(window_ns),
            trim: trimming.then(|| s.trim.summarize(window_ns)),
            read_share_percent: share(s.read.ops, reads),
            write_share_percent: share(s.write.ops, writes),
            trim_share_percent: trimming.then(|| share(s.trim.ops, trims)),
            read_asked_percent: mix.asked_percent(SizeFor::Read, s.size_bytes),
            write_asked_percent: mix.asked_percent(SizeFor::Write, s.size_bytes),
            trim_asked_percent: trimming.then(|| mix.asked_percent(SizeFor::Trim, s.size_bytes)),
        })
        .collect()
}

/// The figures of every worker added up: per op type, in all, per target.
struct Merged {
    read: OpStats,
    write: OpStats,
    flush: OpStats,
    trim: OpStats,
    total: OpStats,
    worker_cpu: CpuTimes,
    /// Reads and writes per target (index as the run's targets).
    per_target: Vec<(OpStats, OpStats)>,
}

impl Merged {
    fn of(workers: &[WorkerResult], targets: usize) -> Self {
        let mut read = OpStats::new();
        let mut write = OpStats::new();
        let mut flush = OpStats::new();
        let mut trim = OpStats::new();
        let mut worker_cpu = CpuTimes::default();
        let mut per_target: Vec<(OpStats, OpStats)> = (0..targets).map(|_| (OpStats::new(), OpStats::new())).collect();
        for w in workers {
            read.merge(&w.ops.read);
            write.merge(&w.ops.write);
            flush.merge(&w.ops.flush);
            trim.merge(&w.ops.trim);
            worker_cpu.add(&w.machine.cpu);
            for t in &w.per_target {
                let slot = &mut per_target[t.target as usize];
                slot.0.merge(&t.read);
                slot.1.merge(&t.write);
            }
        }
        let mut total = read.clone();
        total.merge(&write);
        Self { read, write, flush, trim, total, worker_cpu, per_target }
    }
}

/// `--distribution zoned`: the I/Os each zone took, against its share asked for.
fn zone_shares(spec: &Spec, workers: &[WorkerResult]) -> Vec<crate::figures::result::ZoneShare> {
    match spec.access.distribution {
        crate::workload::spec::Distribution::Zoned { zones } => {
            // The workers' counts are set after set (the reads' zones first).
            let mut ios = vec![0u64; zones.given().iter().map(|z| z.count()).sum()];
            for w in workers.iter() {
                for (sum, n) in ios.iter_mut().zip(&w.zone_ios) {
                    *sum += n;
                }
            }
            const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];
            let mut shares = Vec::with_capacity(ios.len());
            let mut at = 0;
            for (i, set) in zones.given().iter().enumerate() {
                let direction = zones.per_direction().then_some(DIRECTIONS[i]);
                shares.extend(crate::figures::result::ZoneShare::of(
                    direction,
                    set.io_percent(),
                    &ios[at..at + set.count()],
                ));
                at += set.count();
            }
            shares
        }
        _ => Vec::new(),
    }
}

/// The latency histograms the result carries, encoded: the headline's (the whole run's, or
/// a steady state's window), flushes', trims' and each size's.
fn histograms(
    shown: (&Histogram<u64>, &Histogram<u64>),
    flush: Option<&OpStats>,
    trim: Option<&OpStats>,
    per_size: &[SizeStats],
) -> Histograms {
    let trimming = trim.is_some();
    Histograms {
        encoding: "hdrhistogram-v2-deflate-base64".into(),
        unit: "ns".into(),
        read: encode_histogram(shown.0),
        write: encode_histogram(shown.1),
        flush: flush.map(|f| encode_histogram(&f.latency)),
        trim: trim.map(|t| encode_histogram(&t.latency)),
        block_sizes: per_size
            .iter()
            .map(|s| SizeHistograms {
                size_bytes: s.size_bytes,
                read: encode_histogram(&s.read.latency),
                write: encode_histogram(&s.write.latency),
                trim: trimming.then(|| encode_histogram(&s.trim.latency)),
            })
            .collect(),
    }
}

/// The engine as the run had it: its name, the depth asked for and had, its set-up.
fn engine_info(spec: &Spec, effective_depth: u32, workers: &[WorkerResult]) -> EngineInfo {
    EngineInfo {
        name: spec.io.engine.name().into(),
        requested_queue_depth: spec.shape.queue_depth,
        effective_queue_depth: effective_depth,
        setup: {
            let mut setup: std::collections::BTreeMap<String, String> =
                workers.first().map(|w| w.engine.engine_setup.iter().cloned().collect()).unwrap_or_default();
            // Flushes of an engine whose writes are stores into a mapping are msync.
            if spec.durability.flush.is_some() && !spec.io.engine.caps().writes_through_descriptor {
                setup.insert("flush_call".into(), "msync".into());
            }
            setup
        },
    }
}

/// Each worker's figures, stop and placement.
fn worker_infos(
    workers: &[WorkerResult],
    placed: &Placed,
    window_ns: u64,
    flushing: bool,
    trimming: bool,
) -> Vec<WorkerInfo> {
    workers
        .iter()
        .map(|w| WorkerInfo {
            index: w.index,
            read: w.ops.read.summarize(window_ns),
            write: w.ops.write.summarize(window_ns),
            flush: flushing.then(|| w.ops.flush.summarize(window_ns)),
            trim: trimming.then(|| w.ops.trim.summarize(window_ns)),
            cpu: w.machine.cpu,
            stop: format!("{:?}", w.stop).to_lowercase(),
            placement: {
                let planned = placed.plan.workers.get(w.index as usize).cloned().unwrap_or_default();
                WorkerPlacementInfo {
                    cpus: planned.cpus,
                    node: planned.node,
                    memory_bound: planned.bind_memory,
                    cpu_seen: w.machine.cpu_seen,
                    buffer_node_seen: w.machine.buffer_node_seen,
                }
            },
            achieved_queue_depth: w.ops.read.in_flight(window_ns) + w.ops.write.in_flight(window_ns),
        })
        .collect()
}

/// The figures the result leads with: the whole run's, or with `--steady-state` reached,
/// the window's (as fio), the whole run's kept beside them.
struct Headline {
    figures: (OpSummary, OpSummary, OpSummary),
    window_ns: u64,
    histograms: Histograms,
    steady_state: Option<SteadyStateInfo>,
}

impl Headline {
    fn of(
        spec: &Spec,
        steady: Option<(SteadyWatch, Option<interval::Snapshot>)>,
        merged: &Merged,
        per_size: &[SizeStats],
        window_ns: u64,
        diag: &Diagnostics,
    ) -> Self {
        let Merged { read, write, flush, trim, total, .. } = merged;
        let (steady_state, window_histograms) = match steady {
            Some((watch, hists)) => (Some(steady_info(spec, &watch, hists.as_ref(), diag)), hists),
            None => (None, None),
        };
        let (figures, shown_window_ns, shown_histograms) = match (&steady_state, &window_histograms) {
            (Some(s), Some(hists)) if s.figures_are_window => {
                let win = s.window.as_ref().expect("a reached steady state has a window");
                ((win.read, win.write, win.total), s.window_ns, (&hists.read, &hists.write))
            }
            _ => (
                (read.summarize(window_ns), write.summarize(window_ns), total.summarize(window_ns)),
                window_ns,
                (&read.latency, &write.latency),
            ),
        };
        let histograms = histograms(
            shown_histograms,
            spec.issues_flushes().then_some(flush),
            spec.trims().then_some(trim),
            per_size,
        );
        let steady_state = steady_state.map(|mut s| {
            if s.figures_are_window {
                s.whole_run = Some(crate::figures::result::WholeRun {
                    window_ns,
                    read: read.summarize(window_ns),
                    write: write.summarize(window_ns),
                    total: total.summarize(window_ns),
                });
            }
            s
        });
        Self { figures, window_ns: shown_window_ns, histograms, steady_state }
    }
}

/// Which blocks of the region the workers touched, and how unevenly.
fn coverage_of(workers: &[WorkerResult], layout: &RegionLayout) -> Option<coverage::Coverage> {
    let trackers: Vec<CoverageTracker> = workers.iter().filter_map(|w| w.coverage.clone()).collect();
    coverage::summarize(&trackers, layout.shared(), layout.total_blocks)
}
