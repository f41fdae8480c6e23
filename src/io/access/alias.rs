//! Walker's alias method (Vose's construction): draws a column 0..k with
//! given weights in O(1), with one random number and one table lookup. The
//! skewed distributions (zipf, pareto) choose their rank bands with it.
//!
//! Probabilities are held to 32 bits per column (the column itself from the
//! high 32 bits of the draw, the keep-or-alias choice from the low 32): an
//! error below 2^-32 per column, far below what any run can observe.

use crate::base::primitives::rng::Rng;

/// 2^64 as a float: turns a 64-bit draw into a fraction and back.
pub const TWO_64: f64 = 18_446_744_073_709_551_616.0;

#[derive(Clone, Debug)]
pub struct AliasTable {
    /// Per column: (keep the column when the low 32 bits of the draw are below this, alias).
    columns: Box<[(u32, u32)]>,
}

impl AliasTable {
    /// A table over `weights` (non-negative, not all zero). Built in O(k).
    pub fn new(weights: &[f64]) -> Self {
        assert!(!weights.is_empty() && weights.len() <= u32::MAX as usize);
        Self { columns: build(weights) }
    }

    /// A column, drawn with probability weight / sum of weights.
    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let r = rng.next_u64();
        let column = ((r >> 32) * self.columns.len() as u64) >> 32;
        let (threshold, alias) = self.columns[column as usize];
        if (r as u32) < threshold { column } else { u64::from(alias) }
    }
}

/// Vose's alias method: column i keeps itself with probability threshold/2^32,
/// else gives its alias. Built in O(head).
fn build(weights: &[f64]) -> Box<[(u32, u32)]> {
    let n = weights.len();
    let total: f64 = weights.iter().sum();
    let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
    let mut table = vec![(u32::MAX, 0u32); n];
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        table[s] = ((scaled[s] * 4_294_967_296.0).min(u32::MAX as f64) as u32, l as u32);
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What remains has probability 1 up to rounding: always keep itself.
    for i in small.into_iter().chain(large) {
        table[i] = (u32::MAX, i as u32);
    }
    table.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_come_with_their_weights() {
        let weights = [5.0, 0.0, 1.0, 3.0, 1.0];
        let table = AliasTable::new(&weights);
        let mut rng = Rng::new(3, 4);
        let mut counts = [0u64; 5];
        let draws = 1_000_000;
        for _ in 0..draws {
            counts[table.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(counts[1], 0, "a zero weight is never drawn");
        for (c, w) in counts.iter().zip(weights) {
            let got = *c as f64 / draws as f64;
            assert!((got - w / 10.0).abs() < 0.003, "{counts:?}");
        }
    }
}
