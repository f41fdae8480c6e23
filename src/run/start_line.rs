//! The start line as seen from outside this process: where a cluster run's
//! ranks meet, and when the window opens. Every rank passes two checkpoints,
//! each of which also tells every rank whether one of them failed:
//!
//! - `planned`: every rank checked its command line, targets and placement,
//!   and nothing has been touched yet (a bad target on one rank stops the job
//!   before any rank lays out a file);
//! - `open`: every target is laid out and every worker set up; then, with
//!   `--start-at`, the window waits for that wall-clock time.
//!
//! The jobs of one phase of a job file meet the same way, in this process: a start line
//! `in_group` also meets the other jobs at each checkpoint (`cluster::in_process`), so
//! they are released together into one window, and one job refused before `planned`
//! stops every job before anything is touched.
//!
//! It also gives the rank and host that `{rank}` and `{host}` in paths stand for.
//! The coordinator calls `planned` and `open` once each, in that order. A rank
//! that fails before one of them calls `fail` instead (see `job`), which takes
//! its error to the checkpoint the others wait at, so nobody waits forever.

use crate::cluster::in_process::Group;
use crate::cluster::{Cluster, ClusterFailure, Status};
use crate::error::Error;
use crate::start_at::{self, StartAt, StartAtInfo};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;

pub struct StartLine<'a> {
    cluster: &'a Cluster,
    start_at: Option<StartAt>,
    /// What `{rank}` stands for (see `Cluster::placeholder_rank`).
    rank: u32,
    /// No checkpoint is left to take part in: `open` was reached, or one failed.
    finished: Cell<bool>,
    /// The other jobs of this phase, and this job's place among them.
    group: Option<(&'a Group, usize)>,
    /// A checkpoint failed because another job of the group failed there.
    stopped_by_others: Cell<bool>,
}

/// What happened at the start line, for the result.
#[derive(Clone, Debug, Default)]
pub struct Opened {
    pub start_at: Option<StartAtInfo>,
    /// `--start-at` had passed before the run was ready: the warning to give.
    pub late_warning: Option<String>,
}

impl<'a> StartLine<'a> {
    pub fn new(cluster: &'a Cluster, start_at: Option<StartAt>) -> Self {
        Self {
            cluster,
            start_at,
            rank: cluster.placeholder_rank(),
            finished: Cell::new(false),
            group: None,
            stopped_by_others: Cell::new(false),
        }
    }

    /// This start line also meets the other members of `group` (the jobs of one phase)
    /// at each checkpoint, as member `member`.
    pub fn in_group(mut self, group: &'a Group, member: usize) -> Self {
        self.group = Some((group, member));
        self
    }

    /// A checkpoint failed because another job of the group failed (this job's own
    /// error, if any, is not the cause).
    pub fn stopped_by_others(&self) -> bool {
        self.stopped_by_others.get()
    }

    /// Meets the other jobs of the group, if any.
    fn meet_group(&self, status: &Status) -> Result<(), Error> {
        let Some((group, member)) = self.group else { return Ok(()) };
        group.checkpoint(member, status).map_err(|f| {
            let others: Vec<usize> = f.failed.iter().map(|(m, _)| *m).filter(|&m| m != member).collect();
            if !others.is_empty() && matches!(status, Status::Ready) {
                self.stopped_by_others.set(true);
            }
            crate::error::RunError::Other(format!("not started: {f}")).into()
        })
    }

    /// `path` with `{rank}` and `{host}` replaced by this process's.
    pub fn substitute(&self, path: &Path) -> PathBuf {
        crate::cluster::template::substitute(path, self.rank, self.cluster.host())
    }

    /// Called by the coordinator once every check is done and before anything is touched:
    /// meets the other ranks (an error names those that failed).
    pub fn planned(&self) -> Result<(), Error> {
        let met = self.meet_group(&Status::Ready);
        self.finished.set(met.is_err());
        met?;
        if self.cluster.is_distributed() {
            let met = self.cluster.checkpoint(&Status::Ready);
            self.finished.set(met.is_err());
            met?;
        }
        Ok(())
    }

    /// Called by the coordinator when this process is ready to open its window: meets
    /// the other ranks (an error names those that failed) and waits for `--start-at`.
    /// `stop` (the signal word) cuts the wait short; the run then opens and stops at once.
    pub fn open(&self, stop: &AtomicUsize) -> Result<Opened, Error> {
        self.finished.set(true);
        self.meet_group(&Status::Ready)?;
        if self.cluster.is_distributed() {
            self.cluster.checkpoint(&Status::Ready)?;
        }
        let Some(at) = self.start_at else { return Ok(Opened::default()) };
        let waited = start_at::wait_until(at, stop);
        let late_ns = start_at::now_unix_ns().saturating_sub(at.unix_ns);
        let late_warning = (waited.missed_by_ns > 0).then(|| {
            format!(
                "--start-at {} had passed {} before the run was ready (layout and set-up took longer): the window opened at once",
                at.rfc3339(),
                crate::report::units::seconds_ns(waited.missed_by_ns)
            )
        });
        Ok(Opened {
            start_at: Some(StartAtInfo {
                requested: at.rfc3339(),
                requested_unix_ns: at.unix_ns,
                late_ns,
                missed: waited.missed_by_ns > 0,
            }),
            late_warning,
        })
    }

    /// Called when this process failed before reaching `planned` or `open`: in a cluster
    /// run, brings the failure to the checkpoint the other ranks wait at, and returns what
    /// every rank learnt there. `None` when alone, or when no checkpoint is left.
    pub fn fail(&self, error: &Error) -> Option<ClusterFailure> {
        if self.finished.replace(true) {
            return None;
        }
        let status = Status::Failed { message: error.to_string(), usage: matches!(error, Error::Usage(_)) };
        // The other jobs of the phase learn it at their checkpoint; this job keeps its own error.
        let _ = self.meet_group(&status);
        if !self.cluster.is_distributed() {
            return None;
        }
        self.cluster.checkpoint(&status).err()
    }
}
