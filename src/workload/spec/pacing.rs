//! Think time and rate limits: when a worker may issue (`front/cli/pacing.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use serde::{Deserialize, Serialize};

/// Think time and rate limits: when a worker may issue (`front/cli/pacing.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacingSpec {
    /// Think time between I/Os (`--think-time`, `--think-adaptive-percent`).
    #[serde(default)]
    pub think: Option<crate::io::schedule::think::ThinkSpec>,
    /// Rate limit (`--rate-iops`, `--rate-bw`).
    #[serde(default)]
    pub rate: Option<crate::io::schedule::think::RateSpec>,
}
