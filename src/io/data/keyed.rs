//! The `keyed` write pattern, kept on request (`--write-pattern keyed`; it was sync and
//! mmap's default before `unique`): every 4 KiB chunk unique and incompressible alone,
//! but reducible by storage that dedupes at 512 bytes or compresses records of several
//! writes (4 KiB writes: 87.5 % of the sectors duplicates, 23x in 128 KiB records).
//!
//! A buffer holds a random *base* that depends only on the seed and the position in the
//! buffer, written once at set-up; each write then rewrites the first `KEY_BYTES` of
//! every 4 KiB chunk with a key drawn from (seed, the chunk's file offset, the write's
//! sequence). One cache line in 64 is touched per write, instead of every byte: the cost
//! is the cache misses of those lines (measured: a line per 512 bytes cost a 16 MiB
//! write 250-400 µs, as much as fio's scrambling; a line per 4 KiB costs an eighth of
//! that). Every chunk of every write differs from every other (the keys are distinct),
//! so no 4 KiB chunk dedupes, and the base is random, so none compresses. What an array
//! that dedupes at 512 bytes could still find: two writes of one buffer position share
//! their bytes outside the keys, so a record holding several writes compresses. `unique`
//! (the default) avoids that at about the same cost: its base is indexed by the file
//! offset, not by the position in a buffer.
//!
//! This module fills buffers; it never decides which pattern a run uses (`cli.rs` does).

use super::reduction::CHUNK_BYTES;

/// Fresh bytes at the start of each chunk.
pub const KEY_BYTES: usize = 16;

/// Mixed into the seed for the base, so that the base is not the `random` pattern's
/// stream at offset 0.
const BASE_SALT: u64 = 0x6B65_7965_645F_6261;

/// Writes the base into `buf`: byte `i` depends only on the seed and `i` (a longer buffer
/// extends a shorter one), so any buffer written once keeps it at every position.
pub fn fill_base(buf: &mut [u8], seed: u64) {
    super::xorshift::fill_random(buf, seed ^ BASE_SALT, 0, 0);
}

/// Rewrites the key of every chunk of `buf` (the bytes at file offset `offset_bytes`,
/// written by write `sequence`). `buf` must hold the base (`fill_base`) outside the keys.
#[inline]
pub fn key_chunks(buf: &mut [u8], seed: u64, offset_bytes: u64, sequence: u64) {
    // One mix per write, then a bijective step per chunk: within a write no two chunks
    // share a key, and two writes agree only if their 64-bit mixes do.
    let mut write_mix = seed ^ sequence.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let write_mix = crate::base::primitives::rng::splitmix64(&mut write_mix);
    for (i, chunk) in buf.chunks_mut(CHUNK_BYTES).enumerate() {
        let mut state = write_mix ^ offset_bytes.wrapping_add((i * CHUNK_BYTES) as u64);
        let key = [
            crate::base::primitives::rng::splitmix64(&mut state),
            crate::base::primitives::rng::splitmix64(&mut state),
        ];
        let mut bytes = [0u8; KEY_BYTES];
        bytes[..8].copy_from_slice(&key[0].to_le_bytes());
        bytes[8..].copy_from_slice(&key[1].to_le_bytes());
        // A whole key is a fixed-size store (no call to memcpy); a tail shorter than a key
        // takes what fits.
        match chunk.first_chunk_mut::<KEY_BYTES>() {
            Some(head) => *head = bytes,
            None => {
                let n = chunk.len();
                chunk.copy_from_slice(&bytes[..n]);
            }
        }
    }
}

/// The whole content of a keyed write: the base, then the keys (what `key_chunks` makes
/// of a buffer that already holds the base).
pub fn fill(buf: &mut [u8], seed: u64, offset_bytes: u64, sequence: u64) {
    fill_base(buf, seed);
    key_chunks(buf, seed, offset_bytes, sequence);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keying_in_place_gives_the_whole_content_whatever_was_keyed_before() {
        let mut slot = vec![0u8; 64 * 1024];
        fill(&mut slot, 9, 0, 1);
        for (offset, seq) in [(1 << 20, 2u64), (0, 3), (5 << 20, 4)] {
            key_chunks(&mut slot, 9, offset, seq);
            let mut whole = vec![0u8; slot.len()];
            fill(&mut whole, 9, offset, seq);
            assert!(slot == whole, "offset {offset} sequence {seq}");
        }
    }

    #[test]
    fn a_pure_function_of_seed_offset_sequence_and_position() {
        let make = |seed, off, seq| {
            let mut b = vec![0u8; 8192];
            fill(&mut b, seed, off, seq);
            b
        };
        assert_eq!(make(1, 4096, 7), make(1, 4096, 7));
        for other in [make(2, 4096, 7), make(1, 8192, 7), make(1, 4096, 8)] {
            assert_ne!(make(1, 4096, 7), other);
        }
        // A shorter buffer is the start of a longer one (a smaller block of a mix).
        let (mut short, mut long) = (vec![0u8; 4096], vec![0u8; 8192]);
        fill(&mut short, 3, 0, 1);
        fill(&mut long, 3, 0, 1);
        assert_eq!(short[..], long[..4096]);
    }

    #[test]
    fn every_chunk_of_many_writes_is_distinct() {
        // 64 writes of one 64 KiB buffer at 8 offsets: 1024 chunks, all different.
        let mut buf = vec![0u8; 64 * 1024];
        fill_base(&mut buf, 5);
        let mut seen = HashSet::new();
        for seq in 0..8u64 {
            for block in 0..8u64 {
                key_chunks(&mut buf, 5, block * 65536, seq * 8 + block);
                for s in buf.chunks(CHUNK_BYTES) {
                    assert!(seen.insert(s.to_vec()), "a repeated chunk");
                }
            }
        }
        assert_eq!(seen.len(), 64 * 16);
    }

    #[test]
    fn odd_lengths_key_what_there_is() {
        let mut b = vec![0u8; 4096 + 700];
        fill(&mut b, 1, 0, 0);
        let mut c = vec![0u8; 4096 + 700];
        fill_base(&mut c, 1);
        assert_ne!(b[..16], c[..16]);
        assert_eq!(b[16..4096], c[16..4096]);
        assert_ne!(b[4096..4112], c[4096..4112]);
        assert_eq!(b[4112..], c[4112..]);
        let mut tiny = vec![0u8; 5];
        fill(&mut tiny, 1, 0, 0); // shorter than a key: no panic
    }
}
