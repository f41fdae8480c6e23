//! `--output-format fio-json`: the result in the subset of fio's JSON layout
//! (`fio --output-format=json`, fio 3.x) that fio tooling reads, with fio's
//! keys and units: one job (all workers together, as with fio's
//! `group_reporting`), bandwidth in KiB/s (`bw`) and B/s (`bw_bytes`), runtime
//! in ms, latencies in ns, percentile keys as fio prints them ("99.900000"),
//! CPU in percent. Latency is submission to completion: fio's `lat_ns` (with
//! percentiles, as `fio --lat_percentiles=1`); `clat_ns` and `slat_ns` are not
//! measured apart and are written as fio writes an unrecorded latency (zeros,
//! `N` 0). docs/json.md lists the fields.
//!
//! What fio has no key for, the targets' state when the window opened (`--cache`, holes
//! and unwritten extents, page-cache residency), is under the top-level key `iopulse`.
//!
//! Formats the `RunResult`; the percentiles come from its histograms through
//! `stats::clamped_quantile`.

use crate::result::RunResult;
use crate::spec::AccessOrder;
use crate::stats::{HistogramCodecError, OpSummary, clamped_quantile, decode_histogram};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// fio's default percentile list (`percentile_list`).
const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

#[derive(Serialize)]
struct FioDocument {
    #[serde(rename = "fio version")]
    fio_version: String,
    timestamp: u64,
    timestamp_ms: u64,
    time: String,
    jobs: Vec<FioJob>,
    /// Not fio's: what iopulse knows of the targets' state when the window opened (the
    /// result's `spec.cache`, `targets[].allocation`, `targets[].page_cache`), under a key
    /// of its own so that fio tooling never mistakes it for one of fio's.
    iopulse: IopulseExtra,
}

#[derive(Serialize)]
struct IopulseExtra {
    /// `--cache`: drop, warm or keep.
    cache: &'static str,
    /// The result's `holes_read`: every figure includes reads of holes or unwritten
    /// extents, which never reach the device (`--keep-holes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    holes_read: Option<String>,
    targets: Vec<IopulseTarget>,
}

#[derive(Serialize)]
struct IopulseTarget {
    path: String,
    laid_out_bytes: u64,
    allocation: Option<crate::targets::Allocation>,
    page_cache: Option<crate::targets::PageCache>,
}

#[derive(Serialize)]
struct FioJob {
    jobname: String,
    /// fio's job description (`description=`): set to the result's `holes_read` when the
    /// run read holes it did not lay out, so that the mark travels with the job's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    desc: Option<String>,
    groupid: u32,
    error: u32,
    elapsed: u64,
    #[serde(rename = "job options")]
    job_options: JobOptions,
    read: FioOp,
    write: FioOp,
    trim: FioOp,
    /// fio's flushes (`fsync=N`, `fdatasync=N`): iopulse's `flush`, zeros without.
    sync: FioSync,
    job_runtime: u64,
    usr_cpu: f64,
    sys_cpu: f64,
}

#[derive(Serialize)]
struct JobOptions {
    name: String,
    filename: String,
    rw: String,
    rwmixread: String,
    bs: String,
    iodepth: String,
    numjobs: String,
    /// fio writes it only when set: `--random-percent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    percentage_random: Option<String>,
    /// Only when set: `--ramp`, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    ramp_time: Option<String>,
    /// Only with a block-size mix: `--bssplit` in fio's syntax, and the alignment.
    #[serde(skip_serializing_if = "Option::is_none")]
    bssplit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blockalign: Option<String>,
    ioengine: String,
    direct: String,
    randseed: String,
}

#[derive(Serialize)]
struct FioOp {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: LatencyStats,
    clat_ns: LatencyStats,
    lat_ns: LatencyStats,
}

/// fio's `sync` section: the flushes' count and latency (fio writes `total_ios` 0 and the
/// count in `lat_ns.N`; iopulse writes the count in both).
#[derive(Serialize)]
struct FioSync {
    total_ios: u64,
    lat_ns: LatencyStats,
}

#[derive(Serialize)]
struct LatencyStats {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    #[serde(rename = "N")]
    n: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<Percentiles>,
}

impl LatencyStats {
    fn zero() -> Self {
        Self { min: 0, max: 0, mean: 0.0, stddev: 0.0, n: 0, percentile: None }
    }
}

/// fio's percentile map, in fio's order, keys formatted with `%f`.
struct Percentiles(Vec<(String, u64)>);

impl Serialize for Percentiles {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The fio-compatible document, pretty-printed, with a final newline.
pub fn render(r: &RunResult) -> Result<String, HistogramCodecError> {
    let read_hist = decode_histogram(&r.histograms.read)?;
    let write_hist = decode_histogram(&r.histograms.write)?;
    let started = humantime::parse_rfc3339(&r.started_at)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default();
    let s = &r.spec;
    let random = s.order == AccessOrder::Random;
    let rw = match (s.read_percent, random) {
        (100, false) => "read",
        (100, true) => "randread",
        (0, false) => "write",
        (0, true) => "randwrite",
        (_, false) => "rw",
        (_, true) => "randrw",
    };
    let filename = if r.targets.is_empty() {
        s.targets.iter().map(|t| t.display().to_string()).collect::<Vec<_>>().join(":")
    } else {
        r.targets.iter().map(|t| t.path.clone()).collect::<Vec<_>>().join(":")
    };
    let runtime_ms = r.window_ns.div_ceil(1_000_000);
    // fio: CPU time over the job's runtime, per thread with group_reporting. The workers'
    // CPU is the whole window's, also when the figures are a steady window's.
    let cpu_window_ns = r.steady_state.as_ref().and_then(|s| s.whole_run.as_ref()).map_or(r.window_ns, |w| w.window_ns);
    let cpu_percent = |ns: u64| {
        let denominator = cpu_window_ns as f64 * r.workers.len().max(1) as f64;
        if denominator > 0.0 { ns as f64 * 100.0 / denominator } else { 0.0 }
    };
    let job = FioJob {
        jobname: "iopulse".into(),
        desc: r.holes_read.clone(),
        groupid: 0,
        error: u32::from(r.error.is_some()),
        elapsed: r.window_ns.div_ceil(1_000_000_000),
        job_options: JobOptions {
            name: "iopulse".into(),
            filename,
            rw: rw.into(),
            rwmixread: s.read_percent.to_string(),
            bs: s.block_sizes.as_ref().map_or(s.block_size_bytes, |m| m.sizes()[0]).to_string(),
            bssplit: s.block_sizes.as_ref().filter(|m| m.sizes().len() > 1).map(|m| m.fio_syntax()),
            blockalign: s.block_sizes.as_ref().map(|m| m.align_bytes.to_string()),
            iodepth: s.queue_depth.to_string(),
            numjobs: s.threads.to_string(),
            percentage_random: s.random_percent.map(|p| p.to_string()),
            ramp_time: (r.ramp_ns > 0).then(|| format!("{}ms", r.ramp_ns / 1_000_000)),
            // fio's name for pread/pwrite is psync.
            ioengine: if r.engine.name == "sync" { "psync".into() } else { r.engine.name.clone() },
            direct: u8::from(r.direct.effective).to_string(),
            randseed: s.seed.to_string(),
        },
        read: fio_op(&r.read, &read_hist, runtime_ms),
        write: fio_op(&r.write, &write_hist, runtime_ms),
        trim: match (&r.trim, &r.histograms.trim) {
            (Some(t), Some(text)) => fio_op(t, &decode_histogram(text)?, runtime_ms),
            _ => fio_op(&OpSummary::default(), &crate::stats::new_latency_histogram(), runtime_ms),
        },
        sync: match (&r.flush, &r.histograms.flush) {
            (Some(f), Some(text)) => {
                let op = fio_op(f, &decode_histogram(text)?, runtime_ms);
                FioSync { total_ios: f.ops, lat_ns: op.lat_ns }
            }
            _ => FioSync { total_ios: 0, lat_ns: LatencyStats::zero() },
        },
        job_runtime: runtime_ms,
        usr_cpu: cpu_percent(r.cpu.workers.user_ns),
        sys_cpu: cpu_percent(r.cpu.workers.sys_ns),
    };
    let doc = FioDocument {
        fio_version: format!("iopulse-{}", r.tool.version),
        timestamp: started.as_secs(),
        timestamp_ms: started.as_millis() as u64,
        time: ctime_utc(started.as_secs()),
        jobs: vec![job],
        iopulse: IopulseExtra {
            cache: s.cache.name(),
            holes_read: r.holes_read.clone(),
            targets: r
                .targets
                .iter()
                .map(|t| IopulseTarget {
                    path: t.path.clone(),
                    laid_out_bytes: t.laid_out_bytes,
                    allocation: t.allocation.clone(),
                    page_cache: t.page_cache.clone(),
                })
                .collect(),
        },
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("the fio document always serializes");
    text.push('\n');
    Ok(text)
}

fn fio_op(op: &OpSummary, hist: &Histogram<u64>, runtime_ms: u64) -> FioOp {
    let l = &op.latency_ns;
    let latency = |percentile: Option<Percentiles>| {
        if op.ops == 0 {
            return LatencyStats::zero();
        }
        LatencyStats { min: l.min, max: l.max, mean: l.mean as f64, stddev: l.stddev as f64, n: op.ops, percentile }
    };
    let percentiles = Percentiles(
        FIO_PERCENTILES.iter().map(|&p| (format!("{p:.6}"), clamped_quantile(hist, p / 100.0, l.min, l.max))).collect(),
    );
    FioOp {
        io_bytes: op.bytes,
        io_kbytes: op.bytes / 1024,
        bw_bytes: op.bw_bytes_per_sec.round() as u64,
        bw: (op.bw_bytes_per_sec / 1024.0).round() as u64,
        iops: op.iops,
        runtime: if op.ops == 0 { 0 } else { runtime_ms },
        total_ios: op.ops,
        short_ios: 0,
        drop_ios: 0,
        // iopulse times each I/O from submission to completion: fio's total latency, `lat_ns`,
        // with its percentiles where fio puts them with --lat_percentiles=1. Submission and
        // completion latency are not measured apart: fio prints a latency it did not record
        // as all zeros with N 0 and no percentile (`LatencyStats::zero`), and so does iopulse.
        slat_ns: LatencyStats::zero(),
        clat_ns: LatencyStats::zero(),
        lat_ns: latency(Some(percentiles)),
    }
}

/// Seconds since the epoch as C's ctime() writes them, in UTC: "Sat Nov 21 18:58:54 2026".
fn ctime_utc(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm), days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {year}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_c() {
        // date -u -d @1795287534 → Sat Nov 21 18:58:54 2026
        assert_eq!(ctime_utc(1_795_287_534), "Sat Nov 21 18:58:54 2026");
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn percentile_keys_are_fios() {
        let keys: Vec<String> = FIO_PERCENTILES.iter().map(|p| format!("{p:.6}")).collect();
        assert_eq!(keys[0], "1.000000");
        assert_eq!(keys[14], "99.900000");
        assert_eq!(keys[16], "99.990000");
    }
}
