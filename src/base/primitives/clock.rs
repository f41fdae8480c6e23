//! The monotonic nanosecond clock every timestamp of a run is read from.
//!
//! One `Clock` is made by the coordinator and copied to every worker, so all
//! timestamps share one origin and can be compared across threads. Reading it
//! is a vDSO `clock_gettime(CLOCK_MONOTONIC)`: no syscall, ~20 ns.

use std::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: Instant,
}

impl Clock {
    pub fn new() -> Self {
        Self { origin: Instant::now() }
    }

    /// Nanoseconds since the clock was made.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
