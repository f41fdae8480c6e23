//! `--timeseries FILE`: the time series as CSV, one row per interval, with the
//! figures of that interval alone. Formats `RunResult::time_series`; computes nothing.
//! Times count from the release; with `--ramp` the ramp's rows have `ramp` 1.
//! A cluster result has no series of its own (intervals' percentiles cannot be
//! added up): its file has every rank's rows, after a first column `rank`.

use crate::figures::result::RunResult;

/// Columns, in order. Times in seconds, latencies in nanoseconds, bandwidth in bytes/s.
pub const COLUMNS: &[&str] = &[
    "t_s",
    "interval_s",
    "read_ops",
    "read_iops",
    "read_bw_bytes_per_sec",
    "read_p50_ns",
    "read_p99_ns",
    "read_p99_9_ns",
    "read_max_ns",
    "write_ops",
    "write_iops",
    "write_bw_bytes_per_sec",
    "write_p50_ns",
    "write_p99_ns",
    "write_p99_9_ns",
    "write_max_ns",
    "total_iops",
    "ramp",
    "flush_ops",
    "flush_iops",
    "flush_p50_ns",
    "flush_p99_ns",
    "flush_p99_9_ns",
    "flush_max_ns",
];

/// The CSV text of `result`'s time series (written whole by the caller).
pub fn render(result: &RunResult) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    match &result.combined.cluster {
        None => {
            w.write_record(COLUMNS)?;
            rows(&mut w, result, None)?;
        }
        Some(cluster) => {
            w.write_record(std::iter::once("rank").chain(COLUMNS.iter().copied()))?;
            for rank in &cluster.ranks {
                if let Some(r) = &rank.result {
                    rows(&mut w, r, Some(rank.rank))?;
                }
            }
        }
    }
    w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}

/// One record per interval of `result`, after `rank` when given.
fn rows(w: &mut csv::Writer<Vec<u8>>, result: &RunResult, rank: Option<u32>) -> std::io::Result<()> {
    for row in &result.time_series {
        let mut record: Vec<String> = rank.map(|r| r.to_string()).into_iter().collect();
        record.extend([format!("{:.3}", row.t_ns as f64 / 1e9), format!("{:.3}", row.interval_ns as f64 / 1e9)]);
        for f in [&row.read, &row.write] {
            let l = &f.latency_ns;
            record.extend([
                f.ops.to_string(),
                format!("{:.1}", f.iops),
                format!("{:.1}", f.bw_bytes_per_sec),
                l.p50.to_string(),
                l.p99.to_string(),
                l.p99_9.to_string(),
                l.max.to_string(),
            ]);
        }
        record.push(format!("{:.1}", row.total.iops));
        // `--ramp`: 1 on the ramp's rows, whose I/Os are in no figure of the result.
        record.push(u8::from(row.ramp).to_string());
        // `--fsync-every`/`--fdatasync-every`: the interval's flushes (empty without).
        match &row.flush {
            Some(f) => {
                let l = &f.latency_ns;
                record.extend([
                    f.ops.to_string(),
                    format!("{:.1}", f.iops),
                    l.p50.to_string(),
                    l.p99.to_string(),
                    l.p99_9.to_string(),
                    l.max.to_string(),
                ]);
            }
            None => record.extend(std::iter::repeat_n(String::new(), 6)),
        }
        w.write_record(&record)?;
    }
    Ok(())
}

/// Columns of a metadata run's time series (`--files`), in order: one row per interval per
/// operation kind of each phase. Times in seconds from the phase's start, latencies in
/// nanoseconds.
pub const METADATA_COLUMNS: &[&str] =
    &["phase", "op", "t_s", "interval_s", "ops", "ops_per_sec", "bytes", "bytes_per_sec", "p50_ns", "p99_ns", "max_ns"];

/// The CSV text of a metadata run's time series (`MetaResult::time_series`).
pub fn render_metadata(rows: &[crate::figures::result::meta_document::MetaIntervalRow]) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(METADATA_COLUMNS)?;
    for row in rows {
        let l = &row.latency_ns;
        w.write_record([
            row.phase.clone(),
            row.op.name().to_string(),
            format!("{:.3}", row.t_ns as f64 / 1e9),
            format!("{:.3}", row.interval_ns as f64 / 1e9),
            row.ops.to_string(),
            format!("{:.1}", row.ops_per_sec),
            row.bytes.to_string(),
            format!("{:.1}", row.bytes_per_sec),
            l.p50.to_string(),
            l.p99.to_string(),
            l.max.to_string(),
        ])?;
    }
    w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}
