//! Coverage: which blocks of the region a run touched, and how concentrated
//! the access was (the share of I/Os that went to the hottest 1 % and 20 % of
//! the touched blocks).
//!
//! Each worker keeps its own tracker (no sharing, no atomics):
//! - a bitmap, one bit per block of its region, when that fits in 1 MiB per
//!   worker and 256 MiB in all: distinct blocks are then exact;
//! - exact hit counters for a fixed sample of blocks (those whose keyed hash
//!   falls below a threshold; every block when the region has at most 65,536),
//!   from which concentration is measured, and the distinct count estimated
//!   when there is no bitmap.
//!
//! This module counts and computes; it never formats.

use serde::{Deserialize, Serialize};

/// Largest bitmap a worker keeps (bits = blocks).
const MAX_BITMAP_BLOCKS: u64 = 1 << 23;
/// Largest total of all workers' bitmaps, in bytes.
const MAX_TOTAL_BITMAP_BYTES: u64 = 256 << 20;
/// Blocks sampled for concentration (4 bytes of counter each).
pub const SAMPLE_SLOTS: u64 = 1 << 16;

#[derive(Clone, Debug)]
pub struct CoverageTracker {
    blocks: u64,
    bitmap: Vec<u64>,
    mask: u64,
    shift: u32,
    key: u64,
    /// Blocks whose hash is below this are sampled.
    sample_below: u64,
    samples: Vec<u32>,
}

impl CoverageTracker {
    /// A tracker for a region of `blocks` blocks. `key` must be the same for
    /// every worker of a run so that their samples are of the same blocks.
    pub fn new(blocks: u64, key: u64, keep_bitmap: bool) -> Self {
        assert!(blocks > 0);
        let bits = 64 - (blocks - 1).leading_zeros();
        let domain = if bits == 64 { u64::MAX } else { 1u64 << bits };
        let sample_below = domain.min(SAMPLE_SLOTS);
        let bitmap = if keep_bitmap { vec![0u64; blocks.div_ceil(64) as usize] } else { Vec::new() };
        Self {
            blocks,
            bitmap,
            mask: if bits == 64 { u64::MAX } else { domain - 1 },
            shift: (bits / 2).max(1),
            key,
            sample_below,
            samples: vec![0u32; sample_below as usize],
        }
    }

    /// Whether a worker may keep an exact bitmap for a region of `blocks`, given `workers` workers.
    pub fn bitmap_fits(blocks: u64, workers: u32) -> bool {
        blocks <= MAX_BITMAP_BLOCKS && blocks.div_ceil(8).saturating_mul(u64::from(workers)) <= MAX_TOTAL_BITMAP_BYTES
    }

    /// A bijection of the k-bit block numbers, keyed: the sample is a fixed,
    /// scattered subset of the region.
    #[inline(always)]
    fn hash(&self, block: u64) -> u64 {
        let m = self.mask;
        let mut x = (block ^ self.key) & m;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & m;
        x ^= x >> self.shift;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & m;
        x ^= x >> self.shift;
        x
    }

    /// Records one access to `block` (< blocks). A few arithmetic operations; the
    /// counter array is touched only for sampled blocks.
    #[inline(always)]
    pub fn touch(&mut self, block: u64) {
        if let Some(word) = self.bitmap.get_mut((block >> 6) as usize) {
            *word |= 1u64 << (block & 63);
        }
        let h = self.hash(block);
        if h < self.sample_below {
            let c = &mut self.samples[h as usize];
            *c = c.saturating_add(1);
        }
    }

    /// Records one access to the `units` blocks from `block` (an I/O of a block-size mix
    /// covers several): the first is counted as the access, the others are marked covered
    /// a 64-bit word at a time.
    #[inline(always)]
    pub fn touch_extent(&mut self, block: u64, units: u64) {
        self.touch(block);
        if units > 1 {
            self.set_bits(block + 1, block + units, true);
        }
    }

    /// Takes back `touch_extent` of an I/O that failed (cold).
    pub fn untouch_extent(&mut self, block: u64, units: u64) {
        self.untouch(block);
        if units > 1 {
            self.set_bits(block + 1, block + units, false);
        }
    }

    /// Sets (or clears) the bitmap's bits `start..end`, word by word.
    #[inline(always)]
    fn set_bits(&mut self, start: u64, end: u64, on: bool) {
        let mut b = start;
        while b < end {
            let (word, bit) = ((b >> 6) as usize, b & 63);
            let n = (64 - bit).min(end - b);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << bit };
            let Some(w) = self.bitmap.get_mut(word) else { return };
            if on {
                *w |= mask;
            } else {
                *w &= !mask;
            }
            b += n;
        }
    }

    /// Takes back one access to `block` whose I/O failed (cold: error paths only). The
    /// block then counts as not covered until another I/O on it is issued, even if an
    /// earlier one had succeeded: a block is covered unless its last I/O failed.
    pub fn untouch(&mut self, block: u64) {
        if let Some(word) = self.bitmap.get_mut((block >> 6) as usize) {
            *word &= !(1u64 << (block & 63));
        }
        let h = self.hash(block);
        if h < self.sample_below {
            let c = &mut self.samples[h as usize];
            *c = c.saturating_sub(1);
        }
    }

    /// Bytes this tracker holds.
    pub fn memory_bytes(&self) -> u64 {
        (self.bitmap.len() * 8 + self.samples.len() * 4) as u64
    }
}

/// Coverage of a run, for the result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub blocks_in_region: u64,
    pub blocks_accessed: u64,
    pub fraction: f64,
    /// `blocks_accessed` is exact (a bitmap), not estimated from the sample.
    pub exact: bool,
    /// Share of I/Os that went to the hottest 1 % of touched blocks.
    pub hottest_1pct_share: f64,
    /// Share of I/Os that went to the hottest 20 % of touched blocks.
    pub hottest_20pct_share: f64,
    /// Blocks whose hits were counted to measure concentration (all when equal to
    /// `blocks_in_region`).
    pub sampled_blocks: u64,
    /// Memory the trackers used, all workers together.
    pub memory_bytes: u64,
}

/// Combines the workers' trackers. `shared`: they tracked the same region (their
/// bitmaps and samples add up block by block); otherwise their regions are
/// disjoint and `region_blocks` is the sum of theirs.
pub fn summarize(trackers: &[CoverageTracker], shared: bool, region_blocks: u64) -> Option<Coverage> {
    let first = trackers.first()?;
    let exact = trackers.iter().all(|t| !t.bitmap.is_empty());
    let memory_bytes = trackers.iter().map(CoverageTracker::memory_bytes).sum();
    let mut counts: Vec<u32>;
    let accessed;
    let sampled_blocks;
    if shared {
        counts = first.samples.clone();
        for t in &trackers[1..] {
            for (c, &x) in counts.iter_mut().zip(&t.samples) {
                *c = c.saturating_add(x);
            }
        }
        sampled_blocks = sampled_in_region(first);
        accessed = if exact {
            let mut words = first.bitmap.clone();
            for t in &trackers[1..] {
                for (w, &x) in words.iter_mut().zip(&t.bitmap) {
                    *w |= x;
                }
            }
            words.iter().map(|w| u64::from(w.count_ones())).sum()
        } else {
            estimate_from_samples(first, &counts)
        };
    } else {
        counts = Vec::new();
        let mut total = 0;
        let mut sampled = 0;
        for t in trackers {
            counts.extend_from_slice(&t.samples);
            sampled += sampled_in_region(t);
            total += if exact {
                t.bitmap.iter().map(|w| u64::from(w.count_ones())).sum()
            } else {
                estimate_from_samples(t, &t.samples)
            };
        }
        accessed = total;
        sampled_blocks = sampled;
    }
    let accessed = accessed.min(region_blocks);
    counts.retain(|&c| c > 0);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total_hits: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    let share_of_top = |fraction: f64| {
        if total_hits == 0 {
            return 0.0;
        }
        let top = ((counts.len() as f64 * fraction).ceil() as usize).clamp(1, counts.len());
        counts[..top].iter().map(|&c| u64::from(c)).sum::<u64>() as f64 / total_hits as f64
    };
    Some(Coverage {
        blocks_in_region: region_blocks,
        blocks_accessed: accessed,
        fraction: accessed as f64 / region_blocks as f64,
        exact,
        hottest_1pct_share: share_of_top(0.01),
        hottest_20pct_share: share_of_top(0.20),
        sampled_blocks,
        memory_bytes,
    })
}

/// Sampled blocks that lie inside the region (exact for small regions, where all are sampled).
fn sampled_in_region(t: &CoverageTracker) -> u64 {
    let domain = t.mask.saturating_add(1).max(1);
    if t.sample_below >= domain {
        t.blocks
    } else {
        // The hash is a bijection of the domain, so the sample is a uniform fraction of it.
        ((t.blocks as u128 * t.sample_below as u128) / domain as u128) as u64
    }
}

/// Distinct blocks estimated from the share of sampled blocks that were touched.
fn estimate_from_samples(t: &CoverageTracker, counts: &[u32]) -> u64 {
    let sampled = sampled_in_region(t).max(1);
    let touched = counts.iter().filter(|&&c| c > 0).count() as u64;
    ((touched as u128 * t.blocks as u128) / sampled as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extent_covers_each_of_its_blocks_once_and_is_taken_back_whole() {
        let mut t = CoverageTracker::new(300, 7, true);
        t.touch_extent(60, 70); // 60..130: across three words
        t.touch_extent(299, 1);
        let bits: u32 = t.bitmap.iter().map(|w| w.count_ones()).sum();
        assert_eq!(bits, 71);
        assert!((60..130).all(|b| t.bitmap[(b >> 6) as usize] & (1 << (b & 63)) != 0));
        t.untouch_extent(60, 70);
        let bits: u32 = t.bitmap.iter().map(|w| w.count_ones()).sum();
        assert_eq!(bits, 1, "only block 299 is left");
    }

    #[test]
    fn a_failed_io_takes_its_block_back() {
        let mut t = CoverageTracker::new(1000, 9, true);
        for b in 0..10 {
            t.touch(b);
        }
        for b in 0..4 {
            t.untouch(b);
        }
        let c = summarize(&[t], true, 1000).unwrap();
        assert_eq!(c.blocks_accessed, 6);
    }

    #[test]
    fn exact_distinct_and_uniform_concentration() {
        let mut t = CoverageTracker::new(1000, 9, true);
        for b in 0..500 {
            t.touch(b);
            t.touch(b);
        }
        let c = summarize(&[t], true, 1000).unwrap();
        assert_eq!(c.blocks_accessed, 500);
        assert!(c.exact);
        assert_eq!(c.sampled_blocks, 1000);
        assert!((c.hottest_20pct_share - 0.2).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn concentration_sees_a_hot_block() {
        let mut t = CoverageTracker::new(100, 1, true);
        for b in 0..100 {
            t.touch(b);
        }
        for _ in 0..900 {
            t.touch(42);
        }
        let c = summarize(&[t], true, 100).unwrap();
        assert!((c.hottest_1pct_share - 0.901).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn shared_trackers_merge_block_by_block_and_disjoint_ones_add_up() {
        let mut a = CoverageTracker::new(100, 3, true);
        let mut b = CoverageTracker::new(100, 3, true);
        (0..60).for_each(|x| a.touch(x));
        (40..100).for_each(|x| b.touch(x));
        assert_eq!(summarize(&[a.clone(), b.clone()], true, 100).unwrap().blocks_accessed, 100);
        assert_eq!(summarize(&[a, b], false, 200).unwrap().blocks_accessed, 120);
    }

    #[test]
    fn large_regions_are_estimated_from_the_sample() {
        let blocks = 1u64 << 24;
        let mut t = CoverageTracker::new(blocks, 5, false);
        for b in (0..blocks).step_by(4) {
            t.touch(b);
        }
        let c = summarize(&[t], true, blocks).unwrap();
        assert!(!c.exact);
        let ratio = c.blocks_accessed as f64 / (blocks / 4) as f64;
        assert!((0.95..1.05).contains(&ratio), "estimated {} of {}", c.blocks_accessed, blocks / 4);
        assert!(c.memory_bytes <= 4 * SAMPLE_SLOTS);
    }
}
