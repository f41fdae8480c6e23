//! Calls on the process and its descriptors that no safe wrapper covers: malloc's arenas,
//! fsync of a descriptor held as a number.
//!
//! Kernel and libc calls behind safe functions; it imports nothing of the crate.

use std::io;
use std::os::fd::RawFd;

/// One malloc arena for the whole process (glibc's M_ARENA_MAX 1). Meant for the start of
/// `main`, before any thread exists: every thread would otherwise get an arena reserving
/// 64 MiB of address space. mallopt takes malloc's own lock, so a later call changes only
/// the arenas made after it.
pub fn one_malloc_arena() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes malloc's tuning, under malloc's lock; it takes no pointer.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// fsync(2) of the open descriptor `fd`. A descriptor number only: the caller keeps the file
/// open for the call (a closed number fails with EBADF, touching no memory).
pub fn fsync(fd: RawFd) -> io::Result<()> {
    // SAFETY: fsync takes a number and touches no memory of ours.
    if unsafe { libc::fsync(fd) } == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}
