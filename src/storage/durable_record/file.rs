//! The durable record's file as a command meets it: opened for a run without following a
//! link and locked for the run (`open_locked`; `durable_format::create` then writes it), and
//! read back for `iopulse verify`, bounded (`read`; `durable_format::decode` judges the
//! bytes).
//!
//! Must not: know the layout (`durable_format` does) or write a record's bytes.

use crate::io::durable_format::{MAX_FILE_BYTES, Record, RecordError};
use crate::storage::targets::input_file::{self, InputFileError};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

/// A record's file, open and locked for this run (the lock goes with the last handle).
pub struct LockedRecord {
    file: Arc<File>,
    _lock: crate::storage::ledger::lock::Held,
}

/// Why a record's file was not opened for a run.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Another run holds it (`lock::LockError::Busy`, with its pid).
    #[error("{0}")]
    Busy(crate::storage::ledger::lock::LockError),
    #[error("is {0}, not a regular file: the record is written in place; give a file path")]
    NotRegular(&'static str),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Opens (creating it if missing) the record's file at `path` for this run, without
/// following a final symbolic link (`path` is where the ledger's guard saw it land), and
/// takes an exclusive lock on it: a second run given the same record is refused. Touches
/// nothing of the file's bytes.
pub fn open_locked(path: &Path) -> Result<LockedRecord, OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |create_new: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create_new)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
    };
    let file = match open(true) {
        Ok(file) => {
            // The new name is durable once its directory is: a crash must not lose the
            // record of writes it promised.
            sync_directory_of(path)?;
            file
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open(false)?,
        Err(e) => return Err(e.into()),
    };
    if let Some(kind) = crate::storage::targets::identity::special_kind(file.metadata()?.file_type()) {
        return Err(OpenError::NotRegular(kind));
    }
    let held = match crate::storage::ledger::lock::exclusive(file.try_clone()?) {
        Ok(held) => held,
        Err(crate::storage::ledger::lock::LockError::Io(e)) => return Err(e.into()),
        Err(busy) => return Err(OpenError::Busy(busy)),
    };
    Ok(LockedRecord { file: Arc::new(file), _lock: held })
}

/// fsync of the directory holding `path`: a new name is durable once its directory is.
fn sync_directory_of(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

impl LockedRecord {
    /// The open file, for `durable_format::create` and the workers' writers.
    pub fn file(&self) -> &Arc<File> {
        &self.file
    }
}

/// Why a state file was not read: the file (missing, too large, not regular), or its bytes.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Input(#[from] InputFileError),
    #[error("{0}")]
    Record(#[from] RecordError),
}

/// Reads the state file at `path` (a regular file of at most `MAX_FILE_BYTES`).
pub fn read(path: &Path) -> Result<Record, ReadError> {
    let mut bytes = Vec::new();
    input_file::open(path, MAX_FILE_BYTES)?.read_to_end(&mut bytes).map_err(InputFileError::Io)?;
    Ok(crate::io::durable_format::decode(&bytes)?)
}
