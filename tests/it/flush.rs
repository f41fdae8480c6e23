//! Flushes in the I/O stream (`--fsync-every N`, `--fdatasync-every N`): exactly one
//! flush per N writes of a worker on every engine, counted in the result, by the engine's
//! own counters and (sync engine) by strace; its latency reported in the JSON, the text,
//! the CSV; `--sync-writes` recorded; the etcd profile reports the flush p99.

use crate::common::*;
use serde_json::Value;

/// `--fdatasync-every 4 --ops 64` of one worker, 100 % writes, on `engine`: the JSON result.
fn flushing_run(engine: &str, extra: &[&str]) -> Value {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("f.dat"));
    let mut args = vec![
        "--engine",
        engine,
        &f,
        "--file-size",
        "1m",
        "--write-percent",
        "100",
        "--fdatasync-every",
        "4",
        "--ops",
        "64",
        "--cache",
        "keep",
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn fdatasync_every_4_issues_one_flush_per_4_writes_on_each_engine() {
    let cases: &[(&str, &[&str])] = &[
        ("sync", &[]),
        ("mmap", &[]),
        ("libaio", &["--queue-depth", "8"]),
        ("libaio", &["--queue-depth", "8", "--direct"]),
        ("io_uring", &["--queue-depth", "8"]),
        ("io_uring", &["--queue-depth", "8", "--direct"]),
    ];
    for (engine, extra) in cases {
        if !engine_available(engine) {
            continue;
        }
        let what = format!("{engine} {extra:?}");
        let r = flushing_run(engine, extra);
        assert_eq!(r["stop_reason"], "complete", "{what}");
        assert_eq!(u64_at(&r, &["write", "ops"]), 64, "{what}");
        assert_eq!(u64_at(&r, &["flush", "ops"]), 16, "{what}: one flush per 4 writes");
        assert_eq!(u64_at(&r, &["flush", "bytes"]), 0, "{what}: a flush moves no bytes");
        assert_eq!(u64_at(&r, &["total", "ops"]), 64, "{what}: total counts transfers only");
        assert_eq!(u64_at(&r["workers"][0], &["flush", "ops"]), 16, "{what}");
        let lat = &r["flush"]["latency_ns"];
        assert!(lat["min"].as_u64().unwrap() > 0 && lat["p99"].as_u64().unwrap() >= lat["p50"].as_u64().unwrap());
        assert!(!r["histograms"]["flush"].as_str().unwrap().is_empty(), "{what}");
        assert_eq!(r["spec"]["flush"]["kind"], "fdatasync");
        assert_eq!(r["spec"]["flush"]["every_writes"], 4);
        // The engines' own counts of flushes handed to the kernel.
        let setup = &r["engine"]["setup"];
        match *engine {
            "libaio" => assert_eq!(setup["flush_iocbs"], "16", "{what}: {setup}"),
            "io_uring" => assert_eq!(setup["flush_sqes"], "16", "{what}: {setup}"),
            _ => {}
        }
    }
}

#[test]
fn fsync_every_3_with_two_workers_counts_per_worker() {
    // 2 workers × 30 writes each: 10 fsyncs each, the last write of each closing a group.
    let dir = temp_dir();
    let f = path_str(&dir.path().join("f.dat"));
    let r = run_json(&[
        &f,
        "--file-size",
        "1m",
        "--write-percent",
        "100",
        "--threads",
        "2",
        "--fsync-every",
        "3",
        "--ops",
        "60",
        "--cache",
        "keep",
    ]);
    assert_eq!(u64_at(&r, &["write", "ops"]), 60);
    assert_eq!(u64_at(&r, &["flush", "ops"]), 20);
    for w in r["workers"].as_array().unwrap() {
        assert_eq!(w["write"]["ops"].as_u64().unwrap() / 3, w["flush"]["ops"].as_u64().unwrap(), "{w}");
    }
    assert_eq!(r["spec"]["flush"]["kind"], "fsync");
}

#[test]
fn strace_sees_one_fdatasync_per_4_writes_of_the_sync_engine() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed (apt-get install strace): the system calls cannot be counted");
        return;
    }
    let dir = temp_dir();
    let f = path_str(&dir.path().join("f.dat"));
    let count = |flush: &[&str]| -> (u64, u64) {
        let out = dir.path().join("strace.txt");
        let mut cmd = std::process::Command::new("strace");
        cmd.args(["-f", "-qq", "-e", "trace=fdatasync,fsync", "-o"]).arg(&out).arg(env!("CARGO_BIN_EXE_iopulse"));
        cmd.args([&f, "--file-size", "1m", "--write-percent", "100", "--ops", "64", "--cache", "keep", "--quiet"]);
        cmd.args(flush);
        let (code, _, stderr) = run_command(&mut cmd);
        assert_eq!(code, 0, "{stderr}");
        let text = std::fs::read_to_string(&out).unwrap();
        let calls = |name: &str| text.lines().filter(|l| l.contains(&format!("{name}("))).count() as u64;
        (calls("fdatasync"), calls("fsync"))
    };
    // The first run creates and lays the file out (and flushes it); the others reuse it.
    count(&[]);
    assert_eq!(count(&[]), (0, 0), "without the flag the run issues no flush");
    assert_eq!(count(&["--fdatasync-every", "4"]), (16, 0));
    assert_eq!(count(&["--fsync-every", "16"]), (0, 4));
}

#[test]
fn the_flush_is_its_own_line_in_the_text_and_columns_at_the_end_of_the_csv() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("f.dat"));
    let csv = path_str(&dir.path().join("runs.csv"));
    let (stdout, _) = run_ok(&[
        &f,
        "--file-size",
        "1m",
        "--write-percent",
        "100",
        "--fdatasync-every",
        "8",
        "--ops",
        "32",
        "--csv",
        &csv,
    ]);
    let line = stdout.lines().find(|l| l.starts_with("flush")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("4 fdatasync") && line.contains("after every 8 writes") && line.contains("p99"), "{line}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let at = |name: &str| row.get(header.iter().position(|h| h == name).unwrap()).unwrap().to_string();
    // The flush columns were added at the end, after the targets' (only later additions, the
    // trims', and a job file's `job` and `phase` follow them).
    let names: Vec<&str> = header.iter().collect();
    let flush_at = names.iter().position(|&h| h == "flush").unwrap();
    assert_eq!(names[flush_at - 1], "cache_end_resident_fraction");
    assert_eq!(names[flush_at + 8], "sync_writes");
    assert_eq!(names[flush_at + 9], "trim_percent");
    assert_eq!(at("flush"), "fdatasync");
    assert_eq!(at("flush_every_writes"), "8");
    assert_eq!(at("flush_ops"), "4");
    assert!(at("flush_p99_ns").parse::<u64>().unwrap() > 0);
}

#[test]
fn sync_writes_opens_with_o_dsync_and_is_recorded() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("f.dat"));
    let r =
        run_json(&[&f, "--file-size", "256k", "--write-percent", "100", "--duration", "0", "--sync-writes", "dsync"]);
    assert_eq!(r["spec"]["sync_writes"], "dsync");
    assert_eq!(u64_at(&r, &["write", "ops"]), 64);
    assert!(r.get("flush").is_none(), "no flushes asked: no flush figures");
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed: the open flags cannot be seen");
        return;
    }
    let out = dir.path().join("strace.txt");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=openat", "-o"]).arg(&out).arg(env!("CARGO_BIN_EXE_iopulse"));
    cmd.args([&f, "--write-percent", "100", "--ops", "4", "--sync-writes", "sync", "--quiet"]);
    let (code, _, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    // O_SYNC is O_DSYNC|__O_SYNC: strace names it O_SYNC.
    assert!(text.lines().any(|l| l.contains(&f) && l.contains("O_SYNC")), "{text}");
}

#[test]
fn the_etcd_profile_reports_the_fdatasync_p99() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("etcd.dat"));
    // The profile's 22 MiB, shortened: the check is the same, 2300-byte writes each flushed.
    let (stdout, _) = run_ok(&["--profile", "etcd", &f, "--file-size", "230000"]);
    let line = stdout.lines().find(|l| l.trim_start().starts_with("flush")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("100 fdatasync") && line.contains("p99"), "{line}");
    let json = run_json(&["--profile", "etcd", &f, "--file-size", "230000"]);
    let r = &json["jobs"][0];
    assert_eq!(r["spec"]["block_size_bytes"], 2300);
    assert_eq!(r["engine"]["name"], "sync");
    assert_eq!(u64_at(r, &["write", "ops"]), 100);
    assert_eq!(u64_at(r, &["flush", "ops"]), 100, "an fdatasync after each write");
    assert!(u64_at(r, &["flush", "latency_ns", "p99"]) > 0);
}

#[test]
fn fio_json_puts_the_flushes_in_fios_sync_section() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("f.dat"));
    let args = [&f, "--file-size", "1m", "--write-percent", "100", "--ops", "64", "--output-format", "fio-json"];
    let (stdout, _) = run_ok(&[&args[..], &["--fdatasync-every", "4"]].concat());
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let sync = &doc["jobs"][0]["sync"];
    assert_eq!(sync["total_ios"], 16, "{sync}");
    assert_eq!(sync["lat_ns"]["N"], 16, "{sync}");
    assert!(sync["lat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0, "{sync}");
    // Without flushes: fio's zeros.
    let (stdout, _) = run_ok(&args);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["jobs"][0]["sync"]["total_ios"], 0);
    assert_eq!(doc["jobs"][0]["sync"]["lat_ns"]["N"], 0);
}

/// `--end-fsync` (fio's end_fsync): the worker fsyncs its file at the end of the window,
/// and the flush is in the window: counted as a flush, and its time is the window's.
#[test]
fn end_fsync_flushes_inside_the_window_and_counts_the_flush() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("end.dat"));
    let (code, text, stderr) =
        run(&[&f, "--file-size", "16M", "--write-percent", "100", "--duration", "1", "--end-fsync"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("fsync at the end of the window (--end-fsync)"), "{text}");
    let r = run_json(&[&f, "--write-percent", "100", "--duration", "1", "--end-fsync"]);
    assert_eq!(r["spec"]["end_fsync"], true);
    // One worker, one file: one flush, after the writes.
    assert_eq!(u64_at(&r, &["flush", "ops"]), 1, "{}", r["flush"]);
    assert!(u64_at(&r, &["write", "ops"]) > 0);
    let flush_ns = u64_at(&r, &["flush", "latency_ns", "max"]);
    assert!(flush_ns > 0);
    // The window is the 1 s of writes and the flush that made them durable.
    assert_eq!(u64_at(&r, &["window_ns"]), 1_000_000_000 + flush_ns, "{}", r["flush"]);
    // Without the flag: no flush, a window of the duration.
    let r = run_json(&[&f, "--write-percent", "100", "--duration", "1"]);
    assert!(r["flush"].is_null() || u64_at(&r, &["flush", "ops"]) == 0, "{}", r["flush"]);
    assert_eq!(u64_at(&r, &["window_ns"]), 1_000_000_000);
}
