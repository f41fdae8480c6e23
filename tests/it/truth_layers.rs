//! Every layer below the file (issue 34): the device witness looks through loop devices
//! (the backing file's page cache), btrfs and overlayfs; memory-backed devices are named;
//! an O_DIRECT run is checked against the page cache at its end (ext4 `data=journal`,
//! btrfs compression); buffered writes the device never saw, and a device busy with other
//! traffic, are said. Each builds its stack from loop devices over tmpfs (root; each prints
//! `SKIP: ...` and returns otherwise) so that no other traffic reaches the devices judged.

use crate::common::root::{self, Mount};
use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run_text_and_json(dir: &Path, args: &[&str]) -> (String, String, Value) {
    crate::common::run_text_and_json(dir, args, "a result through the layers")
}

fn witness(r: &Value) -> &Value {
    let w = &r["targets"][0]["device_witness"];
    assert!(w.is_object(), "no device_witness: {}", r["targets"][0]);
    w
}

fn warnings(r: &Value) -> Vec<String> {
    r["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

/// The I/O counters of block device `name` (reads completed, sectors read, writes
/// completed, sectors written), from /sys/block/NAME/stat.
fn stat(name: &str) -> [u64; 4] {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text.split_whitespace().map(|v| v.parse().unwrap()).collect();
    [f[0], f[2], f[4], f[6]]
}

/// `losetup -f --show FILE`, detached on Drop.
struct Loop {
    path: String,
}

impl Loop {
    fn over(file: &Path, what: &str) -> Option<Loop> {
        let out = Command::new("losetup").args(["-f", "--show"]).arg(file).output().ok()?;
        if !out.status.success() {
            root::skip(what, &format!("losetup: {}", String::from_utf8_lossy(&out.stderr).trim()));
            return None;
        }
        Some(Loop { path: String::from_utf8_lossy(&out.stdout).trim().to_string() })
    }

    fn name(&self) -> String {
        self.path.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.path]).status();
    }
}

/// A loop device over a file of `size_mb` MiB on its own tmpfs: storage in RAM that no
/// other process touches. Fields drop in order: the loop device, then the tmpfs.
struct RamLoop {
    dev: Loop,
    _tmpfs: Mount,
}

fn ram_loop(size_mb: u64, what: &str) -> Option<RamLoop> {
    let tmpfs = root::mount_tmpfs(&format!("{}m", size_mb + 8), "", what)?;
    let img = tmpfs.path().join("lower.img");
    std::fs::File::create(&img).unwrap().set_len(size_mb << 20).unwrap();
    Some(RamLoop { dev: Loop::over(&img, what)?, _tmpfs: tmpfs })
}

/// ext4 on `dev`, mounted with `options` ("" for the defaults).
fn ext4(dev: &str, options: &str, what: &str) -> Option<Mount> {
    if !root::mkfs_ext4(dev, what) {
        return None;
    }
    let dir = temp_dir();
    let mut cmd = Command::new("mount");
    if !options.is_empty() {
        cmd.args(["-o", options]);
    }
    let ok = cmd.arg(dev).arg(dir.path()).status().is_ok_and(|s| s.success());
    if !ok {
        root::skip(what, &format!("cannot mount ext4 -o {options} on {dev}"));
        return None;
    }
    Some(Mount { dir })
}

#[test]
fn a_loop_device_over_a_cached_file_is_seen_through_to_the_device_below() {
    let what = "a loop device over a file on a loop device over tmpfs";
    let Some(lower) = ram_loop(96, what) else { return };
    let Some(fs) = ext4(&lower.dev.path, "", what) else { return };
    let img = fs.path().join("upper.img");
    std::fs::write(&img, vec![0x5a; 16 << 20]).unwrap();
    let Some(upper) = Loop::over(&img, what) else { return };
    let (lower_name, upper_name) = (lower.dev.name(), upper.name());
    let dio = std::fs::read_to_string(format!("/sys/block/{upper_name}/loop/dio")).unwrap_or_default();
    assert_eq!(dio.trim(), "0", "losetup without --direct-io: the loop device reads through the page cache");
    // The backing file is in the page cache (it was just written): reads of the upper loop
    // device never reach the lower one.
    std::fs::read(&img).unwrap();
    let before = stat(&lower_name);
    let dir = temp_dir();
    let (text, stderr, r) = run_text_and_json(dir.path(), &[&upper.path, "--direct", "--random", "--duration", "1"]);
    let after = stat(&lower_name);
    let w = witness(&r);
    assert_eq!(w["device"], upper_name.as_str());
    let read_bytes = u64_at(&r, &["read", "bytes"]);
    assert!(read_bytes > 0);
    // The lower device's own counters, as the witness took them.
    let stacked = w["stacked"].as_array().unwrap();
    let below = stacked.iter().find(|s| s["name"] == lower_name.as_str()).unwrap_or_else(|| panic!("{w}"));
    assert_eq!(below["below"], upper_name.as_str());
    let lower_read_bytes = u64_at(below, &["delta", "read_bytes"]);
    assert!(lower_read_bytes <= (after[1] - before[1]) * 512, "inside the window: {below}");
    assert!(lower_read_bytes * 2 < read_bytes, "the page cache served the reads: {lower_read_bytes} of {read_bytes}");
    let cached = w["cached_below"].as_str().unwrap_or_else(|| panic!("cached_below: {w}"));
    assert!(cached.contains(&format!("{upper_name}'s direct I/O is off")) && cached.contains("upper.img"), "{cached}");
    assert!(text.contains("I/O mode: ⚠ O_DIRECT (page cache bypassed at the loop device, cached below it"), "{text}");
    assert!(!text.contains("✓ O_DIRECT"), "{text}");
    assert!(r["direct"]["cached_below"].as_str().is_some(), "{}", r["direct"]);
    let served = warnings(&r).into_iter().find(|w| w.contains("backing file's page cache served")).unwrap();
    assert!(stderr.contains(&served), "{stderr}");
    // The lower loop device is over tmpfs: memory, named.
    assert!(w["memory"].as_str().is_some_and(|m| m.contains("tmpfs")), "{w}");
    assert!(text.contains("⚠ memory, not storage"), "{text}");
}

#[test]
fn buffered_writes_the_device_did_not_see_are_said_loudly() {
    let what = "buffered writes and the device";
    let Some(lower) = ram_loop(96, what) else { return };
    let Some(fs) = ext4(&lower.dev.path, "", what) else { return };
    let f = path_str(&fs.path().join("w.dat"));
    let dir = temp_dir();
    let (text, stderr, r) = run_text_and_json(
        dir.path(),
        &[&f, "--file-size", "32M", "--write-percent", "100", "--random", "--duration", "1"],
    );
    let w = witness(&r);
    let seen = w["write_bytes_share"].as_f64().unwrap();
    assert!(seen < 0.5, "the writes wait in the page cache: {w}");
    let warning = warnings(&r).into_iter().find(|w| w.starts_with("buffered writes:")).unwrap_or_else(|| {
        panic!("no buffered-write warning: {}", r["warnings"]);
    });
    assert!(warning.contains("--direct") && warning.contains("--fsync-every"), "the fixes: {warning}");
    assert!(stderr.contains(&warning), "{stderr}");
    assert!(text.contains(&format!("⚠ {warning}")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("Device    ⚠ ")), "{text}");

    // Flushed after every write: the device saw them, nothing to say.
    let (_, _, r) = run_text_and_json(
        dir.path(),
        &[&f, "--write-percent", "100", "--random", "--ops", "300", "--fsync-every", "1"],
    );
    let w = witness(&r);
    assert!(w["write_bytes_share"].as_f64().unwrap() >= 0.5, "{w}");
    assert!(!warnings(&r).iter().any(|w| w.starts_with("buffered writes:")), "{}", r["warnings"]);
}

#[test]
fn a_device_busy_with_other_traffic_is_shown_as_bytes_not_a_share() {
    let what = "other traffic on the device";
    let Some(ram) = ram_loop(64, what) else { return };
    // Someone else reads the whole device over and over, with O_DIRECT, meanwhile.
    let mut reader = Command::new("sh")
        .arg("-c")
        .arg(format!("while :; do dd if={} of=/dev/null bs=1M iflag=direct status=none; done", ram.dev.path))
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let dir = temp_dir();
    let run =
        run_text_and_json(dir.path(), &[&ram.dev.path, "--direct", "--random", "--rate-iops", "20", "--duration", "1"]);
    let _ = Command::new("kill").arg(reader.id().to_string()).status();
    let _ = reader.wait();
    let (text, _, r) = run;
    let w = witness(&r);
    assert_eq!(w["read_other_traffic"], true, "{w}");
    let own = u64_at(&r, &["read", "bytes"]);
    let device = u64_at(w, &["delta", "read_bytes"]);
    assert!(device > 5 * own, "{device} against {own}");
    let line = text.lines().find(|l| l.starts_with("Device ")).unwrap();
    let name = ram.dev.name();
    assert!(line.contains(&format!("other traffic on {name}: it read ")), "{line}");
    assert!(!line.contains("% of the bytes read"), "no share above 100 %: {line}");
}

#[test]
fn ext4_data_journal_is_named_as_served_through_the_page_cache() {
    let what = "ext4 data=journal";
    let Some(lower) = ram_loop(128, what) else { return };
    let Some(fs) = ext4(&lower.dev.path, "data=journal", what) else { return };
    let f = path_str(&fs.path().join("j.dat"));
    let dir = temp_dir();
    let (text, stderr, r) =
        run_text_and_json(dir.path(), &[&f, "--file-size", "32M", "--direct", "--random", "--duration", "1"]);
    assert_eq!(r["direct"]["effective"], true, "O_DIRECT was accepted");
    let served = r["direct"]["served_through_cache"].as_str().unwrap_or_else(|| panic!("{}", r["direct"]));
    assert!(served.contains("data=journal"), "{served}");
    assert!(
        text.contains("I/O mode: ⚠ O_DIRECT accepted, but the filesystem served it through the page cache"),
        "{text}"
    );
    assert!(!text.contains("✓ O_DIRECT"), "{text}");
    assert!(stderr.contains("data=journal"), "{stderr}");
    // The page cache held part of the region at the end, as the JSON says.
    let end = r["targets"][0]["page_cache"]["end_resident_fraction"].as_f64().unwrap();
    assert!(end > 0.05, "{end}");
    // And the storage below is RAM.
    assert!(witness(&r)["memory"].as_str().is_some_and(|m| m.contains("tmpfs")), "{}", witness(&r));
}

#[test]
fn btrfs_compression_is_seen_through_to_its_device_and_named_at_the_end() {
    let what = "btrfs compress-force=zstd";
    let Some(fs) = root::btrfs(1 << 30, "compress-force=zstd", what) else { return };
    let f = path_str(&fs.mount.path().join("t.dat"));
    let dir = temp_dir();
    // Zeros compress: every extent is compressed, and btrfs reads those through the page cache.
    let (text, _, r) = run_text_and_json(
        dir.path(),
        &[&f, "--file-size", "64M", "--write-pattern", "zeros", "--direct", "--random", "--duration", "1"],
    );
    let w = witness(&r);
    assert!(w["device"].as_str().unwrap().starts_with("loop"), "btrfs's device: {w}");
    assert!(w["via"].as_str().is_some_and(|v| v.starts_with("btrfs ")), "{w}");
    assert!(w["delta"].is_object(), "the device's counters: {w}");
    assert!(text.lines().any(|l| l.starts_with("Device ") && l.contains("(btrfs ")), "{text}");
    let served = r["direct"]["served_through_cache"].as_str().unwrap_or_else(|| panic!("{}", r["direct"]));
    assert!(served.contains("btrfs") && served.contains("compressed"), "{served}");
    assert!(text.contains("served it through the page cache"), "{text}");
    assert_eq!(r["targets"][0]["filesystem"], "btrfs", "the mount is found by path");
}

#[test]
fn zram_is_named_as_memory_and_its_empty_slots_counted() {
    let what = "a zram device";
    if !root::is_root() {
        return root::skip(what, "needs root for a zram device");
    }
    let Ok(n) = std::fs::read_to_string("/sys/class/zram-control/hot_add") else {
        return root::skip(what, "no zram in this kernel (/sys/class/zram-control)");
    };
    let n = n.trim().to_string();
    let name = format!("zram{n}");
    struct Remove(String);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.0);
        }
    }
    let _remove = Remove(n);
    std::fs::write(format!("/sys/block/{name}/disksize"), "64M").unwrap();
    let dev = format!("/dev/{name}");
    if !Path::new(&dev).exists() {
        return root::skip(what, &format!("{dev} has no device node (no udev)"));
    }
    let dir = temp_dir();
    let (text, stderr, r) = run_text_and_json(dir.path(), &[&dev, "--direct", "--random", "--duration", "0.5"]);
    let memory = witness(&r)["memory"].as_str().unwrap_or_else(|| panic!("{}", witness(&r))).to_string();
    assert!(memory.contains("compressed RAM") && memory.contains("holds 0 B of data in 64 MiB"), "{memory}");
    assert!(text.contains("I/O mode: ⚠ O_DIRECT on a memory device"), "{text}");
    // Never written by this run: the fix is named.
    assert!(stderr.contains("never written or trimmed") && stderr.contains("--write-percent 100"), "{stderr}");
}

#[test]
fn overlayfs_is_seen_through_to_the_device_of_its_upper_layer() {
    let what = "overlayfs over ext4 on a loop device";
    let Some(lower) = ram_loop(96, what) else { return };
    let Some(fs) = ext4(&lower.dev.path, "", what) else { return };
    for d in ["lower", "upper", "work"] {
        std::fs::create_dir(fs.path().join(d)).unwrap();
    }
    let merged = temp_dir();
    let p = |d: &str| path_str(&fs.path().join(d));
    let options = format!("lowerdir={},upperdir={},workdir={}", p("lower"), p("upper"), p("work"));
    let mounted = Command::new("mount")
        .args(["-t", "overlay", "overlay", "-o", &options])
        .arg(merged.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        return root::skip(what, "cannot mount an overlay (no overlayfs in this kernel?)");
    }
    let overlay = Mount { dir: merged };
    let f = path_str(&overlay.path().join("o.dat"));
    let dir = temp_dir();
    let (text, _, r) =
        run_text_and_json(dir.path(), &[&f, "--file-size", "16M", "--direct", "--random", "--duration", "0.5"]);
    assert_eq!(r["targets"][0]["filesystem"], "overlay");
    let w = witness(&r);
    assert_eq!(w["device"], lower.dev.name().as_str(), "{w}");
    let via = w["via"].as_str().unwrap_or_else(|| panic!("{w}"));
    assert!(via.starts_with("overlayfs upper layer ") && via.ends_with("/upper"), "{via}");
    let seen = w["read_bytes_share"].as_f64().unwrap();
    assert!((0.9..=1.2).contains(&seen), "O_DIRECT reads reach the upper layer's device: {w}");
    // The loop device is over tmpfs: memory, and the I/O mode line says so.
    assert!(text.contains("I/O mode: ⚠ O_DIRECT on a memory device"), "{text}");
    drop(overlay);
}

#[test]
fn inside_a_memory_cgroup_the_memory_line_gives_the_room_under_its_limit() {
    let what = "the Memory line in a 64 MiB memory cgroup";
    let Some(group) = root::MemoryCgroup::new(64 << 20, what) else { return };
    let dir = temp_dir();
    let json = path_str(&dir.path().join("r.json"));
    let mut cmd = iopulse();
    cmd.args(["--engine", "null", "--ops", "100", "--json", &json]);
    group.confine(&mut cmd);
    let (code, text, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let line = text.lines().find(|l| l.starts_with("Memory ")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("available under memory cgroup /iopulse-test-"), "{line}");
    assert!(line.contains("(limit 64 MiB)"), "{line}");
    let r = read_json(&json);
    let cg = &r["memory"]["cgroup"];
    assert_eq!(cg["max_bytes"], 64u64 << 20, "{cg}");
    assert!(cg["room_bytes"].as_u64().unwrap() <= 64 << 20, "{cg}");
}

#[test]
fn the_header_names_trims_and_mmap_flushes_are_msync() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let (text, _) = run_ok(&[&f, "--file-size", "4M", "--write-percent", "100", "--trim-percent", "50", "--ops", "64"]);
    let header = text.lines().next().unwrap();
    assert!(header.contains("50% trim, the rest writes"), "{header}");
    let (text, _) = run_ok(&[&f, "--trim-percent", "20", "--write-percent", "50", "--ops", "64"]);
    let header = text.lines().next().unwrap();
    assert!(header.contains("20% trim, the rest 50% read / 50% write"), "{header}");

    // mmap's flushes are msync over the mapping, and say so.
    let (text, _) = run_ok(&[&f, "--engine", "mmap", "--write-percent", "100", "--ops", "40", "--fsync-every", "10"]);
    let flush = text.lines().find(|l| l.starts_with("flush ")).unwrap_or_else(|| panic!("{text}"));
    assert!(flush.contains(" msync ") && !flush.contains("fsync"), "{flush}");
    let (text, _) = run_ok(&[&f, "--write-percent", "100", "--ops", "40", "--fsync-every", "10"]);
    let flush = text.lines().find(|l| l.starts_with("flush ")).unwrap();
    assert!(flush.contains(" fsync "), "{flush}");
}

#[test]
fn a_cgroup_io_throttle_is_named() {
    let what = "a cgroup I/O throttle";
    let Some(ram) = ram_loop(32, what) else { return };
    let number = std::fs::read_to_string(format!("/sys/block/{}/dev", ram.dev.name())).unwrap();
    let Some(throttle) = root::blkio_throttle(number.trim(), what) else { return };
    throttle.limit_reads(4 << 20);
    let dir = temp_dir();
    let json = path_str(&dir.path().join("r.json"));
    let mut cmd = iopulse();
    cmd.args([ram.dev.path.as_str(), "--direct", "--random", "--duration", "1", "--json", &json]);
    throttle.confine(&mut cmd);
    let (code, text, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let limit = witness(&r)["throttle"].as_str().unwrap_or_else(|| panic!("{}", witness(&r))).to_string();
    assert!(limit.contains(&format!("{}: reads 4 MiB/s", ram.dev.name())) && limit.contains("blkio"), "{limit}");
    assert!(text.contains(&format!("⚠ throttled by a cgroup: {limit}")), "{text}");
    assert!(stderr.contains("a cgroup limits this run's I/O"), "{stderr}");
    // The figures are the limit's: about 4 MiB/s of 4 KiB reads.
    let bw = r["read"]["bw_bytes_per_sec"].as_f64().unwrap();
    assert!(bw < 8.0 * (1 << 20) as f64, "{bw}");
    drop(throttle);
}

#[test]
fn combined_rows_over_several_block_sizes_give_each_sizes_figures() {
    let dir = temp_dir();
    let (a, b) = (path_str(&dir.path().join("a.dat")), path_str(&dir.path().join("b.dat")));
    let job = dir.path().join("j.toml");
    std::fs::write(
        &job,
        format!(
            "[global]\nops = 200\nfile-size = \"8M\"\n[small]\ntargets = [\"{a}\"]\nblock-size = \"4k\"\n[big]\ntargets = [\"{b}\"]\nblock-size = \"128k\"\nwrite-percent = 100\nstonewall = true\n"
        ),
    )
    .unwrap();
    let json = path_str(&dir.path().join("r.json"));
    let (text, _) = run_ok(&["run", &path_str(&job), "--json", &json]);
    let table = &text[text.find(&format!("══ {} ══", path_str(&job))).unwrap_or_else(|| panic!("{text}"))..];
    let after_all = &table[table.find("all phases").unwrap()..];
    let rows: Vec<&str> = after_all.lines().skip(1).take(2).collect();
    assert!(rows[0].trim_start().starts_with("4 KiB read") && rows[0].contains("200"), "{table}");
    assert!(rows[1].trim_start().starts_with("128 KiB write") && rows[1].contains("200"), "{table}");
    assert!(table.contains("add I/Os of every block size"), "{table}");
    let r = read_json(&json);
    let sizes = r["block_sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 2, "{}", r["block_sizes"]);
    assert_eq!((sizes[0]["size_bytes"].as_u64(), sizes[0]["read"]["ops"].as_u64()), (Some(4096), Some(200)));
    assert_eq!((sizes[1]["size_bytes"].as_u64(), sizes[1]["write"]["ops"].as_u64()), (Some(131072), Some(200)));
    // The sizes' I/Os add up to the combined figure's.
    assert_eq!(u64_at(&r, &["total", "ops"]), 400);
}
