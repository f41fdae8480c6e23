//! The text report: a header that summarises the spec, the I/O mode line,
//! then per op type IOPS, bandwidth and latency percentiles, totals and CPU.
//! Formats the `RunResult`; computes nothing.
//!
//! `render` puts the report together in its order; the lines about the storage
//! (`storage.rs`), the machine (`machine.rs`), how the run went (`outcome.rs`) and the
//! blocks of figures (`figures.rs`) are each in a file of their own.

use super::units;
use crate::figures::result::{RunResult, StopReason};
use crate::workload::spec::{AccessOrder, Distribution, FileDistribution, RunLength};
use std::fmt::Write as _;

mod figures;
mod machine;
mod outcome;
mod storage;

use figures::{
    block_size_table, data_reduction_line, flush_block, latency_lines, op_block, pacing_block, replay_block,
    verification_block,
};
pub use machine::window_line;
use machine::{CLUSTER_TARGETS_SHOWN, cpu_lines, cpu_state_line, placement_lines, queue_depth_line, rank_table};
use outcome::{expectation_lines, fault_lines, ramp_and_steady_lines};
use storage::{cache_line, device_lines, hole_lines, io_mode_line};

/// The mark on every figure of a run that read holes or unwritten extents as they are.
pub const HOLES_MARK: &str = "⚠ includes holes (not the device)";

pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    headline(&mut out, r);
    let shown_targets = target_lines(&mut out, r);
    setting_lines(&mut out, r, shown_targets);
    out.push('\n');
    figure_lines(&mut out, r, shown_targets);
    closing_lines(&mut out, r);
    out
}

/// The first line: the workload as the run did it (or the replay), and the depth the
/// engine really had.
fn headline(out: &mut String, r: &RunResult) {
    let s = &r.spec;
    let mix = match s.access.read_percent {
        100 => "reads".to_string(),
        0 => "writes".to_string(),
        p => format!("{p}% read / {}% write", 100 - p),
    };
    // Trims take their share first; reads and writes split the rest.
    let mix = match s.access.trim_percent {
        0 => mix,
        100 => "trims".to_string(),
        t => format!("{t}% trim, the rest {mix}"),
    };
    let order = match (s.access.order, s.access.distribution) {
        (AccessOrder::Sequential, _) => "sequential".to_string(),
        (AccessOrder::Random, Distribution::Uniform) => "random".to_string(),
        (AccessOrder::Random, Distribution::Zipf { theta }) => format!("zipf(θ={theta})"),
        (AccessOrder::Random, Distribution::Pareto { h }) => format!("pareto(h={h})"),
        (AccessOrder::Random, Distribution::Gaussian { stddev, center }) => {
            format!("gaussian(center={center}, stddev={stddev})")
        }
        (AccessOrder::Random, Distribution::Zoned { zones }) => {
            format!("{}({})", s.access.distribution.name(), zones.to_text())
        }
    };
    let order = match s.access.random_percent {
        Some(p) if p < 100 => format!("{order} ({p}% jumps, the rest sequential)"),
        _ => order,
    };
    let mut length = match s.window.run_length {
        RunLength::Duration { ns } => units::seconds_ns(ns),
        RunLength::UntilCovered => "until every block is done".to_string(),
        RunLength::UntilLimit => String::new(),
    };
    if let Some(limit) = s.window.ops_limit {
        let ops = match s.window.io_limit_percent {
            Some(p) => format!("{} I/Os ({p}% of each worker's region)", units::count(limit)),
            None => format!("{} I/Os", units::count(limit)),
        };
        length = if length.is_empty() { ops } else { format!("{length} or {ops}") };
    }
    let layout = match s.access.file_distribution {
        FileDistribution::Shared => "",
        FileDistribution::PerWorker => " · a file per worker",
        FileDistribution::Partitioned => " · partitioned",
    };
    let threads = if s.shape.threads == 1 { "1 thread".to_string() } else { format!("{} threads", s.shape.threads) };
    if let Some(replay) = &r.schedule.replay {
        // A replay's sizes, order and mix are the trace's.
        let timing =
            replay.timing.speed.map_or("as fast as possible".to_string(), |x| format!("at {x}× the trace's times"));
        let _ = writeln!(
            out,
            "iopulse {} · {} · replay of {} ({}) {timing} · QD {} · {length}",
            r.tool.version,
            r.engine.name,
            replay.trace_files.first().map_or("", String::as_str),
            replay.format.name(),
            r.engine.effective_queue_depth,
        );
    } else {
        let _ = writeln!(
            out,
            "iopulse {} · {} · {} {order} {mix} · QD {} · {threads}{layout} · {length} · seed {}",
            r.tool.version,
            r.engine.name,
            crate::output::report::block_size_text(s),
            r.engine.effective_queue_depth,
            s.seed
        );
    }
    if r.engine.effective_queue_depth != r.engine.requested_queue_depth {
        let _ = writeln!(
            out,
            "          (queue depth {} requested; the engine completes one I/O at a time)",
            r.engine.requested_queue_depth
        );
    }
}

/// A line per target (a cluster's first few); returns how many were shown.
fn target_lines(out: &mut String, r: &RunResult) -> usize {
    // A cluster has a target or more per rank: the first few, and the rest in the JSON.
    let shown_targets = match &r.combined.cluster {
        Some(_) if r.targets.len() > CLUSTER_TARGETS_SHOWN => CLUSTER_TARGETS_SHOWN - 1,
        _ => r.targets.len(),
    };
    for t in &r.targets[..shown_targets] {
        let fs = match (&t.storage.filesystem, &t.storage.device) {
            // Virtual filesystems name themselves as their source ("tmpfs on tmpfs").
            (Some(fs), Some(dev)) if dev.starts_with('/') => format!(" · {fs} on {dev}"),
            (Some(fs), _) => format!(" · {fs}"),
            _ => String::new(),
        };
        let temp = if t.removed_after_run { " · temporary, removed after the run" } else { "" };
        let untouched = if r.data.storage_touched { "" } else { " · not touched" };
        let laid = if t.laid_out_bytes > 0 {
            format!(" · laid out {}", units::bytes(t.laid_out_bytes))
        } else {
            String::new()
        };
        let kind = match t.kind {
            crate::storage::targets::TargetKind::File => "file",
            crate::storage::targets::TargetKind::BlockDevice => "block device",
        };
        let _ = writeln!(
            out,
            "Target:   {} · {kind} · {} ({} blocks){fs}{laid}{temp}{untouched}",
            t.path,
            units::bytes(t.size_bytes),
            units::count(t.blocks)
        );
    }
    if shown_targets < r.targets.len() {
        let _ = writeln!(out, "Target:   … {} targets in all (every rank's are in the JSON)", r.targets.len());
    }
    shown_targets
}

/// Where and how the run ran: cluster, merged sources, start, I/O mode, cache, device,
/// holes, placement, how it stopped, ramp and steady state.
fn setting_lines(out: &mut String, r: &RunResult, shown_targets: usize) {
    if let Some(c) = &r.combined.cluster {
        let hosts = if c.hosts.len() <= 4 { format!(" ({})", c.hosts.join(", ")) } else { String::new() };
        let _ = writeln!(
            out,
            "Cluster:  {} ranks on {} {}{hosts} · {} · one window per rank, opened together",
            c.size,
            c.hosts.len(),
            if c.hosts.len() == 1 { "host" } else { "hosts" },
            c.launcher.to_uppercase()
        );
    }
    if let (Some(sources), None) = (&r.combined.merged_from, &r.combined.cluster) {
        let list: Vec<String> = sources
            .iter()
            .map(|m| format!("{} ({}, {} IOPS, seed {})", m.file, m.hostname, units::iops(m.iops), m.seed))
            .collect();
        let _ = writeln!(out, "Merged:   {} concurrent results: {}", sources.len(), list.join(" · "));
    }
    if let Some(w) = &r.combined.window_skew {
        let _ = writeln!(out, "{}", window_line(w));
    }
    if let Some(s) = &r.window.start_at {
        let how = if s.missed { "⚠ missed: the run was ready only" } else { "opened" };
        let _ = writeln!(out, "Start at: {} · {how} {} after it", s.requested, units::latency_ns(s.late_ns));
    }
    let _ = writeln!(out, "{}", io_mode_line(r));
    if let Some(line) = cache_line(r) {
        let _ = writeln!(out, "{line}");
    }
    for line in device_lines(r) {
        let _ = writeln!(out, "{line}");
    }
    for line in hole_lines(r, shown_targets) {
        let _ = writeln!(out, "{line}");
    }
    for line in placement_lines(r) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(how) = r.engine.setup.get("buffered_io") {
        let _ = writeln!(out, "          {}: buffered I/O is {how}", r.engine.name);
    }
    match r.window.stop_reason {
        StopReason::Interrupted => {
            let _ = writeln!(out, "⚠ INTERRUPTED: partial results over {}", units::seconds_ns(r.window.window_ns));
        }
        StopReason::Error => {
            let _ = writeln!(
                out,
                "✗ STOPPED BY AN ERROR: results up to the error, over {}",
                units::seconds_ns(r.window.window_ns)
            );
        }
        _ => {}
    }
    for line in ramp_and_steady_lines(r) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(note) = &r.data.holes_read {
        let _ = writeln!(out, "⚠ HOLES READ ({HOLES_MARK}): {note}");
    }
}

/// The figures: per op type, per size, the total, per target and what was done.
fn figure_lines(out: &mut String, r: &RunResult, shown_targets: usize) {
    let s = &r.spec;
    // Every figure of a run that read holes carries the mark.
    let mark = if r.data.holes_read.is_some() { format!(" · {HOLES_MARK}") } else { String::new() };
    let both = r.figures.read.ops > 0 && r.figures.write.ops > 0;
    // With every I/O a trim (`--trim-percent 100`) there are no reads or writes to show,
    // nor in a replay of a trace without any.
    let transfers = s.access.trim_percent < 100 && s.replay.as_ref().is_none_or(|t| t.reads + t.writes > 0);
    if r.figures.read.ops > 0 || (transfers && s.access.read_percent > 0) {
        op_block(out, "read", &r.figures.read, &mark);
    }
    if r.figures.write.ops > 0 || (transfers && s.access.read_percent < 100) {
        op_block(out, "write", &r.figures.write, &mark);
    }
    if let (Some(f), Some(spec)) = (&r.figures.flush, &s.durability.flush) {
        // The call a flush is: fsync/fdatasync, or msync where writes are stores into a mapping.
        let call = r.engine.setup.get("flush_call").map_or(spec.kind.name(), String::as_str);
        flush_block(out, f, spec, call);
    } else if let (Some(f), Some(t)) = (&r.figures.flush, s.replay.as_ref().filter(|t| t.flushes > 0)) {
        // A replay's flushes: the trace's own, each once the I/Os before it completed.
        let _ = writeln!(
            out,
            "{:<9} {} of the trace's {} (fsync/fdatasync, each after the I/Os before it) · {}/s · p99 {}",
            "flush",
            units::count(f.ops),
            units::count(t.flushes),
            units::iops(f.iops),
            units::latency_ns(f.latency_ns.p99)
        );
        latency_lines(out, f);
    } else if let (Some(f), true) = (&r.figures.flush, s.durability.end_fsync) {
        // `--end-fsync` alone: the flushes at the end, inside the window.
        let _ = writeln!(
            out,
            "{:<9} {} fsync at the end of the window (--end-fsync) · took {} · inside the window and its figures",
            "flush",
            units::count(f.ops),
            units::latency_ns(u64::try_from(u128::from(f.latency_ns.mean) * u128::from(f.ops)).unwrap_or(u64::MAX))
        );
    }
    // Trims: bytes discarded, as an operation of their own (not in the total).
    if let Some(t) = &r.figures.trim {
        op_block(out, "trim", t, &mark);
    }
    block_size_table(out, r);
    if both {
        let _ = writeln!(
            out,
            "{:<9} {} IOPS · {}{mark}",
            "total",
            units::iops(r.figures.total.iops),
            units::bandwidth(r.figures.total.bw_bytes_per_sec)
        );
    }
    if r.targets.len() > 1 && shown_targets == r.targets.len() {
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
        units::count(r.figures.total.ops),
        units::bytes(r.figures.total.bytes),
        units::seconds_ns(r.window.window_ns)
    );
}

/// After the figures: the cluster's ranks, CPU, depth, coverage and zones, pacing, replay,
/// data, verification, durability, faults, expectations and the error.
fn closing_lines(out: &mut String, r: &RunResult) {
    if let Some(c) = &r.combined.cluster {
        rank_table(out, c);
    }
    for line in cpu_lines(&r.machine.cpu) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = cpu_state_line(r) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{}", queue_depth_line(r));
    coverage_and_zone_lines(out, r);
    if let Some(p) = &r.schedule.pacing {
        pacing_block(out, p);
    }
    if let Some(replay) = &r.schedule.replay {
        replay_block(out, replay);
    }
    if let Some(d) = &r.data.data_reduction {
        data_reduction_line(out, d);
    }
    if let Some(v) = &r.data.verification {
        verification_block(out, v);
    }
    if let Some(d) = &r.data.durability {
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
    fault_lines(out, r);
    expectation_lines(out, &r.outcome.expectations);
    if let Some(e) = &r.outcome.error {
        let _ = writeln!(out, "{:<9} {e}", "Error");
    }
}

/// How much of the region the run touched, and the I/Os each zone took.
fn coverage_and_zone_lines(out: &mut String, r: &RunResult) {
    if let Some(c) = &r.figures.coverage {
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
    if !r.figures.zones.is_empty() {
        let share = |z: &crate::figures::result::ZoneShare| {
            format!("{:.1}% (asked {}%)", z.io_percent_achieved, z.io_percent_asked)
        };
        if r.figures.zones.iter().all(|z| z.direction.is_none()) {
            let shares: Vec<String> = r.figures.zones.iter().map(share).collect();
            let _ = writeln!(out, "{:<9} I/Os per zone, in order: {}", "Zones", shares.join(" · "));
        } else {
            // Zones per direction: a line for each direction's set, its shares of its own I/Os.
            let mut first = true;
            for direction in ["read", "write", "trim"] {
                let set: Vec<String> =
                    r.figures.zones.iter().filter(|z| z.direction.as_deref() == Some(direction)).map(share).collect();
                if set.is_empty() {
                    continue;
                }
                let head = if first { "Zones" } else { "" };
                let _ = writeln!(out, "{head:<9} {direction}s' zones, in order: {}", set.join(" · "));
                first = false;
            }
        }
    }
}
