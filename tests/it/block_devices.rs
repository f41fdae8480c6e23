//! Destructive targets (issue 11) on real loop devices (root only; each test
//! prints `SKIP: ...` and returns otherwise): writing needs --force; a device
//! that is mounted, has a mounted partition, or is held open exclusively is
//! refused even with --force; reads need nothing and change nothing.

use crate::common::root::{self, LoopOptions};
use crate::common::*;
use std::os::unix::fs::OpenOptionsExt;

fn device(what: &str) -> Option<root::LoopDev> {
    root::loop_device(8 << 20, LoopOptions { fill: Some(0xa5), ..Default::default() }, what)
}

#[test]
fn writing_a_block_device_needs_force() {
    let Some(dev) = device("--force on a loop device") else { return };
    let before = dev.contents();
    let (code, stdout, stderr) = run(&[&dev.path, "--write-percent", "50", "--duration", "0.2"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("is a block device") && stderr.contains("--force"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(dev.contents() == before, "the device was modified by a refused run");

    let (code, _, stderr) = run(&[&dev.path, "--write-percent", "50", "--duration", "0", "--force", "--quiet"]);
    assert_eq!(code, 0, "with --force the write run goes ahead: {stderr}");
    assert!(dev.contents() != before, "--force: the run wrote to the device");
}

#[test]
fn read_runs_need_no_force_and_never_modify_the_device() {
    let Some(dev) = device("read-only runs on a loop device") else { return };
    let before = dev.contents();
    for extra in
        [&["--duration", "0"][..], &["--random", "--duration", "0.3"], &["--direct", "--random", "--duration", "0.2"]]
    {
        let mut args = vec![dev.path.as_str(), "--quiet"];
        args.extend_from_slice(extra);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{extra:?}: {stderr}");
        assert!(dev.contents() == before, "{extra:?}: a read-only run modified the device");
    }
    let r = run_json(&[&dev.path, "--duration", "0", "--engine", "libaio", "--direct", "--queue-depth", "8"]);
    assert_eq!(u64_at(&r, &["read", "ops"]), 2048);
    assert_eq!(r["targets"][0]["kind"], "block_device");
    assert!(dev.contents() == before, "libaio: a read-only run modified the device");
}

#[test]
fn a_mounted_device_is_refused_even_with_force() {
    let what = "mounted loop device";
    let Some(dev) = root::loop_device(16 << 20, LoopOptions::default(), what) else { return };
    if !root::mkfs_ext4(&dev.path, what) {
        return;
    }
    let Some(mount) = root::mount_device(&dev.path, what) else { return };
    std::fs::write(mount.path().join("precious.txt"), b"keep me").unwrap();
    let (code, stdout, stderr) = run(&[&dev.path, "--write-percent", "100", "--duration", "0.2", "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    let expected = format!("is in use (mounted on {}", mount.path().display());
    assert!(stderr.contains(&expected) && stderr.contains("even with --force"), "{stderr}");
    assert_eq!(std::fs::read(mount.path().join("precious.txt")).unwrap(), b"keep me");
    // Reading a mounted device is allowed and harmless.
    let (code, _, stderr) = run(&[&dev.path, "--duration", "0.1", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_device_with_a_mounted_partition_is_refused_even_with_force() {
    let what = "loop device with a mounted partition";
    let Some(dev) = root::loop_device(24 << 20, LoopOptions { partitioned: true, ..Default::default() }, what) else {
        return;
    };
    let part = format!("{}p1", dev.path);
    if !root::mkfs_ext4(&part, what) {
        return;
    }
    let Some(mount) = root::mount_device(&part, what) else { return };
    let (code, _, stderr) = run(&[&dev.path, "--write-percent", "100", "--duration", "0.2", "--force"]);
    assert_eq!(code, 2, "{stderr}");
    let name = std::path::Path::new(&part).file_name().unwrap().to_string_lossy().into_owned();
    let expected = format!("its partition {name} is mounted on {}", mount.path().display());
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn a_device_open_exclusively_elsewhere_is_refused_even_with_force() {
    let Some(dev) = device("O_EXCL on a loop device") else { return };
    let before = dev.contents();
    // Another program holds the device exclusively (as mkfs, a mount or a device-mapper table would).
    let _held = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(&dev.path).unwrap();
    let (code, _, stderr) = run(&[&dev.path, "--write-percent", "100", "--duration", "0.2", "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("refused to open it exclusively (EBUSY"), "{stderr}");
    drop(_held);
    assert!(dev.contents() == before, "the device was modified");
}

/// A loop device under a device-mapper table is held (its `holders` names the dm
/// device): writing to it is refused even with --force.
#[test]
fn a_device_held_by_device_mapper_is_refused_even_with_force() {
    let what = "loop device held by device-mapper";
    let Some(dev) = device(what) else { return };
    let Some(dm) = root::dm_device(&format!("0 {} linear {} 0", (8 << 20) / 512, dev.path), what) else { return };
    let (code, _, stderr) = run(&[&dev.path, "--write-percent", "100", "--duration", "0.2", "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is in use (held by dm-"), "{stderr}");
    // The dm device itself is free to be written with --force.
    let (code, _, stderr) = run(&[&dm.path, "--write-percent", "100", "--duration", "0", "--force", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}
