//! Discards for `Op::Trim`: what each engine issues when it cannot hand a discard to its
//! kernel interface (sync, libaio, mmap always; io_uring on block devices).
//!
//! A file gets a punched hole (fallocate PUNCH_HOLE|KEEP_SIZE: the size stays, the blocks
//! are freed and read back as zeros); a block device gets BLKDISCARD (the device may read
//! back zeros or old data, as its `queue/discard_zeroes_data` says). Plain system calls:
//! this module knows nothing of slots or stats.

use std::os::fd::RawFd;

/// BLKDISCARD, `_IO(0x12, 119)` in linux/fs.h (not in the libc crate).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Whether `fd` is a block device (a discard is then BLKDISCARD, else a punched hole).
pub fn is_block_device(fd: RawFd) -> bool {
    // SAFETY: `stat` is plain old data, for which all zeros is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one `stat` we own; `fd` is a descriptor the worker keeps open.
    let r = unsafe { libc::fstat(fd, &mut st) };
    r == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFBLK
}

/// Discards `len_bytes` at `offset_bytes` of `fd`: 0, or a negated errno.
pub fn discard(fd: RawFd, block_device: bool, offset_bytes: u64, len_bytes: u64) -> i64 {
    loop {
        let r = if block_device {
            let range: [u64; 2] = [offset_bytes, len_bytes];
            // SAFETY: BLKDISCARD reads two u64 (start, length) from the array we own.
            unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
        } else {
            // SAFETY: a plain system call on a descriptor the worker keeps open; no memory.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset_bytes as libc::off_t,
                    len_bytes as libc::off_t,
                )
            }
        };
        if r == 0 {
            return 0;
        }
        let err = super::neg_errno();
        if err != -i64::from(libc::EINTR) {
            return err;
        }
    }
}

/// `is_block_device` of each descriptor, in order.
pub fn block_devices(fds: &[RawFd]) -> Box<[bool]> {
    fds.iter().map(|&fd| is_block_device(fd)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_discarded_range_of_a_file_is_a_hole_reading_zeros() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![0xAB; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        assert!(!is_block_device(f.as_raw_fd()));
        assert_eq!(discard(f.as_raw_fd(), false, 256 << 10, 128 << 10), 0);
        assert_eq!(f.metadata().unwrap().len(), 1 << 20, "the size stays");
        // SEEK_HOLE from the start finds the punched range.
        // SAFETY: lseek on a descriptor we own.
        let hole = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_HOLE) };
        assert_eq!(hole, 256 << 10);
        let mut back = vec![0u8; 1 << 20];
        f.seek(SeekFrom::Start(0)).unwrap();
        std::io::Read::read_exact(&mut f, &mut back).unwrap();
        assert!(back[256 << 10..384 << 10].iter().all(|&b| b == 0));
        assert!(back[..256 << 10].iter().chain(&back[384 << 10..]).all(|&b| b == 0xAB));
    }

    #[test]
    fn a_bad_descriptor_is_an_errno_not_a_panic() {
        assert_eq!(discard(-1, false, 0, 4096), -i64::from(libc::EBADF));
        assert_eq!(discard(-1, true, 0, 4096), -i64::from(libc::EBADF));
    }
}
