//! Was this process started by an MPI launcher (mpirun, mpiexec, srun with an
//! MPI plugin), and as which rank? Read from the environment the launchers set,
//! so it works in every build: the MPI build initialises MPI only then (a plain
//! `iopulse` needs no mpirun), and the default build can tell a user who
//! launched it with mpirun that its ranks would not meet. It never starts MPI.

/// This process's rank and the job's size as a launcher announced them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LauncherRank {
    pub rank: u32,
    pub size: u32,
    /// The variable the size was read from, to name it in messages.
    pub variable: &'static str,
}

/// (rank variable, size variable) of Open MPI, PMIx (Open MPI 5, Slurm's pmix plugin)
/// and PMI/PMI2 (MPICH's hydra, Intel MPI, Slurm's pmi2 plugin).
const VARIABLES: &[(&str, &str)] =
    &[("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMIX_RANK", "PMIX_SIZE"), ("PMI_RANK", "PMI_SIZE")];

/// The launcher's rank and size, when an MPI launcher started this process.
pub fn launcher_rank() -> Option<LauncherRank> {
    from_env(|name| std::env::var(name).ok())
}

fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<LauncherRank> {
    let num = |name: &str| get(name).and_then(|v| v.trim().parse::<u32>().ok());
    VARIABLES.iter().find_map(|&(rank, size)| {
        let r = num(rank)?;
        // PMIx does not always export a size; the rank alone says a launcher is there.
        let (s, variable) = match num(size) {
            Some(s) => (s, size),
            None => (r + 1, rank),
        };
        Some(LauncherRank { rank: r, size: s.max(r + 1), variable })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn reads_open_mpi_pmix_and_pmi() {
        assert_eq!(from_env(env(&[])), None);
        let ompi = from_env(env(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4")])).unwrap();
        assert_eq!((ompi.rank, ompi.size, ompi.variable), (1, 4, "OMPI_COMM_WORLD_SIZE"));
        let pmix = from_env(env(&[("PMIX_RANK", "3")])).unwrap();
        assert_eq!((pmix.rank, pmix.size), (3, 4));
        let pmi = from_env(env(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")])).unwrap();
        assert_eq!((pmi.rank, pmi.size), (0, 2));
        assert_eq!(from_env(env(&[("PMI_RANK", "x")])), None);
    }
}
