//! The libaio and mmap engines through the real binary: what each says about
//! itself, the flags they take and refuse, durability timing, and a file
//! truncated under a running mmap worker.

use crate::common::*;
use std::time::{Duration, Instant};

fn setup_fact<'a>(r: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    r["engine"]["setup"][key].as_str()
}

/// A setup fact that is a count (libaio's submit and reap counters).
fn setup_count(r: &serde_json::Value, key: &str) -> u64 {
    let fact = setup_fact(r, key).unwrap_or_else(|| panic!("no setup fact {key}: {}", r["engine"]));
    fact.parse().unwrap_or_else(|e| panic!("setup fact {key} = {fact:?} is not a count: {e}"))
}

/// Runs `--engine libaio` on a fresh file with `args`; the JSON result.
fn run_libaio(args: &[&str]) -> serde_json::Value {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("a.dat"));
    run_json(&[&["--engine", "libaio", &f][..], args].concat())
}

/// A random pass over every block of a fresh 8 MiB file (2048 reads) with libaio at
/// queue depth 16, plus the `extra` flags; the JSON result.
fn libaio_random_pass(extra: &[&str]) -> serde_json::Value {
    run_libaio(&[&["--file-size", "8m", "--duration", "0", "--random", "--queue-depth", "16"][..], extra].concat())
}

/// Whether a `--direct` run really used O_DIRECT; prints that the test is skipped when not.
fn direct_effective(r: &serde_json::Value) -> bool {
    let effective = r["direct"]["effective"] == true;
    if !effective {
        eprintln!("SKIP: O_DIRECT is not available in the temporary directory: {}", r["direct"]);
    }
    effective
}

#[test]
fn libaio_buffered_says_once_that_io_submit_is_synchronous() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("b.dat"));
    let args =
        ["--engine", "libaio", &f, "--file-size", "4m", "--duration", "0.2", "--queue-depth", "8", "--threads", "2"];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr.matches("synchronously inside io_submit").count(),
        1,
        "said once, not per worker or I/O: {stderr}"
    );
    assert!(stdout.contains("libaio: buffered I/O is synchronous inside io_submit"), "{stdout}");

    let r = run_json(&args);
    assert!(r["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("io_submit")), "{}", r["notes"]);
    assert!(setup_fact(&r, "buffered_io").is_some(), "{}", r["engine"]);
}

#[test]
fn libaio_direct_has_no_buffered_note() {
    let r = run_libaio(&["--file-size", "4m", "--duration", "0.2", "--queue-depth", "8", "--direct"]);
    if !direct_effective(&r) {
        return;
    }
    assert!(r["notes"].as_array().unwrap().iter().all(|n| !n.as_str().unwrap().contains("io_submit")));
    assert!(setup_fact(&r, "buffered_io").is_none());
    assert_eq!(setup_fact(&r, "context_events"), Some("8"));
}

#[test]
fn libaio_reaps_from_the_ring_and_submits_buffered_io_in_pairs() {
    // Buffered: every request completes inside its io_submit, so completions are all
    // found in the ring without io_getevents.
    let r = libaio_random_pass(&[]);
    let ops = u64_at(&r, &["total", "ops"]);
    assert_eq!(ops, 2048);
    assert_eq!(setup_count(&r, "submit_batch_max"), 2);
    assert!(setup_count(&r, "io_submit_calls") <= ops / 2 + 16, "{}", r["engine"]);
    assert_eq!(setup_count(&r, "io_getevents_calls"), 0, "{}", r["engine"]);
    assert_eq!(setup_count(&r, "ring_reaped"), ops);
}

#[test]
fn libaio_direct_submits_two_per_call_unless_told_otherwise() {
    let r = libaio_random_pass(&["--direct"]);
    if !direct_effective(&r) {
        return;
    }
    let ops = u64_at(&r, &["total", "ops"]);
    // Two iocbs per io_submit: the most the kernel takes without plugging the block layer.
    assert_eq!(setup_count(&r, "submit_batch_max"), 2);
    assert!(setup_count(&r, "io_submit_calls") >= ops / 2, "{}", r["engine"]);

    let r = libaio_random_pass(&["--direct", "--submit-batch", "16"]);
    let ops = u64_at(&r, &["total", "ops"]);
    assert_eq!(setup_count(&r, "submit_batch_max"), 16);
    // The first batch alone holds 16 requests; later ones as many as completed together.
    assert!(setup_count(&r, "io_submit_calls") < ops, "{}", r["engine"]);
}

#[test]
#[ignore = "exhausts the system-wide AIO request limit for a moment (run alone: cargo test -- --ignored)"]
fn libaio_names_fs_aio_max_nr_when_the_limit_is_reached() {
    let max: u64 = std::fs::read_to_string("/proc/sys/fs/aio-max-nr").unwrap().trim().parse().unwrap();
    let threads = max / 32768 + 1;
    assert!(threads <= 64, "fs.aio-max-nr = {max} is too large to reach in a test");
    let dir = temp_dir();
    let f = path_str(&dir.path().join("n.dat"));
    let t = threads.to_string();
    let (code, _, stderr) = run(&[
        "--engine",
        "libaio",
        &f,
        "--file-size",
        "1m",
        "--block-size",
        "512",
        "--queue-depth",
        "32768",
        "--threads",
        &t,
        "--duration",
        "0.1",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("fs.aio-max-nr"), "{stderr}");
}

#[test]
fn mmap_direct_is_a_usage_error_and_touches_nothing() {
    let dir = temp_dir();
    let p = dir.path().join("never.dat");
    let (code, _, stderr) = run(&["--engine", "mmap", &path_str(&p), "--file-size", "1m", "--direct"]);
    assert_eq!(code, 2, "{stderr}");
    for engine in ["io_uring", "libaio", "sync"] {
        assert!(stderr.contains(engine), "the error suggests {engine}: {stderr}");
    }
    assert!(!p.exists(), "a refused run created its target");
}

#[test]
fn mmap_only_flags_are_refused_with_other_engines() {
    let dir = temp_dir();
    let p = path_str(&dir.path().join("x.dat"));
    for flags in [&["--madvise", "random"][..], &["--mmap-populate"][..]] {
        let mut args = vec!["--engine", "sync", p.as_str(), "--file-size", "1m"];
        args.extend_from_slice(flags);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{flags:?}: {stderr}");
        assert!(stderr.contains("--engine mmap"), "{stderr}");
    }
}

#[test]
fn mmap_accepts_every_advice_and_populate() {
    let dir = temp_dir();
    let f = path_str(&zero_file(dir.path(), "a.dat", 1 << 20));
    for advice in ["random", "sequential", "hugepage", "willneed"] {
        let r = run_json(&["--engine", "mmap", &f, "--duration", "0", "--madvise", advice]);
        assert_eq!(u64_at(&r, &["read", "ops"]), 256, "{advice}");
        assert_eq!(setup_fact(&r, "madvise"), Some(advice));
    }
    let r = run_json(&["--engine", "mmap", &f, "--duration", "0", "--mmap-populate"]);
    assert_eq!(setup_fact(&r, "populate"), Some("MAP_POPULATE"));
    let r = run_json(&["--engine", "mmap", &f, "--duration", "0"]);
    assert_eq!(setup_fact(&r, "populate"), Some("no (faults are measured)"));
}

#[test]
fn mmap_reads_land_in_order() {
    // Layout writes verifiable blocks; reading them back through the mapping with
    // --verify checks that every read saw the block of its own offset.
    let dir = temp_dir();
    let f = dir.path().join("l.dat");
    let fs = path_str(&f);
    let r = run_json(&["--engine", "mmap", &fs, "--file-size", "1m", "--duration", "0", "--random", "--verify"]);
    assert_eq!(u64_at(&r, &["read", "ops"]), 256);
    assert_eq!(u64_at(&r, &["verification", "operations"]), 256);
    assert_eq!(u64_at(&r, &["verification", "failures"]), 0);
    assert_blocks_hold_their_offsets(&f, 4096, 256, "the mmap layout");
}

#[test]
fn mmap_writes_are_msynced_and_timed_apart_from_the_window() {
    let dir = temp_dir();
    let f = path_str(&zero_file(dir.path(), "w.dat", 4 << 20));
    let r = run_json(&["--engine", "mmap", &f, "--duration", "0", "--write-percent", "100"]);
    let d = &r["durability"];
    assert!(d["msync_ns"].as_u64().is_some(), "{d}");
    assert!(d["fsync_ns"].is_null(), "{d}");
    assert_eq!(d["sync_ns"], d["msync_ns"]);

    let (code, stdout, _) =
        run(&["--engine", "mmap", &f, "--duration", "0", "--write-percent", "100", "--fsync-on-close"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Durable") && stdout.contains("msync") && stdout.contains("fsync"), "{stdout}");

    let r = run_json(&["--engine", "mmap", &f, "--duration", "0"]);
    assert!(r["durability"].is_null(), "a read-only run syncs nothing: {}", r["durability"]);
}

#[test]
fn fsync_on_close_works_for_every_storage_engine() {
    for engine in ["sync", "libaio", "mmap"] {
        let dir = temp_dir();
        let f = path_str(&zero_file(dir.path(), "s.dat", 1 << 20));
        let r = run_json(&["--engine", engine, &f, "--duration", "0", "--write-percent", "50", "--fsync-on-close"]);
        assert!(r["durability"]["fsync_ns"].as_u64().is_some(), "{engine}: {}", r["durability"]);
        assert_eq!(r["spec"]["fsync_on_close"], true);
    }
}

#[test]
fn mmap_on_a_file_truncated_during_the_run_fails_with_file_and_offset() {
    for write_percent in ["0", "50"] {
        let dir = temp_dir();
        let p = zero_file(dir.path(), "t.dat", 32 << 20);
        let ps = path_str(&p);
        let mut child = iopulse()
            .args(["--engine", "mmap", &ps, "--random", "--duration", "20s", "--write-percent", write_percent])
            .args(["--quiet", "--output-format", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Truncate once the worker has the file mapped (a fixed sleep of 400 ms could end
        // before a process starved of CPU had mapped it, and the run then went on for its
        // 20 s on the short file): /proc names the file among the process's mappings.
        let maps = format!("/proc/{}/maps", child.id());
        let mapped = std::fs::canonicalize(&p).unwrap();
        let waiting = Instant::now();
        while !std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(mapped.to_str().unwrap())) {
            assert!(child.try_wait().unwrap().is_none(), "the run ended before it mapped {ps}");
            if waiting.elapsed() > Duration::from_secs(15) {
                let _ = child.kill();
                panic!("the mmap worker never mapped {ps}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        let started = Instant::now();
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(8192).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(started.elapsed() < Duration::from_secs(10), "the run did not stop on the truncation");
        assert_eq!(
            out.status.code(),
            Some(1),
            "write {write_percent}%: exit {:?} (a signal means a crash): {stderr}",
            out.status
        );
        assert!(stderr.contains(&ps) && stderr.contains("at offset") && stderr.contains("truncated"), "{stderr}");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the partial result is still printed");
        assert_eq!(r["stop_reason"], "error");
    }
}
