//! Verification: every block written with `--verify` carries a header
//! (magic, offset, block size, pattern, seed, write sequence, crc32c of the
//! block) followed by pattern data that is a pure function of (seed, offset,
//! sequence). Any later run with the same seed and block size can check any
//! block, in any order.
//!
//! A check is a crc32c of the block and a comparison of the header fields;
//! only when they disagree is the expected block regenerated, to classify the
//! failure and show where it differs:
//! - never written: all zeros (a hole), or no iopulse header (stale data);
//! - another run: a valid header with another seed or block size;
//! - misplaced: a valid block written for another offset (misdirected write,
//!   swapped blocks);
//! - torn: the first sector matches the header's write but every sector from
//!   some boundary to the end differs (part of the block from another write);
//! - corrupted: anything else that fails the checksum (flipped bytes);
//! - lost write: a valid block, but not the one this run last wrote there.
//!
//! With `--dedupe-ratio`, a block whose draw from (seed, offset) makes it a duplicate
//! holds one of a few duplicate contents, the same bytes wherever it is written: its
//! header names the content (`duplicate_marker`) instead of an offset and carries no
//! sequence. Such a block is checked for being the duplicate its offset should hold
//! (crc, seed, marker): corruption, zeros and another run's blocks are caught; a lost
//! write or a swap with another block of the same content cannot be, by design. With
//! `--compress-ratio` every 4 KiB chunk ends in zeros (after the header in the first),
//! covered by the crc like the rest. Writer and checker apply one `data::Reduction`.
//!
//! Nothing here allocates or formats; reports are plain data.

use crate::io::data::{self, CHUNK_BYTES, Pattern, Reduction};
use serde::{Deserialize, Serialize};

/// Bytes of the header at the start of each verified block.
pub const HEADER_BYTES: usize = 48;
/// "IOPULSE" and a format version.
const MAGIC: [u8; 8] = *b"IOPULSE\x01";
/// Sector size used to tell torn blocks from corrupted ones.
const SECTOR_BYTES: usize = 512;

const OFFSET_AT: usize = 8;
const BLOCK_SIZE_AT: usize = 16;
const PATTERN_AT: usize = 20;
const SEED_AT: usize = 24;
const SEQUENCE_AT: usize = 32;
const CRC_AT: usize = 40;

/// What a block should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub seed: u64,
    pub offset_bytes: u64,
    pub pattern: Pattern,
    /// The sequence this run last wrote to the block, when it wrote it.
    pub sequence: Option<u64>,
    /// How the writer reduced its blocks (`--dedupe-ratio`, `--compress-ratio`).
    pub reduction: Reduction,
}

/// The header's offset field of duplicate content `k` (`--dedupe-ratio`): not an offset,
/// so that every block of that content is the same, byte for byte.
pub const fn duplicate_marker(k: u64) -> u64 {
    u64::MAX - k
}

/// What the header of the block at `offset_bytes` names: its offset, or the duplicate
/// content the reduction puts there.
#[inline]
fn written_for(reduction: &Reduction, seed: u64, offset_bytes: u64) -> (u64, bool) {
    if reduction.is_none() {
        return (offset_bytes, false);
    }
    match reduction.duplicate_of(seed, offset_bytes).1 {
        Some(k) => (duplicate_marker(k), true),
        None => (offset_bytes, false),
    }
}

/// How a block failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Failure {
    /// All zeros: a hole or a zeroed block.
    NeverWrittenZeros,
    /// No iopulse header: data that was never written by a verifying run.
    NeverWrittenStale,
    /// A valid header from a run with another seed or block size.
    OtherRun { seed: u64, block_size_bytes: u32 },
    /// A valid block written for another offset.
    Misplaced { written_for_offset: u64 },
    /// Sectors from `first_bad_byte` to the end come from another write.
    Torn { first_bad_byte: u32 },
    /// Bytes differ from what the header's write put there.
    Corrupted { first_bad_byte: u32 },
    /// A valid block, but an older (or other) write than the one this run made last.
    LostWrite { found_sequence: u64, expected_sequence: u64 },
}

impl Failure {
    /// A stable short name, for counting by kind.
    pub fn name(&self) -> &'static str {
        match self {
            Failure::NeverWrittenZeros => "never_written_zeros",
            Failure::NeverWrittenStale => "never_written_stale",
            Failure::OtherRun { .. } => "other_run",
            Failure::Misplaced { .. } => "misplaced",
            Failure::Torn { .. } => "torn",
            Failure::Corrupted { .. } => "corrupted",
            Failure::LostWrite { .. } => "lost_write",
        }
    }

    const KINDS: usize = 7;

    pub fn index(&self) -> usize {
        match self {
            Failure::NeverWrittenZeros => 0,
            Failure::NeverWrittenStale => 1,
            Failure::OtherRun { .. } => 2,
            Failure::Misplaced { .. } => 3,
            Failure::Torn { .. } => 4,
            Failure::Corrupted { .. } => 5,
            Failure::LostWrite { .. } => 6,
        }
    }

    pub const NAMES: [&'static str; Self::KINDS] =
        ["never_written_zeros", "never_written_stale", "other_run", "misplaced", "torn", "corrupted", "lost_write"];
}

/// One failed block, with a window of expected and found bytes around the first difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    pub target: u32,
    pub offset_bytes: u64,
    pub failure: Failure,
    /// Where the 16-byte windows start within the block.
    pub window_at: u32,
    pub expected: [u8; 16],
    pub found: [u8; 16],
}

/// Writes a verifiable block: header, pattern payload, crc32c.
#[inline]
pub fn stamp(block: &mut [u8], pattern: Pattern, seed: u64, offset_bytes: u64, sequence: u64) {
    stamp_reduced(block, pattern, seed, offset_bytes, sequence, &Reduction::NONE);
}

/// `stamp`, reduced as `reduction` asks: a duplicate block gets its duplicate content
/// (no offset, no sequence), and each chunk ends in zeros for a compression ratio.
#[inline]
pub fn stamp_reduced(
    block: &mut [u8],
    pattern: Pattern,
    seed: u64,
    offset_bytes: u64,
    sequence: u64,
    reduction: &Reduction,
) {
    debug_assert!(block.len() >= HEADER_BYTES);
    let len_bytes = block.len() as u32;
    let (written_for, duplicate) = written_for(reduction, seed, offset_bytes);
    let (data_seed, sequence) =
        if duplicate { (data::duplicate_key(seed, u64::MAX - written_for), 0) } else { (seed ^ sequence, sequence) };
    let payload = &mut block[HEADER_BYTES..];
    // The payload continues the pattern as if the header were not there. Verified runs have
    // one block size (a mix is refused): `unique`'s period follows from it.
    let period_bytes = data::unique::period_bytes(u64::from(len_bytes));
    data::fill(payload, pattern, data_seed, written_for.wrapping_add(HEADER_BYTES as u64), sequence, period_bytes);
    if reduction.random_bytes_per_chunk < CHUNK_BYTES {
        for (i, chunk) in block.chunks_mut(CHUNK_BYTES).enumerate() {
            let keep = reduction.random_len(chunk.len()).max(if i == 0 { HEADER_BYTES } else { 0 });
            let from = keep.min(chunk.len());
            chunk[from..].fill(0);
        }
    }
    let header = &mut block[..HEADER_BYTES];
    header[..8].copy_from_slice(&MAGIC);
    header[OFFSET_AT..OFFSET_AT + 8].copy_from_slice(&written_for.to_le_bytes());
    header[BLOCK_SIZE_AT..BLOCK_SIZE_AT + 4].copy_from_slice(&len_bytes.to_le_bytes());
    header[PATTERN_AT..PATTERN_AT + 4].copy_from_slice(&pattern.id().to_le_bytes());
    header[SEED_AT..SEED_AT + 8].copy_from_slice(&seed.to_le_bytes());
    header[SEQUENCE_AT..SEQUENCE_AT + 8].copy_from_slice(&sequence.to_le_bytes());
    header[CRC_AT + 4..HEADER_BYTES].fill(0);
    let crc = block_crc(block);
    block[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

/// crc32c of the block with the crc field left out.
#[inline]
fn block_crc(block: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&block[..CRC_AT]), &block[CRC_AT + 4..])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The sequence recorded in a block's header (meaningful only for valid blocks).
fn sequence_of(block: &[u8]) -> u64 {
    u64_at(block, SEQUENCE_AT)
}

/// The write sequence in a block's header (meaningful once the block passed `check`, or
/// has the magic).
pub fn header_sequence(block: &[u8]) -> u64 {
    sequence_of(block)
}

/// Whether the block starts with an iopulse header's magic.
pub fn has_magic(block: &[u8]) -> bool {
    block.len() >= HEADER_BYTES && block[..8] == MAGIC
}

/// Checks a block read from `expect.offset_bytes`. `scratch` (one block) is used to
/// regenerate the expected bytes when the block fails; the fast path only computes a crc.
#[inline]
pub fn check(block: &[u8], expect: &Expect, scratch: &mut [u8]) -> Result<(), Failure> {
    let (written_for, duplicate) = written_for(&expect.reduction, expect.seed, expect.offset_bytes);
    let header_ok = block[..8] == MAGIC
        && u64_at(block, SEED_AT) == expect.seed
        && u32_at(block, BLOCK_SIZE_AT) == block.len() as u32
        && u64_at(block, OFFSET_AT) == written_for;
    if header_ok && u32_at(block, CRC_AT) == block_crc(block) {
        return match expect.sequence {
            // A duplicate holds no sequence: which write put it there cannot be told.
            Some(want) if !duplicate && want != sequence_of(block) => {
                Err(Failure::LostWrite { found_sequence: sequence_of(block), expected_sequence: want })
            }
            _ => Ok(()),
        };
    }
    Err(classify(block, expect, scratch))
}

/// Why a block failed (slow path).
fn classify(block: &[u8], expect: &Expect, scratch: &mut [u8]) -> Failure {
    if block.iter().all(|&b| b == 0) {
        return Failure::NeverWrittenZeros;
    }
    if block[..8] != MAGIC {
        // A corrupted magic in an otherwise valid block is corruption, not stale data.
        let mut probe = [0u8; 8];
        probe.copy_from_slice(&block[..8]);
        let crc_with_magic = crc32c::crc32c_append(
            crc32c::crc32c_append(crc32c::crc32c(&MAGIC), &block[8..CRC_AT]),
            &block[CRC_AT + 4..],
        );
        if crc_with_magic == u32_at(block, CRC_AT) {
            let first = probe.iter().zip(&MAGIC).position(|(a, b)| a != b).unwrap_or(0);
            return Failure::Corrupted { first_bad_byte: first as u32 };
        }
        return Failure::NeverWrittenStale;
    }
    let crc_ok = u32_at(block, CRC_AT) == block_crc(block);
    let (seed, block_size) = (u64_at(block, SEED_AT), u32_at(block, BLOCK_SIZE_AT));
    if crc_ok && (seed != expect.seed || block_size != block.len() as u32) {
        return Failure::OtherRun { seed, block_size_bytes: block_size };
    }
    let found_for = u64_at(block, OFFSET_AT);
    if crc_ok && found_for != written_for(&expect.reduction, expect.seed, expect.offset_bytes).0 {
        return Failure::Misplaced { written_for_offset: found_for };
    }
    // The checksum fails: compare with what the header's write put there.
    stamp_reduced(scratch, expect.pattern, expect.seed, expect.offset_bytes, sequence_of(block), &expect.reduction);
    let first = block.iter().zip(scratch.iter()).position(|(a, b)| a != b).unwrap_or(CRC_AT);
    let first_sector = first / SECTOR_BYTES;
    let sectors = block.len() / SECTOR_BYTES;
    let rest_all_differ = first_sector >= 1
        && (first_sector..sectors).all(|s| {
            let (a, b) =
                (&block[s * SECTOR_BYTES..(s + 1) * SECTOR_BYTES], &scratch[s * SECTOR_BYTES..(s + 1) * SECTOR_BYTES]);
            a.iter().zip(b).filter(|(x, y)| x != y).count() > SECTOR_BYTES / 4
        });
    if rest_all_differ && block.len().is_multiple_of(SECTOR_BYTES) && expect.pattern.varies_per_write() {
        Failure::Torn { first_bad_byte: (first_sector * SECTOR_BYTES) as u32 }
    } else {
        Failure::Corrupted { first_bad_byte: first as u32 }
    }
}

/// A `Mismatch` for a failed block: 16 expected and found bytes around the first difference.
pub fn describe(block: &[u8], expect: &Expect, failure: Failure, target: u32, scratch: &mut [u8]) -> Mismatch {
    let window_at = match failure {
        Failure::Torn { first_bad_byte } | Failure::Corrupted { first_bad_byte } => first_bad_byte as usize & !15,
        Failure::Misplaced { .. } => OFFSET_AT & !15,
        Failure::LostWrite { .. } => SEQUENCE_AT & !15,
        _ => 0,
    };
    let seq = expect.sequence.unwrap_or_else(|| if block[..8] == MAGIC { sequence_of(block) } else { 0 });
    stamp_reduced(scratch, expect.pattern, expect.seed, expect.offset_bytes, seq, &expect.reduction);
    let end = (window_at + 16).min(block.len());
    let mut expected = [0u8; 16];
    let mut found = [0u8; 16];
    expected[..end - window_at].copy_from_slice(&scratch[window_at..end]);
    found[..end - window_at].copy_from_slice(&block[window_at..end]);
    Mismatch { target, offset_bytes: expect.offset_bytes, failure, window_at: window_at as u32, expected, found }
}

/// Counts of a run's checks, per worker, merged at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyCounts {
    pub checked: u64,
    pub failures_by_kind: [u64; Failure::KINDS],
}

impl VerifyCounts {
    pub fn failures(&self) -> u64 {
        self.failures_by_kind.iter().sum()
    }

    pub fn merge(&mut self, other: &VerifyCounts) {
        self.checked += other.checked;
        for (a, b) in self.failures_by_kind.iter_mut().zip(other.failures_by_kind) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: usize = 4096;

    fn block(offset: u64, seq: u64, seed: u64) -> Vec<u8> {
        let mut b = vec![0u8; BS];
        stamp(&mut b, Pattern::Random, seed, offset, seq);
        b
    }

    fn expect(offset: u64) -> Expect {
        Expect { seed: 7, offset_bytes: offset, pattern: Pattern::Random, sequence: None, reduction: Reduction::NONE }
    }

    fn verdict(b: &[u8], e: &Expect) -> Result<(), Failure> {
        check(b, e, &mut vec![0u8; b.len()])
    }

    #[test]
    fn a_good_block_passes_for_every_pattern() {
        for p in [Pattern::Random, Pattern::Unique, Pattern::Keyed, Pattern::Zeros, Pattern::Ones, Pattern::Sequential]
        {
            let mut b = vec![0u8; BS];
            stamp(&mut b, p, 7, 8192, 3);
            assert_eq!(verdict(&b, &Expect { pattern: p, ..expect(8192) }), Ok(()), "{p:?}");
        }
    }

    #[test]
    fn each_failure_is_told_apart() {
        let good = block(8192, 3, 7);
        let e = expect(8192);
        assert_eq!(verdict(&vec![0u8; BS], &e), Err(Failure::NeverWrittenZeros));
        assert_eq!(verdict(&vec![0x5au8; BS], &e), Err(Failure::NeverWrittenStale));
        assert_eq!(verdict(&block(8192, 3, 8), &e), Err(Failure::OtherRun { seed: 8, block_size_bytes: BS as u32 }));
        assert_eq!(verdict(&block(4096, 3, 7), &e), Err(Failure::Misplaced { written_for_offset: 4096 }));
        let mut flipped = good.clone();
        flipped[1000] ^= 0x10;
        assert_eq!(verdict(&flipped, &e), Err(Failure::Corrupted { first_bad_byte: 1000 }));
        let mut magic = good.clone();
        magic[2] ^= 1;
        assert_eq!(verdict(&magic, &e), Err(Failure::Corrupted { first_bad_byte: 2 }));
        let mut torn = good.clone();
        torn[2048..].copy_from_slice(&block(8192, 9, 7)[2048..]);
        assert_eq!(verdict(&torn, &e), Err(Failure::Torn { first_bad_byte: 2048 }));
        let lost = Expect { sequence: Some(4), ..e };
        assert_eq!(verdict(&good, &lost), Err(Failure::LostWrite { found_sequence: 3, expected_sequence: 4 }));
    }

    /// Dedupe ratio 3 and compress ratio 2 together: duplicates are the same bytes at every
    /// offset, unique blocks differ, every chunk ends in zeros, and each failure is caught.
    #[test]
    fn reduced_blocks_dedupe_compress_and_still_catch_failures() {
        let r = Reduction::new(crate::io::data::Reducibility { dedupe_ratio: Some(3.0), compress_ratio: Some(2.0) });
        let e = |offset: u64| Expect { reduction: r, ..expect(offset) };
        let stamped = |offset: u64, seq: u64, seed: u64| {
            let mut b = vec![0u8; BS];
            stamp_reduced(&mut b, Pattern::Random, seed, offset, seq, &r);
            b
        };
        let offsets: Vec<u64> = (0..3000u64).map(|i| i * BS as u64).collect();
        let duplicates: Vec<u64> = offsets.iter().copied().filter(|&o| r.duplicate_of(7, o).1.is_some()).collect();
        let share = duplicates.len() as f64 / offsets.len() as f64;
        assert!((share - 2.0 / 3.0).abs() < 0.03, "duplicate share {share}");
        let mut distinct = std::collections::HashSet::new();
        for &o in &offsets {
            let b = stamped(o, o + 1, 7);
            assert!(b[2048..].iter().all(|&x| x == 0), "offset {o}: the second half is not zeros");
            assert_eq!(check(&b, &Expect { sequence: Some(o + 1), ..e(o) }, &mut vec![0u8; BS]), Ok(()), "offset {o}");
            distinct.insert(b);
        }
        let ratio = offsets.len() as f64 / distinct.len() as f64;
        assert!((ratio - 3.0).abs() < 0.15, "dedupe ratio {ratio}");
        let (unique, dup) = (offsets.iter().copied().find(|o| !duplicates.contains(o)).unwrap(), duplicates[0]);
        for o in [unique, dup] {
            let mut flipped = stamped(o, 5, 7);
            flipped[100] ^= 1;
            assert_eq!(check(&flipped, &e(o), &mut vec![0u8; BS]), Err(Failure::Corrupted { first_bad_byte: 100 }));
            assert_eq!(check(&vec![0u8; BS], &e(o), &mut vec![0u8; BS]), Err(Failure::NeverWrittenZeros));
            let foreign = stamped(o, 5, 8);
            assert!(matches!(check(&foreign, &e(o), &mut vec![0u8; BS]), Err(Failure::OtherRun { seed: 8, .. })));
        }
        // A unique block's data at a duplicate's offset (and back) is misplaced.
        assert!(matches!(check(&stamped(unique, 5, 7), &e(dup), &mut vec![0u8; BS]), Err(Failure::Misplaced { .. })));
        assert!(matches!(check(&stamped(dup, 5, 7), &e(unique), &mut vec![0u8; BS]), Err(Failure::Misplaced { .. })));
    }

    #[test]
    fn describe_shows_the_bytes_around_the_difference() {
        let mut b = block(0, 1, 7);
        b[1000] ^= 0xff;
        let e = expect(0);
        let mut scratch = vec![0u8; BS];
        let f = check(&b, &e, &mut scratch).unwrap_err();
        let m = describe(&b, &e, f, 2, &mut scratch);
        assert_eq!(m.window_at, 992);
        assert_eq!(m.found[8], m.expected[8] ^ 0xff);
        assert_eq!(m.found[..8], m.expected[..8]);
    }
}
