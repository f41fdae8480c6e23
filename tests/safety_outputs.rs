//! Outputs never land where they would destroy something: devices (mounted ones
//! above all), the run's own target, another output's file, FIFOs, /proc. A failed
//! output never loses the others, never leaves a half-written file, and never panics.
//! Each test checks the state of the disk afterwards.

mod common;
use common::root::{self, LoopOptions};
use common::*;
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
    // Mounting updates the superblock (at 1 KiB), not the boot block before it.
    let before = dev.contents()[..1024].to_vec();
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
    assert_eq!(&dev.contents()[..1024], &before[..], "the device's boot block is unchanged");
    assert!(root::e2fsck_clean(&dev.path), "the filesystem on {} still checks clean", dev.path);
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
    let mbr = dev.contents()[..512].to_vec();
    let Some(mount) = root::mount_device(&part, what) else { return };
    let dir = temp_dir();
    let t = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let (code, _, stderr) = run(&short_run(&t, &["--json", &dev.path, "--force"]));
    assert_eq!(code, 2, "{stderr}");
    drop(mount);
    assert_eq!(&dev.contents()[..512], &mbr[..], "the MBR is unchanged");
    assert!(root::e2fsck_clean(&part));
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
