//! The whole pipeline from the command line on real files: counts add up,
//! writes really land, runs until covered touch every block once, the mix
//! holds, JSON and text agree, layout writes real data, O_DIRECT is real or
//! its refusal is loud, Ctrl-C keeps the partial results.

use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

#[test]
fn bytes_moved_equal_ops_times_block_size() {
    for (engine, bs) in [("sync", "512"), ("sync", "4k"), ("sync", "64k"), ("null", "4k")] {
        let dir = temp_dir();
        let f = path_str(&dir.path().join("b.dat"));
        let r = run_json(&[
            &f,
            "--engine",
            engine,
            "--file-size",
            "2m",
            "--block-size",
            bs,
            "--duration",
            "0.2",
            "--random",
            "--write-percent",
            "25",
        ]);
        let bs = u64_at(&r, &["spec", "block_size_bytes"]);
        for op in ["read", "write", "total"] {
            assert_eq!(u64_at(&r, &[op, "bytes"]), u64_at(&r, &[op, "ops"]) * bs, "{engine} {op} bs={bs}");
        }
        assert!(u64_at(&r, &["total", "ops"]) > 0);
    }
}

/// `--io-limit N%` is a share of each worker's region, taken when the run opens the
/// targets: shared, each worker addresses the whole file; partitioned, its part; with a
/// `--bssplit` mix, the share in I/Os of the mix's mean size.
#[test]
fn an_io_limit_share_moves_that_share_of_each_worker_s_region() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    let mib = 1u64 << 20;
    for (how, percent) in [("shared", "150"), ("partitioned", "100")] {
        let limit = format!("{percent}%");
        let r = run_json(&[
            &f,
            "--file-size",
            "2m",
            "--random",
            "--threads",
            "2",
            "--file-distribution",
            how,
            "--io-limit",
            &limit,
        ]);
        // Shared: 2 workers × 150 % of 2 MiB; partitioned: 2 workers × all of their 1 MiB.
        let want = if how == "shared" { 2 * (3 * mib) } else { 2 * mib };
        assert_eq!(u64_at(&r, &["total", "bytes"]), want, "{how} {limit}");
        assert_eq!(u64_at(&r, &["spec", "ops_limit"]) * 4096, want);
        assert_eq!(r["spec"]["io_limit_percent"].as_u64(), Some(percent.parse().unwrap()));
        assert_eq!(r["stop_reason"], "complete", "{how}");
    }
    // A mix of 4k and 12k, half each: 8 KiB a mean I/O, 256 of them for the 2 MiB.
    let r = run_json(&[&f, "--file-size", "2m", "--random", "--bssplit", "4k/50:12k/50", "--io-limit", "100%"]);
    assert_eq!(u64_at(&r, &["total", "ops"]), 256);
    let bytes = u64_at(&r, &["total", "bytes"]) as f64;
    assert!((bytes / (2 * mib) as f64 - 1.0).abs() < 0.2, "{bytes} bytes for a 2 MiB share");
}

#[test]
fn a_write_run_changes_the_file() {
    let dir = temp_dir();
    let f = dir.path().join("w.dat");
    let fs = path_str(&f);
    // Lay the file out with a read-only run first, then remember its bytes.
    run_json(&[&fs, "--file-size", "1m", "--duration", "0.05"]);
    let before = std::fs::read(&f).unwrap();
    assert_eq!(before.len(), 1 << 20);
    let r = run_json(&[&fs, "--duration", "0", "--write-percent", "100", "--random", "--seed", "3"]);
    assert_eq!(u64_at(&r, &["write", "ops"]), 256);
    let after = std::fs::read(&f).unwrap();
    let changed = before.chunks(4096).zip(after.chunks(4096)).filter(|(a, b)| a != b).count();
    assert_eq!(changed, 256, "every block was written with new content");
}

#[test]
fn runs_until_covered_read_every_block_once() {
    for order in [None, Some("--random")] {
        for threads in ["1", "3"] {
            let dir = temp_dir();
            let f = path_str(&dir.path().join("c.dat"));
            let mut args =
                vec![f.as_str(), "--file-size", "1000k", "--block-size", "1k", "--duration", "0", "--threads", threads];
            args.extend(order);
            let r = run_json(&args);
            assert_eq!(u64_at(&r, &["read", "ops"]), 1000, "{order:?} threads={threads}");
            assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), 1000);
            assert_eq!(r["stop_reason"], "complete");
        }
    }
}

#[test]
fn read_write_mix_lands_within_two_percent() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("mix.dat"));
    // 102,400 blocks of 512 B, each accessed once: exactly that many ops.
    let r = run_json(&[
        &f,
        "--engine",
        "null",
        "--file-size",
        "50m",
        "--block-size",
        "512",
        "--duration",
        "0",
        "--random",
        "--write-percent",
        "30",
        "--seed",
        "11",
    ]);
    let (reads, writes) = (u64_at(&r, &["read", "ops"]) as f64, u64_at(&r, &["write", "ops"]) as f64);
    assert_eq!(reads + writes, 102_400.0);
    let write_share = writes / (reads + writes) * 100.0;
    assert!((write_share - 30.0).abs() <= 2.0, "write share {write_share:.2}%");
}

/// "925.0K" → 925000, "1.25M" → 1250000, "812" → 812.
fn parse_iops(text: &str) -> f64 {
    let (num, mult) = match text.chars().last() {
        Some('K') => (&text[..text.len() - 1], 1e3),
        Some('M') => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    num.parse::<f64>().unwrap() * mult
}

/// "7.83 µs" → 7830 ns.
fn parse_latency(value: &str, unit: &str) -> f64 {
    let v: f64 = value.parse().unwrap();
    v * match unit {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => panic!("unit {other}"),
    }
}

#[test]
fn json_and_text_agree_and_histograms_round_trip() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("j.dat"));
    let json_path = dir.path().join("out.json");
    let jp = path_str(&json_path);
    let (text, _) = run_ok(&[
        &f,
        "--file-size",
        "4m",
        "--duration",
        "0.3",
        "--random",
        "--write-percent",
        "40",
        "--json",
        &jp,
        "--seed",
        "5",
    ]);
    let r = read_json(&json_path);
    assert_eq!(r["schema_version"], 1);
    for op in ["read", "write"] {
        let line = text.lines().find(|l| l.starts_with(op)).unwrap_or_else(|| panic!("no {op} line in\n{text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let iops = parse_iops(words[1]);
        let json_iops = r[op]["iops"].as_f64().unwrap();
        // The text rounds to its last digit: 0.1K, 0.01M or 1.
        let half_digit = match words[1].chars().last() {
            Some('K') => 50.0,
            Some('M') => 5000.0,
            _ => 0.5,
        };
        assert!((iops - json_iops).abs() <= half_digit + 1e-6, "{op}: text {iops} vs json {json_iops}");
        let ops: u64 = line.split(" · ").last().unwrap().trim_end_matches(" ops").replace(',', "").parse().unwrap();
        assert_eq!(ops, u64_at(&r, &[op, "ops"]));
        // The p99 on the percentile line that follows.
        let idx = text.lines().position(|l| l == line).unwrap();
        let pline = text.lines().nth(idx + 2).unwrap();
        let p99_words: Vec<&str> = pline.split("p99 ").nth(1).unwrap().split_whitespace().collect();
        let p99_text = parse_latency(p99_words[0], p99_words[1]);
        let p99_json = r[op]["latency_ns"]["p99"].as_f64().unwrap();
        assert!((p99_text - p99_json).abs() <= p99_json * 0.01, "{op} p99: text {p99_text} vs json {p99_json}");
        // The serialized histogram holds exactly the run's samples.
        let hist = iopulse::testing::stats::decode_histogram(r["histograms"][op].as_str().unwrap()).unwrap();
        assert_eq!(hist.len(), u64_at(&r, &[op, "ops"]));
        let p99_hist = hist.value_at_quantile(0.99) as f64;
        assert!((p99_hist - p99_json).abs() <= p99_json * 0.002 + 1.0, "{op}: hist p99 {p99_hist} vs {p99_json}");
    }
    assert_eq!(per_worker_ops(&r), u64_at(&r, &["total", "ops"]), "the workers add up to the total");
}

#[test]
fn json_on_stdout_is_only_json_even_with_warnings() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("q.dat"));
    // --queue-depth 4 on sync prints a note on stderr; stdout must stay pure JSON.
    let (stdout, stderr) =
        run_ok(&[&f, "--file-size", "1m", "--duration", "0.1", "--queue-depth", "4", "--output-format", "json"]);
    let r: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is one JSON document");
    assert!(stderr.contains("one I/O at a time"), "{stderr}");
    assert_eq!(u64_at(&r, &["engine", "effective_queue_depth"]), 1);
    assert_eq!(u64_at(&r, &["engine", "requested_queue_depth"]), 4);
    // The same for fio's layout.
    let (stdout, stderr) =
        run_ok(&[&f, "--file-size", "1m", "--duration", "0.1", "--queue-depth", "4", "--output-format", "fio-json"]);
    let r: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is one fio-json document");
    assert!(stderr.contains("one I/O at a time"), "{stderr}");
    assert_eq!(r["jobs"][0]["job options"]["iodepth"], "4");
}

#[test]
fn layout_writes_real_data_and_extends_short_files() {
    let dir = temp_dir();
    let new = dir.path().join("new.dat");
    run_json(&[&path_str(&new), "--file-size", "3m", "--duration", "0.05"]);
    let meta = std::fs::metadata(&new).unwrap();
    assert_eq!(meta.len(), 3 << 20);
    assert!(meta.blocks() * 512 >= 3 << 20, "the file has holes: {} blocks allocated", meta.blocks());
    let data = std::fs::read(&new).unwrap();
    assert!(data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)), "a block of the layout is all zeros");

    let short = dir.path().join("short.dat");
    std::fs::write(&short, vec![0xabu8; 100_000]).unwrap();
    // Not laid out by iopulse: a read run extends it only with --force (docs/safety.md).
    let r = run_json(&[&path_str(&short), "--file-size", "1m", "--duration", "0.05", "--force"]);
    assert_eq!(u64_at(&r, &["targets", "0", "laid_out_bytes"]), (1 << 20) - 100_000);
    let data = std::fs::read(&short).unwrap();
    assert_eq!(data.len(), 1 << 20);
    assert!(data[..100_000].iter().all(|&x| x == 0xab), "the existing bytes were overwritten");
}

#[test]
fn read_runs_never_modify_a_full_size_file() {
    let dir = temp_dir();
    let f = dir.path().join("ro.dat");
    std::fs::write(&f, vec![0x5au8; 2 << 20]).unwrap();
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    run_json(&[&path_str(&f), "--duration", "0.1", "--random"]);
    run_json(&[&path_str(&f), "--duration", "0", "--file-size", "1m"]);
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), mtime);
    assert!(std::fs::read(&f).unwrap().iter().all(|&x| x == 0x5a));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2 << 20, "a read run truncated the file");
}

#[test]
fn embedded_default_runs_on_a_temp_file_and_removes_it() {
    // A workload flag and no target: one run on a temporary file (with no flag at all the
    // default profile runs: tests/profiles.rs).
    let r = run_json(&["--duration", "0.2", "--block-size", "4k"]);
    let path = r["targets"][0]["path"].as_str().unwrap().to_string();
    assert_eq!(u64_at(&r, &["targets", "0", "size_bytes"]), 256 << 20);
    assert_eq!(r["targets"][0]["removed_after_run"], true);
    assert!(u64_at(&r, &["read", "ops"]) > 0);
    assert!(!std::path::Path::new(&path).exists(), "{path} was left behind");
}

#[test]
fn direct_io_is_reported_when_effective() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("d.dat"));
    let (text, _) = run_ok(&[&f, "--file-size", "1m", "--duration", "0.2", "--direct", "--random"]);
    if text.contains("I/O mode: ⚠ BUFFERED") {
        eprintln!("SKIP: {} refuses O_DIRECT here: {text}", dir.path().display());
        return;
    }
    assert!(text.contains("I/O mode: ✓ O_DIRECT (page cache bypassed)"), "{text}");
}

/// Mounts a filesystem of `fstype` on a fresh dir (root only); None, with a message, if impossible.
fn mount_scratch(fstype: &str) -> Option<(tempfile::TempDir, Unmount)> {
    let dir = temp_dir();
    let ok = std::process::Command::new("mount")
        .args(["-t", fstype, "-o", "size=8m", fstype, &path_str(dir.path())])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: cannot mount {fstype} (needs root): O_DIRECT refusal not tested here");
        return None;
    }
    let guard = Unmount(dir.path().to_path_buf());
    Some((dir, guard))
}

struct Unmount(std::path::PathBuf);
impl Drop for Unmount {
    fn drop(&mut self) {
        // Lazy, so that a child still holding a file cannot keep it; then the empty
        // directory (the TempDir, dropped first, could not remove a mount point).
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn direct_refused_by_ramfs_falls_back_loudly_or_fails_when_strict() {
    let Some((dir, _unmount)) = mount_scratch("ramfs") else { return };
    let f = path_str(&dir.path().join("r.dat"));
    let json = path_str(&std::env::temp_dir().join(format!("iopulse-ramfs-{}.json", std::process::id())));
    let (text, stderr) = run_ok(&[&f, "--file-size", "1m", "--duration", "0.1", "--direct", "--json", &json]);
    assert!(stderr.contains("⚠ O_DIRECT FAILED (") && stderr.contains(") → falling back to BUFFERED I/O"), "{stderr}");
    assert!(text.contains("I/O mode: ⚠ BUFFERED (O_DIRECT refused: "), "{text}");
    let r = read_json(&json);
    let _ = std::fs::remove_file(&json);
    assert_eq!(r["direct"]["requested"], true);
    assert_eq!(r["direct"]["effective"], false);
    assert!(!r["direct"]["reason"].as_str().unwrap().is_empty());

    let g = path_str(&dir.path().join("strict.dat"));
    let (code, _, stderr) = run(&[&g, "--file-size", "1m", "--duration", "0.1", "--strict-direct"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--strict-direct"), "{stderr}");
    assert!(!std::path::Path::new(&g).exists(), "the file created for a failed run was left behind");
}

#[test]
fn direct_on_tmpfs_warns_that_it_measures_memory() {
    let Some((dir, _unmount)) = mount_scratch("tmpfs") else { return };
    let f = path_str(&dir.path().join("t.dat"));
    let (text, stderr) = run_ok(&[&f, "--file-size", "1m", "--duration", "0.1", "--direct"]);
    if text.contains("⚠ BUFFERED") {
        eprintln!("SKIP: this kernel's tmpfs refuses O_DIRECT");
        return;
    }
    assert!(stderr.contains("measure memory"), "{stderr}");
    assert!(text.contains("I/O mode: ⚠ O_DIRECT on a memory filesystem"), "{text}");
}

#[test]
fn sigint_stops_the_run_and_keeps_the_partial_results() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    let json = path_str(&dir.path().join("s.json"));
    let child = iopulse()
        .args([&f, "--file-size", "4m", "--duration", "60s", "--random", "--json", &json])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?} to stop", started.elapsed());
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("INTERRUPTED"), "{text}");
    let r = read_json(&json);
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["stop_reason"], "interrupted");
    assert!(u64_at(&r, &["read", "ops"]) > 0);
}
