//! LOOP_GET_STATUS64 of a loop device: what backs it (the backing file's device and inode,
//! or the backing device's number).
//!
//! A kernel call behind a safe function; it imports nothing of the crate.

use std::fs::File;
use std::os::fd::AsRawFd;

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

/// What backs an attached loop device, as the kernel says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopStatus {
    /// The backing file (or device node): its device and inode.
    pub backing_dev: u64,
    pub backing_ino: u64,
    /// The backing block device's number (0 when a file backs it).
    pub backing_rdev: u64,
}

/// The status of the loop device open as `node` (read-only is enough); `None` when it is not
/// an attached loop device.
pub fn of(node: &File) -> Option<LoopStatus> {
    // SAFETY: zeroed bytes are a valid LoopInfo64 (plain integers and arrays).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 (size checked above) into
    // `info`, which we own and which outlives the call; the descriptor is open.
    let rc = unsafe { libc::ioctl(node.as_raw_fd(), LOOP_GET_STATUS64, &mut info as *mut LoopInfo64) };
    if rc != 0 {
        return None;
    }
    Some(LoopStatus { backing_dev: info.lo_device, backing_ino: info.lo_inode, backing_rdev: info.lo_rdevice })
}
