//! The output: results formatted for people and tools (text, JSON, fio's JSON, CSV, time
//! series, SVG, HTML, the live views), every file written through the ledger's guard.
//!
//! Must not: compute a figure (`figures` and `io::stats` do), or decide what a run does.

pub(crate) mod report;
