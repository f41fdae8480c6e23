//! The page cache is not the device: a buffered read of a cached page is a copy from
//! memory. Every run measures the share of each target's region in the page cache when
//! its window opens and closes, drops it before the window by default (as fio does), and
//! says both in the report and the JSON. `--cache warm` reads the region into the cache
//! first and `--cache keep` leaves it. Checked on the JSON fields, the `Cache` line, the
//! warnings, the schema, the CSV columns, and against residency probed by the test itself
//! (mincore, as vmtouch does). No timing is asserted.

use crate::common::*;
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

fn run_text_and_json(dir: &Path, args: &[&str]) -> (String, String, Value) {
    crate::common::run_text_and_json(dir, args, "a result with page_cache")
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
    assert!(line.starts_with("Cache     drop: invalidated before the window ("), "{line}");
    assert!(line.contains("resident at start") && line.contains("at end)"), "{line}");
    assert!(!line.contains('⚠'), "{line}");
    assert!(!stderr.contains("page cache"), "nothing to warn about: {stderr}");
}

#[test]
fn cache_keep_keeps_the_layouts_pages_and_warns() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let (text, stderr, r) =
        run_text_and_json(dir.path(), &[&target, "--file-size", SIZE, "--duration", "0", "--cache", "keep"]);
    assert_eq!(r["spec"]["invalidate"], false);
    assert_eq!(r["spec"]["cache"], "keep");
    let pc = page_cache(&r);
    assert_eq!(pc["mode"], "keep");
    assert_eq!(pc["invalidated"], false, "{pc}");
    assert_eq!(pc["not_invalidated"], "--cache keep");
    assert!(pc["after_invalidate_resident_fraction"].is_null(), "{pc}");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "layout just wrote every page: {pc}");
    let line = cache_line(&text);
    assert!(
        line.contains("⚠ buffered reads: ")
            && line.starts_with("Cache     keep: ")
            && line.contains("of the region in the page cache at start (not invalidated: --cache keep)")
            && line.contains("memory speed, not the device"),
        "{line}"
    );
    assert!(stderr.contains("is in the page cache and --cache keep keeps it there"), "{stderr}");
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
        &[&target, "--file-size", SIZE, "--duration", "0", "--write-percent", "100", "--cache", "keep"],
    );
    let pc = page_cache(&r);
    assert!(pc["start_resident_fraction"].is_number(), "{pc}");
    let line = cache_line(&text);
    assert!(line.starts_with("Cache     keep: not invalidated (--cache keep): "), "{line}");
    // Nothing about reads (the buffered writes the device did not see are another matter).
    assert!(!stderr.contains("buffered reads") && !stderr.contains("bytes read"), "{stderr}");
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
    let Some(fs) = crate::common::root::mount_tmpfs("32m", "", "page cache on tmpfs") else { return };
    let target = path_str(&fs.path().join("t.dat"));
    let r = run_json(&[&target, "--file-size", "8M", "--duration", "0"]);
    let pc = page_cache(&r);
    assert_eq!(pc["invalidated"], false, "{pc}");
    assert!(pc["not_invalidated"].as_str().is_some_and(|w| w.contains("memory filesystem")), "{pc}");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "tmpfs data lives in the page cache: {pc}");
    // With O_DIRECT, the Cache line does not say the I/Os bypass a cache that holds all the data.
    let (text, _) = run_ok(&[&target, "--direct", "--duration", "0"]);
    let line = cache_line(&text);
    assert!(line.contains("O_DIRECT on a memory filesystem: the data lives in the page cache"), "{line}");
    assert!(!line.contains("bypass"), "{line}");
}

#[test]
fn a_block_device_is_measured_through_its_own_page_cache() {
    let what = "page cache of a block device";
    let Some(dev) = crate::common::root::loop_device(
        8 << 20,
        crate::common::root::LoopOptions { fill: Some(0x5a), ..Default::default() },
        what,
    ) else {
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

/// The share of `path`'s pages in the page cache, probed by the test itself: mincore(2)
/// over a read-only mapping (as vmtouch does; the tests run as the file's owner).
fn resident_fraction(path: &Path) -> f64 {
    let file = File::open(path).unwrap();
    let len = file.metadata().unwrap().len() as usize;
    // SAFETY: a fresh read-only shared mapping of the whole file, never read through,
    // unmapped below; nothing else refers to it.
    let addr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
    assert_ne!(addr, libc::MAP_FAILED);
    let mut vec = vec![0u8; len.div_ceil(4096)];
    // SAFETY: `addr` maps `len` bytes; `vec` has one byte per 4 KiB page of them.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    // SAFETY: unmaps the mapping made above.
    unsafe { libc::munmap(addr, len) };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    vec.iter().filter(|b| **b & 1 != 0).count() as f64 / vec.len() as f64
}

/// Writes the file's dirty pages and drops its cached pages, as `--cache drop` would, but
/// by the test's own hand.
fn drop_cache(path: &Path) {
    let file = File::open(path).unwrap();
    file.sync_all().unwrap();
    // SAFETY: posix_fadvise on a descriptor open for the call; it touches no memory of ours.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0);
}

/// One random read: too little to bring the region into the cache, so what the test
/// probes after the run is the state the window started from.
const ONE_READ: [&str; 3] = ["--random", "--ops", "1"];

#[test]
fn cache_warm_on_a_dropped_file_starts_resident() {
    let dir = temp_dir();
    let path = zero_file(dir.path(), "warm.dat", SIZE_BYTES as u64);
    drop_cache(&path);
    let before = resident_fraction(&path);
    assert!(before < 0.1, "dropped by the test: {before}");
    let target = path_str(&path);
    let mut args = vec![target.as_str(), "--cache", "warm"];
    args.extend_from_slice(&ONE_READ);
    let (text, stderr, r) = run_text_and_json(dir.path(), &args);
    assert_eq!(r["spec"]["cache"], "warm");
    let pc = page_cache(&r);
    assert_eq!(pc["mode"], "warm");
    assert_eq!(pc["invalidated"], false, "{pc}");
    assert!(fraction(pc, "after_warm_resident_fraction") >= 0.9, "{pc}");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "{pc}");
    assert!(pc["warm_shortfall"].is_null(), "{pc}");
    let probed = resident_fraction(&path);
    assert!(probed >= 0.9, "the test's own probe after one read: {probed}");
    let line = cache_line(&text);
    assert!(line.starts_with("Cache     warm: read into the page cache before the window ("), "{line}");
    assert!(!line.contains('⚠'), "{line}");
    assert!(!stderr.contains("--cache warm"), "nothing to warn about: {stderr}");
}

#[test]
fn cache_drop_on_a_warm_file_starts_near_zero() {
    let dir = temp_dir();
    let path = zero_file(dir.path(), "cold.dat", SIZE_BYTES as u64);
    read_all(&path);
    assert!(resident_fraction(&path) >= 0.9, "warmed by the test");
    let target = path_str(&path);
    let mut args = vec![target.as_str(), "--cache", "drop"];
    args.extend_from_slice(&ONE_READ);
    let (text, _, r) = run_text_and_json(dir.path(), &args);
    let pc = page_cache(&r);
    assert_eq!(pc["mode"], "drop");
    assert!(fraction(pc, "start_resident_fraction") <= 0.05, "{pc}");
    let probed = resident_fraction(&path);
    assert!(probed <= 0.1, "the test's own probe after one read: {probed}");
    assert!(cache_line(&text).starts_with("Cache     drop: invalidated before the window"), "{text}");
}

#[test]
fn cache_keep_after_a_warm_read_stays_warm() {
    let dir = temp_dir();
    let path = zero_file(dir.path(), "kept.dat", SIZE_BYTES as u64);
    drop_cache(&path);
    read_all(&path);
    assert!(resident_fraction(&path) >= 0.9, "warmed by the test");
    let target = path_str(&path);
    let mut args = vec![target.as_str(), "--cache", "keep"];
    args.extend_from_slice(&ONE_READ);
    let (text, _, r) = run_text_and_json(dir.path(), &args);
    let pc = page_cache(&r);
    assert_eq!(pc["mode"], "keep");
    assert!(fraction(pc, "start_resident_fraction") >= 0.9, "{pc}");
    assert!(resident_fraction(&path) >= 0.9, "the test's own probe");
    assert!(cache_line(&text).starts_with("Cache     keep: ⚠ buffered reads: "), "{text}");
}

#[test]
fn cache_warm_that_cannot_fit_warns() {
    let what = "--cache warm larger than a memory cgroup";
    let Some(group) = crate::common::root::MemoryCgroup::new(48 << 20, what) else { return };
    let dir = temp_dir();
    let region_bytes = 160u64 << 20;
    let path = zero_file(dir.path(), "big.dat", region_bytes);
    drop_cache(&path);
    let json = dir.path().join("r.json");
    let mut cmd = iopulse();
    cmd.args([&path_str(&path), "--cache", "warm", "--random", "--ops", "1", "--json", &path_str(&json)]);
    group.confine(&mut cmd);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    assert_valid(&schema_validator(), &r, "a warm result that did not fit");
    let pc = page_cache(&r);
    assert!(fraction(pc, "after_warm_resident_fraction") < 0.9, "the cgroup holds at most 48 MiB of 160: {pc}");
    let shortfall = pc["warm_shortfall"].as_str().unwrap_or_else(|| panic!("no warm_shortfall: {pc}"));
    assert!(shortfall.contains("memory cgroup") && shortfall.contains("stayed resident"), "{shortfall}");
    assert!(resident_fraction(&path) < 0.9, "the test's own probe");
    assert!(stderr.contains("--cache warm") && stderr.contains("cannot stay whole in the page cache"), "{stderr}");
    assert!(stderr.contains("stayed resident after warming"), "{stderr}");
    let line = cache_line(&stdout);
    assert!(line.starts_with("Cache     warm: ⚠ ") && line.contains("does not fit"), "{line}");
}

#[test]
fn csv_carries_the_cache_mode_holes_and_residency() {
    let dir = temp_dir();
    let csv = dir.path().join("runs.csv");
    // A sparse file read as it is: every byte a hole, nothing laid out.
    let sparse = dir.path().join("sparse.dat");
    File::create(&sparse).unwrap().set_len(4 << 20).unwrap();
    let (sparse_s, csv_s) = (path_str(&sparse), path_str(&csv));
    let r1 = run_json(&[&sparse_s, "--keep-holes", "--cache", "keep", "--ops", "1", "--csv", &csv_s]);
    // A new file laid out, then warmed.
    let laid = path_str(&dir.path().join("laid.dat"));
    let r2 = run_json(&[&laid, "--file-size", "4M", "--cache", "warm", "--ops", "1", "--csv", &csv_s]);
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |row: &csv::StringRecord, name: &str| -> String {
        let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}: {header:?}"));
        row[i].to_string()
    };
    let rows: Vec<_> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    // Added at the end of the columns of their time (after the queue depth's); later
    // columns (the flushes') come after them.
    let after: Vec<_> = header.iter().skip_while(|h| *h != "achieved_queue_depth_total").skip(1).take(5).collect();
    assert_eq!(
        after,
        [
            "cache",
            "unallocated_fraction",
            "laid_out_bytes",
            "cache_start_resident_fraction",
            "cache_end_resident_fraction"
        ],
        "the cache columns were added at the end"
    );
    for (row, r, mode) in [(&rows[0], &r1, "keep"), (&rows[1], &r2, "warm")] {
        let t = &r["targets"][0];
        assert_eq!(col(row, "cache"), mode);
        assert_eq!(col(row, "laid_out_bytes"), t["laid_out_bytes"].to_string());
        let a = &t["allocation"];
        let unallocated = (a["hole_bytes"].as_u64().unwrap() + a["unwritten_bytes"].as_u64().unwrap_or(0)) as f64
            / a["region_bytes"].as_f64().unwrap();
        assert_eq!(col(row, "unallocated_fraction"), format!("{unallocated:.4}"));
        let pc = &t["page_cache"];
        assert_eq!(
            col(row, "cache_start_resident_fraction"),
            format!("{:.4}", fraction(pc, "start_resident_fraction"))
        );
        assert_eq!(col(row, "cache_end_resident_fraction"), format!("{:.4}", fraction(pc, "end_resident_fraction")));
    }
    assert_eq!(col(&rows[0], "unallocated_fraction"), "1.0000", "a sparse file is all holes");
    assert_eq!(col(&rows[0], "laid_out_bytes"), "0");
    assert_eq!(col(&rows[1], "unallocated_fraction"), "0.0000");
    assert_eq!(col(&rows[1], "laid_out_bytes"), (4u64 << 20).to_string());
    assert_eq!(col(&rows[1], "cache_start_resident_fraction"), "1.0000", "warmed");
}

/// fio's fadvise_hint: a buffered run advises the kernel of its access order on the
/// descriptor it reads (random: POSIX_FADV_RANDOM, sequential: POSIX_FADV_SEQUENTIAL);
/// `--fadvise-hint off` and `--direct` give no advice. Seen by strace.
#[test]
fn buffered_runs_advise_the_kernel_of_their_access_order() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed (apt-get install strace): the advice cannot be seen");
        return;
    }
    let dir = temp_dir();
    let f = path_str(&dir.path().join("fa.dat"));
    let advice = |extra: &[&str]| -> (String, Value) {
        let out = dir.path().join("strace.txt");
        let json = dir.path().join("r.json");
        let mut cmd = std::process::Command::new("strace");
        cmd.args(["-f", "-qq", "-e", "trace=fadvise64", "-o"]).arg(&out).arg(env!("CARGO_BIN_EXE_iopulse"));
        cmd.args([&f, "--file-size", "1M", "--ops", "64", "--quiet", "--json", &path_str(&json)]).args(extra);
        let (code, _, stderr) = run_command(&mut cmd);
        assert_eq!(code, 0, "{extra:?}: {stderr}");
        let calls: Vec<String> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .filter(|l| l.contains("POSIX_FADV_RANDOM") || l.contains("POSIX_FADV_SEQUENTIAL"))
            .map(String::from)
            .collect();
        (calls.join("\n"), read_json(&json))
    };
    let (random, r) = advice(&["--random"]);
    assert_eq!(r["spec"]["fadvise_hint"], "on");
    assert_eq!(random.lines().count(), 1, "{random}");
    assert!(random.contains(", 0, 0, POSIX_FADV_RANDOM) = 0"), "{random}");
    let (sequential, _) = advice(&[]);
    assert_eq!(sequential.lines().count(), 1, "{sequential}");
    assert!(sequential.contains(", 0, 0, POSIX_FADV_SEQUENTIAL) = 0"), "{sequential}");
    let (off, r) = advice(&["--random", "--fadvise-hint", "off"]);
    assert_eq!(r["spec"]["fadvise_hint"], "off");
    assert!(off.is_empty(), "--fadvise-hint off advised: {off}");
    let (direct, r) = advice(&["--random", "--direct"]);
    if r["direct"]["effective"] == true {
        assert!(direct.is_empty(), "O_DIRECT advised: {direct}");
    }
}
