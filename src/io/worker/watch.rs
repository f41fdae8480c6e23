//! The worker's side of the watchdog (`watchdog`): before each wait it publishes in its
//! heartbeat how many I/Os are out and names one of them, so that a stuck I/O is
//! reported with its file and offset.
//!
//! Two relaxed stores per wait in the common case; the scan for the oldest I/O runs at
//! most every `SCAN_INTERVAL_NS`.

use super::control::RunControl;
use super::{IDLE_NS, Worker};
use crate::io::engine::Engine;
use crate::io::worker::heartbeat::{InFlightIo, SCAN_INTERVAL_NS};

/// What the worker keeps to name an I/O in flight in its heartbeat.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct WatchState {
    /// The I/O the heartbeat names: (slot, its submit_ns), while it stays in flight.
    named: Option<(u32, u64)>,
    next_scan_ns: u64,
    /// Where the search for another I/O in flight starts.
    cursor: u32,
}

/// The watchdog's view of a queued worker (`watchdog`): what it publishes before it waits.
impl<E: Engine> Worker<E> {
    /// Publishes that the worker starts waiting at `now_ns` with `in_flight` I/Os out,
    /// naming one I/O in flight. The named I/O is kept while it stays in flight (then only
    /// the wait's start is stored: two relaxed stores); when it has completed, another
    /// slot in flight is named. At most every `SCAN_INTERVAL_NS` the oldest I/O in flight
    /// is named instead, so that one stuck I/O among others that complete is seen.
    #[inline(always)]
    pub(super) fn publish_wait(&mut self, control: &RunControl, now_ns: u64, in_flight: usize) {
        let Some(hb) = control.heartbeat(self.index as usize) else { return };
        if now_ns < self.tallies.watch.next_scan_ns {
            if let Some((slot, submit_ns)) = self.tallies.watch.named
                && self.io.slots[slot as usize].submit_ns == submit_ns
            {
                hb.still_waiting(now_ns, in_flight);
                return;
            }
            self.tallies.watch.named = self.any_in_flight();
        } else {
            self.tallies.watch.next_scan_ns = now_ns.saturating_add(SCAN_INTERVAL_NS);
            self.tallies.watch.named = self.oldest_in_flight();
        }
        let io = self.tallies.watch.named.map(|(slot, submit_ns)| {
            let s = &self.io.slots[slot as usize];
            InFlightIo { op: s.op, target: self.files[s.file as usize].target, offset_bytes: s.offset_bytes, submit_ns }
        });
        hb.waiting(now_ns, in_flight, io);
    }

    /// The slot whose I/O has been in flight longest, with its submit time.
    #[cold]
    fn oldest_in_flight(&self) -> Option<(u32, u64)> {
        let (slot, state) = self.io.slots.iter().enumerate().min_by_key(|(_, s)| s.submit_ns)?;
        (state.submit_ns != IDLE_NS).then_some((slot as u32, state.submit_ns))
    }

    /// A slot with an I/O in flight, with its submit time, searched from where the last
    /// search ended.
    #[inline]
    fn any_in_flight(&mut self) -> Option<(u32, u64)> {
        let depth = self.io.slots.len() as u32;
        let mut slot = self.tallies.watch.cursor;
        for _ in 0..depth {
            slot = if slot + 1 >= depth { 0 } else { slot + 1 };
            let submit_ns = self.io.slots[slot as usize].submit_ns;
            if submit_ns != IDLE_NS {
                self.tallies.watch.cursor = slot;
                return Some((slot, submit_ns));
            }
        }
        None
    }
}
