//! A worker's heartbeat: what it publishes while it waits for the kernel, so
//! that the watchdog (`watchdog`) can tell a stuck I/O from a slow run.
//!
//! Each worker publishes a heartbeat when it starts waiting for the kernel
//! (before an inline I/O, before submitting and reaping a batch) and clears it
//! when the wait returns: relaxed stores under a sequence counter, once per
//! batch, with no read-modify-write and no clock read of their own (the
//! worker passes the time it already read). The heartbeat names one I/O in
//! flight: the request itself for engines that complete inline; for queued
//! engines an I/O in flight, kept while it stays in flight (each later wait
//! then only stores its start), replaced when it completes, and at most every
//! `SCAN_INTERVAL_NS` the oldest I/O in flight (a scan of the slots).
//!
//! It knows nothing of workers or of the watchdog: both depend on it.

use crate::io::engine::Op;
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// Queued engines look for their oldest I/O in flight at most this often.
pub const SCAN_INTERVAL_NS: u64 = 100_000_000;

/// One I/O in flight, as a heartbeat names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlightIo {
    pub op: Op,
    /// Index of the target among the run's targets.
    pub target: u32,
    pub offset_bytes: u64,
    /// Clock time it was handed to the engine.
    pub submit_ns: u64,
}

/// What a waiting worker published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Clock time the wait began.
    pub since_ns: u64,
    /// I/Os in flight when it began.
    pub in_flight: u64,
    /// One of them (the oldest known), if the worker could name one.
    pub io: Option<InFlightIo>,
}

impl Waiting {
    /// Whether this wait shows an I/O that did not complete within `timeout_ns` by `now_ns`:
    /// the wait itself has lasted longer (everything in flight is stuck), or the named I/O
    /// was already older than that when the wait began (one I/O stuck among others).
    pub fn overdue(&self, now_ns: u64, timeout_ns: u64) -> bool {
        now_ns.saturating_sub(self.since_ns) > timeout_ns
            || self.io.is_some_and(|io| self.since_ns.saturating_sub(io.submit_ns) > timeout_ns)
    }

    /// How long the named I/O (else the wait) has been in flight at `now_ns`.
    pub fn age_ns(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.io.map_or(self.since_ns, |io| io.submit_ns.min(self.since_ns)))
    }
}

/// Published by one worker, read by the coordinator. Aligned to its own cache
/// lines so that workers never share one.
#[repr(align(128))]
#[derive(Debug, Default)]
pub struct Heartbeat {
    /// Sequence counter: odd while the worker writes (a seqlock with one writer).
    seq: AtomicU64,
    /// Clock time the current wait began; 0 when not waiting.
    since_ns: AtomicU64,
    in_flight: AtomicU64,
    /// 0: no I/O named; else (target + 1) << 1 | (1 for writes).
    io_where: AtomicU64,
    io_offset: AtomicU64,
    io_submit_ns: AtomicU64,
}

impl Heartbeat {
    /// The worker starts waiting for the kernel at `since_ns` with `in_flight` I/Os out.
    /// Only the worker owning this heartbeat calls it.
    #[inline(always)]
    pub fn waiting(&self, since_ns: u64, in_flight: usize, io: Option<InFlightIo>) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        self.since_ns.store(since_ns.max(1), Ordering::Relaxed);
        self.in_flight.store(in_flight as u64, Ordering::Relaxed);
        match io {
            Some(io) => {
                // Three bits name the op (a stuck fdatasync or trim is named as one).
                let op_bits = match io.op {
                    Op::Read => 0,
                    Op::Write => 1,
                    Op::Fsync => 2,
                    Op::Fdatasync => 3,
                    Op::Trim => 4,
                };
                self.io_where.store((u64::from(io.target) + 1) << 3 | op_bits, Ordering::Relaxed);
                self.io_offset.store(io.offset_bytes, Ordering::Relaxed);
                self.io_submit_ns.store(io.submit_ns, Ordering::Relaxed);
            }
            None => self.io_where.store(0, Ordering::Relaxed),
        }
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// The worker starts another wait at `since_ns`, and the I/O it named last is still
    /// in flight: only the wait's start and the count change (two relaxed stores; a reader
    /// combining them with the named I/O still sees an I/O in flight since then).
    #[inline(always)]
    pub fn still_waiting(&self, since_ns: u64, in_flight: usize) {
        self.since_ns.store(since_ns.max(1), Ordering::Relaxed);
        self.in_flight.store(in_flight as u64, Ordering::Relaxed);
    }

    /// The wait returned.
    #[inline(always)]
    pub fn done_waiting(&self) {
        self.since_ns.store(0, Ordering::Relaxed);
    }

    /// What the worker published, if it is waiting. A snapshot that keeps changing
    /// under the reader (a worker completing I/O very fast) reads as not waiting.
    pub fn read(&self) -> Option<Waiting> {
        for _ in 0..64 {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1 & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let since_ns = self.since_ns.load(Ordering::Relaxed);
            let in_flight = self.in_flight.load(Ordering::Relaxed);
            let io_where = self.io_where.load(Ordering::Relaxed);
            let offset_bytes = self.io_offset.load(Ordering::Relaxed);
            let submit_ns = self.io_submit_ns.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) != s1 {
                continue;
            }
            if since_ns == 0 {
                return None;
            }
            let io = (io_where != 0).then(|| InFlightIo {
                op: match io_where & 7 {
                    0 => Op::Read,
                    1 => Op::Write,
                    2 => Op::Fsync,
                    3 => Op::Fdatasync,
                    _ => Op::Trim,
                },
                target: ((io_where >> 3) - 1) as u32,
                offset_bytes,
                submit_ns,
            });
            return Some(Waiting { since_ns, in_flight, io });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_round_trip() {
        let hb = Heartbeat::default();
        assert_eq!(hb.read(), None);
        let io = InFlightIo { op: Op::Write, target: 3, offset_bytes: 4096, submit_ns: 10 };
        hb.waiting(20, 32, Some(io));
        assert_eq!(hb.read(), Some(Waiting { since_ns: 20, in_flight: 32, io: Some(io) }));
        hb.done_waiting();
        assert_eq!(hb.read(), None);
        hb.waiting(30, 1, None);
        assert_eq!(hb.read(), Some(Waiting { since_ns: 30, in_flight: 1, io: None }));
        // A stuck flush is named as what it is.
        for op in [Op::Read, Op::Fsync, Op::Fdatasync] {
            let io = InFlightIo { op, target: 7, offset_bytes: 0, submit_ns: 40 };
            hb.waiting(50, 1, Some(io));
            assert_eq!(hb.read().and_then(|w| w.io), Some(io));
        }
    }

    #[test]
    fn overdue_when_the_wait_or_the_named_io_is_too_old() {
        let io = InFlightIo { op: Op::Read, target: 0, offset_bytes: 0, submit_ns: 100 };
        let w = Waiting { since_ns: 1_000, in_flight: 4, io: Some(io) };
        assert!(!w.overdue(1_500, 1_000));
        assert!(w.overdue(2_001, 1_000), "the wait lasted longer than the timeout");
        assert_eq!(w.age_ns(2_001), 1_901);
        let old = Waiting { since_ns: 5_000, in_flight: 4, io: Some(io) };
        assert!(old.overdue(5_001, 1_000), "the named I/O was older than the timeout when the wait began");
        let fresh = Waiting { since_ns: 5_000, in_flight: 1, io: None };
        assert!(!fresh.overdue(5_500, 1_000));
    }

    #[test]
    fn a_reader_never_sees_a_torn_snapshot() {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        let hb = Arc::new(Heartbeat::default());
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (hb, stop) = (Arc::clone(&hb), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut i = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    // Every field derives from i: a mix of two publications is detectable.
                    let io =
                        InFlightIo { op: Op::Read, target: (i % 1000) as u32, offset_bytes: i * 2, submit_ns: i * 3 };
                    hb.waiting(i, i as usize, Some(io));
                    i += 1;
                }
            })
        };
        // On a busy machine the writer may start late: read only once it has published.
        while hb.seq.load(Ordering::Acquire) == 0 {
            std::thread::yield_now();
        }
        let mut seen = 0;
        for _ in 0..200_000 {
            if let Some(w) = hb.read() {
                let i = w.since_ns;
                let io = w.io.expect("named");
                assert_eq!(
                    (w.in_flight, io.offset_bytes, io.submit_ns, u64::from(io.target)),
                    (i, i * 2, i * 3, i % 1000)
                );
                seen += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert!(seen > 0);
    }
}
