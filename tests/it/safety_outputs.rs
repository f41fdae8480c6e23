//! Outputs never land where they would destroy something: devices (mounted ones
//! above all), the run's own target, another output's file, FIFOs, /proc. A failed
//! output never loses the others, never leaves a half-written file, and never panics.
//! Each test checks the state of the disk afterwards.

use crate::common::root::{self, LoopOptions};
use crate::common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A short read run on `target` with `extra` arguments.
fn short_run<'a>(target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![target, "--duration", "300ms", "--quiet"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn json_and_timeseries_never_write_a_mounted_device_even_through_a_symlink() {
    let what = "outputs over a mounted loop device";
    let Some(dev) = root::loop_device(32 << 20, LoopOptions::default(), what) else { return };
    if !root::mkfs_ext4(&dev.path, what) {
        return;
    }
    let before = first_64k_outside_fs_metadata(&dev.contents());
    let Some(mount) = root::mount_device(&dev.path, what) else { return };
    let dir = temp_dir();
    let target = zero_file(dir.path(), "t.dat", 1 << 20);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    let t = path_str(&target);
    let l = path_str(&link);
    for (flag, path) in [("--json", dev.path.as_str()), ("--timeseries", dev.path.as_str()), ("--json", l.as_str())] {
        for force in [false, true] {
            let mut args = short_run(&t, &[flag, path]);
            if force {
                args.push("--force");
            }
            let (code, stdout, stderr) = run(&args);
            assert_eq!(code, 2, "{flag} {path}: {stderr}");
            assert!(stderr.contains(flag) && stderr.contains(path) && stderr.contains("device"), "{stderr}");
            assert!(stdout.is_empty(), "no report for a refused run: {stdout}");
        }
    }
    drop(mount);
    assert_eq!(first_64k_outside_fs_metadata(&dev.contents()), before, "the device's first 64 KiB are unchanged");
    assert_is_block_device(&dev.path);
    assert!(root::e2fsck_clean(&dev.path), "the filesystem on {} still checks clean", dev.path);
}

/// The first 64 KiB of a device holding ext4, less the superblock and group descriptors
/// (1 KiB to 8 KiB: the kernel updates them itself on mount and unmount, with 1 KiB or
/// 4 KiB blocks).
fn first_64k_outside_fs_metadata(contents: &[u8]) -> Vec<u8> {
    [&contents[..1024], &contents[8192..64 << 10]].concat()
}

/// The device node is still there: a temporary file renamed over it would replace it.
fn assert_is_block_device(path: &str) {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::symlink_metadata(path).unwrap();
    assert!(meta.file_type().is_block_device(), "{path} is still a block device");
}

#[test]
fn json_never_writes_a_disk_whose_partition_is_mounted() {
    let what = "--json on a partitioned disk";
    let options = LoopOptions { partitioned: true, ..Default::default() };
    let Some(dev) = root::loop_device(64 << 20, options, what) else { return };
    let part = format!("{}p1", dev.path);
    if !root::mkfs_ext4(&part, what) {
        return;
    }
    // The MBR and the gap before the partition (at 1 MiB): nothing but iopulse could change them.
    let head = dev.contents()[..1 << 20].to_vec();
    let Some(mount) = root::mount_device(&part, what) else { return };
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    for flag in ["--json", "--timeseries", "--csv"] {
        let (code, _, stderr) = run(&short_run(&t, &[flag, &dev.path, "--force"]));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(flag) && stderr.contains(&dev.path) && stderr.contains("device"), "{stderr}");
    }
    drop(mount);
    assert_eq!(&dev.contents()[..1 << 20], &head[..], "the MBR and the first MiB are unchanged");
    assert_is_block_device(&dev.path);
    assert!(root::e2fsck_clean(&part));
}

/// A loop device over `disk` from `offset_bytes` on: a partition, for kernels without MBR
/// partition support. Detached on Drop.
struct Slice(String);

impl Slice {
    fn of(disk: &str, offset_bytes: u64) -> Option<Slice> {
        let out =
            Command::new("losetup").args(["-f", "--show", "-o", &offset_bytes.to_string(), disk]).output().ok()?;
        out.status.success().then(|| Slice(String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }
}

impl Drop for Slice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn json_never_writes_a_disk_whose_slice_is_mounted() {
    // The layout of a partition (a filesystem from 1 MiB on) that works on any kernel with
    // loop devices: a second loop device over the first at an offset.
    let what = "--json on a disk with a mounted slice";
    let Some(dev) = root::loop_device(64 << 20, LoopOptions { fill: Some(0x5a), ..Default::default() }, what) else {
        return;
    };
    let Some(slice) = Slice::of(&dev.path, 1 << 20) else {
        eprintln!("SKIP: {what}: cannot set up a loop device over a loop device");
        return;
    };
    if !root::mkfs_ext4(&slice.0, what) {
        return;
    }
    let head = dev.contents()[..1 << 20].to_vec();
    let Some(mount) = root::mount_device(&slice.0, what) else { return };
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let link = path_str(&dir.path().join("disk"));
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    for (flag, out) in [("--json", &dev.path), ("--timeseries", &dev.path), ("--csv", &dev.path), ("--json", &link)] {
        let (code, _, stderr) = run(&short_run(&t, &[flag, out, "--force"]));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(flag) && stderr.contains(out.as_str()) && stderr.contains("device"), "{stderr}");
    }
    drop(mount);
    assert_eq!(&dev.contents()[..1 << 20], &head[..], "the first MiB, before the slice, is unchanged");
    assert_is_block_device(&dev.path);
    assert!(root::e2fsck_clean(&slice.0), "the filesystem on the slice still checks clean");
}

#[test]
fn an_output_named_like_the_target_leaves_the_target_byte_for_byte() {
    let dir = temp_dir();
    let target = dir.path().join("t.dat");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&target, &data).unwrap();
    let sym = dir.path().join("sym");
    std::os::unix::fs::symlink(&target, &sym).unwrap();
    let hard = dir.path().join("hard");
    std::fs::hard_link(&target, &hard).unwrap();
    let t = path_str(&target);
    for out in [t.clone(), path_str(&sym), path_str(&hard)] {
        for flag in ["--json", "--timeseries", "--csv"] {
            let (code, _, stderr) = run(&short_run(&t, &[flag, &out]));
            assert_eq!(code, 2, "{flag} {out}: {stderr}");
            assert!(stderr.contains("own target"), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        }
    }
    assert_eq!(std::fs::read(&target).unwrap(), data);
}

#[test]
fn one_path_for_two_outputs_is_refused() {
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let x = path_str(&dir.path().join("x"));
    for pair in [["--json", "--timeseries"], ["--json", "--csv"], ["--csv", "--timeseries"]] {
        let (code, _, stderr) = run(&short_run(&t, &[pair[0], &x, pair[1], &x]));
        assert_eq!(code, 2, "{pair:?}: {stderr}");
        assert!(stderr.contains(pair[0]) && stderr.contains(pair[1]) && stderr.contains("same file"), "{stderr}");
        assert!(!Path::new(&x).exists(), "nothing written at {x}");
    }
}

#[test]
fn fifo_outputs_are_refused_at_once() {
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let f = path_str(&fifo);
    for flag in ["--json", "--timeseries", "--csv"] {
        // A regression would block for ever opening the FIFO: the wait is bounded.
        let (code, stderr) = run_bounded(&short_run(&t, &[flag, &f]), Duration::from_secs(20));
        assert_eq!(code, 2, "{flag} FIFO: {stderr}");
        assert!(stderr.contains("FIFO"), "{stderr}");
    }
}

#[test]
fn unusable_outputs_are_refused_before_the_target_is_created() {
    let dir = temp_dir();
    let target = dir.path().join("new.dat");
    let t = path_str(&target);
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let s = path_str(&sub);
    for (out, word) in [("/proc/version", "/proc"), ("/dev/full", "device"), (s.as_str(), "directory")] {
        let (code, _, stderr) = run(&[&t, "--file-size", "1M", "--duration", "200ms", "--json", out]);
        assert_eq!(code, 2, "--json {out}: {stderr}");
        assert!(stderr.contains("--json") && stderr.contains(word), "{stderr}");
        assert!(!target.exists(), "--json {out}: the target was not created");
    }
}

#[test]
fn on_a_full_disk_the_old_json_stays_and_the_report_is_printed() {
    let what = "--json on a full filesystem";
    let Some(mount) = root::mount_tmpfs("64k", "", what) else { return };
    let json = mount.path().join("r.json");
    std::fs::write(&json, b"{\"old\": true}\n").unwrap();
    // Fill the rest of the filesystem.
    let _ = std::fs::write(mount.path().join("filler"), vec![1u8; 256 << 10]);
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let j = path_str(&json);
    let (code, stdout, stderr) = run(&[&t, "--duration", "300ms", "--json", &j]);
    assert_eq!(code, 4, "an output failed: {stderr}");
    assert!(stdout.contains("IOPS"), "the text report is printed: {stdout}");
    assert!(stderr.contains("--json") && stderr.contains(&j), "{stderr}");
    assert_eq!(std::fs::read(&json).unwrap(), b"{\"old\": true}\n", "the old result is whole");
    let left: Vec<_> = std::fs::read_dir(mount.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "no temporary file is left: {left:?}");
}

#[test]
fn stdout_on_dev_full_names_stdout_and_still_writes_the_files() {
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let (code, _, stderr) = run_command(
        iopulse().args([&t, "--duration", "300ms", "--json", &path_str(&json), "--csv", &path_str(&csv)]).stdout(full),
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("stdout"), "{stderr}");
    assert!(read_json(&json)["total"]["ops"].as_u64().unwrap() > 0);
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 2, "header and one row");
}

#[test]
fn a_closed_or_full_stderr_does_not_panic() {
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    // stderr on /dev/full: warnings cannot be printed, the run goes on.
    let json = dir.path().join("a.json");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let (code, _, _) =
        run_command(iopulse().args([&t, "--duration", "300ms", "--json", &path_str(&json)]).stderr(full));
    assert_eq!(code, 0);
    assert!(json.exists());
    // stdout and stderr into a pipe that is already closed (`2>&1 | true`).
    let json = dir.path().join("b.json");
    let code = Command::new("bash")
        .arg("-c")
        .arg(format!("\"$0\" {t} --duration 300ms --json {} 2>&1 | true; exit ${{PIPESTATUS[0]}}", path_str(&json)))
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .status()
        .unwrap()
        .code();
    assert_ne!(code, Some(101), "no panic");
    assert_eq!(code, Some(4), "stdout was closed: an output failed");
    assert!(read_json(&json)["total"]["ops"].as_u64().unwrap() > 0, "the JSON is written");
}

#[test]
fn json_and_csv_on_dev_stdout_follow_the_report_in_a_redirected_file() {
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let out = dir.path().join("out.txt");
    let file = std::fs::File::create(&out).unwrap();
    let (code, _, stderr) = run_command(
        iopulse().args([&t, "--duration", "300ms", "--json", "/dev/stdout", "--csv", "/dev/fd/1"]).stdout(file),
    );
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    // Opening /dev/stdout again would start at offset 0, over the report.
    let report_at = text.find("IOPS").expect("the text report is in the file");
    let json_at = text.find("\"schema_version\"").expect("the JSON is in the file");
    let csv_at = text.find("started_at,hostname").expect("the CSV header is in the file");
    assert!(report_at < json_at && json_at < csv_at, "report, then JSON, then CSV: {text}");
}

#[test]
fn plot_charts_never_replace_a_target_or_a_device() {
    let dir = temp_dir();
    let target = dir.path().join("t.dat");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 13 % 251) as u8).collect();
    std::fs::write(&target, &data).unwrap();
    let t = path_str(&target);
    let plots = dir.path().join("plots");
    std::fs::create_dir(&plots).unwrap();
    let p = path_str(&plots);
    let chart = plots.join("latency-percentiles.svg");
    // A chart that is a link to the target, or a hard link to it.
    std::os::unix::fs::symlink(&target, &chart).unwrap();
    let (code, stdout, stderr) = run(&short_run(&t, &["--plot", &p]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--plot") && stderr.contains("own target"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    std::fs::remove_file(&chart).unwrap();
    std::fs::hard_link(&target, plots.join("iops-over-time.svg")).unwrap();
    let (code, _, stderr) = run(&short_run(&t, &["--plot", &p, "--timeseries", &path_str(&dir.path().join("ts.csv"))]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("own target"), "{stderr}");
    assert_eq!(std::fs::read(&target).unwrap(), data, "the target is byte for byte unchanged");
    std::fs::remove_file(plots.join("iops-over-time.svg")).unwrap();
    // A chart that is a link to a device (a node of this test's own, so that a regression
    // replaces nothing in /dev).
    if root::is_root() {
        use std::os::unix::fs::FileTypeExt;
        let node = dir.path().join("null-node");
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o666);
        nix::sys::stat::mknod(&node, nix::sys::stat::SFlag::S_IFCHR, mode, nix::sys::stat::makedev(1, 3)).unwrap();
        std::os::unix::fs::symlink(&node, plots.join("p99-over-time.svg")).unwrap();
        let (code, _, stderr) = run(&short_run(&t, &["--plot", &p]));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("--plot") && stderr.contains("device"), "{stderr}");
        assert!(std::fs::symlink_metadata(&node).unwrap().file_type().is_char_device(), "the node is left");
    } else {
        eprintln!("SKIP: a chart linked to a device: needs root for mknod");
    }
    // One chart named by --json too.
    let (code, _, stderr) = run(&short_run(&t, &["--plot", &p, "--json", &path_str(&chart)]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--json") && stderr.contains("--plot") && stderr.contains("same file"), "{stderr}");
    assert!(!chart.exists(), "nothing written at {}", chart.display());
}

#[test]
fn on_a_full_disk_the_csv_table_stays_whole() {
    let what = "--csv on a full filesystem";
    let Some(mount) = root::mount_tmpfs("64k", "", what) else { return };
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let csv = mount.path().join("sweep.csv");
    let c = path_str(&csv);
    let (code, _, stderr) = run(&short_run(&t, &["--csv", &c]));
    assert_eq!(code, 0, "{stderr}");
    let table = std::fs::read(&csv).unwrap();
    let _ = std::fs::write(mount.path().join("filler"), vec![1u8; 256 << 10]);
    // A new table that cannot be written is not left behind empty.
    let new_csv = mount.path().join("new.csv");
    let (code, _, stderr) = run(&short_run(&t, &["--csv", &path_str(&new_csv)]));
    assert_eq!(code, 4, "{stderr}");
    assert!(!new_csv.exists(), "no empty table is left");
    // An existing table stays as it was: the new row would need a whole new copy of it.
    let (code, stdout, stderr) = run(&[&t, "--duration", "300ms", "--csv", &c]);
    assert_eq!(code, 4, "an output failed: {stderr}");
    assert!(stdout.contains("IOPS"), "the text report is printed: {stdout}");
    assert!(stderr.contains("--csv") && stderr.contains(&c), "{stderr}");
    assert_eq!(std::fs::read(&csv).unwrap(), table, "the table is as it was: no half row");
    let left: Vec<_> = std::fs::read_dir(mount.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "no temporary file is left: {left:?}");
}

#[test]
fn outputs_in_a_read_only_or_missing_directory_are_refused_before_the_target_is_created() {
    let dir = temp_dir();
    let target = dir.path().join("new.dat");
    let t = path_str(&target);
    let missing = path_str(&dir.path().join("no/such/r.json"));
    let mut cases = vec![("--json", missing.clone(), "does not exist")];
    let read_only = root::mount_tmpfs("1m", "ro", "outputs in a read-only directory");
    if let Some(ro) = &read_only {
        cases.push(("--json", path_str(&ro.path().join("r.json")), "cannot write"));
        cases.push(("--csv", path_str(&ro.path().join("r.csv")), "cannot write"));
        cases.push(("--timeseries", path_str(&ro.path().join("ts.csv")), "cannot write"));
    }
    for (flag, out, word) in &cases {
        let (code, stdout, stderr) = run(&[&t, "--file-size", "1M", "--duration", "200ms", flag, out]);
        assert_eq!(code, 2, "{flag} {out}: {stderr}");
        assert!(stderr.contains(flag) && stderr.contains(out.as_str()) && stderr.contains(word), "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(!target.exists(), "{flag} {out}: the target was not created");
    }
}

#[test]
fn an_output_file_that_cannot_be_written_is_refused_before_the_run() {
    let dir = temp_dir();
    let target = dir.path().join("new.dat");
    let t = path_str(&target);
    let frozen = dir.path().join("frozen.json");
    std::fs::write(&frozen, b"{\"old\": true}\n").unwrap();
    let f = path_str(&frozen);
    let Some(_thaw) = root::immutable(&frozen, "an immutable output file") else { return };
    for flag in ["--json", "--timeseries", "--csv"] {
        let (code, stdout, stderr) = run(&[&t, "--file-size", "1M", "--duration", "200ms", flag, &f]);
        assert_eq!(code, 2, "{flag} on an immutable file: {stderr}");
        assert!(stderr.contains(flag) && stderr.contains(&f) && stderr.contains("not writable"), "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(!target.exists(), "the target was not created");
    }
    assert_eq!(std::fs::read(&frozen).unwrap(), b"{\"old\": true}\n");
}
