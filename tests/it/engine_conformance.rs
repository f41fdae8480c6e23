//! The same checks against every engine: data lands at the right offsets,
//! counts add up, mixed workloads and several targets work, with and without
//! O_DIRECT. An engine whose kernel feature is missing is skipped with a message.

use crate::common::*;

/// Engines that move bytes to storage.
const STORAGE_ENGINES: &[&str] = &["sync", "io_uring", "libaio", "mmap"];

/// Engines that cannot use O_DIRECT (`--direct` is a usage error with them).
const NO_DIRECT_ENGINES: &[&str] = &["mmap"];

/// The `engines` that can run here; each one left out says why (see `engine_available`).
fn available(engines: &[&'static str]) -> Vec<&'static str> {
    engines.iter().copied().filter(|engine| engine_available(engine)).collect()
}

#[test]
fn sequential_writes_land_at_their_offsets() {
    for engine in available(STORAGE_ENGINES) {
        for direct in [false, true] {
            if direct && NO_DIRECT_ENGINES.contains(&engine) {
                continue;
            }
            let mut extra = vec!["--queue-depth", "8"];
            if direct {
                extra.push("--direct");
            }
            write_each_block_once(engine, 4096, 256, &extra, &format!("{engine} direct={direct}"));
        }
    }
}

#[test]
fn random_writes_until_covered_touch_every_block_once() {
    for engine in available(STORAGE_ENGINES) {
        // 1000 writes and every block carries its own offset: each block was written exactly once.
        write_each_block_once(engine, 512, 1000, &["--random", "--threads", "3", "--queue-depth", "4"], engine);
    }
}

#[test]
fn mixed_workload_counts_add_up() {
    for engine in available(&[STORAGE_ENGINES, &["null"]].concat()) {
        let dir = temp_dir();
        let f = path_str(&dir.path().join("m.dat"));
        let r = run_json(&[
            "--engine",
            engine,
            &f,
            "--file-size",
            "4m",
            "--duration",
            "0.3",
            "--random",
            "--write-percent",
            "50",
            "--threads",
            "2",
            "--queue-depth",
            "4",
            "--seed",
            "7",
        ]);
        let (reads, writes) = (u64_at(&r, &["read", "ops"]), u64_at(&r, &["write", "ops"]));
        assert!(reads > 0 && writes > 0, "{engine}: {reads} reads, {writes} writes");
        assert_eq!(u64_at(&r, &["total", "ops"]), reads + writes);
        assert_eq!(u64_at(&r, &["total", "bytes"]), (reads + writes) * 4096);
        assert_eq!(per_worker_ops(&r), reads + writes, "{engine}: workers do not add up to the total");
    }
}

#[test]
fn several_targets_each_get_their_blocks() {
    for engine in available(STORAGE_ENGINES) {
        let dir = temp_dir();
        let bs = 4096usize;
        let a = zero_file(dir.path(), "a.dat", 64 * bs as u64);
        let b = zero_file(dir.path(), "b.dat", 32 * bs as u64);
        let (as_, bs_) = (path_str(&a), path_str(&b));
        let r = run_json(&write_pass_args(engine, &[&as_, &bs_], &["--random", "--queue-depth", "4"]));
        assert_eq!(u64_at(&r, &["write", "ops"]), 96);
        for (path, blocks) in [(&a, 64), (&b, 32)] {
            assert_blocks_hold_their_offsets(path, bs, blocks, engine);
        }
    }
}

/// `--submit-batch`: libaio and io_uring hand the kernel at most N requests per call
/// (recorded as the engine's `submit_batch_max`), 2 by default with O_DIRECT, held
/// within 1..=depth; the data still lands at the right offsets.
#[test]
fn submit_batch_bounds_each_submission_call() {
    for engine in available(&["libaio", "io_uring"]) {
        let dir = temp_dir();
        let file = dir.path().join("batch.dat");
        let path = path_str(&file);
        let mut last_ops = 0;
        for (batch, want) in [(None, "2"), (Some("1"), "1"), (Some("8"), "8"), (Some("1000"), "16")] {
            let mut args = write_pass_args(engine, &[path.as_str()], &["--direct", "--file-size", "1m"]);
            args.extend(["--queue-depth", "16"]);
            if let Some(b) = batch {
                args.extend(["--submit-batch", b]);
            }
            let r = run_json(&args);
            if r["direct"]["effective"] != true {
                eprintln!("SKIP submit-batch on {engine}: O_DIRECT not in effect here ({})", r["direct"]);
                return;
            }
            let got = r["engine"]["setup"]["submit_batch_max"].as_str().unwrap_or_default().to_string();
            assert_eq!(got, want, "{engine} --submit-batch {batch:?}");
            last_ops = u64_at(&r, &["total", "ops"]);
            assert_eq!(last_ops, 256, "{engine} --submit-batch {batch:?}: every block once");
        }
        assert_eq!(last_ops, 256);
        assert_blocks_hold_their_offsets(&file, 4096, 256, &format!("{engine} --submit-batch 1000"));
    }
}
