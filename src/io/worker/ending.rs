//! A worker's end: the I/O in flight drained (outside the window), `--end-fsync`, the
//! engine's own sync, and the result assembled from its state.

use super::*;
use crate::io::worker::iolog::IoRecord;

impl<E: Engine> Worker<E> {
    /// Waits for I/O still in flight so no buffer is freed under the kernel. Reaps one
    /// batch at a time, naming an I/O still in flight in the heartbeat before each wait,
    /// so that a drain stuck on one I/O is reported with the right offset.
    ///
    /// With `counting` (the worker stopped before any deadline: signal, failure, share
    /// done) the I/Os drained completed inside the window and count as any other
    /// (`complete`): what reached the storage is what the report says. Without it (the
    /// deadline passed) they are outside the window and not counted. Returns the clock
    /// time of the last completion counted (0 if none).
    pub(super) fn drain<P: pacing::Pacing>(
        &mut self,
        control: &RunControl,
        mut in_flight: usize,
        counting: bool,
        pacing: &mut P,
    ) -> u64 {
        let mut last_counted_ns = 0;
        while in_flight > 0 {
            self.publish_wait(control, control.clock.now_ns(), in_flight);
            self.stamp_submission(&control.clock);
            let reaped = self.engine.submit_and_reap(1, &mut self.io.completions);
            if let Ok(n @ 1..) = reaped {
                self.tallies.depths.reaped(n);
            }
            match reaped {
                Ok(0) | Err(_) => break,
                Ok(n) if counting => {
                    in_flight = in_flight.saturating_sub(n);
                    let now = control.clock.now_ns();
                    for i in 0..n {
                        let Completion { slot, result } = self.io.completions[i];
                        let state = &self.io.slots[slot as usize];
                        let lat_ns = now.saturating_sub(state.submit_ns);
                        let service_ns = now.saturating_sub(state.issued_ns);
                        // (Cold: the lengths are the slots' own, with or without a mix.)
                        self.complete::<true>(slot, result, lat_ns, true);
                        if P::PACED {
                            pacing.completed(lat_ns, service_ns, now);
                        }
                    }
                    last_counted_ns = now;
                }
                Ok(n) => {
                    in_flight = in_flight.saturating_sub(n);
                    for c in &self.io.completions[..n] {
                        let slot = &mut self.io.slots[c.slot as usize];
                        slot.submit_ns = IDLE_NS;
                        // Not counted, but a block an I/O failed on is not covered either.
                        if c.result != i64::from(slot.len_bytes)
                            && !slot.op.is_flush()
                            && let Some(tracker) = &mut self.draw.coverage
                        {
                            tracker.untouch(slot.region_block);
                        }
                    }
                }
            }
        }
        // I/Os whose completion never came back (the engine failed): nothing says they
        // reached their blocks.
        if in_flight > 0
            && let Some(tracker) = &mut self.draw.coverage
        {
            for slot in self.io.slots.iter().filter(|s| s.submit_ns != IDLE_NS && !s.op.is_flush()) {
                tracker.untouch(slot.region_block);
            }
        }
        if let Some(hb) = control.heartbeat(self.index as usize) {
            hb.done_waiting();
        }
        last_counted_ns
    }

    pub(super) fn engine_failure<P: pacing::Pacing>(
        &mut self,
        control: &RunControl,
        message: String,
        in_flight: usize,
        pacing: &mut P,
    ) -> (WorkerStop, u64) {
        control.stop.store(stop_code::FAILED, Ordering::Relaxed);
        self.faults.engine_error = Some(message);
        self.drain(control, in_flight, true, pacing);
        (WorkerStop::Failed, control.clock.now_ns())
    }

    /// `--end-fsync` (fio's end_fsync): fsyncs each of the worker's files once its I/O is
    /// drained and counts each flush as an I/O of the window, whose end moves by the
    /// time they took. Returns the worker's new end. A failed fsync is the worker's failure.
    #[cold]
    pub(super) fn end_fsync(&mut self, control: &RunControl, end_ns: u64) -> u64 {
        let clock = control.clock;
        let mut flushed_ns = 0;
        for i in 0..self.files.len() {
            let file = self.files[i];
            let t0 = clock.now_ns();
            // The descriptor belongs to a target the coordinator keeps open until every
            // worker has finished.
            let synced = crate::base::sys::process::fsync(file.fd);
            let lat_ns = clock.now_ns().saturating_sub(t0);
            if let Err(e) = synced {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.faults.failure.get_or_insert(IoFailure {
                    op: Op::Fsync,
                    target: file.target,
                    offset_bytes: 0,
                    kind: IoFailureKind::Errno(errno),
                });
                break;
            }
            self.stats[i].flush.record(0, lat_ns);
            flushed_ns += lat_ns;
            // Counted, so logged (`--write-iolog` holds exactly what the figures count).
            if let Some(log) = &mut self.tallies.iolog {
                log.record(IoRecord {
                    issue_ns: t0,
                    offset_bytes: 0,
                    len_bytes: 0,
                    target: file.target as u16,
                    op: Op::Fsync,
                });
            }
        }
        end_ns.saturating_add(flushed_ns)
    }

    /// Outside the window, after the loop drained: lets the engine make its writes
    /// durable (mmap: msync) and times it. A failure there fails the run.
    pub(super) fn sync_writes(&mut self, control: &RunControl) -> Option<u64> {
        let t0 = control.clock.now_ns();
        match self.engine.sync_writes() {
            Ok(true) => Some(control.clock.now_ns().saturating_sub(t0)),
            Ok(false) => None,
            Err(e) => {
                control.stop.store(stop_code::FAILED, Ordering::Relaxed);
                if self.faults.engine_error.is_none() {
                    self.faults.engine_error = Some(e.to_string());
                }
                None
            }
        }
    }

    pub(super) fn finish(
        mut self,
        _control: &RunControl,
        stop: WorkerStop,
        end_ns: u64,
        cpu: CpuTimes,
    ) -> WorkerResult {
        if let Some(rec) = self.tallies.interval.take() {
            rec.flush(|into| snapshot(&self.stats, into));
        }
        let engine_setup = self.engine.setup_facts();
        let mut read = OpStats::new();
        let mut write = OpStats::new();
        let mut flush = if self.durability.flush.is_some() || self.durability.end_fsync {
            OpStats::new()
        } else {
            OpStats::unused()
        };
        let mut trim = if self.tallies.trimming { OpStats::new() } else { OpStats::unused() };
        for t in self.stats.iter() {
            read.merge(&t.read);
            write.merge(&t.write);
            flush.merge(&t.flush);
            trim.merge(&t.trim);
        }
        let engine_notes = self.engine.notes();
        WorkerResult {
            index: self.index,
            ops: OpTotals { read, write, flush, trim },
            per_target: self.stats.into_vec(),
            coverage: self.draw.coverage,
            end_ns,
            stop,
            engine: EngineReport { engine_setup, engine_notes },
            failures: Failures {
                failure: self.faults.failure,
                engine_error: self.faults.engine_error,
                errors: self.faults.errors,
            },
            machine: MachineSeen {
                cpu,
                cpu_seen: placement::bind::current_cpu(),
                buffer_node_seen: self.tallies.buffer_node_seen,
                own_ns: self.tallies.own_ns,
                depths: self.tallies.depths,
            },
            data: DataOutcome {
                verify_counts: self.writes.verifier.as_ref().map(|v| v.counts.clone()).unwrap_or_default(),
                mismatches: self.writes.verifier.map(|v| v.mismatches).unwrap_or_default(),
                verify_cost: self.writes.verify_cost,
                duplicate_chunks_written: self.writes.duplicate_chunks_written,
                sync_ns: None,
            },
            paced: PacedOutcome { pacing: self.paced.pacing, pacing_latency: self.paced.pacing_latency.take() },
            ramp_ops: self.window.ramp_ops,
            per_size: self.draw.sizes.map(|m| m.stats.into_vec()).unwrap_or_default(),
            zone_ios: self.draw.source.zone_counts(),
            iolog: self.tallies.iolog,
        }
    }
}
