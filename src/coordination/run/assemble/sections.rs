//! The optional sections of a run's result, each present when the run asked for it:
//! verification, data reduction, pacing, a replay's figures and the iolog's I/Os.

use crate::base::diagnostics::warnings::Diagnostics;
use crate::coordination::run::region::RegionLayout;
use crate::coordination::run::worker_plan::tracks_sequences;
use crate::figures::result::{MismatchInfo, PacedLatency, PacingInfo, RateInfo, ThinkInfo, VerificationInfo};
use crate::io::data::verify::{Failure, Mismatch, VerifyCounts};
use crate::io::stats::{CpuTimes, OpStats, encode_histogram};
use crate::io::worker::{PacingLatency, WorkerResult};
use crate::storage::targets::PreparedTarget;
use crate::workload::spec::Spec;

fn paced_latency(s: &OpStats) -> PacedLatency {
    PacedLatency { ios: s.ops, latency_ns: s.latency_summary(), histogram: encode_histogram(&s.latency) }
}

/// `--write-iolog`: every worker's counted I/Os together, in the order they were issued.
pub(super) fn io_log(
    spec: &Spec,
    workers: &[WorkerResult],
    start_ns: u64,
    window_ns: u64,
    targets: &[PreparedTarget],
    diag: &Diagnostics,
) -> Option<std::sync::Arc<crate::figures::result::io_log::IoLog>> {
    use crate::figures::result::io_log::{IoAction, IoLog, LoggedIo};
    use crate::io::engine::Op;
    if !spec.output.record_iolog {
        return None;
    }
    let mut records: Vec<&crate::io::worker::iolog::IoRecord> =
        workers.iter().filter_map(|w| w.iolog.as_ref()).flat_map(|l| &l.records).collect();
    records.sort_by_key(|r| r.issue_ns);
    let left_out: u64 = workers.iter().filter_map(|w| w.iolog.as_ref()).map(|l| l.left_out).sum();
    if left_out > 0 {
        diag.warn(format!(
            "--write-iolog: the iolog holds the first {} I/Os of each worker ({} more were issued and are not in it)",
            crate::io::worker::iolog::MAX_RECORDS_PER_WORKER,
            left_out
        ));
    }
    let ios: Vec<LoggedIo> = records
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
    // Closed at the window's end, never before an I/O it holds.
    let end_us = ios.iter().map(|io| io.time_us).max().unwrap_or(0).max(window_ns / 1000);
    Some(std::sync::Arc::new(IoLog { targets, ios, end_us }))
}

/// A replay's figures: the trace, its timing against the run's, each I/O's lag.
pub(super) fn replay_info(
    spec: &Spec,
    workers: &[WorkerResult],
    window_ns: u64,
    layout: &RegionLayout,
) -> Option<crate::figures::result::ReplayInfo> {
    let r = spec.replay.as_ref()?;
    let lag = workers.iter().filter_map(|w| w.paced.pacing_latency.as_ref()).fold(None, |acc: Option<OpStats>, l| {
        let mut acc = acc.unwrap_or_default();
        acc.merge(&l.lateness);
        Some(acc)
    });
    let scheduled_span_ns = r.speed.map(|speed| (r.span_ns as f64 / speed) as u64);
    let target_bytes =
        (0..layout.threads).map(|w| layout.worker(w).blocks).max().unwrap_or(0) * spec.shape.block_size_bytes;
    let issued = lag.as_ref().map_or_else(
        || {
            workers
                .iter()
                .map(|w| w.ops.read.ops + w.ops.write.ops + w.ops.trim.ops + w.ops.flush.ops + w.ramp_ops)
                .sum()
        },
        |l| l.ops,
    );
    Some(crate::figures::result::ReplayInfo {
        trace_files: r.trace_files.iter().map(|p| p.display().to_string()).collect(),
        format: r.format,
        names: r.names.clone(),
        counts: crate::figures::result::ReplayCounts {
            reads: r.reads,
            writes: r.writes,
            trims: r.trims,
            flushes: r.flushes,
            skipped: r.skipped,
            issued,
        },
        timing: crate::figures::result::ReplayTiming {
            speed: r.speed,
            trace_span_ns: r.span_ns,
            scheduled_span_ns,
            replay_ns: window_ns,
            duration_error_percent: scheduled_span_ns
                .filter(|&s| s > 0)
                .map(|s| (window_ns as f64 - s as f64) / s as f64 * 100.0),
            lag: lag.as_ref().map(paced_latency),
        },
        fit: crate::figures::result::ReplayFit {
            remap: r.remap,
            trace_extent_bytes: r.extent_bytes,
            target_bytes,
            remapped: r.extent_bytes > target_bytes,
        },
    })
}

pub(super) fn pacing_info(spec: &Spec, workers: &[WorkerResult], window_ns: u64, ops: u64) -> Option<PacingInfo> {
    if spec.pacing.think.is_none() && spec.pacing.rate.is_none() {
        return None;
    }
    let sum = |f: fn(&WorkerResult) -> u64| workers.iter().map(f).sum::<u64>();
    let worker_time_ns = window_ns as f64 * workers.len().max(1) as f64;
    let window_s = window_ns as f64 / 1e9;
    // Every worker's lateness and service histograms, merged (rate schedules only).
    let latency = workers.iter().filter_map(|w| w.paced.pacing_latency.as_ref()).fold(None, |acc, l| {
        let mut acc: PacingLatency = acc.unwrap_or_default();
        acc.merge(l);
        Some(acc)
    });
    Some(PacingInfo {
        think: spec.pacing.think.map(|t| ThinkInfo {
            mode: t.mode,
            every: t.every,
            fixed_ns: (t.adaptive_percent.is_none()).then_some(t.time_ns),
            adaptive_percent: t.adaptive_percent,
            thinks: sum(|w| w.paced.pacing.thinks),
            requested_ns: sum(|w| w.paced.pacing.think_requested_ns),
            spent_ns: sum(|w| w.paced.pacing.think_spent_ns),
            share_of_run: sum(|w| w.paced.pacing.think_spent_ns) as f64 / worker_time_ns,
        }),
        rate: spec.pacing.rate.map(|r| {
            let target_iops = r.iops_per_worker * workers.len() as f64;
            let achieved_iops = ops as f64 / window_s;
            let backlog = sum(|w| w.paced.pacing.backlog_ios);
            RateInfo {
                given_as: r.given_as,
                total: r.total,
                target_iops_per_worker: r.iops_per_worker,
                target_iops,
                achieved_iops,
                backlog_at_end: backlog,
                max_behind_ns: workers.iter().map(|w| w.paced.pacing.max_behind_ns).max().unwrap_or(0),
                lateness: latency.as_ref().map(|l| paced_latency(&l.lateness)),
                service: latency.as_ref().map(|l| paced_latency(&l.service)),
                reached: achieved_iops >= target_iops * 0.99,
                latency_from:
                    "due time: each I/O's latency counts from when it was scheduled (no coordinated omission)".into(),
            }
        }),
    })
}

/// What `--dedupe-ratio` and `--compress-ratio` produced in the counted writes.
pub(super) fn data_reduction_info(
    spec: &Spec,
    workers: &[WorkerResult],
) -> Option<crate::figures::result::DataReductionInfo> {
    let asked = spec.data.reducibility;
    if asked.is_none() {
        return None;
    }
    let chunks_per_write = spec.shape.block_size_bytes.div_ceil(crate::io::data::CHUNK_BYTES as u64);
    let chunks_of = |ops: u64, bytes: u64| ops * bytes.div_ceil(crate::io::data::CHUNK_BYTES as u64);
    let chunks_written = if spec.shape.block_sizes.is_some() {
        // Each size's writes: a mix's sizes differ in chunks.
        workers.iter().flat_map(|w| &w.per_size).map(|s| chunks_of(s.write.ops, s.size_bytes)).sum::<u64>()
    } else {
        workers.iter().map(|w| w.ops.write.ops).sum::<u64>() * chunks_per_write
    };
    let duplicate_chunks_written = workers.iter().map(|w| w.data.duplicate_chunks_written).sum();
    // Verified writes are duplicates by whole blocks; unverified ones by 4 KiB chunk.
    let unit_chunks = if spec.data.verify.is_some() { chunks_per_write } else { 1 };
    Some(crate::figures::result::DataReductionInfo {
        dedupe_ratio_asked: asked.dedupe_ratio,
        compress_ratio_asked: asked.compress_ratio,
        chunks_written,
        duplicate_chunks_written,
        dedupe_ratio_produced: crate::io::data::dedupe_ratio_produced(
            chunks_written,
            duplicate_chunks_written,
            unit_chunks,
        ),
        compress_ratio_produced: crate::io::data::Reduction::new(asked).compress_ratio_produced(),
    })
}

pub(super) fn verification_info(
    spec: &Spec,
    v: crate::workload::spec::VerifySpec,
    workers: &[WorkerResult],
    targets: &[PreparedTarget],
    layout: &RegionLayout,
    worker_cpu: &CpuTimes,
) -> VerificationInfo {
    let mut counts = VerifyCounts::default();
    for w in workers {
        counts.merge(&w.data.verify_counts);
    }
    let mut mismatches: Vec<&Mismatch> = workers.iter().flat_map(|w| &w.data.mismatches).collect();
    mismatches.sort_by_key(|m| (m.target, m.offset_bytes));
    let hex = |bytes: &[u8; 16]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    let failures = counts.failures();
    let writes: u64 = workers.iter().map(|w| w.ops.write.ops).sum();
    let stamp_ns = workers.iter().map(|w| w.data.verify_cost.stamp_ns).max().unwrap_or(0);
    let check_ns = workers.iter().map(|w| w.data.verify_cost.check_ns).max().unwrap_or(0);
    let verify_ns = stamp_ns as f64 * writes as f64 + check_ns as f64 * counts.checked as f64;
    VerificationInfo {
        pattern: v.pattern,
        seed: spec.data.data_seed,
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
