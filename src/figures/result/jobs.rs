//! The result document of a job file (`iopulse run`): the combined figures of every job
//! (a `RunResult`, so every reader of a result reads them), each job's own full result
//! with its name and phase, and with several phases each phase's combined figures.
//! Plain data, built by `front/jobs/combined.rs`; reports only read it.

use super::RunResult;
use serde::{Deserialize, Serialize};

/// What `iopulse run FILE` writes as JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobsResult {
    /// The combined figures: of the one phase, or of all phases one after another.
    #[serde(flatten)]
    pub combined: RunResult,
    /// The job file, as given.
    pub job_file: String,
    /// Every job that ran, in file order.
    pub jobs: Vec<JobResult>,
    /// Each phase's combined figures; only with more than one phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseResult>,
    /// The jobs with `files` (a metadata tree) that ran beside the block jobs, in file
    /// order; their figures are not in the combined ones (operations on a tree are not
    /// block I/Os).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metadata_jobs: Vec<MetaJobResult>,
}

/// One metadata job's full result, beside the block jobs of a job file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetaJobResult {
    /// The job's table name in the job file.
    pub job: String,
    /// Its phase, from 1.
    pub phase: u32,
    #[serde(flatten)]
    pub result: crate::figures::result::meta_document::MetaResult,
}

/// One job's full result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    /// The job's table name in the job file.
    pub job: String,
    /// Its phase, from 1.
    pub phase: u32,
    #[serde(flatten)]
    pub result: RunResult,
}

/// The jobs of one phase, combined (they shared one window).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhaseResult {
    pub phase: u32,
    /// Names of its jobs that ran.
    pub job_names: Vec<String>,
    #[serde(flatten)]
    pub combined: RunResult,
}
