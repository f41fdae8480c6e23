//! Stuck I/O, and stopping on time.
//!
//! Each worker publishes a heartbeat (`heartbeat`) while it waits for the kernel.
//! The coordinator thread supervises while it waits for the workers
//! (`supervise`): a worker whose wait has lasted longer than `--io-timeout`,
//! or whose named I/O was already older than `--io-timeout` when the wait
//! began (one I/O stuck while the others complete), is reported with that
//! I/O's file and offset, the run is stopped, and the worker is abandoned:
//! its thread is not joined, the report is printed without its figures and
//! the process exits (a thread stuck in the kernel cannot be killed, but it
//! does not keep the process from reporting; its buffers stay allocated, so
//! nothing is freed under the kernel).
//!
//! After SIGINT or SIGTERM, workers stop at their next batch; one that has not
//! stopped `STOP_GRACE_NS` later (a long synchronous I/O, or a drain waiting
//! for slow in-flight I/O) is abandoned the same way, so that the partial
//! report comes out within about a second of the signal.

use crate::io::worker::heartbeat::{Heartbeat, Waiting};
use crate::io::worker::{RunControl, WorkerResult, stop_code};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long workers have to stop after SIGINT/SIGTERM before they are abandoned.
pub const STOP_GRACE_NS: u64 = 1_000_000_000;

/// Why a worker was left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbandonCause {
    /// An I/O did not complete within `--io-timeout`.
    IoTimeout,
    /// It had not stopped `STOP_GRACE_NS` after SIGINT/SIGTERM.
    Signal,
    /// It had not stopped `--io-timeout` after the run was stopped for another reason.
    NoStop,
}

impl AbandonCause {
    pub fn name(self) -> &'static str {
        match self {
            AbandonCause::IoTimeout => "io_timeout",
            AbandonCause::Signal => "signal",
            AbandonCause::NoStop => "no_stop",
        }
    }
}

/// A worker whose thread was not joined.
#[derive(Clone, Copy, Debug)]
pub struct Abandoned {
    pub index: u32,
    pub cause: AbandonCause,
    /// Its heartbeat when it was abandoned (None: it was not waiting for I/O).
    pub waiting: Option<Waiting>,
    /// Clock time it was abandoned.
    pub at_ns: u64,
}

/// The workers that finished (by index) and those left behind.
pub struct Supervised {
    pub finished: Vec<WorkerResult>,
    pub abandoned: Vec<Abandoned>,
}

/// Waits for the workers (`handles[i]` is worker i; each sends its index on `done` as
/// it ends), watching their heartbeats and the stop word, and abandons the ones that
/// are stuck (see the module documentation). `io_timeout_ns` 0 turns the I/O timeout off.
pub fn supervise(
    mut handles: Vec<Option<JoinHandle<WorkerResult>>>,
    done: Receiver<u32>,
    control: &RunControl,
    io_timeout_ns: u64,
    on_tick: &mut dyn FnMut(),
) -> Supervised {
    let poll = Duration::from_nanos(if io_timeout_ns == 0 { 100_000_000 } else { io_timeout_ns / 10 })
        .clamp(Duration::from_millis(5), Duration::from_millis(100));
    let mut finished = Vec::with_capacity(handles.len());
    let mut abandoned = Vec::new();
    let mut stop_seen_ns: Option<u64> = None;
    let join = |h: JoinHandle<WorkerResult>| h.join().unwrap_or_else(|_| panic!("a worker thread panicked"));
    loop {
        match done.recv_timeout(poll) {
            Ok(i) => {
                if let Some(h) = handles.get_mut(i as usize).and_then(Option::take) {
                    finished.push(join(h));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // Every worker thread has ended (some may have panicked before sending).
                for h in handles.iter_mut().filter_map(Option::take) {
                    finished.push(join(h));
                }
            }
        }
        // Threads that ended without a message (a panic) are joined here.
        for slot in handles.iter_mut() {
            if slot.as_ref().is_some_and(JoinHandle::is_finished) {
                finished.push(join(slot.take().expect("checked")));
            }
        }
        if handles.iter().all(Option::is_none) {
            break;
        }
        on_tick();
        let now = control.clock.now_ns();
        let word = control.stop.load(Ordering::Relaxed);
        if word != stop_code::RUNNING && stop_seen_ns.is_none() {
            stop_seen_ns = Some(now);
        }
        let signalled = stop_code::is_signal(word);
        for (i, slot) in handles.iter_mut().enumerate() {
            if slot.is_none() {
                continue;
            }
            let waiting = control.heartbeat(i).and_then(Heartbeat::read);
            let timed_out = io_timeout_ns > 0 && waiting.is_some_and(|w| w.overdue(now, io_timeout_ns));
            let grace_over = |grace_ns: u64| stop_seen_ns.is_some_and(|t| now.saturating_sub(t) > grace_ns);
            let cause = if timed_out {
                Some(AbandonCause::IoTimeout)
            } else if signalled && grace_over(STOP_GRACE_NS) {
                Some(AbandonCause::Signal)
            } else if !signalled && io_timeout_ns > 0 && grace_over(io_timeout_ns.max(STOP_GRACE_NS)) {
                Some(AbandonCause::NoStop)
            } else {
                None
            };
            if let Some(cause) = cause {
                if cause == AbandonCause::IoTimeout {
                    let _ = control.stop.compare_exchange(
                        stop_code::RUNNING,
                        stop_code::FAILED,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
                // Dropping the handle detaches the thread: it is never joined.
                drop(slot.take());
                abandoned.push(Abandoned { index: i as u32, cause, waiting, at_ns: now });
            }
        }
        if handles.iter().all(Option::is_none) {
            break;
        }
    }
    finished.sort_by_key(|w| w.index);
    Supervised { finished, abandoned }
}
