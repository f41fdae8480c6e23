//! The hot loop: one worker thread choosing blocks and ops, handing them to
//! its engine in batches, and recording each completion's latency.
//!
//! Rules (DESIGN.md): per I/O no allocation, no lock, no atomic
//! read-modify-write, no formatting, at most two clock reads. The stop flag
//! is read with a relaxed load once per batch. Everything is allocated before
//! the start barrier; the result is handed back once, at the end.
//!
//! Timing: for engines that complete inline (sync) the clock is read just
//! before and just after the system call. For queued engines the clock is
//! read once per batch, right after `reap` returns: that instant is the
//! completion time of every I/O in the batch and the submission time of every
//! I/O queued in reply (docs/engines.md states the bound this puts on error).

use crate::access::BlockSource;
use crate::buffer::SlotBuffers;
use crate::clock::Clock;
use crate::data;
use crate::engine::{Completion, Engine, EngineOptions, EngineSetup, Op, Queued, Request};
use crate::rng::Rng;
use crate::rusage;
use crate::stats::{CpuTimes, OpStats};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Values of the shared stop word. Signals store their exit code in it.
pub mod stop_code {
    pub const RUNNING: usize = 0;
    /// A worker failed: the others stop too.
    pub const FAILED: usize = 1;
}

/// What all workers of a run share: the clock, the stop word and the start line.
pub struct RunControl {
    pub clock: Clock,
    /// 0 while running; otherwise why to stop (`stop_code`, or 130/143 for signals).
    pub stop: Arc<AtomicUsize>,
    gate: Mutex<Gate>,
    gate_changed: Condvar,
}

/// The start line: workers arrive once set up; the coordinator releases them together.
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
        Self { clock, stop, gate: Mutex::new(Gate::default()), gate_changed: Condvar::new() }
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
        drop(gate);
        self.gate_changed.notify_all();
        go.then_some(start_ns)
    }

    /// The worker's side: reports set-up done and waits for the start.
    /// Returns the start time, or `None` if the run is called off.
    fn wait_for_start(&self, setup_ok: bool) -> Option<u64> {
        let mut gate = self.gate.lock().expect("start gate");
        gate.arrived += 1;
        gate.setup_failed |= !setup_ok;
        self.gate_changed.notify_all();
        while gate.released.is_none() {
            gate = self.gate_changed.wait(gate).expect("start gate");
        }
        if gate.called_off || !setup_ok { None } else { gate.released }
    }
}

/// One of the worker's files: its descriptor and where its blocks sit in the region.
#[derive(Clone, Copy, Debug)]
pub struct WorkerFile {
    pub fd: RawFd,
    /// Number of the file's first block in the region.
    pub first_block: u64,
}

/// Everything a worker needs, decided by the coordinator before the start.
pub struct WorkerPlan {
    pub index: u32,
    pub seed: u64,
    pub block_size_bytes: u64,
    /// Slots (I/Os in flight at most); 1 for engines that complete inline.
    pub queue_depth: u32,
    pub read_percent: u8,
    pub source: BlockSource,
    pub files: Vec<WorkerFile>,
    pub buffer_align_bytes: usize,
    /// Measurement ends at start + this; `None` runs until the source is exhausted.
    pub duration_ns: Option<u64>,
    /// The files were opened with O_DIRECT.
    pub direct: bool,
    pub engine_options: EngineOptions,
}

/// Why a worker stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerStop {
    Deadline,
    /// Its share of the region was done (or it had no share).
    Done,
    /// The stop word was set (signal, or another worker failed).
    Stopped,
    /// One of its I/Os failed.
    Failed,
    /// It could not start.
    SetupFailed,
}

/// A failed I/O, as data (the coordinator names the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoFailure {
    pub op: Op,
    pub file: u32,
    pub offset_bytes: u64,
    pub kind: IoFailureKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoFailureKind {
    /// The kernel returned this errno.
    Errno(i32),
    /// Fewer bytes than asked were moved and no more could be (end of file).
    Short { done_bytes: u64, len_bytes: u64 },
}

/// What a worker hands back, once, at the end.
pub struct WorkerResult {
    pub index: u32,
    pub read: OpStats,
    pub write: OpStats,
    /// Clock time it stopped issuing (deadline, last completion, or when it saw the stop word).
    pub end_ns: u64,
    pub cpu: CpuTimes,
    pub stop: WorkerStop,
    pub failure: Option<IoFailure>,
    /// The engine could not start, or stopped working mid-run.
    pub engine_error: Option<String>,
    pub engine_setup: Vec<(String, String)>,
    /// Notes from the engine (fallbacks taken at set-up), said once by the coordinator.
    pub engine_notes: Vec<String>,
}

/// Per-slot facts about the request in flight on it.
#[derive(Clone, Copy, Debug)]
struct SlotState {
    op: Op,
    file: u32,
    offset_bytes: u64,
    submit_ns: u64,
}

/// How reads and writes are chosen.
enum OpMix {
    AllReads,
    AllWrites,
    /// Read when a random draw is below `read_below`.
    Mixed {
        rng: Rng,
        read_below: u64,
    },
}

impl OpMix {
    fn new(read_percent: u8, seed: u64, worker: u32) -> Self {
        match read_percent {
            100 => OpMix::AllReads,
            0 => OpMix::AllWrites,
            p => OpMix::Mixed {
                rng: Rng::new(seed, 0x6d69_7800 + u64::from(worker)),
                read_below: ((u128::from(p) << 64) / 100) as u64,
            },
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Op {
        match self {
            OpMix::AllReads => Op::Read,
            OpMix::AllWrites => Op::Write,
            OpMix::Mixed { rng, read_below } => {
                if rng.next_u64() < *read_below {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }
}

/// Runs one worker to the end. Called on the worker's own thread.
pub fn run<E: Engine>(plan: WorkerPlan, control: &RunControl) -> WorkerResult {
    let index = plan.index;
    let failed_setup = |message: String| {
        let _ = control.wait_for_start(false);
        WorkerResult {
            index,
            read: OpStats::new(),
            write: OpStats::new(),
            end_ns: 0,
            cpu: CpuTimes::default(),
            stop: WorkerStop::SetupFailed,
            failure: None,
            engine_error: Some(message),
            engine_setup: Vec::new(),
            engine_notes: Vec::new(),
        }
    };
    let mut worker = match Worker::<E>::new(plan) {
        Ok(w) => w,
        Err(message) => return failed_setup(message),
    };
    let Some(start_ns) = control.wait_for_start(true) else {
        return worker.finish(control, WorkerStop::Stopped, 0, CpuTimes::default());
    };
    let cpu_start = rusage::thread_cpu();
    let deadline_ns = worker.duration_ns.map_or(u64::MAX, |d| start_ns.saturating_add(d));
    let (stop, end_ns) = if E::CAPS.completes_inline {
        worker.run_inline(control, deadline_ns)
    } else {
        worker.run_queued(control, deadline_ns)
    };
    let cpu = rusage::thread_cpu().since(&cpu_start);
    worker.finish(control, stop, end_ns, cpu)
}

/// The worker's state. `engine` is declared first so it is dropped (and has
/// drained any I/O in flight) before the buffers it points into are freed.
struct Worker<E: Engine> {
    engine: E,
    buffers: SlotBuffers,
    slots: Box<[SlotState]>,
    completions: Box<[Completion]>,
    source: BlockSource,
    mix: OpMix,
    files: Box<[WorkerFile]>,
    block_size_bytes: u64,
    duration_ns: Option<u64>,
    write_sequence: u64,
    read: OpStats,
    write: OpStats,
    failure: Option<IoFailure>,
    engine_error: Option<String>,
    index: u32,
}

impl<E: Engine> Worker<E> {
    fn new(plan: WorkerPlan) -> Result<Self, String> {
        let depth = plan.queue_depth.max(1);
        let mut buffers = SlotBuffers::new(depth as usize, plan.block_size_bytes as usize, plan.buffer_align_bytes)?;
        if plan.read_percent < 100 {
            let mut rng = Rng::new(plan.seed, 0xda7a_0000 + u64::from(plan.index));
            for slot in 0..depth {
                data::fill_random(buffers.slot_mut(slot), &mut rng);
            }
        }
        let fds: Vec<RawFd> = plan.files.iter().map(|f| f.fd).collect();
        let setup = EngineSetup {
            fds: &fds,
            buffers: buffers.region(),
            queue_depth: depth,
            direct: plan.direct,
            options: &plan.engine_options,
        };
        let engine = E::open(&setup).map_err(|e| e.to_string())?;
        Ok(Self {
            engine,
            buffers,
            slots: vec![SlotState { op: Op::Read, file: 0, offset_bytes: 0, submit_ns: 0 }; depth as usize]
                .into_boxed_slice(),
            completions: vec![Completion::default(); depth as usize].into_boxed_slice(),
            source: plan.source,
            mix: OpMix::new(plan.read_percent, plan.seed, plan.index),
            files: plan.files.into_boxed_slice(),
            block_size_bytes: plan.block_size_bytes,
            duration_ns: plan.duration_ns,
            write_sequence: 0,
            read: OpStats::new(),
            write: OpStats::new(),
            failure: None,
            engine_error: None,
            index: plan.index,
        })
    }

    /// Chooses the next I/O for `slot`, or `None` when the worker's share is done.
    #[inline(always)]
    fn next_request(&mut self, slot: u32) -> Option<Request> {
        let block = self.source.next_block()?;
        let file = self.locate(block);
        let offset_bytes = (block - self.files[file as usize].first_block) * self.block_size_bytes;
        let op = self.mix.next();
        if op == Op::Write {
            self.write_sequence += 1;
            data::stamp_write(self.buffers.slot_mut(slot), offset_bytes, self.write_sequence);
        }
        let state = &mut self.slots[slot as usize];
        state.op = op;
        state.file = file;
        state.offset_bytes = offset_bytes;
        Some(Request { slot, op, file, offset_bytes, len_bytes: self.block_size_bytes as u32 })
    }

    /// Which file holds region block `block` (targets are few: a short scan).
    #[inline(always)]
    fn locate(&self, block: u64) -> u32 {
        let mut file = 0;
        while file + 1 < self.files.len() && self.files[file + 1].first_block <= block {
            file += 1;
        }
        file as u32
    }

    /// Accounts one completion; `counts` is false for I/O that finished after the window.
    #[inline(always)]
    fn complete(&mut self, slot: u32, result: i64, lat_ns: u64, counts: bool) {
        let state = self.slots[slot as usize];
        if result == self.block_size_bytes as i64 {
            if counts {
                match state.op {
                    Op::Read => self.read.record(self.block_size_bytes, lat_ns),
                    Op::Write => self.write.record(self.block_size_bytes, lat_ns),
                }
            }
        } else if self.failure.is_none() {
            let kind = if result < 0 {
                IoFailureKind::Errno((-result) as i32)
            } else {
                IoFailureKind::Short { done_bytes: result as u64, len_bytes: self.block_size_bytes }
            };
            self.failure = Some(IoFailure { op: state.op, file: state.file, offset_bytes: state.offset_bytes, kind });
        }
    }

    /// Loop for engines that complete inside `queue` (sync): two clock reads per I/O.
    fn run_inline(&mut self, control: &RunControl, deadline_ns: u64) -> (WorkerStop, u64) {
        let clock = control.clock;
        loop {
            let Some(req) = self.next_request(0) else {
                return (WorkerStop::Done, clock.now_ns());
            };
            let t0 = clock.now_ns();
            // SAFETY: slot 0 exists; no reference to its bytes is held across the call,
            // and an inline engine is done with the slot when `queue` returns.
            let outcome = unsafe { self.engine.queue(req) };
            let t1 = clock.now_ns();
            let Queued::Done(result) = outcome else {
                unreachable!("{} declares completes_inline but queued a request", E::NAME);
            };
            if t1 > deadline_ns {
                return (WorkerStop::Deadline, deadline_ns);
            }
            self.complete(0, result, t1 - t0, true);
            if self.failure.is_some() {
                control.stop.store(stop_code::FAILED, Ordering::Relaxed);
                return (WorkerStop::Failed, t1);
            }
            if control.stop.load(Ordering::Relaxed) != stop_code::RUNNING {
                return (WorkerStop::Stopped, t1);
            }
        }
    }

    /// Queues `req`, submitting first if the engine is full. Returns whether it is now
    /// in flight (false: it completed at once and was accounted).
    #[inline(always)]
    fn push(&mut self, req: Request, now_ns: u64, clock: Clock) -> Result<bool, String> {
        self.slots[req.slot as usize].submit_ns = now_ns;
        loop {
            // SAFETY: the slot is free (its previous completion was reaped or it was never
            // used), and no reference to its bytes is held across this call.
            match unsafe { self.engine.queue(req) } {
                Queued::InFlight => return Ok(true),
                Queued::Done(result) => {
                    self.complete(req.slot, result, clock.now_ns().saturating_sub(now_ns), true);
                    return Ok(false);
                }
                Queued::Full => self.engine.submit().map_err(|e| e.to_string())?,
            }
        }
    }

    /// Loop for engines that queue (null, io_uring, libaio): one clock read per batch.
    fn run_queued(&mut self, control: &RunControl, deadline_ns: u64) -> (WorkerStop, u64) {
        let clock = control.clock;
        let depth = self.slots.len() as u32;
        let mut in_flight = 0usize;
        let mut exhausted = false;
        let mut now = clock.now_ns();
        for slot in 0..depth {
            let Some(req) = self.next_request(slot) else {
                exhausted = true;
                break;
            };
            match self.push(req, now, clock) {
                Ok(true) => in_flight += 1,
                Ok(false) => {}
                Err(message) => return self.engine_failure(control, message, in_flight),
            }
        }
        let stop = loop {
            if in_flight == 0 {
                break if self.failure.is_some() { WorkerStop::Failed } else { WorkerStop::Done };
            }
            // One call per batch: engines that can submit and wait in one system call do.
            let reaped = match self.engine.submit_and_reap(1, &mut self.completions) {
                Ok(n) => n,
                Err(e) => return self.engine_failure(control, e.to_string(), in_flight),
            };
            now = clock.now_ns();
            let past_deadline = now > deadline_ns;
            let stop_word = control.stop.load(Ordering::Relaxed);
            for i in 0..reaped {
                let Completion { slot, result } = self.completions[i];
                in_flight -= 1;
                let lat_ns = now - self.slots[slot as usize].submit_ns;
                self.complete(slot, result, lat_ns, !past_deadline);
                if past_deadline || stop_word != stop_code::RUNNING || exhausted || self.failure.is_some() {
                    continue;
                }
                match self.next_request(slot) {
                    Some(req) => match self.push(req, now, clock) {
                        Ok(true) => in_flight += 1,
                        Ok(false) => {}
                        Err(message) => return self.engine_failure(control, message, in_flight),
                    },
                    None => exhausted = true,
                }
            }
            if self.failure.is_some() {
                control.stop.store(stop_code::FAILED, Ordering::Relaxed);
                break WorkerStop::Failed;
            }
            if past_deadline {
                break WorkerStop::Deadline;
            }
            if stop_word != stop_code::RUNNING {
                break WorkerStop::Stopped;
            }
        };
        let end_ns = if stop == WorkerStop::Deadline { deadline_ns } else { now };
        self.drain(in_flight);
        (stop, end_ns)
    }

    /// Waits for I/O still in flight so no buffer is freed under the kernel.
    /// These completions are outside the window and are not counted.
    fn drain(&mut self, mut in_flight: usize) {
        while in_flight > 0 {
            match self.engine.submit_and_reap(in_flight, &mut self.completions) {
                Ok(0) | Err(_) => break,
                Ok(n) => in_flight = in_flight.saturating_sub(n),
            }
        }
    }

    fn engine_failure(&mut self, control: &RunControl, message: String, in_flight: usize) -> (WorkerStop, u64) {
        control.stop.store(stop_code::FAILED, Ordering::Relaxed);
        self.engine_error = Some(message);
        self.drain(in_flight);
        (WorkerStop::Failed, control.clock.now_ns())
    }

    fn finish(self, _control: &RunControl, stop: WorkerStop, end_ns: u64, cpu: CpuTimes) -> WorkerResult {
        let engine_setup = self.engine.setup_facts();
        let engine_notes = self.engine.notes();
        WorkerResult {
            index: self.index,
            read: self.read,
            write: self.write,
            end_ns,
            cpu,
            stop,
            failure: self.failure,
            engine_error: self.engine_error,
            engine_setup,
            engine_notes,
        }
    }
}
