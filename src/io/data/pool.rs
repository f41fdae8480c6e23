//! The pool unverified random writes are cut from: every 4 KiB chunk is a window of a
//! small random pool (a pure function of the seed) chosen by (seed, offset, sequence) and
//! xored with a 64-byte key from the same three, so a write costs a copy from a
//! cache-resident pool, not a generation.
//!
//! It fills buffers; which writes use it is the worker's choice.

use super::reduction::{CHUNK_BYTES, Reducibility, Reduction, duplicate_key};
use super::xorshift::fill_random;

/// Bytes of the pool (plus one chunk, so a window starting anywhere in it fits): small
/// enough to stay in a core's L2 cache, large enough that two chunks rarely share a window.
const POOL_BYTES: usize = 256 * 1024;

/// A block of random bytes, a pure function of the seed, that unverified random writes
/// are cut from (see the module header). Allocated once per worker at set-up.
pub struct RandomPool {
    seed: u64,
    bytes: Box<[u8]>,
    /// Which chunks are duplicates, how much of each is random (`--dedupe-ratio`,
    /// `--compress-ratio`).
    reduction: Reduction,
}

impl RandomPool {
    /// Bytes a pool holds (what the memory plan counts per worker).
    pub const BYTES: usize = POOL_BYTES + CHUNK_BYTES;

    pub fn new(seed: u64) -> Self {
        Self::reducible(seed, Reducibility::default())
    }

    /// A pool whose chunks dedupe and compress by the ratios asked (each at least 1).
    /// Which chunks are duplicates depends on (seed, chunk offset) only, so every pass
    /// over a file repeats the same ones; the zeros are the tail of each chunk.
    pub fn reducible(seed: u64, r: Reducibility) -> Self {
        let mut bytes = vec![0u8; Self::BYTES].into_boxed_slice();
        fill_random(&mut bytes, seed ^ 0x706F_6F6C_706F_6F6C, 0, 0);
        Self { seed, bytes, reduction: Reduction::new(r) }
    }

    /// Fills `buf`, the bytes at file offset `offset_bytes` written by write `sequence`:
    /// each 4 KiB chunk (by its position in the buffer) is a 64-byte aligned window of the
    /// pool xored with a 64-byte key, both drawn from (seed, chunk offset, sequence).
    /// Every chunk is unique (the key is 512 bits of a 64-bit hash: two chunks agree only
    /// if the hashes do) and as incompressible as the pool, unless the pool was made
    /// `reducible`: then duplicate chunks take one of `DUPLICATE_SET` contents and each
    /// chunk ends in zeros. Costs a copy of the buffer from a cache-resident pool.
    /// Returns how many of the buffer's chunks are duplicates.
    #[inline]
    pub fn fill(&self, buf: &mut [u8], offset_bytes: u64, sequence: u64) -> u32 {
        let seq_mix = sequence.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let mut duplicates = 0;
        for (i, chunk) in buf.chunks_mut(CHUNK_BYTES).enumerate() {
            let chunk_offset = offset_bytes.wrapping_add((i * CHUNK_BYTES) as u64);
            let (place, duplicate) = self.reduction.duplicate_of(self.seed, chunk_offset);
            let mut state = match duplicate {
                // A duplicate: one of a few contents, whatever the offset and the write.
                Some(k) => {
                    duplicates += 1;
                    duplicate_key(self.seed, k)
                }
                None => place ^ seq_mix,
            };
            let mut key = [0u8; 64];
            for k in key.chunks_exact_mut(8) {
                k.copy_from_slice(&crate::base::primitives::rng::splitmix64(&mut state).to_le_bytes());
            }
            let window = (crate::base::primitives::rng::splitmix64(&mut state) as usize % (POOL_BYTES / 64)) * 64;
            let random_len = self.reduction.random_len(chunk.len());
            let (random, zeros) = chunk.split_at_mut(random_len);
            xor_into(random, &self.bytes[window..window + random_len], &key);
            zeros.fill(0);
        }
        duplicates
    }
}

/// `dst = src ^ key` (key repeated every 64 bytes), in 64-byte steps the compiler vectorises.
#[inline(always)]
fn xor_into(dst: &mut [u8], src: &[u8], key: &[u8; 64]) {
    let mut d = dst.chunks_exact_mut(64);
    let mut s = src.chunks_exact(64);
    for (d64, s64) in (&mut d).zip(&mut s) {
        for j in 0..64 {
            d64[j] = s64[j] ^ key[j];
        }
    }
    for ((d, s), k) in d.into_remainder().iter_mut().zip(s.remainder()).zip(key) {
        *d = s ^ k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_data_depends_only_on_seed_offset_sequence_and_length() {
        let (a, b) = (RandomPool::new(3), RandomPool::new(3));
        let mut x = vec![0u8; 3 * CHUNK_BYTES + 100];
        let mut y = vec![0xaau8; 3 * CHUNK_BYTES + 100];
        a.fill(&mut x, 1 << 20, 9);
        b.fill(&mut y, 1 << 20, 9);
        assert_eq!(x, y, "two pools of one seed, same write: same bytes, whatever the buffer held");
        // Each input changes every chunk (nearly every byte).
        for (pool, off, seq) in [
            (RandomPool::new(4), 1 << 20, 9),
            (RandomPool::new(3), (1 << 20) + 4096, 9),
            (RandomPool::new(3), 1 << 20, 10),
        ] {
            pool.fill(&mut y, off, seq);
            for c in 0..3 {
                let r = c * CHUNK_BYTES..(c + 1) * CHUNK_BYTES;
                let same = x[r.clone()].iter().zip(&y[r]).filter(|(p, q)| p == q).count();
                assert!(same < 64, "({off},{seq}) chunk {c} shares {same} bytes");
            }
        }
        // A chunk is a function of its own file offset: a longer write at the same offset
        // starts with the same chunks.
        let mut z = vec![0u8; CHUNK_BYTES];
        a.fill(&mut z, (1 << 20) + CHUNK_BYTES as u64, 9);
        let mut w = vec![0u8; 2 * CHUNK_BYTES];
        a.fill(&mut w, 1 << 20, 9);
        assert_eq!(&w[CHUNK_BYTES..], &z[..]);
    }

    #[test]
    fn pool_chunks_are_distinct_and_do_not_compress() {
        use std::io::Write;
        let pool = RandomPool::new(42);
        let mut all = vec![0u8; 4 << 20];
        for (i, block) in all.chunks_mut(128 << 10).enumerate() {
            pool.fill(block, (i as u64) * (128 << 10), i as u64 + 1);
        }
        let mut seen = std::collections::HashSet::new();
        for (i, chunk) in all.chunks(CHUNK_BYTES).enumerate() {
            assert!(seen.insert(chunk), "chunk {i} repeats an earlier one");
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&all).unwrap();
        let compressed = z.finish().unwrap().len();
        assert!(compressed as f64 > all.len() as f64 * 0.99, "4 MiB compressed to {compressed} bytes");
    }
}
