//! What a worker does with a completion: its figures counted (or the ramp's), a flush
//! owed or done, a failure recorded, and the interval rotated. Hot path: no allocation,
//! no lock, no clock read (the caller's reading is passed in).

use super::*;
use crate::io::worker::iolog::IoRecord;
use crate::io::worker::pacing::Pacing;

impl<E: Engine> Worker<E> {
    /// Once per batch, with a time series: at a new interval, hands the sampler a copy of
    /// this worker's cumulative histograms and its schedule's lateness so far (see `live`).
    #[inline(always)]
    pub(super) fn maybe_rotate_interval(&mut self, epoch: &AtomicU64, pacing: &impl Pacing) {
        if let Some(rec) = &mut self.tallies.interval {
            rec.maybe_rotate(epoch, |into| {
                snapshot(&self.stats, into);
                (into.lateness_ops, into.lateness_sum_ns) = pacing.lateness_totals();
            });
        }
    }

    /// The ramp's end, at the first batch past it (the loop's `next_event_ns`): the time
    /// series gets the ramp's tail, then the counters and
    /// histograms are reset in place (no allocation), once. Coverage, verification,
    /// failed I/Os and pacing keep counting over the whole run. With `--ops` or
    /// `--io-limit`, the budget starts here: `in_flight` I/Os issued in the ramp and the
    /// requests drawn ahead will complete in the window and count against it, so that the
    /// window completes the budget exactly (the ramp drew without a limit).
    #[cold]
    #[inline(never)]
    pub(super) fn end_ramp(&mut self, in_flight: usize) {
        self.window.ramp_end_ns = None;
        if let Some(limit) = self.draw.window_ops_limit.take() {
            let drawn_ahead = self.io.ahead.as_ref().map_or(0, |a| a.len + usize::from(a.cutting.is_some()));
            self.draw.remaining_ops = limit.saturating_sub((in_flight + drawn_ahead) as u64);
        }
        if let Some(rec) = &mut self.tallies.interval {
            rec.end_ramp(|into| snapshot(&self.stats, into));
        }
        for t in self.stats.iter_mut() {
            self.window.ramp_ops += t.read.ops + t.write.ops + t.flush.ops + t.trim.ops;
            t.read.reset();
            t.write.reset();
            t.flush.reset();
            t.trim.reset();
        }
        if let Some(m) = &mut self.draw.sizes {
            m.reset();
        }
        // The log holds the window's I/Os, as the figures do (its table is kept).
        if let Some(log) = &mut self.tallies.iolog {
            log.records.clear();
            log.left_out = 0;
        }
        // The written chunks are counted from the window's writes (`write.ops`): so are
        // their duplicates.
        self.writes.duplicate_chunks_written = 0;
        self.tallies.own_ns = 0;
        self.tallies.depths = DepthTally::default();
        self.window.window_cpu_start = Some(rusage::thread_cpu());
    }

    /// Accounts one completion; `counts` is false for I/O that finished after the window.
    #[inline(always)]
    pub(super) fn complete<const MIX: bool>(&mut self, slot: u32, result: i64, lat_ns: u64, counts: bool) {
        let state = self.io.slots[slot as usize];
        self.io.slots[slot as usize].submit_ns = IDLE_NS;
        if state.window != NO_WINDOW {
            // The write is done with its window: another may take it.
            if let Some(area) = &mut self.writes.area {
                area.release(state.window, u64::from(state.len_bytes));
            }
            self.io.slots[slot as usize].window = NO_WINDOW;
        }
        let len_bytes = if MIX { u64::from(state.len_bytes) } else { self.block_size_bytes };
        if result == len_bytes as i64 && self.writes.verifier.is_some() {
            self.verify_completion(slot, &state);
        }
        // `--write-iolog`: exactly the I/Os the figures count (done whole, in the window).
        if MIX
            && counts
            && self.tallies.iolog.is_some()
            && (result == len_bytes as i64 || (result == 0 && (state.op.is_flush() || state.op == Op::Trim)))
        {
            self.log_completed(&state);
        }
        if result == len_bytes as i64 {
            if counts {
                let stats = &mut self.stats[state.file as usize];
                match state.op {
                    Op::Read => stats.read.record(len_bytes, lat_ns),
                    Op::Write => {
                        stats.write.record(len_bytes, lat_ns);
                        self.writes.duplicate_chunks_written += u64::from(state.duplicate_chunks);
                    }
                    Op::Fsync | Op::Fdatasync | Op::Trim => {}
                }
                if MIX && let Some(m) = &mut self.draw.sizes {
                    m.record(state.size_index, state.op, len_bytes, lat_ns);
                }
            }
        } else if result == 0 && state.op.is_flush() {
            self.flush_completed(&state, lat_ns, counts);
        } else if result == 0 && state.op == Op::Trim {
            if counts {
                self.stats[state.file as usize].trim.record(len_bytes, lat_ns);
                if MIX && let Some(m) = &mut self.draw.sizes {
                    m.record(state.size_index, Op::Trim, len_bytes, lat_ns);
                }
            }
        } else {
            self.record_error(slot, &state, result);
        }
    }

    /// `--write-iolog`: an I/O the figures count, into the worker's table with the time it
    /// was issued (out of the loop's code: a run without a log pays the `Option` test alone).
    #[cold]
    #[inline(never)]
    fn log_completed(&mut self, state: &SlotState) {
        let target = self.files[state.file as usize].target as u16;
        // A flush has no range (its slot keeps the last I/O's).
        let (offset_bytes, len_bytes) =
            if state.op.is_flush() { (0, 0) } else { (state.offset_bytes, state.len_bytes) };
        if let Some(log) = &mut self.tallies.iolog {
            log.record(IoRecord { issue_ns: state.issued_ns, offset_bytes, len_bytes, target, op: state.op });
        }
    }

    /// A flush completed: its latency is recorded (no bytes) and issuing may go on.
    #[cold]
    #[inline(never)]
    pub(super) fn flush_completed(&mut self, state: &SlotState, lat_ns: u64, counts: bool) {
        if let Some(f) = &mut self.durability.flush {
            f.in_flight = false;
        }
        // The flush was issued once every write before it had completed, and nothing was
        // issued since: the table of last writes is exactly what it made durable.
        if let Some(v) = &mut self.writes.verifier
            && let Some(record) = &mut v.durable_record
            && let Err(e) = record.flushed(state.file, &v.last_written)
        {
            let target = self.files[state.file as usize].target;
            self.faults.failure = Some(verifier::record_failure(state.op, target, &e));
        }
        if counts {
            self.stats[state.file as usize].flush.record(0, lat_ns);
        }
    }

    /// With `--fsync-every`/`--fdatasync-every` (the caller tests the `Option`): what the
    /// issue loop does next. A due flush is handed out once nothing is in flight, on a
    /// free slot; while it is in flight (queued engines) the loop holds back.
    #[inline(never)]
    pub(super) fn flush_gate(&mut self, in_flight: usize) -> FlushGate {
        let Some(f) = &mut self.durability.flush else { return FlushGate::Open };
        if f.in_flight || (f.due && in_flight > 0) {
            return FlushGate::Hold;
        }
        if !f.due {
            // A replay: the schedule's next entry may be a flush (of its own kind). It is
            // taken from the schedule here, and is due like a counted flush: it waits for
            // the I/Os before it, and nothing after it goes before it completes.
            let Some(cursor) = &mut self.draw.replay else { return FlushGate::Open };
            let Some(io) = cursor.peek().filter(|io| io.op.is_flush()) else { return FlushGate::Open };
            cursor.next += 1;
            self.draw.remaining_ops = self.draw.remaining_ops.saturating_sub(1);
            f.due = true;
            f.plan.op = io.op;
            f.file = 0;
            if in_flight > 0 {
                return FlushGate::Hold;
            }
        }
        let slot = if E::CAPS.completes_inline { Some(0) } else { self.io.free.pop() };
        let Some(slot) = slot else { return FlushGate::Hold };
        f.due = false;
        f.in_flight = !E::CAPS.completes_inline;
        let (op, file) = (f.plan.op, f.file);
        let state = &mut self.io.slots[slot as usize];
        state.op = op;
        state.file = file;
        state.offset_bytes = 0;
        state.duplicate_chunks = 0;
        state.window = NO_WINDOW;
        FlushGate::Issue(Request { slot, op, file, offset_bytes: 0, len_bytes: 0, buffer: BufferAt::Slot })
    }

    /// Counts a failed I/O (per op type and errno) and, once the run has seen as many
    /// as `error_limit` (1 by default), records it as the failure that stops the worker.
    #[cold]
    #[inline(never)]
    pub(super) fn record_error(&mut self, slot: u32, state: &SlotState, result: i64) {
        let kind = if result < 0 {
            IoFailureKind::Errno((-result) as i32)
        } else {
            IoFailureKind::Short { done_bytes: result as u64, len_bytes: u64::from(state.len_bytes) }
        };
        let errno = match kind {
            IoFailureKind::Errno(errno) | IoFailureKind::Record(errno) => errno,
            IoFailureKind::Short { .. } => crate::io::stats::io_errors::SHORT_TRANSFER,
        };
        let target = self.files[state.file as usize].target;
        if let Some(v) = &mut self.writes.verifier {
            v.in_flight[slot as usize] = u64::MAX;
        }
        if state.op.is_flush() {
            // A failed flush (counted below) releases the barrier; it touched no block.
            if let Some(f) = &mut self.durability.flush {
                f.in_flight = false;
            }
        } else if let Some(tracker) = &mut self.draw.coverage {
            tracker.untouch_extent(state.region_block, u64::from(state.len_bytes).div_ceil(self.block_size_bytes));
        }
        // The block was counted as covered when the I/O was issued (the cheap place, on
        // the hot path); a failed I/O reached nothing, so it is taken back here (above).
        // Only failed I/Os touch the run-wide counter. Each failure draws a distinct number
        // from it, so exactly `error_limit` are counted across all workers: I/Os that fail
        // after the limit was reached (in flight in this or another worker while the run
        // stops) are not counted, as I/Os completing after the window are not.
        let seen = self.faults.errors_seen.fetch_add(1, Ordering::Relaxed) + 1;
        if seen > self.faults.error_limit {
            return;
        }
        self.faults.errors.record(state.op, errno, target, state.offset_bytes);
        if seen == self.faults.error_limit && self.faults.failure.is_none() {
            self.faults.failure = Some(IoFailure { op: state.op, target, offset_bytes: state.offset_bytes, kind });
        }
    }
}
