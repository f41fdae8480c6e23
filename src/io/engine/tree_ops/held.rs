//! A flow's operations on a file it holds open between steps (`--meta-flow`, filebench's
//! flowops on an `fd=`): open or create it, read it whole, write it whole, append to its
//! end, fsync it, close it. Each returns the bytes it moved or the errno; it never times,
//! counts or chooses a file (`io/metadata/flow.rs` does).

use super::RelPath;
use super::calls::OpResult;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// A file of the tree held open by a flow. Dropped unclosed (the run stopped between its
/// open and its close), it is closed then, untimed.
#[derive(Debug)]
pub struct HeldFile(OwnedFd);

impl HeldFile {
    /// Opens a file of the tree for reading and writing (with `create`, a new empty one,
    /// O_CREAT|O_EXCL), never through a symbolic link at its name.
    pub fn open(root: RawFd, path: &RelPath, create: bool) -> Result<HeldFile, i32> {
        let mut flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        if create {
            flags |= libc::O_CREAT | libc::O_EXCL;
        }
        // SAFETY: `path` is NUL-terminated inside its buffer; openat reads it and returns a
        // new descriptor (or -1), touching no memory of ours.
        let fd = unsafe { libc::openat(root, path.c_ptr(), flags, 0o644) };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(HeldFile(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Reads the file from its start to its end in reads of `buf`'s length.
    pub fn read_whole(&self, buf: &mut [u8]) -> OpResult {
        let mut total = 0u64;
        loop {
            // SAFETY: `buf` is valid and writable for `buf.len()` bytes; the descriptor is open.
            let n = unsafe { libc::pread(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), total as i64) };
            if n < 0 {
                match errno() {
                    libc::EINTR => continue,
                    e => return Err(e),
                }
            }
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
        }
    }

    /// Writes `size_bytes` from its start, from `buf` (repeated), in writes of its length.
    pub fn write_whole(&self, buf: &[u8], size_bytes: u64) -> OpResult {
        self.write_all(buf, size_bytes, Some(0))
    }

    /// Seeks to the file's end and writes `len_bytes` there (as filebench's appendfilerand:
    /// no O_APPEND, so writers of one file at once may meet at one end).
    pub fn append(&self, buf: &[u8], len_bytes: u64) -> OpResult {
        // SAFETY: the descriptor is open; lseek touches no memory of ours.
        if unsafe { libc::lseek(self.0.as_raw_fd(), 0, libc::SEEK_END) } < 0 {
            return Err(errno());
        }
        self.write_all(buf, len_bytes, None)
    }

    /// Writes `len_bytes` from `buf` (repeated): at `at` and on (pwrite), or at the
    /// descriptor's position (write).
    fn write_all(&self, buf: &[u8], len_bytes: u64, at: Option<u64>) -> OpResult {
        let fd = self.0.as_raw_fd();
        let mut done = 0u64;
        while done < len_bytes {
            let n = (len_bytes - done).min(buf.len() as u64) as usize;
            let wrote = match at {
                // SAFETY: `buf` is valid for `n <= buf.len()` bytes; the descriptor is open.
                Some(start) => unsafe { libc::pwrite(fd, buf.as_ptr().cast(), n, (start + done) as i64) },
                // SAFETY: as above.
                None => unsafe { libc::write(fd, buf.as_ptr().cast(), n) },
            };
            if wrote < 0 {
                match errno() {
                    libc::EINTR => continue,
                    e => return Err(e),
                }
            }
            if wrote == 0 {
                return Err(libc::EIO);
            }
            done += wrote as u64;
        }
        Ok(len_bytes)
    }

    pub fn fsync(&self) -> OpResult {
        // SAFETY: the descriptor is open for the call's length.
        if unsafe { libc::fsync(self.0.as_raw_fd()) } < 0 { Err(errno()) } else { Ok(0) }
    }

    /// Closes the file, its error returned (a drop would lose it).
    pub fn close(self) -> OpResult {
        let fd = self.0.into_raw_fd();
        // SAFETY: `fd` was owned by this HeldFile, which gave it up: closed once, here.
        if unsafe { libc::close(fd) } < 0 { Err(errno()) } else { Ok(0) }
    }
}
