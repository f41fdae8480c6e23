//! The text report: a header that summarises the spec, the I/O mode line,
//! then per op type IOPS, bandwidth and latency percentiles, totals and CPU.
//! Formats the `RunResult`; computes nothing.

use super::units;
use crate::result::{RunResult, StopReason};
use crate::spec::{AccessOrder, Distribution, FileDistribution, RunLength};
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
    let order = match (s.order, s.distribution) {
        (AccessOrder::Sequential, _) => "sequential".to_string(),
        (AccessOrder::Random, Distribution::Uniform) => "random".to_string(),
        (AccessOrder::Random, Distribution::Zipf { theta }) => format!("zipf(θ={theta})"),
        (AccessOrder::Random, Distribution::Pareto { h }) => format!("pareto(h={h})"),
        (AccessOrder::Random, Distribution::Gaussian { stddev, center }) => {
            format!("gaussian(center={center}, stddev={stddev})")
        }
    };
    let mut length = match s.run_length {
        RunLength::Duration { ns } => units::seconds_ns(ns),
        RunLength::UntilCovered => "until every block is done".to_string(),
        RunLength::UntilLimit => String::new(),
    };
    if let Some(limit) = s.ops_limit {
        let ops = format!("{} I/Os", units::count(limit));
        length = if length.is_empty() { ops } else { format!("{length} or {ops}") };
    }
    let layout = match s.file_distribution {
        FileDistribution::Shared => "",
        FileDistribution::PerWorker => " · a file per worker",
        FileDistribution::Partitioned => " · partitioned",
    };
    let threads = if s.threads == 1 { "1 thread".to_string() } else { format!("{} threads", s.threads) };
    let _ = writeln!(
        out,
        "iopulse {} · {} · {} {order} {mix} · QD {} · {threads}{layout} · {length} · seed {}",
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
            // Virtual filesystems name themselves as their source ("tmpfs on tmpfs").
            (Some(fs), Some(dev)) if dev.starts_with('/') => format!(" · {fs} on {dev}"),
            (Some(fs), _) => format!(" · {fs}"),
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
    if let Some(sources) = &r.merged_from {
        let list: Vec<String> = sources
            .iter()
            .map(|m| format!("{} ({}, {} IOPS, seed {})", m.file, m.hostname, units::iops(m.iops), m.seed))
            .collect();
        let _ = writeln!(out, "Merged:   {} concurrent results: {}", sources.len(), list.join(" · "));
    }
    let _ = writeln!(out, "{}", io_mode_line(r));
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
    if r.targets.len() > 1 {
        for t in &r.targets {
            let mut parts = Vec::new();
            for (name, op) in [("read", &t.read), ("write", &t.write)] {
                if op.ops > 0 {
                    parts.push(format!(
                        "{name} {} IOPS {} p99 {}",
                        units::iops(op.iops),
                        units::bandwidth(op.bw_bytes_per_sec),
                        units::latency_ns(op.latency_ns.p99)
                    ));
                }
            }
            let figures = if parts.is_empty() { "no I/O".to_string() } else { parts.join(" · ") };
            let _ = writeln!(out, "  {}: {figures}", t.path);
        }
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
    let _ = writeln!(out, "{}", queue_depth_line(r));
    if let Some(c) = &r.coverage {
        let approx = if c.exact { "" } else { "~" };
        let _ = writeln!(
            out,
            "{:<9} {approx}{} of {} blocks ({approx}{:.1}%) · hottest 1% of them took {:.1}% of I/Os, hottest 20% took {:.1}%{}",
            "Coverage",
            units::count(c.blocks_accessed),
            units::count(c.blocks_in_region),
            c.fraction * 100.0,
            c.hottest_1pct_share * 100.0,
            c.hottest_20pct_share * 100.0,
            if c.sampled_blocks < c.blocks_in_region {
                format!(" (sampled over {} blocks)", units::count(c.sampled_blocks))
            } else {
                String::new()
            }
        );
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "{:<9} {e}", "Error");
    }
    out
}

/// Requested queue depth next to the achieved one (Little's law), per worker; a queue
/// that stays below half of its depth is marked starved.
pub fn queue_depth_line(r: &RunResult) -> String {
    let effective = r.engine.effective_queue_depth;
    let achieved = r.achieved_queue_depth.mean_per_worker;
    let requested = if effective == r.engine.requested_queue_depth {
        format!("{effective} requested")
    } else {
        format!("{} requested ({effective} effective)", r.engine.requested_queue_depth)
    };
    let starved = if effective > 1 && achieved < f64::from(effective) / 2.0 { " · ⚠ starved queue" } else { "" };
    let mut line = format!(
        "{:<9} {requested} · {} achieved per worker (IOPS × mean latency){starved}",
        "QD",
        queue_depth(achieved)
    );
    if r.workers.len() > 1 {
        let depths: Vec<String> = r.workers.iter().map(|w| queue_depth(w.achieved_queue_depth)).collect();
        let shown = if depths.len() <= 8 {
            depths.join(" · ")
        } else {
            format!("{} · ... · {}", depths[..4].join(" · "), depths[depths.len() - 2..].join(" · "))
        };
        let _ = write!(
            line,
            "\n{:<9} workers {shown} · {} in flight in total",
            "",
            queue_depth(r.achieved_queue_depth.total)
        );
    }
    line
}

/// 31.24 → "31.2", 0.934 → "0.93".
fn queue_depth(v: f64) -> String {
    if v >= 10.0 { format!("{v:.1}") } else { format!("{v:.2}") }
}

/// The I/O mode line, exactly as users grep for it.
pub fn io_mode_line(r: &RunResult) -> String {
    match (&r.direct.requested, &r.direct.effective, &r.direct.reason) {
        (true, true, _) if r.direct.memory_backed => {
            "I/O mode: ⚠ O_DIRECT on a memory filesystem (accepted, but served from memory)".to_string()
        }
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
