//! The sync engine's system calls: pread(2), pwrite(2), fsync(2) and fdatasync(2), each
//! once (retrying after EINTR and continuing short transfers are the engine's, `mod.rs`).

use std::os::fd::RawFd;

/// pread(2) of `len` bytes at `offset` into `buf`: the bytes read, or -1 with errno set.
///
/// # Safety
/// `buf..buf + len` is memory of the caller's that nothing else touches during the call.
#[inline(always)]
pub(super) unsafe fn pread(fd: RawFd, buf: *mut u8, len: usize, offset: libc::off_t) -> isize {
    // SAFETY: the caller's contract.
    unsafe { libc::pread(fd, buf.cast(), len, offset) }
}

/// pwrite(2) of `len` bytes at `offset` from `buf`: the bytes written, or -1 with errno set.
///
/// # Safety
/// `buf..buf + len` is memory of the caller's that nothing else touches during the call.
#[inline(always)]
pub(super) unsafe fn pwrite(fd: RawFd, buf: *const u8, len: usize, offset: libc::off_t) -> isize {
    // SAFETY: the caller's contract.
    unsafe { libc::pwrite(fd, buf.cast(), len, offset) }
}

/// fsync(2): 0, or -1 with errno set.
pub(super) fn fsync(fd: RawFd) -> libc::c_int {
    // SAFETY: a plain system call on a descriptor; no memory is passed.
    unsafe { libc::fsync(fd) }
}

/// fdatasync(2): 0, or -1 with errno set.
pub(super) fn fdatasync(fd: RawFd) -> libc::c_int {
    // SAFETY: a plain system call on a descriptor; no memory is passed.
    unsafe { libc::fdatasync(fd) }
}
