//! Which loop devices a file or a block device backs. Writing to the backing
//! file or device of an attached loop device rewrites, under the kernel's feet,
//! whatever uses the loop device (a mounted filesystem, another loop device), and
//! sysfs `holders` does not show it. So every attached loop device is asked what
//! backs it (LOOP_GET_STATUS64: the backing file's device and inode, or the backing
//! device's number), which still answers when the backing path was renamed or
//! deleted. Only looks: each loop device is opened read-only for the ioctl.

use super::identity::FileId;
use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::Path;

/// The kernel's `struct loop_info64` (linux/loop.h).
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);

/// LOOP_GET_STATUS64 is the bare number 0x4C05, not an _IOR encoding.
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

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
    // SAFETY: zeroed bytes are a valid LoopInfo64 (plain integers and arrays).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 (size checked above) into
    // `info`, which we own and which outlives the call; the descriptor is open.
    let rc = unsafe { libc::ioctl(node.as_raw_fd(), LOOP_GET_STATUS64, &mut info as *mut LoopInfo64) };
    if rc != 0 {
        return None;
    }
    Some(LoopBacking {
        loop_name: loop_name.to_string(),
        file: FileId { dev: info.lo_device, ino: info.lo_inode },
        backing_rdev: (info.lo_rdevice != 0).then_some(info.lo_rdevice),
    })
}

/// The loop devices that `file` (a regular file) backs.
pub fn loops_backed_by_file(file: FileId) -> Vec<String> {
    attached_loops().into_iter().filter(|l| l.file == file).map(|l| l.loop_name).collect()
}
