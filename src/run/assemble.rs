//! What the workers handed back, as one `RunResult`: figures merged across workers and
//! targets, the stop reason, failures worded (`messages`), coverage, verification,
//! pacing, placement and durability. Nothing is printed here except the engine notes
//! and the warnings about workers left behind (through `Diagnostics`).

use super::execute::Execution;
use super::messages::{describe_failure, describe_stuck, ios};
use super::place::{Placed, placement_info};
use super::region::RegionLayout;
use super::watchdog::{self, AbandonCause, Abandoned};
use super::worker_plan::tracks_sequences;
use crate::access::block_sizes::SizeFor;
use crate::data::verify::{Failure, Mismatch, VerifyCounts};
use crate::diagnostics::warnings::Diagnostics;
use crate::host::environment;
use crate::host::rusage;
use crate::result::{
    AchievedQueueDepth, BlockSizeFigures, CpuInfo, Durability, EngineInfo, Histograms, IoDepths, MismatchInfo,
    PacedLatency, PacingInfo, RateInfo, RunResult, SCHEMA_VERSION, SizeHistograms, StopReason, StuckIo, TargetInfo,
    ThinkInfo, ToolInfo, ToolTime, VerificationInfo, WorkerInfo, WorkerPlacementInfo,
};
use crate::result::{SteadyStateInfo, SteadyWindow};
use crate::spec::Spec;
use crate::stats::coverage::{self, CoverageTracker};
use crate::stats::depth_counts::{DEPTH_CAP, DepthTally, nonzero, split_calls};
use crate::stats::interval;
use crate::stats::steady_state::{Metric, SteadyWatch, Test};
use crate::stats::{CpuTimes, OpStats, encode_histogram};
use crate::targets::device_witness::{self, Devices};
use crate::targets::{DeviceWitness, DirectOutcome, PreparedTarget};
use crate::worker::{PacingLatency, SizeStats, WorkerResult, WorkerStop, stop_code};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    let started_at = started_at.clone();
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

    // The CPU's state over the window, for the CPUs the workers could run on.
    let mut cpu_state = cpu_state.state(&worker_cpus(placed), cpu_window.total_ns(), window_ns);
    match &latency_request_us {
        Some(Ok(us)) => {
            if let Some(idle) = &mut cpu_state.idle {
                idle.latency_limit_us = Some(*us);
            }
        }
        Some(Err(e)) => diag.warn(format!("{e}: the idle CPUs were left as they were")),
        None => {}
    }
    for warning in crate::cpu_state::warnings(&cpu_state, &devices.loop_devices()) {
        diag.warn(warning);
    }

    // Engine notes (fallbacks taken at set-up): each distinct one said once.
    let mut said: Vec<&String> = Vec::new();
    for note in workers.iter().flat_map(|w| &w.engine_notes) {
        if !said.contains(&note) {
            diag.note(note.clone());
            said.push(note);
        }
    }

    let mut read = OpStats::new();
    let mut write = OpStats::new();
    let mut flush = OpStats::new();
    let mut trim = OpStats::new();
    let mut worker_cpu = CpuTimes::default();
    let mut per_target: Vec<(OpStats, OpStats)> =
        (0..targets.len()).map(|_| (OpStats::new(), OpStats::new())).collect();
    for w in &workers {
        read.merge(&w.read);
        write.merge(&w.write);
        flush.merge(&w.flush);
        trim.merge(&w.trim);
        worker_cpu.add(&w.cpu);
        for t in &w.per_target {
            let slot = &mut per_target[t.target as usize];
            slot.0.merge(&t.read);
            slot.1.merge(&t.write);
        }
    }
    let per_size = merge_sizes(&workers);
    let mut total = read.clone();
    total.merge(&write);
    let witnesses = device_witnesses(spec, devices, &device_counters, targets, &per_target, diag);

    let io_errors = crate::stats::io_errors::summarize(workers.iter().map(|w| &w.errors), spec.error_limit(), |t| {
        targets.get(t as usize).map_or_else(|| format!("target #{t}"), |t| t.plan.path.display().to_string())
    });
    let stuck_io: Vec<StuckIo> = abandoned.iter().map(|a| stuck_info(a, targets)).collect();
    for (a, s) in abandoned.iter().zip(&stuck_io) {
        if a.cause == AbandonCause::Signal {
            diag.warn(format!(
                "worker {} had not stopped {} after the signal ({}): its figures are not in the report, and iopulse exits without waiting for it",
                a.index,
                crate::units::display::seconds_ns(watchdog::STOP_GRACE_NS),
                describe_stuck(s)
            ));
        }
    }
    let stuck_failure = abandoned.iter().zip(&stuck_io).find(|(a, _)| a.cause != AbandonCause::Signal).map(|(a, s)| {
        let what = match a.cause {
            AbandonCause::IoTimeout => format!(
                "I/O timeout: worker {}: {} (--io-timeout {})",
                a.index,
                describe_stuck(s),
                crate::units::display::seconds_ns(spec.io_timeout_ns)
            ),
            _ => format!(
                "worker {} had not stopped {} after the run was stopped ({})",
                a.index,
                crate::units::display::seconds_ns(spec.io_timeout_ns),
                describe_stuck(s)
            ),
        };
        format!("{what}; its figures are not in the report, and iopulse exits without waiting for it")
    });
    let limit = spec.error_limit();
    let failure = workers
        .iter()
        .find_map(|w| {
            w.failure
                .map(|f| {
                    let first = describe_failure(&f, targets, write.bytes);
                    match limit {
                        Some(n) if n > 1 => {
                            format!("--max-errors {n} reached ({} failed); the last: {first}", ios(io_errors.total))
                        }
                        _ => first,
                    }
                })
                .or_else(|| w.engine_error.clone().map(|m| format!("worker {}: {m}", w.index)))
        })
        .or(stuck_failure)
        .or_else(|| fsync.as_ref().and_then(|r| r.as_ref().err().cloned()));
    let msync_ns = workers.iter().filter_map(|w| w.sync_ns).max();
    let fsync_ns = fsync.as_ref().and_then(|r| r.as_ref().ok().copied());
    let durability = (msync_ns.is_some() || fsync_ns.is_some()).then(|| Durability {
        msync_ns,
        fsync_ns,
        sync_ns: msync_ns.unwrap_or(0) + fsync_ns.unwrap_or(0),
    });
    let signalled = stop_code::is_signal(stop.load(Ordering::Relaxed));
    let steady_reached = steady.as_ref().is_some_and(|(watch, _)| watch.reached_at_ns().is_some());
    let stop_reason = if failure.is_some() {
        StopReason::Error
    } else if signalled {
        StopReason::Interrupted
    } else if steady_reached {
        StopReason::SteadyState
    } else if workers.iter().all(|w| w.stop == WorkerStop::Done) {
        StopReason::Complete
    } else {
        StopReason::Duration
    };
    // --continue-on-error: the run went on, and says at the end that I/Os failed.
    let failure = failure.or_else(|| {
        (io_errors.total > 0).then(|| {
            let kinds: Vec<String> =
                io_errors.kinds.iter().map(|k| format!("{} {} x{}", k.op, k.errno, k.count)).collect();
            format!("{} failed (--continue-on-error): {}", ios(io_errors.total), kinds.join(", "))
        })
    });

    let trackers: Vec<CoverageTracker> = workers.iter().filter_map(|w| w.coverage.clone()).collect();
    let coverage = coverage::summarize(&trackers, layout.shared(), layout.total_blocks);

    let direct = DirectOutcome {
        requested: spec.direct,
        effective: spec.direct && targets.iter().all(|t| t.direct.effective),
        reason: targets.iter().find_map(|t| t.direct.reason.clone()),
        memory_backed: targets.iter().any(|t| t.direct.memory_backed),
        ..DirectOutcome::default()
    };
    let direct = checked_at_the_end(direct, targets, &witnesses, diag);
    warn_unwritten_device_ranges(spec, targets, diag);
    let ops = total.ops;
    let ramp_ops: u64 = workers.iter().map(|w| w.ramp_ops).sum();
    // The idle states are counted from the release, a ramp included: so are the I/Os.
    if let Some(idle) = &mut cpu_state.idle {
        let counted = ops + ramp_ops;
        idle.sleeps_per_io = (counted > 0).then(|| idle.sleeps as f64 / counted as f64);
    }
    let p50_ns = if read.ops >= write.ops { headline_p50_ns(&read) } else { headline_p50_ns(&write) };
    if spec.engine.caps().touches_storage
        && let Some(note) =
            crate::cpu_state::idle_note(&cpu_state, spec.threads.saturating_mul(effective_depth), p50_ns)
    {
        diag.note(note);
    }
    let zones = match spec.distribution {
        crate::spec::Distribution::Zoned { zones } => {
            // The workers' counts are set after set (the reads' zones first).
            let mut ios = vec![0u64; zones.given().iter().map(|z| z.len()).sum()];
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
                shares.extend(crate::result::ZoneShare::of(direction, set.io_percent(), &ios[at..at + set.len()]));
                at += set.len();
            }
            shares
        }
        _ => Vec::new(),
    };
    if ramp_ns > 0 && window_ns <= 1 && total.ops == 0 {
        diag.warn(format!(
            "the run stopped during the --ramp ({}): nothing was measured",
            crate::units::display::seconds_ns(ramp_ns)
        ));
    }
    let (steady_state, window_histograms) = match steady {
        Some((watch, hists)) => (Some(steady_info(spec, &watch, hists.as_ref(), diag)), hists),
        None => (None, None),
    };
    // --steady-state reached: the window's figures are the result (as fio), the whole
    // run's are kept beside them.
    let (headline, shown_window_ns, shown_histograms) = match (&steady_state, &window_histograms) {
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
    // Flushes are shown whenever the run asked for them (zero when none completed).
    let flushing = spec.issues_flushes();
    // So are trims.
    let trimming = spec.trims();
    let histograms = Histograms {
        encoding: "hdrhistogram-v2-deflate-base64".into(),
        unit: "ns".into(),
        read: encode_histogram(shown_histograms.0),
        write: encode_histogram(shown_histograms.1),
        flush: flushing.then(|| encode_histogram(&flush.latency)),
        trim: trimming.then(|| encode_histogram(&trim.latency)),
        block_sizes: per_size
            .iter()
            .map(|s| SizeHistograms {
                size_bytes: s.size_bytes,
                read: encode_histogram(&s.read.latency),
                write: encode_histogram(&s.write.latency),
                trim: trimming.then(|| encode_histogram(&s.trim.latency)),
            })
            .collect(),
    };
    let steady_state = steady_state.map(|mut s| {
        if s.figures_are_window {
            s.whole_run = Some(crate::result::WholeRun {
                window_ns,
                read: read.summarize(window_ns),
                write: write.summarize(window_ns),
                total: total.summarize(window_ns),
            });
        }
        s
    });
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "iopulse".into(), version: env!("CARGO_PKG_VERSION").into() },
        started_at,
        window_start_unix_ns: 0,
        start_at: None,
        spec: spec.clone(),
        environment: environment::collect(),
        engine: EngineInfo {
            name: spec.engine.name().into(),
            requested_queue_depth: spec.queue_depth,
            effective_queue_depth: effective_depth,
            setup: {
                let mut setup: std::collections::BTreeMap<String, String> =
                    workers.first().map(|w| w.engine_setup.iter().cloned().collect()).unwrap_or_default();
                // Flushes of an engine whose writes are stores into a mapping are msync.
                if spec.flush.is_some() && !spec.engine.caps().writes_through_descriptor {
                    setup.insert("flush_call".into(), "msync".into());
                }
                setup
            },
        },
        targets: targets
            .iter()
            .zip(&per_target)
            .zip(witnesses)
            .map(|((t, (r, w)), witness)| {
                let mut info = target_info(t, removed_after_run, r.summarize(window_ns), w.summarize(window_ns));
                info.device_witness = witness;
                info
            })
            .collect(),
        direct,
        storage_touched: spec.engine.caps().touches_storage,
        window_ns: shown_window_ns,
        ramp_ns,
        ramp_ops,
        steady_state,
        stop_reason,
        interrupted: stop_reason == StopReason::Interrupted,
        read: headline.0,
        write: headline.1,
        total: headline.2,
        flush: flushing.then(|| flush.summarize(window_ns)),
        zones,
        trim: trimming.then(|| trim.summarize(window_ns)),
        block_sizes: size_figures(spec, &per_size, window_ns),
        cpu: cpu_info(worker_cpu, cpu_window, ops, window_ns),
        cpu_state: Some(cpu_state),
        coverage,
        durability,
        workers: workers
            .iter()
            .map(|w| WorkerInfo {
                index: w.index,
                read: w.read.summarize(window_ns),
                write: w.write.summarize(window_ns),
                flush: flushing.then(|| w.flush.summarize(window_ns)),
                trim: trimming.then(|| w.trim.summarize(window_ns)),
                cpu: w.cpu,
                stop: format!("{:?}", w.stop).to_lowercase(),
                placement: {
                    let planned = placed.plan.workers.get(w.index as usize).cloned().unwrap_or_default();
                    WorkerPlacementInfo {
                        cpus: planned.cpus,
                        node: planned.node,
                        memory_bound: planned.bind_memory,
                        cpu_seen: w.cpu_seen,
                        buffer_node_seen: w.buffer_node_seen,
                    }
                },
                achieved_queue_depth: w.read.in_flight(window_ns) + w.write.in_flight(window_ns),
            })
            .collect(),
        achieved_queue_depth: AchievedQueueDepth {
            total: total.in_flight(window_ns),
            mean_per_worker: total.in_flight(window_ns) / workers.len().max(1) as f64,
        },
        tool_time: tool_time(spec, &workers, window_ns, total.ops),
        io_depths: io_depths(&workers),
        histograms,
        verification: spec.verify.map(|v| verification_info(spec, v, &workers, targets, layout, &worker_cpu)),
        data_reduction: data_reduction_info(spec, &workers),
        write_data: write_data_info(spec, targets),
        holes_read: holes_read(spec, targets),
        pacing: pacing_info(spec, &workers, window_ns, total.ops),
        replay: replay_info(spec, &workers, window_ns, layout),
        iolog: io_log(spec, &workers, start_ns, window_ns, targets, diag),
        warnings: diag.warnings(),
        notes: diag.notes(),
        error: failure,
        placement: placement_info(placed),
        merged_from: None,
        window_skew: None,
        cluster: None,
        time_series: {
            // Rows count from the release: the window closes a ramp after its length.
            crate::stats::interval::close_at(&mut time_series, ramp_ns + window_ns);
            time_series
        },
        io_errors,
        stuck_io,
        memory: None,
        expectations: Vec::new(),
    }
}

/// `--steady-state`: what the watch saw, as the result says it; a loud warning when the
/// run was not steady.
fn steady_info(
    spec: &Spec,
    watch: &SteadyWatch,
    window: Option<&crate::stats::interval::Snapshot>,
    diag: &Diagnostics,
) -> SteadyStateInfo {
    let criterion = watch.criterion();
    let interval_ns = spec.interval_ns;
    let window_ns = watch.window_len() * interval_ns;
    let reached = watch.reached_at_ns().is_some();
    let summary = |h: &Histogram<u64>, bytes: u64| -> OpStats {
        let mut s = OpStats::new();
        s.ops = h.len();
        s.bytes = bytes;
        s.lat_sum_ns = (h.mean() * h.len() as f64).round() as u128;
        if !h.is_empty() {
            s.lat_min_ns = h.min();
            s.lat_max_ns = h.max();
        }
        let _ = s.latency.add(h);
        s
    };
    let window_info = watch.window_epochs().zip(watch.figures()).zip(window).map(|(((first, last), test), win)| {
        let rows = interval::ramp_rows(spec.ramp_ns, interval_ns);
        let end_of = |e: u64| spec.ramp_ns + (e + 1 - rows) * interval_ns;
        let (read, write) = (summary(&win.read, win.read_bytes), summary(&win.write, win.write_bytes));
        let mut total = read.clone();
        total.merge(&write);
        SteadyWindow {
            start_ns: end_of(first) - interval_ns,
            end_ns: end_of(last),
            test,
            read: read.summarize(window_ns),
            write: write.summarize(window_ns),
            total: total.summarize(window_ns),
        }
    });
    let shown = |ns: u64| crate::units::display::seconds_ns(ns);
    if !reached {
        let last = watch.figures().map_or_else(
            || format!("the window of {} never filled", shown(window_ns)),
            |f| {
                let unit = match (criterion.metric, criterion.test) {
                    (Metric::Iops, Test::Deviation) => "IOPS",
                    (Metric::Iops, Test::Slope) => "IOPS/s",
                    (Metric::Bandwidth, Test::Deviation) => "B/s",
                    (Metric::Bandwidth, Test::Slope) => "B/s per s",
                    (Metric::MeanLatency, Test::Deviation) => "ns",
                    (Metric::MeanLatency, Test::Slope) => "ns/s",
                };
                format!("the last window's figure was {:.1} {unit} against a bound of {:.1} {unit}", f.figure, f.bound)
            },
        );
        diag.warn(format!(
            "STEADY STATE NOT REACHED: --steady-state {criterion} over {} ({} × {}) did not hold before the run ended; {last}. The figures are the whole run's, not a steady state's",
            shown(window_ns),
            watch.window_len(),
            shown(interval_ns)
        ));
    }
    SteadyStateInfo {
        criterion: criterion.to_string(),
        metric: criterion.metric,
        test: criterion.test,
        window_intervals: watch.window_len() as u32,
        window_ns,
        reached,
        reached_at_ns: watch.reached_at_ns(),
        figures_are_window: reached && window_info.is_some(),
        window: window_info,
        whole_run: None,
    }
}

/// A run that reads a block device and does not write it: ranges never written or trimmed
/// may be answered without reaching the media (zram's empty slots, a thin pool's
/// unallocated blocks, an SSD's trimmed blocks), so the run warns and names the fix.
fn warn_unwritten_device_ranges(spec: &Spec, targets: &[PreparedTarget], diag: &Diagnostics) {
    if !spec.reads() || spec.writes() || !spec.engine.caps().touches_storage {
        return;
    }
    for t in targets.iter().filter(|t| t.plan.kind == crate::targets::TargetKind::BlockDevice) {
        let dev = t.plan.path.display();
        diag.warn(format!(
            "{dev} is read but this run does not write it: ranges never written or trimmed may be answered without reaching the media (zram's empty slots, thin provisioning, an SSD's trimmed blocks); precondition it by writing it first (`iopulse {dev} --write-percent 100 --force --duration 0` writes every block once)"
        ));
    }
}

/// Growth of an O_DIRECT run's region in the page cache over the window (a share of the
/// region) from which the filesystem is said to have served it through the cache.
const DIRECT_CACHED_GROWTH: f64 = 0.05;

/// The I/O mode checked against the end of the run: an O_DIRECT run whose region ended up
/// resident in the page cache was served through it by the filesystem (ext4's
/// `data=journal`, btrfs's compressed extents), whatever the probe at the start said; a
/// loop device with direct I/O off caches below the O_DIRECT it accepts; memory devices
/// are named. Each is warned about.
fn checked_at_the_end(
    mut direct: DirectOutcome,
    targets: &[PreparedTarget],
    witnesses: &[Option<DeviceWitness>],
    diag: &Diagnostics,
) -> DirectOutcome {
    use crate::targets::page_cache::percent;
    direct.memory_device = witnesses.iter().flatten().find_map(|w| w.memory.clone());
    if !direct.effective {
        return direct;
    }
    direct.cached_below = witnesses.iter().flatten().find_map(|w| w.cached_below.clone());
    for t in targets {
        let Some(cache) = t.page_cache.facts() else { continue };
        let (start, end) = (cache.start_resident_fraction.unwrap_or(0.0), cache.end_resident_fraction);
        let mount = t.mount.as_ref();
        let fs = mount.map_or("the filesystem", |m| m.fs_type.as_str());
        let journal = mount.is_some_and(|m| m.fs_type.starts_with("ext") && m.option("data") == Some("journal"));
        let grew = end.is_some_and(|e| e - start >= DIRECT_CACHED_GROWTH);
        if !journal && !grew {
            continue;
        }
        let why = if journal {
            format!("{fs} is mounted data=journal, which turns O_DIRECT into buffered I/O")
        } else if mount.is_some_and(|m| m.fs_type == "btrfs" && m.super_options.contains("compress")) {
            "btrfs reads and writes compressed extents through the page cache".to_string()
        } else {
            format!("{fs} kept the data it read and wrote in the page cache")
        };
        let why = format!(
            "{why}: {} of the region of {} was resident at the end of the run ({} at the start)",
            end.map_or_else(|| "unknown".to_string(), percent),
            t.plan.path.display(),
            percent(start)
        );
        diag.warn(format!("O_DIRECT was accepted, but {why}; these figures are memory speed, not the device's"));
        direct.served_through_cache = Some(why);
        break;
    }
    direct
}

/// Each target's device witness, from the counters at the window's edges and what the run
/// did on each target; a share far from what the I/O mode promises is warned about once
/// per device.
fn device_witnesses(
    spec: &Spec,
    devices: &Devices,
    (start, end): &(device_witness::Snapshot, device_witness::Snapshot),
    targets: &[PreparedTarget],
    per_target: &[(OpStats, OpStats)],
    diag: &Diagnostics,
) -> Vec<Option<DeviceWitness>> {
    let io: Vec<device_witness::TargetIo> = targets
        .iter()
        .zip(per_target)
        .map(|(t, (r, w))| device_witness::TargetIo {
            io: device_witness::IoCounts {
                read_ios: r.ops,
                read_bytes: r.bytes,
                write_ios: w.ops,
                write_bytes: w.bytes,
            },
            direct: t.direct.effective,
            cache_dropped: t.page_cache.facts().is_some_and(|c| c.invalidated),
            direct_possible: spec.engine.caps().supports_direct,
        })
        .collect();
    let witnesses = devices.witnesses(start, end, &io);
    let mut warned: Vec<&str> = Vec::new();
    for w in witnesses.iter().flatten() {
        if !warned.contains(&w.device.as_str()) {
            for warning in &w.warnings {
                diag.warn(warning.clone());
            }
            warned.push(&w.device);
        }
    }
    witnesses
}

/// The CPU figures: the whole process in the window (per I/O, in cores), the workers'
/// share and the rest, and the whole process over its life.
fn cpu_info(workers: CpuTimes, window: CpuTimes, ops: u64, window_ns: u64) -> CpuInfo {
    let per_io = |cpu: &CpuTimes| if ops > 0 { cpu.total_ns() as f64 / ops as f64 } else { 0.0 };
    CpuInfo {
        workers,
        process: rusage::process_cpu(),
        window,
        other_ns: window.total_ns().saturating_sub(workers.total_ns()),
        per_io_ns: per_io(&window),
        workers_per_io_ns: per_io(&workers),
        cores_busy: window.total_ns() as f64 / window_ns.max(1) as f64,
    }
}

fn stuck_info(a: &Abandoned, targets: &[PreparedTarget]) -> StuckIo {
    let io = a.waiting.and_then(|w| w.io);
    StuckIo {
        worker: a.index,
        cause: a.cause.name().to_string(),
        op: io.map(|io| io.op.name().to_string()),
        target: io.map(|io| {
            targets
                .get(io.target as usize)
                .map_or_else(|| format!("target #{}", io.target), |t| t.plan.path.display().to_string())
        }),
        offset_bytes: io.map(|io| io.offset_bytes),
        in_flight_ns: a.waiting.map_or(0, |w| w.age_ns(a.at_ns)),
        in_flight_ios: a.waiting.map_or(0, |w| w.in_flight),
    }
}

fn paced_latency(s: &OpStats) -> PacedLatency {
    PacedLatency { ios: s.ops, latency_ns: s.latency_summary(), histogram: encode_histogram(&s.latency) }
}

/// `--write-iolog`: every worker's I/Os together, in the order they were issued.
fn io_log(
    spec: &Spec,
    workers: &[WorkerResult],
    start_ns: u64,
    window_ns: u64,
    targets: &[PreparedTarget],
    diag: &Diagnostics,
) -> Option<std::sync::Arc<crate::result::io_log::IoLog>> {
    use crate::engine::Op;
    use crate::result::io_log::{IoAction, IoLog, LoggedIo};
    if !spec.record_iolog {
        return None;
    }
    let mut records: Vec<&crate::worker::iolog::IoRecord> =
        workers.iter().filter_map(|w| w.iolog.as_ref()).flat_map(|l| &l.records).collect();
    records.sort_by_key(|r| r.issue_ns);
    let left_out: u64 = workers.iter().filter_map(|w| w.iolog.as_ref()).map(|l| l.left_out).sum();
    if left_out > 0 {
        diag.warn(format!(
            "--write-iolog: the iolog holds the first {} I/Os of each worker ({} more were issued and are not in it)",
            crate::worker::iolog::MAX_RECORDS_PER_WORKER,
            left_out
        ));
    }
    let ios = records
        .into_iter()
        .map(|r| LoggedIo {
            time_us: r.issue_ns.saturating_sub(start_ns) / 1000,
            target: r.target,
            action: match r.op {
                Op::Read => IoAction::Read,
                Op::Write => IoAction::Write,
                Op::Trim => IoAction::Trim,
                Op::Fsync => IoAction::Sync,
                Op::Fdatasync => IoAction::Datasync,
            },
            offset_bytes: r.offset_bytes,
            len_bytes: r.len_bytes,
        })
        .collect();
    // fio opens the files the log names: their absolute paths.
    let targets = targets
        .iter()
        .map(|t| std::fs::canonicalize(&t.plan.path).unwrap_or_else(|_| t.plan.path.clone()).display().to_string())
        .collect();
    Some(std::sync::Arc::new(IoLog { targets, ios, end_us: window_ns / 1000 }))
}

/// A replay's figures: the trace, its timing against the run's, each I/O's lag.
fn replay_info(
    spec: &Spec,
    workers: &[WorkerResult],
    window_ns: u64,
    layout: &super::region::RegionLayout,
) -> Option<crate::result::ReplayInfo> {
    let r = spec.replay.as_ref()?;
    let lag = workers.iter().filter_map(|w| w.pacing_latency.as_ref()).fold(None, |acc: Option<OpStats>, l| {
        let mut acc = acc.unwrap_or_default();
        acc.merge(&l.lateness);
        Some(acc)
    });
    let scheduled_span_ns = r.speed.map(|speed| (r.span_ns as f64 / speed) as u64);
    let target_bytes = (0..layout.threads).map(|w| layout.worker(w).blocks).max().unwrap_or(0) * spec.block_size_bytes;
    let issued = lag.as_ref().map_or_else(
        || workers.iter().map(|w| w.read.ops + w.write.ops + w.trim.ops + w.flush.ops + w.ramp_ops).sum(),
        |l| l.ops,
    );
    Some(crate::result::ReplayInfo {
        trace_files: r.trace_files.iter().map(|p| p.display().to_string()).collect(),
        format: r.format,
        names: r.names.clone(),
        reads: r.reads,
        writes: r.writes,
        trims: r.trims,
        flushes: r.flushes,
        skipped: r.skipped,
        issued,
        speed: r.speed,
        trace_span_ns: r.span_ns,
        scheduled_span_ns,
        replay_ns: window_ns,
        duration_error_percent: scheduled_span_ns
            .filter(|&s| s > 0)
            .map(|s| (window_ns as f64 - s as f64) / s as f64 * 100.0),
        remap: r.remap,
        trace_extent_bytes: r.extent_bytes,
        target_bytes,
        remapped: r.extent_bytes > target_bytes,
        lag: lag.as_ref().map(paced_latency),
    })
}

/// The workers' depth counts added up, each worker's submitting calls split as its engine
/// split them into system calls (`submit_batch_max` of its set-up facts); none when nothing
/// was issued.
fn io_depths(workers: &[WorkerResult]) -> Option<IoDepths> {
    let mut issued = DepthTally::default();
    let mut calls = [0; DEPTH_CAP + 1];
    for w in workers {
        issued.add(&w.depths);
        let batch = w
            .engine_setup
            .iter()
            .find(|(k, _)| k == "submit_batch_max")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        for (sum, n) in calls.iter_mut().zip(split_calls(&w.depths.per_submit, batch)) {
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
    if spec.rate.is_some() || spec.think.is_some() || timed_replay || ops == 0 || window_ns == 0 {
        return None;
    }
    let total_ns: u64 = workers.iter().map(|w| w.own_ns).sum();
    Some(ToolTime {
        total_ns,
        per_io_ns: total_ns as f64 / ops as f64,
        share_of_window: total_ns as f64 / (window_ns as f64 * workers.len().max(1) as f64),
    })
}

fn pacing_info(spec: &Spec, workers: &[WorkerResult], window_ns: u64, ops: u64) -> Option<PacingInfo> {
    if spec.think.is_none() && spec.rate.is_none() {
        return None;
    }
    let sum = |f: fn(&WorkerResult) -> u64| workers.iter().map(f).sum::<u64>();
    let worker_time_ns = window_ns as f64 * workers.len().max(1) as f64;
    let window_s = window_ns as f64 / 1e9;
    // Every worker's lateness and service histograms, merged (rate schedules only).
    let latency = workers.iter().filter_map(|w| w.pacing_latency.as_ref()).fold(None, |acc, l| {
        let mut acc: PacingLatency = acc.unwrap_or_default();
        acc.merge(l);
        Some(acc)
    });
    Some(PacingInfo {
        think: spec.think.map(|t| ThinkInfo {
            mode: t.mode,
            every: t.every,
            fixed_ns: (t.adaptive_percent.is_none()).then_some(t.time_ns),
            adaptive_percent: t.adaptive_percent,
            thinks: sum(|w| w.pacing.thinks),
            requested_ns: sum(|w| w.pacing.think_requested_ns),
            spent_ns: sum(|w| w.pacing.think_spent_ns),
            share_of_run: sum(|w| w.pacing.think_spent_ns) as f64 / worker_time_ns,
        }),
        rate: spec.rate.map(|r| {
            let target_iops = r.iops_per_worker * workers.len() as f64;
            let achieved_iops = ops as f64 / window_s;
            let backlog = sum(|w| w.pacing.backlog_ios);
            RateInfo {
                given_as: r.given_as,
                total: r.total,
                target_iops_per_worker: r.iops_per_worker,
                target_iops,
                achieved_iops,
                backlog_at_end: backlog,
                max_behind_ns: workers.iter().map(|w| w.pacing.max_behind_ns).max().unwrap_or(0),
                lateness: latency.as_ref().map(|l| paced_latency(&l.lateness)),
                service: latency.as_ref().map(|l| paced_latency(&l.service)),
                reached: achieved_iops >= target_iops * 0.99,
                latency_from:
                    "due time: each I/O's latency counts from when it was scheduled (no coordinated omission)".into(),
            }
        }),
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
    let Some(mix) = &spec.block_sizes else { return Vec::new() };
    let trimming = spec.trim_percent > 0;
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

/// The mark on every figure of a run that read holes or unwritten extents it did not lay
/// out (`--keep-holes`, `--verify`, a file it may not write): how much, and why.
fn holes_read(spec: &Spec, targets: &[PreparedTarget]) -> Option<String> {
    if !spec.reads() {
        return None;
    }
    let kept: Vec<&crate::targets::Allocation> =
        targets.iter().filter_map(|t| t.allocation.as_ref()).filter(|a| a.not_laid_out.is_some()).collect();
    let first = kept.first()?;
    let hole_bytes: u64 = kept.iter().map(|a| a.unallocated_bytes()).sum();
    let region_bytes: u64 = kept.iter().map(|a| a.region_bytes).sum();
    let at_least = if kept.iter().any(|a| a.allocated_bytes.is_none()) { "at least " } else { "" };
    let how = if spec.keep_holes { "--keep-holes" } else { "not laid out" };
    Some(format!(
        "{how}: the figures include reads of {at_least}{} of holes and unwritten extents (of a {} read region), which never reach the device; {}",
        crate::units::display::bytes(hole_bytes),
        crate::units::display::bytes(region_bytes),
        first.not_laid_out.as_deref().unwrap_or_default()
    ))
}

/// What the run wrote and laid out (`None` if nothing).
fn write_data_info(spec: &Spec, targets: &[PreparedTarget]) -> Option<crate::result::WriteDataInfo> {
    if !spec.writes() && targets.iter().all(|t| t.laid_out_bytes == 0) {
        return None;
    }
    let pattern = spec.verify.map_or(spec.write_pattern, |v| v.pattern);
    Some(crate::result::WriteDataInfo {
        pattern,
        verified: spec.verify.is_some(),
        reducibility: pattern.reducibility(!spec.reducibility.is_none()),
        period_bytes: (pattern == crate::data::Pattern::Unique)
            .then(|| crate::data::unique::period_bytes(spec.largest_block_bytes())),
    })
}

/// What `--dedupe-ratio` and `--compress-ratio` produced in the counted writes.
fn data_reduction_info(spec: &Spec, workers: &[WorkerResult]) -> Option<crate::result::DataReductionInfo> {
    let asked = spec.reducibility;
    if asked.is_none() {
        return None;
    }
    let chunks_per_write = spec.block_size_bytes.div_ceil(crate::data::CHUNK_BYTES as u64);
    let chunks_of = |ops: u64, bytes: u64| ops * bytes.div_ceil(crate::data::CHUNK_BYTES as u64);
    let chunks_written = if spec.block_sizes.is_some() {
        // Each size's writes: a mix's sizes differ in chunks.
        workers.iter().flat_map(|w| &w.per_size).map(|s| chunks_of(s.write.ops, s.size_bytes)).sum::<u64>()
    } else {
        workers.iter().map(|w| w.write.ops).sum::<u64>() * chunks_per_write
    };
    let duplicate_chunks_written = workers.iter().map(|w| w.duplicate_chunks_written).sum();
    // Verified writes are duplicates by whole blocks; unverified ones by 4 KiB chunk.
    let unit_chunks = if spec.verify.is_some() { chunks_per_write } else { 1 };
    Some(crate::result::DataReductionInfo {
        dedupe_ratio_asked: asked.dedupe_ratio,
        compress_ratio_asked: asked.compress_ratio,
        chunks_written,
        duplicate_chunks_written,
        dedupe_ratio_produced: crate::data::dedupe_ratio_produced(
            chunks_written,
            duplicate_chunks_written,
            unit_chunks,
        ),
        compress_ratio_produced: crate::data::Reduction::new(asked).compress_ratio_produced(),
    })
}

fn verification_info(
    spec: &Spec,
    v: crate::spec::VerifySpec,
    workers: &[WorkerResult],
    targets: &[PreparedTarget],
    layout: &RegionLayout,
    worker_cpu: &CpuTimes,
) -> VerificationInfo {
    let mut counts = VerifyCounts::default();
    for w in workers {
        counts.merge(&w.verify_counts);
    }
    let mut mismatches: Vec<&Mismatch> = workers.iter().flat_map(|w| &w.mismatches).collect();
    mismatches.sort_by_key(|m| (m.target, m.offset_bytes));
    let hex = |bytes: &[u8; 16]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    let failures = counts.failures();
    let writes: u64 = workers.iter().map(|w| w.write.ops).sum();
    let stamp_ns = workers.iter().map(|w| w.verify_cost.stamp_ns).max().unwrap_or(0);
    let check_ns = workers.iter().map(|w| w.verify_cost.check_ns).max().unwrap_or(0);
    let verify_ns = stamp_ns as f64 * writes as f64 + check_ns as f64 * counts.checked as f64;
    VerificationInfo {
        pattern: v.pattern,
        seed: spec.data_seed,
        operations: counts.checked,
        failures,
        success_percent: if counts.checked > 0 {
            100.0 * (counts.checked - failures.min(counts.checked)) as f64 / counts.checked as f64
        } else {
            100.0
        },
        failures_by_kind: Failure::NAMES.iter().zip(counts.failures_by_kind).map(|(n, c)| (n.to_string(), c)).collect(),
        mismatches: mismatches
            .into_iter()
            .take(v.max_reports as usize)
            .map(|m| MismatchInfo {
                target: targets.get(m.target as usize).map_or_else(String::new, |t| t.plan.path.display().to_string()),
                offset_bytes: m.offset_bytes,
                failure: m.failure,
                window_at: m.window_at,
                expected_hex: hex(&m.expected),
                found_hex: hex(&m.found),
            })
            .collect(),
        lost_write_detection: tracks_sequences(spec, layout),
        ownership: layout.ownership().to_string(),
        stamp_ns_per_write: stamp_ns,
        check_ns_per_read: check_ns,
        estimated_slowdown_percent: if worker_cpu.total_ns() > 0 {
            (100.0 * verify_ns / worker_cpu.total_ns() as f64).min(100.0)
        } else {
            0.0
        },
    }
}

fn target_info(
    t: &PreparedTarget,
    removed_after_run: bool,
    read: crate::stats::OpSummary,
    write: crate::stats::OpSummary,
) -> TargetInfo {
    TargetInfo {
        path: t.plan.path.display().to_string(),
        kind: t.plan.kind,
        size_bytes: t.plan.size_bytes,
        blocks: t.plan.blocks,
        filesystem: t.mount.as_ref().map(|m| m.fs_type.clone()),
        device: t.mount.as_ref().map(|m| m.source.clone()),
        mount_point: t.mount.as_ref().map(|m| m.mount_point.clone()),
        created: t.created,
        laid_out_bytes: t.laid_out_bytes,
        direct: t.direct.clone(),
        allocation: t.allocation.clone(),
        page_cache: t.page_cache.facts(),
        device_witness: None,
        removed_after_run,
        read,
        write,
    }
}

/// The CPUs the workers could run on: the union of their pinned CPUs when every worker is
/// pinned, else every CPU the process may use (empty when unknown: every online CPU).
fn worker_cpus(placed: &Placed) -> Vec<u32> {
    let workers = &placed.plan.workers;
    if !workers.is_empty() && workers.iter().all(|w| w.cpus.is_some()) {
        let set: std::collections::BTreeSet<u32> =
            workers.iter().flat_map(|w| w.cpus.iter().flatten().copied()).collect();
        return set.into_iter().collect();
    }
    placed.topology.as_ref().map(|(t, _)| t.allowed.clone()).unwrap_or_default()
}

/// The median latency of one op type's histogram, ns (0 when nothing completed).
fn headline_p50_ns(stats: &OpStats) -> u64 {
    if stats.ops == 0 { 0 } else { stats.latency.value_at_quantile(0.5) }
}
