//! The base every layer stands on: errors and diagnostics (`diagnostics`), the hot loop's
//! primitives (`primitives`: clock, generator), the kernel calls that are not a benchmark's
//! I/O, each behind a safe function (`sys`), and quantities as typed and shown (`units`).
//!
//! Must not: import anything of the crate above it.

pub mod diagnostics;
pub mod primitives;
pub mod sys;
pub mod units;
