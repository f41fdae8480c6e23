//! `--verify-state` and `iopulse verify` across power cuts, on the rig (`rig.rs`: a FUSE
//! filesystem that keeps unflushed data in memory and drops it at a cut): against the
//! honest rig no flushed block is ever lost and unflushed blocks come back old or new;
//! against the lying rig lost-though-flushed blocks are found at every cut; tearing at
//! 4 KiB within 16 KiB blocks is reported as torn with its parts; a cut during the
//! record's own update leaves the record before it, which `verify` reads.
//! Each test skips with a message where FUSE is not available (root and /dev/fuse).

mod rig;

use super::common::{engine_available, iopulse, path_str};
use iopulse::testing::durable_record::read;
use rig::{Mode, PAGE_BYTES, Rig};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A verified write run for 60 s on the rig's `t.dat`, its record in `state`.
fn start(target: &Path, state: &Path, engine: &str, block_size: &str, file_size: &str) -> Child {
    iopulse()
        .args(crate::durable_record::record_args(target, state, file_size, block_size))
        .args(["--random", "--duration", "60s", "--engine", engine, "--queue-depth", "4", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the rig has answered `flushes` flushes (the run is going), or panics with
/// what the run said.
fn wait_for_flushes(rig: &Rig, child: &mut Child, flushes: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while rig.flushes() < flushes {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("iopulse ended ({status}) before {flushes} flushes: {err}");
        }
        assert!(Instant::now() < deadline, "{flushes} flushes not seen in 30 s");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn kill_9(child: &mut Child) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
}

fn verify_json(target: &Path, state: &Path) -> (i32, serde_json::Value, String) {
    let out = iopulse()
        .args(["verify", &path_str(target), "--state", &path_str(state), "--output-format", "json"])
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn count(doc: &serde_json::Value, class: &str) -> u64 {
    doc["counts"][class].as_u64().unwrap_or_else(|| panic!("no count {class}: {doc}"))
}

/// A small xorshift for the cuts' moments and kept pages (seeded: a failure reproduces).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn against_the_honest_rig_no_flushed_block_is_ever_lost_and_unflushed_ones_come_back_old_or_new() {
    let mut draw = Draw(0x9e37_79b9_7f4a_7c15);
    let (mut new_seen, mut dropped_seen, mut cuts) = (0u64, 0usize, 0);
    for engine in ["sync", "io_uring"] {
        if !engine_available(engine) {
            eprintln!("SKIP honest cuts with {engine}: the engine is not available here");
            continue;
        }
        for _ in 0..10 {
            let Some(rig) = Rig::mount(Mode::Honest, &[("t.dat", 2 << 20)]) else { return };
            let (target, state) = (rig.dir.join("t.dat"), rig.dir.join("t.state"));
            let mut child = start(&target, &state, engine, "4k", "2m");
            // A random moment after the first flushes.
            wait_for_flushes(&rig, &mut child, 8 + draw.next() % 64);
            std::thread::sleep(Duration::from_micros(draw.next() % 20_000));
            kill_9(&mut child);
            child.wait().unwrap();
            let pages = rig.cut(|_, _| draw.next().is_multiple_of(2));
            let (_, dropped) = &pages[std::ffi::OsStr::new("t.dat")];
            dropped_seen += dropped.len();
            let (code, doc, err) = verify_json(&target, &state);
            assert_eq!(code, 0, "{engine}, cut {cuts}: {err}{doc}");
            assert_eq!(count(&doc, "lost_though_flushed"), 0, "{engine}: {doc}");
            assert_eq!(count(&doc, "corrupt"), 0, "{engine}: {doc}");
            assert_eq!(doc["torn_broken_promises"].as_u64(), Some(0), "{engine}: {doc}");
            assert!(count(&doc, "intact") > 0, "{engine}: {doc}");
            new_seen += count(&doc, "unflushed_new");
            cuts += 1;
        }
    }
    if cuts == 0 {
        return;
    }
    eprintln!("{cuts} cuts: {new_seen} unflushed blocks came back new, {dropped_seen} unflushed pages dropped");
    // Unflushed writes came back new (kept by the cut) and old (dropped), and neither is
    // a violation.
    assert!(new_seen > 0, "no unflushed write survived any of {cuts} cuts");
    assert!(dropped_seen > 0, "no unflushed write was dropped in {cuts} cuts");
}

#[test]
fn against_the_lying_rig_every_cut_finds_lost_though_flushed_blocks_with_their_offsets() {
    let outside = tempfile::tempdir().unwrap();
    for cut in 0..3 {
        let Some(rig) = Rig::mount(Mode::Lying, &[("t.dat", 2 << 20)]) else { return };
        // The record on storage that keeps its promises; the data on the liar.
        let (target, state) = (rig.dir.join("t.dat"), outside.path().join(format!("t{cut}.state")));
        let mut child = start(&target, &state, "sync", "4k", "2m");
        wait_for_flushes(&rig, &mut child, 40);
        kill_9(&mut child);
        child.wait().unwrap();
        rig.cut(|_, _| false);
        let (code, doc, err) = verify_json(&target, &state);
        assert_eq!(code, 3, "cut {cut}: {err}{doc}");
        let lost = count(&doc, "lost_though_flushed");
        assert!(lost > 0, "{doc}");
        let firsts = doc["first_offsets"]["lost_though_flushed"].as_array().unwrap();
        assert_eq!(firsts.len() as u64, lost.min(10));
        // Every offset named is a block the record says was flushed.
        let record = read(&state).unwrap();
        let table = &record.slots[0].as_ref().unwrap().table;
        for o in firsts {
            let block = o["offset_bytes"].as_u64().unwrap() / 4096;
            assert!(table[block as usize] > 0, "block {block} named lost but never flushed");
        }
    }
}

#[test]
fn tearing_at_4_kib_within_16_kib_blocks_is_reported_as_torn_with_its_parts() {
    let Some(rig) = Rig::mount(Mode::Honest, &[("t.dat", 2 << 20)]) else { return };
    let (target, state) = (rig.dir.join("t.dat"), rig.dir.join("t.state"));
    let mut child = start(&target, &state, "sync", "16k", "2m");
    wait_for_flushes(&rig, &mut child, 40);
    kill_9(&mut child);
    child.wait().unwrap();
    // Of each unflushed 16 KiB write, only its first 4 KiB page reaches the medium.
    let pages = rig.cut(|name, page| name == "t.state" || page.is_multiple_of(4));
    let (kept, _) = &pages[std::ffi::OsStr::new("t.dat")];
    let (code, doc, err) = verify_json(&target, &state);
    assert_eq!(code, 0, "{err}{doc}");
    assert_eq!(count(&doc, "lost_though_flushed") + count(&doc, "corrupt"), 0, "{doc}");
    if kept.is_empty() {
        eprintln!("SKIP torn check: the cut found no unflushed write to tear");
        return;
    }
    let torn = count(&doc, "torn");
    assert_eq!(torn, kept.len() as u64, "{doc}");
    for t in doc["torn"].as_array().unwrap() {
        let parts = t["parts"].as_array().unwrap();
        let sizes: Vec<u64> = parts.iter().map(|p| p["len_bytes"].as_u64().unwrap()).collect();
        assert_eq!(sizes, vec![4096, 12288], "{t}");
        assert_eq!(parts[0]["from"], "write", "{t}");
        assert!(kept.contains(&(t["offset_bytes"].as_u64().unwrap() as usize / PAGE_BYTES)), "{t}");
        assert_eq!(t["broken_promise"].as_bool(), Some(false), "{t}");
    }
}

#[test]
fn a_cut_during_the_records_own_update_leaves_the_record_before_it() {
    // 16 MiB of 4 KiB blocks: a slot of 16 KiB and more, so a cut can tear it.
    let Some(rig) = Rig::mount(Mode::Honest, &[("t.dat", 16 << 20)]) else { return };
    let (target, state) = (rig.dir.join("t.dat"), rig.dir.join("t.state"));
    // The record's file is written in place: its header's flush is the first of t.state,
    // then its 10 updates; the 11th update's flush is held.
    rig.hold_flush("t.state", 11);
    let mut child = start(&target, &state, "sync", "4k", "16m");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !rig.holding() {
        assert!(Instant::now() < deadline, "the 11th record update never came");
        std::thread::sleep(Duration::from_millis(2));
    }
    kill_9(&mut child);
    rig.release();
    child.wait().unwrap();
    // Of the pages the 11th update wrote (its changed table pages and its summary), only
    // the first reaches the medium.
    let mut first = None;
    let pages = rig.cut(|name, page| {
        if name != "t.state" {
            return true;
        }
        *first.get_or_insert(page) == page
    });
    let (kept, dropped) = &pages[std::ffi::OsStr::new("t.state")];
    assert!(kept.len() == 1 && !dropped.is_empty(), "the record's update was not in flight: {kept:?} {dropped:?}");
    let record = read(&state).unwrap();
    assert_eq!(record.damaged_slots, 1, "the cut update is seen");
    assert_eq!(record.slots[0].as_ref().unwrap().generation, 10, "the update before it is the newest whole");
    let (code, doc, err) = verify_json(&target, &state);
    assert_eq!(code, 0, "{err}{doc}");
    assert_eq!(doc["record_updates_cut_short"].as_u64(), Some(1));
    assert_eq!(count(&doc, "lost_though_flushed"), 0, "{doc}");
}

/// A verified write run for 60 s of `args` (targets and flags), quiet.
fn spawn(args: &[String]) -> Child {
    iopulse()
        .args(args)
        .args(["--duration", "60s", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn an_update_cut_half_way_through_its_pages_leaves_a_record_that_promises_only_what_was_flushed() {
    // 32 MiB of 4 KiB blocks: 9 table pages, most of them changed by each update of 64
    // random writes; the update in flight is cut with a random half of its pages kept.
    let mut draw = Draw(0x2545_f491_4f6c_dd1d);
    let mut mixed = 0;
    for cut in 0..4 {
        let Some(rig) = Rig::mount(Mode::Honest, &[("t.dat", 32 << 20)]) else { return };
        let (target, state) = (rig.dir.join("t.dat"), rig.dir.join("t.state"));
        // The header's flush, then 10 updates: the 11th update's flush is held.
        rig.hold_flush("t.state", 11);
        let (t, s) = (path_str(&target), path_str(&state));
        let mut child = spawn(&strings(&[
            &t,
            "--file-size",
            "32m",
            "--block-size",
            "4k",
            "--write-percent",
            "100",
            "--random",
            "--verify",
            "--fdatasync-every",
            "64",
            "--verify-state",
            &s,
        ]));
        let deadline = Instant::now() + Duration::from_secs(60);
        while !rig.holding() {
            assert!(Instant::now() < deadline, "the 11th record update never came");
            std::thread::sleep(Duration::from_millis(2));
        }
        kill_9(&mut child);
        rig.release();
        child.wait().unwrap();
        let pages = rig.cut(|name, _| name != "t.state" || draw.next().is_multiple_of(2));
        let (kept, dropped) = &pages[std::ffi::OsStr::new("t.state")];
        let record = read(&state).unwrap();
        let slot = record.slots[0].as_ref().unwrap();
        // Whatever landed, the newest whole update is the 10th or (all landed) the 11th.
        if dropped.is_empty() {
            assert_eq!((slot.generation, record.damaged_slots), (11, 0), "cut {cut}");
        } else if !kept.is_empty() {
            assert_eq!((slot.generation, record.damaged_slots), (10, 1), "cut {cut}: kept {kept:?}");
        }
        // Table pages of the 11th update that landed are used: writes after the 10th
        // flush (640 writes) are promised, and they were flushed before the update.
        let table_pages_kept = kept.iter().filter(|&&p| p >= 3).count();
        if table_pages_kept > 0 && !dropped.is_empty() {
            assert!(slot.table.iter().any(|&d| u64::from(d) > 640), "cut {cut}: kept {kept:?}");
            mixed += 1;
        }
        let (code, doc, err) = verify_json(&target, &state);
        assert_eq!(code, 0, "cut {cut}: {err}{doc}");
        assert_eq!(count(&doc, "lost_though_flushed") + count(&doc, "corrupt"), 0, "{doc}");
        assert!(count(&doc, "intact") > 0, "{doc}");
    }
    eprintln!("4 cuts during a record update, {mixed} leaving pages of both updates");
    assert!(mixed > 0, "no cut left pages of both updates");
}

/// A verified 4 KiB random write run on `target` with O_DSYNC writes feeding the record in
/// `state` every 4 writes (its updates are then the run's only flushes).
fn sync_write_record_args(target: &str, state: &str) -> Vec<String> {
    let mut args = strings(&[target, "--file-size", "2m", "--block-size", "4k", "--write-percent", "100"]);
    args.extend(strings(&["--random", "--verify", "--sync-writes", "dsync"]));
    args.extend(strings(&["--verify-state", state, "--verify-state-every", "4"]));
    args
}

/// Two workers' verified 4 KiB random writes, a flush every 4, recorded in `state`; the
/// targets come before these flags.
fn two_worker_record_flags(state: &Path) -> Vec<String> {
    let mut args = strings(&["--file-size", "2m", "--block-size", "4k", "--threads", "2"]);
    args.extend(strings(&["--write-percent", "100", "--random", "--verify", "--fdatasync-every", "4"]));
    args.extend(["--verify-state".to_string(), path_str(state)]);
    args
}

#[test]
fn sync_writes_feed_the_record_no_write_durable_at_completion_is_lost_and_the_liar_is_caught() {
    let mut draw = Draw(0x1234_5678_9abc_def1);
    let mut cuts = 0;
    for engine in ["sync", "io_uring"] {
        if !engine_available(engine) {
            eprintln!("SKIP sync-write cuts with {engine}: the engine is not available here");
            continue;
        }
        for _ in 0..3 {
            let Some(rig) = Rig::mount(Mode::Honest, &[("t.dat", 2 << 20)]) else { return };
            let (t, s) = (path_str(&rig.dir.join("t.dat")), path_str(&rig.dir.join("t.state")));
            let mut args = sync_write_record_args(&t, &s);
            args.extend(strings(&["--engine", engine, "--queue-depth", "4"]));
            let mut child = spawn(&args);
            // Record updates are the only flushes: each after 4 writes.
            wait_for_flushes(&rig, &mut child, 8 + draw.next() % 32);
            kill_9(&mut child);
            child.wait().unwrap();
            rig.cut(|_, _| draw.next().is_multiple_of(2));
            let (code, doc, err) = verify_json(&rig.dir.join("t.dat"), &rig.dir.join("t.state"));
            assert_eq!(code, 0, "{engine}: {err}{doc}");
            assert_eq!(count(&doc, "lost_though_flushed") + count(&doc, "corrupt"), 0, "{engine}: {doc}");
            assert_eq!(doc["torn_broken_promises"].as_u64(), Some(0), "{doc}");
            // Every write the record names was durable at completion: it is there.
            assert!(count(&doc, "intact") >= 4, "{engine}: {doc}");
            cuts += 1;
        }
    }
    if cuts == 0 {
        return;
    }
    // The liar acknowledges O_DSYNC writes and keeps none: the record catches it.
    let outside = tempfile::tempdir().unwrap();
    let Some(rig) = Rig::mount(Mode::Lying, &[("t.dat", 2 << 20)]) else { return };
    let state = outside.path().join("t.state");
    let (t, s) = (path_str(&rig.dir.join("t.dat")), path_str(&state));
    let mut child = spawn(&sync_write_record_args(&t, &s));
    let deadline = Instant::now() + Duration::from_secs(30);
    while read(&state).ok().and_then(|r| r.slots[0].as_ref().map(|s| s.generation)).unwrap_or(0) < 10 {
        assert!(Instant::now() < deadline, "no record update in 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    kill_9(&mut child);
    child.wait().unwrap();
    rig.cut(|_, _| false);
    let (code, doc, err) = verify_json(&rig.dir.join("t.dat"), &state);
    assert_eq!(code, 3, "{err}{doc}");
    // Every block the record names was acknowledged durable, and none kept.
    let promised = read(&state).unwrap().slots[0].as_ref().unwrap().table.iter().filter(|&&d| d > 0).count();
    assert!(promised >= 30, "{promised}");
    assert_eq!(count(&doc, "lost_though_flushed"), promised as u64, "{doc}");
}

#[test]
fn several_targets_and_per_worker_files_are_each_recorded_and_checked_across_cuts() {
    let mut draw = Draw(0x0bad_cafe_dead_beef);
    // Two targets shared out between two workers; then a file per worker (made before the
    // run: a name the run creates is durable only once its directory is flushed).
    let cases: [(&[&str], &[&str]); 2] =
        [(&["a.dat", "b.dat"], &[]), (&["p.dat.0", "p.dat.1"], &["--file-distribution", "per-worker"])];
    for (files, extra) in cases {
        for cut in 0..2 {
            let made: Vec<(&str, usize)> = files.iter().map(|f| (*f, 2 << 20)).collect();
            let Some(rig) = Rig::mount(Mode::Honest, &made) else { return };
            let state = rig.dir.join("m.state");
            let mut args: Vec<String> = if extra.is_empty() {
                files.iter().map(|f| path_str(&rig.dir.join(f))).collect()
            } else {
                vec![path_str(&rig.dir.join("p.dat"))]
            };
            args.extend(two_worker_record_flags(&state));
            args.extend(strings(extra));
            let mut child = spawn(&args);
            wait_for_flushes(&rig, &mut child, 40 + draw.next() % 40);
            kill_9(&mut child);
            child.wait().unwrap();
            rig.cut(|_, _| draw.next().is_multiple_of(2));
            let out =
                iopulse().args(["verify", "--state", &path_str(&state), "--output-format", "json"]).output().unwrap();
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{files:?} cut {cut}: {err}{doc}");
            let targets = doc["targets"].as_array().unwrap();
            assert_eq!(targets.len(), 2, "{doc}");
            for (t, name) in targets.iter().zip(files) {
                assert!(t["path"].as_str().unwrap().ends_with(name), "{doc}");
                assert!(t["counts"]["intact"].as_u64().unwrap() > 0, "{files:?}: {doc}");
                assert_eq!(t["counts"]["lost_though_flushed"].as_u64(), Some(0), "{doc}");
            }
        }
    }
    // The liar: flushed blocks lost in each target.
    let outside = tempfile::tempdir().unwrap();
    let Some(rig) = Rig::mount(Mode::Lying, &[("a.dat", 2 << 20), ("b.dat", 2 << 20)]) else { return };
    let state = outside.path().join("m.state");
    let mut args = vec![path_str(&rig.dir.join("a.dat")), path_str(&rig.dir.join("b.dat"))];
    args.extend(two_worker_record_flags(&state));
    let mut child = spawn(&args);
    wait_for_flushes(&rig, &mut child, 80);
    kill_9(&mut child);
    child.wait().unwrap();
    rig.cut(|_, _| false);
    let out = iopulse().args(["verify", "--state", &path_str(&state), "--output-format", "json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(out.status.code(), Some(3), "{doc}");
    for t in doc["targets"].as_array().unwrap() {
        assert!(t["counts"]["lost_though_flushed"].as_u64().unwrap() > 0, "{doc}");
    }
}
