//! The `unique` write pattern, the default: data that no storage can shrink, for about the
//! cost of fio's scrambled buffers.
//!
//! The byte at file offset `y` of a write with sequence `s` is
//!
//! - a *key* byte when `y mod 512 < KEY_BYTES`: 16 bytes at the start of every 512-byte
//!   sector of the file, a function of (seed, the sector's offset, `s`);
//! - else byte `y mod P` of the *base*: `P` random bytes (the period, at least 1 MiB and
//!   at least the largest write), a function of the seed only.
//!
//! So every 512-byte sector is unique (the key pair is distinct for every (sector, write),
//! by construction: two bijections, see `sector_key`), and any stretch of a file shorter
//! than `P` holds base bytes from distinct positions: no record of 4 KiB to `P` compresses,
//! whatever the block size, queue depth or order that wrote it (4 KiB writes landing in one
//! 128 KiB record included). The data stays a pure function of (seed, offset, sequence,
//! period): `fill` regenerates it into any buffer.
//!
//! Why it is cheap: the base never changes, so a writer keeps it in memory once (its *area*:
//! the base repeated, `fill_area`) and submits each write straight from the window of the
//! area that starts at `offset mod P`, after rewriting the keys of that window's sectors
//! (`key_sectors`): one cache line in eight, and no copy. (fio rewrites one or two lines of
//! every sector of one buffer, whose other bytes repeat from write to write.) Which window
//! of which replica a write uses, and when it must be copied instead, is the worker's
//! business (`io/worker/area.rs`).
//!
//! What could still reduce it: a compressor whose window spans more than `P` over a file
//! longer than `P` (the base repeats every `P` bytes, only the keys differ), and delta
//! compression against the sector `P` bytes away. Storage compresses records of at most
//! 1 MiB (ZFS's default 128 KiB, btrfs 128 KiB, arrays 4-64 KiB) and dedupes identical
//! blocks only.
//!
//! This module fills buffers; it never decides which pattern a run uses (`cli.rs`) nor where
//! in memory a write's data lies.

use super::xorshift::fill_random;

/// The sectors whose uniqueness the keys make.
pub const SECTOR_BYTES: u64 = 512;
/// Fresh bytes at the start of each sector.
pub const KEY_BYTES: u64 = 16;
/// The smallest period: records up to this size hold distinct base bytes.
pub const MIN_PERIOD_BYTES: u64 = 1 << 20;
/// Base bytes are generated per block of this size (any position can be made alone).
const BASE_BLOCK_BYTES: usize = 4096;

/// Mixed into the seed for the base, so that it is not the `random` pattern's stream.
const BASE_SALT: u64 = 0x756E_6971_7565_5F62;
/// Mixed into the seed for the keys' sector half.
const SECTOR_SALT: u64 = 0x756E_6971_7565_5F73;
/// Odd: multiplying by it is a bijection of u64.
const SECTOR_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// The period of the base for writes of at most `largest_write_bytes`: at least 1 MiB, and
/// at least the largest write (so that no write holds the same base bytes twice), in whole
/// 4 KiB pages (so that a window has the alignment of its file offset).
pub fn period_bytes(largest_write_bytes: u64) -> u64 {
    MIN_PERIOD_BYTES.max(largest_write_bytes.max(1).next_multiple_of(4096))
}

/// Writes base block `index` (bytes `index * 4096 ..` of the base) into `out` (at most a block).
#[inline]
fn base_block(out: &mut [u8], seed: u64, index: u64) {
    fill_random(out, seed ^ BASE_SALT, index * BASE_BLOCK_BYTES as u64, u64::MAX);
}

/// Fills `area` with the base repeated: byte `i` is base byte `i mod period_bytes`. Done
/// once at set-up; then any window of it starting at `offset mod period_bytes` holds the
/// base of a write at `offset`, and needs only its keys (`key_sectors`).
pub fn fill_area(area: &mut [u8], seed: u64, period_bytes: u64) {
    let period = (period_bytes as usize).min(area.len());
    for (i, block) in area[..period].chunks_mut(BASE_BLOCK_BYTES).enumerate() {
        base_block(block, seed, i as u64);
    }
    let mut done = period;
    while done < area.len() {
        let n = (area.len() - done).min(done);
        area.copy_within(..n, done);
        done += n;
    }
}

/// The write's half of every key: one per (seed, sequence), a bijection of the sequence.
#[inline(always)]
fn write_mix(seed: u64, sequence: u64) -> u64 {
    let mut state = seed ^ sequence.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    crate::base::primitives::rng::splitmix64(&mut state)
}

/// Mixed into the seed of each target after the first (`target_seed`).
const TARGET_SALT: u64 = 0x756E_6971_7565_5F74;

/// The seed of target `target`'s data among a run's targets laid out together: the first
/// target's is `seed` itself, each other's a bijective mix of it, so that two files laid
/// out by one run never hold the same sectors (a deduplicating array would store them once).
pub fn target_seed(seed: u64, target: u32) -> u64 {
    if target == 0 { seed } else { seed ^ fmix64(u64::from(target) ^ TARGET_SALT) }
}

/// The murmur3 finalizer: a bijection of u64 whose output bits all depend on every input bit.
#[inline(always)]
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// The 16 key bytes of the sector at file offset `sector_offset` (a multiple of 512) in a
/// write whose `write_mix` is `w`. The first half is a bijection of the sector (for one
/// seed), the second a bijection of the write's mix given the first: two sectors of one
/// write, or one sector in two writes, never share a key.
#[inline(always)]
fn sector_key(seed_mix: u64, w: u64, sector_offset: u64) -> [u8; KEY_BYTES as usize] {
    let k0 = ((sector_offset / SECTOR_BYTES) ^ seed_mix).wrapping_mul(SECTOR_MUL);
    let k1 = fmix64(k0 ^ w);
    let mut key = [0u8; KEY_BYTES as usize];
    key[..8].copy_from_slice(&k0.to_le_bytes());
    key[8..].copy_from_slice(&k1.to_le_bytes());
    key
}

/// Rewrites the keys of `window`, the bytes at file offset `offset_bytes` of write
/// `sequence`: the key bytes of every sector the window covers (a sector cut by either end
/// gets the part of its key that lies inside). The other bytes are left alone: `window`
/// holds the base already (a window of `fill_area`'s area, or a copy of one).
#[inline]
pub fn key_sectors(window: &mut [u8], seed: u64, offset_bytes: u64, sequence: u64) {
    let w = write_mix(seed, sequence);
    let seed_mix = seed ^ SECTOR_SALT;
    let end = offset_bytes + window.len() as u64;
    let mut sector = offset_bytes / SECTOR_BYTES * SECTOR_BYTES;
    if sector < offset_bytes {
        // The window starts inside a sector: only a part of its key may lie inside.
        if offset_bytes < sector + KEY_BYTES {
            let key = sector_key(seed_mix, w, sector);
            let from = (offset_bytes - sector) as usize;
            let n = ((sector + KEY_BYTES).min(end) - offset_bytes) as usize;
            window[..n].copy_from_slice(&key[from..from + n]);
        }
        sector += SECTOR_BYTES;
    }
    // Whole keys: fixed-size stores, no call to memcpy.
    let mut at = (sector - offset_bytes) as usize;
    while sector + KEY_BYTES <= end {
        let key = sector_key(seed_mix, w, sector);
        if let Some(dst) = window[at..].first_chunk_mut::<{ KEY_BYTES as usize }>() {
            *dst = key;
        }
        sector += SECTOR_BYTES;
        at += SECTOR_BYTES as usize;
    }
    if sector < end {
        // The window ends inside the last key.
        let key = sector_key(seed_mix, w, sector);
        let n = (end - sector) as usize;
        window[at..at + n].copy_from_slice(&key[..n]);
    }
}

/// The whole content of the bytes at file offset `offset_bytes` of write `sequence`, into
/// any buffer: the base at `offset mod period_bytes` (generated here), then the keys. What
/// a writer's window holds after `key_sectors`, for layouts, tests and verification.
pub fn fill(buf: &mut [u8], seed: u64, period_bytes: u64, offset_bytes: u64, sequence: u64) {
    let period = period_bytes.max(BASE_BLOCK_BYTES as u64);
    let mut block = [0u8; BASE_BLOCK_BYTES];
    let mut done = 0usize;
    while done < buf.len() {
        let at = (offset_bytes + done as u64) % period;
        let index = at / BASE_BLOCK_BYTES as u64;
        let within = (at % BASE_BLOCK_BYTES as u64) as usize;
        // A period that is not a whole number of blocks ends inside its last block.
        let block_len = (period - index * BASE_BLOCK_BYTES as u64).min(BASE_BLOCK_BYTES as u64) as usize;
        let n = (block_len - within).min(buf.len() - done);
        if within == 0 && n == block_len {
            base_block(&mut buf[done..done + n], seed, index);
        } else {
            base_block(&mut block[..block_len], seed, index);
            buf[done..done + n].copy_from_slice(&block[within..within + n]);
        }
        done += n;
    }
    key_sectors(buf, seed, offset_bytes, sequence);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_laid_out_together_hold_different_sectors() {
        let period = MIN_PERIOD_BYTES;
        let (mut a, mut b) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
        fill(&mut a, target_seed(7, 0), period, 0, 0);
        fill(&mut b, target_seed(7, 1), period, 0, 0);
        let sectors = |v: &[u8]| v.chunks(512).map(<[u8]>::to_vec).collect::<std::collections::HashSet<_>>();
        assert_eq!(sectors(&a).len(), 128);
        assert!(sectors(&a).is_disjoint(&sectors(&b)), "a sector of target 1 repeats one of target 0");
        assert_eq!(target_seed(7, 0), 7);
    }
    use std::collections::HashSet;
    use std::io::Write;

    const P: u64 = MIN_PERIOD_BYTES;

    fn make(seed: u64, offset: u64, seq: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        fill(&mut b, seed, P, offset, seq);
        b
    }

    #[test]
    fn periods_are_whole_pages_of_at_least_a_mib_and_the_largest_write() {
        assert_eq!(period_bytes(4096), 1 << 20);
        assert_eq!(period_bytes(0), 1 << 20);
        assert_eq!(period_bytes(1 << 20), 1 << 20);
        assert_eq!(period_bytes(16 << 20), 16 << 20);
        assert_eq!(period_bytes((1 << 20) + 1), (1 << 20) + 4096);
    }

    #[test]
    fn a_window_of_the_area_keyed_is_the_whole_content() {
        let mut area = vec![0u8; 3 * P as usize];
        fill_area(&mut area, 5, P);
        assert_eq!(area[..P as usize], area[P as usize..2 * P as usize], "the base repeats every period");
        for (offset, len, seq) in
            [(0u64, 4096usize, 1u64), (3 * P + 8192, 65536, 9), (P - 4096, 8192, 2), (777, 5000, 3)]
        {
            let at = (offset % P) as usize;
            let window = &mut area[at..at + len];
            key_sectors(window, 5, offset, seq);
            let whole = make(5, offset, seq, len);
            assert!(window == whole.as_slice(), "offset {offset} len {len}");
        }
    }

    #[test]
    fn a_pure_function_of_seed_offset_sequence_and_period() {
        assert_eq!(make(1, 4096, 7, 8192), make(1, 4096, 7, 8192));
        for other in [make(2, 4096, 7, 8192), make(1, 8192, 7, 8192), make(1, 4096, 8, 8192)] {
            assert_ne!(make(1, 4096, 7, 8192), other);
        }
        // A piece of a write is the same bytes as that part of the whole write.
        let whole = make(3, 1 << 20, 4, 65536);
        let mut piece = vec![0u8; 1000];
        fill(&mut piece, 3, P, (1 << 20) + 12345, 4);
        assert_eq!(piece[..], whole[12345..13345]);
        // Another period: another base.
        let mut other = vec![0u8; 8192];
        fill(&mut other, 1, 2 * P, P + 4096, 7);
        assert_ne!(other, make(1, P + 4096, 7, 8192));
    }

    #[test]
    fn the_keys_change_every_sector_and_nothing_else() {
        let a = make(9, 1 << 20, 1, 8192);
        let b = make(9, 1 << 20, 2, 8192);
        for (i, (x, y)) in a.chunks(512).zip(b.chunks(512)).enumerate() {
            assert_ne!(x[..16], y[..16], "sector {i}: the key is the write's");
            assert_eq!(x[16..], y[16..], "sector {i}: the base is the offset's");
        }
    }

    /// Every 512-byte sector of many writes over one period (the same base bytes again and
    /// again) is distinct, and records of consecutive 4 KiB writes do not compress.
    #[test]
    fn sectors_are_unique_and_records_of_small_writes_do_not_compress() {
        let mut file = vec![0u8; 4 << 20];
        for (i, block) in file.chunks_mut(4096).enumerate() {
            fill(block, 42, P, i as u64 * 4096, i as u64 + 1);
        }
        let mut seen = HashSet::new();
        for (i, sector) in file.chunks(512).enumerate() {
            assert!(seen.insert(sector.to_vec()), "sector {i} repeats");
        }
        // The same offsets written again by later writes: still distinct from the first pass.
        let mut again = vec![0u8; 1 << 20];
        fill(&mut again, 42, P, 0, 1_000_000);
        for (i, sector) in again.chunks(512).enumerate() {
            assert!(seen.insert(sector.to_vec()), "rewritten sector {i} repeats");
        }
        for record in [128usize << 10, 1 << 20] {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(&file[..record]).unwrap();
            let n = z.finish().unwrap().len();
            assert!(n as f64 >= 0.99 * record as f64, "a record of {record} bytes compressed to {n}");
        }
    }
}
