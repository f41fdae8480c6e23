//! The combined figures of a job file's run: the jobs of one phase shared one window, so
//! their figures are the exact merge of theirs (`result::merge`: counts, bytes, IOPS and
//! bandwidth summed, latency from the added histograms); phases ran one after another, so
//! the figures over all phases add counts, bytes, histograms and windows, and their IOPS
//! and bandwidth are over the summed window.
//!
//! It computes; it never formats.

use crate::base::units::display::{latency_ns, seconds_ns};
use crate::figures::result::jobs::{JobResult, JobsResult, PhaseResult};
use crate::figures::result::merge::{self, Input};
use crate::figures::result::{BlockSizeFigures, RunResult, SizeHistograms};

/// The result document of the jobs that ran, in file order; `None` if none ran.
pub fn build(job_file: &str, jobs: Vec<JobResult>) -> Option<JobsResult> {
    let last_phase = jobs.iter().map(|j| j.phase).max()?;
    let mut phases = Vec::new();
    for phase in 1..=last_phase {
        let of_phase: Vec<&JobResult> = jobs.iter().filter(|j| j.phase == phase).collect();
        if let Some(combined) = concurrent(&of_phase) {
            phases.push(PhaseResult { phase, job_names: of_phase.iter().map(|j| j.job.clone()).collect(), combined });
        }
    }
    let combined = if phases.len() == 1 { phases.pop()?.combined } else { sequential(&phases)? };
    Some(JobsResult { combined, job_file: job_file.to_string(), jobs, phases, metadata_jobs: Vec::new() })
}

/// The block sizes a result's I/Os had: its `--bssplit` sizes, or its one block size.
fn sizes_of(r: &RunResult) -> Vec<u64> {
    if r.figures.block_sizes.is_empty() {
        vec![r.spec.shape.block_size_bytes]
    } else {
        r.figures.block_sizes.iter().map(|b| b.size_bytes).collect()
    }
}

/// Results of several block sizes are combined per size too: a result of one block size
/// is given its figures and histograms as that size's, so that the merge keeps each size's
/// apart beside the sum (which adds I/Os of every size).
fn with_size_figures(results: &mut [RunResult]) {
    let mut sizes: Vec<u64> = results.iter().flat_map(sizes_of).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return;
    }
    for r in results.iter_mut().filter(|r| r.figures.block_sizes.is_empty()) {
        let whole = |ops: u64| if ops > 0 { 100.0 } else { 0.0 };
        r.figures.block_sizes.push(BlockSizeFigures {
            size_bytes: r.spec.shape.block_size_bytes,
            read: r.figures.read,
            write: r.figures.write,
            trim: r.figures.trim,
            read_share_percent: whole(r.figures.read.ops),
            write_share_percent: whole(r.figures.write.ops),
            trim_share_percent: r.figures.trim.as_ref().map(|t| whole(t.ops)),
            read_asked_percent: 100.0,
            write_asked_percent: 100.0,
            trim_asked_percent: r.figures.trim.as_ref().map(|_| 100.0),
        });
        r.histograms.block_sizes.push(SizeHistograms {
            size_bytes: r.spec.shape.block_size_bytes,
            read: r.histograms.read.clone(),
            write: r.histograms.write.clone(),
            trim: r.histograms.trim.clone(),
        });
    }
}

/// The merge of jobs that ran in one window. Their starts are recorded apart
/// (`window_skew.start_ns`): within `MAX_START_SPREAD_PER_CENT` of the window they shared
/// one; beyond it (a job with a `--ramp` of its own opens its window later) the note says
/// so and a warning is given.
pub fn concurrent(jobs: &[&JobResult]) -> Option<RunResult> {
    let mut results: Vec<RunResult> = jobs.iter().map(|j| j.result.clone()).collect();
    with_size_figures(&mut results);
    let inputs: Vec<Input> = jobs
        .iter()
        .zip(results)
        .map(|(j, result)| Input { file: format!("job [{}]", j.job), result, id: None })
        .collect();
    let merged = merge::merge(&inputs, true).ok()?;
    let mut m = merged.result;
    // The windows of jobs of different lengths overlap only in part by design: the overlap
    // warning of merged hosts does not apply; how far apart they started does.
    m.outcome.warnings.retain(|w| !merged.warnings.contains(w));
    let spread_ns = m.combined.window_skew.map_or(0, |w| w.start_ns);
    let shared = !spread_too_wide(spread_ns, m.window.window_ns);
    let how = if shared {
        "that shared one window".to_string()
    } else {
        format!("whose windows started {} apart", latency_ns(spread_ns))
    };
    if !shared {
        m.outcome.warnings.push(format!(
            "the {} jobs' windows started {} apart, more than {MAX_START_SPREAD_PER_CENT}% of the {} window: their summed IOPS and bandwidth are not those of one window (a job's own --ramp opens its window later; give the jobs of a phase one --ramp)",
            jobs.len(),
            latency_ns(spread_ns),
            seconds_ns(m.window.window_ns)
        ));
    }
    m.outcome.notes = vec![format!(
        "combined from {} job(s) {how}: counts, bytes, IOPS and bandwidth summed, latency from the added histograms; the spec shown is job [{}]'s (each job's own is in jobs[])",
        jobs.len(),
        jobs.first().map_or("", |j| j.job.as_str())
    )];
    Some(m)
}

/// How far apart (in per cent of the window) the starts of a phase's jobs may lie for them
/// to have shared one window.
pub const MAX_START_SPREAD_PER_CENT: u64 = 1;

/// Whether starts `spread_ns` apart are too far apart for a window of `window_ns`.
fn spread_too_wide(spread_ns: u64, window_ns: u64) -> bool {
    u128::from(spread_ns) * 100 > u128::from(window_ns) * u128::from(MAX_START_SPREAD_PER_CENT)
}

/// The figures of phases run one after another: counts, bytes and histograms added, the
/// window their sum, IOPS and bandwidth over that window.
fn sequential(phases: &[PhaseResult]) -> Option<RunResult> {
    let mut results: Vec<RunResult> = phases.iter().map(|p| p.combined.clone()).collect();
    with_size_figures(&mut results);
    let inputs: Vec<Input> = phases
        .iter()
        .zip(results)
        .map(|(p, result)| Input { file: format!("phase {}", p.phase), result, id: None })
        .collect();
    let merged = merge::merge(&inputs, true).ok()?;
    let mut m = merged.result;
    m.outcome.warnings.retain(|w| !merged.warnings.contains(w));
    let window_ns: u64 = phases.iter().map(|p| p.combined.window.window_ns).sum();
    let seconds = window_ns as f64 / 1e9;
    m.window.window_ns = window_ns;
    m.combined.window_skew = None;
    let over_window = |op: &mut crate::io::stats::OpSummary| {
        op.iops = if seconds > 0.0 { op.ops as f64 / seconds } else { 0.0 };
        op.bw_bytes_per_sec = if seconds > 0.0 { op.bytes as f64 / seconds } else { 0.0 };
    };
    for op in [&mut m.figures.read, &mut m.figures.write, &mut m.figures.total] {
        over_window(op);
    }
    // Each size's figures too: they ran one phase after another as well.
    for b in &mut m.figures.block_sizes {
        over_window(&mut b.read);
        over_window(&mut b.write);
        if let Some(t) = &mut b.trim {
            over_window(t);
        }
    }
    let time_weighted = |f: &dyn Fn(&RunResult) -> f64| {
        phases.iter().map(|p| f(&p.combined) * p.combined.window.window_ns as f64).sum::<f64>()
            / (window_ns.max(1) as f64)
    };
    m.figures.achieved_queue_depth.total = time_weighted(&|r| r.figures.achieved_queue_depth.total);
    m.figures.achieved_queue_depth.mean_per_worker = time_weighted(&|r| r.figures.achieved_queue_depth.mean_per_worker);
    m.machine.cpu.cores_busy = time_weighted(&|r| r.machine.cpu.cores_busy);
    m.outcome.notes = vec![format!(
        "combined from {} phases run one after another: counts, bytes and histograms added, IOPS and bandwidth over their summed windows ({:.3} s); each phase's own figures are in phases[]",
        phases.len(),
        seconds
    )];
    Some(m)
}
