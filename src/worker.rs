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
use crate::coverage::CoverageTracker;
use crate::data::{self, Pattern};
use crate::engine::{Completion, Engine, EngineOptions, EngineSetup, Op, Queued, Request};
use crate::errors::ErrorCounts;
use crate::heartbeat::{Heartbeat, InFlightIo, SCAN_INTERVAL_NS};
use crate::live::IntervalRecorder;
use crate::placement::{self, WorkerPlacement};
use crate::rng::Rng;
use crate::rusage;
use crate::stats::{CpuTimes, OpStats};
use crate::think::{self, Pacer, RateSpec, ThinkMode, ThinkSpec, Thinker};
use crate::verify::{self, Expect, Mismatch, VerifyCounts};
use hdrhistogram::Histogram;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
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
    fn wait_for_start(&self, setup_ok: bool) -> Option<u64> {
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

/// One of the worker's files: its descriptor and where its blocks sit in the region.
#[derive(Clone, Copy, Debug)]
pub struct WorkerFile {
    pub fd: RawFd,
    /// Number of the file's first block among the worker's files.
    pub first_block: u64,
    /// Which target of the run it is (index into the run's targets).
    pub target: u32,
}

/// Everything a worker needs, decided by the coordinator before the start.
pub struct WorkerPlan {
    pub index: u32,
    pub seed: u64,
    pub block_size_bytes: u64,
    /// Slots (I/Os in flight at most); 1 for engines that complete inline.
    pub queue_depth: u32,
    pub read_percent: u8,
    /// Block numbers relative to the worker's region.
    pub source: BlockSource,
    /// Where the region starts among the worker's files' blocks.
    pub region_first_block: u64,
    /// At most this many I/Os (`None`: no limit).
    pub ops_limit: Option<u64>,
    /// Tracks which blocks of the region were touched.
    pub coverage: Option<CoverageTracker>,
    pub files: Vec<WorkerFile>,
    pub buffer_align_bytes: usize,
    /// Measurement ends at start + this; `None` runs until the source is exhausted.
    pub duration_ns: Option<u64>,
    /// The files were opened with O_DIRECT.
    pub direct: bool,
    pub engine_options: EngineOptions,
    /// CPUs and NUMA node: applied on the worker's thread before its buffers are allocated.
    pub placement: WorkerPlacement,
    /// What writes put in blocks, and whether reads are verified.
    pub data: DataPlan,
    /// Think time and rate limit; `None` for both runs the unpaced loops.
    pub think: Option<ThinkSpec>,
    pub rate: Option<RateSpec>,
    /// Interval histograms for the time series and the live line, when wanted.
    pub interval: Option<IntervalRecorder>,
    /// Failed I/Os (run-wide, counted in `errors_seen`) after which the worker stops:
    /// 1 by default, `--max-errors N`, `u64::MAX` with `--continue-on-error` alone.
    pub error_limit: u64,
    /// The run-wide count of failed I/Os (`RunControl::errors_seen`).
    pub errors_seen: Arc<AtomicU64>,
}

/// What written blocks contain and how reads are checked.
#[derive(Clone, Copy, Debug)]
pub struct DataPlan {
    pub pattern: Pattern,
    pub seed: u64,
    pub verify: Option<VerifyPlan>,
}

#[derive(Clone, Copy, Debug)]
pub struct VerifyPlan {
    pub pattern: Pattern,
    pub max_reports: u32,
    /// Keep the sequence last written to each block of the region (4 bytes per
    /// block), to catch lost writes.
    pub track_sequences: bool,
    /// Distinguishes this run's writes from other runs' (high bits of sequences).
    pub run_nonce: u16,
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
    /// Index of the target among the run's targets.
    pub target: u32,
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

/// One target's figures in one worker.
pub struct TargetStats {
    pub target: u32,
    pub read: OpStats,
    pub write: OpStats,
}

/// Overwrites `read` and `write` with the worker's cumulative latency histograms, summed
/// over its targets (for the time series; see `live`).
fn snapshot(stats: &[TargetStats], read: &mut Histogram<u64>, write: &mut Histogram<u64>) {
    read.reset();
    write.reset();
    for t in stats {
        let _ = read.add(&t.read.latency);
        let _ = write.add(&t.write.latency);
    }
}

/// What a worker hands back, once, at the end.
pub struct WorkerResult {
    pub index: u32,
    /// All of its targets together.
    pub read: OpStats,
    pub write: OpStats,
    pub per_target: Vec<TargetStats>,
    pub coverage: Option<CoverageTracker>,
    /// Clock time it stopped issuing (deadline, last completion, or when it saw the stop word).
    pub end_ns: u64,
    pub cpu: CpuTimes,
    pub stop: WorkerStop,
    pub failure: Option<IoFailure>,
    /// The engine could not start, or stopped working mid-run.
    pub engine_error: Option<String>,
    pub engine_setup: Vec<(String, String)>,
    /// Verification counts and the first mismatches (with `--verify`).
    pub verify_counts: VerifyCounts,
    pub mismatches: Vec<Mismatch>,
    /// Measured cost of stamping and checking one verified block.
    pub verify_cost: VerifyCost,
    /// The CPU the worker was on when it finished (sched_getcpu).
    pub cpu_seen: Option<u32>,
    /// The NUMA node its buffers' first page is on (get_mempolicy).
    pub buffer_node_seen: Option<u32>,
    /// Time the engine took to make its writes durable after the window (mmap: msync),
    /// when it had anything to do. Not part of the window.
    pub sync_ns: Option<u64>,
    /// Think time asked for and spent, and rate slots dropped (paced runs).
    pub pacing: PacingCounts,
    /// Notes from the engine (fallbacks taken at set-up), said once by the coordinator.
    pub engine_notes: Vec<String>,
    /// Failed I/Os per op type and errno.
    pub errors: ErrorCounts,
}

/// Per-slot facts about the request in flight on it.
#[derive(Clone, Copy, Debug)]
struct SlotState {
    op: Op,
    file: u32,
    offset_bytes: u64,
    submit_ns: u64,
    /// Block number within the worker's region.
    region_block: u64,
    /// Sequence of the write on this slot.
    sequence: u64,
    /// The buffer still holds the (fixed) write pattern: no read has overwritten it.
    holds_pattern: bool,
}

/// Verification state of a worker (with `--verify`).
struct Verifier {
    plan: VerifyPlan,
    /// Region block in flight on each slot (`u64::MAX` when free): a block is never in
    /// flight twice, so no read races a write to it.
    in_flight: Box<[u64]>,
    /// Low 32 bits of the sequence this run last wrote to each region block (0: none).
    last_written: Vec<u32>,
    /// One block, to regenerate expected contents when a check fails.
    scratch: Vec<u8>,
    counts: VerifyCounts,
    mismatches: Vec<Mismatch>,
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

/// Times stamping (a write) and checking (a read) one verified block, before the
/// start line, so the report can say what verification costs without reading the
/// clock per I/O. Returns (stamp ns, check ns).
fn measure_verify_cost(plan: &WorkerPlan) -> VerifyCost {
    let Some(v) = plan.data.verify else { return VerifyCost::default() };
    let bs = plan.block_size_bytes as usize;
    let mut blocks = vec![vec![0u8; bs]; 8];
    let mut scratch = vec![0u8; bs];
    let rounds = (256 * 4096 / bs.max(1)).clamp(8, 256) as u64;
    let seed = plan.data.seed;
    let time = |f: &mut dyn FnMut(u64)| {
        for i in 0..4 {
            f(i); // warm up
        }
        let started = std::time::Instant::now();
        for i in 0..rounds {
            f(i);
        }
        (started.elapsed().as_nanos() as u64 / rounds).max(1)
    };
    let stamp_ns = time(&mut |i| verify::stamp(&mut blocks[(i % 8) as usize], v.pattern, seed, (i % 8) * bs as u64, 1));
    let check_ns = time(&mut |i| {
        let expect = Expect { seed, offset_bytes: (i % 8) * bs as u64, pattern: v.pattern, sequence: None };
        let _ = std::hint::black_box(verify::check(&blocks[(i % 8) as usize], &expect, &mut scratch));
    });
    VerifyCost { stamp_ns, check_ns }
}

/// Think time and rate figures of one worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacingCounts {
    pub think_requested_ns: u64,
    pub think_spent_ns: u64,
    pub thinks: u64,
    /// Rate slots that passed while the worker could not issue (the target was not reached).
    pub dropped_slots: u64,
}

/// Measured cost of verification per block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyCost {
    pub stamp_ns: u64,
    pub check_ns: u64,
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
            per_target: Vec::new(),
            coverage: None,
            end_ns: 0,
            cpu: CpuTimes::default(),
            stop: WorkerStop::SetupFailed,
            failure: None,
            engine_error: Some(message),
            engine_setup: Vec::new(),
            verify_counts: VerifyCounts::default(),
            mismatches: Vec::new(),
            verify_cost: VerifyCost::default(),
            cpu_seen: placement::bind::current_cpu(),
            buffer_node_seen: None,
            sync_ns: None,
            pacing: PacingCounts::default(),
            engine_notes: Vec::new(),
            errors: ErrorCounts::default(),
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
    let (stop, end_ns) = if worker.thinker.is_some() || worker.rate.is_some() {
        worker.run_paced(control, deadline_ns, start_ns)
    } else if E::CAPS.completes_inline {
        worker.run_inline(control, deadline_ns)
    } else {
        worker.run_queued(control, deadline_ns)
    };
    let cpu = rusage::thread_cpu().since(&cpu_start);
    let sync_ns = worker.sync_writes(control);
    let mut result = worker.finish(control, stop, end_ns, cpu);
    result.sync_ns = sync_ns;
    result
}

/// The worker's state. `engine` is declared first so it is dropped (and has
/// drained any I/O in flight) before the buffers it points into are freed.
struct Worker<E: Engine> {
    engine: E,
    buffers: SlotBuffers,
    slots: Box<[SlotState]>,
    completions: Box<[Completion]>,
    source: BlockSource,
    region_first_block: u64,
    remaining_ops: u64,
    coverage: Option<CoverageTracker>,
    mix: OpMix,
    files: Box<[WorkerFile]>,
    block_size_bytes: u64,
    duration_ns: Option<u64>,
    write_sequence: u64,
    /// Figures per file (index as `files`); totals are merged at the end.
    stats: Box<[TargetStats]>,
    failure: Option<IoFailure>,
    engine_error: Option<String>,
    index: u32,
    data: DataPlan,
    /// High bits of this worker's write sequences: worker index and run nonce.
    sequence_base: u64,
    verifier: Option<Verifier>,
    verify_cost: VerifyCost,
    thinker: Option<Thinker>,
    rate: Option<RateSpec>,
    pacing: PacingCounts,
    interval: Option<IntervalRecorder>,
    buffer_node_seen: Option<u32>,
    errors: ErrorCounts,
    error_limit: u64,
    errors_seen: Arc<AtomicU64>,
    watch: WatchState,
}

/// `SlotState::submit_ns` of a slot with no I/O in flight.
const IDLE_NS: u64 = u64::MAX;

/// What the worker keeps to name an I/O in flight in its heartbeat.
#[derive(Clone, Copy, Debug, Default)]
struct WatchState {
    /// The I/O the heartbeat names: (slot, its submit_ns), while it stays in flight.
    named: Option<(u32, u64)>,
    next_scan_ns: u64,
    /// Where the search for another I/O in flight starts.
    cursor: u32,
}

impl<E: Engine> Worker<E> {
    fn new(plan: WorkerPlan) -> Result<Self, String> {
        let depth = plan.queue_depth.max(1);
        // Bind first, then allocate and touch: the buffers' pages land on the worker's node.
        placement::apply_to_current_thread(&plan.placement)?;
        let mut buffers = SlotBuffers::new(depth as usize, plan.block_size_bytes as usize, plan.buffer_align_bytes)?;
        placement::bind_buffer(&plan.placement, buffers.region().base, buffers.len_bytes())?;
        buffers.touch_pages();
        let buffer_node_seen = placement::bind::node_of_address(buffers.region().base);
        for slot in 0..depth {
            data::fill(buffers.slot_mut(slot), plan.data.pattern, plan.data.seed, 0, u64::from(slot));
        }
        let region_blocks = plan.source.region_blocks();
        let verifier = plan.data.verify.map(|v| Verifier {
            plan: v,
            in_flight: vec![u64::MAX; depth as usize].into_boxed_slice(),
            last_written: if v.track_sequences { vec![0u32; region_blocks as usize] } else { Vec::new() },
            scratch: vec![0u8; plan.block_size_bytes as usize],
            counts: VerifyCounts::default(),
            mismatches: Vec::with_capacity(v.max_reports as usize),
        });
        let sequence_base =
            (u64::from(plan.index) << 48) | (u64::from(plan.data.verify.map_or(0, |v| v.run_nonce)) << 32);
        let verify_cost = measure_verify_cost(&plan);
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
            slots: vec![
                SlotState {
                    op: Op::Read,
                    file: 0,
                    offset_bytes: 0,
                    submit_ns: IDLE_NS,
                    region_block: 0,
                    sequence: 0,
                    holds_pattern: true
                };
                depth as usize
            ]
            .into_boxed_slice(),
            completions: vec![Completion::default(); depth as usize].into_boxed_slice(),
            source: plan.source,
            region_first_block: plan.region_first_block,
            remaining_ops: plan.ops_limit.unwrap_or(u64::MAX),
            coverage: plan.coverage,
            stats: plan
                .files
                .iter()
                .map(|f| TargetStats { target: f.target, read: OpStats::new(), write: OpStats::new() })
                .collect(),
            mix: OpMix::new(plan.read_percent, plan.seed, plan.index),
            files: plan.files.into_boxed_slice(),
            block_size_bytes: plan.block_size_bytes,
            duration_ns: plan.duration_ns,
            write_sequence: 0,
            failure: None,
            engine_error: None,
            index: plan.index,
            data: plan.data,
            sequence_base,
            verifier,
            verify_cost,
            thinker: plan.think.map(Thinker::new),
            interval: plan.interval,
            rate: plan.rate,
            pacing: PacingCounts::default(),
            buffer_node_seen,
            errors: ErrorCounts::default(),
            error_limit: plan.error_limit.max(1),
            errors_seen: plan.errors_seen,
            watch: WatchState::default(),
        })
    }

    /// Chooses the next I/O for `slot`, or `None` when the worker's share is done.
    #[inline(always)]
    fn next_request(&mut self, slot: u32) -> Option<Request> {
        if self.remaining_ops == 0 {
            return None;
        }
        let mut region_block = self.source.next_block()?;
        if let Some(v) = &self.verifier {
            // Never two I/Os on one block at once: a read racing a write would see either.
            while v.in_flight.contains(&region_block) {
                region_block = self.source.next_block()?;
            }
        }
        self.remaining_ops -= 1;
        if let Some(tracker) = &mut self.coverage {
            tracker.touch(region_block);
        }
        let block = self.region_first_block + region_block;
        let file = self.locate(block);
        let offset_bytes = (block - self.files[file as usize].first_block) * self.block_size_bytes;
        let op = self.mix.next();
        let mut sequence = 0;
        if op == Op::Write {
            self.write_sequence += 1;
            sequence = self.sequence_base | (self.write_sequence & 0xffff_ffff);
            let buf = self.buffers.slot_mut(slot);
            if let Some(v) = &self.verifier {
                verify::stamp(buf, v.plan.pattern, self.data.seed, offset_bytes, sequence);
            } else if self.data.pattern.varies_per_write() || !self.slots[slot as usize].holds_pattern {
                data::fill(buf, self.data.pattern, self.data.seed, offset_bytes, sequence);
            }
        }
        if let Some(v) = &mut self.verifier {
            v.in_flight[slot as usize] = region_block;
        }
        let state = &mut self.slots[slot as usize];
        state.op = op;
        state.file = file;
        state.offset_bytes = offset_bytes;
        state.region_block = region_block;
        state.sequence = sequence;
        state.holds_pattern = op == Op::Write;
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

    /// Once per batch, with a time series: at a new interval, hands the sampler a copy of
    /// this worker's cumulative histograms (see `live`).
    #[inline(always)]
    fn maybe_rotate_interval(&mut self, epoch: &AtomicU64) {
        if let Some(rec) = &mut self.interval {
            rec.maybe_rotate(epoch, |read, write| snapshot(&self.stats, read, write));
        }
    }

    /// Accounts one completion; `counts` is false for I/O that finished after the window.
    #[inline(always)]
    fn complete(&mut self, slot: u32, result: i64, lat_ns: u64, counts: bool) {
        let state = self.slots[slot as usize];
        self.slots[slot as usize].submit_ns = IDLE_NS;
        if result == self.block_size_bytes as i64 && self.verifier.is_some() {
            self.verify_completion(slot, &state);
        }
        if result == self.block_size_bytes as i64 {
            if counts {
                let stats = &mut self.stats[state.file as usize];
                match state.op {
                    Op::Read => stats.read.record(self.block_size_bytes, lat_ns),
                    Op::Write => stats.write.record(self.block_size_bytes, lat_ns),
                }
            }
        } else {
            self.record_error(slot, &state, result);
        }
    }

    /// Counts a failed I/O (per op type and errno) and, once the run has seen as many
    /// as `error_limit` (1 by default), records it as the failure that stops the worker.
    #[cold]
    #[inline(never)]
    fn record_error(&mut self, slot: u32, state: &SlotState, result: i64) {
        let kind = if result < 0 {
            IoFailureKind::Errno((-result) as i32)
        } else {
            IoFailureKind::Short { done_bytes: result as u64, len_bytes: self.block_size_bytes }
        };
        let errno = match kind {
            IoFailureKind::Errno(errno) => errno,
            IoFailureKind::Short { .. } => crate::errors::SHORT_TRANSFER,
        };
        let target = self.files[state.file as usize].target;
        if let Some(v) = &mut self.verifier {
            v.in_flight[slot as usize] = u64::MAX;
        }
        // The block was counted as covered when the I/O was issued (the cheap place, on
        // the hot path); a failed I/O reached nothing, so it is taken back here.
        if let Some(tracker) = &mut self.coverage {
            tracker.untouch(state.region_block);
        }
        // Only failed I/Os touch the run-wide counter. Each failure draws a distinct number
        // from it, so exactly `error_limit` are counted across all workers: I/Os that fail
        // after the limit was reached (in flight in this or another worker while the run
        // stops) are not counted, as I/Os completing after the window are not.
        let seen = self.errors_seen.fetch_add(1, Ordering::Relaxed) + 1;
        if seen > self.error_limit {
            return;
        }
        self.errors.record(state.op, errno, target, state.offset_bytes);
        if seen == self.error_limit && self.failure.is_none() {
            self.failure = Some(IoFailure { op: state.op, target, offset_bytes: state.offset_bytes, kind });
        }
    }

    /// Checks a completed read, or records a completed write, of a verifying run.
    #[inline]
    fn verify_completion(&mut self, slot: u32, state: &SlotState) {
        let target = self.files[state.file as usize].target;
        let seed = self.data.seed;
        let base = self.sequence_base;
        let Some(v) = &mut self.verifier else { return };
        v.in_flight[slot as usize] = u64::MAX;
        let block = state.region_block as usize;
        match state.op {
            Op::Write => {
                if let Some(last) = v.last_written.get_mut(block) {
                    *last = state.sequence as u32;
                }
            }
            Op::Read => {
                let sequence = match v.last_written.get(block) {
                    Some(&low) if low != 0 => Some(base | u64::from(low)),
                    _ => None,
                };
                let expect = Expect { seed, offset_bytes: state.offset_bytes, pattern: v.plan.pattern, sequence };
                v.counts.checked += 1;
                let bytes = self.buffers.slot(slot);
                if let Err(failure) = verify::check(bytes, &expect, &mut v.scratch) {
                    v.counts.failures_by_kind[failure.index()] += 1;
                    if v.mismatches.len() < v.plan.max_reports as usize {
                        v.mismatches.push(verify::describe(bytes, &expect, failure, target, &mut v.scratch));
                    }
                }
            }
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
            let heartbeat = control.heartbeat(self.index as usize);
            if let Some(hb) = heartbeat {
                let target = self.files[req.file as usize].target;
                let io = InFlightIo { op: req.op, target, offset_bytes: req.offset_bytes, submit_ns: t0 };
                hb.waiting(t0, 1, Some(io));
            }
            // SAFETY: slot 0 exists; no reference to its bytes is held across the call,
            // and an inline engine is done with the slot when `queue` returns.
            let outcome = unsafe { self.engine.queue(req) };
            let t1 = clock.now_ns();
            if let Some(hb) = heartbeat {
                hb.done_waiting();
            }
            let Queued::Done(result) = outcome else {
                unreachable!("{} declares completes_inline but queued a request", E::NAME);
            };
            if t1 > deadline_ns {
                return (WorkerStop::Deadline, deadline_ns);
            }
            self.complete(0, result, t1 - t0, true);
            self.maybe_rotate_interval(&control.epoch);
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
            self.publish_wait(control, now, in_flight);
            // One call per batch: engines that can submit and wait in one system call do.
            let reaped = match self.engine.submit_and_reap(1, &mut self.completions) {
                Ok(n) => n,
                Err(e) => return self.engine_failure(control, e.to_string(), in_flight),
            };
            now = clock.now_ns();
            if let Some(hb) = control.heartbeat(self.index as usize) {
                hb.done_waiting();
            }
            let past_deadline = now > deadline_ns;
            let stop_word = control.stop.load(Ordering::Relaxed);
            self.maybe_rotate_interval(&control.epoch);
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
        self.drain(control, in_flight);
        (stop, end_ns)
    }

    /// Loop for paced runs (think time or a rate limit), for every engine: I/Os are
    /// issued only when due and not while thinking; completions keep being reaped
    /// while the worker waits. Chosen once at start, so unpaced runs never pay for it.
    fn run_paced(&mut self, control: &RunControl, deadline_ns: u64, start_ns: u64) -> (WorkerStop, u64) {
        let clock = control.clock;
        let depth = self.slots.len() as u32;
        let mut free: Vec<u32> = (0..depth).rev().collect();
        let mut in_flight = 0usize;
        let mut exhausted = false;
        let mut pacer = self.rate.map(|r| Pacer::new(start_ns, r.iops_per_worker, r.mode));
        let wait_mode = self.thinker.as_ref().map_or(self.rate.map_or(ThinkMode::Sleep, |r| r.mode), Thinker::mode);
        // No new I/O before this time (thinking); and when the current think began.
        let mut think_until = 0u64;
        let mut thinking_since: Option<u64> = None;
        let mut now = clock.now_ns();
        let stop = loop {
            // Issue what is due.
            if now >= think_until
                && let Some(since) = thinking_since.take()
            {
                self.pacing.think_spent_ns += now - since;
            }
            while !exhausted && now >= think_until && self.failure.is_none() {
                let due = pacer.as_ref().map_or(now, Pacer::next_due_ns);
                if due > now {
                    break;
                }
                let Some(slot) = free.pop() else { break };
                let Some(req) = self.next_request(slot) else {
                    free.push(slot);
                    exhausted = true;
                    break;
                };
                // Latency counts from when the I/O was due (no coordinated omission).
                let since = pacer.as_mut().map_or(now, |p| p.take(now));
                match self.push(req, since, clock) {
                    Ok(true) => in_flight += 1,
                    Ok(false) => {
                        // Completed inline: the slot is free again, and the clock has moved.
                        free.push(slot);
                        now = clock.now_ns();
                        self.after_completion(now - since, now, &mut think_until, &mut thinking_since);
                    }
                    Err(message) => return self.engine_failure(control, message, in_flight),
                }
            }
            if self.failure.is_some() {
                control.stop.store(stop_code::FAILED, Ordering::Relaxed);
                break WorkerStop::Failed;
            }
            if in_flight == 0 && exhausted {
                break WorkerStop::Done;
            }
            if now > deadline_ns {
                break WorkerStop::Deadline;
            }
            if control.stop.load(Ordering::Relaxed) != stop_code::RUNNING {
                break WorkerStop::Stopped;
            }
            // Wait: for completions, the next due time, or the end of a think.
            let next_issue = if now < think_until {
                think_until
            } else if let Some(p) = &pacer {
                p.next_due_ns()
            } else {
                now
            };
            let wake = next_issue.min(deadline_ns.saturating_add(1));
            if in_flight == 0 {
                if now >= think_until && pacer.is_some() {
                    think::wait_for_slot(&clock, wake, wait_mode);
                } else {
                    think::wait_until(&clock, wake, wait_mode);
                }
                now = clock.now_ns();
                continue;
            }
            self.publish_wait(control, now, in_flight);
            if let Err(e) = self.engine.submit() {
                return self.engine_failure(control, e.to_string(), in_flight);
            }
            // With a wake-up time ahead, poll for completions between short waits; otherwise block.
            let min = if free.is_empty() || wake <= now { 1 } else { 0 };
            let reaped = match self.engine.reap(min, &mut self.completions) {
                Ok(n) => n,
                Err(e) => return self.engine_failure(control, e.to_string(), in_flight),
            };
            if reaped == 0 {
                let quantum = if wait_mode == ThinkMode::Spin { 0 } else { 20_000 };
                think::wait_until(&clock, wake.min(clock.now_ns() + quantum), wait_mode);
            }
            now = clock.now_ns();
            if reaped > 0
                && let Some(hb) = control.heartbeat(self.index as usize)
            {
                hb.done_waiting();
            }
            let past_deadline = now > deadline_ns;
            self.maybe_rotate_interval(&control.epoch);
            for i in 0..reaped {
                let Completion { slot, result } = self.completions[i];
                in_flight -= 1;
                let lat_ns = now - self.slots[slot as usize].submit_ns;
                self.complete(slot, result, lat_ns, !past_deadline);
                free.push(slot);
                self.after_completion(lat_ns, now, &mut think_until, &mut thinking_since);
            }
        };
        if let Some(since) = thinking_since {
            self.pacing.think_spent_ns += now.min(deadline_ns).saturating_sub(since);
        }
        if let Some(p) = &pacer {
            self.pacing.dropped_slots = p.dropped_slots;
        }
        if let Some(t) = &self.thinker {
            self.pacing.think_requested_ns = t.requested_ns;
            self.pacing.thinks = t.thinks;
        }
        let end_ns = if stop == WorkerStop::Deadline { deadline_ns } else { now };
        self.drain(control, in_flight);
        (stop, end_ns)
    }

    /// Starts a think when one is due after a completion.
    #[inline]
    fn after_completion(&mut self, lat_ns: u64, now: u64, think_until: &mut u64, thinking_since: &mut Option<u64>) {
        if let Some(t) = &mut self.thinker
            && let Some(think_ns) = t.on_completion(lat_ns)
        {
            *think_until = (*think_until).max(now + think_ns);
            thinking_since.get_or_insert(now);
        }
    }

    /// Waits for I/O still in flight so no buffer is freed under the kernel.
    /// These completions are outside the window and are not counted. Reaps one
    /// batch at a time, naming an I/O still in flight in the heartbeat before each
    /// wait, so that a drain stuck on one I/O is reported with the right offset.
    fn drain(&mut self, control: &RunControl, mut in_flight: usize) {
        while in_flight > 0 {
            self.publish_wait(control, control.clock.now_ns(), in_flight);
            match self.engine.submit_and_reap(1, &mut self.completions) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    in_flight = in_flight.saturating_sub(n);
                    for c in &self.completions[..n] {
                        let slot = &mut self.slots[c.slot as usize];
                        slot.submit_ns = IDLE_NS;
                        // Not counted, but a block an I/O failed on is not covered either.
                        if c.result != self.block_size_bytes as i64
                            && let Some(tracker) = &mut self.coverage
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
            && let Some(tracker) = &mut self.coverage
        {
            for slot in self.slots.iter().filter(|s| s.submit_ns != IDLE_NS) {
                tracker.untouch(slot.region_block);
            }
        }
        if let Some(hb) = control.heartbeat(self.index as usize) {
            hb.done_waiting();
        }
    }

    fn engine_failure(&mut self, control: &RunControl, message: String, in_flight: usize) -> (WorkerStop, u64) {
        control.stop.store(stop_code::FAILED, Ordering::Relaxed);
        self.engine_error = Some(message);
        self.drain(control, in_flight);
        (WorkerStop::Failed, control.clock.now_ns())
    }

    /// Outside the window, after the loop drained: lets the engine make its writes
    /// durable (mmap: msync) and times it. A failure there fails the run.
    fn sync_writes(&mut self, control: &RunControl) -> Option<u64> {
        let t0 = control.clock.now_ns();
        match self.engine.sync_writes() {
            Ok(true) => Some(control.clock.now_ns().saturating_sub(t0)),
            Ok(false) => None,
            Err(e) => {
                control.stop.store(stop_code::FAILED, Ordering::Relaxed);
                if self.engine_error.is_none() {
                    self.engine_error = Some(e.to_string());
                }
                None
            }
        }
    }

    fn finish(mut self, _control: &RunControl, stop: WorkerStop, end_ns: u64, cpu: CpuTimes) -> WorkerResult {
        if let Some(rec) = self.interval.take() {
            rec.flush(|read, write| snapshot(&self.stats, read, write));
        }
        let engine_setup = self.engine.setup_facts();
        let mut read = OpStats::new();
        let mut write = OpStats::new();
        for t in self.stats.iter() {
            read.merge(&t.read);
            write.merge(&t.write);
        }
        let engine_notes = self.engine.notes();
        WorkerResult {
            index: self.index,
            read,
            write,
            per_target: self.stats.into_vec(),
            coverage: self.coverage,
            verify_counts: self.verifier.as_ref().map(|v| v.counts.clone()).unwrap_or_default(),
            mismatches: self.verifier.map(|v| v.mismatches).unwrap_or_default(),
            verify_cost: self.verify_cost,
            end_ns,
            cpu,
            stop,
            failure: self.failure,
            engine_error: self.engine_error,
            engine_setup,
            cpu_seen: placement::bind::current_cpu(),
            buffer_node_seen: self.buffer_node_seen,
            sync_ns: None,
            pacing: self.pacing,
            engine_notes,
            errors: self.errors,
        }
    }
}

/// The watchdog's view of a queued worker (`watchdog`): what it publishes before it waits.
impl<E: Engine> Worker<E> {
    /// Publishes that the worker starts waiting at `now_ns` with `in_flight` I/Os out,
    /// naming one I/O in flight. The named I/O is kept while it stays in flight (then only
    /// the wait's start is stored: two relaxed stores); when it has completed, another
    /// slot in flight is named. At most every `SCAN_INTERVAL_NS` the oldest I/O in flight
    /// is named instead, so that one stuck I/O among others that complete is seen.
    #[inline(always)]
    fn publish_wait(&mut self, control: &RunControl, now_ns: u64, in_flight: usize) {
        let Some(hb) = control.heartbeat(self.index as usize) else { return };
        if now_ns < self.watch.next_scan_ns {
            if let Some((slot, submit_ns)) = self.watch.named
                && self.slots[slot as usize].submit_ns == submit_ns
            {
                hb.still_waiting(now_ns, in_flight);
                return;
            }
            self.watch.named = self.any_in_flight();
        } else {
            self.watch.next_scan_ns = now_ns.saturating_add(SCAN_INTERVAL_NS);
            self.watch.named = self.oldest_in_flight();
        }
        let io = self.watch.named.map(|(slot, submit_ns)| {
            let s = &self.slots[slot as usize];
            InFlightIo { op: s.op, target: self.files[s.file as usize].target, offset_bytes: s.offset_bytes, submit_ns }
        });
        hb.waiting(now_ns, in_flight, io);
    }

    /// The slot whose I/O has been in flight longest, with its submit time.
    #[cold]
    fn oldest_in_flight(&self) -> Option<(u32, u64)> {
        let (slot, state) = self.slots.iter().enumerate().min_by_key(|(_, s)| s.submit_ns)?;
        (state.submit_ns != IDLE_NS).then_some((slot as u32, state.submit_ns))
    }

    /// A slot with an I/O in flight, with its submit time, searched from where the last
    /// search ended.
    #[inline]
    fn any_in_flight(&mut self) -> Option<(u32, u64)> {
        let depth = self.slots.len() as u32;
        let mut slot = self.watch.cursor;
        for _ in 0..depth {
            slot = if slot + 1 >= depth { 0 } else { slot + 1 };
            let submit_ns = self.slots[slot as usize].submit_ns;
            if submit_ns != IDLE_NS {
                self.watch.cursor = slot;
                return Some((slot, submit_ns));
            }
        }
        None
    }
}
