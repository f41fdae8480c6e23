//! Sweeps and searches over the benchmark's flags:
//!
//! - `grid.rs`: the flags given comma lists, combined into the points of a grid (each
//!   becomes a checked `Spec` in `front/plan/sweep.rs` before anything runs);
//! - `summary.rs`: the runs of each point summarised (mean, median, standard deviation,
//!   min, max) and the best point by a metric;
//! - `document.rs`: the sweep's and the search's JSON documents;
//! - `search.rs`: the plan of `iopulse search` (rate steps, bisection, queue depths);
//! - `from_csv.rs`: a sweep read back from a `--csv` file for `iopulse plot --sweep`.
//!
//! This folder plans and computes; it never formats (output/report/sweep.rs does) and never
//! runs anything itself (commands/sweep.rs and commands/search.rs do).

pub mod document;
mod from_csv;
pub mod grid;
pub mod journal;
pub mod search;
pub mod summary;

pub use from_csv::{Sweep, SweepPoint, SweepSeries, load};
