//! What a failed or stuck I/O does to the run (`front/cli/safety.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use super::default_io_timeout_ns;
use serde::{Deserialize, Serialize};

/// What a failed or stuck I/O does to the run (`front/cli/safety.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorSpec {
    /// `--continue-on-error` (or `--max-errors`): failed I/Os are counted and the run goes on.
    #[serde(default)]
    pub continue_on_error: bool,
    /// `--max-errors N`: the run stops once N I/Os have failed in all.
    #[serde(default)]
    pub max_errors: Option<u64>,
    /// `--io-timeout`: an I/O in flight longer than this ends the run (0: never).
    #[serde(default = "default_io_timeout_ns")]
    pub io_timeout_ns: u64,
}
