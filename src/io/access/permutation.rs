//! A full-cycle permutation of `0..n` in O(1) memory: index i maps to a block
//! number, every block exactly once, in a random-looking order decided by a
//! seed. Used by random runs with `--duration 0`, which must access every
//! block exactly once without a bitmap of used blocks.
//!
//! Method: a keyed bijection on k-bit numbers (2^k >= n, the smallest such k),
//! made of steps that are each invertible modulo 2^k (xor with a key, multiply
//! by an odd constant, x ^= x >> s), applied with cycle walking: values >= n
//! are mapped again until one lands inside `0..n`. Because 2^k < 2n, fewer
//! than two steps are needed on average.

#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; 3],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Self {
        assert!(n > 0, "a permutation needs at least one element");
        let bits = 64 - (n - 1).leading_zeros();
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut state = seed;
        let keys = [
            crate::base::primitives::rng::splitmix64(&mut state),
            crate::base::primitives::rng::splitmix64(&mut state),
            crate::base::primitives::rng::splitmix64(&mut state),
        ];
        Self { n, mask, shift: (bits / 2).max(1), keys }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// One round of the bijection on k bits.
    #[inline(always)]
    fn mix(&self, mut x: u64) -> u64 {
        let m = self.mask;
        x = (x ^ self.keys[0]) & m;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & m;
        x ^= x >> self.shift;
        x = x.wrapping_add(self.keys[1]) & m;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & m;
        x ^= x >> self.shift;
        x = (x ^ self.keys[2]) & m;
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB) & m;
        x ^= x >> self.shift;
        x
    }

    /// The element at position `index` (< n).
    #[inline(always)]
    pub fn at(&self, index: u64) -> u64 {
        debug_assert!(index < self.n);
        let mut x = self.mix(index);
        while x >= self.n {
            x = self.mix(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_is_permutation(n: u64, seed: u64) {
        let p = Permutation::new(n, seed);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let x = p.at(i);
            assert!(x < n, "n={n}: {x} out of range");
            assert!(!seen[x as usize], "n={n}: {x} visited twice");
            seen[x as usize] = true;
        }
    }

    #[test]
    fn visits_every_element_once_for_awkward_sizes() {
        for n in [1u64, 2, 3, 5, 7, 8, 9, 1000, 4097, (1 << 20) + 7] {
            check_is_permutation(n, 42);
        }
    }

    #[test]
    fn order_depends_on_seed_and_is_not_identity() {
        let a = Permutation::new(1000, 1);
        let b = Permutation::new(1000, 2);
        let first_a: Vec<u64> = (0..20).map(|i| a.at(i)).collect();
        let first_b: Vec<u64> = (0..20).map(|i| b.at(i)).collect();
        assert_ne!(first_a, first_b);
        assert_ne!(first_a, (0..20).collect::<Vec<_>>());
    }
}
