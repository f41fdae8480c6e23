//! Which block a worker addresses next. Blocks are numbered over the whole
//! region (all targets laid end to end); the worker maps a block number to a
//! file and an offset.
//!
//! Timed runs sample: sequential loops over the region from the worker's own
//! starting point; random draws uniformly with replacement (like fio's
//! `--norandommap`). Runs until covered (`--duration 0`) split the region
//! between workers so that every block is accessed exactly once in total:
//! sequential in order, random through a shared full-cycle permutation.
//!
//! Generating a block number costs a few nanoseconds and never allocates.

pub mod permutation;

use crate::rng::Rng;
use crate::spec::{AccessOrder, RunLength};
pub use permutation::Permutation;

/// The block numbers one worker will address.
#[derive(Clone, Debug)]
pub enum BlockSource {
    /// In order from `next`, wrapping at `blocks`: timed sequential runs.
    SequentialLoop { next: u64, blocks: u64 },
    /// Uniform over `0..blocks`, with replacement: timed random runs.
    Uniform { rng: Rng, blocks: u64 },
    /// In order over `next..end`, once: sequential runs until covered.
    SequentialOnce { next: u64, end: u64 },
    /// Positions `next..end` of a permutation of the region, once: random runs until covered.
    PermutedOnce { permutation: Permutation, next: u64, end: u64 },
}

impl BlockSource {
    /// The source of worker `worker` of `workers`, over a region of `blocks` blocks.
    pub fn for_worker(
        order: AccessOrder,
        run_length: RunLength,
        blocks: u64,
        worker: u32,
        workers: u32,
        seed: u64,
    ) -> Self {
        assert!(blocks > 0 && workers > 0);
        let share_start = share_boundary(blocks, worker, workers);
        let share_end = share_boundary(blocks, worker + 1, workers);
        match (order, run_length) {
            (AccessOrder::Sequential, RunLength::Duration { .. }) => {
                BlockSource::SequentialLoop { next: share_start % blocks, blocks }
            }
            (AccessOrder::Random, RunLength::Duration { .. }) => {
                BlockSource::Uniform { rng: Rng::new(seed, 0x0ff5_e700 + u64::from(worker)), blocks }
            }
            (AccessOrder::Sequential, RunLength::UntilCovered) => {
                BlockSource::SequentialOnce { next: share_start, end: share_end }
            }
            (AccessOrder::Random, RunLength::UntilCovered) => BlockSource::PermutedOnce {
                // One permutation for the whole run (same seed in every worker); each worker
                // walks its own slice of positions, so the slices never overlap.
                permutation: Permutation::new(blocks, seed ^ 0x7065_726d),
                next: share_start,
                end: share_end,
            },
        }
    }

    /// The next block, or `None` when this worker's share is done.
    #[inline(always)]
    pub fn next_block(&mut self) -> Option<u64> {
        match self {
            BlockSource::SequentialLoop { next, blocks } => {
                let block = *next;
                *next = if block + 1 == *blocks { 0 } else { block + 1 };
                Some(block)
            }
            BlockSource::Uniform { rng, blocks } => Some(rng.below(*blocks)),
            BlockSource::SequentialOnce { next, end } => {
                if *next == *end {
                    return None;
                }
                *next += 1;
                Some(*next - 1)
            }
            BlockSource::PermutedOnce { permutation, next, end } => {
                if *next == *end {
                    return None;
                }
                *next += 1;
                Some(permutation.at(*next - 1))
            }
        }
    }
}

/// Where worker `worker`'s share of `blocks` starts (evenly spaced, exact).
fn share_boundary(blocks: u64, worker: u32, workers: u32) -> u64 {
    (u128::from(blocks) * u128::from(worker) / u128::from(workers)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_blocks(order: AccessOrder, blocks: u64, workers: u32) -> Vec<u64> {
        let mut counts = vec![0u64; blocks as usize];
        for w in 0..workers {
            let mut s = BlockSource::for_worker(order, RunLength::UntilCovered, blocks, w, workers, 9);
            while let Some(b) = s.next_block() {
                counts[b as usize] += 1;
            }
        }
        counts
    }

    #[test]
    fn until_covered_touches_every_block_once_across_workers() {
        for order in [AccessOrder::Sequential, AccessOrder::Random] {
            for (blocks, workers) in [(1, 1), (3, 2), (1000, 3), (4099, 7), (5, 8)] {
                let counts = all_blocks(order, blocks, workers);
                assert!(counts.iter().all(|&c| c == 1), "{order:?} {blocks}/{workers}: {counts:?}");
            }
        }
    }

    #[test]
    fn sequential_loop_starts_evenly_and_wraps() {
        let mut s = BlockSource::for_worker(AccessOrder::Sequential, RunLength::Duration { ns: 1 }, 10, 1, 2, 0);
        let got: Vec<u64> = (0..7).map(|_| s.next_block().unwrap()).collect();
        assert_eq!(got, vec![5, 6, 7, 8, 9, 0, 1]);
    }

    #[test]
    fn uniform_is_reproducible_and_differs_between_workers() {
        let take = |w, seed| {
            let mut s =
                BlockSource::for_worker(AccessOrder::Random, RunLength::Duration { ns: 1 }, 1 << 30, w, 2, seed);
            (0..16).map(|_| s.next_block().unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(take(0, 5), take(0, 5));
        assert_ne!(take(0, 5), take(1, 5));
        assert_ne!(take(0, 5), take(0, 6));
    }
}
