//! Trims in the I/O stream (`--trim-percent P`): on a file each trim punches a hole
//! (SEEK_HOLE finds it, the bytes read back as zeros, the size stays), on every engine; on
//! a loop device it is BLKDISCARD (the range reads back zeros, the backing file loses the
//! blocks); trims are their own operation in the JSON (ops, bytes, latency, histogram),
//! the text and the CSV, and a device that cannot discard is refused before anything runs.

use crate::common::root::{LoopOptions, loop_device, mount_ramfs, skip};
use crate::common::*;
use serde_json::Value;
use std::os::fd::AsRawFd;

/// A file of `blocks` 64 KiB blocks of 0xAB: every byte allocated.
fn full_file(dir: &std::path::Path, blocks: usize) -> std::path::PathBuf {
    let f = dir.join("t.dat");
    std::fs::write(&f, vec![0xABu8; blocks * 65536]).unwrap();
    f
}

/// Offsets of the holes of `path`, 64 KiB granules, found with SEEK_HOLE/SEEK_DATA.
fn hole_blocks(path: &std::path::Path, len: u64) -> Vec<u64> {
    let f = std::fs::File::open(path).unwrap();
    let fd = f.as_raw_fd();
    let mut holes = Vec::new();
    let mut at = 0i64;
    while (at as u64) < len {
        // SAFETY: lseek on a descriptor this function owns.
        let hole = unsafe { libc::lseek(fd, at, libc::SEEK_HOLE) };
        if hole < 0 || hole as u64 >= len {
            break;
        }
        // SAFETY: as above.
        let data = unsafe { libc::lseek(fd, hole, libc::SEEK_DATA) };
        let end = if data < 0 { len as i64 } else { data };
        holes.extend((hole as u64 / 65536)..(end as u64).div_ceil(65536));
        at = end;
    }
    holes
}

#[test]
fn a_trim_of_every_block_punches_the_whole_file_on_each_engine() {
    let cases: &[(&str, &[&str])] = &[
        ("sync", &[]),
        ("mmap", &[]),
        ("libaio", &["--queue-depth", "8"]),
        ("io_uring", &["--queue-depth", "8"]),
        ("io_uring", &["--queue-depth", "8", "--direct"]),
    ];
    for (engine, extra) in cases {
        if !engine_available(engine) {
            continue;
        }
        let what = format!("{engine} {extra:?}");
        let dir = temp_dir();
        let f = full_file(dir.path(), 64);
        let fs = path_str(&f);
        let mut args = vec![fs.as_str(), "--engine", engine, "--block-size", "64k", "--trim-percent", "100"];
        args.extend_from_slice(&["--duration", "0", "--cache", "keep"]);
        args.extend_from_slice(extra);
        let r = run_json(&args);
        assert_eq!(u64_at(&r, &["trim", "ops"]), 64, "{what}: every block trimmed once");
        assert_eq!(u64_at(&r, &["trim", "bytes"]), 64 * 65536, "{what}");
        assert_eq!(u64_at(&r, &["read", "ops"]) + u64_at(&r, &["write", "ops"]), 0, "{what}");
        assert_eq!(u64_at(&r, &["total", "ops"]), 0, "{what}: trims are not transfers");
        assert!(u64_at(&r, &["trim", "latency_ns", "max"]) > 0, "{what}");
        assert!(r["histograms"]["trim"].is_string(), "{what}: the trims' histogram");
        assert_eq!(u64_at(&r["workers"][0], &["trim", "ops"]), 64, "{what}");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 64 * 65536, "{what}: the size stays");
        assert_eq!(hole_blocks(&f, 64 * 65536), (0..64).collect::<Vec<_>>(), "{what}: all holes");
        assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0), "{what}: reads back zeros");
    }
}

#[test]
fn a_mix_of_writes_and_trims_adds_up_and_leaves_holes_where_it_trimmed() {
    let dir = temp_dir();
    let f = full_file(dir.path(), 256);
    let fs = path_str(&f);
    let csv = path_str(&dir.path().join("runs.csv"));
    let r = run_json(&[
        &fs,
        "--block-size",
        "64k",
        "--random",
        "--write-percent",
        "100",
        "--trim-percent",
        "25",
        "--ops",
        "400",
        "--seed",
        "3",
        "--csv",
        &csv,
    ]);
    let (writes, trims) = (u64_at(&r, &["write", "ops"]), u64_at(&r, &["trim", "ops"]));
    assert_eq!(writes + trims, 400, "every I/O is a write or a trim");
    assert!((70..=130).contains(&trims), "25 % of 400 are trims: {trims}");
    assert_eq!(r["spec"]["trim_percent"], 25);
    // Written blocks hold data again; the holes are blocks whose last I/O was a trim.
    let holes = hole_blocks(&f, 256 * 65536);
    assert!(!holes.is_empty() && holes.len() as u64 <= trims, "{} holes for {trims} trims", holes.len());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let at = |name: &str| row.get(header.iter().position(|h| h == name).unwrap()).unwrap().to_string();
    assert_eq!(at("trim_percent"), "25");
    assert_eq!(at("trim_ops"), trims.to_string());
    assert!(at("trim_p99_ns").parse::<u64>().unwrap() > 0);
    // The text report gives trims a line of their own. (The file is not iopulse's and its
    // trimmed blocks are holes: a run that also read them would be refused without
    // --keep-holes or --force.)
    let (code, _, stderr) = run(&[&fs, "--block-size", "64k", "--random", "--trim-percent", "50", "--ops", "100"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--keep-holes"), "{stderr}");
    let (code, stdout, _) =
        run(&[&fs, "--block-size", "64k", "--random", "--trim-percent", "50", "--ops", "100", "--keep-holes"]);
    assert_eq!(code, 0);
    let line = stdout.lines().find(|l| l.starts_with("trim")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("IOPS") && line.contains("ops"), "{line}");
}

#[test]
fn trims_merge_across_results() {
    let dir = temp_dir();
    let f = full_file(dir.path(), 64);
    let fs = path_str(&f);
    let mut files = Vec::new();
    for i in 0..2 {
        let json = path_str(&dir.path().join(format!("r{i}.json")));
        let (code, _, err) =
            run(&[&fs, "--block-size", "64k", "--trim-percent", "100", "--ops", "10", "--json", &json, "--quiet"]);
        assert_eq!(code, 0, "{err}");
        files.push(json);
    }
    let (code, out, err) =
        run(&["merge", &files[0], &files[1], "--allow-duplicates", "--force", "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(u64_at(&m, &["trim", "ops"]), 20, "the trims of both results");
}

#[test]
fn trim_on_a_loop_device_discards_what_it_covers() {
    let what = "trim on a loop device";
    // A discard limit a user set to 0 outlives the loop device's detaching and cannot be
    // undone: take another device if this one had it (the rejects stay attached meanwhile).
    let mut rejected = Vec::new();
    let dev = loop {
        let Some(dev) = loop_device(16 << 20, LoopOptions { fill: Some(0x5A), ..Default::default() }, what) else {
            return;
        };
        let name = std::path::Path::new(&dev.path).file_name().unwrap().to_string_lossy().into_owned();
        let max = std::fs::read_to_string(format!("/sys/block/{name}/queue/discard_max_bytes")).unwrap();
        if max.trim() != "0" {
            break dev;
        }
        rejected.push(dev);
        if rejected.len() == 4 {
            skip(what, "no loop device here can discard");
            return;
        }
    };
    for (engine, ops) in [("sync", "4"), ("io_uring", "8")] {
        let r = run_json(&[
            &dev.path,
            "--engine",
            engine,
            "--block-size",
            "1m",
            "--trim-percent",
            "100",
            "--ops",
            ops,
            "--force",
        ]);
        assert_eq!(u64_at(&r, &["trim", "ops"]), ops.parse::<u64>().unwrap(), "{engine}");
        let bytes = dev.contents();
        let trimmed = ops.parse::<usize>().unwrap() << 20;
        // A loop device discards by punching its backing file: the range reads zeros.
        assert!(bytes[..trimmed].iter().all(|&b| b == 0), "{engine}: the trimmed range reads zeros");
        assert!(bytes[trimmed..].iter().all(|&b| b == 0x5A), "{engine}: the rest is untouched");
        assert_eq!(hole_blocks(&dev.backing, 16 << 20).len(), trimmed / 65536, "{engine}: holes in the backing file");
    }
}

#[test]
fn a_device_that_cannot_discard_is_refused_before_anything_runs() {
    let what = "a device that cannot discard";
    // A loop device over a file on a ramfs (no fallocate) has no discard at all.
    let options = LoopOptions { fill: Some(0x5A), on_ramfs: true, ..Default::default() };
    let Some(dev) = loop_device(8 << 20, options, what) else {
        return;
    };
    let name = std::path::Path::new(&dev.path).file_name().unwrap().to_string_lossy().into_owned();
    let max = std::fs::read_to_string(format!("/sys/block/{name}/queue/discard_max_bytes")).unwrap();
    if max.trim() != "0" {
        skip(what, &format!("a loop device over a ramfs file can discard here ({})", max.trim()));
        return;
    }
    let (code, _, err) = run(&[&dev.path, "--trim-percent", "10", "--write-percent", "100", "--ops", "10", "--force"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--trim-percent 10") && err.contains("cannot discard"), "{err}");
    assert_eq!(err.trim().lines().filter(|l| l.contains("error")).count(), 1, "{err}");
    assert!(dev.contents().iter().all(|&b| b == 0x5A), "nothing was written");
}

#[test]
fn a_filesystem_that_cannot_punch_holes_fails_naming_the_trim_file_and_offset() {
    let what = "trim on a filesystem without hole punching";
    let Some(ramfs) = mount_ramfs(what) else { return };
    let f = path_str(&ramfs.path().join("t.dat"));
    let (code, _, err) = run(&[&f, "--file-size", "4m", "--trim-percent", "100", "--ops", "10"]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains(&format!("error: trim {f} at offset")) && err.contains("not supported"), "{err}");
}
