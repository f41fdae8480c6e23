//! The report's lines about the machine: placement, queue depth achieved, CPU use and
//! state, a cluster's ranks and its window. Formats; computes nothing.

use crate::figures::result::RunResult;
use crate::io::placement::format_list;
use crate::output::report::units;
use std::fmt::Write as _;

/// Targets listed at the top of a cluster report (with the line that says how many in all).
pub(super) const CLUSTER_TARGETS_SHOWN: usize = 4;

/// How far apart combined runs' windows were (merge, cluster).
pub fn window_line(w: &crate::figures::result::WindowSkew) -> String {
    format!(
        "Windows:  {} results · starts {} apart · ends {} apart · all open together for {}",
        w.results,
        units::latency_ns(w.start_ns),
        units::latency_ns(w.end_ns),
        units::seconds_ns(w.overlap_ns)
    )
}

/// One row per rank: its own IOPS, bandwidth and latency, and what is wrong with it.
pub(super) fn rank_table(out: &mut String, c: &crate::figures::result::ClusterInfo) {
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

/// Workers shown one by one on the placement line; the JSON has them all.
const PLACEMENT_WORKERS_SHOWN: usize = 8;

/// The topology summary and where workers ran (placement, docs/usage.md).
pub(super) fn placement_lines(r: &RunResult) -> Vec<String> {
    let p = &r.machine.placement;
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
pub(super) fn queue_depth_line(r: &RunResult) -> String {
    let effective = r.engine.effective_queue_depth;
    let achieved = r.figures.achieved_queue_depth.mean_per_worker;
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
            queue_depth(r.figures.achieved_queue_depth.total)
        );
    }
    if let Some(t) = r.figures.tool_time {
        let _ = write!(
            line,
            "\n{:<9} {} per I/O between a completion and the next submission ({:.1} % of the window; latencies exclude it)",
            "Tool",
            crate::base::units::display::latency_ns(t.per_io_ns.round() as u64),
            t.share_of_window * 100.0
        );
    }
    line
}

/// 31.24 → "31.2", 0.934 → "0.93".
fn queue_depth(v: f64) -> String {
    if v >= 10.0 { format!("{v:.1}") } else { format!("{v:.2}") }
}

/// The CPU lines: the whole process in the window (every thread, io_uring's kernel
/// threads included), per I/O and in cores; then the workers' share and the rest.
pub(super) fn cpu_lines(c: &crate::figures::result::CpuInfo) -> [String; 2] {
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
pub(super) fn cpu_state_line(r: &RunResult) -> Option<String> {
    let c = r.machine.cpu_state.as_ref()?;
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
fn idle_text(idle: &crate::io::cpu_state::idle::CpuIdle) -> String {
    let sleeps = match idle.sleeps_per_io {
        Some(per_io) => format!("idle CPUs slept {per_io:.2}×/I/O"),
        None => format!("idle CPUs slept {} times", units::count(idle.sleeps)),
    };
    match idle.latency_limit_us {
        Some(us) => format!(" · {sleeps}, held to {us} µs (--cpu-dma-latency): polling {:.2} CPUs", idle.poll_cpus),
        None => format!(" · {sleeps}"),
    }
}
