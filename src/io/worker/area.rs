//! Where a worker's `unique` writes take their bytes from: windows of its data area, the
//! base of `data::unique` repeated (`replicas` periods, and a tail where windows may start
//! anywhere). A write at offset `x` may use any window starting at `x mod period` plus a
//! whole number of periods: they all hold the same base, so the data does not depend on
//! which one. A window is *held* from the moment its keys are written until its write
//! completes; two held windows never share a 4 KiB granule, so a new write never rewrites
//! the keys of one in flight. When every candidate window is held (many writes in flight
//! at offsets one period apart), the write's data is copied into its slot's own buffer
//! instead (`Placement::Copy`): the same bytes, at the cost of a copy.
//!
//! How many replicas: enough that the worker's slots rarely find all theirs held, and as
//! many as there are slots when writes are whole blocks of at least a quarter of the
//! period, which then guarantees a free window (each held window is one candidate of one
//! offset) and lets the worker do without private buffers for its writes. An inline engine
//! (sync, mmap) holds no window while it prepares the next: one replica.
//!
//! It decides and counts; it never touches the area's bytes (the worker does, through
//! `data::unique`).

use crate::io::data::{Pattern, unique};

/// Bytes per bit of the held map.
const GRANULE_BYTES: u64 = 4096;

/// The area a worker needs, from what it does; `None` when it writes no `unique` data. The
/// one rule, for the worker and for the memory plan (`coordination/run/limits.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AreaShape {
    /// The period of the base (`unique::period_bytes` of the largest write).
    pub period_bytes: u64,
    /// Periods in the area, each a candidate for every offset.
    pub replicas: u64,
    /// Bytes of the area: the replicas, and a tail of the largest write when windows can
    /// start anywhere (sizes that do not divide the period, or a size mix).
    pub len_bytes: u64,
    /// A free window is certain for every write: writes need no private buffers.
    pub guaranteed: bool,
}

impl AreaShape {
    /// `slots`: the worker's slots (each holds at most one window); `largest_bytes`: its
    /// largest I/O; `mixed`: its sizes vary (`--bssplit`).
    pub fn of(
        pattern: Pattern,
        writes: bool,
        verifying: bool,
        completes_inline: bool,
        slots: u32,
        largest_bytes: u64,
        mixed: bool,
    ) -> Option<Self> {
        if pattern != Pattern::Unique || !writes || verifying {
            return None;
        }
        let period_bytes = unique::period_bytes(largest_bytes);
        let slots = u64::from(slots.max(1));
        // Whole blocks that tile the period: every window is one cell of a grid.
        let aligned = !mixed && period_bytes.is_multiple_of(largest_bytes.max(1));
        let replicas = if completes_inline {
            1
        } else {
            // Four times the bytes the slots can hold, in periods; at least two.
            (4 * slots * largest_bytes).div_ceil(period_bytes).clamp(2.min(slots), slots)
        };
        let tail = if aligned { 0 } else { largest_bytes.next_multiple_of(GRANULE_BYTES) };
        Some(Self {
            period_bytes,
            replicas,
            len_bytes: replicas * period_bytes + tail,
            guaranteed: completes_inline || (aligned && replicas == slots),
        })
    }
}

/// Where a write's data goes (`DataArea::place`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A window of the area at this many bytes from its start, now held.
    Window(u64),
    /// Every candidate is held: copy the window's base into the slot's own buffer.
    Copy,
}

/// The held windows of a worker's area (see the module header).
pub struct DataArea {
    shape: AreaShape,
    /// An inline engine never holds a window while placing one: nothing to track.
    tracked: bool,
    /// One bit per granule of the area: held.
    held: Box<[u64]>,
}

impl DataArea {
    pub fn new(shape: AreaShape, completes_inline: bool) -> Self {
        let granules = shape.len_bytes.div_ceil(GRANULE_BYTES);
        let words = if completes_inline { 0 } else { granules.div_ceil(64) as usize };
        Self { shape, tracked: !completes_inline, held: vec![0u64; words].into_boxed_slice() }
    }

    /// A window for `len_bytes` at file offset `offset_bytes`: the first candidate (replica
    /// by replica) none of whose granules is held, now held; else `Copy`.
    #[inline]
    pub fn place(&mut self, offset_bytes: u64, len_bytes: u64) -> Placement {
        let first = offset_bytes % self.shape.period_bytes;
        let mut at = first;
        while at + len_bytes <= self.shape.len_bytes {
            if !self.tracked {
                return Placement::Window(at);
            }
            let (from, to) = granules(at, len_bytes);
            if (from..to).all(|g| self.held[(g / 64) as usize] & (1 << (g % 64)) == 0) {
                for g in from..to {
                    self.held[(g / 64) as usize] |= 1 << (g % 64);
                }
                return Placement::Window(at);
            }
            at += self.shape.period_bytes;
        }
        Placement::Copy
    }

    /// The window at `at` of `len_bytes` is no longer held (its write completed).
    #[inline]
    pub fn release(&mut self, at: u64, len_bytes: u64) {
        if self.tracked {
            let (from, to) = granules(at, len_bytes);
            for g in from..to {
                self.held[(g / 64) as usize] &= !(1 << (g % 64));
            }
        }
    }

    /// The bytes a `Copy` placement copies from: the base of a write at `offset_bytes`
    /// (first replica; its key bytes are rewritten after the copy).
    #[inline]
    pub fn copy_source(&self, offset_bytes: u64) -> u64 {
        offset_bytes % self.shape.period_bytes
    }
}

/// The granules `[from, to)` that bytes `[at, at + len)` touch.
#[inline(always)]
fn granules(at: u64, len_bytes: u64) -> (u64, u64) {
    (at / GRANULE_BYTES, (at + len_bytes.max(1)).div_ceil(GRANULE_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn shape(inline: bool, slots: u32, largest: u64, mixed: bool) -> AreaShape {
        AreaShape::of(Pattern::Unique, true, false, inline, slots, largest, mixed).unwrap()
    }

    #[test]
    fn shapes_follow_the_workload() {
        assert_eq!(AreaShape::of(Pattern::Random, true, false, true, 1, 4096, false), None);
        assert_eq!(AreaShape::of(Pattern::Unique, false, false, true, 1, 4096, false), None, "reads only");
        assert_eq!(AreaShape::of(Pattern::Unique, true, true, true, 1, 4096, false), None, "verified");
        // sync 4 KiB: one period, no tail, certain.
        assert_eq!(
            shape(true, 1, 4096, false),
            AreaShape { period_bytes: MIB, replicas: 1, len_bytes: MIB, guaranteed: true }
        );
        // sync 16 MiB: one period of the block.
        assert_eq!(shape(true, 1, 16 * MIB, false).len_bytes, 16 * MIB);
        // A queued 1 MiB QD 4 drawing ahead (8 slots): a period per slot, certain.
        let s = shape(false, 8, MIB, false);
        assert_eq!((s.replicas, s.len_bytes, s.guaranteed), (8, 8 * MIB, true));
        // 128 KiB QD 8 (16 slots): 8 periods, not certain (private buffers kept).
        let s = shape(false, 16, 128 << 10, false);
        assert_eq!((s.replicas, s.len_bytes, s.guaranteed), (8, 8 * MIB, false));
        // 4 KiB QD 1 drawing ahead (2 slots): two periods, certain.
        let s = shape(false, 2, 4096, false);
        assert_eq!((s.replicas, s.guaranteed), (2, true));
        // A size that does not tile the period, or a mix: a tail, never certain for a queue.
        let s = shape(false, 8, 3 << 12, false);
        assert_eq!(s.len_bytes, s.replicas * MIB + (12 << 10));
        assert!(!s.guaranteed);
        assert!(shape(true, 1, 3 << 12, false).guaranteed, "an inline engine holds nothing while placing");
        assert!(!shape(false, 8, MIB, true).guaranteed);
    }

    #[test]
    fn windows_start_at_the_offset_modulo_the_period_and_are_never_shared() {
        let mut area = DataArea::new(shape(false, 4, MIB, false), false);
        assert_eq!(area.place(0, MIB), Placement::Window(0));
        assert_eq!(area.place(5 * MIB, MIB), Placement::Window(MIB), "replica 0 is held");
        assert_eq!(area.place(2 * MIB, MIB), Placement::Window(2 * MIB));
        assert_eq!(area.place(7 * MIB, MIB), Placement::Window(3 * MIB));
        area.release(MIB, MIB);
        assert_eq!(area.place(9 * MIB, MIB), Placement::Window(MIB), "a released window is free again");
        // 4 slots, 4 replicas: the guarantee (each slot holds one).
        let mut small = DataArea::new(shape(false, 16, 64 << 10, false), false);
        let p = small.shape.period_bytes;
        let mut held = Vec::new();
        for i in 0..small.shape.replicas {
            match small.place(i * p + 8192, 4096) {
                Placement::Window(at) => {
                    assert_eq!(at % p, 8192);
                    held.push(at);
                }
                Placement::Copy => panic!("replica {i} should be free"),
            }
        }
        assert_eq!(small.place(8192, 4096), Placement::Copy, "every candidate held: copy");
        assert_eq!(small.place(12288, 4096), Placement::Window(12288), "another granule is free");
        assert_eq!(small.copy_source(3 * p + 8192), 8192);
    }

    #[test]
    fn unaligned_windows_use_the_tail_and_block_the_granules_they_touch() {
        let s = shape(false, 4, 12 << 10, false);
        let mut area = DataArea::new(s, false);
        let last = s.period_bytes - 4096;
        // A window from the last page of the period runs into the next replica (or the tail).
        assert_eq!(area.place(last, 12 << 10), Placement::Window(last));
        assert_eq!(area.place(0, 4096), Placement::Window(0));
        // Offset 0 again: replica 0's window is held, and replica 1's first granule is held
        // by the window that ran into it: the tail's.
        assert_eq!(s.replicas, 2);
        assert_eq!(area.place(s.period_bytes, 4096), Placement::Window(2 * s.period_bytes));
        assert_eq!(area.place(0, 4096), Placement::Copy);
        let mut inline = DataArea::new(shape(true, 1, 12 << 10, false), true);
        assert_eq!(inline.place(last, 12 << 10), Placement::Window(last), "the tail holds it");
        assert_eq!(inline.place(last, 12 << 10), Placement::Window(last), "nothing is held inline");
    }
}
