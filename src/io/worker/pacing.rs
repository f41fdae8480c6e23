//! Pacing as a policy of the worker's loop: when the next I/O may be issued (think
//! time, a rate schedule), from when its latency counts, and how the worker waits
//! meanwhile.
//!
//! The loop (`io_loop`) is generic over `Pacing` and chosen once at start: with
//! `Unpaced` every method is a constant the compiler folds away, so a run without
//! `--think-time` or `--rate-*` pays nothing for pacing. `Paced` holds the decisions of
//! `think` (which only computes times) and does the waiting, in slices no longer than
//! `MAX_WAIT_SLICE_NS` so that a worker never sleeps past the stop word or its deadline.

use super::{PacingCounts, PacingLatency};
use crate::base::primitives::clock::Clock;
use crate::io::schedule::think::{self, Pacer, RateSpec, ThinkMode, ThinkSpec, Thinker};

/// The longest a paced worker waits without looking at the stop word and its deadline:
/// a SIGINT during a one-hour think is seen within this.
pub(super) const MAX_WAIT_SLICE_NS: u64 = 10_000_000;

/// When a queued engine has I/O in flight but the next issue is not due yet, the
/// worker polls for completions between waits of this length.
pub(super) const POLL_QUANTUM_NS: u64 = 20_000;

/// A policy the worker's loop calls around each I/O.
pub(super) trait Pacing {
    /// False for `Unpaced`: a slot is refilled as soon as its I/O completes and the
    /// loop never waits except for completions.
    const PACED: bool;

    /// Whether an I/O may be issued at `now_ns` (closes a think that has ended).
    fn may_issue(&mut self, now_ns: u64) -> bool;

    /// Takes the turn of an I/O issued at `now_ns`; returns the time its latency counts
    /// from: its due time under a rate schedule (no coordinated omission), else `now_ns`.
    fn take(&mut self, now_ns: u64) -> u64;

    /// A counted completion with latency `lat_ns` (from when it counts) and `service_ns`
    /// (from its submission) was seen at `now_ns` (may start a think; under a rate
    /// schedule, records the worker's lateness `lat_ns - service_ns` and the service time).
    fn completed(&mut self, lat_ns: u64, service_ns: u64, now_ns: u64);

    /// The ramp ended: the lateness and service figures restart from zero, as the I/O's.
    fn reset_figures(&mut self);

    /// The lateness and service figures, once, at the end (rate schedules only).
    fn take_latency(&mut self) -> Option<PacingLatency>;

    /// The lateness recorded so far: how many I/Os and the sum of their lateness (a
    /// replay's lag); read at an interval's end, for a live view.
    fn lateness_totals(&self) -> (u64, u128) {
        (0, 0)
    }

    /// The earliest time an I/O may be issued, for a wait that starts at `now_ns`.
    fn next_issue_ns(&self, now_ns: u64) -> u64;

    /// Waits, with nothing in flight, until `until_ns` or at most one slice; returns the
    /// clock reading that ended the wait.
    fn wait(&self, clock: &Clock, now_ns: u64, until_ns: u64) -> u64;

    /// How long a wait for completions that starts at `now_ns` may block in the kernel
    /// before the turn at `wake_ns` (0: poll). A rate schedule stops `SPIN_TAIL_NS`
    /// short of it and polls from there, since a kernel timeout can overshoot.
    fn reap_timeout_ns(&self, now_ns: u64, wake_ns: u64) -> u64;

    /// Waits a short while between polls for completions, at most until `until_ns`.
    fn pause(&self, clock: &Clock, now_ns: u64, until_ns: u64);

    /// Think time asked for and spent, and the rate backlog, with the run ending at
    /// `end_ns` (a think still going is counted up to then).
    fn counts(&self, end_ns: u64) -> PacingCounts;
}

/// No think time and no rate limit.
pub(super) struct Unpaced;

impl Pacing for Unpaced {
    const PACED: bool = false;

    #[inline(always)]
    fn may_issue(&mut self, _now_ns: u64) -> bool {
        true
    }

    #[inline(always)]
    fn take(&mut self, now_ns: u64) -> u64 {
        now_ns
    }

    #[inline(always)]
    fn completed(&mut self, _lat_ns: u64, _service_ns: u64, _now_ns: u64) {}

    #[inline(always)]
    fn reset_figures(&mut self) {}

    fn take_latency(&mut self) -> Option<PacingLatency> {
        None
    }

    #[inline(always)]
    fn next_issue_ns(&self, now_ns: u64) -> u64 {
        now_ns
    }

    #[inline(always)]
    fn wait(&self, _clock: &Clock, now_ns: u64, _until_ns: u64) -> u64 {
        now_ns
    }

    #[inline(always)]
    fn reap_timeout_ns(&self, now_ns: u64, wake_ns: u64) -> u64 {
        wake_ns.saturating_sub(now_ns)
    }

    #[inline(always)]
    fn pause(&self, _clock: &Clock, _now_ns: u64, _until_ns: u64) {}

    fn counts(&self, _end_ns: u64) -> PacingCounts {
        PacingCounts::default()
    }
}

/// Think time, a rate schedule, or both.
pub(super) struct Paced {
    pacer: Option<Pacer>,
    thinker: Option<Thinker>,
    wait_mode: ThinkMode,
    /// No new I/O before this time (thinking).
    think_until_ns: u64,
    /// When the current think began.
    thinking_since_ns: Option<u64>,
    think_spent_ns: u64,
    /// Under a rate schedule: each counted I/O's lateness and service time (allocated
    /// before the start line by the caller).
    latency: Option<PacingLatency>,
}

impl Paced {
    pub(super) fn new(
        think: Option<ThinkSpec>,
        rate: Option<RateSpec>,
        start_ns: u64,
        latency: Option<PacingLatency>,
    ) -> Self {
        let thinker = think.map(Thinker::new);
        let wait_mode = thinker.as_ref().map_or(rate.map_or(ThinkMode::Sleep, |r| r.mode), Thinker::mode);
        Self {
            pacer: rate.map(|r| Pacer::new(start_ns, r.iops_per_worker)),
            thinker,
            wait_mode,
            think_until_ns: 0,
            thinking_since_ns: None,
            think_spent_ns: 0,
            latency: if rate.is_some() { latency } else { None },
        }
    }
}

impl Pacing for Paced {
    const PACED: bool = true;

    #[inline]
    fn may_issue(&mut self, now_ns: u64) -> bool {
        if now_ns < self.think_until_ns {
            return false;
        }
        if let Some(since) = self.thinking_since_ns.take() {
            self.think_spent_ns += now_ns - since;
        }
        self.pacer.as_ref().is_none_or(|p| p.next_due_ns() <= now_ns)
    }

    #[inline]
    fn take(&mut self, now_ns: u64) -> u64 {
        self.pacer.as_mut().map_or(now_ns, |p| p.take(now_ns))
    }

    #[inline]
    fn completed(&mut self, lat_ns: u64, service_ns: u64, now_ns: u64) {
        if let Some(l) = &mut self.latency {
            l.lateness.record(0, lat_ns.saturating_sub(service_ns));
            l.service.record(0, service_ns);
        }
        if let Some(t) = &mut self.thinker
            && let Some(think_ns) = t.on_completion(lat_ns)
        {
            self.think_until_ns = self.think_until_ns.max(now_ns.saturating_add(think_ns));
            self.thinking_since_ns.get_or_insert(now_ns);
        }
    }

    #[inline]
    fn next_issue_ns(&self, now_ns: u64) -> u64 {
        if now_ns < self.think_until_ns {
            self.think_until_ns
        } else {
            self.pacer.as_ref().map_or(now_ns, Pacer::next_due_ns)
        }
    }

    fn reset_figures(&mut self) {
        if let Some(l) = &mut self.latency {
            l.lateness.reset();
            l.service.reset();
        }
    }

    fn take_latency(&mut self) -> Option<PacingLatency> {
        self.latency.take()
    }

    fn lateness_totals(&self) -> (u64, u128) {
        self.latency.as_ref().map_or((0, 0), |l| (l.lateness.ops, l.lateness.lat_sum_ns))
    }

    fn wait(&self, clock: &Clock, now_ns: u64, until_ns: u64) -> u64 {
        let slice_end_ns = now_ns.saturating_add(MAX_WAIT_SLICE_NS);
        if until_ns > slice_end_ns {
            think::wait_until(clock, slice_end_ns, self.wait_mode)
        } else if now_ns >= self.think_until_ns && self.pacer.is_some() {
            think::wait_for_slot(clock, until_ns, self.wait_mode)
        } else {
            think::wait_until(clock, until_ns, self.wait_mode)
        }
    }

    fn reap_timeout_ns(&self, now_ns: u64, wake_ns: u64) -> u64 {
        let left_ns = wake_ns.saturating_sub(now_ns);
        if self.pacer.is_some() && now_ns >= self.think_until_ns {
            left_ns.saturating_sub(think::SPIN_TAIL_NS)
        } else {
            left_ns
        }
    }

    fn pause(&self, clock: &Clock, now_ns: u64, until_ns: u64) {
        // Close to a rate slot a sleep would overshoot it (timer slack, wake-up): the
        // worker polls without pausing from `SPIN_TAIL_NS` before it.
        let near_slot = self.pacer.is_some() && until_ns.saturating_sub(now_ns) <= think::SPIN_TAIL_NS;
        if self.wait_mode == ThinkMode::Spin || near_slot {
            return;
        }
        let sleep_until_ns = if self.pacer.is_some() { until_ns - think::SPIN_TAIL_NS } else { until_ns };
        think::wait_until(clock, sleep_until_ns.min(now_ns.saturating_add(POLL_QUANTUM_NS)), ThinkMode::Sleep);
    }

    fn counts(&self, end_ns: u64) -> PacingCounts {
        let still_thinking_ns = self.thinking_since_ns.map_or(0, |since| end_ns.saturating_sub(since));
        PacingCounts {
            think_requested_ns: self.thinker.as_ref().map_or(0, |t| t.requested_ns),
            think_spent_ns: self.think_spent_ns + still_thinking_ns,
            thinks: self.thinker.as_ref().map_or(0, |t| t.thinks),
            backlog_ios: self.pacer.as_ref().map_or(0, |p| p.backlog_at(end_ns)),
            max_behind_ns: self.pacer.as_ref().map_or(0, |p| p.max_behind_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn think(time_ns: u64, every: u32) -> ThinkSpec {
        ThinkSpec { time_ns, mode: ThinkMode::Sleep, every, adaptive_percent: None }
    }

    #[test]
    fn a_think_blocks_issue_until_it_ends_and_counts_what_was_spent() {
        let mut p = Paced::new(Some(think(1_000, 1)), None, 0, None);
        assert!(p.may_issue(0));
        p.completed(50, 50, 100);
        assert!(!p.may_issue(500), "thinking until 1100");
        assert_eq!(p.next_issue_ns(500), 1_100);
        assert!(p.may_issue(1_300));
        let c = p.counts(2_000);
        assert_eq!((c.think_requested_ns, c.think_spent_ns, c.thinks), (1_000, 1_200, 1));
    }

    #[test]
    fn a_think_cut_short_by_the_end_counts_up_to_the_end() {
        let mut p = Paced::new(Some(think(3_600_000_000_000, 1)), None, 0, None);
        p.completed(50, 50, 100);
        assert_eq!(p.counts(5_100).think_spent_ns, 5_000);
    }

    #[test]
    fn a_rate_schedule_issues_only_when_due_and_counts_from_the_due_time() {
        let rate = RateSpec {
            iops_per_worker: 1_000.0,
            given_as: think::RateGivenAs::Iops,
            total: false,
            mode: ThinkMode::Sleep,
        };
        let mut p = Paced::new(None, Some(rate), 1_000, None);
        assert!(p.may_issue(1_000));
        assert_eq!(p.take(1_200), 1_000, "latency counts from the due time");
        assert!(!p.may_issue(2_000), "the next is due at 1_001_000");
        assert_eq!(p.next_issue_ns(2_000), 1_001_000);
    }

    #[test]
    fn a_wait_never_lasts_longer_than_one_slice() {
        let clock = Clock::new();
        let p = Paced::new(Some(think(3_600_000_000_000, 1)), None, 0, None);
        let t0 = clock.now_ns();
        p.wait(&clock, t0, u64::MAX);
        // A slice is 10 ms; the bound checked here is far from any scheduler delay.
        assert!(clock.now_ns() - t0 < 5_000_000_000);
    }
}
