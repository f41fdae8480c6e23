//! What all workers of a run share: the clock, the stop word, the start line and the
//! heartbeats the watchdog reads; and the start word (`StartWord`), which a run owns, or
//! shares with the other runs of a job file's phase so that one call releases them all.
//!
//! Workers read it once per batch (relaxed loads); only the coordinator and the start
//! line take its mutex, never a worker in its loop.

use crate::base::primitives::clock::Clock;
use crate::io::worker::heartbeat::Heartbeat;
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

/// The start of one window: the word workers sleep on until it is set, and the instant
/// it was set, on the run's clock and on the wall clock. A run owns one; the runs of the
/// jobs of one phase share one (`RunControl::sharing`), set once when the last of them is
/// ready, so that every worker of every job is released by one call at one instant.
pub struct StartWord {
    pub clock: Clock,
    /// 0 until set, then `GO` or `CALLED_OFF`.
    word: AtomicU32,
    /// The start, stored before `word` is set.
    start_ns: AtomicU64,
    start_unix_ns: AtomicU64,
    /// Serialises `set` (the first call wins); never taken by a worker.
    setting: Mutex<()>,
}

const GO: u32 = 1;
const CALLED_OFF: u32 = 2;

impl StartWord {
    pub fn new(clock: Clock) -> Self {
        Self {
            clock,
            word: AtomicU32::new(0),
            start_ns: AtomicU64::new(0),
            start_unix_ns: AtomicU64::new(0),
            setting: Mutex::new(()),
        }
    }

    /// Releases every worker waiting on this word (`go`), or calls their start off. Only
    /// the first call sets it; later ones change nothing. Returns the start when released.
    pub fn set(&self, go: bool) -> Option<u64> {
        let _one = self.setting.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.word.load(Ordering::Acquire) == 0 {
            let start_ns = self.clock.now_ns();
            let unix_ns = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos().min(u128::from(u64::MAX)) as u64);
            self.start_ns.store(start_ns, Ordering::Relaxed);
            self.start_unix_ns.store(unix_ns, Ordering::Relaxed);
            crate::base::sys::futex::set_and_wake_all(&self.word, if go { GO } else { CALLED_OFF });
        }
        self.started()
    }

    /// Waits until the word is set; the start when released.
    pub fn wait(&self) -> Option<u64> {
        crate::base::sys::futex::wait_while_zero(&self.word);
        self.started()
    }

    /// The start, once released (`None` while unset or called off).
    fn started(&self) -> Option<u64> {
        (self.word.load(Ordering::Acquire) == GO).then(|| self.start_ns.load(Ordering::Relaxed))
    }

    /// The start on the wall clock (ns since the Unix epoch), once released; 0 before.
    pub fn start_unix_ns(&self) -> u64 {
        if self.started().is_some() { self.start_unix_ns.load(Ordering::Relaxed) } else { 0 }
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
    /// The start line's word: the run's own, or its phase's.
    start: Arc<StartWord>,
    /// `start` is shared with the other jobs of a phase: it is set by the phase's start
    /// line (`StartLine::open`), never by `release`.
    shared_start: bool,
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
}

impl RunControl {
    pub fn new(clock: Clock, stop: Arc<AtomicUsize>) -> Self {
        Self::with_start(Arc::new(StartWord::new(clock)), false, stop)
    }

    /// A run whose workers wait on `start`, shared with the other jobs of its phase: the
    /// phase's start line sets it once every job is ready (`release` only waits for it).
    pub fn sharing(start: Arc<StartWord>, stop: Arc<AtomicUsize>) -> Self {
        Self::with_start(start, true, stop)
    }

    fn with_start(start: Arc<StartWord>, shared_start: bool, stop: Arc<AtomicUsize>) -> Self {
        Self {
            clock: start.clock,
            stop,
            gate: Mutex::new(Gate::default()),
            gate_changed: Condvar::new(),
            start,
            shared_start,
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
        let go = !(call_off || gate.setup_failed);
        drop(gate);
        if self.shared_start {
            // The phase's start line set the word (or will, once every job is ready): a job
            // that does not go brought its failure there first, so the word is called off.
            return self.start.wait();
        }
        self.start.set(go)
    }

    /// The window's start on the wall clock (ns since the Unix epoch), once released.
    pub fn start_unix_ns(&self) -> u64 {
        self.start.start_unix_ns()
    }

    /// The worker's side: reports set-up done and waits for the start.
    /// Returns the start time, or `None` if the run is called off.
    pub(super) fn wait_for_start(&self, setup_ok: bool) -> Option<u64> {
        let mut gate = self.gate.lock().expect("start gate");
        gate.arrived += 1;
        gate.setup_failed |= !setup_ok;
        drop(gate);
        self.gate_changed.notify_all();
        let start = self.start.wait();
        if setup_ok { start } else { None }
    }
}
