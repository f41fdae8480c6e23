//! `iopulse merge` of job-file results (several hosts ran one job file at the same time,
//! or several runs of it): job by job, each job's results merged as `iopulse merge`
//! merges single runs (`result::merge`), then the combined figures of each phase and of
//! all phases recomputed from the merged jobs (`combined.rs`), never from the inputs'
//! combined figures.
//!
//! It computes; it never formats, and it reads no file.

use super::combined;
use crate::result::jobs::{JobResult, JobsResult};
use crate::result::merge::{self, Input, MergeError};

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
    // Metadata jobs beside block jobs: their figures have no merge here yet.
    if let Some((input, job)) = inputs.iter().find_map(|i| i.doc.metadata_jobs.first().map(|j| (i, j))) {
        return Err(MergeError::MetadataBeside { file: input.file.clone(), job: job.job.clone() });
    }
    let names = |d: &JobsResult| {
        d.jobs.iter().map(|j| format!("[{}] (phase {})", j.job, j.phase)).collect::<Vec<_>>().join(", ")
    };
    let same_jobs = |d: &JobsResult| {
        d.jobs.len() == first.doc.jobs.len()
            && d.jobs.iter().zip(&first.doc.jobs).all(|(a, b)| a.job == b.job && a.phase == b.phase)
    };
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
    let mut doc = combined::build(&first.doc.job_file, jobs).ok_or(MergeError::Empty)?;
    // The combined figures name the merged files, as a merge of single runs does.
    let files: Vec<Input> =
        inputs.iter().map(|i| Input { file: i.file.clone(), result: i.doc.combined.clone(), id: None }).collect();
    if let Ok(by_file) = merge::merge(&files, true) {
        doc.combined.merged_from = by_file.result.merged_from;
        doc.combined.window_skew = by_file.result.window_skew;
        doc.combined.environment.hostname = by_file.result.environment.hostname;
    }
    doc.combined.notes.push(format!(
        "merged job by job from {} job-file results ({}): each job's results merged as `iopulse merge` merges single runs, then combined",
        inputs.len(),
        inputs.iter().map(|i| i.file.as_str()).collect::<Vec<_>>().join(", ")
    ));
    Ok(MergedJobs { doc, notes, warnings })
}
