//! Whether a target may be written to: block devices in use, and access
//! rights. Only looks (sysfs, /proc/self/mountinfo, /proc/swaps, access(2));
//! never opens anything for writing.
//!
//! A block device is in use when it or any of its partitions is mounted or
//! used as swap, when another device holds it or one of its partitions
//! (device-mapper, md, bcache: `/sys/class/block/X/holders` not empty), or,
//! for a partition, when its whole disk is held. Writing to such a device
//! would corrupt what uses it, so it is refused even with `--force`. The run
//! also opens block devices for writing with O_EXCL, so that the kernel
//! refuses one that is mounted or claimed in a way these checks missed.

use nix::fcntl::{AT_FDCWD, AtFlags};
use nix::unistd::{AccessFlags, faccessat};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where the facts come from (tests give a fake sysfs and fake tables).
pub struct Sources<'a> {
    /// Usually `/sys`.
    pub sys: &'a Path,
    /// The text of /proc/self/mountinfo.
    pub mountinfo: &'a str,
    /// The text of /proc/swaps.
    pub swaps: &'a str,
}

/// Why the block device at `path` must not be written to, if it is in use.
pub fn block_device_in_use(path: &Path) -> io::Result<Option<String>> {
    let meta = fs::metadata(path)?;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    let sources = Sources { sys: Path::new("/sys"), mountinfo: &mountinfo, swaps: &swaps };
    if let Some(why) = in_use(&sources, major, minor) {
        return Ok(Some(why));
    }
    Ok(backs_a_loop_device(rdev))
}

/// Whether the device numbered `rdev`, or one of its partitions, backs an attached loop
/// device (sysfs `holders` does not show that).
fn backs_a_loop_device(rdev: u64) -> Option<String> {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let mut numbers = vec![(String::new(), rdev)];
    if let Ok(entries) = fs::read_dir(format!("/sys/dev/block/{major}:{minor}")) {
        for e in entries.flatten() {
            let Ok(number) = fs::read_to_string(e.path().join("dev")) else { continue };
            if !e.path().join("partition").is_file() {
                continue;
            }
            if let Some((ma, mi)) = number.trim().split_once(':')
                && let (Ok(ma), Ok(mi)) = (ma.parse(), mi.parse())
            {
                numbers.push((e.file_name().to_string_lossy().into_owned(), libc::makedev(ma, mi)));
            }
        }
    }
    let loops = super::loop_backing::attached_loops();
    numbers.iter().find_map(|(partition, number)| {
        let users: Vec<&str> =
            loops.iter().filter(|l| l.backing_rdev == Some(*number)).map(|l| l.loop_name.as_str()).collect();
        let whose = if partition.is_empty() { String::new() } else { format!("its partition {partition} ") };
        (!users.is_empty()).then(|| format!("{whose}backs loop device {}", users.join(", ")))
    })
}

/// One block device as sysfs shows it.
#[derive(Debug)]
struct Dev {
    /// Kernel name (`sda`, `sda1`, `loop0p1`).
    name: String,
    /// "major:minor".
    number: String,
    dir: PathBuf,
}

/// The in-use check on `major:minor`, from `sources`.
pub fn in_use(sources: &Sources<'_>, major: u32, minor: u32) -> Option<String> {
    let link = sources.sys.join(format!("dev/block/{major}:{minor}"));
    let Ok(dir) = fs::canonicalize(&link) else {
        // No sysfs entry: the mount and swap tables can still tell.
        let number = format!("{major}:{minor}");
        return mounted(sources, &[Dev { name: String::new(), number, dir: link }]);
    };
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let this = Dev { name, number: format!("{major}:{minor}"), dir: dir.clone() };
    // The device and its partitions (subdirectories with a `partition` file).
    let mut devices = vec![];
    if let Ok(entries) = fs::read_dir(&dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").is_file() {
                let number = fs::read_to_string(p.join("dev")).unwrap_or_default().trim().to_string();
                devices.push(Dev { name: e.file_name().to_string_lossy().into_owned(), number, dir: p });
            }
        }
    }
    devices.sort_by(|a, b| a.name.cmp(&b.name));
    devices.insert(0, this);
    for d in &devices {
        let holders = holders(&d.dir);
        if !holders.is_empty() {
            let whose = if d.dir == dir { String::new() } else { format!("its partition {} is ", d.name) };
            return Some(format!(
                "{whose}held by {} (device-mapper, md or another device uses it)",
                holders.join(", ")
            ));
        }
    }
    // A partition of a disk that another device holds as a whole (multipath, md on the disk).
    if dir.join("partition").is_file()
        && let Some(disk) = dir.parent()
    {
        let holders = holders(disk);
        if !holders.is_empty() {
            let disk_name = disk.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            return Some(format!("its disk {disk_name} is held by {}", holders.join(", ")));
        }
    }
    mounted(sources, &devices)
}

fn holders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir.join("holders"))
        .map(|entries| entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Mounted or swap, per the tables, for the first of `devices` that is.
fn mounted(sources: &Sources<'_>, devices: &[Dev]) -> Option<String> {
    for (i, d) in devices.iter().enumerate() {
        let whose = if i == 0 { String::new() } else { format!("its partition {} is ", d.name) };
        for line in sources.mountinfo.lines() {
            // id parent major:minor root mount-point options ... - fstype source super-options
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(dash) = fields.iter().position(|f| *f == "-") else { continue };
            let (Some(number), Some(point)) = (fields.get(2), fields.get(4)) else { continue };
            let source = fields.get(dash + 2).copied().unwrap_or("");
            let by_name = !d.name.is_empty() && source.rsplit('/').next() == Some(d.name.as_str());
            if *number == d.number || (source.starts_with("/dev/") && by_name) {
                let fstype = fields.get(dash + 1).copied().unwrap_or("?");
                return Some(format!("{whose}mounted on {} ({fstype})", unescape(point)));
            }
        }
        if !d.name.is_empty() {
            for line in sources.swaps.lines().skip(1) {
                let Some(dev) = line.split_whitespace().next() else { continue };
                if dev.rsplit('/').next() == Some(d.name.as_str()) {
                    return Some(format!("{whose}in use as swap"));
                }
            }
        }
    }
    None
}

/// Mount points escape space, tab, newline and backslash as octal (`\040`).
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let v = bytes[i + 1..i + 4].iter().fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            out.push(v as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a run needs of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
}

/// Checks with access(2), effective ids, that `path` can be opened as `need`:
/// `Err` carries the system's reason (EACCES, EROFS for a read-only mount,
/// EPERM for an immutable file). Root passes permission bits but not the others.
pub fn check_access(path: &Path, need: Access) -> io::Result<()> {
    let mode = match need {
        Access::Read => AccessFlags::R_OK,
        Access::ReadWrite => AccessFlags::R_OK | AccessFlags::W_OK,
    };
    access(path, mode)
}

/// Whether a new file can be created in `dir`.
pub fn check_can_create_in(dir: &Path) -> io::Result<()> {
    access(dir, AccessFlags::W_OK | AccessFlags::X_OK)
}

fn access(path: &Path, mode: AccessFlags) -> io::Result<()> {
    // Effective ids (AT_EACCESS), as the run will open the path with them.
    faccessat(AT_FDCWD, path, mode, AtFlags::AT_EACCESS).map_err(io::Error::from)
}

/// "Read-only file system" from "Read-only file system (os error 30)".
pub fn reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /sys with disk `vdb` (8:16) and its partitions vdb1 (8:17), vdb2 (8:18).
    fn fake_sys() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let disk = root.path().join("devices/virtual/block/vdb");
        for (dir, dev) in [(disk.clone(), "8:16"), (disk.join("vdb1"), "8:17"), (disk.join("vdb2"), "8:18")] {
            fs::create_dir_all(dir.join("holders")).unwrap();
            fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
            if dir != disk {
                fs::write(dir.join("partition"), "1\n").unwrap();
            }
        }
        fs::create_dir_all(root.path().join("dev/block")).unwrap();
        for (dev, target) in [("8:16", disk.clone()), ("8:17", disk.join("vdb1")), ("8:18", disk.join("vdb2"))] {
            std::os::unix::fs::symlink(target, root.path().join(format!("dev/block/{dev}"))).unwrap();
        }
        root
    }

    fn check(sys: &Path, mountinfo: &str, swaps: &str, major: u32, minor: u32) -> Option<String> {
        in_use(&Sources { sys, mountinfo, swaps }, major, minor)
    }

    const NOTHING: &str = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n";

    #[test]
    fn an_unused_disk_is_free() {
        let sys = fake_sys();
        assert_eq!(check(sys.path(), NOTHING, "", 8, 16), None);
        assert_eq!(check(sys.path(), NOTHING, "", 8, 17), None);
    }

    #[test]
    fn a_mounted_disk_or_partition_is_in_use() {
        let sys = fake_sys();
        let m = "36 1 8:17 / /mnt/my\\040data rw - ext4 /dev/vdb1 rw\n";
        assert_eq!(check(sys.path(), m, "", 8, 17).as_deref(), Some("mounted on /mnt/my data (ext4)"));
        let whole = check(sys.path(), m, "", 8, 16).unwrap();
        assert_eq!(whole, "its partition vdb1 is mounted on /mnt/my data (ext4)");
        assert_eq!(check(sys.path(), m, "", 8, 18), None, "the other partition is free");
        // btrfs reports an anonymous device number: the source names the device.
        let btrfs = "40 1 0:45 / /srv rw - btrfs /dev/vdb2 rw\n";
        assert_eq!(check(sys.path(), btrfs, "", 8, 18).as_deref(), Some("mounted on /srv (btrfs)"));
    }

    #[test]
    fn a_held_disk_or_partition_is_in_use() {
        let sys = fake_sys();
        let disk = sys.path().join("devices/virtual/block/vdb");
        fs::create_dir(disk.join("vdb2/holders/dm-0")).unwrap();
        assert!(check(sys.path(), NOTHING, "", 8, 18).unwrap().starts_with("held by dm-0"));
        assert!(check(sys.path(), NOTHING, "", 8, 16).unwrap().starts_with("its partition vdb2 is held by dm-0"));
        assert_eq!(check(sys.path(), NOTHING, "", 8, 17), None);
        fs::create_dir(disk.join("holders/md0")).unwrap();
        assert_eq!(check(sys.path(), NOTHING, "", 8, 17).as_deref(), Some("its disk vdb is held by md0"));
    }

    #[test]
    fn swap_is_in_use() {
        let sys = fake_sys();
        let swaps = "Filename Type Size Used Priority\n/dev/vdb2 partition 1048572 0 -2\n";
        assert_eq!(check(sys.path(), NOTHING, swaps, 8, 18).as_deref(), Some("in use as swap"));
        assert_eq!(check(sys.path(), NOTHING, swaps, 8, 16).as_deref(), Some("its partition vdb2 is in use as swap"));
    }

    #[test]
    fn octal_escapes() {
        assert_eq!(unescape("/a\\040b\\134c"), "/a b\\c");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/end\\04"), "/end\\04");
    }
}
