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
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Zeros => "zeros",
            Pattern::Ones => "ones",
            Pattern::Sequential => "sequential",
        }
    }

    /// A number for the verify header.
    pub fn id(self) -> u32 {
        match self {
            Pattern::Random => 1,
            Pattern::Zeros => 2,
            Pattern::Ones => 3,
            Pattern::Sequential => 4,
        }
    }

    /// Whether the content depends on the offset or sequence (so must be written per I/O).
    pub fn varies_per_write(self) -> bool {
        matches!(self, Pattern::Random | Pattern::Sequential)
    }
}

/// Fills `buf`, the bytes at file offset `offset_bytes`, with `pattern`.
#[inline]
pub fn fill(buf: &mut [u8], pattern: Pattern, seed: u64, offset_bytes: u64, sequence: u64) {
    match pattern {
        Pattern::Random => fill_random(buf, seed, offset_bytes, sequence),
        Pattern::Zeros => buf.fill(0),
        Pattern::Ones => buf.fill(0xff),
        Pattern::Sequential => {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = (offset_bytes.wrapping_add(i as u64)) as u8;
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
    fn odd_lengths_and_fixed_patterns() {
        let mut b = vec![0u8; 1000];
        fill(&mut b, Pattern::Random, 1, 0, 0);
        assert!(b[990..].iter().any(|&x| x != 0));
        fill(&mut b, Pattern::Ones, 1, 0, 0);
        assert!(b.iter().all(|&x| x == 0xff));
        fill(&mut b, Pattern::Sequential, 1, 510, 0);
        assert_eq!((b[0], b[1], b[2]), (254, 255, 0));
    }
}
