//! The kernel's view of a file's page cache: the page size, cachestat(2) (Linux 6.5+) and
//! mincore(2) over a read-only mapping that is never read through.
//!
//! Kernel calls behind safe functions; it imports nothing of the crate.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// The system's page size in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf reads a system constant; it takes no pointer and touches no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as u64 } else { 4096 }
}

/// cachestat(2)'s range (`struct cachestat_range`).
#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

/// cachestat(2)'s answer (`struct cachestat`), in pages.
#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// cachestat's system call number: 451 on x86_64 and aarch64 (the libc crate does not
/// name it there).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SYS_CACHESTAT: libc::c_long = 451;

/// Pages of the first `len_bytes` of `file` in the page cache, by cachestat(2).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn cached_pages(file: &File, len_bytes: u64) -> io::Result<u64> {
    let range = CachestatRange { off: 0, len: len_bytes };
    let mut stat = Cachestat::default();
    // SAFETY: cachestat reads `range` and writes one `struct cachestat` into `stat`, both
    // live, properly laid out (#[repr(C)], the kernel's field order) locals for the whole
    // call; the descriptor is borrowed from `file`, open for the call; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0 as libc::c_uint,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat.nr_cache)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn cached_pages(_file: &File, _len_bytes: u64) -> io::Result<u64> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "not called on this architecture"))
}

/// mincore(2) of `len` bytes of `file` at `offset` (page-aligned) into `vec`, one byte per
/// page (`vec` holds ceil(len / page size) bytes), through a fresh read-only shared mapping
/// that is never read through and is unmapped before returning.
pub fn resident_pages(file: &File, offset: u64, len: u64, vec: &mut [u8]) -> Result<(), String> {
    let map_offset = libc::off_t::try_from(offset).map_err(|_| "offset beyond off_t".to_string())?;
    if vec.len() as u64 != len.div_ceil(page_size()) {
        return Err(format!("mincore: {} bytes for {len} bytes of pages", vec.len()));
    }
    // SAFETY: a fresh read-only shared mapping of `len` bytes of the file at a page-aligned
    // offset; the kernel picks the address, so nothing of ours is replaced. It is never read
    // through (no page is faulted in) and is unmapped below.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_fd().as_raw_fd(),
            map_offset,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(format!("mmap: {}", io::Error::last_os_error()));
    }
    // SAFETY: `addr` is the start of the mapping of `len` bytes made above; `vec` holds one
    // byte per page of it (checked above), which mincore fills.
    let rc = unsafe { libc::mincore(addr, len as usize, vec.as_mut_ptr()) };
    let error = (rc != 0).then(io::Error::last_os_error);
    // SAFETY: unmaps exactly the mapping made above, which nothing else refers to.
    unsafe { libc::munmap(addr, len as usize) };
    match error {
        Some(e) => Err(format!("mincore: {e}")),
        None => Ok(()),
    }
}
