//! Cost of generating one block number, per access pattern and distribution,
//! at 2^20 and 2^34 blocks (4 GiB and 64 TiB of 4 KiB blocks), and the cost of
//! setting a source up for a 10 TiB region (`new/...`).
//!
//! Each iteration draws a batch of `BATCH` block numbers and criterion reports
//! per element: that is how a worker uses a source (one draw per I/O in a
//! loop), and it keeps criterion's own per-iteration overhead (a closure call
//! and a `black_box`, a few ns) out of a figure that is itself a few ns.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iopulse::testing::access::{AccessOrder, Distribution};
use iopulse::testing::access::{BlockSource, SourcePlan};
use std::hint::black_box;

fn plan(order: AccessOrder, distribution: Distribution, once: bool, blocks: u64) -> SourcePlan {
    SourcePlan {
        order,
        distribution,
        scramble: true,
        once,
        blocks,
        share_index: 0,
        share_count: 1,
        overlap: false,
        seed: 42,
        worker: 0,
        random_percent: 100,
        block_bytes: 4096,
    }
}

fn cases() -> Vec<(&'static str, AccessOrder, Distribution, bool)> {
    vec![
        ("sequential", AccessOrder::Sequential, Distribution::Uniform, false),
        ("uniform", AccessOrder::Random, Distribution::Uniform, false),
        ("permutation", AccessOrder::Random, Distribution::Uniform, true),
        ("zipf-1.2", AccessOrder::Random, Distribution::Zipf { theta: 1.2 }, false),
        ("zipf-1.0", AccessOrder::Random, Distribution::Zipf { theta: 1.0 }, false),
        ("pareto-0.9", AccessOrder::Random, Distribution::Pareto { h: 0.9 }, false),
        ("gaussian", AccessOrder::Random, Distribution::Gaussian { stddev: 0.1, center: 0.5 }, false),
    ]
}

/// Block numbers drawn per iteration.
const BATCH: u64 = 1024;

fn next_block(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_block");
    group.throughput(Throughput::Elements(BATCH));
    for bits in [20u32, 34] {
        let partly_random = (
            "uniform-50%-random",
            SourcePlan { random_percent: 50, ..plan(AccessOrder::Random, Distribution::Uniform, false, 1u64 << bits) },
        );
        let all = cases().into_iter().map(|(name, order, dist, once)| (name, plan(order, dist, once, 1u64 << bits)));
        for (name, p) in all.chain([partly_random]) {
            group.bench_with_input(BenchmarkId::new(name, format!("2^{bits}")), &p, |b, p| {
                let mut source = BlockSource::new(p);
                b.iter(|| {
                    for _ in 0..BATCH {
                        match source.next_block() {
                            // Each block number is used, as a worker would use it.
                            Some(block) => {
                                black_box(block);
                            }
                            None => source = BlockSource::new(p),
                        }
                    }
                })
            });
        }
    }
    group.finish();
}

fn setup(c: &mut Criterion) {
    let mut group = c.benchmark_group("new");
    for (name, order, dist, once) in cases() {
        let p = plan(order, dist, once, 10u64 << 28); // 10 TiB of 4 KiB blocks
        group
            .bench_with_input(BenchmarkId::new(name, "10TiB/4k"), &p, |b, p| b.iter(|| black_box(BlockSource::new(p))));
    }
    group.finish();
}

criterion_group!(benches, next_block, setup);
criterion_main!(benches);
