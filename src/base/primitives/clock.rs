//! The monotonic nanosecond clock every timestamp of a run is read from.
//!
//! One `Clock` is made by the coordinator and copied to every worker, so all
//! timestamps share one origin and can be compared across threads. Reading it
//! is a vDSO `clock_gettime(CLOCK_MONOTONIC)` (`sys::monotonic`, the clock of
//! `std::time::Instant`): no syscall, ~20 ns.

use crate::base::sys::monotonic;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// CLOCK_MONOTONIC when the clock was made.
    origin_ns: u64,
}

impl Clock {
    pub fn new() -> Self {
        Self { origin_ns: monotonic::now_ns() }
    }

    /// Nanoseconds since the clock was made.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        monotonic::now_ns().saturating_sub(self.origin_ns)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
