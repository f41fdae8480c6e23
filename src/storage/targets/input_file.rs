//! A text file the user names as input (a TOML job file, a fio job file, a fio `include`,
//! a sweep's `--csv` table given to `plot --sweep`), read only when it is what it should be: a regular file on a real filesystem,
//! of at most a given size. Never a kernel interface (`include /proc/self/environ` would
//! read the environment and echo it back in an error), a device (`/dev/zero` never ends), a
//! FIFO (which blocks) or a directory. The file is opened without blocking, judged by what
//! was opened (fstat), and read through a bound, so a file swapped or grown in between is
//! caught too.
//!
//! It reads and judges one file; it parses nothing.

use std::io::{self, Read};
use std::path::Path;

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputFileError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("is on {0}, a kernel interface, not a file")]
    PseudoFilesystem(&'static str),
    #[error("is {0}, not a regular file")]
    Special(&'static str),
    #[error("is larger than {} KiB, the most read of it", .0 >> 10)]
    TooLarge(u64),
    #[error("is not UTF-8 text")]
    NotText,
}

/// The text of the file at `path`, of at most `max_bytes`.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String, InputFileError> {
    let mut bytes = Vec::new();
    open(path, max_bytes)?.read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(InputFileError::TooLarge(max_bytes));
    }
    String::from_utf8(bytes).map_err(|_| InputFileError::NotText)
}

/// The file at `path` opened for reading, judged as `read_text` judges it, and bounded:
/// what is read stops one byte past `max_bytes` (a file growing meanwhile).
pub fn open(path: &Path, max_bytes: u64) -> Result<io::Take<std::fs::File>, InputFileError> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(fs) = crate::storage::targets::pseudo_fs::pseudo_filesystem(path) {
        return Err(InputFileError::PseudoFilesystem(fs));
    }
    // A socket cannot be opened at all: judged by its type first.
    if let Ok(meta) = std::fs::metadata(path)
        && let Some(kind) = crate::storage::targets::identity::special_kind(meta.file_type())
    {
        return Err(InputFileError::Special(kind));
    }
    let file = std::fs::OpenOptions::new().read(true).custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits()).open(path)?;
    let meta = file.metadata()?;
    if let Some(kind) = crate::storage::targets::identity::special_kind(meta.file_type()) {
        return Err(InputFileError::Special(kind));
    }
    if meta.len() > max_bytes {
        return Err(InputFileError::TooLarge(max_bytes));
    }
    Ok(file.take(max_bytes + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_interfaces_devices_fifos_and_large_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let ok = dir.path().join("ok");
        std::fs::write(&ok, "[a]\n").unwrap();
        let e = |p: &Path| read_text(p, 1024).unwrap_err().to_string();
        assert!(e(Path::new("/proc/self/environ")).contains("procfs"));
        assert!(e(Path::new("/dev/zero")).contains("character device"));
        assert!(e(&fifo).contains("FIFO"));
        assert!(e(dir.path()).contains("directory"));
        assert!(e(&big).contains("larger than 1 KiB"));
        assert_eq!(read_text(&ok, 1024).unwrap(), "[a]\n");
    }
}
