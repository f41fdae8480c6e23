//! Holes and unwritten extents are not the device: reads of them are answered with
//! zeros from memory. A run that reads measures how much of its region holds written
//! data, lays the rest out when the file is iopulse's (or with --force), and otherwise
//! says loudly, in the report and the JSON, how much of what it read never reached
//! the device. Checked on the bytes on disk (st_blocks, SEEK_DATA), the JSON fields,
//! the warning lines and the exit codes.

use crate::common::*;
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

const SIZE: u64 = 8 << 20;

/// A file of `len` bytes that is one hole (truncate -s).
fn sparse_file(path: &Path, len: u64) {
    File::create(path).unwrap().set_len(len).unwrap();
}

/// A file of `len` bytes preallocated and never written (fallocate -l): one unwritten
/// extent; false when the filesystem cannot preallocate.
fn fallocated_file(path: &Path, len: u64) -> bool {
    let f = File::create(path).unwrap();
    match nix::fcntl::fallocate(&f, nix::fcntl::FallocateFlags::empty(), 0, len as i64) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("SKIP: fallocate on {}: {e}", path.display());
            false
        }
    }
}

/// Bytes of `[0, len)` that lseek(SEEK_DATA/SEEK_HOLE) reports as data.
fn data_bytes(path: &Path) -> u64 {
    use nix::unistd::{Whence, lseek};
    let f = File::open(path).unwrap();
    let len = f.metadata().unwrap().len();
    let (mut at, mut data) = (0u64, 0u64);
    while at < len {
        let start = match lseek(&f, at as i64, Whence::SeekData) {
            Ok(o) => o as u64,
            Err(nix::errno::Errno::ENXIO) => break,
            Err(e) => panic!("SEEK_DATA on {}: {e}", path.display()),
        };
        let hole = lseek(&f, start as i64, Whence::SeekHole).unwrap() as u64;
        data += hole.min(len) - start;
        at = hole;
    }
    data
}

/// Bytes allocated on disk for `path` (st_blocks).
fn disk_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// Punches `[offset, offset + len)` out of `path`; false when the filesystem cannot.
fn punch_hole(path: &Path, offset: u64, len: u64) -> bool {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    let flags = nix::fcntl::FallocateFlags::FALLOC_FL_PUNCH_HOLE | nix::fcntl::FallocateFlags::FALLOC_FL_KEEP_SIZE;
    nix::fcntl::fallocate(&f, flags, offset as i64, len as i64).is_ok()
}

/// Runs a read pass over every block once with `extra` flags; returns (exit code, text
/// report, stderr, JSON result).
fn read_pass(target: &str, extra: &[&str]) -> (i32, String, String, Value) {
    let out = temp_dir();
    let json = path_str(&out.path().join("r.json"));
    let mut args = vec![target, "--duration", "0", "--random", "--json", &json];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&args);
    let r = if code == 0 { read_json(&json) } else { Value::Null };
    (code, stdout, stderr, r)
}

fn allocation(r: &Value) -> &Value {
    let a = &r["targets"][0]["allocation"];
    assert!(a.is_object(), "no targets[0].allocation: {}", r["targets"][0]);
    a
}

/// FNV-1a of a file's bytes, to show that a refused run left it unchanged.
fn checksum(path: &Path) -> u64 {
    std::fs::read(path)
        .unwrap()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// A read of someone else's sparse or preallocated file is refused before anything is
/// touched, naming both ways out; the file is byte for byte and extent for extent as it was.
fn assert_refused(path: &Path, extra: &[&str], what: &str) {
    let f = path_str(path);
    let (sum, disk, data, mtime) =
        (checksum(path), disk_bytes(path), data_bytes(path), std::fs::metadata(path).unwrap().mtime_nsec());
    let (code, text, stderr, _) = read_pass(&f, extra);
    assert_eq!(code, 2, "{what}: refused up front: {text}\n{stderr}");
    assert!(
        stderr.contains(&format!("TARGET {f}: 100% of the read region (8 MiB of 8 MiB) is holes or unwritten extents")),
        "{what}: {stderr}"
    );
    assert!(stderr.contains("--force") && stderr.contains("--keep-holes"), "{what}: both ways out named: {stderr}");
    assert!(text.is_empty(), "{what}: no report: {text}");
    assert_eq!(
        (checksum(path), disk_bytes(path), data_bytes(path), std::fs::metadata(path).unwrap().mtime_nsec()),
        (sum, disk, data, mtime),
        "{what}: the file is unchanged"
    );
}

#[test]
fn a_sparse_foreign_file_is_refused_with_the_disk_unchanged() {
    let dir = temp_dir();
    let path = dir.path().join("s.dat");
    sparse_file(&path, SIZE);
    assert_refused(&path, &[], "buffered");
    assert_refused(&path, &["--direct", "--engine", "io_uring"], "io_uring O_DIRECT");
    // A run that also writes reads the holes too: refused all the same.
    assert_refused(&path, &["--write-percent", "50", "--ops", "16"], "reads and writes");
    assert_eq!((disk_bytes(&path), data_bytes(&path)), (0, 0));
}

#[test]
fn a_fallocated_foreign_file_is_refused_with_the_disk_unchanged() {
    let dir = temp_dir();
    let path = dir.path().join("f.dat");
    if !fallocated_file(&path, SIZE) {
        return;
    }
    let disk_before = disk_bytes(&path);
    assert_refused(&path, &["--direct", "--engine", "libaio"], "libaio O_DIRECT");
    assert_refused(&path, &[], "buffered");
    // Preallocated and still never written: the same blocks, all zeros.
    assert_eq!(disk_bytes(&path), disk_before);
    assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn keep_holes_reads_a_foreign_file_as_it_is_and_marks_every_figure() {
    let dir = temp_dir();
    let path = dir.path().join("s.dat");
    sparse_file(&path, SIZE);
    let f = path_str(&path);
    let out = temp_dir();
    let csv = path_str(&out.path().join("r.csv"));
    let (code, text, stderr, r) = read_pass(&f, &["--keep-holes", "--csv", &csv]);
    assert_eq!(code, 0, "{stderr}");
    let line = format!("⚠ 100% of the read region of {f} is holes or unwritten extents (8 MiB of 8 MiB)");
    assert!(text.contains(&line), "the report says it: {text}");
    assert!(text.contains("⚠ HOLES READ"), "{text}");
    let read_line = text.lines().find(|l| l.starts_with("read ")).expect("a read line");
    assert!(read_line.ends_with("⚠ includes holes (not the device)"), "the figure is marked: {read_line}");
    assert!(stderr.contains("--keep-holes"), "{stderr}");
    let a = allocation(&r);
    assert_eq!((a["region_bytes"].as_u64(), a["allocated_bytes"].as_u64()), (Some(SIZE), Some(0)));
    assert_eq!((a["hole_bytes"].as_u64(), a["filled_bytes"].as_u64()), (Some(SIZE), Some(0)));
    assert!(a["not_laid_out"].as_str().unwrap().contains("--keep-holes"), "{a}");
    let note = r["holes_read"].as_str().expect("holes_read marks the JSON");
    assert!(note.contains("--keep-holes") && note.contains("8 MiB of holes"), "{note}");
    assert_valid(&schema_validator(), &r, "a result with holes_read");
    // CSV: the holes_read column says it.
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "holes_read").expect("a holes_read column");
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(row[col], "true", "{table}");
    // fio JSON: the job's description and iopulse.holes_read.
    let (code, stdout, stderr) =
        run(&[&f, "--duration", "0", "--random", "--keep-holes", "--output-format", "fio-json"]);
    assert_eq!(code, 0, "{stderr}");
    let fj: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(fj["jobs"][0]["desc"].as_str(), Some(note), "{}", fj["jobs"][0]);
    assert_eq!(fj["iopulse"]["holes_read"].as_str(), Some(note));
    // Nothing was written into the file.
    assert_eq!((disk_bytes(&path), data_bytes(&path)), (0, 0));
}

#[test]
fn with_force_holes_and_unwritten_extents_are_laid_out_onto_the_disk() {
    let dir = temp_dir();
    let sparse = dir.path().join("s.dat");
    sparse_file(&sparse, SIZE);
    let fallocated = dir.path().join("f.dat");
    let mut targets = vec![sparse];
    if fallocated_file(&fallocated, SIZE) {
        targets.push(fallocated);
    }
    for path in targets {
        let f = path_str(&path);
        let (code, text, stderr, r) = read_pass(&f, &["--force"]);
        assert_eq!(code, 0, "{f}: {stderr}");
        assert!(!text.contains("holes or unwritten extents"), "{f}: {text}");
        assert!(stderr.contains(&format!("laid out 8 MiB of holes and unwritten extents in {f}")), "{stderr}");
        let a = allocation(&r);
        assert_eq!(a["filled_bytes"], SIZE, "{a}");
        assert_eq!(a["allocated_fraction"].as_f64(), Some(1.0), "{a}");
        assert_eq!(a["allocated_bytes"], SIZE);
        assert!(a["not_laid_out"].is_null(), "{a}");
        assert_eq!(r["targets"][0]["laid_out_bytes"], SIZE);
        // On the disk: every byte is data now.
        assert_eq!(data_bytes(&path), SIZE, "{f}");
        assert!(disk_bytes(&path) >= SIZE, "{f}: {} bytes on disk", disk_bytes(&path));
        let mut block = vec![0u8; 4096];
        File::open(&path).unwrap().read_exact_at(&mut block, SIZE / 2).unwrap();
        assert!(block.iter().any(|&b| b != 0), "{f}: benchmark data, not zeros");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), SIZE, "{f}: same size");
    }
}

/// Lays out `path` as iopulse's own file (a read run), then punches a 2 MiB hole at
/// 1 MiB. False (with a SKIP message) where the filesystem keeps no user xattrs or
/// cannot punch holes.
fn own_file_with_a_hole(path: &Path) -> bool {
    let (code, _, stderr, r) = read_pass(&path_str(path), &["--file-size", "8M"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(allocation(&r)["allocated_fraction"].as_f64(), Some(1.0), "a fresh layout is all data");
    if xattr::get(path, "user.iopulse.layout").ok().flatten().is_none() {
        eprintln!("SKIP: this filesystem keeps no user xattrs: no file is iopulse's own");
        return false;
    }
    if !punch_hole(path, 1 << 20, 2 << 20) {
        eprintln!("SKIP: this filesystem cannot punch holes");
        return false;
    }
    assert_eq!(data_bytes(path), SIZE - (2 << 20));
    true
}

#[test]
fn a_hole_in_iopulses_own_file_is_laid_out_again_without_force() {
    let dir = temp_dir();
    let path = dir.path().join("own.dat");
    let f = path_str(&path);
    if !own_file_with_a_hole(&path) {
        return;
    }
    let (code, text, stderr, r) = read_pass(&f, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!text.contains("holes or unwritten extents"), "{text}");
    let a = allocation(&r);
    assert_eq!(a["filled_bytes"], 2 << 20, "{a}");
    assert_eq!(a["allocated_fraction"].as_f64(), Some(1.0), "{a}");
    assert_eq!(data_bytes(&path), SIZE);
}

#[test]
fn keep_holes_reads_iopulses_own_file_as_it_is_with_a_warning() {
    let dir = temp_dir();
    let path = dir.path().join("kept.dat");
    let f = path_str(&path);
    if !own_file_with_a_hole(&path) {
        return;
    }
    let (code, text, stderr, r) = read_pass(&f, &["--keep-holes"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("holes or unwritten extents"), "{text}");
    assert!(stderr.contains("--keep-holes"), "{stderr}");
    let a = allocation(&r);
    assert_eq!(a["filled_bytes"], 0, "{a}");
    assert_eq!(a["hole_bytes"], 2 << 20, "{a}");
    assert_eq!(data_bytes(&path), SIZE - (2 << 20), "nothing was written into the hole");
}

#[test]
fn a_written_file_is_wholly_allocated_and_nothing_is_said() {
    let dir = temp_dir();
    let path = zero_file(dir.path(), "w.dat", SIZE);
    let f = path_str(&path);
    let (code, text, stderr, r) = read_pass(&f, &[]);
    assert_eq!(code, 0, "{stderr}");
    let a = allocation(&r);
    assert_eq!(a["allocated_fraction"].as_f64(), Some(1.0), "{a}");
    assert_eq!(a["allocated_bytes"], SIZE);
    assert_eq!((a["hole_bytes"].as_u64(), a["filled_bytes"].as_u64()), (Some(0), Some(0)));
    assert!(a["not_laid_out"].is_null());
    assert!(!text.contains("holes") && !stderr.contains("holes"), "{text}\n{stderr}");
}

#[test]
fn a_run_that_only_writes_records_the_holes_and_lays_nothing_out() {
    let dir = temp_dir();
    let path = dir.path().join("s.dat");
    sparse_file(&path, 1 << 20);
    let f = path_str(&path);
    let (code, text, stderr, r) = read_pass(&f, &["--write-percent", "100"]);
    assert_eq!(code, 0, "{stderr}");
    let a = allocation(&r);
    assert_eq!(a["allocated_fraction"].as_f64(), Some(0.0), "measured before the window: {a}");
    assert_eq!(a["filled_bytes"], 0);
    assert!(a["not_laid_out"].is_null(), "{a}");
    assert!(!text.contains("holes") && !stderr.contains("holes"), "{text}\n{stderr}");
}

#[test]
fn a_verifying_run_reads_holes_as_they_are() {
    let dir = temp_dir();
    let path = dir.path().join("v.dat");
    let f = path_str(&path);
    let (code, _, stderr) = run(&[&f, "--file-size", "1M", "--duration", "0", "--write-percent", "100", "--verify"]);
    assert_eq!(code, 0, "{stderr}");
    if !punch_hole(&path, 0, 4096) {
        eprintln!("SKIP: this filesystem cannot punch holes");
        return;
    }
    let out = temp_dir();
    let json = path_str(&out.path().join("r.json"));
    let (code, text, stderr) = run(&[&f, "--duration", "0", "--verify", "--json", &json]);
    assert_eq!(code, 3, "the hole is a never-written block: {stderr}");
    let r = read_json(&json);
    let a = allocation(&r);
    assert_eq!(a["filled_bytes"], 0, "{a}");
    assert_eq!(a["hole_bytes"], 4096, "{a}");
    assert!(a["not_laid_out"].as_str().unwrap().contains("--verify"), "{a}");
    // One block of 4 KiB in 1 MiB.
    assert!(text.contains(&format!("⚠ 0.4% of the read region of {f} is holes or unwritten extents")), "{text}");
    assert_eq!(u64_at(&r, &["verification", "failures_by_kind", "never_written_zeros"]), 1);
    assert_eq!(data_bytes(&path), (1 << 20) - 4096, "not laid out");
}

#[test]
fn holes_too_large_for_the_free_space_are_refused_before_anything_is_written() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("laying out holes beyond the free space") else { return };
    let (code, _, stderr) = run(&[&f, "--duration", "0", "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&format!("TARGET {f}: laying out its holes and unwritten extents")), "{stderr}");
    assert!(stderr.contains("free space"), "{stderr}");
    assert_eq!(data_bytes(Path::new(&f)), 0, "nothing written");
}

#[test]
fn on_tmpfs_holes_are_found_and_unwritten_extents_are_unknown() {
    let Some(fs) = root::mount_tmpfs("32m", "", "holes on tmpfs (no FIEMAP)") else { return };
    let sparse = fs.path().join("s.dat");
    sparse_file(&sparse, SIZE);
    let f = path_str(&sparse);
    let (code, _, stderr, _) = read_pass(&f, &[]);
    assert_eq!(code, 2, "holes found by lseek are refused too: {stderr}");
    assert!(stderr.contains("--keep-holes") && stderr.contains("--force"), "{stderr}");
    let (code, text, stderr, r) = read_pass(&f, &["--keep-holes"]);
    assert_eq!(code, 0, "{stderr}");
    let a = allocation(&r);
    assert_eq!(a["method"], "seek_hole", "{a}");
    assert!(a["unwritten_bytes"].is_null() && a["unknown_reason"].as_str().unwrap().contains("FIEMAP"), "{a}");
    assert_eq!(a["hole_bytes"], SIZE);
    // No data at all: nothing is written, whatever the extents.
    assert_eq!(a["allocated_fraction"].as_f64(), Some(0.0), "{a}");
    assert!(text.contains(&format!("⚠ 100% of the read region of {f}")), "{text}");

    // Written data: whether some of it is unwritten extents cannot be told: unknown, no warning.
    let written = zero_file(fs.path(), "w.dat", SIZE);
    let (code, text, stderr, r) = read_pass(&path_str(&written), &[]);
    assert_eq!(code, 0, "{stderr}");
    let a = allocation(&r);
    assert!(a["allocated_fraction"].is_null() && a["allocated_bytes"].is_null(), "never guessed: {a}");
    assert_eq!(a["hole_bytes"], 0);
    assert!(!text.contains("holes or unwritten"), "{text}");

    // With --force the holes are laid out.
    let (code, _, stderr, r) = read_pass(&f, &["--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(allocation(&r)["filled_bytes"], SIZE);
    assert_eq!(data_bytes(&sparse), SIZE);
    assert_valid(&schema_validator(), &r, "a tmpfs result");
}
