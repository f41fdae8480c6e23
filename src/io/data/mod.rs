//! What written blocks contain: the write patterns (`--write-pattern`), one generator
//! per file.
//!
//! - `xorshift`: fresh pseudo-random bytes, a pure function of (seed, offset, sequence)
//!   (verified writes' payloads, and the pool itself);
//! - `pool`: unverified random writes cut from a small cache-resident pool, each 4 KiB
//!   chunk a window of it xored with a key from (seed, offset, sequence): a copy, not a
//!   generation;
//! - `unique`: the default: a random base indexed by the file offset modulo a period of at
//!   least 1 MiB, with a fresh key at the start of every 512-byte sector (writers submit
//!   straight from a window of the base held in memory and rewrite only the keys);
//! - `keyed`: a random base per buffer position with a fresh key in each 4 KiB chunk (kept
//!   on request; records of several writes compress);
//! - `reduction`: `--dedupe-ratio` and `--compress-ratio`, shared by the pool and by
//!   verification's stamping.
//!
//! Every pattern is a pure function of (seed, offset, sequence, settings): a later reader
//! that knows them regenerates what was written. The leaves never import this file; it
//! dispatches to them. This module fills buffers; it never decides what to verify
//! (see `verify`) nor which pattern a run uses (`cli.rs`).

pub mod keyed;
mod pool;
mod reduction;
pub mod unique;
pub mod verify;
mod xorshift;

pub use pool::RandomPool;
pub use reduction::{CHUNK_BYTES, Reducibility, Reduction, dedupe_ratio_produced, duplicate_key};
pub use xorshift::fill_random;

use serde::{Deserialize, Serialize};

/// Contents of written blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// the default: every 512-byte sector unique and no record from 4 KiB to 1 MiB
    /// compressible, at fio's cost (a random base indexed by offset, a fresh key per sector)
    Unique,
    /// fresh pseudo-random bytes for every write, from (seed, offset, sequence)
    Random,
    /// all bytes 0x00
    Zeros,
    /// all bytes 0xff
    Ones,
    /// incrementing bytes: byte i of the file is (i mod 256)
    Sequential,
    /// a random base per buffer position with a fresh key in every 4 KiB chunk: each 4 KiB
    /// unique, but 512-byte sectors repeat across writes and records of several writes
    /// compress (23x in 128 KiB records of 4 KiB writes)
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
            Pattern::Unique => "unique",
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
            Pattern::Unique => 6,
        }
    }

    /// The pattern of `id` (as `id` gives it), if any.
    pub fn from_id(id: u32) -> Option<Pattern> {
        [Pattern::Random, Pattern::Zeros, Pattern::Ones, Pattern::Sequential, Pattern::Keyed, Pattern::Unique]
            .into_iter()
            .find(|p| p.id() == id)
    }

    /// Whether the content depends on the offset or sequence (so must be written per I/O).
    pub fn varies_per_write(self) -> bool {
        matches!(self, Pattern::Random | Pattern::Sequential | Pattern::Keyed | Pattern::Unique)
    }

    /// What storage that deduplicates or compresses can make of this data, as measured
    /// (docs/usage.md, "Write data and ratios"); `ratios`: --dedupe-ratio or
    /// --compress-ratio shaped it.
    pub fn reducibility(self, ratios: bool) -> ReducibilityClass {
        match self {
            _ if ratios => ReducibilityClass::AsAsked,
            Pattern::Unique | Pattern::Random => ReducibilityClass::Irreducible,
            Pattern::Keyed => ReducibilityClass::RecordsCompress,
            Pattern::Zeros | Pattern::Ones | Pattern::Sequential => ReducibilityClass::FullyReducible,
        }
    }
}

/// What a deduplicating or compressing store can make of written data (the result's
/// `write_data.reducibility`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReducibilityClass {
    /// Every 512-byte sector unique, no record from 4 KiB to 1 MiB compresses (unique,
    /// random).
    Irreducible,
    /// Reduced by the ratios asked (--dedupe-ratio, --compress-ratio), by construction.
    AsAsked,
    /// Every 4 KiB chunk unique and incompressible alone, but 512-byte sectors repeat
    /// across writes and records holding several writes compress (keyed).
    RecordsCompress,
    /// Constant or periodic bytes: dedupes and compresses to almost nothing (zeros, ones,
    /// sequential).
    FullyReducible,
}

/// Fills `buf`, the bytes at file offset `offset_bytes` of write `sequence`, with
/// `pattern`. `period_bytes`: the period of `unique` data (`unique::period_bytes` of the
/// run's largest write); the other patterns have none.
#[inline]
pub fn fill(buf: &mut [u8], pattern: Pattern, seed: u64, offset_bytes: u64, sequence: u64, period_bytes: u64) {
    match pattern {
        Pattern::Unique => unique::fill(buf, seed, period_bytes, offset_bytes, sequence),
        Pattern::Random => fill_random(buf, seed, offset_bytes, sequence),
        Pattern::Keyed => keyed::fill(buf, seed, offset_bytes, sequence),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_lengths_and_fixed_patterns() {
        let mut b = vec![0u8; 1000];
        let p = unique::MIN_PERIOD_BYTES;
        fill(&mut b, Pattern::Random, 1, 0, 0, p);
        assert!(b[990..].iter().any(|&x| x != 0));
        fill(&mut b, Pattern::Unique, 1, 0, 0, p);
        assert!(b[990..].iter().any(|&x| x != 0));
        fill(&mut b, Pattern::Ones, 1, 0, 0, p);
        assert!(b.iter().all(|&x| x == 0xff));
        fill(&mut b, Pattern::Sequential, 1, 510, 0, p);
        assert_eq!((b[0], b[1], b[2]), (254, 255, 0));
        assert!(b.iter().enumerate().all(|(i, &x)| x == ((510 + i) % 256) as u8), "byte i is (offset + i) mod 256");
    }
}
