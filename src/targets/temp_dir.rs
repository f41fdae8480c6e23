//! The temporary directory of a run given no target (a temporary file, removed after the
//! run) and of a profile's run (a temporary folder): `$TMPDIR`, else `/tmp` (an empty
//! `TMPDIR=` is unset, never the current directory). It must be a directory this user can
//! write in, on a real filesystem: never a kernel interface (/proc), never /dev or another
//! devtmpfs (a 256 MiB file there is a file in the device directory, in memory). Refused
//! before anything is created, naming TMPDIR and the reason.
//!
//! It looks only (stat, statfs, access, /proc/self/mountinfo); it creates nothing.

use crate::diagnostics::error::UsageError;
use std::path::{Path, PathBuf};

/// The temporary directory a run with no target uses, once checked.
pub fn choose() -> Result<PathBuf, UsageError> {
    let from_env = std::env::var_os("TMPDIR").filter(|v| !v.is_empty()).map(PathBuf::from);
    let (dir, named) = match from_env {
        Some(dir) => {
            let named = format!("TMPDIR={}", dir.display());
            (dir, named)
        }
        None => (PathBuf::from("/tmp"), "/tmp (TMPDIR is not set)".to_string()),
    };
    check(&dir, &named)?;
    Ok(dir)
}

fn check(dir: &Path, named: &str) -> Result<(), UsageError> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| {
        Err(UsageError::new(format!(
            "the temporary directory {named} {why}: the run has no TARGET and would create its temporary file there; set TMPDIR to a writable directory on a real filesystem (or give a TARGET)"
        )))
    };
    if let Some(fs) = super::pseudo_fs::pseudo_filesystem(dir) {
        return refuse(format!("is on {fs}, a kernel interface"));
    }
    let meta = match std::fs::metadata(dir) {
        Ok(meta) => meta,
        Err(e) => return refuse(format!("cannot be used ({e})")),
    };
    if !meta.is_dir() {
        let kind = super::identity::special_kind(meta.file_type()).unwrap_or("a regular file");
        return refuse(format!("is {kind}, not a directory"));
    }
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let devtmpfs = super::fsinfo::mount_of_dev(meta.dev()).is_some_and(|m| m.fs_type == "devtmpfs");
    if devtmpfs || real.starts_with("/dev") {
        return refuse(format!("is on devtmpfs ({}), the device directory", real.display()));
    }
    if let Err(e) = nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK) {
        return refuse(format!("is not writable ({})", std::io::Error::from(e)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_dev_files_and_missing_directories_are_refused_naming_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        for (path, why) in [
            (Path::new("/proc"), "procfs"),
            (Path::new("/dev"), "devtmpfs"),
            (file.as_path(), "a regular file, not a directory"),
            (&dir.path().join("missing"), "No such file or directory"),
        ] {
            let e = check(path, "TMPDIR=x").unwrap_err().message;
            assert!(e.contains("TMPDIR=x") && e.contains(why), "{}: {e}", path.display());
        }
        check(dir.path(), "TMPDIR=x").unwrap();
    }
}
