//! `iopulse merge` of job-file results (several hosts ran one job file at the same time,
//! or several runs of it): job by job, each job's results merged as `iopulse merge`
//! merges single runs (`result::merge`; a metadata job's as metadata results,
//! `result::metadata`, kept outside the combined figures), then the combined figures of each phase and of
//! all phases recomputed from the merged jobs (`combined.rs`), never from the inputs'
//! combined figures.
//!
//! It computes; it never formats, and it reads no file.

use super::combined;
use crate::figures::result::jobs::{JobResult, JobsResult, MetaJobResult};
use crate::figures::result::merge::{self, Input, MergeError};
use crate::figures::result::metadata;

/// One job-file result to merge, with the name of its file.
pub struct JobsInput {
    pub file: String,
    pub doc: JobsResult,
}

/// The merged document, and the notes and warnings of the jobs' merges (each starting
/// with the job's name).
pub struct MergedJobs {
    pub doc: JobsResult,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
}

/// Merges `inputs` job by job. Every input must have the same jobs, by name and phase, in
/// the same order (else `MergeError::JobNames` naming the file); `force` as for
/// `result::merge` (specs that differ).
pub fn merge(inputs: &[JobsInput], force: bool) -> Result<MergedJobs, MergeError> {
    let Some(first) = inputs.first() else { return Err(MergeError::Empty) };
    // Every job, block and metadata (`metadata_jobs`, after the block jobs), by name and phase.
    let listed = |d: &JobsResult| -> Vec<(String, u32)> {
        let block = d.jobs.iter().map(|j| (j.job.clone(), j.phase));
        block.chain(d.metadata_jobs.iter().map(|m| (format!("{} (files)", m.job), m.phase))).collect()
    };
    let names = |d: &JobsResult| {
        listed(d).iter().map(|(job, phase)| format!("[{job}] (phase {phase})")).collect::<Vec<_>>().join(", ")
    };
    let expected = listed(&first.doc);
    let same_jobs = |d: &JobsResult| listed(d) == expected;
    if let Some(other) = inputs[1..].iter().find(|i| !same_jobs(&i.doc)) {
        return Err(MergeError::JobNames {
            file: other.file.clone(),
            found: names(&other.doc),
            first: first.file.clone(),
            expected: names(&first.doc),
        });
    }
    let (mut notes, mut warnings) = (Vec::new(), Vec::new());
    let mut jobs = Vec::with_capacity(first.doc.jobs.len());
    for (index, job) in first.doc.jobs.iter().enumerate() {
        let of_job: Vec<Input> = inputs
            .iter()
            .map(|i| Input {
                file: format!("{} job [{}]", i.file, job.job),
                result: i.doc.jobs[index].result.clone(),
                id: None,
            })
            .collect();
        let merged = merge::merge(&of_job, force)?;
        notes.extend(merged.notes.into_iter().map(|n| format!("job [{}]: {n}", job.job)));
        warnings.extend(merged.warnings.into_iter().map(|w| format!("job [{}]: {w}", job.job)));
        jobs.push(JobResult { job: job.job.clone(), phase: job.phase, result: merged.result });
    }
    // The metadata jobs, each merged as `iopulse merge` merges metadata results; outside
    // the combined figures, as in the run.
    let mut metadata_jobs = Vec::with_capacity(first.doc.metadata_jobs.len());
    for (index, job) in first.doc.metadata_jobs.iter().enumerate() {
        let of_job: Vec<metadata::Input> = inputs
            .iter()
            .map(|i| metadata::Input {
                file: format!("{} job [{}]", i.file, job.job),
                result: i.doc.metadata_jobs[index].result.clone(),
                id: None,
            })
            .collect();
        let merged = metadata::merge(&of_job, force)?;
        notes.extend(merged.notes.into_iter().map(|n| format!("job [{}]: {n}", job.job)));
        metadata_jobs.push(MetaJobResult { job: job.job.clone(), phase: job.phase, result: merged.result });
    }
    let mut doc = combined::build(&first.doc.job_file, jobs).ok_or(MergeError::Empty)?;
    doc.metadata_jobs = metadata_jobs;
    // The combined figures name the merged files, as a merge of single runs does.
    let files: Vec<Input> =
        inputs.iter().map(|i| Input { file: i.file.clone(), result: i.doc.combined.clone(), id: None }).collect();
    if let Ok(by_file) = merge::merge(&files, true) {
        doc.combined.combined.merged_from = by_file.result.combined.merged_from;
        doc.combined.combined.window_skew = by_file.result.combined.window_skew;
        doc.combined.machine.environment.hostname = by_file.result.machine.environment.hostname;
    }
    doc.combined.outcome.notes.push(format!(
        "merged job by job from {} job-file results ({}): each job's results merged as `iopulse merge` merges single runs, then combined",
        inputs.len(),
        inputs.iter().map(|i| i.file.as_str()).collect::<Vec<_>>().join(", ")
    ));
    Ok(MergedJobs { doc, notes, warnings })
}
