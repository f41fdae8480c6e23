//! The combined figures of a job file's run: the jobs of one phase shared one window, so
//! their figures are the exact merge of theirs (`result::merge`: counts, bytes, IOPS and
//! bandwidth summed, latency from the added histograms); phases ran one after another, so
//! the figures over all phases add counts, bytes, histograms and windows, and their IOPS
//! and bandwidth are over the summed window.
//!
//! It computes; it never formats.

use crate::result::RunResult;
use crate::result::jobs::{JobResult, JobsResult, PhaseResult};
use crate::result::merge::{self, Input};
use crate::units::display::{latency_ns, seconds_ns};

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
    Some(JobsResult { combined, job_file: job_file.to_string(), jobs, phases })
}

/// The merge of jobs that ran in one window. Their starts are recorded apart
/// (`window_skew.start_ns`): within `MAX_START_SPREAD_PER_CENT` of the window they shared
/// one; beyond it (a job with a `--ramp` of its own opens its window later) the note says
/// so and a warning is given.
pub fn concurrent(jobs: &[&JobResult]) -> Option<RunResult> {
    let inputs: Vec<Input> =
        jobs.iter().map(|j| Input { file: format!("job [{}]", j.job), result: j.result.clone(), id: None }).collect();
    let merged = merge::merge(&inputs, true).ok()?;
    let mut m = merged.result;
    // The windows of jobs of different lengths overlap only in part by design: the overlap
    // warning of merged hosts does not apply; how far apart they started does.
    m.warnings.retain(|w| !merged.warnings.contains(w));
    let spread_ns = m.window_skew.map_or(0, |w| w.start_ns);
    let shared = !spread_too_wide(spread_ns, m.window_ns);
    let how = if shared {
        "that shared one window".to_string()
    } else {
        format!("whose windows started {} apart", latency_ns(spread_ns))
    };
    if !shared {
        m.warnings.push(format!(
            "the {} jobs' windows started {} apart, more than {MAX_START_SPREAD_PER_CENT}% of the {} window: their summed IOPS and bandwidth are not those of one window (a job's own --ramp opens its window later; give the jobs of a phase one --ramp)",
            jobs.len(),
            latency_ns(spread_ns),
            seconds_ns(m.window_ns)
        ));
    }
    m.notes = vec![format!(
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
    let inputs: Vec<Input> = phases
        .iter()
        .map(|p| Input { file: format!("phase {}", p.phase), result: p.combined.clone(), id: None })
        .collect();
    let merged = merge::merge(&inputs, true).ok()?;
    let mut m = merged.result;
    m.warnings.retain(|w| !merged.warnings.contains(w));
    let window_ns: u64 = phases.iter().map(|p| p.combined.window_ns).sum();
    let seconds = window_ns as f64 / 1e9;
    m.window_ns = window_ns;
    m.window_skew = None;
    for op in [&mut m.read, &mut m.write, &mut m.total] {
        op.iops = if seconds > 0.0 { op.ops as f64 / seconds } else { 0.0 };
        op.bw_bytes_per_sec = if seconds > 0.0 { op.bytes as f64 / seconds } else { 0.0 };
    }
    let time_weighted = |f: &dyn Fn(&RunResult) -> f64| {
        phases.iter().map(|p| f(&p.combined) * p.combined.window_ns as f64).sum::<f64>() / (window_ns.max(1) as f64)
    };
    m.achieved_queue_depth.total = time_weighted(&|r| r.achieved_queue_depth.total);
    m.achieved_queue_depth.mean_per_worker = time_weighted(&|r| r.achieved_queue_depth.mean_per_worker);
    m.cpu.cores_busy = time_weighted(&|r| r.cpu.cores_busy);
    m.notes = vec![format!(
        "combined from {} phases run one after another: counts, bytes and histograms added, IOPS and bandwidth over their summed windows ({:.3} s); each phase's own figures are in phases[]",
        phases.len(),
        seconds
    )];
    Some(m)
}
