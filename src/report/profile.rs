//! The report of a profile run (`iopulse` with no target, `iopulse --profile NAME`): one
//! table, a row per step (its job): the I/O mode it really ran with, MB/s, IOPS and the
//! p50/p99 latency (and, for a step that flushes, a line with the flush latency), under a
//! line saying which profile ran on which target. The figures are
//! each job's result as computed; this module only lays them out.

use super::units;
use crate::result::RunResult;
use crate::result::jobs::JobsResult;
use std::fmt::Write as _;

/// The table of `doc`, the result of profile `name`.
pub fn text(name: &str, doc: &JobsResult) -> String {
    let mut out = String::new();
    let target = doc.jobs.first().and_then(|j| j.result.targets.first());
    let _ = write!(out, "iopulse {} · profile {name}", env!("CARGO_PKG_VERSION"));
    if let Some(t) = target {
        let _ = write!(out, " · {}", t.path);
        if let Some(fs) = &t.filesystem {
            let _ = write!(out, " · {fs}");
        }
        if let Some(device) = &t.device {
            let _ = write!(out, " on {device}");
        }
        let _ = write!(out, " · {}", units::bytes(t.size_bytes));
        if t.removed_after_run {
            out.push_str(" (temporary, removed)");
        }
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<20} {:<22} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "step", "I/O mode", "MB/s", "IOPS", "p50", "p99", "time"
    );
    for job in &doc.jobs {
        let r = &job.result;
        let _ = writeln!(
            out,
            "{:<20} {:<22} {:>10} {:>10} {:>10} {:>10} {:>8}",
            shown(&job.job),
            io_mode(r),
            format!("{:.1}", r.total.bw_bytes_per_sec / 1e6),
            units::iops(r.total.iops),
            units::latency_ns(r.total.latency_ns.p50),
            units::latency_ns(r.total.latency_ns.p99),
            units::seconds_ns(r.window_ns)
        );
        // A step that flushes (the etcd check): the flush latency is what it is read for.
        if let (Some(f), Some(spec)) = (&r.flush, &r.spec.flush) {
            let _ = writeln!(
                out,
                "{:<20} {} {} · p50 {} · p99 {} · p99.9 {} · max {}",
                "  flush",
                units::count(f.ops),
                spec.kind.name(),
                units::latency_ns(f.latency_ns.p50),
                units::latency_ns(f.latency_ns.p99),
                units::latency_ns(f.latency_ns.p99_9),
                units::latency_ns(f.latency_ns.max)
            );
        }
    }
    let _ = writeln!(
        out,
        "MB/s is 10^6 bytes per second; latency is per I/O, from submission to completion. Each step's full result: --output-format json"
    );
    out
}

/// How the step's I/O really went: O_DIRECT, O_DIRECT on memory (tmpfs), or buffered
/// (with why when O_DIRECT was asked for and refused).
fn io_mode(r: &RunResult) -> &'static str {
    match (r.direct.requested, r.direct.effective, r.direct.memory_backed) {
        (_, true, true) => "O_DIRECT (in memory)",
        (_, true, false) => "O_DIRECT",
        (true, false, _) => "buffered (no O_DIRECT)",
        (false, false, _) => "buffered",
    }
}

fn shown(name: &str) -> String {
    if name.chars().count() > 20 { name.chars().take(19).collect::<String>() + "…" } else { name.to_string() }
}
