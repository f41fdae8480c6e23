//! `--output-format fio-json`: the result in the subset of fio's JSON layout
//! (`fio --output-format=json`, fio 3.x) that fio tooling reads, with fio's
//! keys and units: one job (all workers together, as with fio's
//! `group_reporting`), bandwidth in KiB/s (`bw`) and B/s (`bw_bytes`), runtime
//! in ms, latencies in ns, percentile keys as fio prints them ("99.900000"),
//! CPU in percent. Latency is submission to completion, fio's completion latency
//! `clat_ns` and, as iopulse has no separate submission step, also its total latency
//! `lat_ns` (both with percentiles); in a paced run `lat_ns` counts from each I/O's due
//! time and `clat_ns` is the service time. `slat_ns` is written as fio writes an
//! unrecorded latency (zeros, `N` 0). The interval rows give the per-direction IOPS
//! and bandwidth sample statistics, the histograms the latency buckets, getrusage the
//! context switches and faults, the device witness `disk_util`. `fio-json+` adds the
//! histograms' buckets (`bins`), as fio's json+. docs/json.md lists the fields.
//!
//! What fio has no key for, the targets' state when the window opened (`--cache`, holes
//! and unwritten extents, page-cache residency), is under the top-level key `iopulse`.
//!
//! Formats the `RunResult`; the percentiles come from its histograms through
//! `stats::clamped_quantile`, the sample statistics and buckets from `stats::distribution`.

use crate::figures::result::RunResult;
use crate::io::stats::distribution::{SampleStats, counts_below, recorded_buckets, sample_rows};
use crate::io::stats::interval::IntervalFigures;
use crate::io::stats::{HistogramCodecError, LatencySummary, OpSummary, clamped_quantile, decode_histogram};
use crate::workload::spec::AccessOrder;
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
    /// The block devices under the targets over the window (the device witness).
    disk_util: Vec<DiskUtil>,
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
    allocation: Option<crate::storage::targets::Allocation>,
    page_cache: Option<crate::storage::targets::PageCache>,
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
    /// fio's time left when the report was written: none.
    eta: u64,
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
    ctx: u64,
    majf: u64,
    minf: u64,
    iodepth_level: OrderedMap<f64>,
    iodepth_submit: OrderedMap<f64>,
    iodepth_complete: OrderedMap<f64>,
    latency_ns: OrderedMap<f64>,
    latency_us: OrderedMap<f64>,
    latency_ms: OrderedMap<f64>,
    /// fio's latency target (`latency_target`): none, written as fio writes it without.
    latency_depth: u32,
    latency_target: u64,
    latency_percentile: f64,
    latency_window: u64,
}

/// One device of fio's `disk_util`: its counters over the window, util the share of the
/// window it was busy.
#[derive(Serialize)]
struct DiskUtil {
    name: String,
    read_ios: u64,
    write_ios: u64,
    read_merges: u64,
    write_merges: u64,
    read_ticks: u64,
    write_ticks: u64,
    in_queue: u64,
    util: f64,
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
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
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
    percentile: Option<OrderedMap<u64>>,
    /// json+ only: each recorded bucket's value (ns) and count.
    #[serde(skip_serializing_if = "Option::is_none")]
    bins: Option<OrderedMap<u64>>,
}

impl LatencyStats {
    fn zero() -> Self {
        Self { min: 0, max: 0, mean: 0.0, stddev: 0.0, n: 0, percentile: None, bins: None }
    }
}

/// A JSON object with its keys in the given order (fio's percentile keys, formatted with
/// `%f`; its bucket labels).
struct OrderedMap<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Which of fio's two JSON forms: `json`, or `json+` (with the latency histograms' buckets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Json,
    JsonPlus,
}

/// The fio-compatible document, pretty-printed, with a final newline.
pub fn render(r: &RunResult, form: Form) -> Result<String, HistogramCodecError> {
    let read_hist = decode_histogram(&r.histograms.read)?;
    let write_hist = decode_histogram(&r.histograms.write)?;
    let trim_hist = match &r.histograms.trim {
        Some(text) => decode_histogram(text)?,
        None => crate::io::stats::new_latency_histogram(),
    };
    let started = humantime::parse_rfc3339(&r.window.started_at)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default();
    let s = &r.spec;
    let runtime_ms = r.window.window_ns.div_ceil(1_000_000);
    // fio: CPU time over the job's runtime, per thread with group_reporting. The workers'
    // CPU is the whole window's, also when the figures are a steady window's.
    let cpu_window_ns =
        r.window.steady_state.as_ref().and_then(|s| s.whole_run.as_ref()).map_or(r.window.window_ns, |w| w.window_ns);
    let cpu_percent = |ns: u64| {
        let denominator = cpu_window_ns as f64 * r.workers.len().max(1) as f64;
        if denominator > 0.0 { ns as f64 * 100.0 / denominator } else { 0.0 }
    };
    // A paced run: the headline latency counts from each I/O's due time (fio's lat_ns);
    // the service time (submission to completion, fio's clat_ns) is kept for all op types
    // together, so it is filed under the op type only when the run did one.
    let service = r.schedule.pacing.as_ref().and_then(|p| p.rate.as_ref()).and_then(|rate| rate.service.as_ref());
    let service_hist = service.map(|sv| decode_histogram(&sv.histogram)).transpose()?;
    let trim = r.figures.trim.unwrap_or_default();
    let one_op_type = [r.figures.read.ops, r.figures.write.ops, trim.ops].iter().filter(|&&n| n > 0).count() == 1;
    let rows = sample_rows(&r.time_series, s.output.interval_ns);
    let op = |summary: &OpSummary,
              hist: &Histogram<u64>,
              pick: fn(&crate::io::stats::interval::TimeSeriesRow) -> &IntervalFigures| {
        let clat = match (service, &service_hist) {
            (None, _) => Some((&summary.latency_ns, hist)),
            (Some(sv), Some(h)) if one_op_type && summary.ops > 0 => Some((&sv.latency_ns, h)),
            _ => None,
        };
        let samples: Vec<&IntervalFigures> = rows.iter().map(|row| pick(row)).collect();
        fio_op(summary, hist, clat, &samples, runtime_ms, form)
    };
    let trim_op = op(&trim, &trim_hist, |_| &NO_FIGURES);
    let hists = [&read_hist, &write_hist, &trim_hist];
    let total_ios = r.figures.read.ops + r.figures.write.ops + trim.ops;
    let job = FioJob {
        jobname: "iopulse".into(),
        desc: r.data.holes_read.clone(),
        groupid: 0,
        error: u32::from(r.outcome.error.is_some()),
        eta: 0,
        elapsed: r.window.window_ns.div_ceil(1_000_000_000),
        job_options: job_options(r),
        read: op(&r.figures.read, &read_hist, |row| &row.read),
        write: op(&r.figures.write, &write_hist, |row| &row.write),
        trim: trim_op,
        sync: match (&r.figures.flush, &r.histograms.flush) {
            (Some(f), Some(text)) => {
                let h = decode_histogram(text)?;
                let op = fio_op(f, &h, Some((&f.latency_ns, &h)), &[], runtime_ms, Form::Json);
                FioSync { total_ios: f.ops, lat_ns: op.lat_ns }
            }
            _ => FioSync { total_ios: 0, lat_ns: LatencyStats::zero() },
        },
        job_runtime: runtime_ms,
        usr_cpu: cpu_percent(r.machine.cpu.workers.user_ns),
        sys_cpu: cpu_percent(r.machine.cpu.workers.sys_ns),
        ctx: r.machine.cpu.workers.context_switches,
        majf: r.machine.cpu.workers.major_faults,
        minf: r.machine.cpu.workers.minor_faults,
        iodepth_level: depth_levels(r),
        iodepth_submit: batch_sizes(r, false),
        iodepth_complete: batch_sizes(r, true),
        latency_ns: latency_table(&hists, total_ios, 0),
        latency_us: latency_table(&hists, total_ios, 1),
        latency_ms: latency_table(&hists, total_ios, 2),
        latency_depth: s.shape.queue_depth,
        latency_target: 0,
        latency_percentile: 100.0,
        latency_window: 0,
    };
    let doc = FioDocument {
        fio_version: format!("iopulse-{}", r.tool.version),
        timestamp: started.as_secs(),
        timestamp_ms: started.as_millis() as u64,
        time: ctime_utc(started.as_secs()),
        jobs: vec![job],
        disk_util: disk_util(r),
        iopulse: iopulse_extra(r),
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("the fio document always serializes");
    text.push('\n');
    Ok(text)
}

/// The job's options as fio names them (rw, bs, iodepth, ...), from the spec the run had.
fn job_options(r: &RunResult) -> JobOptions {
    let s = &r.spec;
    let random = s.access.order == AccessOrder::Random;
    let rw = match (s.access.read_percent, random) {
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
    JobOptions {
        name: "iopulse".into(),
        filename,
        rw: rw.into(),
        rwmixread: s.access.read_percent.to_string(),
        bs: s.shape.block_sizes.as_ref().map_or(s.shape.block_size_bytes, |m| m.sizes()[0]).to_string(),
        bssplit: s.shape.block_sizes.as_ref().filter(|m| m.sizes().len() > 1).map(|m| m.fio_syntax()),
        blockalign: s.shape.block_sizes.as_ref().map(|m| m.align_bytes.to_string()),
        iodepth: s.shape.queue_depth.to_string(),
        numjobs: s.shape.threads.to_string(),
        percentage_random: s.access.random_percent.map(|p| p.to_string()),
        ramp_time: (r.window.ramp_ns > 0).then(|| format!("{}ms", r.window.ramp_ns / 1_000_000)),
        // fio's name for pread/pwrite is psync.
        ioengine: if r.engine.name == "sync" { "psync".into() } else { r.engine.name.clone() },
        direct: u8::from(r.data.direct.effective).to_string(),
        randseed: s.seed.to_string(),
    }
}

/// What iopulse adds beside fio's document: the cache mode, holes read and each target's
/// layout and page cache.
fn iopulse_extra(r: &RunResult) -> IopulseExtra {
    IopulseExtra {
        cache: r.spec.io.cache.name(),
        holes_read: r.data.holes_read.clone(),
        targets: r
            .targets
            .iter()
            .map(|t| IopulseTarget {
                path: t.path.clone(),
                laid_out_bytes: t.laid_out_bytes,
                allocation: t.storage.allocation.clone(),
                page_cache: t.storage.page_cache.clone(),
            })
            .collect(),
    }
}

/// What an op type without interval figures (trims) has in every row.
static NO_FIGURES: IntervalFigures =
    IntervalFigures { ops: 0, iops: 0.0, bw_bytes_per_sec: 0.0, latency_ns: LatencySummary::ZERO };

/// One op type: `lat` from `hist`, `clat` from the service time where it differs (`None`:
/// not known for this op type), the sample statistics from the interval rows.
fn fio_op(
    op: &OpSummary,
    hist: &Histogram<u64>,
    clat: Option<(&LatencySummary, &Histogram<u64>)>,
    samples: &[&IntervalFigures],
    runtime_ms: u64,
    form: Form,
) -> FioOp {
    let stats = |l: &LatencySummary, h: &Histogram<u64>| {
        if op.ops == 0 || h.is_empty() {
            return LatencyStats::zero();
        }
        let percentile = OrderedMap(
            FIO_PERCENTILES
                .iter()
                .map(|&p| (format!("{p:.6}"), clamped_quantile(h, p / 100.0, l.min, l.max)))
                .collect(),
        );
        let bins = (form == Form::JsonPlus)
            .then(|| OrderedMap(recorded_buckets(h).into_iter().map(|(v, n)| (v.to_string(), n)).collect()));
        LatencyStats {
            min: l.min,
            max: l.max,
            mean: l.mean as f64,
            stddev: l.stddev as f64,
            n: op.ops,
            percentile: Some(percentile),
            bins,
        }
    };
    let with_ops: Vec<&IntervalFigures> = if op.ops == 0 { Vec::new() } else { samples.to_vec() };
    let bw = SampleStats::of(with_ops.iter().map(|f| f.bw_bytes_per_sec / 1024.0));
    let iops = SampleStats::of(with_ops.iter().map(|f| f.iops));
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
        // Submission latency is not measured apart (iopulse has no separate submission
        // step): fio prints a latency it did not record as all zeros with N 0.
        slat_ns: LatencyStats::zero(),
        clat_ns: clat.map_or_else(LatencyStats::zero, |(l, h)| stats(l, h)),
        lat_ns: stats(&op.latency_ns, hist),
        bw_min: bw.min.round() as u64,
        bw_max: bw.max.round() as u64,
        // The share of the group's bandwidth: one job is the whole group.
        bw_agg: if bw.samples > 0 { 100.0 } else { 0.0 },
        bw_mean: bw.mean,
        bw_dev: bw.stddev,
        bw_samples: bw.samples,
        iops_min: iops.min.round() as u64,
        iops_max: iops.max.round() as u64,
        iops_mean: iops.mean,
        iops_stddev: iops.stddev,
        iops_samples: iops.samples,
    }
}

/// fio's latency buckets, each an exclusive upper bound in its unit: `latency_ns`,
/// `latency_us` (from 1 µs) and `latency_ms` (from 1 ms; then 2000 and `>=2000`).
const LATENCY_BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// fio's `latency_ns` (`unit` 0), `latency_us` (1) or `latency_ms` (2): the percentage of
/// all I/Os whose latency falls in each bucket.
fn latency_table(hists: &[&Histogram<u64>], total_ios: u64, unit: u32) -> OrderedMap<f64> {
    let bounds_ns: Vec<u64> =
        (0..3u32).flat_map(|u| LATENCY_BOUNDS.iter().map(move |b| b * 1000u64.pow(u))).chain([2_000_000_000]).collect();
    let counts = counts_below(hists, &bounds_ns);
    let percent = |n: u64| if total_ios > 0 { n as f64 * 100.0 / total_ios as f64 } else { 0.0 };
    let from = unit as usize * LATENCY_BOUNDS.len();
    let mut table: Vec<(String, f64)> =
        LATENCY_BOUNDS.iter().enumerate().map(|(i, b)| (b.to_string(), percent(counts[from + i]))).collect();
    if unit == 2 {
        table.push(("2000".into(), percent(counts[30])));
        table.push((">=2000".into(), percent(counts[31])));
    }
    OrderedMap(table)
}

/// fio's `iodepth_level`: the I/Os by the depth they were issued at (the result's
/// counted `io_depths.at_issue`), in fio's buckets 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64+,
/// as shares of the I/Os; zeros when the result has no counts (an older result).
fn depth_levels(r: &RunResult) -> OrderedMap<f64> {
    const LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    // The bucket of depth d: 1 -> 0, 2-3 -> 1, 4-7 -> 2, ..., 64 and more -> 6.
    let bucket = |d: u32| (d.max(1).ilog2() as usize).min(6);
    shares(&LEVELS, r.figures.io_depths.as_ref().map(|d| d.at_issue.as_slice()), bucket)
}

/// fio's `iodepth_submit` (`complete`: false) and `iodepth_complete`: the submitting
/// system calls (the reaps) by the I/Os each carried, from the result's counted
/// `io_depths`, in fio's buckets 0, 1-4, 5-8, 9-16, 17-32, 33-64, above 64, as shares.
fn batch_sizes(r: &RunResult, complete: bool) -> OrderedMap<f64> {
    const SIZES: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    // The bucket of n: 0 -> 0, 1-4 -> 1, 5-8 -> 2, 9-16 -> 3, 17-32 -> 4, 33-64 -> 5, more -> 6.
    let bucket = |n: u32| if n == 0 { 0 } else { ((n - 1).max(2).ilog2() as usize).min(6) };
    let counts =
        r.figures.io_depths.as_ref().map(|d| if complete { d.per_reap.as_slice() } else { d.per_submit.as_slice() });
    shares(&SIZES, counts, bucket)
}

/// `counts` (`[value, count]` pairs) put in fio's buckets (`bucket` of a value) under
/// `keys`, as percentages of their sum.
fn shares(keys: &[&str], counts: Option<&[(u32, u64)]>, bucket: impl Fn(u32) -> usize) -> OrderedMap<f64> {
    let mut sums = vec![0u64; keys.len()];
    for &(value, count) in counts.unwrap_or_default() {
        sums[bucket(value).min(keys.len() - 1)] += count;
    }
    let total: u64 = sums.iter().sum();
    let percent = |n: u64| if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 };
    OrderedMap(keys.iter().zip(&sums).map(|(k, &n)| (k.to_string(), percent(n))).collect())
}

/// fio's `disk_util`: each device under the targets (and those stacked below it), once,
/// with its counters over the window; none where they are unknown.
fn disk_util(r: &RunResult) -> Vec<DiskUtil> {
    let window_ms = (r.window.window_ns as f64 / 1e6).max(1.0);
    let mut out: Vec<DiskUtil> = Vec::new();
    for w in r.targets.iter().filter_map(|t| t.storage.device_witness.as_ref()) {
        let devices = std::iter::once((&w.device, &w.delta)).chain(w.stacked.iter().map(|d| (&d.name, &d.delta)));
        for (name, delta) in devices {
            let Some(d) = delta else { continue };
            if out.iter().any(|u| &u.name == name) {
                continue;
            }
            out.push(DiskUtil {
                name: name.clone(),
                read_ios: d.read_ios,
                write_ios: d.write_ios,
                read_merges: d.read_merges,
                write_merges: d.write_merges,
                read_ticks: d.read_ticks_ms,
                write_ticks: d.write_ticks_ms,
                in_queue: d.in_queue_ms,
                util: (d.io_ticks_ms as f64 * 100.0 / window_ms).min(100.0),
            });
        }
    }
    out
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
