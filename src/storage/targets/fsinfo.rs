//! Facts about where a target lives: its filesystem type and device (from
//! /proc/self/mountinfo), its O_DIRECT alignment (statx STATX_DIOALIGN, else
//! the device's logical block size), and whether it is memory-backed.
//! Reads only; never opens a target for writing.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Alignment assumed when nothing better is known.
pub const FALLBACK_DIO_ALIGN_BYTES: u64 = 4096;

/// The filesystem a path is on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountFacts {
    pub fs_type: String,
    pub source: String,
    pub mount_point: String,
    /// The filesystem's own options (mountinfo's super options: `data=journal`,
    /// `upperdir=...`).
    pub super_options: String,
}

impl MountFacts {
    /// One of the filesystem's own options (`data` of `data=journal`), when given.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.super_options.split(',').find_map(|o| o.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
    }

    /// True for filesystems that keep data in memory (O_DIRECT there measures memory).
    pub fn is_memory_backed(&self) -> bool {
        matches!(self.fs_type.as_str(), "tmpfs" | "ramfs" | "hugetlbfs" | "devtmpfs")
    }
}

/// The mount that holds device `dev` (st_dev of a file), from /proc/self/mountinfo.
pub fn mount_of_dev(dev: u64) -> Option<MountFacts> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let wanted = format!("{major}:{minor}");
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Several mounts can share a device (bind mounts); the last one listed is the most recent.
    text.lines().filter_map(parse_mountinfo_line).filter(|(id, _)| *id == wanted).map(|(_, m)| m).next_back()
}

/// The mount whose mount point is the longest prefix of `path` (an absolute path with no
/// symlinks), from /proc/self/mountinfo: for btrfs, whose files carry their subvolume's
/// device number rather than the mount's.
pub fn mount_of_path(path: &Path) -> Option<MountFacts> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines()
        .filter_map(parse_mountinfo_line)
        .map(|(_, m)| m)
        .filter(|m| path.starts_with(&m.mount_point))
        // The longest mount point; among equals, the last listed (the most recent).
        .fold(None, |best: Option<MountFacts>, m| match best {
            Some(b) if b.mount_point.len() > m.mount_point.len() => Some(b),
            _ => Some(m),
        })
}

/// Parses one mountinfo line into ("maj:min", facts).
fn parse_mountinfo_line(line: &str) -> Option<(String, MountFacts)> {
    let (left, right) = line.split_once(" - ")?;
    let mut left_fields = left.split(' ');
    let dev = left_fields.nth(2)?.to_string();
    let mount_point = left_fields.nth(1)?.replace("\\040", " ");
    let mut right_fields = right.split(' ');
    let fs_type = right_fields.next()?.to_string();
    let source = right_fields.next().unwrap_or("").to_string();
    let super_options = right_fields.next().unwrap_or("").to_string();
    Some((dev, MountFacts { fs_type, source, mount_point, super_options }))
}

/// O_DIRECT alignment of an existing file or block device from statx (offset, memory),
/// `None` when the kernel or filesystem does not report it.
pub fn statx_dio_align(path: &Path) -> Option<(u64, u64)> {
    crate::base::sys::statx::dio_align(path)
}

/// Logical block size of the block device `dev` (major:minor), from sysfs.
pub fn logical_block_size(dev: u64) -> Option<u64> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    // A partition has no queue/ of its own: its parent's is one directory up.
    for candidate in [format!("{base}/queue/logical_block_size"), format!("{base}/../queue/logical_block_size")] {
        if let Some(v) = fs::read_to_string(&candidate).ok().and_then(|t| t.trim().parse::<u64>().ok())
            && v > 0
        {
            return Some(v);
        }
    }
    None
}

/// The most bytes block device `dev` (major:minor) discards in one request, from sysfs
/// (`queue/discard_max_bytes`): 0 when it cannot discard, `None` when unknown.
pub fn discard_max_bytes(dev: u64) -> Option<u64> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    [format!("{base}/queue/discard_max_bytes"), format!("{base}/../queue/discard_max_bytes")]
        .iter()
        .find_map(|p| fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok()))
}

/// What block device `dev` (major:minor) says of its write cache, from sysfs
/// (`queue/write_cache`: "write back" is volatile, "write through" is not); `None` when
/// unknown.
pub fn write_cache(dev: u64) -> Option<String> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    [format!("{base}/queue/write_cache"), format!("{base}/../queue/write_cache")]
        .iter()
        .find_map(|p| fs::read_to_string(p).ok().map(|t| t.trim().to_string()))
}

/// The O_DIRECT offset alignment to plan with for `path` (existing or to be created
/// in `dir`): statx when it answers, else the device's logical block size, else 4096.
pub fn dio_align_for(path: &Path, existing: bool, dir_for_new: &Path) -> u64 {
    if existing && let Some((offset_align, _)) = statx_dio_align(path) {
        return offset_align;
    }
    let probe = if existing { path } else { dir_for_new };
    match fs::metadata(probe) {
        Ok(meta) => {
            use std::os::unix::fs::FileTypeExt;
            let dev = if meta.file_type().is_block_device() { meta.rdev() } else { meta.dev() };
            logical_block_size(dev).unwrap_or(FALLBACK_DIO_ALIGN_BYTES)
        }
        Err(_) => FALLBACK_DIO_ALIGN_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mountinfo() {
        let line = "29 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw";
        let (dev, m) = parse_mountinfo_line(line).unwrap();
        assert_eq!(dev, "254:0");
        assert_eq!(
            m,
            MountFacts {
                fs_type: "ext4".into(),
                source: "/dev/vda".into(),
                mount_point: "/".into(),
                super_options: "rw".into()
            }
        );
        assert!(!m.is_memory_backed());
    }

    #[test]
    fn finds_the_mount_of_the_temp_dir() {
        let meta = fs::metadata(std::env::temp_dir()).unwrap();
        let m = mount_of_dev(meta.dev()).expect("temp dir is mounted somewhere");
        assert!(!m.fs_type.is_empty());
    }
}
