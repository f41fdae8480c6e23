//! A worker's block-size mix (`--bssplit`, `--block-align`): the size of each I/O, drawn
//! by the op type's split, and the figures kept per size (what people look for in a mix
//! is the latency of each size).
//!
//! Only a worker with a mix has one: without, the loop takes none of this. Per I/O it
//! allocates nothing: one draw, one table lookup, one record into the size's figures.

use crate::io::access::block_sizes::{BlockSizeMix, SizePicker};
use crate::io::engine::Op;
use crate::io::stats::OpStats;

/// One size's figures in one worker.
pub struct SizeStats {
    pub size_bytes: u64,
    pub read: OpStats,
    pub write: OpStats,
    /// Trims (`--trim-percent`; empty and tiny without).
    pub trim: OpStats,
}

pub(super) struct SizeMix {
    picker: SizePicker,
    pub(super) stats: Box<[SizeStats]>,
}

impl SizeMix {
    pub(super) fn new(mix: &BlockSizeMix, seed: u64, worker: u32, trimming: bool) -> Self {
        let stats = mix
            .sizes()
            .into_iter()
            .map(|size_bytes| SizeStats {
                size_bytes,
                read: OpStats::new(),
                write: OpStats::new(),
                trim: if trimming { OpStats::new() } else { OpStats::unused() },
            })
            .collect();
        Self { picker: SizePicker::new(mix, seed, worker), stats }
    }

    /// The next I/O's size for `op`: (index of the size, bytes, units of the alignment).
    #[inline(always)]
    pub(super) fn pick(&mut self, op: Op) -> (u8, u32, u64) {
        self.picker.pick(super::direction(op))
    }

    /// A completed I/O of size `index`.
    #[inline(always)]
    pub(super) fn record(&mut self, index: u8, op: Op, bytes: u64, lat_ns: u64) {
        let s = &mut self.stats[index as usize];
        match op {
            Op::Read => s.read.record(bytes, lat_ns),
            Op::Write => s.write.record(bytes, lat_ns),
            Op::Trim => s.trim.record(bytes, lat_ns),
            Op::Fsync | Op::Fdatasync => {}
        }
    }

    /// At the ramp's end: the window counts from zero.
    pub(super) fn reset(&mut self) {
        for s in self.stats.iter_mut() {
            s.read.reset();
            s.write.reset();
            s.trim.reset();
        }
    }
}
