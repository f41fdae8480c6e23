//! The report's lines about how the run went: expectations, faults and errors, ramp and
//! steady state. Formats; computes nothing.

use crate::figures::result::RunResult;
use crate::output::report::units;
use std::fmt::Write as _;

/// `--expect`: each expectation with the run's figure and whether it held.
pub(super) fn expectation_lines(out: &mut String, expectations: &[crate::figures::result::ExpectationOutcome]) {
    for e in expectations {
        let figure = e.value.map_or_else(
            || "none (the run has no such figure)".to_string(),
            |v| crate::output::report::compare::value(e.unit, v),
        );
        let _ = writeln!(
            out,
            "{:<9} {} {:<24} {} is {figure}",
            "Expect",
            if e.passed { "pass" } else { "FAIL" },
            e.expectation,
            e.figure,
        );
    }
}

/// Offsets shown per kind of I/O error; the JSON has up to eight.
const ERROR_OFFSETS_SHOWN: usize = 4;

/// Memory planned, failed I/Os by op type and errno, and workers left behind.
pub(super) fn fault_lines(out: &mut String, r: &RunResult) {
    if let Some(m) = &r.machine.memory {
        let mut parts = vec![format!("buffers {}", units::bytes(m.buffers_bytes))];
        for (what, bytes) in [
            ("histograms", m.histograms_bytes),
            ("coverage", m.coverage_bytes),
            ("verify", m.verify_bytes),
            ("queues", m.queues_bytes),
            ("replay schedule", m.schedule_bytes),
            ("iolog", m.iolog_bytes),
        ] {
            if bytes > 0 {
                parts.push(format!("{what} {}", units::bytes(bytes)));
            }
        }
        let mut available = match (&m.cgroup, m.available_bytes) {
            // Inside a memory cgroup whose room is less than the machine's: the room under it.
            (Some(cg), a) if a.is_none_or(|a| cg.room_bytes < a) => format!(
                " · {} available under memory cgroup {} (limit {})",
                units::bytes(cg.room_bytes),
                cg.path,
                units::bytes(cg.max_bytes)
            ),
            (_, a) => a.map_or(String::new(), |a| format!(" · {} available", units::bytes(a))),
        };
        if let Some(peak) = m.peak_resident_bytes {
            let _ = write!(available, " · peak resident {}", units::bytes(peak));
        }
        if let Some(huge) = m.huge_page_bytes.filter(|&h| h > 0) {
            let _ = write!(available, " · {} on huge pages", units::bytes(huge));
        }
        let _ =
            writeln!(out, "{:<9} {} planned ({}){available}", "Memory", units::bytes(m.total_bytes), parts.join(" · "));
    }
    let e = &r.outcome.io_errors;
    if e.total > 0 {
        let limit = match e.limit {
            Some(1) => String::new(),
            Some(n) => format!(" (--max-errors {n})"),
            None => " (--continue-on-error)".to_string(),
        };
        let what = if e.total == 1 { "1 I/O".to_string() } else { format!("{} I/Os", units::count(e.total)) };
        let _ = writeln!(out, "{:<9} {what} failed{limit}, not counted above", "Errors");
        for k in &e.kinds {
            let mut at: Vec<String> = k
                .first
                .iter()
                .take(ERROR_OFFSETS_SHOWN)
                .map(|a| format!("{} at {}", a.target, a.offset_bytes))
                .collect();
            if (k.count as usize) > at.len() {
                at.push("...".into());
            }
            let _ =
                writeln!(out, "  {} {} x{} ({}): {}", k.op, k.errno, units::count(k.count), k.message, at.join(", "));
        }
        if e.other > 0 {
            let _ = writeln!(out, "  other kinds x{}", units::count(e.other));
        }
    }
    for s in &r.outcome.stuck_io {
        let what = match (&s.op, &s.target, s.offset_bytes) {
            (Some(op), Some(t), Some(o)) => format!("{op} {t} at offset {o}"),
            _ => "no I/O named".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<9} worker {}: {what}, in flight for {} ({} in flight, {}): not joined, its figures are missing",
            "⚠ Stuck",
            s.worker,
            units::seconds_ns(s.in_flight_ns),
            if s.in_flight_ios == 1 { "1 I/O".to_string() } else { format!("{} I/Os", s.in_flight_ios) },
            s.cause.replace('_', " ")
        );
    }
}

/// `--ramp` (ran, not counted) and `--steady-state` (reached when, over which window, and
/// the whole run's figures beside the window's; or, loudly, not reached).
pub(super) fn ramp_and_steady_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    if r.window.ramp_ns > 0 {
        lines.push(format!(
            "Ramp:     {} before the window, not counted ({} ops); the window is the {} after it",
            units::seconds_ns(r.window.ramp_ns),
            units::count(r.window.ramp_ops),
            units::seconds_ns(r.window.window_ns)
        ));
    }
    if let Some(s) = &r.window.steady_state {
        let window = format!(
            "{} ({} × {})",
            units::seconds_ns(s.window_ns),
            s.window_intervals,
            units::seconds_ns(s.window_ns / u64::from(s.window_intervals.max(1)))
        );
        match (&s.window, s.reached, &s.whole_run) {
            (Some(w), true, whole) => {
                lines.push(format!(
                    "Steady:   reached at {} ({} over {window}: {} ≤ {}); the figures below are the steady window's, {} to {}, as fio reports them",
                    units::seconds_ns(s.reached_at_ns.unwrap_or(w.end_ns)),
                    s.criterion,
                    test_figure(s, w.test.figure),
                    test_figure(s, w.test.bound),
                    units::seconds_ns(w.start_ns),
                    units::seconds_ns(w.end_ns)
                ));
                if let Some(whole) = whole {
                    lines.push(format!(
                        "          whole run: {} IOPS · {} · {} ops in {}",
                        units::iops(whole.total.iops),
                        units::bandwidth(whole.total.bw_bytes_per_sec),
                        units::count(whole.total.ops),
                        units::seconds_ns(whole.window_ns)
                    ));
                }
            }
            (last, _, _) => {
                let why = last.as_ref().map_or_else(
                    || "the window never filled".to_string(),
                    |w| format!("last window {} > {}", test_figure(s, w.test.figure), test_figure(s, w.test.bound)),
                );
                lines.push(format!(
                    "⚠ STEADY STATE NOT REACHED: {} over {window} ({why}); the figures are the whole run's",
                    s.criterion
                ));
            }
        }
    }
    lines
}

/// A steady-state test's figure in its metric's unit (per second for a slope).
fn test_figure(s: &crate::figures::result::SteadyStateInfo, v: f64) -> String {
    use crate::io::stats::steady_state::{Metric, Test};
    let shown = match s.metric {
        Metric::Iops => format!("{} IOPS", units::iops(v)),
        Metric::Bandwidth => units::bandwidth(v),
        Metric::MeanLatency => units::latency_ns(v.round() as u64),
    };
    if s.test == Test::Slope { format!("{shown}/s") } else { shown }
}
