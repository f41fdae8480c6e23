//! The same checks against every engine: data lands at the right offsets,
//! counts add up, mixed workloads and several targets work, with and without
//! O_DIRECT. An engine whose kernel feature is missing is skipped with a message.

mod common;
use common::*;

/// Engines that move bytes to storage.
const STORAGE_ENGINES: &[&str] = &["sync", "io_uring", "libaio", "mmap"];

/// Engines that cannot use O_DIRECT (`--direct` is a usage error with them).
const NO_DIRECT_ENGINES: &[&str] = &["mmap"];

/// Whether `engine` can run here; prints why not when it cannot.
fn available(engine: &str) -> bool {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("probe.dat"));
    let (code, _, stderr) = run(&["--engine", engine, &f, "--file-size", "64k", "--duration", "0", "--quiet"]);
    if code != 0 {
        eprintln!("SKIP engine {engine}: not available here: {stderr}");
    }
    code == 0
}

#[test]
fn sequential_writes_land_at_their_offsets() {
    for &engine in STORAGE_ENGINES {
        if !available(engine) {
            continue;
        }
        for direct in [false, true] {
            if direct && NO_DIRECT_ENGINES.contains(&engine) {
                continue;
            }
            let dir = temp_dir();
            let bs = 4096usize;
            let f = zero_file(dir.path(), "w.dat", 256 * bs as u64);
            let fs = path_str(&f);
            let mut args = vec![
                "--engine",
                engine,
                &fs,
                "--duration",
                "0",
                "--write-percent",
                "100",
                "--verify",
                "--queue-depth",
                "8",
            ];
            if direct {
                args.push("--direct");
            }
            let r = run_json(&args);
            assert_eq!(u64_at(&r, &["write", "ops"]), 256, "{engine} direct={direct}");
            let data = std::fs::read(&f).unwrap();
            for (i, stamp) in header_offsets(&data, bs).into_iter().enumerate() {
                assert_eq!(
                    stamp,
                    (i * bs) as u64,
                    "{engine} direct={direct}: block {i} holds the stamp of offset {stamp}"
                );
            }
        }
    }
}

#[test]
fn random_writes_until_covered_touch_every_block_once() {
    for &engine in STORAGE_ENGINES {
        if !available(engine) {
            continue;
        }
        let dir = temp_dir();
        let bs = 512usize;
        let f = zero_file(dir.path(), "r.dat", 1000 * bs as u64);
        let fs = path_str(&f);
        let r = run_json(&[
            "--engine",
            engine,
            &fs,
            "--duration",
            "0",
            "--write-percent",
            "100",
            "--verify",
            "--random",
            "--block-size",
            "512",
            "--threads",
            "3",
            "--queue-depth",
            "4",
        ]);
        assert_eq!(u64_at(&r, &["write", "ops"]), 1000);
        let data = std::fs::read(&f).unwrap();
        // 1000 writes and every block carries its own offset: each block was written exactly once.
        for (i, stamp) in header_offsets(&data, bs).into_iter().enumerate() {
            assert_eq!(stamp, (i * bs) as u64, "{engine}: block {i} was not written");
        }
    }
}

#[test]
fn mixed_workload_counts_add_up() {
    for &engine in STORAGE_ENGINES.iter().chain(&["null"]) {
        if !available(engine) {
            continue;
        }
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
        let per_worker: u64 = r["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| u64_at(w, &["read", "ops"]) + u64_at(w, &["write", "ops"]))
            .sum();
        assert_eq!(per_worker, reads + writes, "{engine}: workers do not add up to the total");
    }
}

#[test]
fn several_targets_each_get_their_blocks() {
    for &engine in STORAGE_ENGINES {
        if !available(engine) {
            continue;
        }
        let dir = temp_dir();
        let bs = 4096usize;
        let a = zero_file(dir.path(), "a.dat", 64 * bs as u64);
        let b = zero_file(dir.path(), "b.dat", 32 * bs as u64);
        let (as_, bs_) = (path_str(&a), path_str(&b));
        let r = run_json(&[
            "--engine",
            engine,
            &as_,
            &bs_,
            "--duration",
            "0",
            "--write-percent",
            "100",
            "--verify",
            "--random",
            "--queue-depth",
            "4",
        ]);
        assert_eq!(u64_at(&r, &["write", "ops"]), 96);
        for (path, blocks) in [(&a, 64), (&b, 32)] {
            let data = std::fs::read(path).unwrap();
            let stamps = header_offsets(&data, bs);
            assert_eq!(stamps.len(), blocks);
            for (i, stamp) in stamps.into_iter().enumerate() {
                assert_eq!(stamp, (i * bs) as u64, "{engine}: {} block {i}", path.display());
            }
        }
    }
}
