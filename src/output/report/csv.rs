//! `--csv FILE`: one row per run, appended, so that a shell loop over iopulse
//! builds one table of a sweep. The header is written when the file is new;
//! the columns are fixed (docs/usage.md lists them) and only ever added at
//! the end. Formats the `RunResult`; computes nothing.

use crate::base::diagnostics::error::UsageError;
use crate::figures::result::RunResult;
use crate::io::stats::OpSummary;
use crate::workload::spec::{Distribution, RunLength};
use std::io::{self, Read};
use std::path::Path;

/// The columns, in order. Names match the flags where there is one, so that
/// `iopulse plot --sweep FILE --x queue_depth --y iops --by block_size` reads them.
pub const COLUMNS: &[&str] = &[
    "started_at",
    "hostname",
    "iopulse_version",
    "engine",
    "targets",
    "block_size",
    "queue_depth",
    "effective_queue_depth",
    "threads",
    "read_percent",
    "order",
    "distribution",
    "file_distribution",
    "direct",
    "direct_effective",
    "duration_s",
    "ops_limit",
    "seed",
    "window_s",
    "stop_reason",
    "ops",
    "iops",
    "bw_bytes_per_sec",
    "read_iops",
    "read_bw_bytes_per_sec",
    "read_mean_ns",
    "read_p50_ns",
    "read_p99_ns",
    "read_p99_9_ns",
    "write_iops",
    "write_bw_bytes_per_sec",
    "write_mean_ns",
    "write_p50_ns",
    "write_p99_ns",
    "write_p99_9_ns",
    "cpu_per_io_ns",
    "achieved_queue_depth",
    "achieved_queue_depth_total",
    "cache",
    "unallocated_fraction",
    "laid_out_bytes",
    "cache_start_resident_fraction",
    "cache_end_resident_fraction",
    "flush",
    "flush_every_writes",
    "flush_ops",
    "flush_iops",
    "flush_mean_ns",
    "flush_p50_ns",
    "flush_p99_ns",
    "flush_p99_9_ns",
    "sync_writes",
    "trim_percent",
    "trim_ops",
    "trim_iops",
    "trim_bw_bytes_per_sec",
    "trim_mean_ns",
    "trim_p50_ns",
    "trim_p99_ns",
    "trim_p99_9_ns",
    "bssplit",
    "block_align",
    "holes_read",
];

/// The last columns: which job of a job file (`iopulse run`, docs/jobs.md) the row is, and
/// its phase; empty in the row of a single run; then which repetition of its point a
/// sweep's run is (from 1; empty outside sweeps). Kept apart from `COLUMNS` so that they
/// stay the last ones.
pub const JOB_COLUMNS: &[&str] = &["job", "phase", "repetition"];

/// Which job of a job file a row is: its name and phase.
pub type JobTag<'a> = (&'a str, u32);

/// The header line, without the line end.
pub fn header() -> String {
    COLUMNS.iter().chain(JOB_COLUMNS).copied().collect::<Vec<_>>().join(",")
}

/// The row of `r`, one field per column of `COLUMNS`.
pub fn row(r: &RunResult) -> Vec<String> {
    let s = &r.spec;
    let targets = if s.targets.is_empty() {
        "(temporary)".to_string()
    } else {
        s.targets.iter().map(|t| t.display().to_string()).collect::<Vec<_>>().join(";")
    };
    let distribution = match s.access.distribution {
        Distribution::Uniform => "uniform".to_string(),
        Distribution::Zipf { theta } => format!("zipf:{theta}"),
        Distribution::Pareto { h } => format!("pareto:{h}"),
        Distribution::Gaussian { stddev, center } => format!("gaussian:{stddev}:{center}"),
        Distribution::Zoned { zones } => format!("{}:{}", s.access.distribution.name(), zones.to_text()),
    };
    let duration = match s.window.run_length {
        RunLength::Duration { ns } => trim_float(ns as f64 / 1e9),
        RunLength::UntilCovered => "0".to_string(),
        RunLength::UntilLimit => String::new(),
    };
    let mut fields = vec![
        r.window.started_at.clone(),
        r.machine.environment.hostname.clone(),
        r.tool.version.clone(),
        r.engine.name.clone(),
        targets,
        s.shape.block_size_bytes.to_string(),
        s.shape.queue_depth.to_string(),
        r.engine.effective_queue_depth.to_string(),
        s.shape.threads.to_string(),
        s.access.read_percent.to_string(),
        name(&s.access.order),
        distribution,
        name(&s.access.file_distribution),
        s.io.direct.to_string(),
        r.data.direct.effective.to_string(),
        duration,
        s.window.ops_limit.map(|n| n.to_string()).unwrap_or_default(),
        s.seed.to_string(),
        format!("{:.3}", r.window.window_ns as f64 / 1e9),
        name(&r.window.stop_reason),
        r.figures.total.ops.to_string(),
        format!("{:.1}", r.figures.total.iops),
        format!("{:.0}", r.figures.total.bw_bytes_per_sec),
    ];
    for op in [&r.figures.read, &r.figures.write] {
        fields.extend(op_fields(op));
    }
    fields.push(format!("{:.0}", r.machine.cpu.per_io_ns));
    fields.push(format!("{:.3}", r.figures.achieved_queue_depth.mean_per_worker));
    fields.push(format!("{:.3}", r.figures.achieved_queue_depth.total));
    fields.extend(target_fields(r));
    fields.extend(flush_fields(r));
    fields.extend(trim_fields(r));
    // `--bssplit`, `--block-align` (block_size is then the alignment); empty without.
    let mix = r.spec.shape.block_sizes.as_ref();
    fields.push(mix.filter(|m| m.sizes().len() > 1).map(|m| m.fio_syntax()).unwrap_or_default());
    fields.push(mix.map(|m| m.align_bytes.to_string()).unwrap_or_default());
    // The mark of a run that read holes it did not lay out (`--keep-holes`): its figures
    // are not the device's.
    fields.push(if r.data.holes_read.is_some() { "true".into() } else { String::new() });
    debug_assert_eq!(fields.len(), COLUMNS.len());
    fields
}

/// The targets' state when the window opened, their regions taken together: `--cache`,
/// the share of holes and unwritten extents (files only), the bytes laid out before the
/// window, and the page-cache residency at the window's start and end. Empty when unknown
/// or not measured (a block device has no allocation, an untouched target no residency).
fn target_fields(r: &RunResult) -> [String; 5] {
    use crate::storage::targets::page_cache::combined_share;
    let share = |v: Option<f64>| v.map(|f| format!("{f:.4}")).unwrap_or_default();
    let unallocated = combined_share(r.targets.iter().filter_map(|t| t.storage.allocation.as_ref()).map(|a| {
        let share = if a.region_bytes == 0 { 0.0 } else { a.unallocated_bytes() as f64 / a.region_bytes as f64 };
        (Some(share), a.region_bytes)
    }));
    let caches: Vec<_> = r.targets.iter().filter_map(|t| t.storage.page_cache.as_ref()).collect();
    let residency = |f: fn(&crate::storage::targets::PageCache) -> Option<f64>| {
        combined_share(caches.iter().map(|c| (f(c), c.region_bytes)))
    };
    [
        r.spec.io.cache.name().to_string(),
        share(unallocated),
        r.targets.iter().map(|t| t.laid_out_bytes).sum::<u64>().to_string(),
        share(residency(|c| c.start_resident_fraction)),
        share(residency(|c| c.end_resident_fraction)),
    ]
}

/// `--fsync-every`/`--fdatasync-every` (kind, N, ops, rate, mean, p50, p99, p99.9 of the
/// flushes; a replay's flushes: `trace`, no N) and `--sync-writes`; empty when not asked.
fn flush_fields(r: &RunResult) -> [String; 9] {
    let mut fields: [String; 9] = Default::default();
    let kind = match (&r.spec.durability.flush, &r.spec.replay) {
        (Some(spec), _) => Some((spec.kind.name().to_string(), spec.every_writes.to_string())),
        (None, Some(t)) if t.flushes > 0 => Some(("trace".to_string(), String::new())),
        _ => None,
    };
    if let (Some((kind, every)), Some(op)) = (kind, &r.figures.flush) {
        let lat = |v: u64| if op.ops == 0 { String::new() } else { v.to_string() };
        let l = &op.latency_ns;
        fields[..8].clone_from_slice(&[
            kind,
            every,
            op.ops.to_string(),
            format!("{:.1}", op.iops),
            lat(l.mean),
            lat(l.p50),
            lat(l.p99),
            lat(l.p99_9),
        ]);
    }
    fields[8] = r.spec.durability.sync_writes.map(|s| s.name().to_string()).unwrap_or_default();
    fields
}

/// `--trim-percent` and the trims' ops, then their `op_fields`; empty when not asked.
fn trim_fields(r: &RunResult) -> [String; 8] {
    let mut fields: [String; 8] = Default::default();
    if let Some(op) = &r.figures.trim {
        fields[0] = r.spec.access.trim_percent.to_string();
        fields[1] = op.ops.to_string();
        fields[2..].clone_from_slice(&op_fields(op));
    }
    fields
}

/// iops, bandwidth, mean, p50, p99, p99.9 of one op type; latencies empty without I/O.
fn op_fields(op: &OpSummary) -> [String; 6] {
    let l = &op.latency_ns;
    let lat = |v: u64| if op.ops == 0 { String::new() } else { v.to_string() };
    [
        format!("{:.1}", op.iops),
        format!("{:.0}", op.bw_bytes_per_sec),
        lat(l.mean),
        lat(l.p50),
        lat(l.p99),
        lat(l.p99_9),
    ]
}

/// 10 → "10", 0.5 → "0.5".
fn trim_float(v: f64) -> String {
    let text = format!("{v:.9}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The JSON name of a unit enum ("random", "per_worker", "duration"), as in the result.
fn name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// Before the run: FILE's directory exists, FILE is not a directory, and an existing
/// FILE has this version's header (rows of another layout would not line up). A stream
/// (`--csv /dev/stdout`) is written, never read: reading a pipe that is this process's own
/// stdout would wait for ever.
pub fn check(path: &Path) -> Result<(), UsageError> {
    if crate::storage::ledger::output::is_stream(path) {
        return Ok(());
    }
    // Only the first line is read: the file may be a long table.
    // Opened without blocking: a FIFO put there since the guard looked never holds it.
    let open = || {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
    };
    let first_line = open().and_then(|f| {
        let mut line = Vec::new();
        io::BufRead::read_until(&mut io::BufReader::new(f).take(64 * 1024), b'\n', &mut line)?;
        Ok(String::from_utf8_lossy(&line).into_owned())
    });
    match first_line {
        Ok(line) => {
            let first = line.trim_end_matches(['\n', '\r']);
            if !first.is_empty() && first != header() {
                return Err(UsageError::new(format!(
                    "--csv {}: the file's header is not this iopulse's ({} columns expected, starting with `{}`): \
                     append to a file written by this version, or give a new file",
                    path.display(),
                    COLUMNS.len() + JOB_COLUMNS.len(),
                    COLUMNS[..3].join(",")
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(UsageError::new(format!("--csv {}: cannot read it: {e}", path.display()))),
    }
}

/// Appends `r`'s row to `path`, with the header first when the file is new or empty.
/// The table is replaced whole (`ledger::output::append_whole`): a full disk leaves it as
/// it was, concurrent runs each add their row, and a last line without its newline gets
/// one before the row (the row is never glued to it).
pub fn append(path: &Path, r: &RunResult) -> io::Result<()> {
    append_job(path, r, None)
}

/// As `append`, the row saying which job of a job file it is (`job`, `phase`).
pub fn append_job(path: &Path, r: &RunResult, job: Option<JobTag>) -> io::Result<()> {
    append_run(path, r, job, None)
}

/// As `append_job`, with the repetition of a sweep's point.
pub fn append_run(path: &Path, r: &RunResult, job: Option<JobTag>, repetition: Option<u32>) -> io::Result<()> {
    let mut record = row(r);
    record.push(job.map(|(name, _)| name.to_string()).unwrap_or_default());
    record.push(job.map(|(_, phase)| phase.to_string()).unwrap_or_default());
    record.push(repetition.map(|r| r.to_string()).unwrap_or_default());
    let mut failure = None;
    crate::storage::ledger::output::append_whole(path, |new| {
        let mut buffer = Vec::new();
        let mut writer = csv::Writer::from_writer(&mut buffer);
        let written = if new { writer.write_record(COLUMNS.iter().chain(JOB_COLUMNS)) } else { Ok(()) };
        if let Err(e) = written.and_then(|()| writer.write_record(&record)).and_then(|()| Ok(writer.flush()?)) {
            failure = Some(io::Error::other(e));
        }
        drop(writer);
        buffer
    })?;
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_trimmed() {
        assert_eq!(trim_float(10.0), "10");
        assert_eq!(trim_float(0.5), "0.5");
        assert_eq!(trim_float(0.000_001), "0.000001");
    }

    #[test]
    fn header_names_are_unique() {
        let mut names: Vec<&str> = COLUMNS.iter().chain(JOB_COLUMNS).copied().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COLUMNS.len() + JOB_COLUMNS.len());
    }
}
