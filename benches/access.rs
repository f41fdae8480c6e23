//! Cost of generating one block number, per access pattern and distribution,
//! at 2^20 and 2^34 blocks (4 GiB and 64 TiB of 4 KiB blocks). Nothing is
//! precomputed, so set-up cost is also shown (`new/...`).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iopulse::access::{BlockSource, SourcePlan};
use iopulse::spec::{AccessOrder, Distribution};
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

fn next_block(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_block");
    group.throughput(Throughput::Elements(1));
    for bits in [20u32, 34] {
        for (name, order, dist, once) in cases() {
            let p = plan(order, dist, once, 1u64 << bits);
            group.bench_with_input(BenchmarkId::new(name, format!("2^{bits}")), &p, |b, p| {
                let mut source = BlockSource::new(p);
                b.iter(|| {
                    let block = source.next_block();
                    if block.is_none() {
                        source = BlockSource::new(p);
                    }
                    black_box(block)
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
