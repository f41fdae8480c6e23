//! Think time and rate limits: when a worker may issue its next I/O.
//!
//! - Think time (`--think-time`, `--think-every`, `--think-adaptive-percent`):
//!   after every N completed I/Os the worker issues nothing for a while (a
//!   fixed time, or a share of the latency it currently sees); I/O already in
//!   flight keeps completing and is counted. What was asked and what was
//!   really spent (sleep overshoots) are both kept.
//! - Rate limits (`--rate-iops`, `--rate-bw`): I/Os are due on a fixed
//!   schedule, as an open-loop client would send them. Their latency is
//!   measured from when they were due, not from when they were finally issued
//!   (no coordinated omission), and no scheduled I/O is skipped: a worker that
//!   falls behind issues the backlog as fast as it can, and the latency of every
//!   late I/O says how late it was. What is still owed at the end is counted.
//!
//! This module decides times; the worker does the waiting and the I/O.

use crate::base::primitives::clock::Clock;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ThinkMode {
    /// sleep (nanosleep): cheap, overshoots by the scheduler's granularity
    Sleep,
    /// busy-wait on the clock: microsecond accuracy, burns a CPU
    Spin,
}

/// Think-time settings (plain data, part of the Spec).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkSpec {
    /// Fixed think time; ignored when `adaptive_percent` is set.
    pub time_ns: u64,
    pub mode: ThinkMode,
    /// Think after every N completed I/Os.
    pub every: u32,
    /// Think for this percentage of the recent mean latency instead of a fixed time.
    pub adaptive_percent: Option<u32>,
}

/// Rate settings (plain data, part of the Spec): the target per worker, after
/// `--rate-total` was divided by the number of workers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateSpec {
    pub iops_per_worker: f64,
    /// How the target was given, for the report: "iops" or "bandwidth".
    pub given_as: RateGivenAs,
    /// The target was for the whole run (`--rate-total`).
    pub total: bool,
    pub mode: ThinkMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateGivenAs {
    Iops,
    Bandwidth,
}

/// A worker's think-time state.
#[derive(Clone, Debug)]
pub struct Thinker {
    spec: ThinkSpec,
    since_last: u32,
    /// Running estimate of recent completion latency (exponential, weight 1/16).
    recent_lat_ns: f64,
    pub requested_ns: u64,
    pub thinks: u64,
}

impl Thinker {
    pub fn new(spec: ThinkSpec) -> Self {
        Self { spec, since_last: 0, recent_lat_ns: 0.0, requested_ns: 0, thinks: 0 }
    }

    pub fn mode(&self) -> ThinkMode {
        self.spec.mode
    }

    /// Records a completion; returns how long to think now, if it is time to.
    #[inline]
    pub fn on_completion(&mut self, lat_ns: u64) -> Option<u64> {
        if self.spec.adaptive_percent.is_some() {
            self.recent_lat_ns = if self.recent_lat_ns == 0.0 {
                lat_ns as f64
            } else {
                self.recent_lat_ns + (lat_ns as f64 - self.recent_lat_ns) / 16.0
            };
        }
        self.since_last += 1;
        if self.since_last < self.spec.every {
            return None;
        }
        self.since_last = 0;
        let think_ns = self.current_think_ns();
        self.requested_ns += think_ns;
        self.thinks += 1;
        Some(think_ns)
    }

    /// The think time that would be used now.
    fn current_think_ns(&self) -> u64 {
        match self.spec.adaptive_percent {
            Some(p) => (self.recent_lat_ns * f64::from(p) / 100.0) as u64,
            None => self.spec.time_ns,
        }
    }
}

/// A rate wait sleeps until this long before the due time, then spins: the schedule
/// is kept to microseconds without burning a CPU between I/Os.
pub const SPIN_TAIL_NS: u64 = 200_000;

/// A worker's schedule of due times (open loop: every slot is issued, late or not).
#[derive(Clone, Debug)]
pub struct Pacer {
    start_ns: u64,
    interval_ns: f64,
    /// Slots issued so far.
    slot: u64,
    /// The most an issued I/O was behind its due time.
    pub max_behind_ns: u64,
}

impl Pacer {
    pub fn new(start_ns: u64, iops: f64) -> Self {
        Self { start_ns, interval_ns: 1e9 / iops, slot: 0, max_behind_ns: 0 }
    }

    /// When the next I/O is due.
    #[inline]
    pub fn next_due_ns(&self) -> u64 {
        self.start_ns + (self.slot as f64 * self.interval_ns) as u64
    }

    /// Takes the next slot for an I/O issued at `now_ns`; returns when it was due (its
    /// latency is measured from then, however late it is issued).
    #[inline]
    pub fn take(&mut self, now_ns: u64) -> u64 {
        let due = self.next_due_ns();
        self.slot += 1;
        self.max_behind_ns = self.max_behind_ns.max(now_ns.saturating_sub(due));
        due
    }

    /// Scheduled I/Os not yet issued at `end_ns`: the backlog an open-loop client
    /// would see queued.
    pub fn backlog_at(&self, end_ns: u64) -> u64 {
        if end_ns < self.start_ns {
            return 0;
        }
        let due_by_end = ((end_ns - self.start_ns) as f64 / self.interval_ns) as u64 + 1;
        due_by_end.saturating_sub(self.slot)
    }
}

/// Waits for a rate slot: sleeps until shortly before it, then spins (or only spins), so
/// that the wait ends on time; returns the clock reading that ended it.
pub fn wait_for_slot(clock: &Clock, until_ns: u64, mode: ThinkMode) -> u64 {
    if mode == ThinkMode::Sleep {
        wait_until(clock, until_ns.saturating_sub(SPIN_TAIL_NS), ThinkMode::Sleep);
    }
    wait_until(clock, until_ns, ThinkMode::Spin)
}

/// Waits until `until_ns` on `clock`, sleeping or spinning; returns the clock reading
/// that ended the wait (at or after `until_ns`).
pub fn wait_until(clock: &Clock, until_ns: u64, mode: ThinkMode) -> u64 {
    match mode {
        ThinkMode::Sleep => {
            let now = clock.now_ns();
            if until_ns > now {
                std::thread::sleep(Duration::from_nanos(until_ns - now));
                clock.now_ns()
            } else {
                now
            }
        }
        ThinkMode::Spin => loop {
            let now = clock.now_ns();
            if now >= until_ns {
                break now;
            }
            std::hint::spin_loop();
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinks_every_n_completions() {
        let mut t = Thinker::new(ThinkSpec { time_ns: 1000, mode: ThinkMode::Sleep, every: 3, adaptive_percent: None });
        let thinks: Vec<Option<u64>> = (0..7).map(|_| t.on_completion(10)).collect();
        assert_eq!(thinks, vec![None, None, Some(1000), None, None, Some(1000), None]);
        assert_eq!((t.requested_ns, t.thinks), (2000, 2));
    }

    #[test]
    fn adaptive_think_grows_when_latency_grows() {
        let mut t =
            Thinker::new(ThinkSpec { time_ns: 0, mode: ThinkMode::Sleep, every: 1, adaptive_percent: Some(50) });
        // A fake latency source: 10 µs for a while, then 100 µs.
        for _ in 0..200 {
            t.on_completion(10_000);
        }
        let before = t.current_think_ns();
        assert!((4_900..=5_100).contains(&before), "{before}");
        for _ in 0..200 {
            t.on_completion(100_000);
        }
        let after = t.current_think_ns();
        assert!((49_000..=51_000).contains(&after), "{after}");
    }

    #[test]
    fn pacer_keeps_its_schedule_and_issues_every_slot_after_a_stall() {
        let mut p = Pacer::new(1_000, 1000.0); // one per ms
        assert_eq!(p.take(1_000), 1_000);
        assert_eq!(p.next_due_ns(), 1_001_000);
        assert_eq!(p.take(1_001_500), 1_001_000);
        assert_eq!(p.take(3_500_000), 2_001_000);
        // A stall of 40 ms: every slot that passed is still owed and measured from its
        // own due time (open loop); nothing is skipped.
        assert_eq!(p.backlog_at(43_500_000), 41);
        assert_eq!(p.take(43_500_000), 3_001_000);
        assert_eq!(p.take(43_500_100), 4_001_000);
        assert_eq!(p.max_behind_ns, 40_499_000);
        assert_eq!(p.backlog_at(43_500_100), 39);
    }
}
