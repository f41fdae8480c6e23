//! Trace replay in the worker: the schedule it is given (`ReplayPlan`: every I/O of the
//! trace with its due time, offset, length and op, computed and placed on the worker's
//! file before the start line), the cursor its requests are drawn from, and the pacing
//! policy that issues each I/O at its due time and records how late it went (`Replayed`).
//!
//! Reads, writes and trims are drawn as requests; a flush (`Op::Fsync`, `Op::Fdatasync`)
//! is taken by the worker's flush barrier (`Worker::flush_gate`: a replay with flushes
//! runs with a `FlushPlan` that never counts writes), so it goes once the I/Os before it
//! completed and nothing after it goes before it completes, as the trace's flush did.
//!
//! The lag of an I/O is the time from its due time (the trace's timestamp, scaled by
//! `--speed`, from the start line) to its submission: the replayer's own lateness, kept
//! apart from the I/O's latency (submission to completion), as an HDR histogram. A
//! replay as fast as possible is `Unpaced`: no due times, no lag.
//!
//! Must not: allocate or format after the start line (the schedule is whole before it).

use super::pacing::{MAX_WAIT_SLICE_NS, POLL_QUANTUM_NS, Pacing};
use super::{PacingCounts, PacingLatency};
use crate::base::primitives::clock::Clock;
use crate::io::engine::Op;
use crate::io::schedule::think::{self, ThinkMode};
use crate::io::stats::OpStats;
use std::sync::Arc;

/// One I/O of the schedule: due this long after the start line, on the worker's file 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayIo {
    pub due_ns: u64,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub op: Op,
}

/// The whole schedule of a replaying worker; `timed` false: as fast as possible.
#[derive(Clone, Debug)]
pub struct ReplayPlan {
    pub ios: Arc<[ReplayIo]>,
    pub timed: bool,
}

/// Where the worker's requests stand in the schedule.
pub(super) struct ReplayCursor {
    pub(super) ios: Arc<[ReplayIo]>,
    pub(super) next: usize,
}

impl ReplayCursor {
    /// The next I/O, without drawing it (`Worker::flush_gate` looks for flushes).
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<ReplayIo> {
        self.ios.get(self.next).copied()
    }

    /// The next I/O to draw, if any is left.
    #[inline(always)]
    pub(super) fn take(&mut self) -> Option<ReplayIo> {
        let io = *self.ios.get(self.next)?;
        self.next += 1;
        Some(io)
    }
}

/// Each I/O at its due time (`start_ns` + its `due_ns`); the lag recorded at submission.
pub(super) struct Replayed {
    ios: Arc<[ReplayIo]>,
    /// The next I/O to be issued (the loop takes them in the order they are drawn).
    next: usize,
    start_ns: u64,
    lag: OpStats,
    max_lag_ns: u64,
}

impl Replayed {
    /// `lag` is allocated by the caller before the start line.
    pub(super) fn new(ios: Arc<[ReplayIo]>, start_ns: u64, lag: OpStats) -> Self {
        Self { ios, next: 0, start_ns, lag, max_lag_ns: 0 }
    }

    /// When the next I/O is due (none left: never).
    #[inline(always)]
    fn next_due_ns(&self) -> u64 {
        self.ios.get(self.next).map_or(u64::MAX, |io| self.start_ns.saturating_add(io.due_ns))
    }
}

impl Pacing for Replayed {
    const PACED: bool = true;

    #[inline]
    fn may_issue(&mut self, now_ns: u64) -> bool {
        // With none left, the loop's next draw finds the schedule done.
        self.next >= self.ios.len() || self.next_due_ns() <= now_ns
    }

    #[inline]
    fn take(&mut self, now_ns: u64) -> u64 {
        let due_ns = self.next_due_ns();
        self.next += 1;
        let lag_ns = now_ns.saturating_sub(due_ns);
        self.lag.record(0, lag_ns);
        self.max_lag_ns = self.max_lag_ns.max(lag_ns);
        // The I/O's latency counts from its submission: the lag is kept apart.
        now_ns
    }

    #[inline(always)]
    fn completed(&mut self, _lat_ns: u64, _service_ns: u64, _now_ns: u64) {}

    fn reset_figures(&mut self) {
        self.lag.reset();
    }

    fn lateness_totals(&self) -> (u64, u128) {
        (self.lag.ops, self.lag.lat_sum_ns)
    }

    fn take_latency(&mut self) -> Option<PacingLatency> {
        let lag = std::mem::replace(&mut self.lag, OpStats::unused());
        Some(PacingLatency { lateness: lag, service: OpStats::unused() })
    }

    #[inline]
    fn next_issue_ns(&self, now_ns: u64) -> u64 {
        if self.next >= self.ios.len() { now_ns } else { self.next_due_ns() }
    }

    fn wait(&self, clock: &Clock, now_ns: u64, until_ns: u64) -> u64 {
        let slice_end_ns = now_ns.saturating_add(MAX_WAIT_SLICE_NS);
        if until_ns > slice_end_ns {
            think::wait_until(clock, slice_end_ns, ThinkMode::Sleep)
        } else {
            // Sleep to shortly before the due time, then spin: microseconds, not the
            // scheduler's granularity.
            think::wait_for_slot(clock, until_ns, ThinkMode::Sleep)
        }
    }

    fn reap_timeout_ns(&self, now_ns: u64, wake_ns: u64) -> u64 {
        wake_ns.saturating_sub(now_ns).saturating_sub(think::SPIN_TAIL_NS)
    }

    fn pause(&self, clock: &Clock, now_ns: u64, until_ns: u64) {
        if until_ns.saturating_sub(now_ns) <= think::SPIN_TAIL_NS {
            return;
        }
        let sleep_until_ns = until_ns - think::SPIN_TAIL_NS;
        think::wait_until(clock, sleep_until_ns.min(now_ns.saturating_add(POLL_QUANTUM_NS)), ThinkMode::Sleep);
    }

    fn counts(&self, end_ns: u64) -> PacingCounts {
        // I/Os due before the end that were never issued (a stop before the trace's end).
        let owed = self.ios[self.next.min(self.ios.len())..]
            .iter()
            .take_while(|io| self.start_ns.saturating_add(io.due_ns) <= end_ns)
            .count();
        PacingCounts { backlog_ios: owed as u64, max_behind_ns: self.max_lag_ns, ..PacingCounts::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(due_ns: u64) -> ReplayIo {
        ReplayIo { due_ns, offset_bytes: 0, len_bytes: 512, op: Op::Read }
    }

    #[test]
    fn each_io_waits_for_its_due_time_and_its_lag_is_recorded() {
        let mut p = Replayed::new(Arc::from(vec![io(0), io(1_000), io(5_000)]), 100, OpStats::new());
        assert!(p.may_issue(100));
        assert_eq!(p.take(130), 130, "latency counts from the submission");
        assert!(!p.may_issue(1_000), "the second is due at 1_100");
        assert_eq!(p.next_issue_ns(1_000), 1_100);
        assert!(p.may_issue(1_100));
        p.take(1_600);
        assert_eq!(p.counts(10_000).backlog_ios, 1);
        p.take(5_100);
        assert!(p.may_issue(0), "none left: the draw ends the schedule");
        let lag = p.take_latency().unwrap().lateness;
        assert_eq!(lag.ops, 3);
        assert_eq!(lag.lat_max_ns, 500);
        assert_eq!(p.counts(10_000).max_behind_ns, 500);
    }
}
