//! The MPI backend (`--features mpi`, the rsmpi crate): ranks of
//! MPI_COMM_WORLD, blobs moved with MPI_Allgatherv / MPI_Gatherv, MPI_Abort as
//! the last resort. Only the main thread calls MPI (MPI_THREAD_FUNNELED): the
//! worker threads never do. MPI is finalized when the `Cluster` is dropped.
//!
//! Nothing here is `unsafe`: rsmpi wraps the C calls.

use super::JoinError;
use mpi::Count;
use mpi::datatype::PartitionMut;
use mpi::environment::{Threading, Universe};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The exit code of a job ended by MPI_Abort: 1, the run failed.
const ABORT_CODE: i32 = 1;

pub(super) struct Mpi {
    world: SimpleCommunicator,
    /// Finalizes MPI when dropped: kept for as long as the job lasts.
    _universe: Universe,
}

impl Mpi {
    pub(super) fn init() -> Result<Self, JoinError> {
        let (universe, _threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| JoinError::Mpi("MPI was already initialized".into()))?;
        let world = universe.world();
        // A panic on the main thread would leave the other ranks waiting at the next
        // collective: end the whole job instead (worker threads never call MPI).
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if std::thread::current().name() == Some("main") {
                SimpleCommunicator::world().abort(ABORT_CODE);
            }
        }));
        Ok(Self { world, _universe: universe })
    }

    pub(super) fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    /// Every rank's length and where its blob starts among all of them. Blobs beyond
    /// MPI's counts (2 GiB in all) end the job: no rank could receive them.
    fn layout(&self, blob: &[u8]) -> (Vec<Count>, Vec<Count>) {
        let Ok(mine) = Count::try_from(blob.len()) else {
            crate::stderr_line!("iopulse: error: {} bytes cannot be sent in one MPI message", blob.len());
            self.abort(ABORT_CODE);
        };
        let mut counts = vec![0 as Count; self.world.size() as usize];
        self.world.all_gather_into(&mine, &mut counts[..]);
        let mut displs = Vec::with_capacity(counts.len());
        let mut at: i64 = 0;
        for &c in &counts {
            displs.push(at as Count);
            at += i64::from(c);
        }
        if at > i64::from(Count::MAX) {
            // Every rank sees the same counts, so every rank ends here together.
            crate::stderr_line!(
                "iopulse: error: the ranks' results take {at} bytes, more than one MPI gather can carry"
            );
            self.abort(ABORT_CODE);
        }
        (counts, displs)
    }

    pub(super) fn all_gather(&self, blob: &[u8]) -> Vec<Vec<u8>> {
        let (counts, displs) = self.layout(blob);
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(blob, &mut partition);
        }
        split(&buf, &counts, &displs)
    }

    pub(super) fn gather_to_root(&self, blob: &[u8]) -> Option<Vec<Vec<u8>>> {
        let (counts, displs) = self.layout(blob);
        let root = self.world.process_at_rank(super::ROOT_RANK as mpi::Rank);
        if self.rank() != super::ROOT_RANK {
            root.gather_varcount_into(blob);
            return None;
        }
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(blob, &mut partition);
        }
        Some(split(&buf, &counts, &displs))
    }

    pub(super) fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

fn split(buf: &[u8], counts: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    counts.iter().zip(displs).map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec()).collect()
}
