//! The temporary directory of a run given no target (a temporary file, removed after the
//! run) and of a profile's run (a temporary folder): `$TMPDIR`, else `/tmp` (an empty
//! `TMPDIR=` is unset, never the current directory). It must be a directory this user can
//! write in, on a real filesystem: never a kernel interface (/proc), never /dev or another
//! devtmpfs (a 256 MiB file there is a file in the device directory, in memory). Refused
//! before anything is created, naming TMPDIR and the reason.
//!
//! A profile run with no target measures a disk (`on_disk`): where $TMPDIR is in memory
//! (tmpfs, ramfs: Fedora's and Arch's /tmp), the user's cache directory
//! ($XDG_CACHE_HOME, else ~/.cache) when it exists and is on a disk; when none is, $TMPDIR
//! still, said once with the fix.
//!
//! It looks only (stat, statfs, access, /proc/self/mountinfo); it creates nothing.

use crate::base::diagnostics::error::UsageError;
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

/// Where a profile run with no target puts its file, and what to say about the choice.
#[derive(Debug)]
pub struct Place {
    pub dir: PathBuf,
    /// Said above the table: why the file is not in $TMPDIR, or that it is in memory.
    pub said: Option<String>,
    /// No disk-backed place was found: the figures are memory's (a warning, said once).
    pub in_memory: bool,
}

/// The place of a profile run with no target: $TMPDIR (checked as `choose`) when it is on
/// a disk; else the first of $XDG_CACHE_HOME, ~/.cache that exists, passes the same checks
/// and is on a disk; else $TMPDIR, in memory.
pub fn on_disk() -> Result<Place, UsageError> {
    let tmp = choose()?;
    let Some(fs) = in_memory(&tmp) else { return Ok(Place { dir: tmp, said: None, in_memory: false }) };
    let env = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    let candidates: Vec<(PathBuf, String)> = [
        env("XDG_CACHE_HOME").filter(|p| p.is_absolute()).map(|p| (p, "$XDG_CACHE_HOME".to_string())),
        env("HOME").map(|h| (h.join(".cache"), "~/.cache".to_string())),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (dir, name) in &candidates {
        if check(dir, name).is_ok() && in_memory(dir).is_none() {
            return Ok(Place {
                said: Some(format!(
                    "$TMPDIR ({}) is in memory ({fs}): the file is in {name} ({}), on a disk",
                    tmp.display(),
                    dir.display()
                )),
                dir: dir.clone(),
                in_memory: false,
            });
        }
    }
    let tried = if candidates.is_empty() {
        "$XDG_CACHE_HOME and $HOME are not set".to_string()
    } else {
        format!(
            "neither {} is a directory on a disk",
            candidates.iter().map(|c| c.1.as_str()).collect::<Vec<_>>().join(" nor ")
        )
    };
    Ok(Place {
        said: Some(format!(
            "$TMPDIR ({}) is in memory ({fs}) and {tried}: these figures are memory's, not a disk's; give a file on the disk to test (iopulse --profile default /path/on/disk/test.dat) or set TMPDIR to a directory on it",
            tmp.display()
        )),
        dir: tmp,
        in_memory: true,
    })
}

/// The memory filesystem `dir` is on (`tmpfs`, `ramfs`), if it is.
fn in_memory(dir: &Path) -> Option<&'static str> {
    super::device_witness::sysfs::memory_filesystem(dir.to_str()?)
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
