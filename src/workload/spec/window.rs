//! How long the measured window lasts and what may end it (`front/cli/window.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use super::{RunLength, SteadyStateSpec, is_zero};
use serde::{Deserialize, Serialize};

/// How long the measured window lasts and what may end it (`front/cli/window.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowSpec {
    pub run_length: RunLength,
    /// Stop after this many I/Os in total (`--ops`, or `--io-limit` / block size; with
    /// `io_limit_percent`, resolved when the run opens its targets).
    pub ops_limit: Option<u64>,
    /// `--io-limit N%`: a share of each worker's region, in percent; the run turns it into
    /// `ops_limit` once its targets' sizes are known (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_limit_percent: Option<u32>,
    /// `--ramp`: I/O before the window, not counted (0: none); `run_length` is the window's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_ns: u64,
    /// `--steady-state`, `--steady-state-window`: stop once the window is steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateSpec>,
}
