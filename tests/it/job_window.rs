//! The jobs of a phase share one window (issue 32): every worker of every job is set up
//! before one start word releases them all, the result records how far apart the jobs'
//! windows started (`window_skew.start_ns`), and the report says they shared one window
//! only when they did (a warning beyond 1 % of the window). A job file of thousands of
//! jobs answers SIGINT, SIGTERM and SIGHUP at every step, and `--ramp` never spends the
//! `--ops` or `--io-limit` budget.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A job file of `jobs` jobs, each `job` (TOML keys), named j0, j1, ...
fn job_file(dir: &Path, jobs: usize, global: &str, job: impl Fn(usize) -> String) -> String {
    let mut text = format!("[global]\n{global}\n");
    for i in 0..jobs {
        text.push_str(&format!("\n[j{i}]\n{}\n", job(i)));
    }
    let path = dir.join("jobs.toml");
    std::fs::write(&path, text).unwrap();
    path_str(&path)
}

/// Runs `iopulse ARGS`, killed (and the test failed) if still running after `limit`:
/// (exit code, stdout, stderr). Its output goes to files in `dir` (a report of hundreds
/// of jobs fills a pipe nobody reads while it runs).
fn run_within(dir: &Path, args: &[&str], limit: Duration) -> (i32, String, String) {
    let (out_path, err_path) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let file = |p: &Path| std::fs::File::create(p).unwrap();
    let mut child = iopulse().args(args).stdout(file(&out_path)).stderr(file(&err_path)).spawn().unwrap();
    let status = wait_within(&mut child, Instant::now(), limit, args);
    let text = |p: &Path| std::fs::read_to_string(p).unwrap();
    (status.code().unwrap_or(-1), text(&out_path), text(&err_path))
}

fn wait_within(child: &mut Child, since: Instant, limit: Duration, what: &[&str]) -> std::process::ExitStatus {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if since.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what:?}: still running {limit:?} after it started (or was signalled)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The thread limit is too low for `threads` more threads: the reason, printed as a skip.
fn too_few_threads(code: i32, stderr: &str, what: &str) -> bool {
    if code == 2 && stderr.contains("threads are needed") {
        eprintln!("SKIP: {what}: {}", stderr.trim());
        return true;
    }
    false
}

#[test]
fn two_hundred_null_jobs_start_their_windows_within_one_per_cent_of_it() {
    let dir = temp_dir();
    let file = job_file(dir.path(), 200, "engine = \"null\"\nduration = \"300ms\"\nfile-size = \"1M\"", |i| {
        format!("targets = [\"{}/n{i}.dat\"]", path_str(dir.path()))
    });
    let json = path_str(&dir.path().join("r.json"));
    let (code, out, err) = run_within(dir.path(), &["run", &file, "--json", &json], Duration::from_secs(120));
    if too_few_threads(code, &err, "200 jobs at once") {
        return;
    }
    assert_eq!(code, 0, "{err}\n{out}");
    let doc = read_json(&json);
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 200);
    // Every job's window, and the spread the combined result records.
    let starts: Vec<u64> = jobs.iter().map(|j| u64_at(j, &["window_start_unix_ns"])).collect();
    assert!(starts.iter().all(|&s| s > 0));
    let spread_ns = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    let window_ns = u64_at(&doc, &["window_ns"]);
    assert!(window_ns >= 300_000_000, "window {window_ns} ns");
    assert_eq!(u64_at(&doc, &["window_skew", "start_ns"]), spread_ns);
    assert_eq!(u64_at(&doc, &["window_skew", "results"]), 200);
    assert!(
        spread_ns * 100 <= window_ns,
        "the 200 windows started {spread_ns} ns apart, in a window of {window_ns} ns"
    );
    // The combined count is the jobs' (each job ran 300 ms of a window shared by 200
    // busy threads on the machine's CPUs), and the report says they shared it, with no
    // warning.
    let sum: u64 = jobs.iter().map(|j| u64_at(j, &["total", "ops"])).sum();
    assert!(sum > 0);
    assert_eq!(u64_at(&doc, &["total", "ops"]), sum);
    assert!(out.contains("combined from 200 job(s) that shared one window"), "{out}");
    assert!(out.contains("Windows:  200 results · starts"), "{out}");
    assert!(!out.contains("more than 1%"), "{out}");
}

#[test]
fn windows_that_start_apart_are_recorded_warned_and_not_called_one_window() {
    // A job with a --ramp of its own opens its window 200 ms after the other's.
    let dir = temp_dir();
    let file = job_file(dir.path(), 2, "engine = \"null\"\nduration = \"300ms\"\nfile-size = \"1M\"", |i| {
        let ramp = if i == 1 { "\nramp = \"200ms\"" } else { "" };
        format!("targets = [\"{}/n{i}.dat\"]{ramp}", path_str(dir.path()))
    });
    let json = path_str(&dir.path().join("r.json"));
    let (code, out, err) = run_within(dir.path(), &["run", &file, "--json", &json], Duration::from_secs(60));
    assert_eq!(code, 0, "{err}\n{out}");
    let doc = read_json(&json);
    let spread_ns = u64_at(&doc, &["window_skew", "start_ns"]);
    assert!((200_000_000..300_000_000).contains(&spread_ns), "spread {spread_ns} ns");
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w.as_str().unwrap().contains("windows started") && w.as_str().unwrap().contains("1%")),
        "{warnings:?}"
    );
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.contains("combined from 2 job(s) whose windows started")), "{notes:?}");
    assert!(!out.contains("shared one window"), "{out}");
    assert!(out.contains("more than 1% of the"), "{out}");
}

/// Starts `iopulse run FILE`, sends `signal` after `delay`, and asserts it ends within
/// `limit` with `code`; returns its stderr.
fn interrupt_after(file: &str, signal: i32, delay: Duration, limit: Duration, code: i32) -> Option<String> {
    let err_path = Path::new(file).with_extension("stderr");
    let stderr_file = std::fs::File::create(&err_path).unwrap();
    let mut child = iopulse().args(["run", file, "--quiet"]).stdout(Stdio::null()).stderr(stderr_file).spawn().unwrap();
    let stderr_of = |child: Child| {
        let _ = child.wait_with_output();
        std::fs::read_to_string(&err_path).unwrap()
    };
    // The signal is meant for a step of the run, so it waits for the run's handler first:
    // on a machine busy with other tests, 100 ms after the start may still be before
    // iopulse installed it, when SIGINT's default action ends the process (no exit code).
    // Then the rest of `delay`, counted from the start as before.
    let started = Instant::now();
    let handled = wait_for_handler(child.id(), signal, Duration::from_secs(20));
    std::thread::sleep(delay.saturating_sub(started.elapsed()));
    if let Some(status) = child.try_wait().unwrap() {
        let stderr = stderr_of(child);
        if too_few_threads(status.code().unwrap_or(-1), &stderr, "2,000 jobs at once") {
            return None;
        }
        panic!("ended ({status}) before the signal, {delay:?} after the start: {stderr}");
    }
    if !handled {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no handler of signal {signal} 20 s after the start");
    }
    // SAFETY: sending a signal to our own child process, by its pid.
    unsafe { libc::kill(child.id() as i32, signal) };
    let sent = Instant::now();
    let status = wait_within(&mut child, sent, limit, &["run", file]);
    eprintln!("signal {signal} {delay:?} after the start: ended {:?} after it", sent.elapsed());
    let stderr = stderr_of(child);
    assert_eq!(status.code(), Some(code), "signal {signal} {delay:?} after the start: {status}\n{stderr}");
    Some(stderr)
}

#[test]
fn two_thousand_small_jobs_stop_promptly_on_a_signal_at_any_step() {
    // 2,000 jobs of 10 s on files of their own: planning, starting 4,000 threads and
    // laying out 2,000 files take seconds; a signal at any of these steps, or in the
    // window, ends the run with the signal's exit code: alone within a second, within
    // 30 s here so that a machine busy with other tests does not fail it (a hang does).
    let dir = temp_dir();
    let file = job_file(dir.path(), 2000, "duration = \"10s\"\nfile-size = \"16k\"\nblock-size = \"4k\"", |i| {
        format!("targets = [\"{}/f{i}.dat\"]", path_str(dir.path()))
    });
    let limit = Duration::from_secs(10);
    for (signal, code, delay_ms) in
        [(libc::SIGINT, 130, 100), (libc::SIGINT, 130, 700), (libc::SIGTERM, 143, 1500), (libc::SIGHUP, 129, 3000)]
    {
        let Some(stderr) = interrupt_after(&file, signal, Duration::from_millis(delay_ms), limit, code) else {
            return;
        };
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn two_thousand_null_jobs_stop_promptly_on_sigint() {
    let dir = temp_dir();
    let file = job_file(dir.path(), 2000, "engine = \"null\"\nduration = \"30s\"\nfile-size = \"1M\"", |i| {
        format!("targets = [\"{}/n{i}.dat\"]", path_str(dir.path()))
    });
    for delay_ms in [300, 2000] {
        if interrupt_after(&file, libc::SIGINT, Duration::from_millis(delay_ms), Duration::from_secs(10), 130).is_none()
        {
            return;
        }
    }
}

/// The window's ops and length, and the ramp's ops, of a run of `args`.
fn window_of(args: &[&str]) -> (u64, u64, u64) {
    let r: Value = run_json(args);
    (u64_at(&r, &["total", "ops"]), u64_at(&r, &["window_ns"]), u64_at(&r, &["ramp_ops"]))
}

#[test]
fn the_ramp_never_spends_the_ops_budget() {
    let dir = temp_dir();
    let f = path_str(&zero_file(dir.path(), "r.dat", 4 << 20));
    // --ops alone after a ramp: the ramp, then a window of exactly the budget.
    let (ops, window_ns, ramp_ops) = window_of(&[&f, "--ramp", "500ms", "--ops", "1000", "--random"]);
    assert_eq!(ops, 1000);
    assert!(window_ns > 1, "a window of {window_ns} ns");
    assert!(ramp_ops > 1000, "the ramp did {ramp_ops} ops: more than the budget, none of it counted");
    // With a duration too, the budget ends the window first; two workers share it.
    let (ops, window_ns, ramp_ops) =
        window_of(&[&f, "--ramp", "300ms", "--duration", "30s", "--ops", "1000", "--threads", "2"]);
    assert_eq!(ops, 1000);
    assert!(window_ns > 1 && window_ns < 30_000_000_000 && ramp_ops > 0);
    // --io-limit: 4 MiB of 4 KiB blocks.
    let (ops, window_ns, _) = window_of(&[&f, "--ramp", "300ms", "--io-limit", "4m", "--block-size", "4k"]);
    assert_eq!((ops, window_ns > 1), (1024, true));
}

#[test]
fn the_ramp_never_spends_the_budget_of_a_queued_engine() {
    // I/Os in flight (and drawn ahead) at the ramp's end complete in the window: the
    // budget covers them, so the window still completes it exactly.
    let dir = temp_dir();
    let f = path_str(&zero_file(dir.path(), "q.dat", 4 << 20));
    for engine in ["io_uring", "libaio"] {
        if !engine_available(engine) {
            eprintln!("SKIP: {engine} unavailable");
            continue;
        }
        for write in ["0", "100"] {
            let (ops, window_ns, ramp_ops) = window_of(&[
                &f,
                "--engine",
                engine,
                "--queue-depth",
                "16",
                "--threads",
                "2",
                "--write-percent",
                write,
                "--random",
                "--ramp",
                "300ms",
                "--ops",
                "5000",
            ]);
            assert_eq!(ops, 5000, "{engine}, --write-percent {write}");
            assert!(window_ns > 1 && ramp_ops > 0, "{engine}: window {window_ns} ns, ramp {ramp_ops} ops");
        }
    }
}
