//! What writes write and how reads are checked (`front/cli/data.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use super::VerifySpec;
use crate::io::data::Pattern;
use serde::{Deserialize, Serialize};

/// What writes write and how reads are checked (`front/cli/data.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSpec {
    /// What written blocks contain (without `--verify`).
    pub write_pattern: Pattern,
    /// `--dedupe-ratio`, `--compress-ratio` of random write data (none: fully unique).
    #[serde(default, skip_serializing_if = "crate::io::data::Reducibility::is_none")]
    pub reducibility: crate::io::data::Reducibility,
    /// `--verify`: written blocks carry a header and reads are checked.
    pub verify: Option<VerifySpec>,
    /// `--verify-state FILE`: the durable record of what each flush made durable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_state: Option<std::path::PathBuf>,
    /// `--verify-state-every N`: with writes durable at completion and no flush stream, the
    /// record is updated every N completed writes (none: the default, 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_state_every: Option<u64>,
    /// Seed of written data and of verification: `--seed`; when not given, 0 for verified
    /// data (so that a later run can check what an earlier one wrote) and the run's own
    /// `seed` otherwise (so that two runs never write the same bytes).
    pub data_seed: u64,
}
