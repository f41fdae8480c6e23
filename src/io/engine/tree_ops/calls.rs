//! The sync worker's operations on a tree: plain system calls (`openat`, `read`, `write`,
//! `close`, `statx`, `getdents64`, `renameat`, `unlinkat`, `mkdirat`, `unlinkat` with
//! AT_REMOVEDIR, `fsync`) on paths relative to the tree's root descriptor. Each returns
//! the bytes it moved (or entries read) or the errno; it never times, counts or formats
//! (`io/metadata/worker.rs` does).

use super::RelPath;
use std::os::fd::RawFd;

/// An operation's outcome: bytes moved, or the errno it failed with.
pub type OpResult = Result<u64, i32>;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Opens a name of the tree, never through a symbolic link at it (O_NOFOLLOW: a link put
/// in the tree's place fails the operation with ELOOP instead of reaching another file).
fn open(root: RawFd, path: &RelPath, flags: i32) -> Result<RawFd, i32> {
    // SAFETY: `path` is NUL-terminated inside its buffer; openat reads it and returns a new
    // descriptor (or -1), touching no memory of ours.
    let fd = unsafe { libc::openat(root, path.c_ptr(), flags | libc::O_CLOEXEC | libc::O_NOFOLLOW, 0o644) };
    if fd < 0 { Err(errno()) } else { Ok(fd) }
}

fn close(fd: RawFd) -> Result<(), i32> {
    // SAFETY: `fd` was opened by this module and is closed once, here.
    if unsafe { libc::close(fd) } < 0 { Err(errno()) } else { Ok(()) }
}

/// Writes `size_bytes` from `buf` (repeated) at the descriptor's position.
fn write_all(fd: RawFd, buf: &[u8], size_bytes: u64) -> OpResult {
    let mut left = size_bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        // SAFETY: `buf` is valid for `n <= buf.len()` bytes for the call's length.
        let done = unsafe { libc::write(fd, buf.as_ptr().cast(), n) };
        if done < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if done == 0 {
            return Err(libc::EIO);
        }
        left -= done as u64;
    }
    Ok(size_bytes)
}

/// Runs `body` on a descriptor opened with `flags`, then closes it; the first error wins.
fn with_open(root: RawFd, path: &RelPath, flags: i32, body: impl FnOnce(RawFd) -> OpResult) -> OpResult {
    let fd = open(root, path, flags)?;
    let result = body(fd);
    let closed = close(fd);
    let bytes = result?;
    closed?;
    Ok(bytes)
}

/// create: open with O_CREAT|O_EXCL, write `size_bytes`, close.
pub fn create(root: RawFd, path: &RelPath, buf: &[u8], size_bytes: u64) -> OpResult {
    with_open(root, path, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, |fd| write_all(fd, buf, size_bytes))
}

/// create for the set-up: as `create`, but a file already there is written over (a
/// set-up interrupted before is completed, never refused).
pub fn create_or_fill(root: RawFd, path: &RelPath, buf: &[u8], size_bytes: u64) -> OpResult {
    with_open(root, path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, |fd| write_all(fd, buf, size_bytes))
}

/// open-read-close of the whole file.
pub fn read_whole(root: RawFd, path: &RelPath, buf: &mut [u8]) -> OpResult {
    with_open(root, path, libc::O_RDONLY, |fd| {
        let mut total = 0u64;
        loop {
            // SAFETY: `buf` is valid and writable for `buf.len()` bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = errno();
                if e == libc::EINTR {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
        }
    })
}

/// open-write-close: the file's `size_bytes` written over from its start.
pub fn write_whole(root: RawFd, path: &RelPath, buf: &[u8], size_bytes: u64) -> OpResult {
    with_open(root, path, libc::O_WRONLY, |fd| write_all(fd, buf, size_bytes))
}

/// open with O_APPEND, write `len_bytes`, close.
pub fn append(root: RawFd, path: &RelPath, buf: &[u8], len_bytes: u64) -> OpResult {
    with_open(root, path, libc::O_WRONLY | libc::O_APPEND, |fd| write_all(fd, buf, len_bytes))
}

/// stat of a file (its size is not counted as bytes moved).
pub fn stat(root: RawFd, path: &RelPath) -> OpResult {
    // SAFETY: a zeroed statx is a valid value for the kernel to fill.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: the path is NUL-terminated; `st` is a valid, writable statx.
    let r = unsafe { libc::statx(root, path.c_ptr(), libc::AT_SYMLINK_NOFOLLOW, libc::STATX_BASIC_STATS, &mut st) };
    if r < 0 { Err(errno()) } else { Ok(0) }
}

/// open a directory, read all its entries, close; returns the entries read (not bytes).
pub fn readdir(root: RawFd, path: &RelPath, buf: &mut [u8]) -> OpResult {
    with_open(root, path, libc::O_RDONLY | libc::O_DIRECTORY, |fd| {
        let mut entries = 0u64;
        loop {
            // SAFETY: `buf` is valid and writable for `buf.len()` bytes; getdents64 fills it.
            let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
            if n < 0 {
                return Err(errno());
            }
            if n == 0 {
                return Ok(entries);
            }
            let mut at = 0usize;
            while at + 19 <= n as usize {
                // d_reclen: bytes 16..18 of a linux_dirent64.
                let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                entries += 1;
                at += reclen;
            }
        }
    })
}

/// rename `from` to `to` (both relative to the root).
pub fn rename(root: RawFd, from: &RelPath, to: &RelPath) -> OpResult {
    // SAFETY: both paths are NUL-terminated inside their buffers.
    let r = unsafe { libc::renameat(root, from.c_ptr(), root, to.c_ptr()) };
    if r < 0 { Err(errno()) } else { Ok(0) }
}

/// unlink a file.
pub fn unlink(root: RawFd, path: &RelPath) -> OpResult {
    // SAFETY: the path is NUL-terminated inside its buffer.
    let r = unsafe { libc::unlinkat(root, path.c_ptr(), 0) };
    if r < 0 { Err(errno()) } else { Ok(0) }
}

/// mkdir.
pub fn mkdir(root: RawFd, path: &RelPath) -> OpResult {
    // SAFETY: the path is NUL-terminated inside its buffer.
    let r = unsafe { libc::mkdirat(root, path.c_ptr(), 0o755) };
    if r < 0 { Err(errno()) } else { Ok(0) }
}

/// rmdir.
pub fn rmdir(root: RawFd, path: &RelPath) -> OpResult {
    // SAFETY: the path is NUL-terminated inside its buffer.
    let r = unsafe { libc::unlinkat(root, path.c_ptr(), libc::AT_REMOVEDIR) };
    if r < 0 { Err(errno()) } else { Ok(0) }
}

/// open a file (or, `dir`, a directory), fsync it, close.
pub fn fsync(root: RawFd, path: &RelPath, dir: bool) -> OpResult {
    let flags = if dir { libc::O_RDONLY | libc::O_DIRECTORY } else { libc::O_WRONLY };
    with_open(root, path, flags, |fd| {
        // SAFETY: `fd` is open for the call's length.
        if unsafe { libc::fsync(fd) } < 0 { Err(errno()) } else { Ok(0) }
    })
}
