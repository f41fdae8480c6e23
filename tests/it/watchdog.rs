//! The heartbeat a queued worker publishes names the right I/O (issue 11):
//! one I/O held forever while the others complete (found by the worker's
//! periodic scan for its oldest I/O), and every I/O held (the wait itself is
//! stuck). An engine that completes everything at once except what the test
//! tells it to hold drives the real worker loop; no device is needed.

use iopulse::testing::Clock;
use iopulse::testing::Waiting;
use iopulse::testing::access::{AccessOrder, Distribution};
use iopulse::testing::access::{BlockSource, SourcePlan};
use iopulse::testing::data::Pattern;
use iopulse::testing::engine::{
    Completion, Engine, EngineCaps, EngineError, EngineOptions, EngineSetup, Queued, Request,
};
use iopulse::testing::worker::{
    self, DataPlan, DurabilityPlan, EnginePlan, ErrorPlan, IoPlan, PacingPlan, RegionPlan, RunControl, WindowPlan,
    WorkerFile, WorkerPlan, stop_code,
};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which offsets the engine holds (`u64::MAX`: every one), and whether it lets them go.
static HOLD_OFFSET: AtomicU64 = AtomicU64::new(u64::MAX - 1);
static RELEASE: AtomicBool = AtomicBool::new(false);
/// One test at a time: the engine's settings are global.
static SERIAL: Mutex<()> = Mutex::new(());

const BS: u64 = 4096;

/// Completes every request at once, except those at `HOLD_OFFSET`, which come back only
/// once `RELEASE` is set.
struct HoldingEngine {
    ready: Vec<Completion>,
    held: Vec<Completion>,
}

impl HoldingEngine {
    fn holds(offset: u64) -> bool {
        let h = HOLD_OFFSET.load(Ordering::Relaxed);
        h == u64::MAX || h == offset
    }
}

impl Engine for HoldingEngine {
    const NAME: &'static str = "holding";
    const CAPS: EngineCaps = EngineCaps {
        completes_inline: false,
        touches_storage: false,
        supports_direct: true,
        batches_submissions: false,
        writes_through_descriptor: false,
    };

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let depth = setup.queue_depth as usize;
        Ok(Self { ready: Vec::with_capacity(depth), held: Vec::with_capacity(depth) })
    }

    unsafe fn queue(&mut self, req: Request) -> Queued {
        let c = Completion { slot: req.slot, result: i64::from(req.len_bytes) };
        if Self::holds(req.offset_bytes) {
            self.held.push(c)
        } else {
            self.ready.push(c)
        }
        Queued::InFlight
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        loop {
            if RELEASE.load(Ordering::Relaxed) {
                self.ready.append(&mut self.held);
            }
            if min == 0 || !self.ready.is_empty() || self.held.is_empty() {
                let n = self.ready.len().min(out.len());
                out[..n].copy_from_slice(&self.ready[..n]);
                self.ready.drain(..n);
                return Ok(n);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn plan(depth: u32, errors_seen: Arc<AtomicU64>) -> WorkerPlan {
    // Never wraps during a test: block 5 is requested once.
    let blocks = 1 << 40;
    WorkerPlan {
        index: 0,
        seed: 1,
        io: IoPlan { block_size_bytes: BS, block_sizes: None, queue_depth: depth, read_percent: 100, trim_percent: 0 },
        sizing: worker::WorkerSizing::of(&worker::SizingInputs {
            completes_inline: false,
            queue_depth: depth,
            read_percent: 100,
            verifying: false,
            pattern: Pattern::Zeros,
            flushes: false,
            largest_io_bytes: BS,
            mixed_sizes: false,
        }),
        region: RegionPlan {
            source: BlockSource::new(&SourcePlan {
                order: AccessOrder::Sequential,
                distribution: Distribution::Uniform,
                scramble: false,
                once: false,
                blocks,
                share_index: 0,
                share_count: 1,
                overlap: false,
                seed: 1,
                worker: 0,
                random_percent: 100,
                block_bytes: 4096,
            }),
            region_first_block: 0,
            ops_limit: None,
            coverage: None,
            files: vec![WorkerFile { fd: -1, first_block: 0, blocks, target: 3 }],
        },
        engine: EnginePlan {
            direct: false,
            options: EngineOptions::default(),
            buffers: worker::BufferMemory { align_bytes: 4096, huge_pages: true },
        },
        window: WindowPlan { duration_ns: Some(20_000_000_000), ramp_ns: 0 },
        placement: Default::default(),
        data: DataPlan { pattern: Pattern::Zeros, reducibility: Default::default(), seed: 1, verify: None },
        pacing: PacingPlan { think: None, rate: None },
        interval: None,
        errors: ErrorPlan { error_limit: 1, errors_seen },
        durability: DurabilityPlan { flush: None, durable_record: None, end_fsync: false },
        replay: None,
        iolog_capacity: None,
    }
}

/// Runs a worker at `depth` holding `hold`; returns the first heartbeat that shows an I/O
/// older than `timeout` (or None after 3 s), then releases and joins the worker.
fn watch(depth: u32, hold: u64, timeout: Duration) -> (Option<Waiting>, Duration) {
    HOLD_OFFSET.store(hold, Ordering::Relaxed);
    RELEASE.store(false, Ordering::Relaxed);
    let stop = Arc::new(AtomicUsize::new(stop_code::RUNNING));
    let control = Arc::new(RunControl::new(Clock::new(), Arc::clone(&stop)).with_heartbeats(1));
    let worker = {
        let control = Arc::clone(&control);
        let plan = plan(depth, Arc::clone(&control.errors_seen));
        std::thread::spawn(move || worker::run::<HoldingEngine>(plan, &control))
    };
    control.release(1, false).expect("released");
    let t0 = Instant::now();
    let timeout_ns = timeout.as_nanos() as u64;
    let mut seen = None;
    while t0.elapsed() < Duration::from_secs(3) {
        if let Some(w) = control.heartbeat(0).unwrap().read()
            && w.overdue(control.clock.now_ns(), timeout_ns)
        {
            seen = Some(w);
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = t0.elapsed();
    stop.store(stop_code::FAILED, Ordering::Relaxed);
    RELEASE.store(true, Ordering::Relaxed);
    let result = worker.join().unwrap();
    assert!(result.ops.read.ops > 0 || hold == u64::MAX);
    (seen, took)
}

#[test]
fn one_io_held_among_others_that_complete_is_named() {
    let _serial = SERIAL.lock().unwrap();
    // Block 5 is held; the other seven slots keep completing.
    let (seen, took) = watch(8, 5 * BS, Duration::from_millis(200));
    let w = seen.expect("the held I/O was never seen overdue");
    let io = w.io.expect("an I/O is named");
    assert_eq!((io.offset_bytes, io.target), (5 * BS, 3), "{w:?}");
    // The worker kept completing I/O: its wait is recent, the named I/O is old.
    assert!(w.since_ns.saturating_sub(io.submit_ns) > 200_000_000, "{w:?}");
    // Seen after the timeout and at most one scan interval (0.1 s) later, plus polling.
    assert!(took < Duration::from_millis(700), "took {took:?}");
}

#[test]
fn a_wait_where_everything_is_held_names_an_io_in_flight() {
    let _serial = SERIAL.lock().unwrap();
    let (seen, _) = watch(8, u64::MAX, Duration::from_millis(200));
    let w = seen.expect("the stuck wait was never seen");
    assert_eq!(w.in_flight, 8, "{w:?}");
    let io = w.io.expect("an I/O is named");
    assert!(io.offset_bytes < 8 * BS && io.offset_bytes % BS == 0, "one of the eight in flight: {w:?}");
}
