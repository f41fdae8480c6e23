//! Paced runs (think time, rate limits) of inline engines end on time, answer a
//! signal during a long think with the I/O they did, and spread their completions
//! over the time series. Each of these failed before the worker had one loop: the paced
//! loop of inline engines never looked at its deadline, the stop word or the interval.

use crate::common::*;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Waits for `child` at most `limit` (killing it and failing the test after that);
/// returns (exit code, stdout).
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> (i32, String) {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn spawn_json(args: &[&str]) -> Child {
    iopulse()
        .args(args)
        .args(["--output-format", "json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn an_unreachable_rate_on_an_inline_engine_ends_at_its_deadline_with_its_io_counted() {
    let dir = temp_dir();
    for engine in ["sync", "mmap"] {
        let f = path_str(&dir.path().join(format!("{engine}.dat")));
        let args = ["--file-size", "1M", "--engine", engine, "--rate-iops", "50000000", "--duration", "1"];
        let child = spawn_json(&[&[f.as_str()][..], &args[..]].concat());
        // The window is 1 s; layout and report take well under the rest.
        let (code, out) = wait_bounded(child, Duration::from_secs(15), engine);
        assert_eq!(code, 0, "{engine}: {out}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(u64_at(&r, &["read", "ops"]) > 0, "{engine}: no I/O done");
        let rate = &r["pacing"]["rate"];
        assert_eq!(rate["reached"], false, "{engine}: {rate}");
        // Open loop: nothing is skipped, so what was not issued is owed at the end, and
        // the tail shows how far behind the schedule fell (hundreds of ms in a 1 s run:
        // not capped at the 10 ms the pacer used to drop slots after).
        assert!(u64_at(rate, &["backlog_at_end"]) > 1_000_000, "{engine}: {rate}");
        let behind_ns = u64_at(rate, &["max_behind_ns"]);
        assert!(behind_ns > 100_000_000, "{engine}: {rate}");
        let p99_ns = u64_at(&r, &["read", "latency_ns", "p99"]);
        assert!(p99_ns > 100_000_000, "{engine}: p99 {p99_ns} ns under a backlog that grew for a second");
    }
}

#[test]
fn sigint_during_a_long_think_ends_the_run_with_the_io_done() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("think.dat"));
    let child = spawn_json(&[&f, "--file-size", "1M", "--think-time", "1h", "--threads", "2", "--duration", "60"]);
    // The handler (a starved child may not have installed it yet), then long enough for
    // layout and the first I/O of each worker; then each thinks for an hour.
    assert!(wait_for_handler(child.id(), libc::SIGINT, Duration::from_secs(20)), "no SIGINT handler");
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process, whose pid we hold.
    let sent = unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(sent, 0);
    let (code, out) = wait_bounded(child, Duration::from_secs(10), "think 1h then SIGINT");
    assert_eq!(code, 130, "{out}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(u64_at(&r, &["read", "ops"]), 2, "each worker did one I/O before thinking: {}", r["read"]);
    assert_eq!(u64_at(&r, &["pacing", "think", "thinks"]), 2);
}

#[test]
fn a_paced_inline_run_spreads_its_completions_over_the_intervals() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("ts.dat"));
    let args = [
        f.as_str(),
        "--file-size",
        "1M",
        "--engine",
        "sync",
        "--think-time",
        "100us",
        "--interval",
        "250ms",
        "--duration",
        "1",
    ];
    let r = run_json(&args);
    let total = u64_at(&r, &["read", "ops"]);
    let rows = r["time_series"].as_array().expect("time_series array");
    let per_row: Vec<u64> = rows.iter().map(|row| u64_at(row, &["read", "ops"])).collect();
    assert_eq!(per_row.iter().sum::<u64>(), total, "rows {per_row:?} do not add up to {total}");
    assert!(rows.len() >= 4, "1 s in 250 ms intervals: {per_row:?}");
    // The think time sets an even pace: no interval holds most of the run's I/O.
    let busiest = per_row.iter().copied().max().unwrap();
    assert!(busiest * 2 < total, "one interval took {busiest} of {total}: {per_row:?}");
}

#[test]
fn an_interval_in_which_nothing_completed_is_a_row_of_zeros_not_a_gap() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("stall.dat"));
    // One I/O, then 700 ms of thinking: most 200 ms intervals see no completion.
    let args = [f.as_str(), "--file-size", "1M", "--think-time", "700ms", "--interval", "200ms", "--duration", "2"];
    let r = run_json(&args);
    let rows = r["time_series"].as_array().expect("time_series array");
    let ends: Vec<u64> = rows.iter().map(|row| u64_at(row, &["t_ns"])).collect();
    assert!(rows.len() >= 9, "2 s in 200 ms intervals, one row each: {ends:?}");
    for pair in ends.windows(2) {
        let step = pair[1] - pair[0];
        assert!(step <= 300_000_000, "a gap between rows ending at {} and {} ns", pair[0], pair[1]);
    }
    let zero_rows = rows.iter().filter(|row| u64_at(row, &["read", "ops"]) == 0).count();
    assert!(zero_rows >= 4, "{zero_rows} zero rows among {}", rows.len());
    let sum: u64 = rows.iter().map(|row| u64_at(row, &["read", "ops"])).sum();
    assert_eq!(sum, u64_at(&r, &["read", "ops"]));
}

/// A paced run splits each I/O's latency (from its due time) into the tool's lateness
/// (due → submitted) and the service time (submitted → done): one sample of each per
/// counted I/O, at any depth, and their means add up to the headline's.
#[test]
fn a_paced_run_measures_its_own_lateness_apart_from_the_io() {
    let dir = temp_dir();
    for depth in ["1", "4"] {
        let f = path_str(&dir.path().join(format!("late{depth}.dat")));
        let (code, text, stderr) = run(&[
            &f,
            "--engine",
            "null",
            "--queue-depth",
            depth,
            "--rate-iops",
            "2000",
            "--duration",
            "1",
            "--json",
            &path_str(&dir.path().join(format!("r{depth}.json"))),
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert!(text.contains("tool's lateness (due → submitted)"), "{text}");
        assert!(text.contains("service time (submitted → done)"), "{text}");
        let r = read_json(dir.path().join(format!("r{depth}.json")));
        let rate = &r["pacing"]["rate"];
        let ops = u64_at(&r, &["total", "ops"]);
        assert!(ops > 1_000, "depth {depth}: {ops} I/Os at 2000 IOPS for 1 s");
        assert_eq!(u64_at(rate, &["lateness", "ios"]), ops, "depth {depth}: {rate}");
        assert_eq!(u64_at(rate, &["service", "ios"]), ops, "depth {depth}: {rate}");
        // The histograms themselves hold one sample per I/O.
        for part in ["lateness", "service"] {
            let blob = rate[part]["histogram"].as_str().unwrap();
            assert_eq!(iopulse::testing::stats::decode_histogram(blob).unwrap().len(), ops, "depth {depth}: {part}");
        }
        // latency = lateness + service for every I/O: the means (each rounded down) agree.
        let mean = |v: &serde_json::Value| u64_at(v, &["latency_ns", "mean"]);
        let sum = mean(&rate["lateness"]) + mean(&rate["service"]);
        let headline = mean(&r["total"]);
        assert!(sum.abs_diff(headline) <= 2, "depth {depth}: {sum} vs {headline}");
        // A null I/O takes microseconds; the tool's lateness on an idle machine is tens of
        // them (docs/performance.md). The bound here is generous for a loaded test host:
        // the p99 of a pacer that lost its schedule (no spin, a sleep per I/O) is the slot.
        let p99_ns = u64_at(rate, &["lateness", "latency_ns", "p99"]);
        assert!(p99_ns < 100_000_000, "depth {depth}: p99 lateness {p99_ns} ns");
    }
}
