//! The sizes of a tree's files (`--file-size-dist`): one size, weighted sizes, or a gamma
//! distribution as filebench's `cvar-gamma`; each file's size drawn from its index, so a
//! tree is known without reading it. Plain data and parsing.

use super::MAX_FILE_SIZE_BYTES;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// `--file-size-dist 4k`, `0:20,4k:50,64k:30` (SIZE:WEIGHT), or `gamma:16k:1.5` (a gamma
/// distribution of that mean and shape, filebench's `cvar-gamma`): the sizes of the tree's
/// files, drawn per file (file i's size is fixed by i and the seed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeDist {
    Weights(Vec<SizeWeight>),
    Gamma(GammaSizes),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeWeight {
    pub size_bytes: u64,
    pub weight: u32,
}

/// Sizes from a gamma distribution of mean `mean_bytes` and shape `gamma` (filebench's
/// parameters: its scale is the mean over the shape), each at most `MAX_FILE_SIZE_BYTES`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GammaSizes {
    pub mean_bytes: u64,
    pub gamma: f64,
}

// The shape is finite and above 0 (its parse refuses anything else): equality is total.
impl Eq for GammaSizes {}

impl FromStr for SizeDist {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if let Some(rest) = text.trim().strip_prefix("gamma:") {
            let (mean, gamma) = rest.split_once(':').unwrap_or((rest, "1.5"));
            let mean_bytes = crate::base::units::parse_size(mean)?;
            let gamma: f64 =
                gamma.trim().parse().ok().filter(|g: &f64| g.is_finite() && *g >= 0.01 && *g <= 1000.0).ok_or_else(
                    || format!("'{text}': the shape must be a number from 0.01 to 1000, e.g. gamma:16k:1.5"),
                )?;
            if mean_bytes == 0 || mean_bytes > MAX_FILE_SIZE_BYTES {
                return Err(format!("'{text}': give a mean from 1 byte to {} MiB", MAX_FILE_SIZE_BYTES >> 20));
            }
            return Ok(SizeDist::Gamma(GammaSizes { mean_bytes, gamma }));
        }
        let mut out = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (size, weight) = match item.split_once(':') {
                Some((s, w)) => {
                    (s, w.trim().parse::<u32>().map_err(|_| format!("'{item}': the weight must be a whole number"))?)
                }
                None => (item, 1),
            };
            let size_bytes = crate::base::units::parse_size(size)?;
            if size_bytes > MAX_FILE_SIZE_BYTES {
                return Err(format!("'{item}': files of at most {} MiB", MAX_FILE_SIZE_BYTES >> 20));
            }
            if weight > 0 {
                out.push(SizeWeight { size_bytes, weight });
            }
        }
        if out.is_empty() {
            return Err("no size with a weight above 0: e.g. 4k, 0:20,4k:50,64k:30 or gamma:16k:1.5".into());
        }
        Ok(SizeDist::Weights(out))
    }
}

impl SizeDist {
    /// The size of file `index` of a tree made with `seed`: a draw, the same in every run
    /// with that seed, so a kept tree is known without reading it.
    pub fn size_of(&self, index: u64, seed: u64) -> u64 {
        let weights = match self {
            SizeDist::Gamma(g) => return g.size_of(index, seed),
            SizeDist::Weights(w) => w,
        };
        if weights.len() == 1 {
            return weights[0].size_bytes;
        }
        let total: u64 = weights.iter().map(|s| u64::from(s.weight)).sum();
        let mut pick = splitmix(index ^ seed.rotate_left(17)) % total;
        for s in weights {
            if pick < u64::from(s.weight) {
                return s.size_bytes;
            }
            pick -= u64::from(s.weight);
        }
        weights[0].size_bytes
    }

    /// Mean file size, for the space a tree needs.
    pub fn mean_bytes(&self) -> u64 {
        match self {
            SizeDist::Gamma(g) => g.mean_bytes,
            SizeDist::Weights(w) => {
                let total: u64 = w.iter().map(|s| u64::from(s.weight)).sum();
                let sum: u128 = w.iter().map(|s| u128::from(s.size_bytes) * u128::from(s.weight)).sum();
                (sum / u128::from(total.max(1))) as u64
            }
        }
    }
}

impl GammaSizes {
    fn size_of(&self, index: u64, seed: u64) -> u64 {
        use rand_distr::Distribution;
        let mut rng = crate::base::primitives::rng::Rng::new(splitmix(seed ^ 0x0067_616d_6d61), index);
        let scale = self.mean_bytes as f64 / self.gamma;
        match rand_distr::Gamma::new(self.gamma, scale) {
            Ok(dist) => (dist.sample(&mut rng).round() as u64).min(MAX_FILE_SIZE_BYTES),
            Err(_) => self.mean_bytes,
        }
    }
}

/// A stateless 64-bit mix (splitmix64's finaliser).
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_distribution_draws_its_weights() {
        let sizes: SizeDist = "0:20,4k:50,64k:30".parse().unwrap();
        let mut counts = [0u64; 3];
        for i in 0..100_000 {
            match sizes.size_of(i, 7) {
                0 => counts[0] += 1,
                4096 => counts[1] += 1,
                _ => counts[2] += 1,
            }
        }
        for (got, want) in counts.iter().zip([20_000u64, 50_000, 30_000]) {
            assert!(got.abs_diff(want) < 1_000, "{counts:?}");
        }
        assert_eq!(sizes.size_of(5, 1), sizes.size_of(5, 1));
    }
}
