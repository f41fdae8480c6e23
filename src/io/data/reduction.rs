//! `--dedupe-ratio` and `--compress-ratio`: which 4 KiB chunks (or, verified, which
//! blocks) are duplicates and how many bytes of each chunk are random, by one rule for the
//! pool (unverified writes) and for verification's stamping.
//!
//! It decides and counts; it never fills a buffer.

use serde::{Deserialize, Serialize};

/// Granularity at which written data is unique: every 4 KiB chunk of a write differs
/// from every other chunk written (a deduplicating array works at 4 KiB or coarser).
pub const CHUNK_BYTES: usize = 4096;

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
        let draw = crate::base::primitives::rng::splitmix64(&mut place);
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
