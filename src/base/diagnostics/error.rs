//! The errors a run can end with, and the exit code each one maps to.
//!
//! Usage errors are found before anything is touched and exit 2; run errors
//! (a target that cannot be opened or laid out, an I/O error) exit 1.
//! Every message names the flag, the file or the offset concerned.

use std::io;
use std::path::PathBuf;

/// Exit codes, as DESIGN.md fixes them.
pub mod exit_code {
    pub const SUCCESS: i32 = 0;
    pub const RUN_FAILED: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const VERIFY_FAILED: i32 = 3;
    /// The run succeeded, but an output (stdout, --json, --csv, --timeseries, --plot)
    /// could not be written; the others were written.
    pub const OUTPUT_FAILED: i32 = 4;
    /// `iopulse compare`: some figure regressed (the report was written whole).
    pub const REGRESSION: i32 = 5;
    /// `--expect`: some expectation failed (the report and every output were written).
    pub const EXPECTATION_FAILED: i32 = 6;
    /// SIGHUP: the terminal or session went away (handled like SIGTERM).
    pub const HUNG_UP: i32 = 129;
    pub const INTERRUPTED: i32 = 130;
    pub const TERMINATED: i32 = 143;
}

/// A bad flag, value or combination: found before anything was touched.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("{message}")]
pub struct UsageError {
    pub message: String,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

/// A clap error as one line (no usage or help lines): how job files, sweeps and
/// searches quote the benchmark's parser.
pub fn clap_one_line(e: &clap::Error) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string()
}

/// A failure while preparing or running: the target, the engine or the kernel said no.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{op} {path}: {source}")]
    Target {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{op} {path} at offset {offset_bytes}: {source}")]
    TargetAt {
        op: &'static str,
        path: PathBuf,
        offset_bytes: u64,
        #[source]
        source: io::Error,
    },
    #[error(
        "O_DIRECT refused on {path} ({reason}) and --strict-direct is set: drop --strict-direct to fall back to buffered I/O, or use a filesystem that supports O_DIRECT"
    )]
    StrictDirect { path: PathBuf, reason: String },
    #[error("worker {worker}: {message}")]
    WorkerSetup { worker: u32, message: String },
    #[error("{0}")]
    Other(String),
}

/// Everything `iopulse` can fail with, with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Run(#[from] RunError),
    /// Ranks of a cluster run failed before the window opened (this one or others).
    #[error(transparent)]
    Cluster(#[from] ClusterFailure),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => exit_code::USAGE,
            Error::Run(_) => exit_code::RUN_FAILED,
            // Exit 2 only if nothing was touched anywhere: every rank refused its command line.
            Error::Cluster(f) if f.all_usage() => exit_code::USAGE,
            Error::Cluster(_) => exit_code::RUN_FAILED,
        }
    }
}

/// A rank that failed, as every rank learns it at a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankFailure {
    pub rank: u32,
    pub host: String,
    pub message: String,
    pub usage: bool,
}

/// The ranks that failed at a checkpoint: the job ends. Its message names each
/// failed rank and host: `rank 1 (host node7): cannot open ...`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.failures))]
pub struct ClusterFailure {
    pub failures: Vec<RankFailure>,
    /// Ranks in the job.
    pub size: u32,
}

fn describe(failures: &[RankFailure]) -> String {
    failures.iter().map(|f| format!("rank {} (host {}): {}", f.rank, f.host, f.message)).collect::<Vec<_>>().join("; ")
}

impl ClusterFailure {
    /// Every rank failed, each with a usage error: nothing was touched anywhere.
    pub fn all_usage(&self) -> bool {
        self.failures.len() as u32 == self.size && self.failures.iter().all(|f| f.usage)
    }
}
