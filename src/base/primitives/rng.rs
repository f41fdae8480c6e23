//! The pseudo-random generator of the hot path: wyrand, seeded through
//! splitmix64 so that nearby seeds (worker 0, worker 1, ...) give unrelated
//! streams. One call is a multiply and an add: cheap enough to draw per I/O.
//!
//! It is not cryptographic and must never be used where that matters.

/// A small, fast generator (wyrand). Same seed, same sequence, on every machine.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose stream is decided by `seed` and `stream` (e.g. the
    /// worker index and what the numbers are for), so that two purposes never
    /// share a sequence.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut s = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Self { state: splitmix64(&mut s) }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.state) * u128::from(self.state ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// A number in `0..bound` (Lemire's multiply-shift; the bias is below
    /// bound / 2^64, far below anything a benchmark can observe).
    #[inline(always)]
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A float in (0, 1]: never 0, so its logarithm is finite.
    #[inline(always)]
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fills `dest` with random bytes.
    pub fn fill_bytes(&mut self, dest: &mut [u8]) {
        let mut chunks = dest.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        rest.copy_from_slice(&last[..rest.len()]);
    }
}

/// So that well-kept samplers (rand_distr's ziggurat normal and exponential) can draw
/// from the same stream: same seed, same sequence still holds.
impl rand_core::TryRng for Rng {
    type Error = core::convert::Infallible;

    #[inline(always)]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok((self.next_u64() >> 32) as u32)
    }

    #[inline(always)]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.fill_bytes(dst);
        Ok(())
    }
}

/// One step of splitmix64: a good mixer for turning seeds into states.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..8).scan(Rng::new(7, 0), |r, _| Some(r.next_u64())).collect();
        let b: Vec<u64> = (0..8).scan(Rng::new(7, 0), |r, _| Some(r.next_u64())).collect();
        let c: Vec<u64> = (0..8).scan(Rng::new(7, 1), |r, _| Some(r.next_u64())).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_reaches_both_ends() {
        let mut r = Rng::new(1, 2);
        let mut seen = [0u32; 5];
        for _ in 0..10_000 {
            seen[r.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 1500), "{seen:?}");
        assert_eq!(Rng::new(1, 2).below(1), 0);
    }

    #[test]
    fn fill_bytes_fills_odd_lengths() {
        let mut buf = [0u8; 13];
        Rng::new(3, 3).fill_bytes(&mut buf);
        assert!(buf.iter().filter(|&&b| b != 0).count() > 8);
    }
}
