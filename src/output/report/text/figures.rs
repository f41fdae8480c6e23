//! The report's blocks of figures: per op type and size, flushes, latency, data
//! reduction, verification, replay and pacing. Formats; computes nothing.

use crate::figures::result::RunResult;
use crate::io::stats::OpSummary;
use crate::output::report::units;
use std::fmt::Write as _;

/// `--bssplit`: a row per size and op type, with the share achieved and asked.
pub(super) fn block_size_table(out: &mut String, r: &RunResult) {
    if r.figures.block_sizes.len() < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "  {:>9} {:<5} {:>15} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "size", "op", "share (asked)", "IOPS", "bandwidth", "mean", "p50", "p99", "p99.9", "max"
    );
    for b in &r.figures.block_sizes {
        let rows = [
            ("read", Some(&b.read), b.read_share_percent, b.read_asked_percent),
            ("write", Some(&b.write), b.write_share_percent, b.write_asked_percent),
            ("trim", b.trim.as_ref(), b.trim_share_percent.unwrap_or(0.0), b.trim_asked_percent.unwrap_or(0.0)),
        ];
        for (name, op, share, asked) in rows {
            let Some(op) = op.filter(|o| o.ops > 0 || asked > 0.0) else { continue };
            if op.ops == 0 && (name == "read" && r.figures.read.ops == 0 || name == "write" && r.figures.write.ops == 0)
            {
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

pub(super) fn op_block(out: &mut String, name: &str, op: &OpSummary, mark: &str) {
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
pub(super) fn flush_block(
    out: &mut String,
    op: &OpSummary,
    spec: &crate::workload::spec::durability::FlushSpec,
    call: &str,
) {
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
pub(super) fn latency_lines(out: &mut String, op: &OpSummary) {
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
pub(super) fn data_reduction_line(out: &mut String, d: &crate::figures::result::DataReductionInfo) {
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

pub(super) fn verification_block(out: &mut String, v: &crate::figures::result::VerificationInfo) {
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

fn describe_failure(f: &crate::io::data::verify::Failure) -> String {
    use crate::io::data::verify::Failure;
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
pub(super) fn replay_block(out: &mut String, r: &crate::figures::result::ReplayInfo) {
    let files = if r.trace_files.len() > 1 { format!(" ({} files)", r.trace_files.len()) } else { String::new() };
    let skipped = if r.counts.skipped.empty > 0 {
        format!(" · skipped {} empty", units::count(r.counts.skipped.empty))
    } else {
        String::new()
    };
    let mut held =
        vec![format!("{} reads", units::count(r.counts.reads)), format!("{} writes", units::count(r.counts.writes))];
    if r.counts.trims > 0 {
        held.push(format!("{} trims", units::count(r.counts.trims)));
    }
    if r.counts.flushes > 0 {
        held.push(format!("{} flushes", units::count(r.counts.flushes)));
    }
    let _ = writeln!(
        out,
        "{:<9} {} in the trace{files}{skipped} · {} issued",
        "Replay",
        held.join(", "),
        units::count(r.counts.issued)
    );
    match (r.timing.scheduled_span_ns, r.timing.duration_error_percent) {
        (Some(scheduled), Some(error)) => {
            let _ = writeln!(
                out,
                "          the trace spans {}, due in {} at this speed · replayed in {} ({error:+.2} %)",
                units::seconds_ns(r.timing.trace_span_ns),
                units::seconds_ns(scheduled),
                units::seconds_ns(r.timing.replay_ns)
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "          the trace spans {} · replayed in {}",
                units::seconds_ns(r.timing.trace_span_ns),
                units::seconds_ns(r.timing.replay_ns)
            );
        }
    }
    if r.fit.remapped {
        let _ = writeln!(
            out,
            "          the trace reaches {}, the target has {}: offsets remapped {}",
            units::bytes(r.fit.trace_extent_bytes),
            units::bytes(r.fit.target_bytes),
            r.fit.remap.name()
        );
    }
    if let Some(lag) = &r.timing.lag {
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

pub(super) fn pacing_block(out: &mut String, p: &crate::figures::result::PacingInfo) {
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
