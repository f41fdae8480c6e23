//! `--verify-state` and `iopulse verify` without a power-cut rig: a kill -9 of the writer
//! (the kernel keeps every write) breaks no promise; blocks damaged by hand (a flushed
//! block given older data or zeros, 4 KiB of an older write in a 16 KiB block) are found
//! with their offsets and parts and exit 3; a damaged or truncated state file is refused
//! (exit 2) or, when only its last update was cut short, the update before is used.

use super::common::{iopulse, path_str, run, temp_dir, wait_at_most};
use iopulse::testing::data::Pattern;
use iopulse::testing::durable_record::read;
use iopulse::testing::verify::stamp;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BS: u64 = 16384;

/// The flags of a verified write run on `target` that keeps its record in `state`: 4 writes
/// between fdatasyncs (the power-cut rig's runs use them too).
pub(crate) fn record_args(target: &Path, state: &Path, file_size: &str, block_size: &str) -> Vec<String> {
    let flags = ["--write-percent", "100", "--verify", "--fdatasync-every", "4"];
    let mut args =
        vec![path_str(target), "--file-size".into(), file_size.into(), "--block-size".into(), block_size.into()];
    args.extend(flags.iter().map(|f| f.to_string()));
    args.extend(["--verify-state".to_string(), path_str(state)]);
    args
}

/// A verified write run of `args` on `target` keeping its record in `state`.
fn write_run(target: &Path, state: &Path, extra: &[&str]) {
    let mut args = record_args(target, state, "2m", "16k");
    args.push("--quiet".into());
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{args:?}: {err}{out}");
}

fn verify_json(target: &Path, state: &Path) -> (i32, serde_json::Value, String) {
    let (t, s) = (path_str(target), path_str(state));
    let (code, out, err) = run(&["verify", &t, "--state", &s, "--output-format", "json"]);
    let doc = serde_json::from_str(&out).unwrap_or(serde_json::Value::Null);
    (code, doc, err)
}

fn count(doc: &serde_json::Value, class: &str) -> u64 {
    doc["counts"][class].as_u64().unwrap_or_else(|| panic!("no count {class}: {doc}"))
}

/// The block at `offset` as the run's write `low` (of worker 0's base) would have it.
fn written(state: &Path, offset: u64, low: u32) -> Vec<u8> {
    let record = read(state).unwrap();
    let base = record.slots[0].as_ref().unwrap().sequence_base;
    let mut b = vec![0u8; BS as usize];
    stamp(&mut b, Pattern::Random, record.header.seed, offset, base | u64::from(low));
    b
}

/// A block whose durable write is its second or later (so that an older write exists).
fn rewritten_block(state: &Path) -> (u64, u32) {
    let record = read(state).unwrap();
    let table = &record.slots[0].as_ref().unwrap().table;
    let (i, &d) = table.iter().enumerate().find(|(_, d)| **d > 1).expect("a block written after the first write");
    (i as u64 * BS, d)
}

#[test]
fn a_completed_run_is_intact_and_the_record_names_each_blocks_flushed_write() {
    let dir = temp_dir();
    let (target, state) = (dir.path().join("t.dat"), dir.path().join("t.state"));
    write_run(&target, &state, &["--ops", "400"]);
    let (code, doc, err) = verify_json(&target, &state);
    assert_eq!(code, 0, "{err}{doc}");
    // 400 writes, a flush after every 4th: the last flush covers them all.
    assert_eq!(read(&state).unwrap().slots[0].as_ref().unwrap().high_water, 400);
    let blocks = 2 * 1024 * 1024 / BS;
    assert_eq!(doc["blocks"].as_u64(), Some(blocks));
    let intact = count(&doc, "intact");
    assert_eq!(intact + count(&doc, "unflushed_old"), blocks, "{doc}");
    assert!(intact > blocks / 2, "{doc}");
    assert!(doc["last_flush_unix_ns"].as_u64().unwrap() > 0);
}

#[test]
fn a_kill_9_of_the_writer_breaks_no_promise() {
    let dir = temp_dir();
    let (target, state) = (dir.path().join("t.dat"), dir.path().join("t.state"));
    for engine in ["sync", "io_uring"] {
        if engine == "io_uring" && !super::common::engine_available("io_uring") {
            super::common::root::skip("kill -9 with io_uring", "io_uring is not available here");
            continue;
        }
        let mut child = iopulse()
            .args(record_args(&target, &state, "2m", "16k"))
            .args(["--duration", "60s", "--engine", engine, "--queue-depth", "4", "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Until the record holds some flushes, then SIGKILL in the middle of the run.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while read(&state).ok().and_then(|r| r.slots[0].as_ref().map(|s| s.generation)).unwrap_or(0) < 20 {
            assert!(std::time::Instant::now() < deadline, "no flush recorded in 20 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGKILL)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
        let (code, doc, err) = verify_json(&target, &state);
        assert_eq!(code, 0, "{engine}: {err}{doc}");
        assert_eq!(count(&doc, "lost_though_flushed"), 0, "{engine}: {doc}");
        assert_eq!(count(&doc, "torn") + count(&doc, "corrupt"), 0, "{engine}: {doc}");
        assert!(count(&doc, "intact") > 0, "{engine}: {doc}");
    }
}

#[test]
fn a_flushed_block_given_older_data_or_zeros_is_lost_though_flushed() {
    let dir = temp_dir();
    let (target, state) = (dir.path().join("t.dat"), dir.path().join("t.state"));
    write_run(&target, &state, &["--ops", "400"]);
    let (offset, d) = rewritten_block(&state);
    let file = std::fs::OpenOptions::new().write(true).open(&target).unwrap();
    // An older write of the run in place of the flushed one.
    file.write_all_at(&written(&state, offset, d - 1), offset).unwrap();
    let (code, doc, err) = verify_json(&target, &state);
    assert_eq!(code, 3, "{err}{doc}");
    assert_eq!(count(&doc, "lost_though_flushed"), 1, "{doc}");
    assert_eq!(doc["first_offsets"]["lost_though_flushed"][0]["offset_bytes"].as_u64(), Some(offset));
    // Zeros in another flushed block: two now.
    let record = read(&state).unwrap();
    let table = &record.slots[0].as_ref().unwrap().table;
    let other = table.iter().enumerate().position(|(i, d)| *d > 0 && i as u64 * BS != offset).unwrap() as u64 * BS;
    file.write_all_at(&vec![0u8; BS as usize], other).unwrap();
    let (code, doc, _) = verify_json(&target, &state);
    assert_eq!(code, 3);
    assert_eq!(count(&doc, "lost_though_flushed"), 2, "{doc}");
    let mut firsts: Vec<u64> = doc["first_offsets"]["lost_though_flushed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["offset_bytes"].as_u64().unwrap())
        .collect();
    firsts.sort();
    let mut want = vec![offset, other];
    want.sort();
    assert_eq!(firsts, want);
    // The text names the offset and the broken promise.
    let (code, text, _) = run(&["verify", &path_str(&target), "--state", &path_str(&state)]);
    assert_eq!(code, 3);
    assert!(text.contains(&format!("first at {}", want[0])) && text.contains("PROMISE BROKEN"), "{text}");
    // --quiet, as every subcommand takes it: the same verdict and exit code, nothing on stderr.
    let (code, quiet_text, err) = run(&["verify", &path_str(&target), "--state", &path_str(&state), "--quiet"]);
    assert_eq!((code, quiet_text.as_str(), err.as_str()), (3, text.as_str(), ""));
}

#[test]
fn four_kib_of_an_older_write_in_a_16_kib_block_is_torn_with_its_parts() {
    let dir = temp_dir();
    let (target, state) = (dir.path().join("t.dat"), dir.path().join("t.state"));
    write_run(&target, &state, &["--ops", "400"]);
    let (offset, d) = rewritten_block(&state);
    let older = written(&state, offset, d - 1);
    let file = std::fs::OpenOptions::new().write(true).open(&target).unwrap();
    file.write_all_at(&older[..4096], offset).unwrap();
    let (code, doc, err) = verify_json(&target, &state);
    assert_eq!(code, 3, "{err}{doc}");
    assert_eq!(count(&doc, "torn"), 1, "{doc}");
    assert_eq!(count(&doc, "lost_though_flushed") + count(&doc, "corrupt"), 0, "{doc}");
    let torn = &doc["torn"][0];
    assert_eq!(torn["offset_bytes"].as_u64(), Some(offset));
    assert_eq!(torn["broken_promise"].as_bool(), Some(true));
    let parts: Vec<(u64, u64, u64)> = torn["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["at_byte"].as_u64().unwrap(), p["len_bytes"].as_u64().unwrap(), p["sequence"].as_u64().unwrap()))
        .collect();
    assert_eq!(parts, vec![(0, 4096, u64::from(d - 1)), (4096, 12288, u64::from(d))]);
    // A flipped byte in another flushed block is corruption, not a tear.
    let record = read(&state).unwrap();
    let table = &record.slots[0].as_ref().unwrap().table;
    let other = table.iter().enumerate().position(|(i, d)| *d > 0 && i as u64 * BS != offset).unwrap() as u64 * BS;
    let mut b = vec![0u8; BS as usize];
    std::fs::File::open(&target).unwrap().read_exact_at(&mut b, other).unwrap();
    b[9000] ^= 0x40;
    file.write_all_at(&b, other).unwrap();
    let (code, doc, _) = verify_json(&target, &state);
    assert_eq!(code, 3);
    assert_eq!(count(&doc, "corrupt"), 1, "{doc}");
    assert_eq!(doc["first_offsets"]["corrupt"][0]["offset_bytes"].as_u64(), Some(other));
}

#[test]
fn a_damaged_state_file_is_refused_and_a_cut_update_leaves_the_previous() {
    let dir = temp_dir();
    let (target, state) = (dir.path().join("t.dat"), dir.path().join("t.state"));
    write_run(&target, &state, &["--ops", "400"]);
    let bytes = std::fs::read(&state).unwrap();
    // Truncated: refused, naming the file, exit 2.
    let cut = dir.path().join("cut.state");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let (code, out, err) = run(&["verify", &path_str(&target), "--state", &path_str(&cut)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&path_str(&cut)) && err.contains("truncated") && err.lines().count() == 1, "{err}");
    // Not a record at all.
    let (code, _, err) = run(&["verify", &path_str(&target), "--state", &path_str(&target)]);
    assert_eq!(code, 2);
    assert!(err.contains("not an iopulse durable record"), "{err}");
    // A device or a FIFO is never read.
    let (code, _, err) = run(&["verify", &path_str(&target), "--state", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.contains("/dev/zero"), "{err}");
    // The newest copy of the table's page damaged (a cut during its update): the copy
    // before it is read. The header is a page, then the worker's two summary pages, then
    // the two copies of its one table page (128 blocks).
    let record = read(&state).unwrap();
    let newest = record.slots[0].as_ref().unwrap().generation;
    let generation_at = |at: usize| u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap());
    let at = [3 * 4096, 4 * 4096].into_iter().max_by_key(|&at| generation_at(at)).unwrap() + 64;
    assert_eq!(generation_at(at - 64), newest);
    let mut damaged = bytes.clone();
    damaged[at..at + 16].fill(0xa5);
    std::fs::write(&state, &damaged).unwrap();
    let previous = read(&state).unwrap();
    assert_eq!(previous.damaged_slots, 1);
    assert_eq!(previous.slots[0].as_ref().unwrap().generation, newest - 1);
    let (code, doc, err) = verify_json(&target, &state);
    assert_eq!(code, 0, "{err}{doc}");
    assert_eq!(doc["record_updates_cut_short"].as_u64(), Some(1));
    // The writes of the last flush are newer than the record used: unflushed new.
    assert!(count(&doc, "unflushed_new") >= 1, "{doc}");
    assert_eq!(count(&doc, "lost_though_flushed"), 0, "{doc}");
}

#[test]
fn verify_state_is_refused_without_what_it_needs() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("t.dat"));
    let s = path_str(&dir.path().join("t.state"));
    for (extra, want) in [
        (vec!["--fdatasync-every", "4"], "add --verify"),
        (vec!["--verify"], "add --fdatasync-every N (or --fsync-every N), or --sync-writes dsync, or --direct"),
        (vec!["--verify", "--fdatasync-every", "4", "--verify-state-every", "8"], "drop --verify-state-every"),
    ] {
        let mut args = vec![t.as_str(), "--write-percent", "100", "--verify-state", s.as_str()];
        args.extend(extra);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(want), "{err}");
    }
    // The record is an output: never one of the targets.
    let (code, _, err) =
        run(&[&t, "--write-percent", "100", "--verify", "--fdatasync-every", "4", "--verify-state", &t]);
    assert_eq!(code, 2);
    assert!(err.contains("--verify-state"), "{err}");
    assert!(!dir.path().join("t.dat").exists(), "nothing on disk is touched");
}

#[test]
fn a_job_file_keeps_a_record_too_and_its_path_passes_the_guard() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let job = |state: &str| {
        format!(
            "[writer]\ntargets = [\"{d}/t.dat\"]\nfile-size = \"1M\"\nblock-size = \"16k\"\nwrite-percent = 100\nverify = true\nfdatasync-every = 4\nops = 100\nverify-state = \"{state}\"\n"
        )
    };
    let file = dir.path().join("jobs.toml");
    // The record named as the job's own target: refused before anything is touched.
    std::fs::write(&file, job(&format!("{d}/t.dat"))).unwrap();
    let (code, _, err) = run(&["run", &path_str(&file), "--quiet"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--verify-state"), "{err}");
    assert!(!dir.path().join("t.dat").exists());
    // A record beside it: written, and read back by verify.
    std::fs::write(&file, job(&format!("{d}/t.state"))).unwrap();
    let (code, out, err) = run(&["run", &path_str(&file), "--quiet"]);
    assert_eq!(code, 0, "{err}{out}");
    let (code, doc, err) = verify_json(&dir.path().join("t.dat"), &dir.path().join("t.state"));
    assert_eq!(code, 0, "{err}{doc}");
    assert_eq!(read(&dir.path().join("t.state")).unwrap().slots[0].as_ref().unwrap().high_water, 100);
    // Two jobs of one phase (run at once, as ranks of one job) never share a record.
    let two = format!(
        "{}\n[other]\ntargets = [\"{d}/u.dat\"]\nfile-size = \"1M\"\nwrite-percent = 100\nverify = true\nfdatasync-every = 4\nops = 100\nverify-state = \"{d}/t.state\"\n",
        job(&format!("{d}/t.state"))
    );
    std::fs::write(&file, two).unwrap();
    let (code, _, err) = run(&["run", &path_str(&file), "--quiet"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--verify-state") && err.lines().count() == 1, "{err}");
    assert!(!dir.path().join("u.dat").exists(), "nothing is touched");
}

#[test]
fn a_sweep_guards_its_record_like_a_run() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("t.dat"));
    let args = |state: &str| {
        vec![
            "sweep".to_string(),
            t.clone(),
            "--file-size".into(),
            "1m".into(),
            "--block-size".into(),
            "16k".into(),
            "--write-percent".into(),
            "100".into(),
            "--verify".into(),
            "--fdatasync-every".into(),
            "4,8".into(),
            "--ops".into(),
            "50".into(),
            "--verify-state".into(),
            state.to_string(),
            "--quiet".into(),
        ]
    };
    // The record named as the target: refused, nothing touched.
    let a = args(&t);
    let (code, _, err) = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--verify-state"), "{err}");
    assert!(!dir.path().join("t.dat").exists());
    // One record for every point: accepted (the last point's record is what is left).
    let state = dir.path().join("t.state");
    let a = args(&path_str(&state));
    let (code, out, err) = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}{out}");
    let (code, doc, err) = verify_json(&dir.path().join("t.dat"), &state);
    assert_eq!(code, 0, "{err}{doc}");
}

#[test]
fn several_targets_are_recorded_and_verify_checks_each_naming_the_target() {
    let dir = temp_dir();
    let (a, b, state) = (dir.path().join("a.dat"), dir.path().join("b.dat"), dir.path().join("m.state"));
    let (sa, sb, ss) = (path_str(&a), path_str(&b), path_str(&state));
    let args = [
        &sa,
        &sb,
        "--file-size",
        "1m",
        "--block-size",
        "16k",
        "--threads",
        "3",
        "--write-percent",
        "100",
        "--verify",
        "--fdatasync-every",
        "4",
        "--ops",
        "600",
        "--verify-state",
        &ss,
        "--quiet",
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}{out}");
    let record = read(&state).unwrap();
    let paths: Vec<_> = record.header.targets.iter().map(|t| t.path.clone()).collect();
    assert_eq!(paths, vec![a.clone(), b.clone()]);
    // Three workers' slices of the two targets laid end to end: one straddles them.
    let extents: usize = record.header.workers.iter().map(Vec::len).sum();
    assert_eq!(extents, 4, "{:?}", record.header.workers);
    // The recorded paths are used when none is given; every block of both is judged.
    let (code, out, err) = run(&["verify", "--state", &ss, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["blocks"].as_u64(), Some(128));
    for t in doc["targets"].as_array().unwrap() {
        assert!(t["counts"]["intact"].as_u64().unwrap() > 0, "{doc}");
    }
    // A flushed block of b.dat given zeros: found in b.dat, at its offset in b.dat.
    let mut found = None;
    for (w, extents) in record.header.workers.iter().enumerate() {
        let table = &record.slots[w].as_ref().unwrap().table;
        let mut at = 0;
        for e in extents {
            if e.target == 1 && found.is_none() {
                found = (0..e.blocks as usize).find(|&k| table[at + k] > 0).map(|k| e.first_block + k as u64);
            }
            at += e.blocks as usize;
        }
    }
    let i = found.expect("a flushed block of b.dat");
    let file = std::fs::OpenOptions::new().write(true).open(&b).unwrap();
    file.write_all_at(&vec![0u8; BS as usize], i * BS).unwrap();
    let (code, out, _) = run(&["verify", "--state", &ss, "--output-format", "json"]);
    assert_eq!(code, 3, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(count(&doc, "lost_though_flushed"), 1, "{doc}");
    let first = &doc["first_offsets"]["lost_though_flushed"][0];
    assert_eq!((first["target"].as_str(), first["offset_bytes"].as_u64()), (Some(sb.as_str()), Some(i * BS)));
    assert_eq!(doc["targets"][1]["counts"]["lost_though_flushed"].as_u64(), Some(1));
    assert_eq!(doc["targets"][0]["counts"]["lost_though_flushed"].as_u64(), Some(0));
    // Copies of the targets are other files: the record is not of them (exit 2, naming
    // what it is of), unless --force says to judge them anyway (an image of the device).
    let copies = dir.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    std::fs::copy(&a, copies.join("a")).unwrap();
    std::fs::copy(&b, copies.join("b")).unwrap();
    let (ca, cb) = (path_str(&copies.join("a")), path_str(&copies.join("b")));
    let (code, _, err) = run(&["verify", &ca, &cb, "--state", &ss]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is another file") && err.contains("this record is of") && err.contains(&sa), "{err}");
    let (code, text, _) = run(&["verify", &ca, &cb, "--state", &ss, "--force"]);
    assert_eq!(code, 3);
    assert!(text.contains(&format!("first at {cb}:{}", i * BS)), "{text}");
    // The targets moved (renamed, as a device renamed after a reboot): given in the
    // record's order, judged as the files the run wrote.
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    std::fs::rename(&a, moved.join("a")).unwrap();
    std::fs::rename(&b, moved.join("b")).unwrap();
    let (ma, mb) = (path_str(&moved.join("a")), path_str(&moved.join("b")));
    let (code, text, _) = run(&["verify", &ma, &mb, "--state", &ss]);
    assert_eq!(code, 3);
    assert!(text.contains(&format!("first at {mb}:{}", i * BS)), "{text}");
    // Given in another order: an argument mistake, not a broken promise.
    let (code, _, err) = run(&["verify", &mb, &ma, "--state", &ss]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is the record's target 2") && err.contains("in that order"), "{err}");
    // One of two: refused, naming what the record holds.
    let (code, _, err) = run(&["verify", &ma, "--state", &ss]);
    assert_eq!(code, 2);
    assert!(err.contains("the record holds 2") && err.contains(&sa) && err.lines().count() == 1, "{err}");
}

#[test]
fn per_worker_files_with_writes_durable_at_completion_are_recorded_every_n_writes() {
    let dir = temp_dir();
    let (p, state) = (dir.path().join("p.dat"), dir.path().join("p.state"));
    let (sp, ss) = (path_str(&p), path_str(&state));
    let args = [
        &sp,
        "--file-size",
        "1m",
        "--block-size",
        "16k",
        "--threads",
        "2",
        "--file-distribution",
        "per-worker",
        "--write-percent",
        "100",
        "--verify",
        "--sync-writes",
        "dsync",
        "--verify-state",
        &ss,
        "--verify-state-every",
        "8",
        "--ops",
        "100",
        "--quiet",
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}{out}");
    let record = read(&state).unwrap();
    let names: Vec<String> =
        record.header.targets.iter().map(|t| t.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["p.dat.0", "p.dat.1"]);
    for s in &record.slots {
        // 50 writes each: 6 updates of 8, and the last 2 at the worker's end.
        let s = s.as_ref().unwrap();
        assert_eq!((s.generation, s.high_water), (7, 50), "{s:?}");
        assert_eq!(s.table.iter().filter(|&&d| d > 0).count(), 50);
    }
    let (code, out, err) = run(&["verify", "--state", &ss, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(count(&doc, "intact"), 100, "{doc}");
    assert!(doc["durable_by"].as_str().unwrap().contains("O_DSYNC"), "{doc}");
}

#[test]
fn direct_writes_feed_the_record_only_where_the_device_cache_is_write_through() {
    let dir = temp_dir();
    let (t, state) = (dir.path().join("t.dat"), dir.path().join("t.state"));
    let (st, ss) = (path_str(&t), path_str(&state));
    // On a file an O_DIRECT write is durable only once the filesystem's metadata is.
    let (code, _, err) =
        run(&[&st, "--file-size", "1m", "--write-percent", "100", "--verify", "--direct", "--verify-state", &ss]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a file") && err.contains("--fdatasync-every N") && err.lines().count() == 1, "{err}");
    assert!(!t.exists() && !state.exists(), "nothing is touched");
    let Some(dev) = super::common::root::loop_device(
        8 << 20,
        super::common::root::LoopOptions::default(),
        "--verify-state with --direct on a loop device",
    ) else {
        return;
    };
    let cache = format!("/sys/block/{}/queue/write_cache", Path::new(&dev.path).file_name().unwrap().to_string_lossy());
    let Ok(was) = std::fs::read_to_string(&cache) else {
        super::common::root::skip("--verify-state with --direct", "no queue/write_cache in sysfs");
        return;
    };
    let direct = |extra: &[&str]| {
        let mut args = vec![
            dev.path.as_str(),
            "--force",
            "--block-size",
            "16k",
            "--write-percent",
            "100",
            "--verify",
            "--direct",
            "--verify-state",
            &ss,
            "--ops",
            "64",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    // A volatile cache: a completed write is durable only after a flush.
    std::fs::write(&cache, "write back").unwrap();
    let (code, _, err) = direct(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("volatile write cache") && err.contains("write back") && err.contains("--sync-writes"),
        "{err}"
    );
    assert!(!state.exists());
    // With a flush stream it is accepted, whatever the cache.
    let (code, out, err) = direct(&["--fdatasync-every", "8"]);
    assert_eq!(code, 0, "{err}{out}");
    // Write through: every completed write is durable, and the record follows them.
    std::fs::write(&cache, "write through").unwrap();
    let (code, out, err) = direct(&["--verify-state-every", "16"]);
    std::fs::write(&cache, was.trim()).unwrap();
    assert_eq!(code, 0, "{err}{out}");
    let s = read(&state).unwrap().slots[0].clone().unwrap();
    assert_eq!((s.generation, s.high_water), (4, 64));
    let (code, out, err) = run(&["verify", "--state", &ss, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(count(&doc, "intact"), 64, "{doc}");
    assert!(doc["durable_by"].as_str().unwrap().contains("write-through"), "{doc}");
}

#[test]
fn a_second_run_given_the_same_record_is_refused_naming_the_first_and_touches_nothing() {
    let dir = temp_dir();
    let (a, b, state) = (dir.path().join("a.dat"), dir.path().join("b.dat"), dir.path().join("s.state"));
    let (sa, sb, ss) = (path_str(&a), path_str(&b), path_str(&state));
    let record_args = ["--file-size", "2m", "--write-percent", "100", "--verify", "--fdatasync-every", "8", "--quiet"];
    let mut first = iopulse()
        .args([sa.as_str(), "--verify-state", &ss, "--duration", "20"])
        .args(record_args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The first run holds the record from before its layout; its window is open once the
    // record holds an update (a flush recorded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !read(&state).is_ok_and(|r| r.slots.iter().any(Option::is_some)) {
        assert!(std::time::Instant::now() < deadline, "the first run never recorded a flush");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (code, stdout, stderr) = super::common::run_command(
        iopulse().args([sb.as_str(), "--verify-state", &ss, "--duration", "1"]).args(record_args),
    );
    let holder = super::common::lock_holder_words(&state, first.id());
    // The first run is stopped (by its pid) before anything is asserted.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(first.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let status = wait_at_most(&mut first, std::time::Duration::from_secs(20), "the first run");
    assert_eq!(code, 2, "{stderr}{stdout}");
    assert!(
        stderr.contains(&format!("--verify-state {ss} is in use by another run {holder}")),
        "the refusal names the record and the holder: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!b.exists(), "the second run touched nothing");
    assert_eq!(status.code(), Some(130), "the first run was interrupted");
    // The first run's record is whole, and holds its own target.
    let (code, _, err) = run(&["verify", "--state", &ss]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read(&state).unwrap().header.targets[0].path, a);
}

#[test]
fn verify_of_a_fifo_ends_at_once_with_exit_2() {
    let dir = temp_dir();
    let (t, state, fifo) = (dir.path().join("t.dat"), dir.path().join("t.state"), dir.path().join("fifo"));
    write_run(&t, &state, &[]);
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    for args in [
        vec!["verify".to_string(), path_str(&fifo), "--state".into(), path_str(&state)],
        vec!["verify".to_string(), path_str(&t), "--state".into(), path_str(&fifo)],
    ] {
        let mut child = iopulse()
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_at_most(&mut child, std::time::Duration::from_secs(2), "verify of a FIFO");
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is a FIFO"), "{args:?}: {err}");
    }
}
