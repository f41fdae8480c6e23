//! `iopulse merge`: one result from the JSON results of concurrent runs (several
//! processes or hosts running the same workload at the same time).
//!
//! Latency comes from the histograms added bucket by bucket (exact: never an
//! average of percentiles), with the exact min and max of all runs and the mean
//! weighted by I/O counts; percentiles stay inside [min, max]. Counts, bytes,
//! IOPS, bandwidth, CPU time and achieved queue depth are summed (the runs ran
//! side by side); the window is the longest one. Results of different specs
//! (the seed aside) are refused unless forced. The merged document is a
//! `RunResult` with `merged_from` set (docs/json.md).

use crate::result::jobs::JobsResult;
use crate::result::{
    AchievedQueueDepth, BlockSizeFigures, CpuInfo, IoDepths, MergedSource, RunResult, SizeHistograms, StopReason,
    ToolTime, WindowSkew,
};
use crate::stats::{
    CpuTimes, HistogramCodecError, LatencySummary, OpSummary, decode_histogram, encode_histogram, new_latency_histogram,
};
use crate::targets::identity::FileId;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Spec fields that may differ between runs of the same workload.
/// The seeds: two runs of one workload draw their own offsets and write their own bytes.
const SPEC_FIELDS_ALLOWED_TO_DIFFER: &[&str] = &["spec.seed", "spec.data_seed"];
/// Spec fields, with everything under them, that may differ too: `--expect` judges a
/// result and changes nothing the run does.
const SPEC_PREFIXES_ALLOWED_TO_DIFFER: &[&str] = &["spec.expect"];

/// One result to merge, with the name it was given by.
#[derive(Clone, Debug)]
pub struct Input {
    pub file: String,
    pub result: RunResult,
    /// The file it was read from (device and inode of the opened file), to refuse one file
    /// given twice by two names; `None` when the result did not come from a file.
    pub id: Option<FileId>,
}

/// A spec field whose value differs between two results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecDifference {
    /// JSON path of the field, e.g. `spec.block_size_bytes`.
    pub field: String,
    pub first: String,
    pub other: String,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Load(#[from] super::load::LoadError),
    #[error("{file}: {source}")]
    Histogram {
        file: String,
        #[source]
        source: HistogramCodecError,
    },
    #[error("nothing to merge: give one or more JSON results")]
    Empty,
    #[error(
        "{file} has schema_version {found} but {first} has {expected}: results of different iopulse result layouts cannot be merged"
    )]
    SchemaVersion { file: String, found: u32, first: String, expected: u32 },
    #[error(
        "{first} and {other} are the same result ({how}): merging it twice would double its IOPS; give each result once, or pass --allow-duplicates if they really are two runs"
    )]
    Duplicate { first: String, other: String, how: &'static str },
    #[error(
        "stdout is {file}, one of the results to merge: writing the merged result there destroys it (with `> {file}` the shell has emptied it already); write the merged result to another file, e.g. > merged.json"
    )]
    StdoutIsAnInput { file: String },
    #[error(
        "{file}: its {field} ({value}) added to the other results' overflows 64 bits: a result was altered or damaged; merge results of runs side by side"
    )]
    Overflow { file: String, field: String, value: u64 },
    #[error(
        "{file} is the result of a job file (`iopulse run`) but {plain} is a single run's: merge job-file results only with results of the same job file, or take one job out first (jq '.jobs[] | select(.job == \"NAME\")' {file})"
    )]
    JobFileAndSingleRun { file: String, plain: String },
    #[error(
        "{file} has the jobs {found} but {first} has {expected}: merge the results of one job file (the same jobs, by name and phase), or merge one job of each (jq '.jobs[] | select(.job == \"NAME\")')"
    )]
    JobNames { file: String, found: String, first: String, expected: String },
    #[error(
        "{file}: its {field} ({value}) added to the other results' passes 2^63 - 1, the most samples one histogram holds: a result was altered or damaged; merge results of runs side by side"
    )]
    HistogramCount { file: String, field: String, value: u64 },
    #[error(
        "{metadata} is a metadata run's result (--files) but {block} is a block run's: merge metadata results only with metadata results of the same workload"
    )]
    MetadataAndBlock { metadata: String, block: String },
    #[error(
        "{file} has the phases {found} but {first} has {expected}: merge metadata results of one workload (the same --meta-mix or --meta-phases)"
    )]
    MetadataPhases { file: String, found: String, first: String, expected: String },
    #[error(
        "{file}: job {job} has `files` (a metadata job) in a block result: a job file of metadata jobs writes a metadata result per job; merge those (iopulse DIR --files N --json FILE)"
    )]
    MetadataJob { file: String, job: String },
    #[error("{first} and {other} have different specs: {}; merge results of one workload, or pass --force to merge them anyway", describe(.differences, .first, .other))]
    SpecMismatch { first: String, other: String, differences: Vec<SpecDifference> },
}

pub(crate) fn describe(differences: &[SpecDifference], first: &str, other: &str) -> String {
    differences
        .iter()
        .map(|d| format!("{} is {} in {first} but {} in {other}", d.field, d.first, d.other))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A block result read (`load::document`: a regular file on a real filesystem of at most
/// `load::MAX_RESULT_BYTES`, parsed without its time series, which merging drops, its
/// figures judged) as an input to merge, with the job-file document (`jobs[]`,
/// `phases[]`) when the file is the result of a job file (`iopulse run`).
pub fn document_of(loaded: super::load::Loaded) -> (Input, Option<JobsResult>) {
    (Input { file: loaded.file, result: loaded.result, id: Some(loaded.id) }, loaded.jobs)
}

/// Refuses an input that is also where the merged result goes (stdout, a regular file
/// by device and inode): `merge a.json b.json > a.json` would read an emptied `a.json`,
/// and `>> a.json` would append the merged result to it. Checked before any input is read.
pub fn refuse_stdout_as_input(paths: &[&Path]) -> Result<(), MergeError> {
    let Ok(out) = nix::sys::stat::fstat(std::io::stdout()) else { return Ok(()) };
    if out.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Ok(());
    }
    let out = Some(FileId { dev: out.st_dev, ino: out.st_ino });
    match paths.iter().find(|p| FileId::of(p) == out) {
        Some(p) => Err(MergeError::StdoutIsAnInput { file: p.display().to_string() }),
        None => Ok(()),
    }
}

/// Refuses one result given twice: the same file (by device and inode), or two copies of
/// one run (same host, same start to the nanosecond where recorded, same spec and seed).
/// Merging takes its inputs as concurrent runs, so a duplicate would double the figures.
pub fn refuse_duplicates(inputs: &[Input]) -> Result<(), MergeError> {
    refuse_duplicates_by(inputs, |i| (i.file.as_str(), i.id, &i.result), same_run, SAME_RUN)
}

/// What `same_run` matches, for messages.
pub const SAME_RUN: &str = "same host, start and spec";

/// Two results that are copies of one run: same host, same start to the nanosecond where
/// recorded, same spec and seed (what `merge` and `compare` refuse to count twice).
pub fn same_run(a: &RunResult, b: &RunResult) -> bool {
    a.environment.hostname == b.environment.hostname
        && a.started_at == b.started_at
        && a.window_start_unix_ns == b.window_start_unix_ns
        && a.spec.seed == b.spec.seed
        && spec_differences(a, b).is_empty()
}

/// The duplicate check of any kind of result (block or metadata): each pair of inputs,
/// refused when both were read from one file or `same_run` says they are one run (`how`
/// names what matched). `parts` gives an input's name, file identity and result.
pub(crate) fn refuse_duplicates_by<I, R>(
    inputs: &[I],
    parts: impl Fn(&I) -> (&str, Option<FileId>, &R),
    same_run: impl Fn(&R, &R) -> bool,
    how: &'static str,
) -> Result<(), MergeError> {
    for (i, a) in inputs.iter().enumerate() {
        let (a_file, a_id, a_result) = parts(a);
        for b in &inputs[i + 1..] {
            let (b_file, b_id, b_result) = parts(b);
            let how = if a_id.is_some() && a_id == b_id {
                "one file, by device and inode"
            } else if same_run(a_result, b_result) {
                how
            } else {
                continue;
            };
            return Err(MergeError::Duplicate { first: a_file.to_string(), other: b_file.to_string(), how });
        }
    }
    Ok(())
}

/// The fields of two specs that differ (by their JSON form), the seeds aside.
pub fn spec_differences(a: &RunResult, b: &RunResult) -> Vec<SpecDifference> {
    spec_differences_of(&a.spec, &b.spec)
}

/// The fields of two specs that differ (by their JSON form), the seeds aside: what
/// `spec_differences` compares, for any result that carries a spec (a metadata run's).
pub fn spec_differences_of(a: &crate::spec::Spec, b: &crate::spec::Spec) -> Vec<SpecDifference> {
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    flatten("spec", &serde_json::to_value(a).unwrap_or(Value::Null), &mut fa);
    flatten("spec", &serde_json::to_value(b).unwrap_or(Value::Null), &mut fb);
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !SPEC_FIELDS_ALLOWED_TO_DIFFER.contains(&k.as_str()))
        .filter(|k| !SPEC_PREFIXES_ALLOWED_TO_DIFFER.iter().any(|p| *k == p || k.starts_with(&format!("{p}."))))
        .filter_map(|k| {
            let (x, y) = (fa.get(k), fb.get(k));
            (x != y).then(|| SpecDifference {
                field: k.clone(),
                first: x.cloned().unwrap_or_else(|| "absent".into()),
                other: y.cloned().unwrap_or_else(|| "absent".into()),
            })
        })
        .collect()
}

/// Leaves of a JSON value by dotted path (`spec.run_length.duration.ns`, `spec.targets.0`).
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                flatten(&format!("{prefix}.{k}"), child, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), child, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// The merged result and the notes and warnings it adds (also in its `notes` and `warnings`).
pub struct Merged {
    pub result: RunResult,
    pub notes: Vec<String>,
    /// About the merge as a whole (the windows hardly overlapped), not about one input.
    pub warnings: Vec<String>,
}

/// Merges `inputs` (results of concurrent runs). With `force`, different specs are merged
/// anyway (the first one's spec is kept, and each difference is noted).
pub fn merge(inputs: &[Input], force: bool) -> Result<Merged, MergeError> {
    let Some(first) = inputs.first() else { return Err(MergeError::Empty) };
    let mut notes = Vec::new();
    for other in &inputs[1..] {
        if other.result.schema_version != first.result.schema_version {
            return Err(MergeError::SchemaVersion {
                file: other.file.clone(),
                found: other.result.schema_version,
                first: first.file.clone(),
                expected: first.result.schema_version,
            });
        }
        let differences = spec_differences(&first.result, &other.result);
        if differences.is_empty() {
            continue;
        }
        if !force {
            return Err(MergeError::SpecMismatch { first: first.file.clone(), other: other.file.clone(), differences });
        }
        notes.push(format!(
            "--force: merged despite different specs ({}); the spec shown is {}'s",
            describe(&differences, &first.file, &other.file),
            first.file
        ));
    }

    let decode = |input: &Input, text: &str| {
        decode_histogram(text).map_err(|source| MergeError::Histogram { file: input.file.clone(), source })
    };
    let mut read_hist = new_latency_histogram();
    let mut write_hist = new_latency_histogram();
    for input in inputs {
        add_within(&mut read_hist, &decode(input, &input.result.histograms.read)?, &input.file, "histograms.read")?;
        add_within(&mut write_hist, &decode(input, &input.result.histograms.write)?, &input.file, "histograms.write")?;
    }
    let mut total_hist = read_hist.clone();
    add(&mut total_hist, &write_hist);
    // Flushes (`--fsync-every`, `--fdatasync-every`) and trims (`--trim-percent`): merged
    // from the results that have them.
    let mut flush_hist = new_latency_histogram();
    let mut trim_hist = new_latency_histogram();
    for input in inputs {
        if let Some(text) = &input.result.histograms.flush {
            add_within(&mut flush_hist, &decode(input, text)?, &input.file, "histograms.flush")?;
        }
        if let Some(text) = &input.result.histograms.trim {
            add_within(&mut trim_hist, &decode(input, text)?, &input.file, "histograms.trim")?;
        }
    }

    let results: Vec<&RunResult> = inputs.iter().map(|i| &i.result).collect();
    let mut hostnames: Vec<&str> = Vec::new();
    for r in &results {
        if !hostnames.contains(&r.environment.hostname.as_str()) {
            hostnames.push(&r.environment.hostname);
        }
    }
    let several_hosts = hostnames.len() > 1;

    let mut m = first.result.clone();
    // Expectations were judged against each input's own figures, not the merged ones.
    m.expectations.clear();
    m.tool.version = env!("CARGO_PKG_VERSION").into();
    m.started_at = results.iter().map(|r| r.started_at.clone()).min().unwrap_or_default();
    m.window_start_unix_ns =
        results.iter().map(|r| r.window_start_unix_ns).filter(|&t| t > 0).min().unwrap_or_default();
    m.start_at = None;
    m.window_skew = window_skew(&results);
    if results.iter().any(|r| r.cluster.is_some()) {
        notes.push("cluster results merged: their rank tables are in their own files".into());
    }
    m.cluster = None;
    // Each run's CPU state is its own machine's at its own time: none describes the
    // merge (every input keeps its own, and a cluster result each rank's).
    m.cpu_state = None;
    m.environment.hostname = hostnames.join(",");
    m.window_ns = results.iter().map(|r| r.window_ns).max().unwrap_or(0);
    m.stop_reason = if results.iter().any(|r| r.stop_reason == StopReason::Error) {
        StopReason::Error
    } else if results.iter().any(|r| r.stop_reason == StopReason::Interrupted) {
        StopReason::Interrupted
    } else if results.iter().all(|r| r.stop_reason == StopReason::Complete) {
        StopReason::Complete
    } else {
        StopReason::Duration
    };
    m.interrupted = results.iter().any(|r| r.interrupted);
    let of = |f: fn(&RunResult) -> Option<&OpSummary>| -> Vec<(&str, &OpSummary)> {
        inputs.iter().filter_map(|i| Some((i.file.as_str(), f(&i.result)?))).collect()
    };
    m.read = merge_op("read", &of(|r| Some(&r.read)), &read_hist)?;
    m.write = merge_op("write", &of(|r| Some(&r.write)), &write_hist)?;
    m.total = merge_op("total", &of(|r| Some(&r.total)), &total_hist)?;
    let flushes = of(|r| r.flush.as_ref());
    m.flush = if flushes.is_empty() { None } else { Some(merge_op("flush", &flushes, &flush_hist)?) };
    m.histograms.flush = m.flush.is_some().then(|| encode_histogram(&flush_hist));
    let trims = of(|r| r.trim.as_ref());
    m.trim = if trims.is_empty() { None } else { Some(merge_op("trim", &trims, &trim_hist)?) };
    m.histograms.trim = m.trim.is_some().then(|| encode_histogram(&trim_hist));
    merge_block_sizes(inputs, &mut m)?;
    m.zones = merge_zones(&results);

    m.direct.effective = results.iter().all(|r| r.direct.effective);
    m.direct.reason = results.iter().find_map(|r| r.direct.reason.clone());
    m.direct.memory_backed = results.iter().any(|r| r.direct.memory_backed);

    // Targets of several hosts are told apart by host, the same path of one host by result file.
    let mut paths: Vec<&str> = results.iter().flat_map(|r| r.targets.iter().map(|t| t.path.as_str())).collect();
    paths.sort_unstable();
    let paths_repeat = paths.windows(2).any(|w| w[0] == w[1]);
    m.targets = inputs
        .iter()
        .flat_map(|i| {
            i.result.targets.iter().cloned().map(move |mut t| {
                if several_hosts {
                    t.path = format!("{}:{}", i.result.environment.hostname, t.path);
                } else if paths_repeat {
                    t.path = format!("{} ({})", t.path, i.file);
                }
                t
            })
        })
        .collect();
    // A device's counters are one host's: across hosts they count different devices under
    // one name, so the witness is kept only when every result is from one host.
    if m.targets.iter().any(|t| t.device_witness.is_some()) {
        if several_hosts {
            for t in &mut m.targets {
                t.device_witness = None;
            }
            notes.push(
                "device witnesses dropped: the results are from several hosts (each result's own is in its file)"
                    .into(),
            );
        } else if inputs.len() > 1 {
            notes.push(
                "device witnesses are each run's own: concurrent runs on one device count in each other's figures"
                    .into(),
            );
        }
    }
    m.workers = results.iter().flat_map(|r| r.workers.iter().cloned()).collect();
    for (index, w) in m.workers.iter_mut().enumerate() {
        w.index = index as u32;
    }

    let (mut workers, mut process, mut window) = Default::default();
    for i in inputs {
        let cpu = &i.result.cpu;
        add_cpu(&mut workers, &cpu.workers, &i.file, "cpu.workers")?;
        add_cpu(&mut process, &cpu.process, &i.file, "cpu.process")?;
        add_cpu(&mut window, &cpu.window, &i.file, "cpu.window")?;
    }
    let ops = m.total.ops;
    let per_io = |cpu: &CpuTimes| if ops > 0 { cpu.total_ns() as f64 / ops as f64 } else { 0.0 };
    m.cpu = CpuInfo {
        workers,
        process,
        window,
        other_ns: window.total_ns().saturating_sub(workers.total_ns()),
        per_io_ns: per_io(&window),
        workers_per_io_ns: per_io(&workers),
        // Each result's cores were busy over its own window: they add up.
        cores_busy: results.iter().map(|r| r.cpu.cores_busy).sum(),
    };
    m.storage_touched = results.iter().all(|r| r.storage_touched);

    let in_flight: f64 = results.iter().map(|r| r.achieved_queue_depth.total).sum();
    m.achieved_queue_depth =
        AchievedQueueDepth { total: in_flight, mean_per_worker: in_flight / m.workers.len().max(1) as f64 };
    // The tool's own time: every result must have it (unpaced runs), or the merge has none.
    m.tool_time = results.iter().map(|r| r.tool_time.map(|t| (r, t))).collect::<Option<Vec<_>>>().map(|times| {
        let total_ns: u64 = times.iter().map(|(_, t)| t.total_ns).sum();
        // Each result's share weighs by its workers' time (window × workers).
        let worker_ns: f64 = times.iter().map(|(r, _)| r.window_ns as f64 * r.workers.len().max(1) as f64).sum();
        ToolTime {
            total_ns,
            per_io_ns: if ops > 0 { total_ns as f64 / ops as f64 } else { 0.0 },
            share_of_window: if worker_ns > 0.0 { total_ns as f64 / worker_ns } else { 0.0 },
        }
    });

    // Depth counts add up; a result without them (an older one) leaves the merge without.
    m.io_depths = results.iter().map(|r| r.io_depths.as_ref()).collect::<Option<Vec<_>>>().map(|all| IoDepths {
        at_issue: add_pairs(all.iter().map(|d| &d.at_issue)),
        per_submit: add_pairs(all.iter().map(|d| &d.per_submit)),
        per_reap: add_pairs(all.iter().map(|d| &d.per_reap)),
    });

    if results.iter().any(|r| r.coverage.is_some()) {
        notes.push("coverage is not merged: each result's own is in its file".into());
    }
    m.coverage = None;

    m.histograms.read = encode_histogram(&read_hist);
    m.histograms.write = encode_histogram(&write_hist);

    m.warnings =
        inputs.iter().flat_map(|i| i.result.warnings.iter().map(move |w| format!("{}: {w}", i.file))).collect();
    // A run stopped by an error or a signal ends early: its stop reason already says why.
    let stopped_early = results.iter().any(|r| matches!(r.stop_reason, StopReason::Error | StopReason::Interrupted));
    let warnings: Vec<String> = if stopped_early {
        Vec::new()
    } else {
        overlap_warning(m.window_skew.as_ref(), m.window_ns).into_iter().collect()
    };
    m.warnings.extend(warnings.iter().cloned());
    m.error = inputs.iter().find_map(|i| i.result.error.as_ref().map(|e| format!("{}: {e}", i.file)));
    notes.insert(
        0,
        format!(
            "merged from {} results of concurrent runs: latency from the added histograms, IOPS and bandwidth summed",
            inputs.len()
        ),
    );
    m.notes = notes.clone();
    // Intervals of separate runs do not line up in time: the merged result has no time series.
    m.time_series = Vec::new();
    // Each run judged its own steady window: none describes the merge.
    m.steady_state = None;
    m.merged_from = Some(
        inputs
            .iter()
            .map(|i| MergedSource {
                file: i.file.clone(),
                hostname: i.result.environment.hostname.clone(),
                started_at: i.result.started_at.clone(),
                window_ns: i.result.window_ns,
                seed: i.result.spec.seed,
                ops: i.result.total.ops,
                iops: i.result.total.iops,
                window_start_unix_ns: i.result.window_start_unix_ns,
            })
            .collect(),
    );
    Ok(Merged { result: m, notes, warnings })
}

/// How far apart the windows of `results` were, from those that recorded their start
/// on the wall clock; `None` if fewer than two did.
pub fn window_skew(results: &[&RunResult]) -> Option<WindowSkew> {
    let windows: Vec<(u64, u64)> = results
        .iter()
        .filter(|r| r.window_start_unix_ns > 0)
        .map(|r| (r.window_start_unix_ns, r.window_start_unix_ns.saturating_add(r.window_ns)))
        .collect();
    if windows.len() < 2 {
        return None;
    }
    let (first_start, last_start) = min_max(windows.iter().map(|w| w.0));
    let (first_end, last_end) = min_max(windows.iter().map(|w| w.1));
    Some(WindowSkew {
        start_ns: last_start - first_start,
        end_ns: last_end - first_end,
        overlap_ns: first_end.saturating_sub(last_start),
        results: windows.len() as u32,
    })
}

fn min_max(values: impl Iterator<Item = u64> + Clone) -> (u64, u64) {
    (values.clone().min().unwrap_or(0), values.max().unwrap_or(0))
}

/// Windows that were open together for less than this share of the longest one: their
/// summed IOPS describe a load that never happened at once.
const MIN_OVERLAP_SHARE: f64 = 0.9;

/// The warning for windows that overlapped too little, if they did.
fn overlap_warning(skew: Option<&WindowSkew>, longest_window_ns: u64) -> Option<String> {
    let skew = skew?;
    let share = skew.overlap_ns as f64 / longest_window_ns.max(1) as f64;
    if share >= MIN_OVERLAP_SHARE {
        return None;
    }
    let why = if skew.start_ns >= skew.end_ns {
        format!("they started {} apart", crate::units::display::latency_ns(skew.start_ns))
    } else {
        format!("they ended {} apart", crate::units::display::latency_ns(skew.end_ns))
    };
    Some(format!(
        "the runs' windows were open together for only {:.0}% of the longest ({why}): their summed IOPS and bandwidth describe a load that never ran all at once (start runs on several hosts together with --start-at and one --duration)",
        share * 100.0
    ))
}

/// `--bssplit`, `--block-align`: each size's figures over the inputs, latency from their
/// added histograms, shares recomputed from the merged counts.
/// Zones of concurrent runs of one workload: their I/Os added zone by zone (none when the
/// results disagree on the zones).
fn merge_zones(results: &[&RunResult]) -> Vec<crate::result::ZoneShare> {
    let Some(first) = results.first() else { return Vec::new() };
    let asked: Vec<f64> = first.zones.iter().map(|z| z.io_percent_asked).collect();
    if results.iter().any(|r| r.zones.iter().map(|z| z.io_percent_asked).ne(asked.iter().copied())) {
        return Vec::new();
    }
    let mut zones = first.zones.clone();
    for z in zones.iter_mut() {
        z.ios = 0;
    }
    for r in results {
        for (sum, z) in zones.iter_mut().zip(&r.zones) {
            sum.ios = sum.ios.saturating_add(z.ios);
        }
    }
    crate::result::ZoneShare::refigure(&mut zones);
    zones
}

fn merge_block_sizes(inputs: &[Input], m: &mut RunResult) -> Result<(), MergeError> {
    let mut sizes: Vec<u64> = inputs.iter().flat_map(|i| i.result.block_sizes.iter().map(|b| b.size_bytes)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut figures = Vec::with_capacity(sizes.len());
    let mut histograms = Vec::with_capacity(sizes.len());
    for size in sizes {
        let mut hists = [new_latency_histogram(), new_latency_histogram(), new_latency_histogram()];
        let mut parts = Vec::new();
        for input in inputs {
            let Some(f) = input.result.block_sizes.iter().find(|b| b.size_bytes == size) else { continue };
            if let Some(h) = input.result.histograms.block_sizes.iter().find(|h| h.size_bytes == size) {
                let texts = [("read", Some(&h.read)), ("write", Some(&h.write)), ("trim", h.trim.as_ref())];
                for (into, (op, text)) in hists.iter_mut().zip(texts) {
                    if let Some(text) = text {
                        let decoded = decode_histogram(text)
                            .map_err(|source| MergeError::Histogram { file: input.file.clone(), source })?;
                        add_within(into, &decoded, &input.file, &format!("histograms.block_sizes[{size}].{op}"))?;
                    }
                }
            }
            parts.push((input.file.as_str(), f));
        }
        let first = parts[0].1;
        let at = |op: &str| format!("block_sizes[{size}].{op}");
        let of = |get: fn(&BlockSizeFigures) -> Option<&OpSummary>| -> Vec<(&str, &OpSummary)> {
            parts.iter().filter_map(|(file, p)| Some((*file, get(p)?))).collect()
        };
        let trims = of(|p| p.trim.as_ref());
        figures.push(BlockSizeFigures {
            size_bytes: size,
            read: merge_op(&at("read"), &of(|p| Some(&p.read)), &hists[0])?,
            write: merge_op(&at("write"), &of(|p| Some(&p.write)), &hists[1])?,
            trim: if trims.is_empty() { None } else { Some(merge_op(&at("trim"), &trims, &hists[2])?) },
            ..first.clone()
        });
        histograms.push(SizeHistograms {
            size_bytes: size,
            read: encode_histogram(&hists[0]),
            write: encode_histogram(&hists[1]),
            trim: (!trims.is_empty()).then(|| encode_histogram(&hists[2])),
        });
    }
    // Summed in 128 bits: the sizes' counts were each checked, not their sum.
    let total = |f: fn(&BlockSizeFigures) -> u64| figures.iter().map(|b| u128::from(f(b))).sum::<u128>();
    let (reads, writes) = (total(|b| b.read.ops), total(|b| b.write.ops));
    let trims = total(|b| b.trim.map_or(0, |t| t.ops));
    let share = |ops: u64, of: u128| if of == 0 { 0.0 } else { 100.0 * ops as f64 / of as f64 };
    for b in &mut figures {
        b.read_share_percent = share(b.read.ops, reads);
        b.write_share_percent = share(b.write.ops, writes);
        b.trim_share_percent = b.trim.map(|t| share(t.ops, trims));
    }
    m.block_sizes = figures;
    m.histograms.block_sizes = histograms;
    Ok(())
}

/// `add`, refusing a sum of more samples than a histogram can be written with (its V2
/// serialisation holds counts as i64: encoding more would panic), naming the `file` and
/// `field` of `other`, whose samples crossed the line.
pub(crate) fn add_within(
    into: &mut Histogram<u64>,
    other: &Histogram<u64>,
    file: &str,
    field: &str,
) -> Result<(), MergeError> {
    if into.len().saturating_add(other.len()) > i64::MAX as u64 {
        return Err(MergeError::HistogramCount {
            file: file.to_string(),
            field: field.to_string(),
            value: other.len(),
        });
    }
    add(into, other);
    Ok(())
}

pub(crate) fn add(into: &mut Histogram<u64>, other: &Histogram<u64>) {
    // Both come from new_latency_histogram's bounds; a foreign histogram of other
    // bounds is added value by value.
    if into.add(other).is_err() {
        for v in other.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// Adds `other` (the `field` of `file`) into `into`, refusing a sum that overflows, or CPU
/// time whose user and sys parts together do.
fn add_cpu(into: &mut CpuTimes, other: &CpuTimes, file: &str, field: &str) -> Result<(), MergeError> {
    let overflow = |part: &str, value: u64| MergeError::Overflow {
        file: file.to_string(),
        field: format!("{field}.{part}"),
        value,
    };
    into.user_ns = into.user_ns.checked_add(other.user_ns).ok_or_else(|| overflow("user_ns", other.user_ns))?;
    into.sys_ns = into.sys_ns.checked_add(other.sys_ns).ok_or_else(|| overflow("sys_ns", other.sys_ns))?;
    into.user_ns.checked_add(into.sys_ns).ok_or_else(|| overflow("sys_ns", other.sys_ns))?;
    Ok(())
}

/// The latency summary of parts merged: percentiles from their added histogram `hist`,
/// the smallest min and largest max of the parts that have operations, and the mean
/// weighted by each part's operations (`ops`: their sum, already checked to fit).
pub(crate) fn merged_latency<'a>(
    hist: &Histogram<u64>,
    ops: u64,
    parts: impl Iterator<Item = (u64, &'a LatencySummary)> + Clone,
) -> LatencySummary {
    if ops == 0 {
        return LatencySummary::default();
    }
    let active = || parts.clone().filter(|(ops, _)| *ops > 0);
    let min = active().map(|(_, l)| l.min).min().unwrap_or(0);
    let max = active().map(|(_, l)| l.max).max().unwrap_or(0);
    // Each mean × its ops is below 2^128 over the ops' sum, which fits 64 bits.
    let weighted: u128 = active().map(|(ops, l)| u128::from(l.mean) * u128::from(ops)).sum();
    LatencySummary::from_histogram(hist, min, max, (weighted / u128::from(ops)) as u64)
}

/// The figures of one op type (`field`: `read`, `block_sizes[4096].write`) over concurrent
/// runs, each part with the file it came from; latency from their added histogram. A count
/// that does not fit in 64 bits is refused naming the file whose part made it overflow.
fn merge_op(field: &str, parts: &[(&str, &OpSummary)], hist: &Histogram<u64>) -> Result<OpSummary, MergeError> {
    let sum = |name: &str, get: fn(&OpSummary) -> u64| {
        parts.iter().try_fold(0u64, |total, (file, p)| {
            total.checked_add(get(p)).ok_or_else(|| MergeError::Overflow {
                file: file.to_string(),
                field: format!("{field}.{name}"),
                value: get(p),
            })
        })
    };
    let ops = sum("ops", |p| p.ops)?;
    let bytes = sum("bytes", |p| p.bytes)?;
    let clamped_samples = sum("clamped_samples", |p| p.clamped_samples)?;
    let latency = merged_latency(hist, ops, parts.iter().map(|(_, p)| (p.ops, &p.latency_ns)));
    Ok(OpSummary {
        ops,
        bytes,
        iops: parts.iter().map(|(_, p)| p.iops).sum(),
        bw_bytes_per_sec: parts.iter().map(|(_, p)| p.bw_bytes_per_sec).sum(),
        latency_ns: latency,
        clamped_samples,
    })
}

/// `[value, count]` lists added value by value, ascending.
fn add_pairs<'a>(lists: impl Iterator<Item = &'a Vec<(u32, u64)>>) -> Vec<(u32, u64)> {
    let mut sum = std::collections::BTreeMap::new();
    for (value, count) in lists.flatten() {
        *sum.entry(*value).or_insert(0u64) += count;
    }
    sum.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;

    #[test]
    fn merged_op_is_the_added_histogram_inside_min_and_max() {
        let mut a = OpStats::new();
        let mut b = OpStats::new();
        for v in 0..1000u64 {
            a.record(4096, 1_000 + v);
        }
        for _ in 0..10 {
            b.record(4096, 1_234_567);
        }
        let (sa, sb) = (a.summarize(1_000_000_000), b.summarize(500_000_000));
        let mut hist = a.latency.clone();
        hist.add(&b.latency).unwrap();
        let m = merge_op("read", &[("a", &sa), ("b", &sb)], &hist).unwrap();
        assert_eq!(m.ops, 1010);
        assert_eq!(m.iops, sa.iops + sb.iops);
        assert_eq!((m.latency_ns.min, m.latency_ns.max), (1_000, 1_234_567));
        let mut all = a.clone();
        all.merge(&b);
        // The mean comes from the results' rounded means: within 1 ns of the exact one.
        let exact = all.latency_summary();
        assert!(m.latency_ns.mean.abs_diff(exact.mean) <= 1);
        assert_eq!(LatencySummary { mean: exact.mean, ..m.latency_ns }, exact, "merge equals the union's summary");
        assert!(m.latency_ns.p99_99 <= m.latency_ns.max && m.latency_ns.p50 >= m.latency_ns.min);
    }

    #[test]
    fn window_skew_and_the_overlap_warning() {
        let skew = |start_ns, end_ns, overlap_ns| WindowSkew { start_ns, end_ns, overlap_ns, results: 2 };
        assert_eq!(overlap_warning(Some(&skew(1_000, 2_000, 999_000_000)), 1_000_000_000), None);
        let late = overlap_warning(Some(&skew(600_000_000, 600_000_000, 400_000_000)), 1_000_000_000).unwrap();
        assert!(late.contains("40%") && late.contains("started 600 ms apart"), "{late}");
        let early_end = overlap_warning(Some(&skew(1_000, 700_000_000, 300_000_000)), 1_000_000_000).unwrap();
        assert!(early_end.contains("ended 700 ms apart"), "{early_end}");
        assert_eq!(overlap_warning(None, 1), None);
        assert_eq!(min_max([5u64, 2, 9].into_iter()), (2, 9));
    }

    #[test]
    fn a_sum_of_more_samples_than_a_histogram_can_be_written_with_is_refused() {
        let mut one = new_latency_histogram();
        one.record_n(1_000, i64::MAX as u64).unwrap();
        let mut sum = new_latency_histogram();
        add_within(&mut sum, &one, "a.json", "histograms.read").unwrap();
        // Still encodable: exactly i64::MAX samples.
        assert!(decode_histogram(&encode_histogram(&sum)).is_ok());
        let e = add_within(&mut sum, &one, "b.json", "histograms.read").unwrap_err().to_string();
        assert!(e.starts_with("b.json: its histograms.read (9223372036854775807)"), "{e}");
        assert_eq!(sum.len(), i64::MAX as u64, "nothing was added");
    }

    #[test]
    fn flatten_names_leaves() {
        let mut out = BTreeMap::new();
        let v: Value = serde_json::from_str(r#"{"a": {"b": 1}, "t": ["x"], "e": [], "n": null}"#).unwrap();
        flatten("spec", &v, &mut out);
        assert_eq!(out.get("spec.a.b").unwrap(), "1");
        assert_eq!(out.get("spec.t.0").unwrap(), "\"x\"");
        assert_eq!(out.get("spec.e").unwrap(), "[]");
        assert_eq!(out.get("spec.n").unwrap(), "null");
    }
}
