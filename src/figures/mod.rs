//! The figures of runs as documents: the result and its reading, merging and naming
//! (`result`), comparisons (`compare`), sweeps and searches (`sweep`), bounds judged against a
//! result (`expect`).
//!
//! Must not: run anything, or format (`output` does).

pub(crate) mod compare;
pub(crate) mod expect;
pub(crate) mod result;
pub(crate) mod sweep;
