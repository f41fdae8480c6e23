//! When I/O may happen: think time and rate limits between a worker's I/Os, and the
//! wall-clock time at which a window opens (`--start-at`). Pure timing: no I/O, no stats.

pub mod start_at;
pub mod think;
