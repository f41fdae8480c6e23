//! The plan: what a command will run and write, as one typed value, whatever way it came
//! in. The command line (`flags.rs`), a TOML or fio job file and a profile
//! (`job_file.rs`), each point of a sweep and each step of a search all become a `Plan`:
//! its phases, each phase's jobs, each job's `Spec` and `--write-iolog` file (`iologs.rs`),
//! and its ledger: every path the run will touch (`ledger.rs`). `check` then checks the whole of it before the first byte is written
//! or the first worker starts: every phase's targets, every output, the memory and the
//! threads of the largest phase.
//!
//! It plans and checks; it never runs a job (`coordination/run/`, `front/jobs/phases.rs`) and never formats a
//! result (`output/report/`).

pub mod flags;
pub mod iologs;
pub mod job_file;
pub mod ledger;
pub mod profiles;
pub mod sweep;
pub mod trees;

use crate::base::diagnostics::error::{Error, UsageError};
use crate::output::report::OutputOptions;
use crate::workload::spec::Spec;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One job: a workload with its name ("" for a single run).
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    pub spec: Spec,
    /// `--write-iolog` of a job of a job file or profile (a single run's is its output's,
    /// `OutputOptions::iolog_file`); `spec.record_iolog` is set with it.
    pub iolog: Option<IologFile>,
}

/// Where one job's iolog goes, and what asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IologFile {
    pub path: PathBuf,
    /// For messages: "j.toml:3: key `write-iolog` of [global] (job [a])", "--write-iolog
    /// run.iolog in the flags after the job file (job [a])".
    pub asked_by: String,
}

/// Jobs that run at once, in one window.
#[derive(Clone, Debug)]
pub struct Phase {
    /// 1 for the first.
    pub number: u32,
    pub jobs: Vec<Job>,
}

/// Everything a command will run and write.
#[derive(Clone, Debug)]
pub struct Plan {
    /// What it was made from, for messages: "db.toml", "profile oltp", "" for flags.
    pub source: String,
    pub phases: Vec<Phase>,
    pub output: OutputOptions,
    /// Files the plan was read from (a job file): never written.
    pub inputs: Vec<PathBuf>,
}

/// Most worker threads of one phase, over all its jobs: what one run may have.
pub const MAX_PHASE_WORKERS: u32 = crate::workload::spec::MAX_THREADS;

impl Plan {
    /// A plan of one run.
    pub fn single(spec: Spec, output: OutputOptions) -> Plan {
        Plan {
            source: String::new(),
            phases: vec![Phase { number: 1, jobs: vec![Job { name: String::new(), spec, iolog: None }] }],
            output,
            inputs: Vec::new(),
        }
    }

    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.phases.iter().flat_map(|p| &p.jobs)
    }

    /// Every target path of every phase, as given.
    pub fn targets(&self) -> Vec<PathBuf> {
        self.jobs().flat_map(|j| j.spec.targets.iter().cloned()).collect()
    }

    /// The job names, in order (each job's `--timeseries` file and charts are named after it).
    pub fn job_names(&self) -> Vec<&str> {
        self.jobs().map(|j| j.name.as_str()).collect()
    }

    /// Each job's name in order, with whether it is a metadata job (`files`): what the
    /// files of a job file mixing both kinds are named from (`report::mixed_jobs`).
    pub fn job_kinds(&self) -> Vec<(&str, bool)> {
        self.jobs().map(|j| (j.name.as_str(), j.spec.metadata.is_some())).collect()
    }

    /// Whether the results are a job file's (a section per job), not one run's.
    pub fn is_job_file(&self) -> bool {
        !self.source.is_empty()
    }
}

/// Checks the whole plan before anything is touched: each job as its run would (targets,
/// regions, kernel limits, placement), each phase's workers and memory together, and every
/// output path. Creates, opens for writing and writes nothing.
pub fn check(plan: &Plan, stop: &AtomicUsize) -> Result<(), Error> {
    for phase in &plan.phases {
        let workers = check_phase_workers(plan, phase)?;
        check_phase_latency_request(plan, phase)?;
        let mut estimates = Vec::new();
        for job in &phase.jobs {
            // Thousands of jobs take a while to check: a signal stops it between two.
            if stop.load(Ordering::Relaxed) != 0 {
                return Err(crate::base::diagnostics::error::RunError::Other(
                    "interrupted while checking the plan: nothing was touched".into(),
                )
                .into());
            }
            // A job with `files` (a tree, beside block jobs): its root, space and inodes.
            if job.spec.metadata.is_some() {
                crate::coordination::metadata::check(&job.spec).map_err(|e| named(plan, job, e))?;
                continue;
            }
            let checked = crate::coordination::run::check(&job.spec).map_err(|e| named(plan, job, e))?;
            estimates.extend(checked);
        }
        if phase.jobs.len() > 1 {
            crate::io::host::memory::check_together(
                &estimates,
                u32::try_from(workers).unwrap_or(u32::MAX),
                &format!("the {} jobs of phase {}", phase.jobs.len(), phase.number),
            )
            .map_err(|e| UsageError::new(format!("{}: {e}", plan.source)))?;
        }
    }
    trees::check_apart(plan)?;
    ledger::check(plan)?;
    Ok(())
}

/// The worker threads of `phase`'s jobs together, when it has several (they run at once):
/// at most `MAX_PHASE_WORKERS`, and room for them and a thread per job under the process's
/// and the system's thread limits. Their number.
pub fn check_phase_workers(plan: &Plan, phase: &Phase) -> Result<u64, UsageError> {
    let workers: u64 = phase.jobs.iter().map(|j| u64::from(j.spec.shape.threads)).sum();
    if phase.jobs.len() < 2 {
        return Ok(workers);
    }
    if workers > u64::from(MAX_PHASE_WORKERS) {
        return Err(UsageError::new(format!(
            "{}: phase {} has {} jobs with {workers} worker threads in all: at most {MAX_PHASE_WORKERS} run in one window; split the jobs into phases (stonewall = true) or give them fewer --threads",
            plan.source,
            phase.number,
            phase.jobs.len()
        )));
    }
    crate::coordination::run::check_thread_room(workers + phase.jobs.len() as u64)
        .map_err(|e| UsageError::new(format!("{}: {e}", plan.source)))?;
    Ok(workers)
}

/// `--cpu-dma-latency` is the machine's, not a job's: the jobs of a phase, which share a
/// window, ask for the same request or none, so that every job's result says what was in
/// force during its window.
fn check_phase_latency_request(plan: &Plan, phase: &Phase) -> Result<(), UsageError> {
    let Some(first) = phase.jobs.first() else { return Ok(()) };
    let asked = first.spec.placement.cpu_dma_latency_us;
    match phase.jobs.iter().find(|j| j.spec.placement.cpu_dma_latency_us != asked) {
        None => Ok(()),
        Some(other) => {
            let said = |us: Option<u32>| us.map_or_else(|| "none".to_string(), |us| us.to_string());
            Err(UsageError::new(format!(
                "{}: phase {}: job [{}] has --cpu-dma-latency {} and job [{}] {}: the request is the machine's and the jobs of a phase share a window; give them the same value (e.g. in [global]) or put them in different phases (stonewall = true)",
                plan.source,
                phase.number,
                first.name,
                said(asked),
                other.name,
                said(other.spec.placement.cpu_dma_latency_us)
            )))
        }
    }
}

/// A job's refusal, naming the job when the plan has several.
fn named(plan: &Plan, job: &Job, e: Error) -> Error {
    if !plan.is_job_file() {
        return e;
    }
    match e {
        Error::Usage(u) => UsageError::new(format!("{}: job [{}]: {u}", plan.source, job.name)).into(),
        Error::Run(r) => {
            crate::base::diagnostics::error::RunError::Other(format!("{}: job [{}]: {r}", plan.source, job.name)).into()
        }
        other => other,
    }
}
