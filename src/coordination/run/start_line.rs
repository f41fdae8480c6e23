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
//! `in_group` also meets the other jobs at each checkpoint (`cluster::in_process`), and
//! one job refused before `planned` stops every job before anything is touched. Their
//! workers wait on one start word (`worker::StartWord`), set by the last job to reach
//! `open`: every worker of every job is released by one call, at one instant, once all
//! of them are set up. A job that will not go brings its failure there (`call_off`), so
//! the word is then called off for all.
//!
//! It also gives the rank and host that `{rank}` and `{host}` in paths stand for.
//! The coordinator calls `planned` and `open` once each, in that order. A rank
//! that fails before one of them calls `fail` instead (see `job`), which takes
//! its error to the checkpoint the others wait at, so nobody waits forever.

use crate::base::diagnostics::error::Error;
use crate::coordination::cluster::in_process::Group;
use crate::coordination::cluster::{Cluster, ClusterFailure, Status};
use crate::io::schedule::start_at::{self, StartAt, StartAtInfo};
use crate::io::worker::StartWord;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};

pub struct StartLine<'a> {
    cluster: &'a Cluster,
    start_at: Option<StartAt>,
    /// What `{rank}` stands for (see `Cluster::placeholder_rank`).
    rank: u32,
    /// No checkpoint is left to take part in: `open` was reached, or one failed.
    finished: Cell<bool>,
    /// The other jobs of this phase, this job's place among them, and what they share at
    /// the start.
    group: Option<(&'a Group, usize, &'a PhaseStart)>,
    /// A checkpoint failed because another job of the group failed there.
    stopped_by_others: Cell<bool>,
}

/// What the jobs of one phase share at their start line: the start word every worker of
/// every job waits on, and what is read of the whole process once for all of them right
/// before it is set (a reading per job would walk every job's memory once per job).
pub struct PhaseStart {
    word: Arc<StartWord>,
    /// The process's memory on transparent huge pages, every job's workers set up.
    huge_page_bytes: OnceLock<Option<u64>>,
}

impl PhaseStart {
    pub fn new() -> Self {
        Self {
            word: Arc::new(StartWord::new(crate::base::primitives::clock::Clock::new())),
            huge_page_bytes: OnceLock::new(),
        }
    }
}

impl Default for PhaseStart {
    fn default() -> Self {
        Self::new()
    }
}

/// What happened at the start line, for the result.
#[derive(Clone, Debug, Default)]
pub struct Opened {
    pub start_at: Option<StartAtInfo>,
    /// `--start-at` had passed before the run was ready: the warning to give.
    pub late_warning: Option<String>,
}

/// `path` for rank `rank` of `ranks` on `host` (see `StartLine::record_path`).
fn per_rank_record(path: &Path, rank: u32, ranks: u32, host: &str) -> PathBuf {
    let named = path.as_os_str().as_encoded_bytes().windows(6).any(|w| w == b"{rank}");
    let substituted = crate::coordination::cluster::template::substitute(path, rank, host);
    if ranks <= 1 || named {
        return substituted;
    }
    let mut name = substituted.into_os_string();
    name.push(format!(".rank{rank}"));
    PathBuf::from(name)
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
    /// at each checkpoint, as member `member`; the workers of every member wait on
    /// `start`, which the last member to reach `open` sets.
    pub fn in_group(mut self, group: &'a Group, member: usize, start: &'a PhaseStart) -> Self {
        self.group = Some((group, member, start));
        self
    }

    /// The start word this run's workers share with the other jobs of its phase, if any.
    pub fn shared_start(&self) -> Option<Arc<StartWord>> {
        self.group.map(|(_, _, start)| Arc::clone(&start.word))
    }

    /// The process's memory on huge pages as the phase's jobs were released (read once,
    /// by the last job to arrive); `None` outside a group or before the release.
    pub fn phase_huge_page_bytes(&self) -> Option<u64> {
        self.group.and_then(|(_, _, start)| start.huge_page_bytes.get().copied().flatten())
    }

    /// A checkpoint failed because another job of the group failed (this job's own
    /// error, if any, is not the cause).
    pub fn stopped_by_others(&self) -> bool {
        self.stopped_by_others.get()
    }

    /// Meets the other jobs of the group, if any. At `open` (`release`), the last to
    /// arrive sets the shared start word: go if every job arrived ready.
    fn meet_group(&self, status: &Status, release: bool) -> Result<(), Error> {
        let Some((group, member, start)) = self.group else { return Ok(()) };
        let complete = |all_ready: bool| {
            if release && all_ready {
                let _ = start.huge_page_bytes.set(crate::io::host::rusage::anon_huge_page_bytes());
            }
            if release || !all_ready {
                start.word.set(all_ready);
            }
        };
        group.checkpoint_then(member, status, complete).map_err(|f| {
            let others: Vec<usize> = f.failed.iter().map(|(m, _)| *m).filter(|&m| m != member).collect();
            if !others.is_empty() && matches!(status, Status::Ready) {
                self.stopped_by_others.set(true);
            }
            crate::base::diagnostics::error::RunError::Other(format!("not started: {f}")).into()
        })
    }

    /// `path` with `{rank}` and `{host}` replaced by this process's.
    pub fn substitute(&self, path: &Path) -> PathBuf {
        crate::coordination::cluster::template::substitute(path, self.rank, self.cluster.host())
    }

    /// This rank's `--verify-state` record: `path` with `{rank}` and `{host}` replaced, and
    /// when the job has several ranks and `path` names no `{rank}`, `.rankN` after it, so
    /// that no two ranks ever write one record (on a shared filesystem they would).
    pub fn record_path(&self, path: &Path) -> PathBuf {
        let ranks = if self.cluster.is_distributed() {
            self.cluster.size()
        } else {
            crate::coordination::cluster::launcher_rank().map_or(1, |l| l.size)
        };
        per_rank_record(path, self.rank, ranks, self.cluster.host())
    }

    /// Called by the coordinator once every check is done and before anything is touched:
    /// meets the other ranks (an error names those that failed).
    pub fn planned(&self) -> Result<(), Error> {
        let met = self.meet_group(&Status::Ready, false);
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
        self.meet_group(&Status::Ready, true)?;
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
                crate::base::units::display::seconds_ns(waited.missed_by_ns)
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

    /// Called by the coordinator, its workers set up (or not), when it will not `open`:
    /// in a group, brings `why` to the checkpoint the other jobs wait at, so that the
    /// start word their workers share is called off rather than waited for. Nothing to do
    /// alone, or once a checkpoint failed.
    pub fn call_off(&self, why: &str) {
        if self.group.is_none() || self.finished.replace(true) {
            return;
        }
        let _ = self.meet_group(&Status::Failed { message: why.to_string(), usage: false }, false);
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
        let _ = self.meet_group(&status, false);
        if !self.cluster.is_distributed() {
            return None;
        }
        self.cluster.checkpoint(&status).err()
    }
}

/// A metadata job beside block jobs meets the phase's checkpoints through this.
impl crate::coordination::metadata::PhaseLine for StartLine<'_> {
    fn planned(&self) -> Result<(), Error> {
        StartLine::planned(self)
    }

    fn open(&self, stop: &AtomicUsize) -> Result<(), Error> {
        StartLine::open(self, stop).map(|_| ())
    }

    fn call_off(&self, why: &str) {
        StartLine::call_off(self, why);
    }

    fn fail(&self, error: &Error) {
        let _ = StartLine::fail(self, error);
    }

    fn shared_start(&self) -> Option<Arc<StartWord>> {
        StartLine::shared_start(self)
    }
}

#[cfg(test)]
mod tests {
    use super::per_rank_record;
    use std::path::{Path, PathBuf};

    #[test]
    fn each_rank_of_several_keeps_its_own_record() {
        let p = Path::new("/r/t.state");
        assert_eq!(per_rank_record(p, 0, 1, "h"), PathBuf::from("/r/t.state"));
        assert_eq!(per_rank_record(p, 3, 4, "h"), PathBuf::from("/r/t.state.rank3"));
        assert_eq!(per_rank_record(Path::new("/r/t.{rank}.state"), 3, 4, "h"), PathBuf::from("/r/t.3.state"));
        assert_eq!(per_rank_record(Path::new("/r/{host}.state"), 1, 2, "n1"), PathBuf::from("/r/n1.state.rank1"));
    }
}
