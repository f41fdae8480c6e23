//! Two figures that must not lie (issue 16):
//!
//! - an engine that moves no bytes (`null`) is not storage: it creates, extends, lays out
//!   and writes no target, claims no O_DIRECT, filesystem or device, and the report and
//!   the JSON say that nothing reached storage. Checked on the files themselves (a missing
//!   path stays missing, an existing file keeps its bytes, size and allocation).
//! - CPU time is counted for the window, all of it: the whole process from the release of
//!   the start line to the stop (every thread, io_uring's kernel threads included), and
//!   none of set-up or layout. Checked against the child's own CPU time as the kernel
//!   reports it to the test (wait4), and the fields adding up.

use crate::common::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The bytes of `path` and its size and allocation (st_blocks), to compare before/after.
fn snapshot(path: &Path) -> (Vec<u8>, u64, u64) {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (std::fs::read(path).unwrap(), meta.len(), meta.blocks())
}

/// A file of `len` bytes, each 4 KiB block holding its own distinct bytes (not iopulse's).
fn patterned_file(path: &Path, len: usize) {
    let data: Vec<u8> = (0..len).map(|i| ((i / 4096) as u8).wrapping_mul(31) ^ (i as u8)).collect();
    std::fs::write(path, data).unwrap();
}

/// What every null run's result says: nothing reached storage, no O_DIRECT, no
/// filesystem or device, nothing created or laid out.
fn assert_untouched_result(r: &Value, what: &str) {
    assert_eq!(r["storage_touched"], false, "{what}: storage_touched");
    assert_eq!(r["direct"]["effective"], false, "{what}: direct.effective");
    for t in r["targets"].as_array().unwrap() {
        assert_eq!(t["created"], false, "{what}: {t}");
        assert_eq!(t["laid_out_bytes"], 0, "{what}: {t}");
        assert!(t["filesystem"].is_null() && t["device"].is_null() && t["mount_point"].is_null(), "{what}: {t}");
        assert!(t["allocation"].is_null(), "{what}: {t}");
        assert_eq!(t["direct"]["effective"], false, "{what}: {t}");
    }
    assert!(r["durability"].is_null(), "{what}: durability {}", r["durability"]);
    assert_valid(&schema_validator(), r, what);
}

/// What every null run's text report says, and what it must not claim.
fn assert_untouched_text(text: &str, what: &str) {
    assert!(
        text.contains("Storage:  none: the null engine moves no bytes") && text.contains("iopulse's own ceiling"),
        "{what}: no storage line\n{text}"
    );
    assert!(!text.contains("I/O mode:"), "{what}: claims an I/O mode\n{text}");
    assert!(!text.contains("✓ O_DIRECT"), "{what}: claims O_DIRECT\n{text}");
    assert!(!text.contains(" on /dev/") && !text.contains("laid out"), "{what}: claims a device or a layout\n{text}");
    let target = text.lines().find(|l| l.starts_with("Target:")).unwrap_or_else(|| panic!("{what}: {text}"));
    assert!(target.ends_with("· not touched"), "{what}: {target}");
}

#[test]
fn a_null_run_creates_no_missing_target() {
    let dir = temp_dir();
    let f = dir.path().join("never.dat");
    let fs = path_str(&f);
    let json = path_str(&dir.path().join("r.json"));
    // A mix of reads and writes, O_DIRECT asked: a storage engine would create and lay out 8 MiB.
    let args = [
        fs.as_str(),
        "--engine",
        "null",
        "--direct",
        "--file-size",
        "8M",
        "--write-percent",
        "50",
        "--random",
        "--duration",
        "0.2",
        "--json",
        &json,
    ];
    let (text, _) = run_ok(&args);
    assert!(!f.exists(), "{fs} was created by a null run");
    let r = read_json(&json);
    assert_untouched_result(&r, "missing target");
    assert_untouched_text(&text, "missing target");
    assert!(text.contains("--direct: nothing to bypass"), "{text}");
    // The region is planned from --file-size all the same.
    assert_eq!(u64_at(&r, &["targets", "0", "blocks"]), (8 << 20) / 4096);
    assert_eq!(r["direct"]["requested"], true);
    assert!(r["direct"]["reason"].as_str().is_some_and(|s| s.contains("moves no bytes")), "{}", r["direct"]);
    assert!(u64_at(&r, &["total", "ops"]) > 0);
    // Nothing else appeared in the directory either (only the JSON).
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("r.json")]);
}

#[test]
fn a_null_run_leaves_an_existing_file_as_it_was() {
    let dir = temp_dir();
    let f = dir.path().join("existing.dat");
    patterned_file(&f, 1 << 20);
    let fs = path_str(&f);
    let before = snapshot(&f);
    // All writes, and a --file-size beyond the file: a storage engine would extend it
    // to 4 MiB and overwrite it.
    let r = run_json(&[&fs, "--engine", "null", "--write-percent", "100", "--file-size", "4M", "--duration", "0.2"]);
    assert!(snapshot(&f) == before, "{fs}: its bytes, size or allocation changed");
    assert_untouched_result(&r, "existing file, --file-size");
    assert_eq!(u64_at(&r, &["targets", "0", "blocks"]), (4 << 20) / 4096);
    assert!(u64_at(&r, &["write", "ops"]) > 0);

    // Without --file-size the region is the file's own size.
    let (text, _) = run_ok(&[&fs, "--engine", "null", "--direct", "--duration", "0.1"]);
    assert!(snapshot(&f) == before, "{fs}: its bytes, size or allocation changed");
    assert_untouched_text(&text, "existing file");
    assert!(text.contains("1 MiB (256 blocks)"), "{text}");
}

#[test]
fn a_null_run_with_no_target_creates_no_temporary_file() {
    let dir = temp_dir();
    let mut cmd = iopulse();
    cmd.env("TMPDIR", dir.path()).args(["--engine", "null", "--duration", "0.1", "--output-format", "json"]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_untouched_result(&r, "embedded default");
    let path = r["targets"][0]["path"].as_str().unwrap();
    assert!(path.starts_with(&path_str(dir.path())), "{path}");
    assert_eq!(u64_at(&r, &["targets", "0", "blocks"]), (256 << 20) / 4096);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the temporary directory is not empty");
}

#[test]
fn a_null_run_syncs_nothing_and_says_so() {
    let dir = temp_dir();
    let fs = path_str(&dir.path().join("s.dat"));
    let (code, stdout, stderr) = run(&[
        &fs,
        "--engine",
        "null",
        "--write-percent",
        "100",
        "--file-size",
        "1M",
        "--fsync-on-close",
        "--duration",
        "0.1",
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_untouched_result(&r, "--fsync-on-close");
    assert!(r["error"].is_null(), "{}", r["error"]);
    let note = "--fsync-on-close: engine null moves no bytes";
    assert!(stderr.contains(note), "{stderr}");
    assert!(r["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(note)), "{}", r["notes"]);
    assert!(!dir.path().join("s.dat").exists());
}

#[test]
fn a_storage_run_still_says_its_io_mode_and_that_storage_was_touched() {
    let dir = temp_dir();
    let fs = path_str(&dir.path().join("t.dat"));
    let json = path_str(&dir.path().join("r.json"));
    let (text, _) = run_ok(&[&fs, "--file-size", "1M", "--duration", "0", "--json", &json]);
    let r = read_json(&json);
    assert_eq!(r["storage_touched"], true);
    assert_eq!(u64_at(&r, &["targets", "0", "laid_out_bytes"]), 1 << 20);
    assert!(text.contains("I/O mode: BUFFERED (page cache)") && !text.contains("Storage:"), "{text}");
}

/// Runs iopulse with `args` and JSON on stdout; returns the result and the CPU time
/// (user + sys, ns) the kernel counted for the whole child process (wait4).
// The child is reaped by wait4 below, which also hands back its CPU time (std's wait cannot).
#[allow(clippy::zombie_processes)]
fn run_json_with_cpu(args: &[&str]) -> (Value, u64) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = iopulse()
        .args(args)
        .args(["--output-format", "json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr_pipe.read_to_string(&mut s);
        s
    });
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child` is our child, not yet waited for (std never reaps it on its own);
    // `status` and `usage` are valid for writes for the duration of the call.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4: {}", std::io::Error::last_os_error());
    let stderr = stderr.join().unwrap();
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "iopulse {args:?}: {status:#x}\n{stderr}");
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    let r: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{stderr}"));
    (r, ns(usage.ru_utime) + ns(usage.ru_stime))
}

fn total(v: &Value) -> u64 {
    u64_at(v, &["user_ns"]) + u64_at(v, &["sys_ns"])
}

/// The CPU fields agree with each other: the window is the workers plus the rest,
/// and the per-I/O and cores-busy figures are computed from the window.
fn assert_cpu_adds_up(r: &Value, what: &str) {
    let cpu = &r["cpu"];
    let (window, workers, other) = (total(&cpu["window"]), total(&cpu["workers"]), u64_at(cpu, &["other_ns"]));
    assert!(workers <= window, "{what}: the workers' CPU {workers} ns is above the whole process's {window} ns");
    assert_eq!(window, workers + other, "{what}: window = workers + other: {cpu}");
    assert!(window <= total(&cpu["process"]), "{what}: the window's CPU is above the whole life's: {cpu}");
    let ops = u64_at(r, &["total", "ops"]) as f64;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert!(close(cpu["per_io_ns"].as_f64().unwrap(), window as f64 / ops), "{what}: per_io_ns {cpu}");
    assert!(close(cpu["workers_per_io_ns"].as_f64().unwrap(), workers as f64 / ops), "{what}: {cpu}");
    let window_ns = u64_at(r, &["window_ns"]) as f64;
    assert!(close(cpu["cores_busy"].as_f64().unwrap(), window as f64 / window_ns), "{what}: cores_busy {cpu}");
    assert_valid(&schema_validator(), r, what);
}

#[test]
fn the_windows_cpu_leaves_out_the_layout() {
    let dir = temp_dir();
    let fs = path_str(&dir.path().join("big.dat"));
    // Laying out 256 MiB costs the process far more CPU than 2,000 reads of 4 KiB.
    let (r, child_ns) = run_json_with_cpu(&[&fs, "--file-size", "256M", "--ops", "2000"]);
    assert_eq!(u64_at(&r, &["targets", "0", "laid_out_bytes"]), 256 << 20);
    assert_eq!(u64_at(&r, &["total", "ops"]), 2000);
    assert_cpu_adds_up(&r, "layout run");
    let window = total(&r["cpu"]["window"]);
    let process = total(&r["cpu"]["process"]);
    // The process's own figure of its whole life is what the kernel told the test.
    assert!(process <= child_ns, "whole process {process} ns, the kernel says {child_ns} ns");
    assert!(
        window * 4 < child_ns,
        "the window's CPU ({window} ns) is not far below the whole process's ({child_ns} ns, the layout's included): {}",
        r["cpu"]
    );
}

#[test]
fn the_text_report_says_what_the_cpu_figures_count() {
    let dir = temp_dir();
    let fs = path_str(&dir.path().join("c.dat"));
    let (text, _) = run_ok(&[&fs, "--file-size", "1M", "--duration", "0"]);
    let cpu = text.lines().position(|l| l.starts_with("CPU ")).unwrap_or_else(|| panic!("{text}"));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[cpu].contains("per I/O") && lines[cpu].contains("(the whole process in the window)"), "{text}");
    assert!(
        lines[cpu + 1].trim_start().starts_with("workers user ")
            && lines[cpu + 1].contains("· other ")
            && lines[cpu + 1].contains("(sampler, watchdog, kernel I/O threads)"),
        "{text}"
    );
}

#[test]
fn sqpoll_cpu_is_counted_in_the_window() {
    if !engine_available("io_uring") {
        return;
    }
    let dir = temp_dir();
    let fs = path_str(&dir.path().join("sq.dat"));
    let args = [
        fs.as_str(),
        "--engine",
        "io_uring",
        "--sqpoll",
        "--file-size",
        "16M",
        "--queue-depth",
        "8",
        "--random",
        "--duration",
        "0.5",
        "--output-format",
        "json",
        "--quiet",
    ];
    let (code, stdout, stderr) = run(&args);
    if code != 0 && stderr.contains("SQPOLL") {
        eprintln!("SKIP: SQPOLL is not available here: {stderr}");
        return;
    }
    assert_eq!(code, 0, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    let flags = r["engine"]["setup"]["setup_flags"].as_str().unwrap_or("");
    if !flags.contains("SQPOLL") {
        eprintln!("SKIP: the ring was set up without SQPOLL here ({flags})");
        return;
    }
    assert_cpu_adds_up(&r, "--sqpoll");
    // The SQPOLL thread is a thread of the process (iou-sqp-PID): its polling is CPU time
    // no worker thread counts, and it is in the window's.
    assert!(u64_at(&r["cpu"], &["other_ns"]) > 0, "--sqpoll: no CPU outside the workers: {}", r["cpu"]);
}

#[test]
fn merged_null_results_stay_untouched_and_their_cpu_adds_up() {
    let dir = temp_dir();
    let mut files = Vec::new();
    for name in ["a", "b"] {
        let json = path_str(&dir.path().join(format!("{name}.json")));
        let target = path_str(&dir.path().join(format!("{name}.dat")));
        run_ok(&[&target, "--engine", "null", "--file-size", "1M", "--duration", "0.1", "--json", &json, "--quiet"]);
        files.push(json);
    }
    let (code, stdout, stderr) = run(&["merge", &files[0], &files[1], "--force", "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let m: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(m["storage_touched"], false);
    let cpu = &m["cpu"];
    assert_eq!(total(&cpu["window"]), total(&cpu["workers"]) + u64_at(cpu, &["other_ns"]), "{cpu}");
    let ops = u64_at(&m, &["total", "ops"]) as f64;
    assert!((cpu["per_io_ns"].as_f64().unwrap() - total(&cpu["window"]) as f64 / ops).abs() < 1e-6, "{cpu}");
    assert_valid(&schema_validator(), &m, "merged null results");
}
