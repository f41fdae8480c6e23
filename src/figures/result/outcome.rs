//! The result's section of what a run says beside its figures: warnings and notes, the
//! error that stopped it, failed and stuck I/Os, and each `--expect` judged. Plain data.

use super::{StuckIo, named};
use serde::{Deserialize, Serialize};

/// What the run has to say beside its figures: warnings, notes, the error that stopped it,
/// failed and stuck I/Os, and each `--expect` judged.
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunOutcome {
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    /// What stopped the run, when something failed.
    pub error: Option<String>,
    /// Failed I/Os per op type and errno (all of them, also with `--continue-on-error`).
    #[serde(default)]
    pub io_errors: crate::io::stats::io_errors::ErrorSummary,
    /// Workers left behind: an I/O that did not complete within `--io-timeout`, or a
    /// worker that had not stopped a second after SIGINT/SIGTERM. Their figures are
    /// not in the result; the process exited without waiting for them.
    #[serde(default)]
    pub stuck_io: Vec<StuckIo>,
    /// `--expect`: each expectation judged against this result (absent without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationOutcome>,
}

/// One `--expect` item and what the run made of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectationOutcome {
    /// As given, spaces removed: `read.p99<=2ms`.
    pub expectation: String,
    /// The figure's name (`read.p99`).
    pub figure: String,
    /// `<=`, `>=`, `<` or `>`.
    pub comparison: String,
    /// The bound in the figure's unit.
    pub bound: f64,
    pub unit: named::Unit,
    /// The run's figure (null: the run has none, e.g. a read latency without reads).
    pub value: Option<f64>,
    pub passed: bool,
}
