//! What written blocks contain.
//!
//! Layout fills files with random bytes, each 4 KiB stamped with its offset,
//! so no two blocks are alike (nothing for a deduplicating or compressing
//! device to exploit). During a run each write stamps the first 16 bytes of
//! its slot with the offset and a per-worker sequence number, so every block
//! written differs from every other and from what layout left there.

use crate::rng::Rng;

/// Bytes of the per-write stamp at the start of a block.
pub const STAMP_BYTES: usize = 16;

/// Fills a buffer with fresh random bytes (layout and slot set-up).
pub fn fill_random(buf: &mut [u8], rng: &mut Rng) {
    rng.fill_bytes(buf);
}

/// Stamps every 4 KiB of a layout chunk that starts at `offset_bytes` with its own offset.
pub fn stamp_layout_chunk(buf: &mut [u8], offset_bytes: u64) {
    for (i, block) in buf.chunks_mut(4096).enumerate() {
        let n = block.len().min(8);
        block[..n].copy_from_slice(&(offset_bytes + (i as u64) * 4096).to_le_bytes()[..n]);
    }
}

/// Stamps a block about to be written with its offset and the writer's sequence number.
#[inline(always)]
pub fn stamp_write(buf: &mut [u8], offset_bytes: u64, sequence: u64) {
    if buf.len() >= STAMP_BYTES {
        buf[..8].copy_from_slice(&offset_bytes.to_le_bytes());
        buf[8..16].copy_from_slice(&sequence.to_le_bytes());
    }
}
