//! Faults (issue 11): signals, a full disk, failing I/O and stuck I/O, on the
//! real binary. Tests that need root (tmpfs, loop devices, blkio throttling)
//! print `SKIP: ...` and return when they cannot run.

use crate::common::root::{self, LoopOptions};
use crate::common::*;
use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn signal(child: &Child, sig: i32) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
}

fn spawn(args: &[&str]) -> Child {
    iopulse().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn iopulse")
}

fn json_file(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON ({e}): {text}"))
}

/// Collects a child's stdout and stderr as they come, so a test can look at what was
/// printed while the process is still alive (a thread of it stuck in the kernel).
struct Output {
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Output {
    fn collect(child: &mut Child) -> Output {
        let pump = |mut r: Box<dyn Read + Send>| {
            let buf = Arc::new(Mutex::new(String::new()));
            let b = Arc::clone(&buf);
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    b.lock().unwrap().push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            });
            buf
        };
        Output {
            stdout: pump(Box::new(child.stdout.take().unwrap())),
            stderr: pump(Box::new(child.stderr.take().unwrap())),
        }
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until stdout contains `text`; returns how long it took, or None after `limit`.
    fn wait_for(&self, text: &str, limit: Duration) -> Option<Duration> {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if self.stdout().contains(text) {
                return Some(t0.elapsed());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

/// The state letter of a process (R, S, D, Z, ...) from /proc.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim().chars().next()
}

// ---------------------------------------------------------------- signals

#[test]
fn sigterm_stops_within_a_second_exits_143_and_keeps_the_partial_results() {
    for engine in ["sync", "libaio"] {
        let dir = temp_dir();
        let f = path_str(&dir.path().join("t.dat"));
        let json = path_str(&dir.path().join("t.json"));
        let mut args = vec![f.as_str(), "--file-size", "8m", "--duration", "60s", "--random", "--json", &json];
        args.extend(["--engine", engine, "--threads", "2"]);
        if engine == "libaio" {
            args.extend(["--queue-depth", "16", "--direct"]);
        }
        let child = spawn(&args);
        // The handler first: a child starved of CPU may not have installed it yet, and
        // SIGTERM's default action would end it without a report.
        assert!(wait_for_handler(child.id(), libc::SIGTERM, Duration::from_secs(20)), "{engine}: no SIGTERM handler");
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, libc::SIGTERM);
        let t0 = Instant::now();
        let out = child.wait_with_output().unwrap();
        let took = t0.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(143), "{engine}: {stderr}");
        assert!(took < Duration::from_millis(1500), "{engine}: took {took:?} to stop after SIGTERM");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("INTERRUPTED"), "{engine}: {text}");
        let r = json_file(&json);
        assert_eq!(r["stop_reason"], "interrupted");
        assert_eq!(r["interrupted"], true);
        assert!(u64_at(&r, &["read", "ops"]) > 0, "{engine}: no ops in the partial result");
        assert!(r["stuck_io"].as_array().unwrap().is_empty(), "{engine}: {}", r["stuck_io"]);
    }
}

/// Two signals in a row: the second exits at once, without the report. The child is
/// stopped while both are sent, so that both are pending when it continues (worker
/// threads block them, so both go to the coordinator's thread).
#[test]
fn a_second_signal_exits_at_once() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("two.dat"));
    let json = path_str(&dir.path().join("two.json"));
    let child = spawn(&[&f, "--file-size", "4m", "--duration", "60s", "--random", "--json", &json]);
    // Both handlers installed (SIGTERM's after SIGINT's) before either signal is sent.
    assert!(wait_for_handler(child.id(), libc::SIGTERM, Duration::from_secs(20)), "no SIGTERM handler");
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGTERM);
    signal(&child, libc::SIGCONT);
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(1), "took {:?}", t0.elapsed());
    // Which of the two handlers runs second is the kernel's choice (it sets up both frames
    // before returning to user space, so the later one runs first): either code is right.
    let code = out.status.code();
    assert!(code == Some(130) || code == Some(143), "exit {code:?}");
    assert!(out.stdout.is_empty(), "a report was printed: {}", String::from_utf8_lossy(&out.stdout));
    assert!(!std::path::Path::new(&json).exists(), "the JSON file was written");
}

// ---------------------------------------------------------------- full disk

/// A layout larger than the free space used to fail half-way with ENOSPC; it is now
/// refused before the file is created (the ENOSPC path remains for a disk that others
/// fill during layout).
#[test]
fn a_layout_larger_than_the_free_space_is_refused_before_the_file_exists() {
    let Some(fs) = root::mount_tmpfs("8m", "", "layout beyond the free space") else { return };
    let f = path_str(&fs.path().join("big.dat"));
    let (code, stdout, stderr) = run(&[&f, "--file-size", "16m", "--duration", "1s"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    for needed in [f.as_str(), "--file-size", "needs 16777216 bytes", "free"] {
        assert!(stderr.contains(needed), "stderr lacks '{needed}': {stderr}");
    }
    assert!(!std::path::Path::new(&f).exists(), "no file was created");
}

#[test]
fn enospc_during_the_run_stops_it_and_keeps_the_results_so_far() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("ENOSPC during the run") else { return };
    let out_dir = temp_dir();
    let json = path_str(&out_dir.path().join("e.json"));
    let (code, stdout, stderr) = run(&[&f, "--write-percent", "100", "--duration", "0", "--json", &json]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(&format!("write {f} at offset 8388608: No space left on device")), "{stderr}");
    assert!(stderr.contains("the filesystem is full (8388608 bytes written by this run before it)"), "{stderr}");
    assert!(stdout.contains("STOPPED BY AN ERROR"), "{stdout}");
    let r = json_file(&json);
    assert_eq!(r["stop_reason"], "error");
    assert_eq!(u64_at(&r, &["write", "ops"]), 2048, "the 8 MiB that fit are in the results");
    assert_eq!(r["io_errors"]["kinds"][0]["errno"], "ENOSPC");
    assert_eq!(u64_at(&r, &["io_errors", "kinds", "0", "first", "0", "offset_bytes"]), 8 << 20);
}

#[test]
fn continue_on_error_counts_enospc_per_op_and_goes_on() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("--continue-on-error with ENOSPC") else { return };
    let (code, stdout, stderr) =
        run(&[&f, "--write-percent", "100", "--duration", "0", "--continue-on-error", "--output-format", "json"]);
    assert_eq!(code, 1, "errors were counted: the run did not succeed\n{stderr}");
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["stop_reason"], "complete", "the run went on to the end");
    assert_eq!(r["io_errors"]["limit"], serde_json::Value::Null);
    let failed = u64_at(&r, &["io_errors", "total"]);
    assert_eq!(u64_at(&r, &["write", "ops"]) + failed, 4096, "every block was tried once");
    assert_eq!(failed, 2048);
    let kind = &r["io_errors"]["kinds"][0];
    assert_eq!(
        (kind["op"].as_str(), kind["errno"].as_str(), kind["code"].as_i64()),
        (Some("write"), Some("ENOSPC"), Some(28))
    );
    assert_eq!(kind["first"].as_array().unwrap().len(), 4, "the first offsets of one worker");
    assert!(stderr.contains("2048 I/Os failed (--continue-on-error): write ENOSPC x2048"), "{stderr}");
}

#[test]
fn max_errors_stops_after_exactly_n() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("--max-errors with ENOSPC") else { return };
    let (code, stdout, stderr) = run(&[&f, "--write-percent", "100", "--duration", "0", "--max-errors", "10"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--max-errors 10 reached (10 I/Os failed); the last: write"), "{stderr}");
    assert!(stdout.contains("Errors    10 I/Os failed (--max-errors 10)"), "{stdout}");
    assert!(stdout.contains("write ENOSPC x10 (No space left on device)"), "{stdout}");
}

// ---------------------------------------------------------------- failing device

/// A 16 MiB loop device whose backing file was cut to 8 MiB: with direct I/O in the
/// loop driver, reads of the upper half fail with EIO.
fn half_failing_device(what: &str) -> Option<root::LoopDev> {
    let dev =
        root::loop_device(16 << 20, LoopOptions { direct_io: true, fill: Some(0x5a), ..Default::default() }, what)?;
    std::fs::OpenOptions::new().write(true).open(&dev.backing).unwrap().set_len(8 << 20).unwrap();
    Some(dev)
}

#[test]
fn the_first_read_error_stops_the_run_naming_op_file_offset_and_errno() {
    let Some(dev) = half_failing_device("EIO stops the run") else { return };
    for engine in ["sync", "libaio"] {
        let (code, stdout, stderr) =
            run(&[&dev.path, "--direct", "--engine", engine, "--queue-depth", "4", "--duration", "0"]);
        assert_eq!(code, 1, "{engine}: {stderr}");
        let line = format!("read {} at offset 8388608: Input/output error", dev.path);
        assert!(stderr.contains(&line), "{engine}: {stderr}");
        assert!(stdout.contains("read EIO x"), "{engine}: {stdout}");
    }
}

#[test]
fn continue_on_error_counts_eio_and_reads_the_rest() {
    let Some(dev) = half_failing_device("EIO with --continue-on-error") else { return };
    for engine in ["sync", "libaio"] {
        let (code, stdout, stderr) = run(&[
            &dev.path,
            "--direct",
            "--engine",
            engine,
            "--queue-depth",
            "8",
            "--random",
            "--duration",
            "0",
            "--continue-on-error",
            "--output-format",
            "json",
        ]);
        assert_eq!(code, 1, "{engine}: {stderr}");
        let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(u64_at(&r, &["read", "ops"]), 2048, "{engine}: the lower half reads");
        assert_eq!(u64_at(&r, &["io_errors", "total"]), 2048, "{engine}: the upper half fails");
        let kind = &r["io_errors"]["kinds"][0];
        assert_eq!((kind["op"].as_str(), kind["errno"].as_str()), (Some("read"), Some("EIO")), "{engine}");
        for at in kind["first"].as_array().unwrap() {
            assert!(at["offset_bytes"].as_u64().unwrap() >= 8 << 20, "{engine}: {at}");
            assert_eq!(at["target"], dev.path.as_str());
        }
    }
}

// ---------------------------------------------------------------- stuck I/O

/// A loop device, a blkio group that will hold its reads, and iopulse started inside it.
struct StuckRun {
    child: Child,
    output: Output,
    throttle: root::Throttle,
    _dev: root::LoopDev,
}

fn start_then_hold_reads(extra: &[&str], what: &str) -> Option<StuckRun> {
    let dev = root::loop_device(16 << 20, LoopOptions { fill: Some(1), ..Default::default() }, what)?;
    let throttle = root::blkio_throttle(&dev.number(), what)?;
    let mut cmd = iopulse();
    cmd.args([dev.path.as_str(), "--direct", "--random", "--duration", "60s"]).args(extra);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    throttle.confine(&mut cmd);
    let mut child = cmd.spawn().expect("spawn iopulse");
    let output = Output::collect(&mut child);
    std::thread::sleep(Duration::from_millis(700));
    // One byte per second: every read in flight, and every one after, is held.
    throttle.limit_reads(1);
    Some(StuckRun { child, output, throttle, _dev: dev })
}

impl StuckRun {
    /// Lifts the throttle and waits for the process to be gone; returns its exit code.
    fn release(mut self) -> (i32, String, String) {
        self.throttle.limit_reads(0);
        let status = self.child.wait().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        (status.code().unwrap_or(-1), self.output.stdout(), self.output.stderr())
    }
}

#[test]
fn a_stuck_io_is_reported_with_file_and_offset_and_the_report_comes_out() {
    for engine in [&["--engine", "sync"][..], &["--engine", "libaio", "--queue-depth", "8"]] {
        let mut args = engine.to_vec();
        args.extend(["--io-timeout", "1s", "--threads", "2"]);
        let Some(run) = start_then_hold_reads(&args, "stuck I/O (blkio throttle)") else { return };
        // The timeout (1 s) and a poll of the watchdog (0.1 s): the report is out well before 3 s.
        let waited = run.output.wait_for("Error     I/O timeout", Duration::from_secs(5));
        let pid = run.child.id();
        // The report is out just before the main thread returns: give it a moment to exit
        // (while the I/O is still held) before looking at what is left of the process.
        let mut state = proc_state(pid);
        let looked = std::time::Instant::now();
        while !matches!(state, Some('Z') | Some('D') | None) && looked.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
            state = proc_state(pid);
        }
        let (code, stdout, stderr) = run.release();
        let waited =
            waited.unwrap_or_else(|| panic!("{engine:?}: no report while the I/O was held\n{stdout}\n{stderr}"));
        assert!(waited < Duration::from_secs(3), "{engine:?}: the report took {waited:?}");
        // The main thread has exited; the thread stuck in the kernel is all that is left.
        assert!(matches!(state, Some('Z') | Some('D') | None), "{engine:?}: state {state:?}");
        assert_eq!(code, 1, "{engine:?}: {stderr}");
        assert!(stdout.contains("⚠ Stuck   worker "), "{engine:?}: {stdout}");
        assert!(stderr.contains("I/O timeout: worker "), "{engine:?}: {stderr}");
        assert!(stderr.contains("read /dev/loop") && stderr.contains(" at offset "), "{engine:?}: {stderr}");
        assert!(stderr.contains("(--io-timeout 1.00 s)"), "{engine:?}: {stderr}");
    }
}

#[test]
fn sigint_with_a_stuck_io_still_reports_within_about_a_second() {
    let Some(run) = start_then_hold_reads(&["--io-timeout", "60s"], "SIGINT with stuck I/O") else { return };
    std::thread::sleep(Duration::from_millis(300));
    signal(&run.child, libc::SIGINT);
    let waited = run.output.wait_for("INTERRUPTED", Duration::from_secs(5));
    let (code, stdout, stderr) = run.release();
    let waited = waited.unwrap_or_else(|| panic!("no report after SIGINT while the I/O was held\n{stdout}\n{stderr}"));
    assert!(waited < Duration::from_millis(1800), "the partial report took {waited:?}");
    assert_eq!(code, 130, "{stderr}");
    assert!(stderr.contains("had not stopped 1.00 s after the signal"), "{stderr}");
    assert!(stdout.contains("⚠ Stuck   worker 0: read /dev/loop"), "{stdout}");
}

#[test]
fn a_second_sigint_exits_at_once_while_the_first_waits_for_a_stuck_io() {
    let Some(run) = start_then_hold_reads(&["--io-timeout", "60s"], "second SIGINT with stuck I/O") else { return };
    std::thread::sleep(Duration::from_millis(300));
    signal(&run.child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    signal(&run.child, libc::SIGINT);
    let pid = run.child.id();
    // The main thread exits at once (the process is a zombie until the held I/O completes).
    let mut exited = None;
    while t0.elapsed() < Duration::from_secs(2) {
        if matches!(proc_state(pid), Some('Z') | None) {
            exited = Some(t0.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (code, stdout, stderr) = run.release();
    let exited = exited.unwrap_or_else(|| panic!("still running 2 s after the second SIGINT\n{stderr}"));
    assert!(exited < Duration::from_millis(500), "exit took {exited:?}");
    assert_eq!(code, 130, "{stderr}");
    assert!(!stdout.contains("INTERRUPTED"), "the first signal's report came out first: {stdout}");
}

/// A device-mapper `error` target fails every I/O (where the kernel has device-mapper).
#[test]
fn a_device_mapper_error_target_fails_the_run_with_eio() {
    let Some(dm) = root::dm_device("0 16384 error", "dm error target") else { return };
    let (code, stdout, stderr) = run(&[&dm.path, "--duration", "0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("read {} at offset 0: Input/output error", dm.path)), "{stderr}");
    assert!(stdout.contains("read EIO x1"), "{stdout}");
    let (code, stdout, _) = run(&[&dm.path, "--duration", "0", "--continue-on-error", "--output-format", "json"]);
    assert_eq!(code, 1);
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(u64_at(&r, &["io_errors", "total"]), 2048);
    assert_eq!(u64_at(&r, &["read", "ops"]), 0);
}
