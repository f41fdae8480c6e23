//! The per-I/O pieces of the hot loop, each timed alone, and the whole loop on
//! the null engine: what one I/O costs the tool itself (DESIGN.md, "Rules for
//! the hot path"). Run with `cargo bench --bench hot_path` (add `-- --quick`
//! for a short run).
//!
//! Groups:
//! - `offset`: one block number per distribution (`BlockSource::next_block`);
//! - `histogram`: one latency sample (`OpStats::record`, and the bare HDR record);
//! - `clock`: one clock read (the loop makes at most two per I/O);
//! - `data`: filling 4 KiB with fresh random data, stamping and checking a verified 4 KiB block;
//! - `write_data`: what one write's data costs, per pattern and block size (4 KiB,
//!   128 KiB, 1 MiB, 16 MiB): `unique` (the default: a window's keys), the pool of
//!   `random`, the xorshift generator, keyed, verified stamping, the ratios, the fixed and
//!   sequential patterns, memset/memcpy of the block as the machine's ceiling, and what
//!   fio's scrambling writes (two cache lines per sector) as a reference. Each must run at
//!   >= 8 GiB/s per core where the ceiling allows;
//! - `loop_null`: one full iteration of the worker loop on the null engine
//!   (choose offset, op, queue, reap, record), driven through `worker::run`;
//! - `engine_round_trip`: queue + submit + reap of one 4 KiB request on a block
//!   that sits in the page cache, per engine. To add an engine, add one line to
//!   `engine_round_trips` below.

use criterion::{Criterion, Throughput};
use iopulse::testing::Clock;
use iopulse::testing::Rng;
use iopulse::testing::SlotBuffers;
use iopulse::testing::access::{AccessOrder, Distribution};
use iopulse::testing::access::{BlockSource, Permutation, SourcePlan};
use iopulse::testing::data::{self, Pattern};
use iopulse::testing::engine::NullEngine;
use iopulse::testing::engine::SyncEngine;
use iopulse::testing::engine::{BufferAt, Completion, Engine, EngineOptions, EngineSetup, Op, Queued, Request};
use iopulse::testing::stats::{OpStats, new_latency_histogram};
use iopulse::testing::verify;
use iopulse::testing::worker::{
    self, DataPlan, DurabilityPlan, EnginePlan, ErrorPlan, IoPlan, PacingPlan, RegionPlan, RunControl, WindowPlan,
    WorkerFile, WorkerPlan,
};
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

const BLOCK: usize = 4096;

fn offsets(c: &mut Criterion) {
    let mut g = c.benchmark_group("offset");
    g.throughput(Throughput::Elements(1));
    // A 1 TiB region of 4 KiB blocks: large enough that nothing fits a cache by accident.
    let blocks = 1u64 << 28;
    let mut seq = BlockSource::SequentialLoop { next: 0, blocks };
    g.bench_function("sequential", |b| b.iter(|| black_box(seq.next_block())));
    let mut uniform = BlockSource::Uniform { rng: Rng::new(1, 2), blocks };
    g.bench_function("uniform", |b| b.iter(|| black_box(uniform.next_block())));
    // Positions 0..2^40 of a permutation of 2^40 blocks: never runs out during a bench.
    let n = 1u64 << 40;
    let mut perm = BlockSource::PermutedOnce { permutation: Permutation::new(n, 3), next: 0, end: n };
    g.bench_function("permutation", |b| b.iter(|| black_box(perm.next_block())));
    // A region that is not a power of two, so cycle walking happens (2^28 + 1 blocks: ~half
    // of the draws need a second round).
    let odd = blocks + 1;
    let mut perm_odd = BlockSource::PermutedOnce { permutation: Permutation::new(odd, 3), next: 0, end: odd };
    g.bench_function("permutation_cycle_walk", |b| {
        b.iter(|| {
            let x = perm_odd.next_block();
            if x.is_none()
                && let BlockSource::PermutedOnce { next, .. } = &mut perm_odd
            {
                *next = 0;
            }
            black_box(x)
        })
    });
    // The skewed distributions (scrambled hot set), same region.
    for (name, distribution) in [
        ("zipf_1.2", Distribution::Zipf { theta: 1.2 }),
        ("pareto_0.9", Distribution::Pareto { h: 0.9 }),
        ("gaussian", Distribution::Gaussian { stddev: 0.1, center: 0.5 }),
    ] {
        let plan = SourcePlan {
            order: AccessOrder::Random,
            distribution,
            scramble: true,
            once: false,
            blocks,
            share_index: 0,
            share_count: 1,
            overlap: false,
            seed: 4,
            worker: 0,
            random_percent: 100,
            block_bytes: 4096,
        };
        let mut source = BlockSource::new(&plan);
        g.bench_function(name, |b| b.iter(|| black_box(source.next_block())));
    }
    g.finish();
}

fn histogram(c: &mut Criterion) {
    let mut g = c.benchmark_group("histogram");
    g.throughput(Throughput::Elements(1));
    // Latencies spread from 1 µs to ~1 ms, so records land in many buckets.
    let mut rng = Rng::new(7, 7);
    let samples: Vec<u64> = (0..4096).map(|_| 1_000 + rng.below(1_000_000)).collect();
    let mut stats = OpStats::new();
    let mut i = 0usize;
    g.bench_function("op_stats_record", |b| {
        b.iter(|| {
            stats.record(4096, black_box(samples[i & 4095]));
            i = i.wrapping_add(1);
        })
    });
    let mut hist = new_latency_histogram();
    g.bench_function("hdr_saturating_record", |b| {
        b.iter(|| {
            hist.saturating_record(black_box(samples[i & 4095]));
            i = i.wrapping_add(1);
        })
    });
    black_box((&stats, &hist));
    g.finish();
}

fn clock(c: &mut Criterion) {
    let clock = Clock::new();
    c.bench_function("clock/now_ns", |b| b.iter(|| black_box(clock.now_ns())));
}

fn data_pattern(c: &mut Criterion) {
    let mut g = c.benchmark_group("data");
    g.throughput(Throughput::Bytes(BLOCK as u64));
    let mut buf = SlotBuffers::new(1, BLOCK, BLOCK).expect("buffer");
    let mut seq = 0u64;
    // Fresh random data for one write (the default --write-pattern): must run at >= 8 GiB/s.
    g.bench_function("fill_random_4k", |b| {
        b.iter(|| {
            seq += 1;
            data::fill_random(buf.slot_mut(0), 42, black_box(seq * 4096), seq);
        })
    });
    // --verify: stamping a block for a write, and checking a block read (must be <= 1 µs).
    g.bench_function("verify_stamp_4k", |b| {
        b.iter(|| {
            seq += 1;
            verify::stamp(buf.slot_mut(0), Pattern::Random, 42, black_box(4096), seq);
        })
    });
    let expect = verify::Expect {
        seed: 42,
        offset_bytes: 4096,
        pattern: Pattern::Random,
        sequence: None,
        reduction: iopulse::testing::data::Reduction::NONE,
    };
    let mut scratch = vec![0u8; BLOCK];
    g.bench_function("verify_check_4k", |b| {
        b.iter(|| black_box(verify::check(buf.slot(0), black_box(&expect), &mut scratch)).expect("valid block"))
    });
    black_box(buf.slot(0));
    g.finish();
}

fn write_data(c: &mut Criterion) {
    let mut g = c.benchmark_group("write_data");
    let pool = data::RandomPool::new(42);
    for (name, len) in [("4k", 4096usize), ("128k", 128 << 10), ("1m", 1 << 20), ("16m", 16 << 20)] {
        g.throughput(Throughput::Bytes(len as u64));
        let mut buf = SlotBuffers::new(1, len, 4096).expect("buffer");
        buf.touch_pages();
        let mut seq = 0u64;
        // The default pattern without --verify: windows of the pool, xored with a key.
        g.bench_function(format!("random_pool_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                pool.fill(buf.slot_mut(0), black_box(seq * len as u64), seq);
            })
        });
        // The xorshift generator (--verify payloads, and the pool itself).
        g.bench_function(format!("random_xorshift_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                data::fill_random(buf.slot_mut(0), 42, black_box(seq * len as u64), seq);
            })
        });
        // --dedupe-ratio / --compress-ratio, unverified (the pool) and verified (stamped).
        for (setting, dedupe, compress) in
            [("dedupe3", Some(3.0), None), ("compress2", None, Some(2.0)), ("dedupe3_compress2", Some(3.0), Some(2.0))]
        {
            let asked = data::Reducibility { dedupe_ratio: dedupe, compress_ratio: compress };
            let reduced = data::RandomPool::reducible(42, asked);
            g.bench_function(format!("random_pool_{setting}_{name}"), |b| {
                b.iter(|| {
                    seq += 1;
                    reduced.fill(buf.slot_mut(0), black_box(seq * len as u64), seq);
                })
            });
            let reduction = data::Reduction::new(asked);
            g.bench_function(format!("verify_stamp_{setting}_{name}"), |b| {
                b.iter(|| {
                    seq += 1;
                    verify::stamp_reduced(
                        buf.slot_mut(0),
                        Pattern::Random,
                        42,
                        black_box(seq * len as u64),
                        seq,
                        &reduction,
                    );
                })
            });
        }
        // The unique pattern (the default): the keys of a window of an area that holds the
        // base, the window moving with the offset as in a sequential run (the area of an
        // inline engine: one period, or the block if larger).
        let period = data::unique::period_bytes(len as u64) as usize;
        let mut area = SlotBuffers::with_area(1, 4096, 4096, period, true).expect("area");
        area.touch_pages();
        data::unique::fill_area(area.area_mut(), 42, period as u64);
        g.bench_function(format!("unique_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                let offset = seq * len as u64;
                let at = (offset % period as u64) as usize;
                data::unique::key_sectors(&mut area.area_mut()[at..at + len], 42, black_box(offset), seq);
            })
        });
        // What fio's default scrambling writes per write, as a reference: 16 bytes into two
        // cache lines of every 512-byte sector of one buffer (an 8-byte offset into one
        // line, two 8-byte words at the end of the first).
        g.bench_function(format!("reference_two_lines_per_sector_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                let line = (seq as usize & 7) * 64;
                for (i, sector) in buf.slot_mut(0).chunks_exact_mut(512).enumerate() {
                    sector[line..line + 8].copy_from_slice(&(seq * len as u64 + i as u64 * 512).to_le_bytes());
                    sector[48..56].copy_from_slice(&seq.to_le_bytes());
                    sector[56..64].copy_from_slice(&black_box(seq).to_le_bytes());
                }
            })
        });
        // The keyed pattern (kept on request): a key per 4 KiB chunk into a buffer that
        // holds the base.
        data::keyed::fill_base(buf.slot_mut(0), 42);
        g.bench_function(format!("keyed_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                data::keyed::key_chunks(buf.slot_mut(0), 42, black_box(seq * len as u64), seq);
            })
        });
        // --verify without ratios: the random payload and the checksummed header.
        g.bench_function(format!("verify_stamp_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                verify::stamp(buf.slot_mut(0), Pattern::Random, 42, black_box(seq * len as u64), seq);
            })
        });
        // The ceilings: what writing (memset) and copying (memcpy) the block costs here.
        let source = vec![0x5au8; len];
        g.bench_function(format!("ceiling_memset_{name}"), |b| {
            b.iter(|| {
                seq += 1;
                buf.slot_mut(0).fill(black_box(seq as u8));
            })
        });
        g.bench_function(format!("ceiling_memcpy_{name}"), |b| {
            b.iter(|| buf.slot_mut(0).copy_from_slice(black_box(&source)))
        });
        for pattern in [Pattern::Zeros, Pattern::Sequential] {
            g.bench_function(format!("{}_{name}", pattern.name()), |b| {
                b.iter(|| {
                    seq += 1;
                    data::fill(buf.slot_mut(0), pattern, 42, black_box(seq * len as u64), seq, 1 << 20);
                })
            });
        }
        black_box(buf.slot(0));
    }
    g.finish();
}

/// Runs one worker on the null engine for exactly `ios` I/Os over a sequential
/// source and returns the time between the start line and its stop: the loop
/// only, without thread start or set-up.
fn null_worker_window(ios: u64, depth: u32, read_percent: u8) -> Duration {
    let control = RunControl::new(Clock::new(), Arc::new(AtomicUsize::new(0)));
    let plan = WorkerPlan {
        index: 0,
        seed: 1,
        io: IoPlan {
            block_size_bytes: BLOCK as u64,
            block_sizes: None,
            queue_depth: depth,
            read_percent,
            trim_percent: 0,
        },
        sizing: worker::WorkerSizing::of(&worker::SizingInputs {
            completes_inline: NullEngine::CAPS.completes_inline,
            queue_depth: depth,
            read_percent,
            verifying: false,
            pattern: Pattern::Random,
            flushes: false,
            largest_io_bytes: BLOCK as u64,
            mixed_sizes: false,
        }),
        region: RegionPlan {
            source: BlockSource::SequentialOnce { next: 0, end: ios },
            region_first_block: 0,
            ops_limit: None,
            coverage: None,
            // The null engine never touches its descriptors.
            files: vec![WorkerFile { fd: -1, first_block: 0, blocks: u64::MAX / 2, target: 0 }],
        },
        engine: EnginePlan {
            direct: false,
            options: EngineOptions::default(),
            buffers: worker::BufferMemory { align_bytes: BLOCK, huge_pages: true },
        },
        window: WindowPlan { duration_ns: None, ramp_ns: 0 },
        placement: Default::default(),
        data: DataPlan { pattern: Pattern::Random, reducibility: Default::default(), seed: 1, verify: None },
        pacing: PacingPlan { think: None, rate: None },
        interval: None,
        errors: ErrorPlan { error_limit: 1, errors_seen: Arc::clone(&control.errors_seen) },
        durability: DurabilityPlan { flush: None, durable_record: None, end_fsync: false },
        replay: None,
        iolog_capacity: None,
    };
    std::thread::scope(|s| {
        let control = &control;
        let handle = s.spawn(move || worker::run::<NullEngine>(plan, control));
        let start = control.release(1, false).expect("worker started");
        let result = handle.join().expect("worker thread");
        assert_eq!(result.ops.read.ops + result.ops.write.ops, ios, "null worker did every I/O");
        Duration::from_nanos(result.end_ns - start)
    })
}

fn loop_null(c: &mut Criterion) {
    let mut g = c.benchmark_group("loop_null");
    g.throughput(Throughput::Elements(1));
    for (name, depth, read_percent) in
        [("read_qd1", 1, 100), ("read_qd32", 32, 100), ("write_qd1", 1, 0), ("mixed70_qd32", 32, 70)]
    {
        g.bench_function(name, |b| b.iter_custom(|iters| null_worker_window(iters.max(1), depth, read_percent)));
    }
    g.finish();
}

/// Times queue (+ submit + reap when the engine does not complete inline) of one
/// 4 KiB request at offset 0 of a file whose first block is in the page cache.
fn engine_round_trip<E: Engine>(c: &mut Criterion, label: &str) {
    let dir = tempfile::Builder::new().prefix("iopulse-bench-").tempdir().expect("temp dir");
    let path = dir.path().join("engine.dat");
    std::fs::write(&path, vec![0x5au8; 1 << 20]).expect("write bench file");
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).expect("open");
    let fds = [file.as_raw_fd()];
    let buffers = SlotBuffers::new(1, BLOCK, BLOCK).expect("buffer");
    let options = EngineOptions::default();
    let setup = EngineSetup { fds: &fds, buffers: buffers.region(), queue_depth: 1, direct: false, options: &options };
    let mut engine = match E::open(&setup) {
        Ok(e) => e,
        Err(e) => {
            println!("SKIP engine_round_trip/{label}: engine {} cannot start here: {e}", E::NAME);
            return;
        }
    };
    let mut completions = [Completion::default(); 1];
    let mut g = c.benchmark_group("engine_round_trip");
    g.throughput(Throughput::Bytes(BLOCK as u64));
    for op in [Op::Read, Op::Write] {
        let req = Request { slot: 0, op, file: 0, offset_bytes: 0, len_bytes: BLOCK as u32, buffer: BufferAt::Slot };
        g.bench_function(format!("{label}_{}_4k_cached", op.name()), |b| {
            b.iter(|| {
                // SAFETY: slot 0 exists in `buffers`, which outlives `engine`; nothing
                // else touches it, and the request is reaped before the next one.
                let result = match unsafe { engine.queue(black_box(req)) } {
                    Queued::Done(r) => r,
                    Queued::InFlight => {
                        engine.submit().expect("submit");
                        let n = engine.reap(1, &mut completions).expect("reap");
                        assert_eq!(n, 1);
                        completions[0].result
                    }
                    Queued::Full => panic!("engine {} is full with nothing in flight", E::NAME),
                };
                assert_eq!(result, BLOCK as i64);
            })
        });
    }
    g.finish();
    drop(engine);
    drop(buffers);
}

fn engine_round_trips(c: &mut Criterion) {
    engine_round_trip::<NullEngine>(c, "null");
    engine_round_trip::<SyncEngine>(c, "sync");
    engine_round_trip::<iopulse::testing::engine::UringEngine>(c, "io_uring");
    engine_round_trip::<iopulse::testing::engine::AioEngine>(c, "libaio");
    engine_round_trip::<iopulse::testing::engine::MmapEngine>(c, "mmap");
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    offsets(&mut c);
    histogram(&mut c);
    clock(&mut c);
    data_pattern(&mut c);
    write_data(&mut c);
    loop_null(&mut c);
    engine_round_trips(&mut c);
    c.final_summary();
}
