//! What written blocks contain: the write patterns (`--write-pattern`) and
//! the fast generator behind the random one.
//!
//! Random data is a pure function of (seed, offset, sequence): every write
//! gets fresh content (nothing for a deduplicating or compressing device to
//! exploit), yet any later reader that knows the three can regenerate it.
//! The generator runs eight independent xorshift64 lanes stepped together,
//! which the compiler turns into vector shifts and xors: well above 8 GiB/s per core
//! (benches/hot_path.rs measures it). It is not cryptographic.
//!
//! Unverified random writes use `RandomPool` instead, which is cheaper still: every
//! 4 KiB chunk is a window of a small random pool (a pure function of the seed) chosen
//! by (seed, offset, sequence) and xored with a 64-byte key from the same three, so it
//! costs a copy, not a generation (well above 20 GiB/s per core; same bench).
//!
//! This module fills buffers; it never decides what to verify (see `verify`).

use serde::{Deserialize, Serialize};

/// Contents of written blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// fresh pseudo-random bytes for every write, from (seed, offset, sequence)
    Random,
    /// all bytes 0x00
    Zeros,
    /// all bytes 0xff
    Ones,
    /// incrementing bytes: byte i of the file is (i mod 256)
    Sequential,
    /// a random base with a fresh key in every 4 KiB chunk: each 4 KiB unique and
    /// incompressible for a fraction of random's cost (the default of sync and mmap)
    Keyed,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Zeros => "zeros",
            Pattern::Ones => "ones",
            Pattern::Sequential => "sequential",
            Pattern::Keyed => "keyed",
        }
    }

    /// A number for the verify header.
    pub fn id(self) -> u32 {
        match self {
            Pattern::Random => 1,
            Pattern::Zeros => 2,
            Pattern::Ones => 3,
            Pattern::Sequential => 4,
            Pattern::Keyed => 5,
        }
    }

    /// Whether the content depends on the offset or sequence (so must be written per I/O).
    pub fn varies_per_write(self) -> bool {
        matches!(self, Pattern::Random | Pattern::Sequential | Pattern::Keyed)
    }
}

/// Fills `buf`, the bytes at file offset `offset_bytes`, with `pattern`.
#[inline]
pub fn fill(buf: &mut [u8], pattern: Pattern, seed: u64, offset_bytes: u64, sequence: u64) {
    match pattern {
        Pattern::Random => fill_random(buf, seed, offset_bytes, sequence),
        Pattern::Keyed => crate::keyed_data::fill(buf, seed, offset_bytes, sequence),
        Pattern::Zeros => buf.fill(0),
        Pattern::Ones => buf.fill(0xff),
        Pattern::Sequential => {
            // Byte i is (offset + i) mod 256: every 256 bytes repeat, so copy one period
            // (a copy runs at memory speed; a byte loop did not reach 4 GiB/s).
            let first = offset_bytes as u8;
            let mut period = [0u8; 256];
            for (j, b) in period.iter_mut().enumerate() {
                *b = first.wrapping_add(j as u8);
            }
            for chunk in buf.chunks_mut(256) {
                chunk.copy_from_slice(&period[..chunk.len()]);
            }
        }
    }
}

/// Pseudo-random bytes, a pure function of (seed, offset, sequence): eight
/// independent xorshift64 lanes, seeded through splitmix64, stepped together so
/// that the compiler turns each step into vector shifts and xors. Good enough
/// that no compressor or deduplicator finds structure; not for statistics.
#[inline]
pub fn fill_random(buf: &mut [u8], seed: u64, offset_bytes: u64, sequence: u64) {
    let mut key =
        seed ^ offset_bytes.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ sequence.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let mut lanes = [0u64; 8];
    for lane in &mut lanes {
        *lane = crate::rng::splitmix64(&mut key) | 1; // xorshift needs a non-zero state
    }
    #[inline(always)]
    fn step(x: &mut [u64; 8]) {
        for v in x.iter_mut() {
            *v ^= *v << 13;
        }
        for v in x.iter_mut() {
            *v ^= *v >> 7;
        }
        for v in x.iter_mut() {
            *v ^= *v << 17;
        }
    }
    let mut chunks = buf.chunks_exact_mut(64);
    for chunk in &mut chunks {
        step(&mut lanes);
        for (dst, w) in chunk.chunks_exact_mut(8).zip(lanes) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        step(&mut lanes);
        let mut tail = [0u8; 64];
        for (dst, w) in tail.chunks_exact_mut(8).zip(lanes) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
        let n = rest.len();
        rest.copy_from_slice(&tail[..n]);
    }
}

/// Granularity at which written data is unique: every 4 KiB chunk of a write differs
/// from every other chunk written (a deduplicating array works at 4 KiB or coarser).
pub const CHUNK_BYTES: usize = 4096;

/// Bytes of the pool (plus one chunk, so a window starting anywhere in it fits): small
/// enough to stay in a core's L2 cache, large enough that two chunks rarely share a window.
const POOL_BYTES: usize = 256 * 1024;

/// Distinct contents the duplicate chunks of `--dedupe-ratio` are drawn from: few, so
/// that a file's distinct chunks are its unique ones plus at most these (64 MiB at
/// ratio 3: 5461 unique chunks, 16 more distinct, 2.99).
const DUPLICATE_SET: u64 = 16;

/// `--dedupe-ratio` and `--compress-ratio`: how random write data may be reduced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reducibility {
    /// Chunks written to distinct chunks (4 KiB granularity); `None`: every chunk unique.
    pub dedupe_ratio: Option<f64>,
    /// Bytes before to bytes after a standard compressor; `None`: incompressible.
    pub compress_ratio: Option<f64>,
}

impl Reducibility {
    pub fn is_none(&self) -> bool {
        self.dedupe_ratio.is_none() && self.compress_ratio.is_none()
    }
}

/// `Reducibility` as the generators apply it: which chunks (or, verified, which blocks)
/// are duplicates, and how many bytes of each 4 KiB chunk are random (the rest zeros).
/// The pool (unverified writes) and `verify` (verified ones) share it, so both reduce
/// by the same rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// A unit is a duplicate when the draw from (seed, offset) exceeds this (u64::MAX: never).
    unique_below: u64,
    /// Random bytes at the start of each full chunk; the rest are zeros.
    pub random_bytes_per_chunk: usize,
}

impl Default for Reduction {
    fn default() -> Self {
        Self::NONE
    }
}

impl Reduction {
    /// Every unit unique, every byte random.
    pub const NONE: Reduction = Reduction { unique_below: u64::MAX, random_bytes_per_chunk: CHUNK_BYTES };

    pub fn new(r: Reducibility) -> Self {
        let unique_below = match r.dedupe_ratio {
            Some(ratio) if ratio > 1.0 => (u64::MAX as f64 / ratio) as u64,
            _ => u64::MAX,
        };
        let random_bytes_per_chunk = match r.compress_ratio {
            Some(ratio) if ratio > 1.0 => ((CHUNK_BYTES as f64 / ratio).round() as usize).clamp(1, CHUNK_BYTES),
            _ => CHUNK_BYTES,
        };
        Self { unique_below, random_bytes_per_chunk }
    }

    pub fn is_none(&self) -> bool {
        *self == Self::NONE
    }

    /// The generator state of the unit (chunk or block) at `offset_bytes`, and which of
    /// the `DUPLICATE_SET` contents it takes when it is a duplicate (`None`: unique).
    /// Depends on (seed, offset) only, so every pass over a file repeats the same
    /// duplicates. Which units are duplicates follows a Weyl sequence over the 4 KiB
    /// chunk index (multiples of the golden ratio, shifted by the seed): any run of
    /// consecutive units holds the asked share of unique ones to within a few units,
    /// where independent draws would wander by the square root of their number.
    #[inline]
    pub fn duplicate_of(&self, seed: u64, offset_bytes: u64) -> (u64, Option<u64>) {
        let mut place = seed ^ offset_bytes.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let draw = crate::rng::splitmix64(&mut place);
        if self.unique_below == u64::MAX {
            return (place, None);
        }
        let weyl = (offset_bytes / CHUNK_BYTES as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(seed.wrapping_mul(0xBF58_476D_1CE4_E5B9));
        (place, (weyl > self.unique_below).then_some(draw % DUPLICATE_SET))
    }

    /// How many of a chunk's `chunk_len` bytes are random (the rest are zeros).
    #[inline]
    pub fn random_len(&self, chunk_len: usize) -> usize {
        if self.random_bytes_per_chunk == CHUNK_BYTES {
            chunk_len
        } else {
            (chunk_len * self.random_bytes_per_chunk).div_ceil(CHUNK_BYTES)
        }
    }

    /// The compression ratio by construction: bytes of a chunk to its random bytes.
    pub fn compress_ratio_produced(&self) -> f64 {
        CHUNK_BYTES as f64 / self.random_bytes_per_chunk as f64
    }
}

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
                k.copy_from_slice(&crate::rng::splitmix64(&mut state).to_le_bytes());
            }
            let window = (crate::rng::splitmix64(&mut state) as usize % (POOL_BYTES / 64)) * 64;
            let random_len = self.reduction.random_len(chunk.len());
            let (random, zeros) = chunk.split_at_mut(random_len);
            xor_into(random, &self.bytes[window..window + random_len], &key);
            zeros.fill(0);
        }
        duplicates
    }
}

/// Chunks written per distinct chunk among them, for `chunks` written of which
/// `duplicate_chunks` were duplicates: each unique chunk is distinct (its key includes the
/// write's sequence), and the duplicates take at most `DUPLICATE_SET` contents per chunk
/// of their unit (`unit_chunks`: 1 for 4 KiB chunks, a block's chunks for verified blocks).
pub fn dedupe_ratio_produced(chunks: u64, duplicate_chunks: u64, unit_chunks: u64) -> f64 {
    let distinct = chunks - duplicate_chunks.min(chunks) + duplicate_chunks.min(DUPLICATE_SET * unit_chunks.max(1));
    if distinct == 0 { 1.0 } else { chunks as f64 / distinct as f64 }
}

/// The generator key of duplicate content `k` (one of `DUPLICATE_SET`): the same for
/// every offset and write.
#[inline]
pub fn duplicate_key(seed: u64, k: u64) -> u64 {
    seed ^ 0x6475_7065_6475_7065 ^ k.wrapping_mul(0xD6E8_FEB8_6659_FD93)
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
    fn random_is_a_pure_function_of_seed_offset_and_sequence() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill_random(&mut a, 1, 4096, 7);
        fill_random(&mut b, 1, 4096, 7);
        assert_eq!(a, b);
        for (seed, off, seq) in [(2, 4096, 7), (1, 8192, 7), (1, 4096, 8)] {
            fill_random(&mut b, seed, off, seq);
            let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
            assert!(same < 64, "({seed},{off},{seq}) shares {same} bytes");
        }
    }

    #[test]
    fn random_blocks_are_all_distinct_and_do_not_compress() {
        use std::io::Write;
        let mut all = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for i in 0..256u64 {
            let mut block = vec![0u8; 4096];
            fill_random(&mut block, 42, i * 4096, 1);
            assert!(seen.insert(block.clone()), "block {i} repeats an earlier one");
            all.extend_from_slice(&block);
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&all).unwrap();
        let compressed = z.finish().unwrap().len();
        assert!(compressed as f64 > all.len() as f64 * 0.99, "1 MiB compressed to {compressed} bytes");
    }

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

    #[test]
    fn odd_lengths_and_fixed_patterns() {
        let mut b = vec![0u8; 1000];
        fill(&mut b, Pattern::Random, 1, 0, 0);
        assert!(b[990..].iter().any(|&x| x != 0));
        fill(&mut b, Pattern::Ones, 1, 0, 0);
        assert!(b.iter().all(|&x| x == 0xff));
        fill(&mut b, Pattern::Sequential, 1, 510, 0);
        assert_eq!((b[0], b[1], b[2]), (254, 255, 0));
        assert!(b.iter().enumerate().all(|(i, &x)| x == ((510 + i) % 256) as u8), "byte i is (offset + i) mod 256");
    }
}
