//! The device as witness (issue 16): the block device under a target counts the run's
//! I/O over the window, and the result gives the share of iopulse's reads and writes it
//! saw (`targets[].device_witness`, a `Device` line in the report). The loop-device tests
//! need root (each prints `SKIP: ...` and returns otherwise); the tmpfs, null engine and
//! merge tests run anywhere.

use crate::common::root::{self, LoopOptions};
use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A run with the text report on stdout and the JSON result in a file: (text, stderr, JSON),
/// the JSON checked against the schema.
fn run_text_and_json(dir: &Path, args: &[&str]) -> (String, String, Value) {
    crate::common::run_text_and_json(dir, args, "a result with device_witness")
}

fn witness(r: &Value) -> &Value {
    let w = &r["targets"][0]["device_witness"];
    assert!(w.is_object(), "no device_witness: {}", r["targets"][0]);
    w
}

fn share(w: &Value, field: &str) -> f64 {
    w[field].as_f64().unwrap_or_else(|| panic!("{field} is not a number: {w}"))
}

fn device_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("Device ")).collect()
}

fn kernel_name(dev_path: &str) -> String {
    let resolved = std::fs::canonicalize(dev_path).unwrap();
    resolved.file_name().unwrap().to_string_lossy().into_owned()
}

/// An ext4 filesystem on a loop device, mounted, with `file.dat` laid out in it
/// (32 MiB of real data, written by iopulse's own layout).
struct Fs {
    dev: root::LoopDev,
    mount: root::Mount,
}

/// A filesystem on a loop device that does direct I/O on its backing file, so that what
/// reaches the loop device reaches the disk below it (with direct I/O off, the backing
/// file's page cache serves it: truth_layers.rs).
fn filesystem_on_a_loop_device(what: &str) -> Option<Fs> {
    let dev = root::loop_device(128 << 20, LoopOptions { direct_io: true, ..Default::default() }, what)?;
    if !root::mkfs_ext4(&dev.path, what) {
        return None;
    }
    let mount = root::mount_device(&dev.path, what)?;
    let file = path_str(&mount.path().join("file.dat"));
    run_ok(&[&file, "--file-size", "32M", "--duration", "0", "--quiet"]);
    Some(Fs { dev, mount })
}

#[test]
fn the_device_sees_o_direct_reads_and_not_warm_buffered_ones() {
    let what = "device witness on a filesystem on a loop device";
    let Some(fs) = filesystem_on_a_loop_device(what) else { return };
    let dir = temp_dir();
    let file = path_str(&fs.mount.path().join("file.dat"));
    let loop_name = kernel_name(&fs.dev.path);

    // O_DIRECT random reads of the laid-out file: each one reaches the loop device.
    let (text, stderr, r) =
        run_text_and_json(dir.path(), &[&file, "--direct", "--random", "--duration", "1", "--engine", "sync"]);
    assert_eq!(r["targets"][0]["direct"]["effective"], true);
    let w = witness(&r);
    assert_eq!(w["device"], loop_name.as_str());
    let read_ops = u64_at(&r, &["read", "ops"]);
    assert!(read_ops > 100, "too few reads to judge: {read_ops}");
    assert_eq!(u64_at(w, &["iopulse", "read_bytes"]), u64_at(&r, &["read", "bytes"]));
    let seen = share(w, "read_bytes_share");
    assert!((0.9..=1.15).contains(&seen), "O_DIRECT reads: the device saw {seen} of the bytes read: {w}");
    // The device's own count, times the bytes of a 4 KiB read, is the share's numerator.
    assert_eq!(u64_at(w, &["delta", "read_bytes"]) as f64 / u64_at(&r, &["read", "bytes"]) as f64, seen);
    assert!(w["warning"].is_null(), "{w}");
    let lines = device_lines(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].contains(&format!("{loop_name} saw "))
            && lines[0].contains("of the bytes read")
            && lines[0].contains(&format!("(includes any other traffic on {loop_name})")),
        "{}",
        lines[0]
    );
    assert!(!lines[0].contains('⚠') && !stderr.contains("saw only"), "{text}\n{stderr}");

    // The same file read whole through the page cache, then a buffered run that keeps it:
    // the reads come from memory and the device says so, loudly.
    std::fs::read(&file).unwrap();
    let (text, stderr, r) =
        run_text_and_json(dir.path(), &[&file, "--random", "--duration", "0.5", "--engine", "sync", "--cache", "keep"]);
    let w = witness(&r);
    let seen = share(w, "read_bytes_share");
    assert!(seen < 0.05, "warm buffered reads: the device saw {seen} of the bytes read: {w}");
    let warning = w["warning"].as_str().unwrap_or_else(|| panic!("no warning: {w}"));
    assert!(
        warning.contains("not dropped") && warning.contains("page cache") && warning.contains(&loop_name),
        "{warning}"
    );
    assert!(stderr.contains(warning), "the warning is said on stderr too: {stderr}");
    assert!(r["warnings"].as_array().unwrap().iter().any(|x| x == warning), "{}", r["warnings"]);
    let lines = device_lines(&text);
    assert!(lines[0].starts_with(&format!("Device    ⚠ {loop_name} saw ")), "{text}");
    assert!(text.contains(&format!("⚠ {warning}")), "the report carries the warning: {text}");

    // Said to be cold (the cache is dropped, the default) and read once from end to end: the
    // device sees every byte (readahead never reads past the end of the file).
    let (_, _, r) = run_text_and_json(dir.path(), &[&file, "--duration", "0", "--engine", "sync"]);
    let w = witness(&r);
    let seen = share(w, "read_bytes_share");
    assert!((0.9..=1.3).contains(&seen), "cold buffered reads reach the device: {w}");
    assert!(w["warning"].is_null(), "{w}");
}

#[test]
fn o_direct_writes_to_a_block_device_are_seen_by_it() {
    let what = "device witness of writes to a loop device";
    let Some(dev) = root::loop_device(64 << 20, LoopOptions { fill: Some(0x5a), ..Default::default() }, what) else {
        return;
    };
    let dir = temp_dir();
    let (text, _, r) = run_text_and_json(
        dir.path(),
        &[&dev.path, "--direct", "--random", "--write-percent", "100", "--duration", "0.5", "--force"],
    );
    assert_eq!(r["targets"][0]["kind"], "block_device");
    let w = witness(&r);
    assert_eq!(w["device"], kernel_name(&dev.path).as_str());
    assert!(u64_at(&r, &["write", "ops"]) > 100);
    let seen = share(w, "write_bytes_share");
    assert!((0.95..=1.05).contains(&seen), "O_DIRECT writes: the device saw {seen} of the bytes written: {w}");
    assert!(w["read_bytes_share"].is_null(), "no reads, no read share: {w}");
    // The loop device reads and writes its backing file: the device of that file's
    // filesystem is below it, and its direct I/O being off is said.
    let stacked = w["stacked"].as_array().unwrap();
    assert_eq!(stacked.len(), 1, "{w}");
    assert_eq!(stacked[0]["below"], kernel_name(&dev.path).as_str(), "{w}");
    assert!(w["cached_below"].as_str().is_some_and(|c| c.contains("direct I/O is off")), "{w}");
    assert!(w["warning"].is_null(), "writes only: nothing to judge below: {w}");
    let lines = device_lines(&text);
    assert!(lines.len() == 1 && lines[0].contains("of the bytes written") && !lines[0].contains("read"), "{text}");
}

#[test]
fn a_dm_linear_device_shows_the_loop_device_below_it() {
    let what = "device witness of dm-linear over a loop device";
    let Some(dev) = root::loop_device(32 << 20, LoopOptions { fill: Some(0x11), ..Default::default() }, what) else {
        return;
    };
    let sectors = (32u64 << 20) / 512;
    let Some(dm) = root::dm_device(&format!("0 {sectors} linear {} 0", dev.path), what) else { return };
    let (dm_name, loop_name) = (kernel_name(&dm.path), kernel_name(&dev.path));
    let dir = temp_dir();
    let (text, _, r) =
        run_text_and_json(dir.path(), &[&dm.path, "--direct", "--random", "--duration", "0.5", "--engine", "sync"]);
    let w = witness(&r);
    assert_eq!(w["device"], dm_name.as_str());
    assert!((0.9..=1.15).contains(&share(w, "read_bytes_share")), "{w}");
    let stacked = w["stacked"].as_array().unwrap();
    assert_eq!(stacked.len(), 1, "{w}");
    assert_eq!(stacked[0]["name"], loop_name.as_str());
    assert_eq!(stacked[0]["below"], dm_name.as_str());
    // The loop device below counted the same reads as the dm device above it.
    let (above, below) = (u64_at(w, &["delta", "read_bytes"]), u64_at(&stacked[0], &["delta", "read_bytes"]));
    assert!(below >= above * 9 / 10 && below <= above * 11 / 10, "dm {above} bytes, loop {below} bytes");
    assert!(text.lines().any(|l| l.trim_start().starts_with(&format!("below {dm_name}: {loop_name} read "))), "{text}");
}

#[test]
fn a_memory_filesystem_or_the_null_engine_has_no_witness() {
    let dir = temp_dir();
    // The null engine touches nothing: no device, no line.
    let target = path_str(&dir.path().join("null.dat"));
    let (text, _, r) = run_text_and_json(dir.path(), &[&target, "--engine", "null", "--duration", "0.2", "--direct"]);
    assert!(r["targets"][0]["device_witness"].is_null(), "{}", r["targets"][0]);
    assert!(device_lines(&text).is_empty(), "{text}");
    // tmpfs keeps its files in memory: no block device under it.
    let shm = Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.split_whitespace().nth(2) == Some("tmpfs"));
    if !on_tmpfs {
        eprintln!("SKIP: /dev/shm is not a tmpfs here");
        return;
    }
    let shm_dir = tempfile::Builder::new().prefix("wt-dev-witness-").tempdir_in(shm).unwrap();
    let target = path_str(&shm_dir.path().join("t.dat"));
    let (text, _, r) = run_text_and_json(dir.path(), &[&target, "--file-size", "4M", "--duration", "0.2"]);
    assert!(r["targets"][0]["device_witness"].is_null(), "{}", r["targets"][0]);
    assert!(device_lines(&text).is_empty(), "{text}");
}

/// /tmp's filesystem is on a block device here (ext4 on virtio): its results carry a witness.
#[test]
fn merge_keeps_witnesses_of_one_host_and_drops_those_of_several() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("m.dat"));
    let mut files = Vec::new();
    for name in ["a", "b"] {
        let json = path_str(&dir.path().join(format!("{name}.json")));
        run_ok(&[&target, "--file-size", "4M", "--direct", "--duration", "0.2", "--json", &json, "--quiet"]);
        files.push(json);
    }
    if read_json(&files[0])["targets"][0]["device_witness"].is_null() {
        eprintln!("SKIP: the temporary directory is not on a block device here");
        return;
    }
    let merged = |files: &[String]| -> Value {
        let (code, stdout, stderr) = run(&["merge", &files[0], &files[1], "--output-format", "json"]);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    let m = merged(&files);
    assert_valid(&schema_validator(), &m, "a merged result");
    let targets = m["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    assert!(targets.iter().all(|t| t["device_witness"].is_object()), "one host: kept: {targets:?}");
    assert!(m["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("each run's own")), "{m}");

    // The second result from another host: a device name means nothing across hosts.
    let mut other = read_json(&files[1]);
    other["environment"]["hostname"] = Value::from("elsewhere");
    let other_file = path_str(&dir.path().join("other.json"));
    std::fs::write(&other_file, serde_json::to_string(&other).unwrap()).unwrap();
    let m = merged(&[files[0].clone(), other_file]);
    assert_valid(&schema_validator(), &m, "a merged result of two hosts");
    assert!(m["targets"].as_array().unwrap().iter().all(|t| t["device_witness"].is_null()), "{}", m["targets"]);
    assert!(
        m["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("device witnesses dropped")),
        "{}",
        m["notes"]
    );
}

/// `--buffer-pages`: with 1 MiB O_DIRECT reads, buffers on huge pages are one device
/// request each; buffers on base pages (fio's default) are split wherever their 256 pages
/// of 4 KiB are not physically contiguous enough for the device's segment limit (254 on
/// this VM's virtio disk, 128 of at most 64 KiB on a loop device), as the kernel happened
/// to place the pages. The spec records the choice, and memory.huge_page_bytes what the
/// kernel gave (none on base pages). On a loop device of its own the test counts only its
/// own requests: the whole disk's counters also count the other tests' (a run of 1,024
/// I/Os on the disk once saw 1,348 requests, the fewest of five runs).
#[test]
fn buffers_on_huge_pages_are_one_request_and_on_base_pages_none_are_huge() {
    let what = "buffer pages against device requests";
    let Some(dev) = super::common::root::loop_device(64 << 20, Default::default(), what) else { return };
    let run = |pages: &str| {
        run_json(&[
            &dev.path,
            "--block-size",
            "1m",
            "--direct",
            "--queue-depth",
            "4",
            "--ops",
            "1024",
            "--buffer-pages",
            pages,
        ])
    };
    let (huge, base) = (run("huge"), run("base"));
    assert_eq!(
        (huge["spec"]["buffer_pages"].as_str(), base["spec"]["buffer_pages"].as_str()),
        (Some("huge"), Some("base"))
    );
    assert_eq!(base["memory"]["huge_page_bytes"], 0, "base pages asked for: none huge");
    let huge_pages = huge["memory"]["huge_page_bytes"].as_u64().unwrap_or(0);
    let device_reads = |r: &Value| r["targets"][0]["device_witness"]["delta"]["read_ios"].as_u64();
    let (Some(on_huge), Some(on_base)) = (device_reads(&huge), device_reads(&base)) else {
        root::skip(what, "the loop device has no counters here");
        return;
    };
    // The witness names the device as the kernel does (`loop3`); its limits are in sysfs,
    // read only.
    let name = huge["targets"][0]["device_witness"]["device"].as_str().unwrap_or("").to_string();
    assert_eq!(format!("/dev/{name}"), dev.path, "the witness is the loop device itself");
    let limit = |key: &str| -> u64 {
        std::fs::read_to_string(format!("/sys/block/{name}/queue/{key}"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    };
    let (segments, segment_bytes) = (limit("max_segments"), limit("max_segment_size"));
    let ios = base["read"]["ops"].as_u64().unwrap();
    assert_eq!(ios, 1024);
    if huge_pages == 0 || segments == 0 || segments * segment_bytes < 1 << 20 || segments >= 256 {
        root::skip(
            what,
            &format!("no huge pages ({huge_pages} B), or {segments} segments of {segment_bytes} B per request"),
        );
        return;
    }
    assert_eq!(on_huge, ios, "huge pages: one device read per I/O");
    assert!(on_base >= ios, "base pages: {on_base} device reads for {ios} I/Os");
}
