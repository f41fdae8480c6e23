//! Which block a worker addresses next, as a number in 0..blocks of the
//! worker's region (the worker adds where its region starts and maps the
//! block to a file and an offset).
//!
//! Timed runs sample: sequential loops over the region from the worker's
//! starting point; random draws with replacement (like fio's
//! `--norandommap`) from a uniform, zipf, pareto or gaussian distribution.
//! Runs until covered (`--duration 0`) with sequential or uniform access split
//! the region between workers so that every block is accessed exactly once in
//! total: sequential in order, random through a shared full-cycle permutation.
//!
//! Zipf and pareto produce ranks (0 the hottest); a keyed bijection of block
//! numbers scatters the ranks over the region unless scrambling is off, so
//! the hot set is not simply the start of the file. The bijection is the same
//! for every worker, so they agree on which blocks are hot.
//!
//! Partly random access (`--random-percent P`, fio's `percentage_random`): each I/O
//! is a random jump with probability P %, drawn from the distribution; otherwise it is
//! the block after the previous one, so sequential runs continue from each jump.
//!
//! Generating a block number never allocates; its cost is measured in
//! benches/hot_path.rs.

pub mod alias;
pub mod block_sizes;
pub mod gaussian;
pub mod pareto;
pub mod permutation;
pub mod zipf;
pub mod zoned;

use crate::base::primitives::rng::Rng;
use block_sizes::SizeFor;
use gaussian::Gaussian;
use pareto::Pareto;
pub use permutation::Permutation;
use zipf::Zipf;
use zoned::{ZoneSets, ZonedSource};

use serde::{Deserialize, Serialize};

/// Sequential or random offsets (`--random`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessOrder {
    Sequential,
    Random,
}

/// How random offsets are drawn (`--distribution`).
// The zoned variant holds its zones inline (three sets, some 800 bytes) so that the distribution stays
// `Copy` plain data; it is planning data, copied a few times per run, never per I/O.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    Uniform,
    /// P(rank k) proportional to k^-theta.
    Zipf {
        theta: f64,
    },
    /// fio's pareto: a fraction h of the I/Os go to a fraction 1 - h of the blocks.
    Pareto {
        h: f64,
    },
    /// A bell over the region: centre and standard deviation as fractions of it.
    Gaussian {
        stddev: f64,
        center: f64,
    },
    /// fio's `zoned` and `zoned_abs`: set shares of the I/Os to consecutive zones.
    Zoned {
        zones: ZoneSets,
    },
}

impl Distribution {
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Zipf { .. } => "zipf",
            Distribution::Pareto { .. } => "pareto",
            Distribution::Gaussian { .. } => "gaussian",
            Distribution::Zoned { zones } => match zones.extent() {
                zoned::ZoneExtent::Percent => "zoned",
                zoned::ZoneExtent::Bytes => "zoned-abs",
            },
        }
    }
}

/// What decides a worker's block numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourcePlan {
    pub order: AccessOrder,
    pub distribution: Distribution,
    pub scramble: bool,
    /// Visit each block of the region once (runs until covered) rather than sample.
    pub once: bool,
    /// Blocks in the region.
    pub blocks: u64,
    /// This worker's share of the region: share `index` of `count` (for starting points
    /// and for splitting runs until covered). (0, 1) for a region of its own.
    pub share_index: u32,
    pub share_count: u32,
    /// Sequential workers all start at block 0.
    pub overlap: bool,
    pub seed: u64,
    /// Worker number, to give each worker its own random stream.
    pub worker: u32,
    /// Share of random jumps, 0-100, for random timed runs; 100 is fully random.
    pub random_percent: u8,
    /// Bytes per block (absolute zones are sizes).
    pub block_bytes: u64,
}

/// The block numbers one worker will address.
#[derive(Clone, Debug)]
pub enum BlockSource {
    /// In order from `next`, wrapping at `blocks`: timed sequential runs.
    SequentialLoop { next: u64, blocks: u64 },
    /// Uniform over `0..blocks`, with replacement.
    Uniform { rng: Rng, blocks: u64 },
    /// In order over `next..end`, once: sequential runs until covered.
    SequentialOnce { next: u64, end: u64 },
    /// Positions `next..end` of a permutation of the region, once: uniform runs until covered.
    PermutedOnce { permutation: Permutation, next: u64, end: u64 },
    /// Zipf ranks, scattered by `scramble` when present.
    Zipf { zipf: Zipf, rng: Rng, scramble: Option<Permutation> },
    /// Pareto ranks, scattered by `scramble` when present.
    Pareto { pareto: Pareto, rng: Rng, scramble: Option<Permutation> },
    /// Gaussian positions.
    Gaussian { gaussian: Gaussian, rng: Rng },
    /// Zones with set shares of the I/Os (boxed: it holds its zones and their counts).
    Zoned(Box<ZonedSource>),
    /// `--random-percent` below 100: a jump drawn from `jumps` with probability
    /// `random_percent` %, else the block after `last`.
    PartlyRandom(Box<PartlyRandom>),
}

/// The state of partly random access (boxed: it holds the source of its jumps).
#[derive(Clone, Debug)]
pub struct PartlyRandom {
    jumps: BlockSource,
    rng: Rng,
    random_percent: u64,
    last: u64,
    blocks: u64,
}

impl BlockSource {
    pub fn new(plan: &SourcePlan) -> Self {
        if plan.order == AccessOrder::Random && !plan.once && plan.random_percent < 100 {
            let jumps = BlockSource::new(&SourcePlan { random_percent: 100, ..*plan });
            let rng = Rng::new(plan.seed, 0x9a27_1e55 + u64::from(plan.worker));
            // The first I/O continues from just before the worker's share, like a sequential worker.
            let start = share_boundary(plan.blocks, plan.share_index, plan.share_count);
            let last = if start == 0 { plan.blocks - 1 } else { start - 1 };
            let random_percent = u64::from(plan.random_percent);
            return BlockSource::PartlyRandom(Box::new(PartlyRandom {
                jumps,
                rng,
                random_percent,
                last,
                blocks: plan.blocks,
            }));
        }
        let blocks = plan.blocks;
        assert!(blocks > 0 && plan.share_count > 0);
        let share_start = share_boundary(blocks, plan.share_index, plan.share_count);
        let share_end = share_boundary(blocks, plan.share_index + 1, plan.share_count);
        let rng = Rng::new(plan.seed, 0x0ff5_e700 + u64::from(plan.worker));
        // One bijection per run: the same in every worker.
        let scramble = plan.scramble.then(|| Permutation::new(blocks, plan.seed ^ 0x5c7a_4b1e));
        match (plan.order, plan.distribution, plan.once) {
            (AccessOrder::Sequential, _, false) => {
                BlockSource::SequentialLoop { next: if plan.overlap { 0 } else { share_start % blocks }, blocks }
            }
            (AccessOrder::Sequential, _, true) => BlockSource::SequentialOnce { next: share_start, end: share_end },
            (AccessOrder::Random, Distribution::Uniform, false) => BlockSource::Uniform { rng, blocks },
            (AccessOrder::Random, Distribution::Uniform, true) => BlockSource::PermutedOnce {
                // One permutation for the whole run (same seed in every worker); each worker
                // walks its own slice of positions, so the slices never overlap.
                permutation: Permutation::new(blocks, plan.seed ^ 0x7065_726d),
                next: share_start,
                end: share_end,
            },
            (AccessOrder::Random, Distribution::Zipf { theta }, _) => {
                BlockSource::Zipf { zipf: Zipf::new(blocks, theta), rng, scramble }
            }
            (AccessOrder::Random, Distribution::Pareto { h }, _) => {
                BlockSource::Pareto { pareto: Pareto::new(blocks, h), rng, scramble }
            }
            (AccessOrder::Random, Distribution::Gaussian { stddev, center }, _) => {
                BlockSource::Gaussian { gaussian: Gaussian::new(blocks, center, stddev), rng }
            }
            (AccessOrder::Random, Distribution::Zoned { zones }, _) => {
                BlockSource::Zoned(Box::new(ZonedSource::new(&zones, blocks, plan.block_bytes, rng)))
            }
        }
    }

    /// Blocks in the region the source draws from.
    pub fn region_blocks(&self) -> u64 {
        match self {
            BlockSource::SequentialLoop { blocks, .. } | BlockSource::Uniform { blocks, .. } => *blocks,
            BlockSource::SequentialOnce { end, .. } => *end,
            BlockSource::PermutedOnce { permutation, .. } => permutation.len(),
            BlockSource::Zipf { zipf, .. } => zipf.len(),
            BlockSource::Pareto { pareto, .. } => pareto.len(),
            BlockSource::Gaussian { gaussian, .. } => gaussian.len(),
            BlockSource::Zoned(z) => z.region_blocks(),
            BlockSource::PartlyRandom(p) => p.blocks,
        }
    }

    /// Whether the source ends by itself (it visits each block of its share once).
    pub fn is_finite(&self) -> bool {
        matches!(self, BlockSource::SequentialOnce { .. } | BlockSource::PermutedOnce { .. })
    }

    /// I/Os drawn per zone of a zoned distribution (the jumps' of partly random access),
    /// set after set when the directions have zones of their own; empty otherwise.
    pub fn zone_counts(&self) -> Vec<u64> {
        match self {
            BlockSource::Zoned(z) => z.counts(),
            BlockSource::PartlyRandom(p) => p.jumps.zone_counts(),
            _ => Vec::new(),
        }
    }

    /// The next block, or `None` when this worker's share is done (for a read: only zoned
    /// distributions draw by direction, `next_block_for`).
    #[inline(always)]
    pub fn next_block(&mut self) -> Option<u64> {
        self.next_block_for(|| SizeFor::Read)
    }

    /// The next block of an I/O of direction `of()` (zoned distributions draw from its
    /// zones; every other source never asks, so the direction costs them nothing).
    #[inline(always)]
    pub fn next_block_for(&mut self, of: impl FnOnce() -> SizeFor) -> Option<u64> {
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
            BlockSource::Zipf { zipf, rng, scramble } => {
                let rank = zipf.sample(rng) - 1;
                Some(scramble.as_ref().map_or(rank, |p| p.at(rank)))
            }
            BlockSource::Pareto { pareto, rng, scramble } => {
                let rank = pareto.sample(rng);
                Some(scramble.as_ref().map_or(rank, |p| p.at(rank)))
            }
            BlockSource::Gaussian { gaussian, rng } => Some(gaussian.sample(rng)),
            BlockSource::Zoned(z) => Some(z.next_block(of())),
            BlockSource::PartlyRandom(p) => {
                let block = if p.rng.below(100) < p.random_percent {
                    p.jumps.next_block_for(of)?
                } else if p.last + 1 == p.blocks {
                    0
                } else {
                    p.last + 1
                };
                p.last = block;
                Some(block)
            }
        }
    }
}

impl BlockSource {
    /// With a block-size mix (`block_sizes`): the first of `units` consecutive blocks
    /// (units of the alignment) for an I/O that covers them all, inside the region.
    /// Sequential sources go on where the previous I/O ended (back to 0 when it would
    /// not fit); uniform draws any start where it fits; the other distributions draw a
    /// block and move back to the last start that fits. Runs until covered do not take
    /// mixes (the spec refuses them).
    #[inline(always)]
    pub fn next_extent(&mut self, units: u64, of: impl FnOnce() -> SizeFor) -> Option<u64> {
        match self {
            BlockSource::SequentialLoop { next, blocks } => {
                let start = if *next + units > *blocks { 0 } else { *next };
                *next = if start + units >= *blocks { 0 } else { start + units };
                Some(start)
            }
            BlockSource::Uniform { rng, blocks } => Some(rng.below(*blocks - units.min(*blocks) + 1)),
            BlockSource::PartlyRandom(p) => {
                let blocks = p.blocks;
                let start = if p.rng.below(100) < p.random_percent {
                    p.jumps.next_block_for(of)?.min(blocks - units.min(blocks))
                } else if p.last + 1 + units > blocks {
                    0
                } else {
                    p.last + 1
                };
                p.last = start + units - 1;
                Some(start)
            }
            _ => {
                let blocks = self.region_blocks();
                Some(self.next_block_for(of)?.min(blocks - units.min(blocks)))
            }
        }
    }
}

/// Where share `index` of `count` of `blocks` starts (evenly spaced, exact).
pub fn share_boundary(blocks: u64, index: u32, count: u32) -> u64 {
    (u128::from(blocks) * u128::from(index) / u128::from(count)) as u64
}

#[cfg(test)]
mod share_tests {
    use super::share_boundary;
    use proptest::prelude::*;

    proptest! {
        /// Partitioned regions: the shares of `count` workers are disjoint, in order, and
        /// cover the region exactly, with no overflow for any size.
        #[test]
        fn shares_tile_the_region(blocks in any::<u64>(), count in 1u32..=4096) {
            prop_assert_eq!(share_boundary(blocks, 0, count), 0);
            prop_assert_eq!(share_boundary(blocks, count, count), blocks);
            let floor = blocks / u64::from(count);
            for w in [0, 1.min(count - 1), count / 2, count - 1] {
                let (start, end) = (share_boundary(blocks, w, count), share_boundary(blocks, w + 1, count));
                prop_assert!(start <= end && end <= blocks);
                let share = end - start;
                prop_assert!(share == floor || share == floor + 1, "share {} of {} blocks over {}", share, blocks, count);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(
        order: AccessOrder,
        distribution: Distribution,
        once: bool,
        blocks: u64,
        worker: u32,
        workers: u32,
    ) -> SourcePlan {
        SourcePlan {
            order,
            distribution,
            scramble: true,
            once,
            blocks,
            share_index: worker,
            share_count: workers,
            overlap: false,
            seed: 9,
            worker,
            random_percent: 100,
            block_bytes: 4096,
        }
    }

    #[test]
    fn until_covered_touches_every_block_once_across_workers() {
        for order in [AccessOrder::Sequential, AccessOrder::Random] {
            for (blocks, workers) in [(1, 1), (2, 1), (3, 2), (1000, 3), (4099, 7), (5, 8), ((1 << 20) + 7, 3)] {
                let mut counts = vec![0u8; blocks as usize];
                for w in 0..workers {
                    let mut s = BlockSource::new(&plan(order, Distribution::Uniform, true, blocks, w, workers));
                    while let Some(b) = s.next_block() {
                        counts[b as usize] += 1;
                    }
                }
                assert!(counts.iter().all(|&c| c == 1), "{order:?} {blocks}/{workers}");
            }
        }
    }

    #[test]
    fn sequential_loop_starts_evenly_and_wraps_unless_overlapping() {
        let mut p = plan(AccessOrder::Sequential, Distribution::Uniform, false, 10, 1, 2);
        let mut s = BlockSource::new(&p);
        let got: Vec<u64> = (0..7).map(|_| s.next_block().unwrap()).collect();
        assert_eq!(got, vec![5, 6, 7, 8, 9, 0, 1]);
        p.overlap = true;
        assert_eq!(BlockSource::new(&p).next_block(), Some(0));
    }

    #[test]
    fn extents_fit_in_the_region_and_sequential_ones_follow_each_other() {
        let mut s = BlockSource::new(&plan(AccessOrder::Sequential, Distribution::Uniform, false, 10, 0, 1));
        let got: Vec<u64> = [4, 4, 4, 1, 16].iter().map(|&u| s.next_extent(u, || SizeFor::Read).unwrap()).collect();
        // 0..4, 4..8, then 4 more do not fit before 10: back to 0; then 4..5.
        assert_eq!(got[..4], [0, 4, 0, 4]);
        let distributions = [
            Distribution::Uniform,
            Distribution::Zipf { theta: 1.2 },
            Distribution::Gaussian { stddev: 0.5, center: 1.0 },
        ];
        for d in distributions {
            let mut p = plan(AccessOrder::Random, d, false, 100, 0, 1);
            for random_percent in [100, 50] {
                p.random_percent = random_percent;
                let mut s = BlockSource::new(&p);
                let mut last_start = 0;
                for i in 0..10_000u64 {
                    let units = [1, 8, 64][(i % 3) as usize];
                    let start = s.next_extent(units, || SizeFor::Read).unwrap();
                    assert!(start + units <= 100, "{d:?} {random_percent}: {start}+{units}");
                    last_start = last_start.max(start);
                }
                assert!(last_start >= 90, "{d:?}: small extents reach the region's end ({last_start})");
            }
        }
    }

    #[test]
    fn same_seed_same_sequence_and_workers_differ() {
        for d in [
            Distribution::Uniform,
            Distribution::Zipf { theta: 1.2 },
            Distribution::Pareto { h: 0.9 },
            Distribution::Gaussian { stddev: 0.1, center: 0.5 },
        ] {
            let take = |w, seed| {
                let mut p = plan(AccessOrder::Random, d, false, 1 << 30, w, 2);
                p.seed = seed;
                let mut s = BlockSource::new(&p);
                (0..32).map(|_| s.next_block().unwrap()).collect::<Vec<_>>()
            };
            assert_eq!(take(0, 5), take(0, 5), "{d:?}");
            assert_ne!(take(0, 5), take(1, 5), "{d:?}");
            assert_ne!(take(0, 5), take(0, 6), "{d:?}");
        }
    }

    #[test]
    fn uniform_passes_a_chi_square_test() {
        let blocks = 1000u64;
        let samples = 1_000_000u64;
        let mut s = BlockSource::new(&plan(AccessOrder::Random, Distribution::Uniform, false, blocks, 0, 1));
        let mut counts = vec![0u64; blocks as usize];
        for _ in 0..samples {
            counts[s.next_block().unwrap() as usize] += 1;
        }
        let expected = samples as f64 / blocks as f64;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        // 999 degrees of freedom: the 0.1 % critical value is about 1143.
        assert!(chi2 < 1143.0, "chi-square {chi2:.1}");
        assert!(chi2 > 850.0, "suspiciously even: chi-square {chi2:.1}");
    }

    #[test]
    fn scrambling_scatters_the_hot_set_and_no_scramble_keeps_it_at_the_start() {
        let hottest = |scramble: bool| {
            let mut p = plan(AccessOrder::Random, Distribution::Zipf { theta: 1.2 }, false, 1 << 20, 0, 1);
            p.scramble = scramble;
            let mut s = BlockSource::new(&p);
            let mut counts = std::collections::HashMap::new();
            for _ in 0..100_000 {
                *counts.entry(s.next_block().unwrap()).or_insert(0u32) += 1;
            }
            let mut v: Vec<(u64, u32)> = counts.into_iter().collect();
            v.sort_by_key(|x| std::cmp::Reverse(x.1));
            v.iter().take(10).map(|x| x.0).collect::<Vec<_>>()
        };
        let plain = hottest(false);
        assert!(plain.iter().all(|&b| b < 20), "{plain:?}");
        let scattered = hottest(true);
        assert!(scattered.iter().filter(|&&b| b > 1 << 10).count() >= 8, "{scattered:?}");
    }

    /// Counts the I/Os that jump (are not the block after the previous one).
    fn jumps(s: &mut BlockSource, n: usize) -> usize {
        let mut prev = s.next_block().unwrap();
        let mut jumps = 0;
        for _ in 1..n {
            let b = s.next_block().unwrap();
            if b != prev + 1 {
                jumps += 1;
            }
            prev = b;
        }
        jumps
    }

    #[test]
    fn random_percent_mixes_sequential_runs_and_jumps_in_proportion() {
        let blocks = 1u64 << 30; // a jump lands on the next block with probability 2^-30
        for percent in [0u8, 10, 50, 90] {
            let mut p = plan(AccessOrder::Random, Distribution::Uniform, false, blocks, 0, 1);
            p.random_percent = percent;
            let n = 100_000;
            let share = jumps(&mut BlockSource::new(&p), n) as f64 / (n - 1) as f64;
            assert!((share - f64::from(percent) / 100.0).abs() < 0.01, "{percent}%: {share:.4} jumps");
        }
        // 100 is the plain source: no wrapper, every I/O a draw.
        let p = plan(AccessOrder::Random, Distribution::Uniform, false, blocks, 0, 1);
        assert!(matches!(BlockSource::new(&p), BlockSource::Uniform { .. }));
    }

    #[test]
    fn random_percent_runs_continue_from_each_jump_and_wrap() {
        let blocks = 8u64;
        let mut p = plan(AccessOrder::Random, Distribution::Uniform, false, blocks, 1, 2);
        p.random_percent = 0;
        let mut s = BlockSource::new(&p);
        // Fully sequential from the worker's share, wrapping at the end of the region.
        let got: Vec<u64> = (0..6).map(|_| s.next_block().unwrap()).collect();
        assert_eq!(got, vec![4, 5, 6, 7, 0, 1]);
        assert_eq!(s.region_blocks(), blocks);
        // Skewed distributions jump by their own law; the runs stay inside the region.
        p.random_percent = 30;
        p.distribution = Distribution::Zipf { theta: 1.2 };
        let mut s = BlockSource::new(&p);
        assert!((0..10_000).all(|_| s.next_block().unwrap() < blocks));
    }
}
