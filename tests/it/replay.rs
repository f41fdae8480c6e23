//! `iopulse replay` and `--write-iolog`: traces (fio iolog v2/v3, blktrace) replayed with
//! the same offsets, sizes and directions in the same order (seen through the iolog the
//! replay itself writes), remapped onto a smaller target, at the trace's times on the null
//! engine; fio replaying what iopulse wrote and iopulse replaying what fio wrote; a
//! blktrace captured from a run on a loop device; bad traces refused naming the line.

use crate::common::root::{LoopOptions, is_root, loop_device, skip};
use crate::common::{assert_valid, path_str, read_json, run, run_ok, schema_validator, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The I/Os of an iolog (v2 or v3), in order: (action, offset, length).
fn ios_of(log: &Path) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let version3 = text.starts_with("fio version 3 iolog");
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let f = if version3 { &f[1..] } else { &f[..] };
            match f {
                [_, action @ ("read" | "write"), off, len] => {
                    Some((action.to_string(), off.parse().unwrap(), len.parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect()
}

fn fio_available(what: &str) -> bool {
    let ok = Command::new("fio").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        skip(what, "fio is not installed");
    }
    ok
}

/// A fio iolog v3 of `ios` (µs, action, offset, length) on `name`.
fn iolog_v3(name: &str, ios: &[(u64, &str, u64, u64)]) -> String {
    let mut text = format!("fio version 3 iolog\n0 {name} add\n0 {name} open\n");
    for (us, action, off, len) in ios {
        text.push_str(&format!("{us} {name} {action} {off} {len}\n"));
    }
    text.push_str(&format!("{} {name} close\n", ios.last().map_or(0, |i| i.0 + 1)));
    text
}

#[test]
fn an_iolog_is_replayed_in_order_with_its_offsets_sizes_and_directions() {
    let dir = temp_dir();
    let trace = dir.path().join("app.iolog");
    let ios = [
        (100, "write", 1_048_576, 4096),
        (150, "read", 0, 512),
        (150, "trim", 0, 4096),
        (400, "write", 65_536, 65_536),
        (900, "sync", 0, 0),
        (1_000, "read", 2_000_000, 8192),
        (1_200, "read", 7_000, 1000),
    ];
    std::fs::write(&trace, iolog_v3("/nowhere/app.dat", &ios)).unwrap();
    let target = dir.path().join("t.dat");
    let out = dir.path().join("out.iolog");
    let json = dir.path().join("r.json");
    run_ok(&[
        "replay",
        &path_str(&trace),
        &path_str(&target),
        "--write-iolog",
        &path_str(&out),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let expected: Vec<(String, u64, u64)> =
        ios.iter().filter(|i| matches!(i.1, "read" | "write")).map(|&(_, a, o, l)| (a.to_string(), o, l)).collect();
    assert_eq!(ios_of(&out), expected, "the replay's own iolog");
    // A new target is laid out to the trace's extent, rounded up to 1 MiB.
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 2 << 20);
    let r = read_json(&json);
    assert_valid(&schema_validator(), &r, "a replay's result");
    let replay = &r["replay"];
    assert_eq!((replay["reads"].as_u64(), replay["writes"].as_u64()), (Some(3), Some(2)));
    assert_eq!(replay["skipped"]["trims"], 1);
    assert_eq!(replay["skipped"]["flushes"], 1);
    assert_eq!(replay["issued"], 5);
    assert_eq!(replay["remapped"], false);
    assert_eq!(replay["lag"]["ios"], 5, "every I/O's lag is in the histogram");
    assert!(replay["lag"]["histogram"].as_str().is_some_and(|h| !h.is_empty()));
    assert_eq!(r["read"]["ops"].as_u64().unwrap() + r["write"]["ops"].as_u64().unwrap(), 5);
    // The trace's written bytes are the run's.
    assert_eq!(r["write"]["bytes"], 4096 + 65_536);
}

#[test]
fn a_log_fio_wrote_is_replayed_and_fio_replays_the_log_iopulse_wrote() {
    if !fio_available("fio's iolog against iopulse's") {
        return;
    }
    let dir = temp_dir();
    // fio writes an iolog of a random mixed run...
    let fio_target = dir.path().join("fio.dat");
    let fio_log = dir.path().join("fio.iolog");
    let status = Command::new("fio")
        .args([
            "--name=w",
            &format!("--filename={}", path_str(&fio_target)),
            "--size=4M",
            "--bs=4k",
            "--rw=randrw",
            "--ioengine=psync",
            "--number_ios=300",
            &format!("--write_iolog={}", path_str(&fio_log)),
            "--output=/dev/null",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    // ...which iopulse replays on the file it names, the same I/Os in the same order.
    let out = dir.path().join("out.iolog");
    run_ok(&["replay", &path_str(&fio_log), "--write-iolog", &path_str(&out), "--quiet"]);
    let fio_ios = ios_of(&fio_log);
    assert_eq!(fio_ios.len(), 300);
    assert_eq!(ios_of(&out), fio_ios);

    // iopulse writes an iolog of a random mixed run...
    let target = dir.path().join("ip.dat");
    let log = dir.path().join("ip.iolog");
    let json = dir.path().join("ip.json");
    run_ok(&[
        &path_str(&target),
        "--file-size",
        "4M",
        "--random",
        "--read-percent",
        "60",
        "--ops",
        "500",
        "--write-iolog",
        &path_str(&log),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let r = read_json(&json);
    let (reads, writes) = (r["read"]["ops"].as_u64().unwrap(), r["write"]["ops"].as_u64().unwrap());
    assert_eq!(reads + writes, 500);
    assert_eq!(ios_of(&log).len(), 500);
    // ...which fio replays with the same counts...
    let fio_json = Command::new("fio")
        .args(["--name=r", &format!("--read_iolog={}", path_str(&log)), "--ioengine=psync", "--output-format=json"])
        .output()
        .unwrap();
    assert!(fio_json.status.success(), "{}", String::from_utf8_lossy(&fio_json.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&fio_json.stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!((job["read"]["total_ios"].as_u64(), job["write"]["total_ios"].as_u64()), (Some(reads), Some(writes)));
    // ...and iopulse too.
    let back = dir.path().join("back.json");
    run_ok(&["replay", &path_str(&log), "--engine", "null", "--json", &path_str(&back), "--quiet"]);
    let b = read_json(&back);
    assert_eq!((b["read"]["ops"].as_u64(), b["write"]["ops"].as_u64()), (Some(reads), Some(writes)));
}

#[test]
fn the_null_engine_replays_a_trace_in_the_trace_s_own_time() {
    let dir = temp_dir();
    let trace = dir.path().join("two-seconds.iolog");
    // 2 s of I/O, one every millisecond.
    let ios: Vec<(u64, &str, u64, u64)> =
        (0..=2000u64).map(|i| (i * 1000, if i % 3 == 0 { "write" } else { "read" }, (i % 256) * 4096, 4096)).collect();
    std::fs::write(&trace, iolog_v3("/x/t.dat", &ios)).unwrap();
    let target = dir.path().join("t.dat");
    for (speed, span_ns) in [("1", 2_000_000_000u64), ("2", 1_000_000_000)] {
        // A replay is never early (each I/O waits for its due time), and within 1 % late
        // unless the machine starved it: up to three tries, each said.
        let mut tries = Vec::new();
        for attempt in 0..3 {
            let json = dir.path().join(format!("r{speed}-{attempt}.json"));
            run_ok(&[
                "replay",
                &path_str(&trace),
                &path_str(&target),
                "--engine",
                "null",
                "--speed",
                speed,
                "--json",
                &path_str(&json),
                "--quiet",
            ]);
            let replay = read_json(&json)["replay"].clone();
            assert_eq!(replay["scheduled_span_ns"], span_ns);
            assert_eq!(replay["lag"]["ios"], 2001);
            let took = replay["replay_ns"].as_u64().unwrap();
            assert!(took >= span_ns, "--speed {speed}: replayed in {took} ns, before the trace's {span_ns}");
            tries.push(took);
            if took <= span_ns + span_ns / 100 {
                break;
            }
            eprintln!("note: --speed {speed}: replayed in {took} ns, more than 1 % over {span_ns}: again");
        }
        assert!(
            tries.iter().any(|&t| t <= span_ns + span_ns / 100),
            "--speed {speed}: every replay took more than 1 % over {span_ns} ns: {tries:?}"
        );
    }
    let json = dir.path().join("afap.json");
    run_ok(&["replay", &path_str(&trace), &path_str(&target), "--engine", "null", "--as-fast-as-possible"]);
    run_ok(&[
        "replay",
        &path_str(&trace),
        &path_str(&target),
        "--engine",
        "null",
        "--as-fast-as-possible",
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let replay = read_json(&json)["replay"].clone();
    assert!(replay["speed"].is_null() && replay.get("lag").is_none(), "{replay}");
    assert_eq!(replay["issued"], 2001);
}

#[test]
fn a_trace_larger_than_the_target_is_remapped_modulo_or_scaled() {
    let dir = temp_dir();
    let trace = dir.path().join("big.iolog");
    let mib = 1u64 << 20;
    let ios: Vec<(u64, &str, u64, u64)> = (0..64u64).map(|i| (i, "read", i * mib + 8192, 4096)).collect();
    std::fs::write(&trace, iolog_v3("/x/t.dat", &ios)).unwrap();
    let extent = 63 * mib + 8192 + 4096;
    for rule in ["modulo", "scaled"] {
        let target = dir.path().join(format!("{rule}.dat"));
        let out = dir.path().join(format!("{rule}.iolog"));
        let (stdout, _) = run_ok(&[
            "replay",
            &path_str(&trace),
            &path_str(&target),
            "--file-size",
            "4M",
            "--remap",
            rule,
            "--as-fast-as-possible",
            "--write-iolog",
            &path_str(&out),
        ]);
        assert!(stdout.contains(&format!("offsets remapped {rule}")), "{stdout}");
        let got: Vec<u64> = ios_of(&out).iter().map(|io| io.1).collect();
        let want: Vec<u64> = ios
            .iter()
            .map(|&(_, _, off, _)| if rule == "modulo" { off % (4 * mib) } else { off * (4 * mib) / extent })
            // An I/O that would cross the end is moved back to end with it.
            .map(|off| off.min(4 * mib - 4096))
            .collect();
        assert_eq!(got, want, "--remap {rule}");
        assert!(got.iter().all(|&o| o + 4096 <= 4 * mib));
    }
}

/// A blktrace record as the kernel writes it (`struct blk_io_trace`, little-endian here).
fn blk_record(time_ns: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend_from_slice(&0x6561_7407u32.to_le_bytes()); // magic | version 7
    r.extend_from_slice(&0u32.to_le_bytes()); // sequence
    r.extend_from_slice(&time_ns.to_le_bytes());
    r.extend_from_slice(&sector.to_le_bytes());
    r.extend_from_slice(&bytes.to_le_bytes());
    r.extend_from_slice(&action.to_le_bytes());
    r.extend_from_slice(&1234u32.to_le_bytes()); // pid
    r.extend_from_slice(&((7u32 << 20) | 3).to_le_bytes()); // device 7:3
    r.extend_from_slice(&0u32.to_le_bytes()); // cpu
    r.extend_from_slice(&0u16.to_le_bytes()); // error
    r.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
    r.extend_from_slice(pdu);
    r
}

#[test]
fn a_blktrace_of_two_cpus_is_merged_by_time_and_replayed() {
    const QUEUE: u32 = 1;
    const COMPLETE: u32 = 8;
    let (read, write, discard, notify) = (1u32 << 16, 2u32 << 16, 1u32 << 29, 1u32 << 26);
    let dir = temp_dir();
    let mut cpu0 = blk_record(1_000_000, 8, 4096, write | QUEUE, &[]);
    cpu0.extend(blk_record(1_000_500, 8, 4096, write | COMPLETE, &[]));
    cpu0.extend(blk_record(3_000_000, 2048, 65_536, read | QUEUE, &[]));
    cpu0.extend(blk_record(3_500_000, 0, 0, notify, b"iopulse\0"));
    let mut cpu1 = blk_record(2_000_000, 100, 512, read | QUEUE, &[9, 9]);
    cpu1.extend(blk_record(2_500_000, 4096, 8192, write | discard | QUEUE, &[]));
    cpu1.extend(blk_record(4_000_000, 16, 1024, write | QUEUE, &[]));
    std::fs::write(dir.path().join("sda.blktrace.0"), cpu0).unwrap();
    std::fs::write(dir.path().join("sda.blktrace.1"), cpu1).unwrap();
    let expected = vec![
        ("write".to_string(), 4096, 4096),
        ("read".to_string(), 51_200, 512),
        ("read".to_string(), 1_048_576, 65_536),
        ("write".to_string(), 8192, 1024),
    ];
    // By the base name, or by any one CPU's file: every CPU's file is read.
    for given in ["sda", "sda.blktrace.1"] {
        let target = dir.path().join(format!("{given}.dat"));
        let out = dir.path().join(format!("{given}.iolog"));
        let json = dir.path().join(format!("{given}.json"));
        run_ok(&[
            "replay",
            &path_str(&dir.path().join(given)),
            &path_str(&target),
            "--write-iolog",
            &path_str(&out),
            "--json",
            &path_str(&json),
            "--quiet",
        ]);
        assert_eq!(ios_of(&out), expected, "replaying {given}");
        let replay = read_json(&json)["replay"].clone();
        assert_eq!(replay["trace_files"].as_array().unwrap().len(), 2);
        assert_eq!(replay["skipped"]["trims"], 1);
        assert_eq!(replay["names"][0], "7:3");
        assert_eq!(replay["trace_span_ns"], 3_000_000);
    }
    // A blktrace names no file: without TARGET, the refusal says to give one.
    let (code, _, stderr) = run(&["replay", &path_str(&dir.path().join("sda"))]);
    assert_eq!(code, 2);
    assert!(stderr.contains("give the TARGET"), "{stderr}");
}

/// A capture of the block layer's queue events on a device, stopped on Drop: blktrace
/// when it can trace here, else the kernel's `blk` tracer through tracefs in binary mode
/// (the same records). `None` (with a printed reason) when neither can.
struct Capture {
    child: std::process::Child,
    files: PathBuf,
    tracefs: Option<String>,
    mounted_debugfs: bool,
}

impl Capture {
    fn start(device: &str, dir: &Path, what: &str) -> Option<Self> {
        let name = Path::new(device).file_name().unwrap().to_string_lossy().into_owned();
        let debugfs = Path::new("/sys/kernel/debug/block").exists();
        let mut mounted_debugfs = false;
        if !debugfs {
            mounted_debugfs = Command::new("mount")
                .args(["-t", "debugfs", "none", "/sys/kernel/debug"])
                .status()
                .is_ok_and(|s| s.success());
        }
        if Command::new("blktrace").arg("-v").output().is_ok() {
            let mut child = Command::new("blktrace")
                .args(["-d", device, "-a", "queue", "-o", "cap", "-D", &path_str(dir)])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .ok()?;
            std::thread::sleep(std::time::Duration::from_millis(800));
            if child.try_wait().ok()?.is_none() {
                return Some(Self { child, files: dir.join("cap"), tracefs: None, mounted_debugfs });
            }
            eprintln!("note: {what}: blktrace could not trace here (kernel lockdown?): using the kernel's blk tracer");
        } else {
            eprintln!("note: {what}: blktrace is not installed: using the kernel's blk tracer");
        }
        if mounted_debugfs {
            let _ = Command::new("umount").arg("/sys/kernel/debug").status();
        }
        let t = "/sys/kernel/tracing";
        let ok = std::fs::read_to_string(format!("{t}/available_tracers")).is_ok_and(|s| s.contains("blk"));
        if !ok {
            skip(what, "neither blktrace nor the kernel's blk tracer (tracefs) can trace here");
            return None;
        }
        let set = |file: &str, value: &str| std::fs::write(file, value).is_ok();
        let enable = format!("/sys/block/{name}/trace/enable");
        let done = set(&format!("{t}/tracing_on"), "0")
            && set(&format!("{t}/current_tracer"), "blk")
            && set(&format!("/sys/block/{name}/trace/act_mask"), "queue")
            && set(&enable, "1")
            && set(&format!("{t}/trace_options"), "bin")
            && set(&format!("{t}/trace_options"), "nocontext-info");
        let files = dir.join("cap.bin");
        let child =
            Command::new("sh").args(["-c", &format!("exec cat {t}/trace_pipe > {}", path_str(&files))]).spawn().ok()?;
        let capture = Self { child, files, tracefs: Some(name), mounted_debugfs: false };
        if !done || !set(&format!("{t}/tracing_on"), "1") {
            skip(what, "the kernel's blk tracer could not be set up");
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        Some(capture)
    }

    /// Stops the capture; returns the trace to give `iopulse replay`.
    fn stop(mut self) -> PathBuf {
        self.finish();
        self.files.clone()
    }

    fn finish(&mut self) {
        let t = "/sys/kernel/tracing";
        if self.tracefs.is_some() {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let _ = std::fs::write(format!("{t}/tracing_on"), "0");
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        // SAFETY: the pid is our own child's, still unreaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let _ = self.child.wait();
        if let Some(name) = self.tracefs.take() {
            let _ = std::fs::write(format!("/sys/block/{name}/trace/enable"), "0");
            let _ = std::fs::write(format!("{t}/trace_options"), "nobin");
            let _ = std::fs::write(format!("{t}/trace_options"), "context-info");
            let _ = std::fs::write(format!("{t}/current_tracer"), "nop");
        }
        if self.mounted_debugfs {
            let _ = Command::new("umount").arg("/sys/kernel/debug").status();
            self.mounted_debugfs = false;
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.finish();
        }
    }
}

#[test]
fn a_blktrace_captured_from_a_run_on_a_loop_device_replays_the_same_ios() {
    let what = "a blktrace captured on a loop device";
    if !is_root() {
        skip(what, "needs root for a loop device and the block layer's tracing");
        return;
    }
    let Some(dev) = loop_device(64 << 20, LoopOptions::default(), what) else { return };
    let dir = temp_dir();
    let Some(capture) = Capture::start(&dev.path, dir.path(), what) else { return };
    let run_log = dir.path().join("run.iolog");
    run_ok(&[
        &dev.path,
        "--direct",
        "--force",
        "--random",
        "--read-percent",
        "50",
        "--ops",
        "300",
        "--write-iolog",
        &path_str(&run_log),
        "--quiet",
    ]);
    let trace = capture.stop();
    let replay_log = dir.path().join("replay.iolog");
    run_ok(&[
        "replay",
        &path_str(&trace),
        &path_str(&dir.path().join("r.dat")),
        "--as-fast-as-possible",
        "--write-iolog",
        &path_str(&replay_log),
        "--quiet",
    ]);
    let ran = ios_of(&run_log);
    let replayed = ios_of(&replay_log);
    assert_eq!(ran.len(), 300);
    // The device saw the run's I/Os, in its order, and at most a few of its own before
    // (a look at the device's first sector when it is opened).
    assert!(replayed.len() >= ran.len() && replayed.len() <= ran.len() + 8, "{} I/Os replayed", replayed.len());
    assert_eq!(replayed[replayed.len() - ran.len()..], ran[..], "the trace's I/Os against the run's");
}

/// A trace whose largest I/O is 64 KiB.
fn bad_len_trace(dir: &Path) -> PathBuf {
    let path = dir.join("large.iolog");
    std::fs::write(&path, iolog_v3("/x/t.dat", &[(0, "read", 0, 4096), (5, "read", 0, 65_536)])).unwrap();
    path
}

#[test]
fn a_bad_trace_is_refused_naming_the_file_and_line_and_nothing_is_touched() {
    let dir = temp_dir();
    let target = dir.path().join("never.dat");
    let bad = dir.path().join("bad.iolog");
    std::fs::write(&bad, "fio version 3 iolog\n0 /f add\n10 /f read 0 4096\n12 /f read 4096 4x\n").unwrap();
    let (code, stdout, stderr) = run(&["replay", &path_str(&bad), &path_str(&target)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("{}, line 4:", path_str(&bad))) && stderr.contains("`4x`"), "{stderr}");
    let cut = dir.path().join("cut.blktrace.0");
    let mut bytes = blk_record(1, 8, 4096, (2 << 16) | 1, &[]);
    bytes.extend_from_slice(&[7u8; 30]);
    std::fs::write(&cut, bytes).unwrap();
    let (code, _, stderr) = run(&["replay", &path_str(&cut), &path_str(&target)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("record 2 (byte 48)") && stderr.contains("cut short"), "{stderr}");
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "hello\n").unwrap();
    let (code, _, stderr) = run(&["replay", &path_str(&other), &path_str(&target)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("neither a fio iolog"), "{stderr}");
    let good = dir.path().join("good.iolog");
    std::fs::write(&good, iolog_v3("/x/t.dat", &[(0, "write", 0, 4096)])).unwrap();
    let (code, _, stderr) = run(&["replay", &path_str(&good), &path_str(&target), "--speed", "0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--speed 0"), "{stderr}");
    let (code, _, stderr) =
        run(&["replay", &path_str(&bad_len_trace(dir.path())), &path_str(&target), "--file-size", "4k"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("less than the trace's largest I/O (65536 bytes)"), "{stderr}");
    assert!(!target.exists(), "a refused replay touched its target");
}
