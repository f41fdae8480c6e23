//! The text report: a header that summarises the spec, the I/O mode line,
//! then per op type IOPS, bandwidth and latency percentiles, totals and CPU.
//! Formats the `RunResult`; computes nothing.

use super::units;
use crate::result::{RunResult, StopReason};
use crate::spec::{AccessOrder, RunLength};
use crate::stats::OpSummary;
use std::fmt::Write as _;

pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    let s = &r.spec;
    let mix = match s.read_percent {
        100 => "reads".to_string(),
        0 => "writes".to_string(),
        p => format!("{p}% read / {}% write", 100 - p),
    };
    let order = match s.order {
        AccessOrder::Sequential => "sequential",
        AccessOrder::Random => "random",
    };
    let length = match s.run_length {
        RunLength::Duration { ns } => units::seconds_ns(ns),
        RunLength::UntilCovered => "until every block is done".to_string(),
    };
    let threads = if s.threads == 1 { "1 thread".to_string() } else { format!("{} threads", s.threads) };
    let _ = writeln!(
        out,
        "iopulse {} · {} · {} {order} {mix} · QD {} · {threads} · {length} · seed {}",
        r.tool.version,
        r.engine.name,
        units::bytes(s.block_size_bytes),
        r.engine.effective_queue_depth,
        s.seed
    );
    if r.engine.effective_queue_depth != r.engine.requested_queue_depth {
        let _ = writeln!(
            out,
            "          (queue depth {} requested; the engine completes one I/O at a time)",
            r.engine.requested_queue_depth
        );
    }
    for t in &r.targets {
        let fs = match (&t.filesystem, &t.device) {
            (Some(fs), Some(dev)) => format!(" · {fs} on {dev}"),
            (Some(fs), None) => format!(" · {fs}"),
            _ => String::new(),
        };
        let temp = if t.removed_after_run { " · temporary, removed after the run" } else { "" };
        let laid = if t.laid_out_bytes > 0 {
            format!(" · laid out {}", units::bytes(t.laid_out_bytes))
        } else {
            String::new()
        };
        let kind = match t.kind {
            crate::target::TargetKind::File => "file",
            crate::target::TargetKind::BlockDevice => "block device",
        };
        let _ = writeln!(
            out,
            "Target:   {} · {kind} · {} ({} blocks){fs}{laid}{temp}",
            t.path,
            units::bytes(t.size_bytes),
            units::count(t.blocks)
        );
    }
    let _ = writeln!(out, "{}", io_mode_line(r));
    if let Some(how) = r.engine.setup.get("buffered_io") {
        let _ = writeln!(out, "          {}: buffered I/O is {how}", r.engine.name);
    }
    match r.stop_reason {
        StopReason::Interrupted => {
            let _ = writeln!(out, "⚠ INTERRUPTED: partial results over {}", units::seconds_ns(r.window_ns));
        }
        StopReason::Error => {
            let _ = writeln!(
                out,
                "✗ STOPPED BY AN ERROR: results up to the error, over {}",
                units::seconds_ns(r.window_ns)
            );
        }
        _ => {}
    }
    out.push('\n');
    let both = r.read.ops > 0 && r.write.ops > 0;
    if r.read.ops > 0 || s.read_percent > 0 {
        op_block(&mut out, "read", &r.read);
    }
    if r.write.ops > 0 || s.read_percent < 100 {
        op_block(&mut out, "write", &r.write);
    }
    if both {
        let _ = writeln!(
            out,
            "{:<9} {} IOPS · {}",
            "total",
            units::iops(r.total.iops),
            units::bandwidth(r.total.bw_bytes_per_sec)
        );
    }
    let _ = writeln!(
        out,
        "{:<9} {} ops · {} in {}",
        "done",
        units::count(r.total.ops),
        units::bytes(r.total.bytes),
        units::seconds_ns(r.window_ns)
    );
    let _ = writeln!(
        out,
        "{:<9} user {} · sys {} · {} per I/O · {:.2} cores busy",
        "CPU",
        units::seconds_ns(r.cpu.workers.user_ns),
        units::seconds_ns(r.cpu.workers.sys_ns),
        units::latency_ns(r.cpu.per_io_ns.round() as u64),
        r.cpu.cores_busy
    );
    if let Some(c) = &r.coverage {
        let _ = writeln!(
            out,
            "{:<9} {} of {} blocks ({:.1}%)",
            "Coverage",
            units::count(c.blocks_accessed),
            units::count(c.blocks_in_region),
            c.fraction * 100.0
        );
    }
    if let Some(d) = &r.durability {
        let mut parts = Vec::new();
        if let Some(ns) = d.msync_ns {
            parts.push(format!("msync {}", units::latency_ns(ns)));
        }
        if let Some(ns) = d.fsync_ns {
            parts.push(format!("fsync {}", units::latency_ns(ns)));
        }
        let _ = writeln!(
            out,
            "{:<9} {} · {} after the I/O window (not in the figures above)",
            "Durable",
            parts.join(" · "),
            units::latency_ns(d.sync_ns)
        );
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "{:<9} {e}", "Error");
    }
    out
}

/// The I/O mode line, exactly as users grep for it.
pub fn io_mode_line(r: &RunResult) -> String {
    match (&r.direct.requested, &r.direct.effective, &r.direct.reason) {
        (true, true, _) => "I/O mode: ✓ O_DIRECT (page cache bypassed)".to_string(),
        (true, false, Some(reason)) => format!("I/O mode: ⚠ BUFFERED (O_DIRECT refused: {reason})"),
        (true, false, None) => "I/O mode: ⚠ BUFFERED (O_DIRECT refused)".to_string(),
        (false, _, _) => "I/O mode: BUFFERED (page cache)".to_string(),
    }
}

fn op_block(out: &mut String, name: &str, op: &OpSummary) {
    let _ = writeln!(
        out,
        "{name:<9} {} IOPS · {} · {} ops",
        units::iops(op.iops),
        units::bandwidth(op.bw_bytes_per_sec),
        units::count(op.ops)
    );
    if op.ops == 0 {
        return;
    }
    let l = &op.latency_ns;
    let lat = units::latency_ns;
    let _ = writeln!(out, "  latency min {} · mean {} · max {}", lat(l.min), lat(l.mean), lat(l.max));
    let _ = writeln!(
        out,
        "          p50 {} · p90 {} · p99 {} · p99.9 {} · p99.99 {}",
        lat(l.p50),
        lat(l.p90),
        lat(l.p99),
        lat(l.p99_9),
        lat(l.p99_99)
    );
    if op.clamped_samples > 0 {
        let _ = writeln!(out, "  ⚠ {} samples above 1 h were recorded as 1 h", units::count(op.clamped_samples));
    }
}
