//! What the run records besides its figures: the time series, the iolog, the expectations judged after it (`front/cli/output.rs`, `front/cli/expect.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use super::default_interval_ns;
use serde::{Deserialize, Serialize};

/// What the run records besides its figures: the time series, the iolog, the expectations judged after it (`front/cli/output.rs`, `front/cli/expect.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputSpec {
    /// Length of one time-series interval (`--interval`).
    #[serde(default = "default_interval_ns")]
    pub interval_ns: u64,
    /// Collect a time series (`--timeseries`, or `--interval` given).
    #[serde(default)]
    pub time_series: bool,
    /// `--write-iolog`: each worker records the I/Os it issues (an output's, not the workload's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub record_iolog: bool,
    /// `--expect`: bounds on the result's figures, as written (`read.p99<=2ms`); judged
    /// after the run (`expect::evaluate`), never during it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<String>,
}
