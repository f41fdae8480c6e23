//! The worker's one loop, for every engine and every pacing policy.
//!
//! Each turn: issue into the free slots what the pacing allows; decide whether to stop;
//! wait (for completions, or, with nothing in flight, for the next turn of a paced
//! worker); account what completed and refill its slots. One definition serves all:
//!
//! - **When an I/O counts**: its bytes and latency are recorded if it completed at or
//!   before the deadline; a worker stopped before its deadline (signal, failure, share
//!   done) counts what it drains too, so the report matches what reached the storage.
//!   A failed I/O is counted as an error whenever the worker sees it complete (before
//!   a deadline's drain), so a failure at the edge of the window is not lost.
//! - **When a worker stops**, checked in this order after every batch (after every I/O
//!   of an inline engine, after every wait of a paced one): one of its I/Os failed (the
//!   others are told through the stop word), its share is done with nothing in flight,
//!   its deadline passed, or the stop word is set.
//! - **What is a failure**: the error limit reached (`record_error`), or the engine
//!   itself failing (`engine_failure`).
//!
//! Timing: an inline engine (sync, mmap) has the clock read just before and just after
//! its call. A queued engine has it read twice per batch: just before the call that hands
//! the queued I/Os to the kernel (`stamp_submission`: their submission time; skipped when
//! nothing was queued) and right after the reap (the completion time of the batch); the
//! worker's own time between the two is counted apart (`own_ns`, the result's
//! `tool_time`). docs/engines.md states the bound this puts on error. Under a rate
//! schedule latency counts from the due time instead (`Pacing::take`).
//!
//! Must not: allocate, lock, do an atomic read-modify-write or format (see
//! docs/architecture.md, the rules of the hot path).

use super::control::{RunControl, stop_code};
use super::pacing::Pacing;
use super::{FlushGate, Worker, WorkerStop};
use crate::io::engine::{Completion, Engine, Queued, Request};
use crate::io::worker::heartbeat::InFlightIo;
use std::sync::atomic::Ordering;

impl<E: Engine> Worker<E> {
    /// Runs the worker from the start line to its stop; returns why it stopped and the
    /// clock time it stopped issuing (the deadline when that is the reason). `AHEAD`:
    /// the worker draws requests ahead (`Worker::ahead` is set); a constant, so that a
    /// worker that does not (every reader) compiles to a loop with none of it. `MIX`: the
    /// worker has a block-size mix (`Worker::sizes` is set); a constant for the same reason.
    pub(super) fn run_loop<P: Pacing, const AHEAD: bool, const MIX: bool>(
        &mut self,
        control: &RunControl,
        deadline_ns: u64,
        pacing: &mut P,
    ) -> (WorkerStop, u64) {
        let clock = control.clock;
        let mut in_flight = 0usize;
        let mut exhausted = false;
        let mut now = clock.now_ns();
        self.tallies.own_mark_ns = now;
        // The next instant the loop must act on: the ramp's end while there is one, then
        // the deadline. One comparison per batch serves both, so a run without a ramp
        // pays nothing for it.
        let mut next_event_ns = self.window.ramp_end_ns.map_or(deadline_ns, |end| end.min(deadline_ns));
        let stop = loop {
            // Issue what may go now. An inline engine does one I/O per turn, so that the
            // stop checks below run after each.
            while !exhausted && self.faults.failure.is_none() {
                // An inline engine has one slot, always free between its calls.
                if !self.has_room::<AHEAD>(in_flight) {
                    break;
                }
                if P::PACED && !pacing.may_issue(now) {
                    break;
                }
                // Flushing (an `Option` test when off): a due flush goes out once nothing
                // is in flight, and nothing goes out while it is.
                let flush = if self.durability.flush.is_some() { self.flush_gate(in_flight) } else { FlushGate::Open };
                let req = if let FlushGate::Issue(req) = flush {
                    Some(req)
                } else if let FlushGate::Hold = flush {
                    break;
                } else if AHEAD {
                    self.take_prepared::<MIX>()
                } else if E::CAPS.completes_inline {
                    self.next_request::<MIX>(0)
                } else {
                    self.io.free.pop().and_then(|slot| {
                        let req = self.next_request::<MIX>(slot);
                        if req.is_none() {
                            self.io.free.push(slot);
                        }
                        req
                    })
                };
                let Some(req) = req else {
                    exhausted = true;
                    break;
                };
                match self.issue::<P, MIX>(control, req, now, deadline_ns, pacing) {
                    Ok(None) => {
                        in_flight += 1;
                        self.tallies.depths.issued(in_flight);
                    }
                    Ok(Some(done_ns)) => {
                        now = done_ns;
                        if E::CAPS.completes_inline {
                            break;
                        }
                    }
                    Err(message) => return self.engine_failure(control, message, in_flight, pacing),
                }
            }
            self.maybe_rotate_interval(&control.epoch, pacing);
            if let Some(mut stop) = self.stop_reason(control, now, next_event_ns, exhausted && in_flight == 0) {
                if stop == WorkerStop::Deadline && next_event_ns != deadline_ns {
                    // Not the deadline: the ramp's end. Figures restart from zero.
                    self.end_ramp(in_flight);
                    pacing.reset_figures();
                    next_event_ns = deadline_ns;
                    match self.stop_reason(control, now, deadline_ns, exhausted && in_flight == 0) {
                        Some(s) => stop = s,
                        None => continue,
                    }
                }
                break stop;
            }
            if in_flight == 0 {
                // Nothing out: an inline engine goes on with its next I/O; a paced
                // worker waits for its next turn (a slice at most).
                if P::PACED {
                    let wake_ns = pacing.next_issue_ns(now).min(deadline_ns.saturating_add(1));
                    // The wait's last clock reading is the time it ended: no extra read.
                    now = pacing.wait(&clock, now, wake_ns);
                }
                continue;
            }
            let reaped;
            (reaped, now) = match self.reap::<P, AHEAD, MIX>(control, now, deadline_ns, in_flight, exhausted, pacing) {
                Ok(reaped_now) => reaped_now,
                Err(message) => return self.engine_failure(control, message, in_flight, pacing),
            };
            // A flushing worker issues from the loop above only (where the flush barrier is).
            let refill = !P::PACED
                && self.durability.flush.is_none()
                && control.stop.load(Ordering::Relaxed) == stop_code::RUNNING;
            let batch = Batch::after_reap(now, deadline_ns, refill);
            for i in 0..reaped {
                let done = self.io.completions[i];
                in_flight -= 1;
                if let Err(message) = self.complete_and_refill::<P, AHEAD, MIX>(
                    control,
                    done,
                    batch,
                    pacing,
                    &mut in_flight,
                    &mut exhausted,
                ) {
                    return self.engine_failure(control, message, in_flight, pacing);
                }
            }
        };
        self.wind_down::<P, AHEAD>(control, stop, in_flight, now, deadline_ns, pacing)
    }

    /// After the loop's stop: the prepared requests discarded and what is in flight
    /// drained. The window of a worker stopped by its deadline ends there, and I/O still
    /// in flight is outside it; any other stop counts what it drains (`drain`). Returns
    /// the stop and the time the worker stopped issuing.
    fn wind_down<P: Pacing, const AHEAD: bool>(
        &mut self,
        control: &RunControl,
        stop: WorkerStop,
        in_flight: usize,
        now_ns: u64,
        deadline_ns: u64,
        pacing: &mut P,
    ) -> (WorkerStop, u64) {
        if AHEAD {
            self.discard_prepared();
        }
        if stop == WorkerStop::Deadline {
            self.drain(control, in_flight, false, pacing);
            (stop, deadline_ns)
        } else {
            let drained_ns = self.drain(control, in_flight, true, pacing);
            (stop, now_ns.max(drained_ns))
        }
    }

    /// Waits for completions and returns how many arrived, with the clock read after
    /// them. Drawing ahead, the device is first given what was queued and the spare slots'
    /// data is generated while it works, not between a completion and the next
    /// submission; completions that arrive meanwhile end the preparing and are returned
    /// without a wait.
    #[inline(always)]
    fn reap<P: Pacing, const AHEAD: bool, const MIX: bool>(
        &mut self,
        control: &RunControl,
        now_ns: u64,
        deadline_ns: u64,
        in_flight: usize,
        exhausted: bool,
        pacing: &mut P,
    ) -> Result<(usize, u64), String> {
        let clock = control.clock;
        let mut reaped = 0;
        if AHEAD && !exhausted && self.wants_prepare() {
            self.stamp_submission(&clock);
            self.engine.submit().map_err(|e| e.to_string())?;
            reaped = self.prepare_ahead::<MIX>().map_err(|e| e.to_string())?;
        }
        let now_ns = if reaped == 0 {
            self.publish_wait(control, now_ns, in_flight);
            let room = self.has_room::<AHEAD>(in_flight);
            reaped = self.wait_for_completions(control, now_ns, deadline_ns, exhausted || !room, pacing)?;
            let after_ns = clock.now_ns();
            if reaped > 0
                && let Some(hb) = control.heartbeat(self.index as usize)
            {
                hb.done_waiting();
            }
            after_ns
        } else {
            clock.now_ns()
        };
        self.tallies.own_mark_ns = now_ns;
        if reaped > 0 {
            self.tallies.depths.reaped(reaped);
        }
        Ok((reaped, now_ns))
    }

    /// One reaped I/O: accounted (counted if it completed by the deadline, and then
    /// followed by its think), and, when the batch refills, its slot given the next
    /// request at once at the batch's clock reading (drawing ahead: the oldest prepared
    /// one, whose data is ready). `in_flight` and `exhausted` are the loop's.
    #[inline(always)]
    fn complete_and_refill<P: Pacing, const AHEAD: bool, const MIX: bool>(
        &mut self,
        control: &RunControl,
        done: Completion,
        batch: Batch,
        pacing: &mut P,
        in_flight: &mut usize,
        exhausted: &mut bool,
    ) -> Result<(), String> {
        let Completion { slot, result } = done;
        let state = &self.io.slots[slot as usize];
        let lat_ns = batch.now_ns - state.submit_ns;
        // Paced: the time from the I/O's submission (its due time is `submit_ns`).
        let service_ns = if P::PACED { batch.now_ns.saturating_sub(state.issued_ns) } else { 0 };
        self.complete::<MIX>(slot, result, lat_ns, !batch.past_deadline);
        // Only a counted I/O is followed by a think: the worker stops after one
        // that completed past the deadline (thinks must equal counted I/Os).
        if !batch.past_deadline {
            pacing.completed(lat_ns, service_ns, batch.now_ns);
        }
        if !batch.refill || *exhausted || self.faults.failure.is_some() {
            self.io.free.push(slot);
            return Ok(());
        }
        let next = if AHEAD {
            self.io.free.push(slot);
            self.take_prepared::<MIX>()
        } else {
            let next = self.next_request::<MIX>(slot);
            if next.is_none() {
                self.io.free.push(slot);
            }
            next
        };
        match next {
            Some(req) => {
                if self.issue::<P, MIX>(control, req, batch.now_ns, batch.deadline_ns, pacing)?.is_none() {
                    *in_flight += 1;
                    self.tallies.depths.issued(*in_flight);
                }
            }
            None => *exhausted = true,
        }
        Ok(())
    }

    /// Hands `req` to the engine, submitting first if the engine is full. An I/O the
    /// engine performs at once (always, for an inline engine) is accounted here and its
    /// slot freed: then returns the completion time; `None` while it is in flight.
    #[inline(always)]
    fn issue<P: Pacing, const MIX: bool>(
        &mut self,
        control: &RunControl,
        req: Request,
        now_ns: u64,
        deadline_ns: u64,
        pacing: &mut P,
    ) -> Result<Option<u64>, String> {
        let clock = control.clock;
        // An inline engine's latency is its call: the clock is read just before it. The
        // time since the previous call ended is the worker's own.
        let issue_ns = if E::CAPS.completes_inline { clock.now_ns() } else { now_ns };
        if E::CAPS.completes_inline && !P::PACED {
            self.tallies.own_ns += issue_ns.saturating_sub(now_ns);
        }
        let submit_ns = pacing.take(issue_ns);
        self.io.slots[req.slot as usize].submit_ns = submit_ns;
        // Paced: when it really went, apart from when it was due (a constant test). With
        // `--write-iolog` too: the log takes the I/O at its completion, if it counts, with
        // this time. A run that records is compiled as one with sizes of its own (`MIX`),
        // so the loop of a run without a log has no test for it.
        if P::PACED || (MIX && self.tallies.iolog.is_some()) {
            self.io.slots[req.slot as usize].issued_ns = issue_ns;
        }
        let heartbeat = if E::CAPS.completes_inline { control.heartbeat(self.index as usize) } else { None };
        if let Some(hb) = heartbeat {
            let target = self.files[req.file as usize].target;
            let io = InFlightIo { op: req.op, target, offset_bytes: req.offset_bytes, submit_ns: issue_ns };
            hb.waiting(issue_ns, 1, Some(io));
        }
        let result = loop {
            // SAFETY: the slot is free (its previous completion was reaped, it completed
            // inline, or it was never used), and no reference to its bytes is held
            // across this call.
            match unsafe { self.engine.queue(req) } {
                Queued::InFlight => {
                    self.io.queued_since_submit += 1;
                    // Unpaced: its latency starts when the call that hands it over does.
                    if !P::PACED && self.io.unstamped_len < self.io.unstamped.len() {
                        self.io.unstamped[self.io.unstamped_len] = req.slot;
                        self.io.unstamped_len += 1;
                    }
                    return Ok(None);
                }
                Queued::Done(result) => break result,
                Queued::Full => {
                    self.stamp_submission(&clock);
                    self.engine.submit().map_err(|e| e.to_string())?
                }
            }
        };
        let done_ns = clock.now_ns();
        if let Some(hb) = heartbeat {
            hb.done_waiting();
        }
        // Inline: each I/O is its own call, alone in flight, and completes in it.
        if E::CAPS.completes_inline {
            self.tallies.depths.issued(1);
            self.tallies.depths.submitted(1);
            self.tallies.depths.reaped(1);
        }
        let lat_ns = done_ns.saturating_sub(submit_ns);
        let counts = done_ns <= deadline_ns;
        self.complete::<MIX>(req.slot, result, lat_ns, counts);
        // As in the loop: an I/O past the deadline is not counted, nor thought after.
        if counts {
            pacing.completed(lat_ns, done_ns.saturating_sub(issue_ns), done_ns);
        }
        if !E::CAPS.completes_inline {
            self.io.free.push(req.slot);
        }
        Ok(Some(done_ns))
    }

    /// Submits what is queued and reaps completions: blocking for one (one system call
    /// where the engine can), unless a paced worker has a free slot whose turn may come
    /// first (`cannot_issue` false): then it waits for a completion no longer than until that turn
    /// (`Engine::reap_within`; an engine that can only poll is polled with short pauses).
    #[inline(always)]
    fn wait_for_completions<P: Pacing>(
        &mut self,
        control: &RunControl,
        now_ns: u64,
        deadline_ns: u64,
        cannot_issue: bool,
        pacing: &mut P,
    ) -> Result<usize, String> {
        if P::PACED && !cannot_issue {
            let wake_ns = pacing.next_issue_ns(now_ns).min(deadline_ns.saturating_add(1));
            if wake_ns > now_ns {
                // Counts the call's I/Os; a paced run stamps none, so no clock is read.
                self.stamp_submission(&control.clock);
                self.engine.submit().map_err(|e| e.to_string())?;
                let timeout_ns = pacing.reap_timeout_ns(now_ns, wake_ns);
                let reaped =
                    self.engine.reap_within(&mut self.io.completions, timeout_ns).map_err(|e| e.to_string())?;
                // An engine that only polls came back at once: pause before polling again.
                if reaped == 0 {
                    let after_ns = control.clock.now_ns();
                    if after_ns < wake_ns {
                        pacing.pause(&control.clock, after_ns, wake_ns);
                    }
                }
                return Ok(reaped);
            }
        }
        // One call per batch: engines that can submit and wait in one system call do.
        self.stamp_submission(&control.clock);
        self.engine.submit_and_reap(1, &mut self.io.completions).map_err(|e| e.to_string())
    }

    /// Just before a call that hands queued I/Os to the kernel: their latency starts now
    /// (one clock reading for the batch, the second of the batch's two with the reap's),
    /// and the time since the last completion was seen is the worker's own. Nothing
    /// queued since the last call (a paced worker, or a wait with nothing new): no reading.
    /// The call is counted by the I/Os it carries (`DepthTally::submitted`).
    #[inline(always)]
    pub(super) fn stamp_submission(&mut self, clock: &crate::base::primitives::clock::Clock) {
        if self.io.queued_since_submit == 0 {
            return;
        }
        self.tallies.depths.submitted(self.io.queued_since_submit);
        self.io.queued_since_submit = 0;
        if self.io.unstamped_len == 0 {
            return;
        }
        let now_ns = clock.now_ns();
        for &slot in &self.io.unstamped[..self.io.unstamped_len] {
            self.io.slots[slot as usize].submit_ns = now_ns;
        }
        self.io.unstamped_len = 0;
        self.tallies.own_ns += now_ns.saturating_sub(self.tallies.own_mark_ns);
        self.tallies.own_mark_ns = now_ns;
    }

    /// Whether another I/O may be issued now: an inline engine always has its one slot;
    /// a queued one needs a free slot (drawing ahead: fewer than `depth` in flight).
    #[inline(always)]
    fn has_room<const AHEAD: bool>(&self, in_flight: usize) -> bool {
        if E::CAPS.completes_inline {
            true
        } else if AHEAD {
            // The engine's depth: the completions array holds one per I/O in flight.
            in_flight < self.io.completions.len()
        } else {
            !self.io.free.is_empty()
        }
    }

    /// Why the worker stops now, if it does (the order is the module's definition).
    #[inline(always)]
    fn stop_reason(&self, control: &RunControl, now_ns: u64, deadline_ns: u64, done: bool) -> Option<WorkerStop> {
        if self.faults.failure.is_some() {
            control.stop.store(stop_code::FAILED, Ordering::Relaxed);
            Some(WorkerStop::Failed)
        } else if done {
            Some(WorkerStop::Done)
        } else if now_ns > deadline_ns {
            Some(WorkerStop::Deadline)
        } else if control.stop.load(Ordering::Relaxed) != stop_code::RUNNING {
            Some(WorkerStop::Stopped)
        } else {
            None
        }
    }
}

/// What every completion of one reaped batch shares: the clock reading after the reap,
/// the deadline, whether that reading is past it, and whether freed slots are refilled
/// at once (unpaced, not flushing, running, before the deadline).
#[derive(Clone, Copy)]
struct Batch {
    now_ns: u64,
    deadline_ns: u64,
    past_deadline: bool,
    refill: bool,
}

impl Batch {
    /// The batch reaped at `now_ns`; its freed slots are refilled when `refill_allowed`
    /// and it is not past the deadline.
    #[inline(always)]
    fn after_reap(now_ns: u64, deadline_ns: u64, refill_allowed: bool) -> Self {
        let past_deadline = now_ns > deadline_ns;
        Batch { now_ns, deadline_ns, past_deadline, refill: refill_allowed && !past_deadline }
    }
}
