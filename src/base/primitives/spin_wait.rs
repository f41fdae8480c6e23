//! Waiting for a completion by spinning in user space before sleeping in the kernel
//! (`--completion-wait`).
//!
//! Why: a worker that sleeps in the kernel for each completion pays a wake-up: the
//! completing context (a device interrupt, a loop device's kernel worker, a softirq)
//! must wake it, and when its CPU has gone idle that is an inter-processor interrupt
//! and, in a virtual machine, an exit from the guest's halt (measured here: 15-25 µs
//! per wake, more than a fast device's whole service time; docs/engines.md). A worker
//! that watches its completion ring instead is already running when the completion is
//! posted. This module only decides how long to watch; the engines watch their own
//! rings (io_uring's CQ and its task-work flag, libaio's user-space ring).
//!
//! - `Sleep`: never spin (fio's behaviour).
//! - `Poll`: spin until a completion arrives, up to `POLL_LIMIT_NS`, then sleep, so that
//!   a stuck I/O still ends in the kernel's wait (where the stuck-I/O report finds it).
//! - `Adaptive` (the default): spin up to `ADAPTIVE_LIMIT_NS` while completions have
//!   been arriving within it; after a spin that ran out, skip spinning for the next
//!   1, 3, 7, ... waits (at most `MAX_SKIP`), so a slow device costs a few spins in a
//!   thousand waits, not one per I/O. Only with at most `ADAPTIVE_MAX_IN_FLIGHT` I/Os in
//!   flight: deeper queues complete in batches while the worker sleeps, one wake-up
//!   serves many completions, and spinning would only turn waiting into CPU time.
//!
//! The budget is a number of spins, calibrated once per process against the clock: the
//! spin itself reads no clock (the hot path reads it at most twice per I/O).
//! Must not: allocate, lock, or read the clock after `new`.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use std::time::Instant;

/// How a worker waits for completions (`--completion-wait`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CompletionWait {
    /// Spin up to 50 µs while completions come that fast, else sleep.
    #[default]
    Adaptive,
    /// Spin until each completion arrives (a CPU busy while the run lasts).
    Poll,
    /// Sleep in the kernel for every completion (fio's behaviour).
    Sleep,
}

impl CompletionWait {
    pub fn name(self) -> &'static str {
        match self {
            CompletionWait::Adaptive => "adaptive",
            CompletionWait::Poll => "poll",
            CompletionWait::Sleep => "sleep",
        }
    }
}

/// The longest spin of `Adaptive`: above a loop device's or a fast NVMe drive's service
/// time at queue depth 1, far below a disk's.
pub const ADAPTIVE_LIMIT_NS: u64 = 50_000;
/// `Adaptive` spins only with this many I/Os in flight or fewer.
pub const ADAPTIVE_MAX_IN_FLIGHT: usize = 4;
/// The longest spin of `Poll` before it sleeps after all.
pub const POLL_LIMIT_NS: u64 = 10_000_000;
/// Most waits skipped after spins that ran out (`Adaptive`).
const MAX_SKIP: u32 = 1023;

/// One worker's spinning state.
#[derive(Clone, Debug)]
pub struct SpinWait {
    mode: CompletionWait,
    limit_spins: u32,
    /// Waits still to go without spinning, and the next back-off (`Adaptive`).
    skip: u32,
    backoff: u32,
    /// Spins that saw a completion, and spins that ran out (then slept).
    pub hits: u64,
    pub misses: u64,
}

impl SpinWait {
    pub fn new(mode: CompletionWait) -> Self {
        let limit_ns = match mode {
            CompletionWait::Adaptive => ADAPTIVE_LIMIT_NS,
            CompletionWait::Poll => POLL_LIMIT_NS,
            CompletionWait::Sleep => 0,
        };
        let limit_spins = (limit_ns as f64 * spins_per_ns()).min(f64::from(u32::MAX)) as u32;
        SpinWait { mode, limit_spins, skip: 0, backoff: 0, hits: 0, misses: 0 }
    }

    /// How many spins the next wait, with `in_flight` I/Os in flight, may take (0: sleep
    /// at once).
    #[inline]
    pub fn budget(&mut self, in_flight: usize) -> u32 {
        if self.mode == CompletionWait::Adaptive && in_flight > ADAPTIVE_MAX_IN_FLIGHT {
            return 0;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return 0;
        }
        self.limit_spins
    }

    /// Records how a spin of `budget()` ended: `hit` when a completion came within it.
    #[inline]
    pub fn record(&mut self, hit: bool) {
        if hit {
            self.hits += 1;
            self.backoff = 0;
        } else {
            self.misses += 1;
            if self.mode == CompletionWait::Adaptive {
                self.backoff = (self.backoff * 2 + 1).min(MAX_SKIP);
                self.skip = self.backoff;
            }
        }
    }

    /// Spins until `ready` says so or the budget is spent; whether `ready` did. Records
    /// the outcome. A budget of 0 returns false at once and records nothing.
    #[inline]
    pub fn spin(&mut self, in_flight: usize, ready: impl FnMut() -> bool) -> bool {
        let budget = self.budget(in_flight);
        budget > 0 && self.spin_for(budget, ready)
    }

    /// `spin` with a budget already taken from `budget()` (by an engine that must hand
    /// its queue over before it spins, only when it will).
    #[inline]
    pub fn spin_for(&mut self, budget: u32, mut ready: impl FnMut() -> bool) -> bool {
        let mut spins = 0;
        while spins < budget {
            if ready() {
                self.record(true);
                return true;
            }
            std::hint::spin_loop();
            spins += 1;
        }
        self.record(false);
        false
    }

    /// The engine facts that say how the worker waited.
    pub fn facts(&self) -> [(String, String); 3] {
        [
            ("completion_wait".into(), self.mode.name().into()),
            ("spin_hits".into(), self.hits.to_string()),
            ("spin_misses".into(), self.misses.to_string()),
        ]
    }
}

/// Spins per nanosecond on this machine, measured once (about 2 ms, at the first engine's
/// set-up, never in the window).
fn spins_per_ns() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        const SPINS: u32 = 100_000;
        let flag = std::sync::atomic::AtomicBool::new(false);
        let start = Instant::now();
        let mut spins = 0;
        // The same body as `spin`'s loop: an acquire load and a pause.
        while spins < SPINS && !flag.load(std::sync::atomic::Ordering::Acquire) {
            std::hint::spin_loop();
            spins += 1;
        }
        let ns = start.elapsed().as_nanos().max(1) as f64;
        f64::from(SPINS) / ns
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_never_spins() {
        let mut s = SpinWait::new(CompletionWait::Sleep);
        let mut asked = 0;
        assert!(!s.spin(1, || {
            asked += 1;
            true
        }));
        assert_eq!((asked, s.hits, s.misses), (0, 0, 0));
    }

    #[test]
    fn a_completion_within_the_budget_is_a_hit() {
        let mut s = SpinWait::new(CompletionWait::Adaptive);
        let mut asked = 0;
        assert!(s.spin(1, || {
            asked += 1;
            asked == 3
        }));
        assert_eq!((asked, s.hits, s.misses), (3, 1, 0));
    }

    #[test]
    fn adaptive_backs_off_after_misses_and_resets_on_a_hit() {
        let mut s = SpinWait::new(CompletionWait::Adaptive);
        assert!(!s.spin(1, || false));
        // One wait skipped, then a spin again; after the second miss three are skipped.
        assert_eq!(s.budget(1), 0);
        assert!(!s.spin(1, || false));
        assert_eq!([s.budget(1), s.budget(1), s.budget(1)], [0, 0, 0]);
        assert!(s.budget(1) > 0);
        assert_eq!(s.misses, 2);
        s.record(true);
        assert!(!s.spin(1, || false));
        // The hit reset the back-off: one skip only.
        assert_eq!(s.budget(1), 0);
        assert!(s.budget(1) > 0);
    }

    #[test]
    fn adaptive_does_not_spin_for_a_deep_queue_but_poll_does() {
        let mut s = SpinWait::new(CompletionWait::Adaptive);
        assert_eq!(s.budget(ADAPTIVE_MAX_IN_FLIGHT + 1), 0);
        assert!(s.budget(ADAPTIVE_MAX_IN_FLIGHT) > 0);
        let mut p = SpinWait::new(CompletionWait::Poll);
        assert!(p.budget(128) > 0);
    }

    #[test]
    fn poll_never_skips() {
        let mut s = SpinWait::new(CompletionWait::Poll);
        s.record(false);
        s.record(false);
        assert!(s.budget(1) > 0);
        assert_eq!(s.misses, 2);
    }
}
