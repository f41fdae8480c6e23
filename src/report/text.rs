//! The text report: a header that summarises the spec, the I/O mode line,
//! then per op type IOPS, bandwidth and latency percentiles, totals and CPU.
//! Formats the `RunResult`; computes nothing.

use super::units;
use crate::placement::format_list;
use crate::result::{RunResult, StopReason};
use crate::spec::{AccessOrder, Distribution, FileDistribution, RunLength};
use crate::stats::OpSummary;
use std::fmt::Write as _;

/// The mark on every figure of a run that read holes or unwritten extents as they are.
pub const HOLES_MARK: &str = "⚠ includes holes (not the device)";

pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    let s = &r.spec;
    let mix = match s.read_percent {
        100 => "reads".to_string(),
        0 => "writes".to_string(),
        p => format!("{p}% read / {}% write", 100 - p),
    };
    // Trims take their share first; reads and writes split the rest.
    let mix = match s.trim_percent {
        0 => mix,
        100 => "trims".to_string(),
        t => format!("{t}% trim, the rest {mix}"),
    };
    let order = match (s.order, s.distribution) {
        (AccessOrder::Sequential, _) => "sequential".to_string(),
        (AccessOrder::Random, Distribution::Uniform) => "random".to_string(),
        (AccessOrder::Random, Distribution::Zipf { theta }) => format!("zipf(θ={theta})"),
        (AccessOrder::Random, Distribution::Pareto { h }) => format!("pareto(h={h})"),
        (AccessOrder::Random, Distribution::Gaussian { stddev, center }) => {
            format!("gaussian(center={center}, stddev={stddev})")
        }
        (AccessOrder::Random, Distribution::Zoned { zones }) => {
            format!("{}({})", s.distribution.name(), zones.to_text())
        }
    };
    let order = match s.random_percent {
        Some(p) if p < 100 => format!("{order} ({p}% jumps, the rest sequential)"),
        _ => order,
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
    if let Some(replay) = &r.replay {
        // A replay's sizes, order and mix are the trace's.
        let timing = replay.speed.map_or("as fast as possible".to_string(), |x| format!("at {x}× the trace's times"));
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
            super::block_size_text(s),
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
    // A cluster has a target or more per rank: the first few, and the rest in the JSON.
    let shown_targets = match &r.cluster {
        Some(_) if r.targets.len() > CLUSTER_TARGETS_SHOWN => CLUSTER_TARGETS_SHOWN - 1,
        _ => r.targets.len(),
    };
    for t in &r.targets[..shown_targets] {
        let fs = match (&t.filesystem, &t.device) {
            // Virtual filesystems name themselves as their source ("tmpfs on tmpfs").
            (Some(fs), Some(dev)) if dev.starts_with('/') => format!(" · {fs} on {dev}"),
            (Some(fs), _) => format!(" · {fs}"),
            _ => String::new(),
        };
        let temp = if t.removed_after_run { " · temporary, removed after the run" } else { "" };
        let untouched = if r.storage_touched { "" } else { " · not touched" };
        let laid = if t.laid_out_bytes > 0 {
            format!(" · laid out {}", units::bytes(t.laid_out_bytes))
        } else {
            String::new()
        };
        let kind = match t.kind {
            crate::targets::TargetKind::File => "file",
            crate::targets::TargetKind::BlockDevice => "block device",
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
    if let Some(c) = &r.cluster {
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
    if let (Some(sources), None) = (&r.merged_from, &r.cluster) {
        let list: Vec<String> = sources
            .iter()
            .map(|m| format!("{} ({}, {} IOPS, seed {})", m.file, m.hostname, units::iops(m.iops), m.seed))
            .collect();
        let _ = writeln!(out, "Merged:   {} concurrent results: {}", sources.len(), list.join(" · "));
    }
    if let Some(w) = &r.window_skew {
        let _ = writeln!(out, "{}", window_line(w));
    }
    if let Some(s) = &r.start_at {
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
    for line in ramp_and_steady_lines(r) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(note) = &r.holes_read {
        let _ = writeln!(out, "⚠ HOLES READ ({HOLES_MARK}): {note}");
    }
    out.push('\n');
    // Every figure of a run that read holes carries the mark.
    let mark = if r.holes_read.is_some() { format!(" · {HOLES_MARK}") } else { String::new() };
    let both = r.read.ops > 0 && r.write.ops > 0;
    // With every I/O a trim (`--trim-percent 100`) there are no reads or writes to show,
    // nor in a replay of a trace without any.
    let transfers = s.trim_percent < 100 && s.replay.as_ref().is_none_or(|t| t.reads + t.writes > 0);
    if r.read.ops > 0 || (transfers && s.read_percent > 0) {
        op_block(&mut out, "read", &r.read, &mark);
    }
    if r.write.ops > 0 || (transfers && s.read_percent < 100) {
        op_block(&mut out, "write", &r.write, &mark);
    }
    if let (Some(f), Some(spec)) = (&r.flush, &s.flush) {
        // The call a flush is: fsync/fdatasync, or msync where writes are stores into a mapping.
        let call = r.engine.setup.get("flush_call").map_or(spec.kind.name(), String::as_str);
        flush_block(&mut out, f, spec, call);
    } else if let (Some(f), Some(t)) = (&r.flush, s.replay.as_ref().filter(|t| t.flushes > 0)) {
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
        latency_lines(&mut out, f);
    } else if let (Some(f), true) = (&r.flush, s.end_fsync) {
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
    if let Some(t) = &r.trim {
        op_block(&mut out, "trim", t, &mark);
    }
    block_size_table(&mut out, r);
    if both {
        let _ = writeln!(
            out,
            "{:<9} {} IOPS · {}{mark}",
            "total",
            units::iops(r.total.iops),
            units::bandwidth(r.total.bw_bytes_per_sec)
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
        units::count(r.total.ops),
        units::bytes(r.total.bytes),
        units::seconds_ns(r.window_ns)
    );
    if let Some(c) = &r.cluster {
        rank_table(&mut out, c);
    }
    for line in cpu_lines(&r.cpu) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = cpu_state_line(r) {
        let _ = writeln!(out, "{line}");
    }
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
    if !r.zones.is_empty() {
        let share =
            |z: &crate::result::ZoneShare| format!("{:.1}% (asked {}%)", z.io_percent_achieved, z.io_percent_asked);
        if r.zones.iter().all(|z| z.direction.is_none()) {
            let shares: Vec<String> = r.zones.iter().map(share).collect();
            let _ = writeln!(out, "{:<9} I/Os per zone, in order: {}", "Zones", shares.join(" · "));
        } else {
            // Zones per direction: a line for each direction's set, its shares of its own I/Os.
            let mut first = true;
            for direction in ["read", "write", "trim"] {
                let set: Vec<String> =
                    r.zones.iter().filter(|z| z.direction.as_deref() == Some(direction)).map(share).collect();
                if set.is_empty() {
                    continue;
                }
                let head = if first { "Zones" } else { "" };
                let _ = writeln!(out, "{head:<9} {direction}s' zones, in order: {}", set.join(" · "));
                first = false;
            }
        }
    }
    if let Some(p) = &r.pacing {
        pacing_block(&mut out, p);
    }
    if let Some(replay) = &r.replay {
        replay_block(&mut out, replay);
    }
    if let Some(d) = &r.data_reduction {
        data_reduction_line(&mut out, d);
    }
    if let Some(v) = &r.verification {
        verification_block(&mut out, v);
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
    fault_lines(&mut out, r);
    expectation_lines(&mut out, &r.expectations);
    if let Some(e) = &r.error {
        let _ = writeln!(out, "{:<9} {e}", "Error");
    }
    out
}

/// `--expect`: each expectation with the run's figure and whether it held.
pub fn expectation_lines(out: &mut String, expectations: &[crate::result::ExpectationOutcome]) {
    for e in expectations {
        let figure = e
            .value
            .map_or_else(|| "none (the run has no such figure)".to_string(), |v| super::compare::value(e.unit, v));
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

/// Targets listed at the top of a cluster report (with the line that says how many in all).
const CLUSTER_TARGETS_SHOWN: usize = 4;

/// How far apart combined runs' windows were (merge, cluster).
pub fn window_line(w: &crate::result::WindowSkew) -> String {
    format!(
        "Windows:  {} results · starts {} apart · ends {} apart · all open together for {}",
        w.results,
        units::latency_ns(w.start_ns),
        units::latency_ns(w.end_ns),
        units::seconds_ns(w.overlap_ns)
    )
}

/// One row per rank: its own IOPS, bandwidth and latency, and what is wrong with it.
fn rank_table(out: &mut String, c: &crate::result::ClusterInfo) {
    let host_width = c.ranks.iter().map(|r| r.host.chars().count()).max().unwrap_or(4).max(4);
    let rank_width = c.ranks.len().saturating_sub(1).to_string().len().max(4);
    let _ = writeln!(
        out,
        "{:<9} {:>rank_width$}  {:<host_width$}  {:>8}  {:>9}  {:>9}  {:>9}",
        "Ranks", "rank", "host", "IOPS", "MiB/s", "p50", "p99"
    );
    for r in &c.ranks {
        let mut flags = Vec::new();
        if r.straggler {
            flags.push(format!(
                "⚠ straggler ({:.0}% of the median)",
                if c.median_iops > 0.0 { 100.0 * r.iops / c.median_iops } else { 0.0 }
            ));
        }
        if let Some(e) = &r.error {
            flags.push(format!("✗ {e}"));
        }
        let _ = writeln!(
            out,
            "{:<9} {:>rank_width$}  {:<host_width$}  {:>8}  {:>9.1}  {:>9}  {:>9}{}",
            "",
            r.rank,
            r.host,
            units::iops(r.iops),
            r.bw_bytes_per_sec / (1024.0 * 1024.0),
            units::latency_ns(r.p50_ns),
            units::latency_ns(r.p99_ns),
            if flags.is_empty() { String::new() } else { format!("  {}", flags.join(" · ")) }
        );
    }
    let _ = writeln!(
        out,
        "{:<9} median {} IOPS per rank · a straggler is below {:.0}% of it",
        "",
        units::iops(c.median_iops),
        c.straggler_below_median * 100.0
    );
}

/// Offsets shown per kind of I/O error; the JSON has up to eight.
const ERROR_OFFSETS_SHOWN: usize = 4;

/// Memory planned, failed I/Os by op type and errno, and workers left behind.
fn fault_lines(out: &mut String, r: &RunResult) {
    if let Some(m) = &r.memory {
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
    let e = &r.io_errors;
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
    for s in &r.stuck_io {
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

/// Workers shown one by one on the placement line; the JSON has them all.
const PLACEMENT_WORKERS_SHOWN: usize = 8;

/// The topology summary and where workers ran (placement, docs/usage.md).
pub fn placement_lines(r: &RunResult) -> Vec<String> {
    let p = &r.placement;
    let mut lines = Vec::new();
    if p.backend.is_empty() {
        return lines;
    }
    let t = &p.topology;
    let plural = |n: u32, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
    lines.push(format!(
        "Topology: {} · {} · {} · {} ({})",
        plural(t.packages, "package"),
        plural(t.cores, "core"),
        plural(t.pus, "PU"),
        plural(t.nodes, "NUMA node"),
        p.backend
    ));
    let seen: Vec<u32> = {
        let set: std::collections::BTreeSet<u32> = r.workers.iter().filter_map(|w| w.placement.cpu_seen).collect();
        set.into_iter().collect()
    };
    if !p.pinned {
        lines.push(format!(
            "Placement: not pinned (CPUs {} allowed) · workers finished on CPUs {}",
            format_list(&p.allowed_cpus),
            format_list(&seen)
        ));
        return lines;
    }
    let bound = r.workers.iter().any(|w| w.placement.memory_bound);
    let mut head = String::from("Placement:");
    if let Some(policy) = &p.policy {
        head.push_str(&format!(" {policy}"));
    }
    if bound {
        head.push_str(" · buffers bound to each worker's node");
    }
    let mut items: Vec<String> = r
        .workers
        .iter()
        .take(PLACEMENT_WORKERS_SHOWN)
        .map(|w| {
            let cpus = match &w.placement.cpus {
                Some(c) if c.len() == 1 => format!("CPU {}", c[0]),
                Some(c) => format!("CPUs {}", format_list(c)),
                None => "any CPU".to_string(),
            };
            let node = w.placement.node.map_or(String::new(), |n| format!(" node {n}"));
            format!("w{} {cpus}{node}", w.index)
        })
        .collect();
    if r.workers.len() > PLACEMENT_WORKERS_SHOWN {
        items.push(format!("… ({} workers: all in the JSON)", r.workers.len()));
    }
    lines.push(format!("{head} · {}", items.join(" · ")));
    for w in &r.workers {
        let wp = &w.placement;
        if let (Some(cpus), Some(seen)) = (&wp.cpus, wp.cpu_seen)
            && !cpus.contains(&seen)
        {
            lines.push(format!("⚠ worker {} finished on CPU {seen}, outside its CPUs {}", w.index, format_list(cpus)));
        }
        if let (true, Some(node), Some(seen)) = (wp.memory_bound, wp.node, wp.buffer_node_seen)
            && node != seen
        {
            lines.push(format!("⚠ worker {}'s buffers are on node {seen}, not on its node {node}", w.index));
        }
    }
    lines
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
    if let Some(t) = r.tool_time {
        let _ = write!(
            line,
            "\n{:<9} {} per I/O between a completion and the next submission ({:.1} % of the window; latencies exclude it)",
            "Tool",
            crate::units::display::latency_ns(t.per_io_ns.round() as u64),
            t.share_of_window * 100.0
        );
    }
    line
}

/// 31.24 → "31.2", 0.934 → "0.93".
fn queue_depth(v: f64) -> String {
    if v >= 10.0 { format!("{v:.1}") } else { format!("{v:.2}") }
}

/// One loud line per target whose read region holds holes or unwritten extents (reads
/// of them never reach the device), naming the file, the share and the fix.
pub fn hole_lines(r: &RunResult, shown_targets: usize) -> Vec<String> {
    if r.spec.read_percent == 0 {
        return Vec::new();
    }
    r.targets
        .iter()
        .take(shown_targets)
        .filter_map(|t| t.allocation.as_ref().map(|a| (t, a)))
        .filter(|(_, a)| a.unallocated_bytes() > 0)
        .map(|(t, a)| {
            let at_least = if a.allocated_bytes.is_none() { "at least " } else { "" };
            let fix = a.not_laid_out.as_deref().map_or(String::new(), |why| format!("; {why}"));
            format!(
                "⚠ {at_least}{} of the read region of {} is holes or unwritten extents ({} of {}): reads never reach the device{fix}",
                a.unallocated_percent(),
                t.path,
                units::bytes(a.unallocated_bytes()),
                units::bytes(a.region_bytes)
            )
        })
        .collect()
}

/// One line on the page cache of the run's regions: the state asked for (`--cache`),
/// residency when the window opened and closed, and what was done before (a buffered read
/// run that starts mostly cached without asking for a warm cache is a warning: it measures
/// memory; so is a warm cache that did not fit). `None` for results of versions that did
/// not measure it. Several targets: their regions taken together.
pub fn cache_line(r: &RunResult) -> Option<String> {
    use crate::spec::CacheMode;
    use crate::targets::page_cache::{DROP_LEFT_FRACTION, WARM_FRACTION, percent};
    let caches: Vec<_> = r.targets.iter().filter_map(|t| t.page_cache.as_ref()).collect();
    if caches.is_empty() {
        return None;
    }
    let region: u64 = caches.iter().map(|c| c.region_bytes).sum();
    // The regions' share together, or unknown when any target's is.
    let share = |f: fn(&crate::targets::PageCache) -> Option<f64>| -> Option<f64> {
        let known: Option<Vec<(f64, u64)>> = caches.iter().map(|c| f(c).map(|v| (v, c.region_bytes))).collect();
        let known = known?;
        Some(if region == 0 { 0.0 } else { known.iter().map(|(v, b)| v * *b as f64).sum::<f64>() / region as f64 })
    };
    let (start, end) = (share(|c| c.start_resident_fraction), share(|c| c.end_resident_fraction));
    let shown = |f: Option<f64>| f.map_or_else(|| "unknown".to_string(), percent);
    let targets = if caches.len() > 1 { format!(" · {} targets", caches.len()) } else { String::new() };
    let unknown = caches.iter().find_map(|c| c.unknown_reason.as_deref());
    // The state asked for: recorded per target; results before --cache say it by `invalidated`.
    let mode = caches.iter().find_map(|c| c.mode).unwrap_or(if caches.iter().all(|c| c.invalidated) {
        CacheMode::Drop
    } else {
        CacheMode::Keep
    });
    let shortfall = caches.iter().find_map(|c| c.warm_shortfall.as_deref());
    let text = if start.is_none() && end.is_none() {
        let why = unknown.unwrap_or("not measured");
        let done = if caches.iter().all(|c| c.invalidated) { "invalidated before the window; " } else { "" };
        format!("{done}page-cache residency unknown ({why})")
    } else if caches.iter().all(|c| c.direct) {
        let done = if caches.iter().all(|c| c.invalidated) {
            "invalidated before the window".to_string()
        } else {
            let why = caches.iter().find_map(|c| c.not_invalidated.as_deref()).unwrap_or("--cache keep");
            format!("not invalidated: {why}")
        };
        if r.direct.memory_backed {
            format!(
                "O_DIRECT on a memory filesystem: the data lives in the page cache ({} of the region resident at start, {} at end)",
                shown(start),
                shown(end)
            )
        } else if r.direct.served_through_cache.is_some() {
            format!(
                "⚠ O_DIRECT, but served through the page cache ({} of the region cached at start, {} at end; {done})",
                shown(start),
                shown(end)
            )
        } else {
            format!(
                "O_DIRECT: I/Os bypass the page cache ({} of the region cached at start, {} at end; {done})",
                shown(start),
                shown(end)
            )
        }
    } else if mode == CacheMode::Warm {
        match shortfall {
            Some(why) => format!(
                "⚠ read into the page cache before the window, but it does not fit ({why}): {} resident at start, {} at end — part of the reads reach the device",
                shown(start),
                shown(end)
            ),
            None => format!(
                "read into the page cache before the window ({} resident at start, {} at end): buffered reads measure memory, as asked",
                shown(start),
                shown(end)
            ),
        }
    } else if caches.iter().all(|c| c.invalidated) {
        match share(|c| c.after_invalidate_resident_fraction) {
            Some(left) if left > DROP_LEFT_FRACTION => format!(
                "⚠ invalidated before the window, but {} stayed resident (dirty or mapped pages): {} resident at start, {} at end",
                percent(left),
                shown(start),
                shown(end)
            ),
            _ => format!("invalidated before the window ({} resident at start, {} at end)", shown(start), shown(end)),
        }
    } else {
        let why = caches.iter().find_map(|c| c.not_invalidated.as_deref()).unwrap_or("--cache keep");
        match start {
            Some(s) if r.spec.read_percent > 0 && s >= WARM_FRACTION => format!(
                "⚠ buffered reads: {} of the region in the page cache at start (not invalidated: {why}) — figures are memory speed, not the device",
                percent(s)
            ),
            _ => format!("not invalidated ({why}): {} resident at start, {} at end", shown(start), shown(end)),
        }
    };
    Some(format!("{:<9} {}: {text}{targets}", "Cache", mode.name()))
}

/// The device witness: per device under the targets (targets on one device share a line),
/// the share of the run's reads and writes it saw, the devices stacked below it, and its
/// warning. Nothing for a target with no device (tmpfs, the null engine).
pub fn device_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    let mut shown: Vec<&crate::targets::DeviceWitness> = Vec::new();
    for w in r.targets.iter().filter_map(|t| t.device_witness.as_ref()) {
        if shown.iter().any(|s| s.device == w.device && s.delta == w.delta) {
            continue;
        }
        shown.push(w);
        let dev = &w.device;
        let pct = |s: Option<f64>| s.map_or_else(|| "?".to_string(), |s| format!("{:.1} %", 100.0 * s));
        let mut seen = Vec::new();
        // A device far above iopulse's own bytes was mostly doing something else: its
        // bytes beside the run's, not a share. Buffered reads make the kernel read ahead:
        // that too can be far above the run's own.
        let read_traffic = if r.direct.effective { "other traffic" } else { "readahead or other traffic" };
        let other = |traffic: &str, verb: &str, device_bytes: Option<u64>, own_bytes: u64| {
            format!(
                "{traffic} on {dev}: it {verb} {} where this run {verb} {}",
                device_bytes.map_or_else(|| "?".to_string(), units::bytes),
                units::bytes(own_bytes)
            )
        };
        if w.iopulse.read_ios > 0 {
            seen.push(if w.read_other_traffic {
                other(read_traffic, "read", w.delta.map(|d| d.read_bytes), w.iopulse.read_bytes)
            } else {
                format!("{} of the bytes read ({} of the read I/Os)", pct(w.read_bytes_share), pct(w.read_ios_share))
            });
        }
        if w.iopulse.write_ios > 0 {
            seen.push(if w.write_other_traffic {
                other("other traffic", "wrote", w.delta.map(|d| d.write_bytes), w.iopulse.write_bytes)
            } else {
                format!(
                    "{} of the bytes written ({} of the write I/Os)",
                    pct(w.write_bytes_share),
                    pct(w.write_ios_share)
                )
            });
        }
        let shared = if w.targets_on_device > 1 {
            format!(", {} targets on it together", w.targets_on_device)
        } else {
            String::new()
        };
        let warn = if w.warning.is_some() { "⚠ " } else { "" };
        let via = w.via.as_deref().map_or(String::new(), |v| format!(" ({v})"));
        let text = match (&w.delta, &w.unknown_reason) {
            (None, why) => format!("{dev}{via}: counters unknown ({})", why.as_deref().unwrap_or("not read")),
            (Some(_), _) if seen.is_empty() => format!("{dev}{via}: the run completed no I/O"),
            (Some(_), _) => {
                let saw: Vec<String> = seen
                    .iter()
                    .map(|s| if s.contains(" traffic on ") { s.clone() } else { format!("saw {s}") })
                    .collect();
                format!("{warn}{dev}{via} {}{shared} (includes any other traffic on {dev})", saw.join(", "))
            }
        };
        lines.push(format!("{:<9} {text}", "Device"));
        if let Some(memory) = &w.memory {
            lines.push(format!("{:<9} ⚠ memory, not storage: {memory}", ""));
        }
        if let Some(limit) = &w.throttle {
            lines.push(format!("{:<9} ⚠ throttled by a cgroup: {limit}", ""));
        }
        for s in &w.stacked {
            let figures = match &s.delta {
                Some(d) => format!(
                    "read {} in {} I/Os, wrote {} in {} I/Os",
                    units::bytes(d.read_bytes),
                    units::count(d.read_ios),
                    units::bytes(d.write_bytes),
                    units::count(d.write_ios)
                ),
                None => format!("counters unknown ({})", s.unknown_reason.as_deref().unwrap_or("not read")),
            };
            lines.push(format!("{:<9} below {}: {} {figures}", "", s.below, s.name));
        }
        // Results before `warnings` have only `warning`.
        let warnings = if w.warnings.is_empty() { w.warning.iter().cloned().collect() } else { w.warnings.clone() };
        for warning in warnings {
            lines.push(format!("{:<9} ⚠ {warning}", ""));
        }
    }
    lines
}

/// The CPU lines: the whole process in the window (every thread, io_uring's kernel
/// threads included), per I/O and in cores; then the workers' share and the rest.
pub fn cpu_lines(c: &crate::result::CpuInfo) -> [String; 2] {
    [
        format!(
            "{:<9} user {} · sys {} · {} per I/O · {:.2} cores busy (the whole process in the window)",
            "CPU",
            units::seconds_ns(c.window.user_ns),
            units::seconds_ns(c.window.sys_ns),
            units::latency_ns(c.per_io_ns.round() as u64),
            c.cores_busy
        ),
        format!(
            "{:<9} workers user {} · sys {} ({} per I/O) · other {} (sampler, watchdog, kernel I/O threads)",
            "",
            units::seconds_ns(c.workers.user_ns),
            units::seconds_ns(c.workers.sys_ns),
            units::latency_ns(c.workers_per_io_ns.round() as u64),
            units::seconds_ns(c.other_ns)
        ),
    ]
}

/// The CPU's state over the window: governor, boost, SMT, frequency, steal and other
/// work, each "unknown" where the machine does not say. `None` for results without it.
pub fn cpu_state_line(r: &RunResult) -> Option<String> {
    let c = r.cpu_state.as_ref()?;
    let governor = match c.governors.len() {
        0 => "governor unknown".to_string(),
        1 => format!("governor {}", c.governors.keys().next().expect("one")),
        _ => format!(
            "governors {}",
            c.governors
                .iter()
                .map(|(g, cpus)| format!("{g} (CPUs {})", format_list(cpus)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let on_off = |b: Option<bool>| match b {
        Some(true) => "on",
        Some(false) => "off",
        None => "unknown",
    };
    let ghz = |khz: u64| format!("{:.2} GHz", khz as f64 / 1e6);
    let frequency = match (c.frequency_mean_khz, c.frequency_min_khz) {
        (Some(mean), Some(min)) => format!("{} mean, {} min", ghz(mean), ghz(min)),
        _ => "frequency unknown".to_string(),
    };
    let steal = c.steal_fraction.map_or("steal unknown".to_string(), |s| format!("steal {:.1}%", s * 100.0));
    let other = c.other_work_cpus.map_or("other work unknown".to_string(), |o| format!("other work {o:.2} CPUs"));
    Some(format!(
        "{:<9} {governor} · boost {} · SMT {} · {frequency} · {steal} · {other}{}",
        "CPU state",
        on_off(c.boost),
        on_off(c.smt_active),
        c.idle.as_ref().map_or(String::new(), idle_text)
    ))
}

/// The idle CPUs over the window: how often they slept, and the request that held them
/// awake with what it burnt.
fn idle_text(idle: &crate::cpu_state::idle::CpuIdle) -> String {
    let sleeps = match idle.sleeps_per_io {
        Some(per_io) => format!("idle CPUs slept {per_io:.2}×/I/O"),
        None => format!("idle CPUs slept {} times", units::count(idle.sleeps)),
    };
    match idle.latency_limit_us {
        Some(us) => format!(" · {sleeps}, held to {us} µs (--cpu-dma-latency): polling {:.2} CPUs", idle.poll_cpus),
        None => format!(" · {sleeps}"),
    }
}

/// `--ramp` (ran, not counted) and `--steady-state` (reached when, over which window, and
/// the whole run's figures beside the window's; or, loudly, not reached).
fn ramp_and_steady_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    if r.ramp_ns > 0 {
        lines.push(format!(
            "Ramp:     {} before the window, not counted ({} ops); the window is the {} after it",
            units::seconds_ns(r.ramp_ns),
            units::count(r.ramp_ops),
            units::seconds_ns(r.window_ns)
        ));
    }
    if let Some(s) = &r.steady_state {
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
fn test_figure(s: &crate::result::SteadyStateInfo, v: f64) -> String {
    use crate::stats::steady_state::{Metric, Test};
    let shown = match s.metric {
        Metric::Iops => format!("{} IOPS", units::iops(v)),
        Metric::Bandwidth => units::bandwidth(v),
        Metric::MeanLatency => units::latency_ns(v.round() as u64),
    };
    if s.test == Test::Slope { format!("{shown}/s") } else { shown }
}

/// The I/O mode line, exactly as users grep for it; with an engine that moves no bytes,
/// the line that says nothing reached storage.
pub fn io_mode_line(r: &RunResult) -> String {
    if !r.storage_touched {
        let direct = if r.direct.requested { " (--direct: nothing to bypass)" } else { "" };
        return format!(
            "Storage:  none: the {} engine moves no bytes{direct}; these figures are iopulse's own ceiling",
            r.engine.name
        );
    }
    match (&r.direct.requested, &r.direct.effective, &r.direct.reason) {
        (true, true, _) if r.direct.memory_backed => {
            "I/O mode: ⚠ O_DIRECT on a memory filesystem (accepted, but served from memory)".to_string()
        }
        (true, true, _) if r.direct.served_through_cache.is_some() => format!(
            "I/O mode: ⚠ O_DIRECT accepted, but the filesystem served it through the page cache: {}",
            r.direct.served_through_cache.as_deref().unwrap_or_default()
        ),
        (true, true, _) if r.direct.cached_below.is_some() => format!(
            "I/O mode: ⚠ O_DIRECT (page cache bypassed at the loop device, cached below it: {})",
            r.direct.cached_below.as_deref().unwrap_or_default()
        ),
        (true, true, _) if r.direct.memory_device.is_some() => format!(
            "I/O mode: ⚠ O_DIRECT on a memory device ({}): served from memory",
            r.direct.memory_device.as_deref().unwrap_or_default()
        ),
        (true, true, _) => "I/O mode: ✓ O_DIRECT (page cache bypassed)".to_string(),
        (true, false, Some(reason)) => format!("I/O mode: ⚠ BUFFERED (O_DIRECT refused: {reason})"),
        (true, false, None) => "I/O mode: ⚠ BUFFERED (O_DIRECT refused)".to_string(),
        (false, _, _) => "I/O mode: BUFFERED (page cache)".to_string(),
    }
}

/// `--bssplit`: a row per size and op type, with the share achieved and asked.
fn block_size_table(out: &mut String, r: &RunResult) {
    if r.block_sizes.len() < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "  {:>9} {:<5} {:>15} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "size", "op", "share (asked)", "IOPS", "bandwidth", "mean", "p50", "p99", "p99.9", "max"
    );
    for b in &r.block_sizes {
        let rows = [
            ("read", Some(&b.read), b.read_share_percent, b.read_asked_percent),
            ("write", Some(&b.write), b.write_share_percent, b.write_asked_percent),
            ("trim", b.trim.as_ref(), b.trim_share_percent.unwrap_or(0.0), b.trim_asked_percent.unwrap_or(0.0)),
        ];
        for (name, op, share, asked) in rows {
            let Some(op) = op.filter(|o| o.ops > 0 || asked > 0.0) else { continue };
            if op.ops == 0 && (name == "read" && r.read.ops == 0 || name == "write" && r.write.ops == 0) {
                continue;
            }
            let l = &op.latency_ns;
            let _ = writeln!(
                out,
                "  {:>9} {:<5} {:>15} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}",
                units::bytes(b.size_bytes),
                name,
                format!("{share:.1}% ({asked:.0}%)"),
                units::iops(op.iops),
                units::bandwidth_binary(op.bw_bytes_per_sec),
                units::latency_ns(l.mean),
                units::latency_ns(l.p50),
                units::latency_ns(l.p99),
                units::latency_ns(l.p99_9),
                units::latency_ns(l.max)
            );
        }
    }
}

fn op_block(out: &mut String, name: &str, op: &OpSummary, mark: &str) {
    let _ = writeln!(
        out,
        "{name:<9} {} IOPS · {} · {} ops{mark}",
        units::iops(op.iops),
        units::bandwidth(op.bw_bytes_per_sec),
        units::count(op.ops)
    );
    latency_lines(out, op);
}

/// `--fsync-every`/`--fdatasync-every`: the flushes, as an operation of their own (no bytes).
fn flush_block(out: &mut String, op: &OpSummary, spec: &crate::spec::durability::FlushSpec, call: &str) {
    let every = match spec.every_writes {
        1 => "after every write".to_string(),
        n => format!("after every {n} writes"),
    };
    let _ = writeln!(
        out,
        "{:<9} {} {} · {}/s · {every} of each worker · p99 {}",
        "flush",
        units::count(op.ops),
        call,
        units::iops(op.iops),
        units::latency_ns(op.latency_ns.p99)
    );
    latency_lines(out, op);
}

/// The latency lines under an operation's line (none when it has no ops).
fn latency_lines(out: &mut String, op: &OpSummary) {
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

/// `--dedupe-ratio`/`--compress-ratio`: asked and produced, on one line.
fn data_reduction_line(out: &mut String, d: &crate::result::DataReductionInfo) {
    let asked = |r: Option<f64>| r.map_or("none asked".to_string(), |r| format!("{r:.2} asked"));
    let _ = writeln!(
        out,
        "{:<9} dedupe {} · {:.2} produced ({} of {} chunks duplicates) · compress {} · {:.2} by construction",
        "Data",
        asked(d.dedupe_ratio_asked),
        d.dedupe_ratio_produced,
        d.duplicate_chunks_written,
        d.chunks_written,
        asked(d.compress_ratio_asked),
        d.compress_ratio_produced
    );
}

fn verification_block(out: &mut String, v: &crate::result::VerificationInfo) {
    let _ = writeln!(
        out,
        "Verification: Operations: {}, Failures: {}, Success: {}%",
        v.operations,
        v.failures,
        format_percent(v.success_percent)
    );
    if v.failures > 0 {
        let kinds: Vec<String> = v
            .failures_by_kind
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{} {n}", k.replace('_', " ")))
            .collect();
        let _ = writeln!(out, "  failures by kind: {}", kinds.join(" · "));
    }
    for m in &v.mismatches {
        let _ = writeln!(out, "  ✗ {} at offset {}: {}", m.target, m.offset_bytes, describe_failure(&m.failure));
        let _ = writeln!(out, "      expected +{:04x}: {}", m.window_at, m.expected_hex);
        let _ = writeln!(out, "      found    +{:04x}: {}", m.window_at, m.found_hex);
    }
    if (v.mismatches.len() as u64) < v.failures {
        let _ = writeln!(
            out,
            "  ... {} more failed blocks (raise --verify-max-reports to see them)",
            v.failures - v.mismatches.len() as u64
        );
    }
    let _ = writeln!(
        out,
        "  checked: header (offset, seed, size) and crc32c of every block read{} · {}",
        if v.lost_write_detection { ", and the last write of this run to it" } else { "" },
        v.ownership,
    );
    let _ = writeln!(
        out,
        "  cost: {} to stamp a write, {} to check a read: about {:.1}% of the workers' CPU time",
        units::latency_ns(v.stamp_ns_per_write),
        units::latency_ns(v.check_ns_per_read),
        v.estimated_slowdown_percent
    );
}

/// 100 → "100", 99.99 → "99.99", 99.999 → "99.999" (never rounds a failure up to 100).
fn format_percent(p: f64) -> String {
    if p >= 100.0 {
        return "100".to_string();
    }
    for decimals in 2..=6 {
        let text = format!("{p:.decimals$}");
        if !text.starts_with("100") {
            return text;
        }
    }
    format!("{p:.6}")
}

fn describe_failure(f: &crate::data::verify::Failure) -> String {
    use crate::data::verify::Failure;
    match f {
        Failure::NeverWrittenZeros => "never written (all zeros: a hole or a zeroed block)".into(),
        Failure::NeverWrittenStale => "never written (no iopulse header: stale data)".into(),
        Failure::OtherRun { seed, block_size_bytes } => {
            format!("written by another run (seed {seed}, block size {block_size_bytes})")
        }
        Failure::Misplaced { written_for_offset } => {
            format!("misplaced: holds the block written for offset {written_for_offset}")
        }
        Failure::Torn { first_bad_byte } => {
            format!("torn: bytes from {first_bad_byte} to the end come from another write")
        }
        Failure::Corrupted { first_bad_byte } => format!("corrupted: first differing byte at {first_bad_byte}"),
        Failure::LostWrite { found_sequence, expected_sequence } => format!(
            "lost write: holds write #{:x}, but this run last wrote #{:x} there",
            found_sequence, expected_sequence
        ),
    }
}

/// A replay: what the trace held, its timing against the replay's, the remapping, the lag.
fn replay_block(out: &mut String, r: &crate::result::ReplayInfo) {
    let files = if r.trace_files.len() > 1 { format!(" ({} files)", r.trace_files.len()) } else { String::new() };
    let skipped = if r.skipped.empty > 0 {
        format!(" · skipped {} empty", units::count(r.skipped.empty))
    } else {
        String::new()
    };
    let mut held = vec![format!("{} reads", units::count(r.reads)), format!("{} writes", units::count(r.writes))];
    if r.trims > 0 {
        held.push(format!("{} trims", units::count(r.trims)));
    }
    if r.flushes > 0 {
        held.push(format!("{} flushes", units::count(r.flushes)));
    }
    let _ = writeln!(
        out,
        "{:<9} {} in the trace{files}{skipped} · {} issued",
        "Replay",
        held.join(", "),
        units::count(r.issued)
    );
    match (r.scheduled_span_ns, r.duration_error_percent) {
        (Some(scheduled), Some(error)) => {
            let _ = writeln!(
                out,
                "          the trace spans {}, due in {} at this speed · replayed in {} ({error:+.2} %)",
                units::seconds_ns(r.trace_span_ns),
                units::seconds_ns(scheduled),
                units::seconds_ns(r.replay_ns)
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "          the trace spans {} · replayed in {}",
                units::seconds_ns(r.trace_span_ns),
                units::seconds_ns(r.replay_ns)
            );
        }
    }
    if r.remapped {
        let _ = writeln!(
            out,
            "          the trace reaches {}, the target has {}: offsets remapped {}",
            units::bytes(r.trace_extent_bytes),
            units::bytes(r.target_bytes),
            r.remap.name()
        );
    }
    if let Some(lag) = &r.lag {
        let l = &lag.latency_ns;
        let _ = writeln!(
            out,
            "  lag (due → submitted, not in the latencies) p50 {} · p99 {} · p99.9 {} · max {}",
            units::latency_ns(l.p50),
            units::latency_ns(l.p99),
            units::latency_ns(l.p99_9),
            units::latency_ns(l.max)
        );
    }
}

fn pacing_block(out: &mut String, p: &crate::result::PacingInfo) {
    if let Some(t) = &p.think {
        let what = match (t.fixed_ns, t.adaptive_percent) {
            (_, Some(pct)) => format!("{pct}% of recent latency"),
            (Some(ns), None) => units::latency_ns(ns),
            _ => String::new(),
        };
        let every = if t.every == 1 { "every I/O".to_string() } else { format!("every {} I/Os", t.every) };
        let _ = writeln!(
            out,
            "{:<9} {what} {every} ({:?}) · asked {} · spent {} · {:.1}% of the run spent thinking",
            "Think",
            t.mode,
            units::seconds_ns(t.requested_ns),
            units::seconds_ns(t.spent_ns),
            t.share_of_run * 100.0
        );
    }
    if let Some(r) = &p.rate {
        let scope = if r.total { "for the run" } else { "per worker" };
        let target = if r.total { r.target_iops } else { r.target_iops_per_worker };
        let verdict = if r.reached {
            "reached".to_string()
        } else {
            format!(
                "⚠ NOT REACHED (up to {} behind schedule; {} scheduled I/Os still owed at the end)",
                units::latency_ns(r.max_behind_ns),
                units::count(r.backlog_at_end)
            )
        };
        let _ = writeln!(
            out,
            "{:<9} target {} IOPS {scope} · achieved {} IOPS in total · {verdict}",
            "Rate",
            units::iops(target),
            units::iops(r.achieved_iops)
        );
        let _ = writeln!(out, "          latency measured from each I/O's due time (no coordinated omission)");
        // The headline latency is the tool's lateness plus the storage's service time.
        for (what, part) in
            [("tool's lateness (due → submitted)", &r.lateness), ("service time (submitted → done)", &r.service)]
        {
            if let Some(p) = part {
                let l = &p.latency_ns;
                let _ = writeln!(
                    out,
                    "          {what}: p50 {} · p99 {} · p99.9 {} · max {}",
                    units::latency_ns(l.p50),
                    units::latency_ns(l.p99),
                    units::latency_ns(l.p99_9),
                    units::latency_ns(l.max)
                );
            }
        }
    }
}
