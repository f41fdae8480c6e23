//! Which blocks, in which order, read or written or trimmed (`front/cli/access.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use super::{AccessOrder, Distribution, FileDistribution, is_zero_percent};
use serde::{Deserialize, Serialize};

/// Which blocks, in which order, read or written or trimmed (`front/cli/access.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccessSpec {
    pub read_percent: u8,
    /// `--trim-percent`: the share of I/Os that are trims (discards); the rest split by
    /// `read_percent`. 0 (absent in JSON) without.
    #[serde(default, skip_serializing_if = "is_zero_percent")]
    pub trim_percent: u8,
    pub order: AccessOrder,
    /// `--random-percent`: the share of random I/Os that jump (the rest continue
    /// sequentially); `None` is fully random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<u8>,
    /// Offset distribution of random runs.
    pub distribution: Distribution,
    /// Scatter the hot blocks of zipf and pareto over the region (`--no-scramble` turns it off).
    pub scramble: bool,
    pub file_distribution: FileDistribution,
    /// Sequential workers on a shared target all start at the beginning (`--sequential-overlap`).
    pub sequential_overlap: bool,
}
