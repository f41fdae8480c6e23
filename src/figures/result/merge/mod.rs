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

use crate::figures::result::{AchievedQueueDepth, MergedSource, RunResult, StopReason, TargetInfo, WindowSkew};
use crate::io::stats::{HistogramCodecError, OpSummary, encode_histogram};
use crate::storage::targets::identity::FileId;

mod figures;
mod inputs;

use figures::{
    LatencyHistograms, merge_block_sizes, merge_cpu, merge_io_depths, merge_op, merge_tool_time, merge_zones,
};
pub(crate) use figures::{add_within, merged_latency};
use inputs::check_specs;
pub use inputs::{
    SAME_RUN, SpecDifference, document_of, refuse_duplicates, refuse_stdout_as_input, same_run, spec_differences,
    spec_differences_of,
};
pub(crate) use inputs::{describe, judge_pair, refuse_duplicates_by};

/// One result to merge, with the name it was given by.
#[derive(Clone, Debug)]
pub struct Input {
    pub file: String,
    pub result: RunResult,
    /// The file it was read from (device and inode of the opened file), to refuse one file
    /// given twice by two names; `None` when the result did not come from a file.
    pub id: Option<FileId>,
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
    let mut notes = check_specs(first, &inputs[1..], force)?;

    let LatencyHistograms { read: read_hist, write: write_hist, total: total_hist, flush: flush_hist, trim: trim_hist } =
        LatencyHistograms::of(inputs)?;

    let results: Vec<&RunResult> = inputs.iter().map(|i| &i.result).collect();
    let mut hostnames: Vec<&str> = Vec::new();
    for r in &results {
        if !hostnames.contains(&r.machine.environment.hostname.as_str()) {
            hostnames.push(&r.machine.environment.hostname);
        }
    }
    let several_hosts = hostnames.len() > 1;

    let mut m = first.result.clone();
    // Expectations were judged against each input's own figures, not the merged ones.
    m.outcome.expectations.clear();
    m.tool.version = env!("CARGO_PKG_VERSION").into();
    m.window.started_at = results.iter().map(|r| r.window.started_at.clone()).min().unwrap_or_default();
    m.window.window_start_unix_ns =
        results.iter().map(|r| r.window.window_start_unix_ns).filter(|&t| t > 0).min().unwrap_or_default();
    m.window.start_at = None;
    m.combined.window_skew = window_skew(&results);
    if results.iter().any(|r| r.combined.cluster.is_some()) {
        notes.push("cluster results merged: their rank tables are in their own files".into());
    }
    m.combined.cluster = None;
    // Each run's CPU state is its own machine's at its own time: none describes the
    // merge (every input keeps its own, and a cluster result each rank's).
    m.machine.cpu_state = None;
    m.machine.environment.hostname = hostnames.join(",");
    m.window.window_ns = results.iter().map(|r| r.window.window_ns).max().unwrap_or(0);
    m.window.stop_reason = stop_reason_of(&results);
    m.window.interrupted = results.iter().any(|r| r.window.interrupted);
    let of = |f: fn(&RunResult) -> Option<&OpSummary>| -> Vec<(&str, &OpSummary)> {
        inputs.iter().filter_map(|i| Some((i.file.as_str(), f(&i.result)?))).collect()
    };
    m.figures.read = merge_op("read", &of(|r| Some(&r.figures.read)), &read_hist)?;
    m.figures.write = merge_op("write", &of(|r| Some(&r.figures.write)), &write_hist)?;
    m.figures.total = merge_op("total", &of(|r| Some(&r.figures.total)), &total_hist)?;
    let flushes = of(|r| r.figures.flush.as_ref());
    m.figures.flush = if flushes.is_empty() { None } else { Some(merge_op("flush", &flushes, &flush_hist)?) };
    m.histograms.flush = m.figures.flush.is_some().then(|| encode_histogram(&flush_hist));
    let trims = of(|r| r.figures.trim.as_ref());
    m.figures.trim = if trims.is_empty() { None } else { Some(merge_op("trim", &trims, &trim_hist)?) };
    m.histograms.trim = m.figures.trim.is_some().then(|| encode_histogram(&trim_hist));
    merge_block_sizes(inputs, &mut m)?;
    m.figures.zones = merge_zones(&results);

    m.data.direct.effective = results.iter().all(|r| r.data.direct.effective);
    m.data.direct.reason = results.iter().find_map(|r| r.data.direct.reason.clone());
    m.data.direct.memory_backed = results.iter().any(|r| r.data.direct.memory_backed);

    m.targets = merge_targets(inputs, several_hosts, &mut notes);
    m.workers = results.iter().flat_map(|r| r.workers.iter().cloned()).collect();
    for (index, w) in m.workers.iter_mut().enumerate() {
        w.index = index as u32;
    }

    let ops = m.figures.total.ops;
    m.machine.cpu = merge_cpu(inputs, ops)?;
    m.data.storage_touched = results.iter().all(|r| r.data.storage_touched);

    let in_flight: f64 = results.iter().map(|r| r.figures.achieved_queue_depth.total).sum();
    m.figures.achieved_queue_depth =
        AchievedQueueDepth { total: in_flight, mean_per_worker: in_flight / m.workers.len().max(1) as f64 };
    m.figures.tool_time = merge_tool_time(&results, ops);
    m.figures.io_depths = merge_io_depths(&results);

    if results.iter().any(|r| r.figures.coverage.is_some()) {
        notes.push("coverage is not merged: each result's own is in its file".into());
    }
    m.figures.coverage = None;

    m.histograms.read = encode_histogram(&read_hist);
    m.histograms.write = encode_histogram(&write_hist);

    m.outcome.warnings =
        inputs.iter().flat_map(|i| i.result.outcome.warnings.iter().map(move |w| format!("{}: {w}", i.file))).collect();
    // A run stopped by an error or a signal ends early: its stop reason already says why.
    let stopped_early =
        results.iter().any(|r| matches!(r.window.stop_reason, StopReason::Error | StopReason::Interrupted));
    let warnings: Vec<String> = if stopped_early {
        Vec::new()
    } else {
        overlap_warning(m.combined.window_skew.as_ref(), m.window.window_ns).into_iter().collect()
    };
    m.outcome.warnings.extend(warnings.iter().cloned());
    m.outcome.error = inputs.iter().find_map(|i| i.result.outcome.error.as_ref().map(|e| format!("{}: {e}", i.file)));
    notes.insert(
        0,
        format!(
            "merged from {} results of concurrent runs: latency from the added histograms, IOPS and bandwidth summed",
            inputs.len()
        ),
    );
    m.outcome.notes = notes.clone();
    // Intervals of separate runs do not line up in time: the merged result has no time series.
    m.time_series = Vec::new();
    // Each run judged its own steady window: none describes the merge.
    m.window.steady_state = None;
    m.combined.merged_from = Some(merged_sources(inputs));
    Ok(Merged { result: m, notes, warnings })
}

/// How far apart the windows of `results` were, from those that recorded their start
/// on the wall clock; `None` if fewer than two did.
pub fn window_skew(results: &[&RunResult]) -> Option<WindowSkew> {
    let windows: Vec<(u64, u64)> = results
        .iter()
        .filter(|r| r.window.window_start_unix_ns > 0)
        .map(|r| (r.window.window_start_unix_ns, r.window.window_start_unix_ns.saturating_add(r.window.window_ns)))
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
        format!("they started {} apart", crate::base::units::display::latency_ns(skew.start_ns))
    } else {
        format!("they ended {} apart", crate::base::units::display::latency_ns(skew.end_ns))
    };
    Some(format!(
        "the runs' windows were open together for only {:.0}% of the longest ({why}): their summed IOPS and bandwidth describe a load that never ran all at once (start runs on several hosts together with --start-at and one --duration)",
        share * 100.0
    ))
}

/// The merge's stop reason: an error or a signal in any run, complete only if all were.
fn stop_reason_of(results: &[&RunResult]) -> StopReason {
    if results.iter().any(|r| r.window.stop_reason == StopReason::Error) {
        StopReason::Error
    } else if results.iter().any(|r| r.window.stop_reason == StopReason::Interrupted) {
        StopReason::Interrupted
    } else if results.iter().all(|r| r.window.stop_reason == StopReason::Complete) {
        StopReason::Complete
    } else {
        StopReason::Duration
    }
}

/// Every input's targets, told apart by host (several hosts) or by result file (the same
/// path in two results of one host); device witnesses kept only from one host.
fn merge_targets(inputs: &[Input], several_hosts: bool, notes: &mut Vec<String>) -> Vec<TargetInfo> {
    let results: Vec<&RunResult> = inputs.iter().map(|i| &i.result).collect();
    // Targets of several hosts are told apart by host, the same path of one host by result file.
    let mut paths: Vec<&str> = results.iter().flat_map(|r| r.targets.iter().map(|t| t.path.as_str())).collect();
    paths.sort_unstable();
    let paths_repeat = paths.windows(2).any(|w| w[0] == w[1]);
    let mut targets: Vec<TargetInfo> = inputs
        .iter()
        .flat_map(|i| {
            i.result.targets.iter().cloned().map(move |mut t| {
                if several_hosts {
                    t.path = format!("{}:{}", i.result.machine.environment.hostname, t.path);
                } else if paths_repeat {
                    t.path = format!("{} ({})", t.path, i.file);
                }
                t
            })
        })
        .collect();
    // A device's counters are one host's: across hosts they count different devices under
    // one name, so the witness is kept only when every result is from one host.
    if targets.iter().any(|t| t.storage.device_witness.is_some()) {
        if several_hosts {
            for t in &mut targets {
                t.storage.device_witness = None;
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
    targets
}

/// Where the merge came from: each input's file, host, window and headline.
fn merged_sources(inputs: &[Input]) -> Vec<MergedSource> {
    inputs
        .iter()
        .map(|i| MergedSource {
            file: i.file.clone(),
            hostname: i.result.machine.environment.hostname.clone(),
            started_at: i.result.window.started_at.clone(),
            window_ns: i.result.window.window_ns,
            seed: i.result.spec.seed,
            ops: i.result.figures.total.ops,
            iops: i.result.figures.total.iops,
            window_start_unix_ns: i.result.window.window_start_unix_ns,
        })
        .collect()
}

#[cfg(test)]
mod tests;
