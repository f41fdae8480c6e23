//! Coordination: one run from a checked spec to its result (`run`: the typed stages, the
//! targets opened, the workers released and stopped, the result assembled), the ranks of a
//! cluster (`cluster`), and the metadata benchmark's runs of a tree (`metadata`).
//!
//! Must not: format output (it hands results and live frames to `output`), or do a worker's
//! I/O itself.

pub(crate) mod cluster;
pub(crate) mod metadata;
pub(crate) mod run;
