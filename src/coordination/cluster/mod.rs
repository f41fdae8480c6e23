//! The cluster seam: this process as one rank of a job that runs the same spec
//! on many hosts at once (MPI: `mpirun`, `srun`), or as the only rank of a job
//! of one. It gives the rank, the number of ranks, each rank's host, and the
//! two collectives a run needs: a checkpoint where every rank says whether it
//! is ready (so that one failed rank ends the whole job, never leaving the
//! others at a barrier), and a gather of byte blobs on rank 0.
//!
//! The transport is a backend chosen once (`single`, or `mpi` behind the
//! feature of that name), so the rest of the code has no `#[cfg]`. This module
//! knows nothing of results or reports: it moves bytes and statuses.

pub mod in_process;
mod launcher;
#[cfg(feature = "mpi")]
mod mpi;
pub mod result;
mod single;
pub mod template;

pub use launcher::launcher_rank;

/// The rank that gathers the results and prints the cluster report.
pub const ROOT_RANK: u32 = 0;

/// What a rank brings to a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Ready,
    /// The rank cannot go on. `usage` marks a usage error (exit 2 if every rank has one).
    Failed {
        message: String,
        usage: bool,
    },
}

// The failure types live with the other typed errors (`error`), which the cluster layer
// uses: defined here they would make `error` and `cluster` import each other.
pub use crate::base::diagnostics::error::{ClusterFailure, RankFailure};

/// Failures of the cluster layer itself (the MPI library refused to start).
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("{0}")]
    Mpi(String),
}

/// The transport behind a `Cluster`.
enum Backend {
    Single(single::Single),
    #[cfg(feature = "mpi")]
    Mpi(mpi::Mpi),
}

/// This process's place in the job.
pub struct Cluster {
    rank: u32,
    /// What `{rank}` stands for: the rank, or alone, the rank an MPI launcher gave a
    /// build without MPI (so that its processes still get distinct files).
    placeholder_rank: u32,
    hosts: Vec<String>,
    backend: Backend,
    /// How the job was launched, for the report: "mpi", or "" alone.
    launcher: &'static str,
}

impl Cluster {
    /// Joins the job this process was launched in: MPI when built with the `mpi`
    /// feature and started by an MPI launcher, otherwise a job of one.
    pub fn join() -> Result<Self, JoinError> {
        #[cfg(feature = "mpi")]
        if launcher_rank().is_some() {
            let mpi = mpi::Mpi::init()?;
            let host = hostname();
            let hosts = mpi.all_gather(host.as_bytes()).into_iter().map(|h| String::from_utf8_lossy(&h).into_owned());
            let rank = mpi.rank();
            let hosts = hosts.collect();
            return Ok(Self { rank, placeholder_rank: rank, hosts, backend: Backend::Mpi(mpi), launcher: "mpi" });
        }
        let mut alone = Self::alone();
        alone.placeholder_rank = launcher_rank().map_or(0, |l| l.rank);
        Ok(alone)
    }

    /// A job of one: this process, rank 0, on this host.
    pub fn alone() -> Self {
        Self {
            rank: 0,
            placeholder_rank: 0,
            hosts: vec![hostname()],
            backend: Backend::Single(single::Single),
            launcher: "",
        }
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// What `{rank}` in a path stands for: `rank()`, except in a build without MPI started
    /// by an MPI launcher, where it is the launcher's rank (each process runs alone then).
    pub fn placeholder_rank(&self) -> u32 {
        self.placeholder_rank
    }

    /// Ranks in the job.
    pub fn size(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// This rank's host name.
    pub fn host(&self) -> &str {
        &self.hosts[self.rank as usize]
    }

    /// Every rank's host name, by rank.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// More than one rank: the run is one part of a cluster run.
    pub fn is_distributed(&self) -> bool {
        self.size() > 1
    }

    pub fn is_root(&self) -> bool {
        self.rank == ROOT_RANK
    }

    /// "mpi" under an MPI launcher; empty for a job of one.
    pub fn launcher(&self) -> &'static str {
        self.launcher
    }

    /// A collective: every rank brings its status and every rank learns who failed
    /// (`Ok` when nobody did). A rank that failed must still call it, so nobody waits
    /// forever; it is an all-gather, not a bare barrier, for that reason.
    pub fn checkpoint(&self, status: &Status) -> Result<(), ClusterFailure> {
        let mine = match status {
            Status::Ready => vec![0u8],
            Status::Failed { message, usage } => {
                let mut bytes = vec![if *usage { 2u8 } else { 1u8 }];
                bytes.extend_from_slice(message.as_bytes());
                bytes
            }
        };
        let failures: Vec<RankFailure> = self
            .all_gather(&mine)
            .into_iter()
            .enumerate()
            .filter(|(_, b)| b.first().is_some_and(|&tag| tag != 0))
            .map(|(rank, b)| RankFailure {
                rank: rank as u32,
                host: self.hosts.get(rank).cloned().unwrap_or_default(),
                message: String::from_utf8_lossy(&b[1..]).into_owned(),
                usage: b[0] == 2,
            })
            .collect();
        if failures.is_empty() { Ok(()) } else { Err(ClusterFailure { failures, size: self.size() }) }
    }

    /// A collective: every rank's `blob`, by rank, on every rank.
    pub fn all_gather(&self, blob: &[u8]) -> Vec<Vec<u8>> {
        match &self.backend {
            Backend::Single(s) => s.all_gather(blob),
            #[cfg(feature = "mpi")]
            Backend::Mpi(m) => m.all_gather(blob),
        }
    }

    /// A collective: every rank's `blob`, by rank, on rank 0 (`Some` there, `None` elsewhere).
    pub fn gather_to_root(&self, blob: &[u8]) -> Option<Vec<Vec<u8>>> {
        match &self.backend {
            Backend::Single(s) => Some(s.all_gather(blob)),
            #[cfg(feature = "mpi")]
            Backend::Mpi(m) => m.gather_to_root(blob),
        }
    }

    /// Ends every rank of the job at once with `code`: the last resort when this rank
    /// cannot reach the next collective (the others would wait for it forever).
    pub fn abort(&self, code: i32) -> ! {
        match &self.backend {
            Backend::Single(_) => std::process::exit(code),
            #[cfg(feature = "mpi")]
            Backend::Mpi(m) => m.abort(code),
        }
    }
}

/// This machine's host name, as the result's `environment.hostname` has it.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_is_rank_0_of_1_and_its_checkpoint_reports_its_own_failure() {
        let c = Cluster::alone();
        assert_eq!((c.rank(), c.size(), c.is_distributed(), c.is_root()), (0, 1, false, true));
        assert_eq!(c.host(), hostname());
        assert_eq!(c.checkpoint(&Status::Ready), Ok(()));
        let failed = c.checkpoint(&Status::Failed { message: "cannot open x".into(), usage: true }).unwrap_err();
        assert_eq!(failed.failures.len(), 1);
        assert_eq!(failed.to_string(), format!("rank 0 (host {}): cannot open x", c.host()));
        assert!(failed.all_usage());
        assert_eq!(c.gather_to_root(b"abc"), Some(vec![b"abc".to_vec()]));
    }

    #[test]
    fn a_usage_error_on_some_ranks_only_is_a_failed_run() {
        let f = |rank, usage| RankFailure { rank, host: "h".into(), message: "m".into(), usage };
        let some = ClusterFailure { failures: vec![f(1, true)], size: 2 };
        assert!(!some.all_usage());
        let all = ClusterFailure { failures: vec![f(0, true), f(1, true)], size: 2 };
        assert!(all.all_usage());
        let mixed = ClusterFailure { failures: vec![f(0, true), f(1, false)], size: 2 };
        assert!(!mixed.all_usage());
        assert_eq!(mixed.to_string(), "rank 0 (host h): m; rank 1 (host h): m");
    }
}
