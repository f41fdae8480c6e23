//! What all workers of a run share: the clock, the stop word, the start line and the
//! heartbeats the watchdog reads.
//!
//! Workers read it once per batch (relaxed loads); only the coordinator and the start
//! line take its mutex, never a worker in its loop.

use crate::clock::Clock;
use crate::heartbeat::Heartbeat;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Values of the shared stop word. Signals store their exit code in it.
pub mod stop_code {
    pub const RUNNING: usize = 0;
    /// A worker failed: the others stop too.
    pub const FAILED: usize = 1;
    /// `--steady-state` was reached (set by the sampler in the run's own stop word).
    pub const STEADY: usize = 2;

    /// The word holds a signal's exit code (SIGINT, SIGTERM, SIGHUP), not a reason of the run's own.
    pub fn is_signal(word: usize) -> bool {
        !matches!(word, RUNNING | FAILED | STEADY)
    }
}

/// What all workers of a run share: the clock, the stop word and the start line.
pub struct RunControl {
    pub clock: Clock,
    /// 0 while running; otherwise why to stop (`stop_code`, or 130/143 for signals).
    pub stop: Arc<AtomicUsize>,
    gate: Mutex<Gate>,
    gate_changed: Condvar,
    /// The time series' current interval, advanced by the sampler; workers look at it once per batch.
    pub epoch: AtomicU64,
    /// The start line's word: 0 until released, then 1 (go) or 2 (called off).
    released: AtomicU32,
    /// The start time, stored before `released` is set.
    start_ns: AtomicU64,
    /// One heartbeat per worker, for the watchdog (`watchdog`); empty when not watched.
    heartbeats: Box<[Heartbeat]>,
    /// Failed I/Os of the whole run so far (incremented only when an I/O fails);
    /// each worker's plan holds a clone (`WorkerPlan::errors_seen`).
    pub errors_seen: Arc<AtomicU64>,
}

/// The start line: workers arrive once set up; the coordinator releases them together.
/// Released workers leave through `futex` (all woken by one call), not through the
/// condition variable, so that they do not queue for the gate's mutex on their way out.
#[derive(Default)]
struct Gate {
    arrived: usize,
    setup_failed: bool,
    /// `Some(start_ns)` once released; `None` while waiting.
    released: Option<u64>,
    called_off: bool,
}

impl RunControl {
    pub fn new(clock: Clock, stop: Arc<AtomicUsize>) -> Self {
        Self {
            clock,
            stop,
            gate: Mutex::new(Gate::default()),
            gate_changed: Condvar::new(),
            released: AtomicU32::new(0),
            start_ns: AtomicU64::new(0),
            heartbeats: Box::default(),
            errors_seen: Arc::new(AtomicU64::new(0)),
            epoch: AtomicU64::new(0),
        }
    }

    /// Gives each of `workers` workers a heartbeat the watchdog can read.
    pub fn with_heartbeats(mut self, workers: usize) -> Self {
        self.heartbeats = (0..workers).map(|_| Heartbeat::default()).collect();
        self
    }

    /// Worker `index`'s heartbeat, when the run is watched.
    #[inline(always)]
    pub fn heartbeat(&self, index: usize) -> Option<&Heartbeat> {
        self.heartbeats.get(index)
    }

    /// Waits until `workers` workers have arrived at the start line, without releasing
    /// them; true if all of them set up. Lets the coordinator do what must happen between
    /// "everyone is ready" and the start (the ranks of a cluster meeting, `--start-at`).
    pub fn wait_for_arrivals(&self, workers: usize) -> bool {
        let mut gate = self.gate.lock().expect("start gate");
        while gate.arrived < workers {
            gate = self.gate_changed.wait(gate).expect("start gate");
        }
        !gate.setup_failed
    }

    /// The coordinator's side of the start line: waits until `workers` workers have
    /// arrived set up, then releases them together. Returns the start time, or `None`
    /// if a worker failed to set up or `call_off` is true (the workers are then
    /// released to exit without doing I/O).
    pub fn release(&self, workers: usize, call_off: bool) -> Option<u64> {
        let mut gate = self.gate.lock().expect("start gate");
        while gate.arrived < workers {
            gate = self.gate_changed.wait(gate).expect("start gate");
        }
        let start_ns = self.clock.now_ns();
        gate.called_off = call_off || gate.setup_failed;
        gate.released = Some(start_ns);
        let go = !gate.called_off;
        self.start_ns.store(start_ns, Ordering::Relaxed);
        drop(gate);
        crate::futex::set_and_wake_all(&self.released, if go { 1 } else { 2 });
        go.then_some(start_ns)
    }

    /// The worker's side: reports set-up done and waits for the start.
    /// Returns the start time, or `None` if the run is called off.
    pub(super) fn wait_for_start(&self, setup_ok: bool) -> Option<u64> {
        let mut gate = self.gate.lock().expect("start gate");
        gate.arrived += 1;
        gate.setup_failed |= !setup_ok;
        drop(gate);
        self.gate_changed.notify_all();
        crate::futex::wait_while_zero(&self.released);
        let go = self.released.load(Ordering::Acquire) == 1;
        if go && setup_ok { Some(self.start_ns.load(Ordering::Relaxed)) } else { None }
    }
}
