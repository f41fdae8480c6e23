//! The mmap engine's system calls: mapping a target shared, advice, msync, putting the
//! file back under pages the SIGBUS guard replaced, unmapping, and the size of what can
//! be mapped. Raw calls only: what to copy and when is the engine's (`mod.rs`).

use super::Madvise;
use std::io;
use std::os::fd::RawFd;

/// Whether `fd` was opened for reading and writing (F_GETFL).
pub(super) fn opened_for_writing(fd: RawFd) -> io::Result<bool> {
    // SAFETY: fcntl(F_GETFL) only reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(flags & libc::O_ACCMODE == libc::O_RDWR)
}

fn protection(writable: bool) -> libc::c_int {
    if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ }
}

/// A new shared mapping of the first `len` bytes of `fd`, prefaulted with `populate`.
pub(super) fn map_shared(fd: RawFd, len: usize, writable: bool, populate: bool) -> io::Result<*mut u8> {
    let flags = if populate { libc::MAP_SHARED | libc::MAP_POPULATE } else { libc::MAP_SHARED };
    // SAFETY: a new mapping at an address the kernel chooses; nothing else refers to that
    // range. The engine unmaps it (`unmap`).
    let base = unsafe { libc::mmap(std::ptr::null_mut(), len, protection(writable), flags, fd, 0) };
    if base == libc::MAP_FAILED { Err(io::Error::last_os_error()) } else { Ok(base.cast()) }
}

/// madvise(2) over a mapping.
///
/// # Safety
/// `base..base + len` is one of the engine's mappings.
pub(super) unsafe fn advise(base: *mut u8, len: usize, advice: Madvise) -> io::Result<()> {
    let code = match advice {
        Madvise::Random => libc::MADV_RANDOM,
        Madvise::Sequential => libc::MADV_SEQUENTIAL,
        Madvise::Hugepage => libc::MADV_HUGEPAGE,
        Madvise::Willneed => libc::MADV_WILLNEED,
    };
    // SAFETY: the range is one of the engine's mappings (the caller's contract); advice
    // changes no memory.
    if unsafe { libc::madvise(base.cast(), len, code) } == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// msync(MS_SYNC) over a mapping: its dirty pages written back and the device flushed.
///
/// # Safety
/// `base..base + len` is one of the engine's mappings.
pub(super) unsafe fn sync(base: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: the range is one of the engine's mappings; no memory is read or written.
    if unsafe { libc::msync(base.cast(), len, libc::MS_SYNC) } == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Maps `len` bytes of `fd` at `offset` back over `at` (MAP_FIXED), replacing what is there.
///
/// # Safety
/// `at..at + len` lies inside one of the engine's mappings of `fd`, page-aligned, and no
/// copy is running on it.
pub(super) unsafe fn remap_file(at: *mut u8, len: usize, writable: bool, fd: RawFd, offset: u64) -> io::Result<()> {
    // SAFETY: the caller's contract: the range is the engine's own, and nothing uses it now.
    let back = unsafe {
        libc::mmap(at.cast(), len, protection(writable), libc::MAP_SHARED | libc::MAP_FIXED, fd, offset as libc::off_t)
    };
    if back == libc::MAP_FAILED { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Unmaps one of the engine's mappings.
///
/// # Safety
/// `base..base + len` is a mapping of the engine's that nothing uses afterwards.
pub(super) unsafe fn unmap(base: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { libc::munmap(base.cast(), len) };
}

/// Bytes of `fd` that can be mapped: the size of a file, or of a block device.
pub(super) fn mappable_len(fd: RawFd) -> io::Result<u64> {
    // SAFETY: fstat writes one `stat` into memory we own.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        st
    };
    if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
        // SAFETY: lseek only moves the descriptor's offset, which no engine uses
        // (every I/O names its offset).
        let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
        if end < 0 {
            return Err(io::Error::last_os_error());
        }
        return Ok(end as u64);
    }
    Ok(st.st_size as u64)
}
