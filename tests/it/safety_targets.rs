//! Targets change only when the user asked for it: kernel interfaces are refused,
//! one file given twice is refused, a device or file behind a loop device is held,
//! a foreign file is not extended by a read run, a mistyped subcommand creates
//! nothing, and sizes that cannot be laid out are refused before anything exists.
//! Each test checks the disk afterwards.

use crate::common::root::{self, LoopOptions};
use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_procfs_target_is_refused_and_the_hostname_is_untouched() {
    // Harmless procfs and sysfs paths first: read-only files, and a file that cannot exist.
    for target in ["/proc/version", "/sys/kernel/new.dat"] {
        let (code, _, stderr) = run(&[target, "--duration", "1", "--file-size", "4k"]);
        assert_eq!(code, 2, "{target}: {stderr}");
        assert!(stderr.contains("TARGET") && stderr.contains("kernel interface"), "{stderr}");
    }
    // The hostname only inside a UTS namespace of the test's own, so that a regression
    // renames that namespace, never this machine.
    if !root::is_root() {
        eprintln!("SKIP: hostname check in a UTS namespace: needs root");
        return;
    }
    let script = "before=$(cat /proc/sys/kernel/hostname); \"$0\" /proc/sys/kernel/hostname --duration 1 --file-size 4k >/dev/null 2>&1; echo \"$?\"; [ \"$(cat /proc/sys/kernel/hostname)\" = \"$before\" ] && echo same";
    let out = Command::new("unshare").args(["--uts", "sh", "-c", script, env!("CARGO_BIN_EXE_iopulse")]).output();
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(text.lines().collect::<Vec<_>>(), ["2", "same"], "{text}");
        }
        _ => eprintln!("SKIP: hostname check in a UTS namespace: unshare --uts is not available"),
    }
}

#[test]
fn one_file_given_twice_is_refused() {
    let dir = temp_dir();
    let a = zero_file(dir.path(), "a.dat", 1 << 20);
    let sym = dir.path().join("a_sym.dat");
    std::os::unix::fs::symlink(&a, &sym).unwrap();
    let hard = dir.path().join("a_hard.dat");
    std::fs::hard_link(&a, &hard).unwrap();
    let spelled = dir.path().join(".").join("a.dat");
    let a_s = path_str(&a);
    for other in [path_str(&sym), path_str(&hard), path_str(&spelled)] {
        let (code, _, stderr) =
            run(&[&a_s, &other, "--verify", "--threads", "2", "--write-percent", "100", "--duration", "1"]);
        assert_eq!(code, 2, "{other}: {stderr}");
        assert!(stderr.contains("same file") && stderr.contains(&other), "{stderr}");
    }
    assert!(std::fs::read(&a).unwrap().iter().all(|&b| b == 0), "nothing was written");
    // Two new files spelled alike are one file too.
    let new = path_str(&dir.path().join("new.dat"));
    let new2 = path_str(&dir.path().join(".").join("new.dat"));
    assert_eq!(run(&[&new, &new2, "--duration", "1"]).0, 2);
    assert!(!dir.path().join("new.dat").exists());
}

/// `losetup -f --show BACKING`, detached on Drop.
struct Loop(String);

impl Loop {
    fn over(backing: &str, what: &str) -> Option<Loop> {
        let out = Command::new("losetup").args(["-f", "--show", backing]).output().ok()?;
        if !out.status.success() {
            eprintln!("SKIP: {what}: losetup over {backing}: {}", String::from_utf8_lossy(&out.stderr).trim());
            return None;
        }
        Some(Loop(String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn devices_and_files_behind_a_loop_device_are_held_even_with_force() {
    let what = "loop devices stacked on a file";
    let Some(lower) = root::loop_device(32 << 20, LoopOptions::default(), what) else { return };
    let Some(upper) = Loop::over(&lower.path, what) else { return };
    if !root::mkfs_ext4(&upper.0, what) {
        return;
    }
    let Some(mount) = root::mount_device(&upper.0, what) else { return };
    std::fs::write(mount.path().join("kept.txt"), b"kept").unwrap();
    let backing = path_str(&lower.backing);
    for target in [lower.path.as_str(), backing.as_str()] {
        let (code, _, stderr) =
            run(&[target, "--write-percent", "100", "--force", "--duration", "1", "--block-size", "4k"]);
        assert_eq!(code, 2, "writing {target}: {stderr}");
        assert!(stderr.contains("loop"), "{stderr}");
        // Reads stay allowed, at the target's own size; the sparse backing file's holes
        // are never laid out, so reading them as they are takes --keep-holes.
        let kept: &[&str] = if target == backing { &["--keep-holes"] } else { &[] };
        if target == backing {
            let (code, _, stderr) = run(&[target, "--duration", "300ms", "--quiet"]);
            assert_eq!(code, 2, "reading the holes of {target}: {stderr}");
            assert!(stderr.contains("backs loop device") && stderr.contains("--keep-holes"), "{stderr}");
        }
        let (code, _, stderr) = run(&[&[target, "--duration", "300ms", "--quiet"], kept].concat());
        assert_eq!(code, 0, "reading {target}: {stderr}");
    }
    drop(mount);
    assert!(root::e2fsck_clean(&upper.0), "the filesystem on {} still checks clean", upper.0);
}

#[test]
fn a_foreign_file_is_not_extended_by_a_read_run_unless_forced() {
    let dir = temp_dir();
    let text: Vec<u8> = (0..208u32).map(|i| b'a' + (i % 26) as u8).collect();
    let foreign = dir.path().join("notes.txt");
    std::fs::write(&foreign, &text).unwrap();
    let f = path_str(&foreign);
    let (code, _, stderr) = run(&[&f, "--file-size", "32M", "--duration", "300ms"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--force") && stderr.contains("--file-size"), "{stderr}");
    assert_eq!(std::fs::read(&foreign).unwrap(), text, "byte for byte unchanged");
    // At its own size a read run reads it and leaves it as it is.
    let (code, _, stderr) = run(&[&f, "--block-size", "8", "--duration", "300ms", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(&foreign).unwrap(), text);
    // Told to, it lays it out.
    let (code, _, stderr) = run(&[&f, "--file-size", "2M", "--duration", "300ms", "--force", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::metadata(&foreign).unwrap().len(), 2 << 20);
    // A file iopulse laid out itself grows on a rerun without --force (where xattrs work).
    let own = path_str(&dir.path().join("own.dat"));
    assert_eq!(run(&[&own, "--file-size", "1M", "--duration", "200ms", "--quiet"]).0, 0);
    if xattr::get(&own, "user.iopulse.layout").ok().flatten().is_none() {
        eprintln!("SKIP: rerun on iopulse's own file: this filesystem keeps no user xattrs");
        return;
    }
    let (code, _, stderr) = run(&[&own, "--file-size", "2M", "--duration", "200ms", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::metadata(&own).unwrap().len(), 2 << 20);
}

#[test]
fn a_mistyped_subcommand_creates_and_extends_nothing() {
    let dir = temp_dir();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, b"[global]\nrw=randread\n").unwrap();
    let (code, _, stderr) =
        run_command(iopulse().current_dir(dir.path()).args(["from-fio", "job.fio", "--file-size", "32M"]));
    // `from-fio` is a subcommand now: a benchmark flag after it is refused, naming it.
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--file-size"), "{stderr}");
    assert_eq!(std::fs::read(&job).unwrap(), b"[global]\nrw=randread\n");
    assert!(!dir.path().join("from-fio").exists());
    let (code, _, stderr) = run_command(iopulse().current_dir(dir.path()).args(["mrege", "a.json", "b.json"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("iopulse merge"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing created");
}

#[test]
fn an_overflowing_or_too_large_size_is_refused_before_anything_exists() {
    let dir = temp_dir();
    let huge = dir.path().join("huge.dat");
    let (code, stderr) = run_bounded(
        &[&path_str(&huge), "--file-size", "18446744073709551615", "--duration", "1"],
        Duration::from_secs(20),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--file-size"), "{stderr}");
    assert!(!huge.exists());
    let what = "a layout larger than the free space";
    let Some(mount) = root::mount_tmpfs("8m", "", what) else { return };
    let big = mount.path().join("big.dat");
    let (code, stderr) =
        run_bounded(&[&path_str(&big), "--file-size", "64M", "--duration", "1"], Duration::from_secs(20));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("free") && stderr.contains("--file-size"), "{stderr}");
    assert!(!big.exists(), "nothing was created");
}

#[test]
fn sighup_during_layout_removes_the_new_file_and_says_so() {
    let dir = temp_dir();
    let target = dir.path().join("big.dat");
    let child = iopulse()
        .args([&path_str(&target), "--file-size", "8G", "--duration", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until layout has begun, then hang up.
    let started = Instant::now();
    while !target.exists() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGHUP).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(0) {
        eprintln!("SKIP: SIGHUP during layout: the 8 GiB layout finished within 200 ms");
        return;
    }
    assert_eq!(out.status.code(), Some(129), "{stderr}");
    assert!(stderr.contains("interrupted while laying out") && stderr.contains("removed"), "{stderr}");
    assert!(!target.exists(), "the file this run created is gone");
    assert!(Path::new(dir.path()).read_dir().unwrap().next().is_none());
}
