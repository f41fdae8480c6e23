//! How a run ended, as its result says it: the failure worded (an I/O's, an engine's, a
//! worker left behind, a flush's), why it stopped, what was made durable after the window,
//! and a steady state's verdict. Words; never measures.

use crate::base::diagnostics::warnings::Diagnostics;
use crate::coordination::run::messages::{describe_failure, describe_stuck, ios};
use crate::coordination::run::watchdog::{self, AbandonCause, Abandoned};
use crate::figures::result::{Durability, StopReason, StuckIo};
use crate::figures::result::{SteadyStateInfo, SteadyWindow};
use crate::io::stats::OpStats;
use crate::io::stats::interval;
use crate::io::stats::steady_state::{Metric, SteadyWatch, Test};
use crate::io::worker::{WorkerResult, WorkerStop, stop_code};
use crate::storage::targets::PreparedTarget;
use crate::workload::spec::Spec;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `--steady-state`: what the watch saw, as the result says it; a loud warning when the
/// run was not steady.
pub(super) fn steady_info(
    spec: &Spec,
    watch: &SteadyWatch,
    window: Option<&crate::io::stats::interval::Snapshot>,
    diag: &Diagnostics,
) -> SteadyStateInfo {
    let criterion = watch.criterion();
    let interval_ns = spec.output.interval_ns;
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
        crate::io::stats::add_histogram(&mut s.latency, h);
        s
    };
    let window_info = watch.window_epochs().zip(watch.figures()).zip(window).map(|(((first, last), test), win)| {
        let rows = interval::ramp_rows(spec.window.ramp_ns, interval_ns);
        let end_of = |e: u64| spec.window.ramp_ns + (e + 1 - rows) * interval_ns;
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
    let shown = |ns: u64| crate::base::units::display::seconds_ns(ns);
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

/// How the run ended: its I/O errors, the workers left behind, the failure worded (if
/// any), why it stopped, and what was made durable after the window.
pub(super) struct Outcome {
    pub(super) io_errors: crate::io::stats::io_errors::ErrorSummary,
    pub(super) stuck_io: Vec<StuckIo>,
    pub(super) failure: Option<String>,
    pub(super) stop_reason: StopReason,
    pub(super) durability: Option<Durability>,
}

impl Outcome {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn of(
        spec: &Spec,
        targets: &[PreparedTarget],
        workers: &[WorkerResult],
        abandoned: &[Abandoned],
        fsync: Option<&Result<u64, String>>,
        write_bytes: u64,
        stop: &AtomicUsize,
        steady_reached: bool,
        diag: &Diagnostics,
    ) -> Self {
        let io_errors = crate::io::stats::io_errors::summarize(
            workers.iter().map(|w| &w.failures.errors),
            spec.error_limit(),
            |t| targets.get(t as usize).map_or_else(|| format!("target #{t}"), |t| t.plan.path.display().to_string()),
        );
        let stuck_io: Vec<StuckIo> = abandoned.iter().map(|a| stuck_info(a, targets)).collect();
        for (a, s) in abandoned.iter().zip(&stuck_io) {
            if a.cause == AbandonCause::Signal {
                diag.warn(format!(
                "worker {} had not stopped {} after the signal ({}): its figures are not in the report, and iopulse exits without waiting for it",
                a.index,
                crate::base::units::display::seconds_ns(watchdog::STOP_GRACE_NS),
                describe_stuck(s)
            ));
            }
        }
        let stuck_failure =
            abandoned.iter().zip(&stuck_io).find(|(a, _)| a.cause != AbandonCause::Signal).map(|(a, s)| {
                let what = match a.cause {
                    AbandonCause::IoTimeout => format!(
                        "I/O timeout: worker {}: {} (--io-timeout {})",
                        a.index,
                        describe_stuck(s),
                        crate::base::units::display::seconds_ns(spec.errors.io_timeout_ns)
                    ),
                    _ => format!(
                        "worker {} had not stopped {} after the run was stopped ({})",
                        a.index,
                        crate::base::units::display::seconds_ns(spec.errors.io_timeout_ns),
                        describe_stuck(s)
                    ),
                };
                format!("{what}; its figures are not in the report, and iopulse exits without waiting for it")
            });
        let limit = spec.error_limit();
        let failure = workers
            .iter()
            .find_map(|w| {
                w.failures
                    .failure
                    .map(|f| {
                        let first = describe_failure(&f, targets, write_bytes);
                        match limit {
                            Some(n) if n > 1 => {
                                format!("--max-errors {n} reached ({} failed); the last: {first}", ios(io_errors.total))
                            }
                            _ => first,
                        }
                    })
                    .or_else(|| w.failures.engine_error.clone().map(|m| format!("worker {}: {m}", w.index)))
            })
            .or(stuck_failure)
            .or_else(|| fsync.and_then(|r| r.as_ref().err().cloned()));
        let msync_ns = workers.iter().filter_map(|w| w.data.sync_ns).max();
        let fsync_ns = fsync.and_then(|r| r.as_ref().ok().copied());
        let durability = (msync_ns.is_some() || fsync_ns.is_some()).then(|| Durability {
            msync_ns,
            fsync_ns,
            sync_ns: msync_ns.unwrap_or(0) + fsync_ns.unwrap_or(0),
        });
        let signalled = stop_code::is_signal(stop.load(Ordering::Relaxed));
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

        Self { io_errors, stuck_io, failure, stop_reason, durability }
    }
}
