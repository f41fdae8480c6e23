//! Think time and rate limits from the command line, on real files and the null
//! engine. Bounds are wide on purpose (timing on a shared machine); the
//! benchmarks quote the precise figures.

use crate::common::*;
use std::sync::Mutex;

/// The tests of this file measure time: they run one at a time, so that they do not
/// take each other's CPU (the test harness runs tests of a file in parallel).
static TIMING: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    TIMING.lock().unwrap_or_else(|e| e.into_inner())
}

fn f64_at(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for k in path {
        cur = &cur[*k];
    }
    cur.as_f64().unwrap_or_else(|| panic!("{path:?} is not a number: {cur}"))
}

#[test]
fn think_time_of_1ms_holds_sync_at_or_below_1000_iops() {
    let _timing = one_at_a_time();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let r = run_json(&[&f, "--file-size", "4m", "--random", "--think-time", "1ms", "--duration", "2s"]);
    let iops = f64_at(&r, &["read", "iops"]);
    assert!(iops <= 1000.0 && iops > 200.0, "{iops} IOPS");
    let think = &r["pacing"]["think"];
    let (asked, spent) = (f64_at(think, &["requested_ns"]), f64_at(think, &["spent_ns"]));
    assert!(spent >= asked * 0.99, "spent {spent} < asked {asked}: overshoot must be measured, not assumed");
    // Each think was asked for 1 ms; the share of the run spent thinking is what the
    // thinks really took over the window.
    assert_eq!(u64_at(think, &["thinks"]), u64_at(&r, &["read", "ops"]));
    let share = f64_at(think, &["share_of_run"]);
    let truth = spent / f64_at(&r, &["window_ns"]);
    assert!((share - truth).abs() < 1e-9 && share > 0.5 && share <= 1.0, "share {share}, truth {truth}");
}

#[test]
fn spin_think_is_close_to_what_was_asked() {
    let _timing = one_at_a_time();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    let r = run_json(&[&f, "--engine", "null", "--think-time", "50us", "--think-mode", "spin", "--duration", "1s"]);
    let think = &r["pacing"]["think"];
    let per_think = f64_at(think, &["spent_ns"]) / f64_at(think, &["thinks"]);
    // Never shorter than asked; on a quiet machine within a few % (benchmarks quote the
    // figure); here only a bound that a busy 2-core CI machine cannot break by preemption.
    assert!((50_000.0..500_000.0).contains(&per_think), "{per_think} ns per 50 µs think");
}

#[test]
fn think_every_n_thinks_after_every_n_ios() {
    let _timing = one_at_a_time();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("n.dat"));
    let r = run_json(&[&f, "--engine", "null", "--think-time", "100us", "--think-every", "10", "--ops", "1000"]);
    assert_eq!(u64_at(&r, &["pacing", "think", "thinks"]), 100);
}

#[test]
fn think_time_slows_an_async_engine_at_depth_32() {
    let _timing = one_at_a_time();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("a.dat"));
    let engines = ["io_uring", "libaio", "null"];
    for engine in engines {
        let (code, _, stderr) = run(&["--engine", engine, &f, "--file-size", "4m", "--duration", "0", "--quiet"]);
        if code != 0 {
            eprintln!("SKIP engine {engine}: {}", stderr.trim());
            continue;
        }
        let free = run_json(&[&f, "--engine", engine, "--random", "--queue-depth", "32", "--duration", "1s"]);
        let thinking = run_json(&[
            &f,
            "--engine",
            engine,
            "--random",
            "--queue-depth",
            "32",
            "--duration",
            "1s",
            "--think-time",
            "1ms",
            "--think-every",
            "32",
        ]);
        let (a, b) = (u64_at(&free, &["read", "ops"]), u64_at(&thinking, &["read", "ops"]));
        assert!(b * 2 < a, "{engine}: {b} I/Os with think time, {a} without");
        // About 32 I/Os per 1 ms think at most.
        assert!(b < 40_000, "{engine}: {b} I/Os in 1 s with 1 ms think every 32");
    }
}

#[test]
fn rate_iops_2000_for_3s_gives_6000_ios_within_5_percent() {
    let _timing = one_at_a_time();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("r.dat"));
    for extra in [&["--engine", "null"][..], &["--random"][..]] {
        let mut args = vec![f.as_str(), "--file-size", "8m", "--rate-iops", "2000", "--duration", "3s"];
        args.extend_from_slice(extra);
        let r = run_json(&args);
        let ops = u64_at(&r, &["total", "ops"]) as f64;
        assert!((5700.0..=6300.0).contains(&ops), "{extra:?}: {ops} I/Os, want 6000 ± 5 %");
        assert!(r["pacing"]["rate"]["latency_from"].as_str().unwrap().contains("due"), "{}", r["pacing"]);
    }
    // --rate-total shares the target between workers.
    let r = run_json(&[
        &f,
        "--engine",
        "null",
        "--rate-iops",
        "2000",
        "--rate-total",
        "--threads",
        "2",
        "--duration",
        "2s",
    ]);
    let ops = u64_at(&r, &["total", "ops"]) as f64;
    assert!((3800.0..=4200.0).contains(&ops), "{ops} I/Os in 2 s at 2000 for the run");
}

#[test]
fn an_unreachable_rate_is_reported() {
    let _timing = one_at_a_time();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("u.dat"));
    // 1 ms of think per I/O caps a worker near 1000 IOPS: 5000 cannot be reached.
    let (code, text, _) =
        run(&[&f, "--file-size", "4m", "--rate-iops", "5000", "--think-time", "1ms", "--duration", "1s"]);
    assert_eq!(code, 0);
    assert!(text.contains("NOT REACHED"), "{text}");
}
