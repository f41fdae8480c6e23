//! Which loop devices a file or a block device backs. Writing to the backing
//! file or device of an attached loop device rewrites, under the kernel's feet,
//! whatever uses the loop device (a mounted filesystem, another loop device), and
//! sysfs `holders` does not show it. So every attached loop device is asked what
//! backs it (LOOP_GET_STATUS64: the backing file's device and inode, or the backing
//! device's number), which still answers when the backing path was renamed or
//! deleted. Only looks: each loop device is opened read-only for the ioctl.

use super::identity::FileId;
use std::fs::{self, File};
use std::path::Path;

/// What backs one attached loop device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopBacking {
    /// Kernel name, e.g. `loop3`.
    pub loop_name: String,
    /// The backing file (or device node) itself: its device and inode.
    pub file: FileId,
    /// The device number of the backing block device, when the loop is backed by one.
    pub backing_rdev: Option<u64>,
}

/// Whether the block device `name`, whose sysfs directory is `sysfs_dir`, is an attached
/// loop device: only those have a `loop` directory.
pub fn is_attached_loop(name: &str, sysfs_dir: &Path) -> bool {
    name.starts_with("loop") && sysfs_dir.join("loop").is_dir()
}

/// Every attached loop device and what backs it.
pub fn attached_loops() -> Vec<LoopBacking> {
    let Ok(entries) = fs::read_dir("/sys/block") else { return Vec::new() };
    let mut loops: Vec<LoopBacking> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            is_attached_loop(&name, &e.path()).then_some(name)
        })
        .filter_map(|name| backing_of(&name))
        .collect();
    loops.sort_by(|a, b| a.loop_name.cmp(&b.loop_name));
    loops
}

fn backing_of(loop_name: &str) -> Option<LoopBacking> {
    let node = File::open(format!("/dev/{loop_name}")).ok()?;
    let status = crate::base::sys::loop_status::of(&node)?;
    Some(LoopBacking {
        loop_name: loop_name.to_string(),
        file: FileId { dev: status.backing_dev, ino: status.backing_ino },
        backing_rdev: (status.backing_rdev != 0).then_some(status.backing_rdev),
    })
}

/// The loop devices that `file` (a regular file) backs.
pub fn loops_backed_by_file(file: FileId) -> Vec<String> {
    attached_loops().into_iter().filter(|l| l.file == file).map(|l| l.loop_name).collect()
}
