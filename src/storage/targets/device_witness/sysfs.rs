//! The block devices under a target, as sysfs shows them, and their I/O counters.
//!
//! A device number (`major:minor`) leads to `/sys/dev/block/MAJ:MIN`, the device's own
//! directory (a partition's is inside its disk's, with its own `stat`). Devices stacked on
//! others (device-mapper, md) list them in `slaves/`, followed recursively; a partition of
//! such a device is stacked on its disk's slaves. Only reads sysfs; a missing or unreadable
//! `stat` is unknown, never guessed.

use std::fs;
use std::path::{Path, PathBuf};

/// The kernel counts `stat` sectors in units of 512 bytes, whatever the logical block size.
pub const SECTOR_BYTES: u64 = 512;

/// How deep stacked devices are followed (a guard against a malformed tree).
const MAX_DEPTH: usize = 16;

/// One block device under a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceNode {
    /// Kernel name (`vda1`, `dm-0`, `loop3`).
    pub name: String,
    /// Its sysfs directory (holds `stat`).
    pub dir: PathBuf,
    /// The kernel name of the device it sits under; `None` for the target's own device.
    pub below: Option<String>,
    /// A loop device's backing file and direct-I/O setting.
    pub loop_dev: Option<LoopFacts>,
    /// Why this device is memory, not storage (zram, a RAM disk, a loop device over a file
    /// on tmpfs); `None` otherwise.
    pub memory: Option<String>,
}

/// What a loop device reads and writes through (`/sys/block/loopN/loop/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopFacts {
    /// `backing_file`: the file the loop device reads and writes.
    pub backing_file: String,
    /// `dio`: whether the loop device opens its backing file with O_DIRECT (off: every
    /// I/O goes through the backing file's page cache); `None` when not said.
    pub direct_io: Option<bool>,
}

/// The counters of one `stat` file that the witness uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Reads completed (after merging).
    pub read_ios: u64,
    /// Reads merged into others before they reached the driver.
    pub read_merges: u64,
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    /// Milliseconds spent on reads, on writes, with I/O in flight (the busy time), and
    /// the weighted time in queue (0 where the kernel's line is too short to say).
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    pub io_ticks_ms: u64,
    pub in_queue_ms: u64,
}

/// The device numbered `major:minor` and every device stacked under it, the device first.
/// Empty when sysfs has no block device of that number (tmpfs, btrfs's anonymous numbers,
/// a character device).
pub fn devices_under(sys: &Path, major: u32, minor: u32) -> Vec<DeviceNode> {
    let Ok(dir) = fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}"))) else {
        return Vec::new();
    };
    let mut found = vec![node(&dir, None)];
    add_stacked(sys, &dir, &mut found, 0);
    found
}

/// The node of the device whose sysfs directory is `dir`, with its loop and memory facts.
pub fn node(dir: &Path, below: Option<String>) -> DeviceNode {
    let name = name_of(dir);
    let loop_dev = fs::read_to_string(dir.join("loop/backing_file")).ok().map(|f| LoopFacts {
        backing_file: f.trim_end().to_string(),
        direct_io: fs::read_to_string(dir.join("loop/dio")).ok().and_then(|d| match d.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        }),
    });
    let memory = memory_device(&name, dir);
    DeviceNode { name, dir: dir.to_path_buf(), below, loop_dev, memory }
}

/// Why a device is memory by its kind: zram (compressed RAM, with how much it holds) or
/// a RAM disk (brd).
fn memory_device(name: &str, dir: &Path) -> Option<String> {
    let digits = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    if name.strip_prefix("zram").is_some_and(digits) {
        // mm_stat: orig_data_size first (bytes stored, before compression).
        let stored = fs::read_to_string(dir.join("mm_stat"))
            .ok()
            .and_then(|t| t.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()));
        let size = fs::read_to_string(dir.join("disksize")).ok().and_then(|t| t.trim().parse::<u64>().ok());
        let held = match (stored, size) {
            (Some(stored), Some(size)) => format!(
                ": it holds {} of data in {} (never-written or trimmed slots are read as zeros without any I/O)",
                crate::base::units::display::bytes(stored),
                crate::base::units::display::bytes(size)
            ),
            _ => String::new(),
        };
        return Some(format!("{name} is compressed RAM (zram){held}"));
    }
    if name.strip_prefix("ram").is_some_and(digits) {
        return Some(format!("{name} is a RAM disk (brd)"));
    }
    None
}

/// A file system's magic numbers (statfs `f_type`) of filesystems that keep data in RAM.
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// The filesystem type of a file in RAM (`tmpfs`, `ramfs`), or `None`.
pub(crate) fn memory_filesystem(path: &str) -> Option<&'static str> {
    let stat = nix::sys::statfs::statfs(path).ok()?;
    match stat.filesystem_type().0 as i64 {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}

/// Adds what a loop device reads and writes through: its backing file's filesystem's
/// device and the devices below that, or, where the backing file lives in RAM, the memory.
fn add_loop_backing(sys: &Path, found: &mut Vec<DeviceNode>, at: usize, depth: usize) {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Some(facts) = found[at].loop_dev.clone() else { return };
    let file = facts.backing_file.strip_suffix(" (deleted)").unwrap_or(&facts.backing_file);
    let Ok(meta) = fs::metadata(file) else { return };
    if let Some(fs_type) = memory_filesystem(file) {
        found[at].memory = Some(format!("{}'s backing file {file} is on {fs_type} (RAM)", found[at].name));
        return;
    }
    let number = if meta.file_type().is_block_device() { meta.rdev() } else { meta.dev() };
    let Ok(dir) = fs::canonicalize(sys.join(format!("dev/block/{}:{}", libc::major(number), libc::minor(number))))
    else {
        return;
    };
    if found.iter().any(|d| d.dir == dir) {
        return;
    }
    let below = found[at].name.clone();
    found.push(node(&dir, Some(below)));
    add_stacked(sys, &dir, found, depth + 1);
}

/// Adds the devices under `dir` (its slaves, or its disk's for a partition; a loop
/// device's backing file's), recursively.
fn add_stacked(sys: &Path, dir: &Path, found: &mut Vec<DeviceNode>, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    if let Some(at) = found.iter().position(|d| d.dir == dir)
        && found[at].loop_dev.is_some()
    {
        add_loop_backing(sys, found, at, depth);
    }
    // A partition has no slaves of its own: its disk's are under it.
    let holder = if dir.join("partition").is_file() { dir.parent().unwrap_or(dir) } else { dir };
    let mut slaves: Vec<PathBuf> = fs::read_dir(holder.join("slaves"))
        .map(|entries| entries.flatten().filter_map(|e| fs::canonicalize(e.path()).ok()).collect())
        .unwrap_or_default();
    slaves.sort();
    for slave in slaves {
        if found.iter().any(|d| d.dir == slave) {
            continue;
        }
        found.push(node(&slave, Some(name_of(holder))));
        add_stacked(sys, &slave, found, depth + 1);
    }
}

fn name_of(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The counters in `dir/stat`, or why they are unknown.
pub fn read_counters(dir: &Path) -> Result<DiskCounters, String> {
    let path = dir.join("stat");
    let text = fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
    parse_stat(&text).map_err(|why| format!("{}: {why}", path.display()))
}

/// Parses a block device's `stat` line (Documentation/block/stat.rst): reads completed,
/// reads merged, sectors read, ms reading, writes completed, writes merged, sectors
/// written, ms writing, I/Os in progress, ms doing I/O, weighted ms doing I/O, then
/// fields not used.
pub fn parse_stat(text: &str) -> Result<DiskCounters, String> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() < 7 {
        return Err(format!("{} fields where at least 7 were expected", fields.len()));
    }
    let field = |i: usize| {
        fields
            .get(i)
            .ok_or_else(|| format!("no field {}", i + 1))?
            .parse::<u64>()
            .map_err(|_| format!("field {} is not a count: {:?}", i + 1, fields[i]))
    };
    Ok(DiskCounters {
        read_ios: field(0)?,
        read_merges: field(1)?,
        read_sectors: field(2)?,
        write_ios: field(4)?,
        write_merges: field(5)?,
        write_sectors: field(6)?,
        read_ticks_ms: field(3)?,
        write_ticks_ms: field(7).unwrap_or(0),
        io_ticks_ms: field(9).unwrap_or(0),
        in_queue_ms: field(10).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const STAT: &str = "    1200       30    96000      512     800       10    64000      300        0      700      812        0        0        0        0       12       40\n";

    /// A fake sysfs: disk vdb (252:16) with partition vdb1 (252:17); dm-0 (253:0) on loop0
    /// (7:0) and loop1 (7:1); dm-1 (253:1) on dm-0; md0 (9:0) on vdb1, partition md0p1 (259:0).
    fn fake_sys() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let block = r.join("devices/virtual/block");
        let vdb = r.join("devices/pci0000:00/virtio3/block/vdb");
        let dirs = [
            (vdb.clone(), "252:16"),
            (vdb.join("vdb1"), "252:17"),
            (block.join("loop0"), "7:0"),
            (block.join("loop1"), "7:1"),
            (block.join("dm-0"), "253:0"),
            (block.join("dm-1"), "253:1"),
            (block.join("md0"), "9:0"),
            (block.join("md0/md0p1"), "259:0"),
        ];
        fs::create_dir_all(r.join("dev/block")).unwrap();
        for (dir, dev) in &dirs {
            fs::create_dir_all(dir.join("slaves")).unwrap();
            fs::write(dir.join("stat"), STAT).unwrap();
            symlink(dir, r.join(format!("dev/block/{dev}"))).unwrap();
        }
        for p in [vdb.join("vdb1"), block.join("md0/md0p1")] {
            fs::write(p.join("partition"), "1\n").unwrap();
            fs::remove_dir(p.join("slaves")).unwrap();
        }
        symlink(block.join("loop0"), block.join("dm-0/slaves/loop0")).unwrap();
        symlink(block.join("loop1"), block.join("dm-0/slaves/loop1")).unwrap();
        symlink(block.join("dm-0"), block.join("dm-1/slaves/dm-0")).unwrap();
        symlink(vdb.join("vdb1"), block.join("md0/slaves/vdb1")).unwrap();
        root
    }

    fn names(found: &[DeviceNode]) -> Vec<(String, Option<String>)> {
        found.iter().map(|d| (d.name.clone(), d.below.clone())).collect()
    }

    fn pair(name: &str, below: Option<&str>) -> (String, Option<String>) {
        (name.to_string(), below.map(str::to_string))
    }

    #[test]
    fn a_partition_is_its_own_device_with_its_own_stat() {
        let sys = fake_sys();
        let found = devices_under(sys.path(), 252, 17);
        assert_eq!(names(&found), vec![pair("vdb1", None)]);
        assert!(found[0].dir.ends_with("vdb/vdb1"), "{:?}", found[0].dir);
        fs::write(found[0].dir.join("stat"), "5 0 40 1 0 0 0 0 0 1 1 0 0 0 0 0 0").unwrap();
        assert_eq!(read_counters(&found[0].dir).unwrap().read_sectors, 40, "the partition's own file is read");
        assert_eq!(
            read_counters(&sys.path().join("devices/pci0000:00/virtio3/block/vdb")).unwrap().read_sectors,
            96000
        );
    }

    #[test]
    fn stacked_devices_are_followed_recursively() {
        let sys = fake_sys();
        assert_eq!(
            names(&devices_under(sys.path(), 253, 1)),
            vec![
                pair("dm-1", None),
                pair("dm-0", Some("dm-1")),
                pair("loop0", Some("dm-0")),
                pair("loop1", Some("dm-0"))
            ]
        );
        // A partition of an md device sits on the md device's members.
        assert_eq!(names(&devices_under(sys.path(), 259, 0)), vec![pair("md0p1", None), pair("vdb1", Some("md0"))]);
    }

    #[test]
    fn no_block_device_of_that_number_is_no_device() {
        let sys = fake_sys();
        assert!(devices_under(sys.path(), 0, 45).is_empty(), "tmpfs and btrfs have anonymous numbers");
    }

    #[test]
    fn the_stat_fields_are_read_in_order() {
        let c = parse_stat(STAT).unwrap();
        assert_eq!(
            c,
            DiskCounters {
                read_ios: 1200,
                read_merges: 30,
                read_sectors: 96000,
                write_ios: 800,
                write_merges: 10,
                write_sectors: 64000,
                read_ticks_ms: 512,
                write_ticks_ms: 300,
                io_ticks_ms: 700,
                in_queue_ms: 812,
            }
        );
        // Old kernels have 11 fields: enough.
        assert_eq!(parse_stat("1 2 3 4 5 6 7 8 9 10 11").unwrap().write_sectors, 7);
    }

    #[test]
    fn a_missing_or_broken_stat_is_unknown() {
        let sys = fake_sys();
        let dir = sys.path().join("devices/virtual/block/loop0");
        fs::remove_file(dir.join("stat")).unwrap();
        let why = read_counters(&dir).unwrap_err();
        assert!(why.contains("loop0/stat") && why.contains("No such file"), "{why}");
        assert!(parse_stat("1 2 3").unwrap_err().contains("3 fields"));
        assert!(parse_stat("1 2 x 4 5 6 7").unwrap_err().contains("field 3"));
    }
}
