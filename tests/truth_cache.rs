//! The page cache is not the device: a buffered read of a cached page is a copy from
//! memory. Every run measures the share of each target's region in the page cache when
//! its window opens and closes, drops it before the window by default (as fio does), and
//! says both in the report and the JSON. Checked on the JSON fields, the `Cache` line,
//! the warnings, and the schema. No timing is asserted.

mod common;

use common::*;
use serde_json::Value;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;

const SIZE: &str = "16M";
const SIZE_BYTES: usize = 16 << 20;

fn page_cache(r: &Value) -> &Value {
    let pc = &r["targets"][0]["page_cache"];
    assert!(pc.is_object(), "no targets[0].page_cache: {r}");
    pc
}

fn fraction(pc: &Value, field: &str) -> f64 {
    pc[field].as_f64().unwrap_or_else(|| panic!("{field} is not a number: {pc}"))
}

/// A run with the text report on stdout and the JSON result in a file: (text, stderr, JSON).
fn run_text_and_json(dir: &Path, args: &[&str]) -> (String, String, Value) {
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let json_s = path_str(&json);
    let mut all = args.to_vec();
    all.extend_from_slice(&["--json", &json_s]);
    let (stdout, stderr) = run_ok(&all);
    let r = read_json(&json);
    assert_valid(&schema_validator(), &r, "a result with page_cache");
    (stdout, stderr, r)
}

fn cache_line(text: &str) -> &str {
    text.lines().find(|l| l.starts_with("Cache ")).unwrap_or_else(|| panic!("no Cache line in:\n{text}"))
}

/// Reads the whole file through the page cache.
fn read_all(path: &Path) {
    let mut buf = Vec::new();
    File::open(path).unwrap().read_to_end(&mut buf).unwrap();
}

#[test]
fn buffered_read_right_after_layout_starts_cold_by_default() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let (text, stderr, r) = run_text_and_json(dir.path(), &[&target, "--file-size", SIZE, "--duration", "0"]);
    assert_eq!(r["spec"]["invalidate"], true);
    let pc = page_cache(&r);
    assert_eq!(pc["region_bytes"], SIZE_BYTES as u64);
    assert!(matches!(pc["method"].as_str(), Some("cachestat" | "mincore")), "{pc}");
    assert_eq!(pc["invalidated"], true, "{pc}");
    assert_eq!(pc["direct"], false);
    assert!(pc["not_invalidated"].is_null() && pc["unknown_reason"].is_null(), "{pc}");
    assert!(fraction(pc, "after_invalidate_resident_fraction") <= 0.01, "the drop worked: {pc}");
    assert!(fraction(pc, "start_resident_fraction") <= 0.05, "cold at start: {pc}");
    // Reading every block once brings the region into the cache.
    assert!(fraction(pc, "end_resident_fraction") >= 0.9, "warm at the end: {pc}");
    let line = cache_line(&text);
    assert!(line.starts_with("Cache     invalidated before the window ("), "{line}");
    assert!(line.contains("resident at start") && line.contains("at end)"), "{line}");
    assert!(!line.contains('⚠'), "{line}");
    assert!(!stderr.contains("page cache"), "nothing to warn about: {stderr}");
}

#[test]
fn no_invalidate_keeps_the_layouts_pages_and_warns() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let (text, stderr, r) =
        run_text_and_json(dir.path(), &[&target, "--file-size", SIZE, "--duration", "0", "--no-invalidate"]);
    assert_eq!(r["spec"]["invalidate"], false);
    let pc = page_cache(&r);
    assert_eq!(pc["invalidated"], false, "{pc}");
    assert_eq!(pc["not_invalidated"], "--no-invalidate");
    assert!(pc["after_invalidate_resident_fraction"].is_null(), "{pc}");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "layout just wrote every page: {pc}");
    let line = cache_line(&text);
    assert!(
        line.contains("⚠ buffered reads: ")
            && line.contains("of the region in the page cache at start (not invalidated: --no-invalidate)")
            && line.contains("memory speed, not the device"),
        "{line}"
    );
    assert!(stderr.contains("is in the page cache and --no-invalidate keeps it there"), "{stderr}");
}

#[test]
fn an_existing_warm_file_is_dropped_before_the_window() {
    let dir = temp_dir();
    let path = zero_file(dir.path(), "warm.dat", SIZE_BYTES as u64);
    // Written through the page cache, then read back: warm (and clean once synced).
    read_all(&path);
    let target = path_str(&path);
    let warm = run_json(&[&target, "--duration", "0", "--no-invalidate", "--write-percent", "0"]);
    assert!(fraction(page_cache(&warm), "start_resident_fraction") >= 0.9, "{warm}");
    read_all(&path);
    let cold = run_json(&[&target, "--duration", "0.05"]);
    let pc = page_cache(&cold);
    assert_eq!(pc["invalidated"], true);
    assert!(fraction(pc, "start_resident_fraction") <= 0.05, "{pc}");
}

#[test]
fn a_drop_that_leaves_mapped_pages_says_so() {
    let dir = temp_dir();
    let path = zero_file(dir.path(), "mapped.dat", SIZE_BYTES as u64);
    let file = File::open(&path).unwrap();
    // SAFETY: a fresh read-only shared mapping of the whole file, read below while it
    // lives and unmapped at the end of the test; nothing else refers to it.
    let addr =
        unsafe { libc::mmap(std::ptr::null_mut(), SIZE_BYTES, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
    assert_ne!(addr, libc::MAP_FAILED);
    let mut sum = 0u64;
    for page in (0..SIZE_BYTES).step_by(4096) {
        // SAFETY: `page` is inside the mapping of SIZE_BYTES bytes (the file's length).
        sum += u64::from(unsafe { std::ptr::read_volatile((addr as *const u8).add(page)) });
    }
    assert_eq!(sum, 0);
    let dir_path = dir.path().to_path_buf();
    let (text, stderr, r) = run_text_and_json(&dir_path, &[&path_str(&path), "--duration", "0.05"]);
    let pc = page_cache(&r);
    assert_eq!(pc["invalidated"], true, "{pc}");
    let left = fraction(pc, "after_invalidate_resident_fraction");
    assert!(left > 0.5, "mapped pages cannot be dropped: {pc}");
    let line = cache_line(&text);
    assert!(line.contains("⚠ invalidated before the window, but") && line.contains("stayed resident"), "{line}");
    assert!(stderr.contains("left") && stderr.contains("resident"), "{stderr}");
    // SAFETY: unmaps the mapping made above; nothing reads it any more.
    unsafe { libc::munmap(addr, SIZE_BYTES) };
}

#[test]
fn o_direct_runs_are_measured_and_say_the_cache_is_not_read() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let (text, _, r) =
        run_text_and_json(dir.path(), &[&target, "--file-size", SIZE, "--duration", "0", "--direct", "--random"]);
    if r["direct"]["effective"] != true {
        eprintln!("SKIP: O_DIRECT refused here: {}", r["direct"]);
        return;
    }
    let pc = page_cache(&r);
    assert_eq!(pc["direct"], true);
    assert_eq!(pc["invalidated"], true, "{pc}");
    assert!(pc["start_resident_fraction"].is_number() && pc["end_resident_fraction"].is_number(), "{pc}");
    let line = cache_line(&text);
    assert!(line.contains("O_DIRECT: I/Os bypass the page cache") && line.contains("invalidated"), "{line}");
}

#[test]
fn a_write_only_run_is_measured_and_never_warned_about_reads() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let (text, stderr, r) = run_text_and_json(
        dir.path(),
        &[&target, "--file-size", SIZE, "--duration", "0", "--write-percent", "100", "--no-invalidate"],
    );
    let pc = page_cache(&r);
    assert!(pc["start_resident_fraction"].is_number(), "{pc}");
    let line = cache_line(&text);
    assert!(line.starts_with("Cache     not invalidated (--no-invalidate): "), "{line}");
    assert!(!stderr.contains("page cache"), "{stderr}");
}

#[test]
fn unknown_residency_is_null_and_said_never_guessed() {
    // Take a real result and make its residency unknown, as on a kernel with neither
    // cachestat nor a mappable target: the report must say unknown, not a number.
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let mut r = run_json(&[&target, "--file-size", "1M", "--duration", "0"]);
    let pc = &mut r["targets"][0]["page_cache"];
    pc["method"] = Value::Null;
    pc["start_resident_fraction"] = Value::Null;
    pc["end_resident_fraction"] = Value::Null;
    pc["after_invalidate_resident_fraction"] = Value::Null;
    pc["unknown_reason"] = "cachestat: Function not implemented; mincore: mmap: No such device".into();
    assert_valid(&schema_validator(), &r, "a result with unknown residency");
    let input = dir.path().join("unknown.json");
    std::fs::write(&input, serde_json::to_string(&r).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["merge", &path_str(&input)]);
    if code != 0 {
        eprintln!("SKIP: merge of one result refused here: {stderr}");
        return;
    }
    let line = cache_line(&stdout);
    assert!(line.contains("page-cache residency unknown (cachestat: Function not implemented"), "{line}");
    assert!(!line.contains('%'), "no figure is shown for an unknown residency: {line}");
}

#[test]
fn a_memory_filesystem_is_not_invalidated_and_says_why() {
    let Some(fs) = common::root::mount_tmpfs("32m", "", "page cache on tmpfs") else { return };
    let target = path_str(&fs.path().join("t.dat"));
    let r = run_json(&[&target, "--file-size", "8M", "--duration", "0"]);
    let pc = page_cache(&r);
    assert_eq!(pc["invalidated"], false, "{pc}");
    assert!(pc["not_invalidated"].as_str().is_some_and(|w| w.contains("memory filesystem")), "{pc}");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "tmpfs data lives in the page cache: {pc}");
}

#[test]
fn a_block_device_is_measured_through_its_own_page_cache() {
    let what = "page cache of a block device";
    let Some(dev) =
        common::root::loop_device(8 << 20, common::root::LoopOptions { fill: Some(0x5a), ..Default::default() }, what)
    else {
        return;
    };
    // Warm the device's page cache with a buffered read of all of it, on a descriptor kept
    // open: the kernel drops a block device's page cache when its last opener closes it.
    let mut holder = File::open(&dev.path).unwrap();
    let mut buf = Vec::new();
    holder.read_to_end(&mut buf).unwrap();
    let warm = run_json(&[&dev.path, "--duration", "0", "--no-invalidate"]);
    let pc = page_cache(&warm);
    assert_eq!(pc["region_bytes"], 8u64 << 20);
    assert!(pc["method"].is_string(), "{pc}");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "{pc}");
    let cold = run_json(&[&dev.path, "--duration", "0"]);
    let pc = page_cache(&cold);
    assert_eq!(pc["invalidated"], true, "{pc}");
    assert!(fraction(pc, "start_resident_fraction") <= 0.05, "{pc}");
    assert!(fraction(pc, "end_resident_fraction") >= 0.9, "{pc}");
    drop(holder);
}
