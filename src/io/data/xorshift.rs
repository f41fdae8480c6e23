//! The pseudo-random generator: eight independent xorshift64 lanes stepped together,
//! which the compiler turns into vector shifts and xors (benches/hot_path.rs measures
//! it). A pure function of (seed, offset, sequence); not cryptographic.
//!
//! It fills bytes; it knows nothing of patterns, pools or verification.

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
        *lane = crate::base::primitives::rng::splitmix64(&mut key) | 1; // xorshift needs a non-zero state
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
}
