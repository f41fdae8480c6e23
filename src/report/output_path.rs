//! Where an output file may go, and how it is written there.
//!
//! Every output path (`--json`, `--timeseries`, `--csv`, `--plot`) passes one guard
//! before anything is touched: never a device (but /dev/null and the standard
//! streams), a directory, a FIFO or socket, a kernel pseudo-filesystem, one of the
//! run's own targets (by device and inode, so links count), or a path that another
//! output names too. Symlinks are followed for the checks: a link to /dev/loop0 is a
//! block device.
//!
//! Outputs are then written whole or not at all: to a temporary file beside the
//! (symlink-resolved) path, synced, and renamed into place, so a full disk or a
//! signal never leaves a half-written result where the old one was; a `--csv` row is
//! appended the same way (old table plus row, renamed over it). The standard streams
//! are written through this process's own descriptors.
//!
//! This module only checks paths and writes bytes it is given; it formats nothing.

use crate::error::UsageError;
use crate::targets::identity::{PathIdentity, special_kind};
use crate::targets::pseudo_fs::pseudo_filesystem;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Paths that are written as they are, with no temporary file: the bit bucket and the
/// process's own standard streams (whatever they were redirected to).
const STREAMS: &[(&str, Stream)] = &[
    ("/dev/null", Stream::Null),
    ("/dev/stdout", Stream::Stdout),
    ("/dev/fd/1", Stream::Stdout),
    ("/proc/self/fd/1", Stream::Stdout),
    ("/dev/stderr", Stream::Stderr),
    ("/dev/fd/2", Stream::Stderr),
    ("/proc/self/fd/2", Stream::Stderr),
];

#[derive(Clone, Copy)]
enum Stream {
    Null,
    Stdout,
    Stderr,
}

fn stream(path: &Path) -> Option<Stream> {
    STREAMS.iter().find(|(s, _)| Path::new(s) == path).map(|&(_, stream)| stream)
}

/// True for /dev/null and the standard streams.
fn is_stream(path: &Path) -> bool {
    stream(path).is_some()
}

/// Writes to a standard stream through this process's own descriptor: opening
/// /dev/stdout again would start a redirected file over at offset 0, over the report
/// already written to it.
fn write_stream(stream: Stream, bytes: &[u8]) -> io::Result<()> {
    match stream {
        Stream::Null => Ok(()),
        Stream::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Stream::Stderr => {
            let mut err = io::stderr().lock();
            err.write_all(bytes).and_then(|()| err.flush())
        }
    }
}

/// Names (a job file's job names) made fit to be part of a file name, in their order:
/// characters other than ASCII letters, digits, `.`, `_` and `-` become `_`, and a name
/// that would repeat an earlier one gets `-2`, `-3`, ... (`a/b` and `a_b` → `a_b`, `a_b-2`).
pub fn file_safe_names(names: &[&str]) -> Vec<String> {
    let mut safe_names: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let safe: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
            .collect();
        let mut candidate = safe.clone();
        let mut n = 2;
        while safe_names.contains(&candidate) {
            candidate = format!("{safe}-{n}");
            n += 1;
        }
        safe_names.push(candidate);
    }
    safe_names
}

fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// One output: the flag that named it, its path, and whether it is a file or a directory.
pub struct Output<'a> {
    pub flag: &'static str,
    pub path: &'a Path,
    pub is_dir: bool,
}

/// Checks every output against the guard, against the run's `targets` and against each
/// other. Looks only; creates and writes nothing.
pub fn check(outputs: &[Output<'_>], targets: &[PathBuf]) -> Result<(), UsageError> {
    let target_ids: Vec<(PathIdentity, &PathBuf)> =
        targets.iter().filter_map(|t| Some((PathIdentity::of(t)?, t))).collect();
    let mut seen: Vec<(PathIdentity, &Output<'_>)> = Vec::new();
    for out in outputs {
        if is_stream(out.path) {
            continue;
        }
        check_one(out)?;
        let Some(id) = PathIdentity::of(out.path) else { continue };
        if let Some((_, target)) = target_ids.iter().find(|(t, _)| *t == id) {
            return Err(UsageError::new(format!(
                "{} {} is the run's own target {}: writing the output there would destroy it; give another path",
                out.flag,
                out.path.display(),
                target.display()
            )));
        }
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
            return Err(UsageError::new(format!(
                "{} {} and {} {} are the same file: one output would overwrite the other; give each its own path",
                first.flag,
                first.path.display(),
                out.flag,
                out.path.display()
            )));
        }
        seen.push((id, out));
    }
    Ok(())
}

fn check_one(out: &Output<'_>) -> Result<(), UsageError> {
    let shown = out.path.display();
    let flag = out.flag;
    let refuse = |what: &str, fix: &str| Err(UsageError::new(format!("{flag} {shown} {what}: {fix}")));
    if let Some(fs) = pseudo_filesystem(out.path) {
        return refuse(&format!("is on {fs}, a kernel interface"), "give a path on a real filesystem");
    }
    match fs::metadata(out.path) {
        Ok(meta) => {
            let ft = meta.file_type();
            if out.is_dir {
                if !ft.is_dir() {
                    return refuse("exists and is not a directory", "give a directory (it is created if missing)");
                }
                return check_writable_dir(flag, out.path, out.path);
            }
            if let Some(kind) = special_kind(ft) {
                let fix = if ft.is_dir() {
                    "give a file name (e.g. inside it)"
                } else if ft.is_block_device() || ft.is_char_device() {
                    "outputs are never written to devices (only /dev/null and /dev/stdout, /dev/stderr); give a file path"
                } else {
                    "outputs are written to a temporary file and renamed into place; give a regular file path (or /dev/stdout)"
                };
                return refuse(&format!("is {kind}"), fix);
            }
            // A file this user may not write (read-only, immutable) is not replaced either:
            // found now, not after the run.
            if let Err(e) = nix::unistd::access(out.path, nix::unistd::AccessFlags::W_OK) {
                return refuse(
                    &format!("is not writable ({})", io::Error::from(e)),
                    "make it writable or give another path",
                );
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if out.path.symlink_metadata().is_ok() {
                return refuse("is a symbolic link to a missing file", "give the path of the file itself");
            }
        }
        Err(e) => return refuse(&format!("cannot be examined ({e})"), "give a path this user can reach"),
    }
    let resolved = resolve(out.path);
    let dir = parent_of(&resolved);
    if !dir.is_dir() {
        return Err(UsageError::new(format!(
            "{flag} {shown}: directory {} does not exist: create it first or give another path",
            dir.display()
        )));
    }
    check_writable_dir(flag, out.path, dir)
}

/// The output's directory must take a new file (the temporary one, then the rename).
fn check_writable_dir(flag: &str, path: &Path, dir: &Path) -> Result<(), UsageError> {
    use nix::unistd::{AccessFlags, access};
    access(dir, AccessFlags::W_OK | AccessFlags::X_OK).map_err(|e| {
        UsageError::new(format!(
            "{flag} {}: cannot write in directory {} ({}): give a path in a writable directory",
            path.display(),
            dir.display(),
            io::Error::from(e)
        ))
    })
}

/// The path a write lands on: symlinks followed to the real file when it exists.
fn resolve(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Writes `bytes` as the whole new content of `path`: beside it in a temporary file,
/// synced, then renamed over it (keeping an existing file's permissions). /dev/null and
/// the standard streams are written directly.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(stream) = stream(path) {
        return write_stream(stream, bytes);
    }
    replace(&resolve(path), None, |tmp| tmp.write_all(bytes))
}

/// Replaces `resolved` (a path with its symlinks followed) with a new file that `fill`
/// writes: a temporary file beside it, synced, renamed over it. Permissions are those of
/// the file replaced (`existing`, or what is there now), else 0666 less the umask.
fn replace(
    resolved: &Path,
    existing: Option<&fs::Metadata>,
    fill: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let now = regular_or_missing(resolved)?;
    let dir = parent_of(resolved);
    let name = resolved.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut tmp = tempfile::Builder::new().prefix(&format!(".{name}.")).suffix(".iopulse-tmp").tempfile_in(dir)?;
    let mode = match existing.or(now.as_ref()) {
        Some(m) => m.permissions().mode() & 0o7777,
        None => 0o666 & !umask(),
    };
    tmp.as_file().set_permissions(fs::Permissions::from_mode(mode))?;
    fill(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    // On failure the temporary file is removed when `tmp` (in the error) is dropped.
    tmp.persist(resolved).map_err(|e| e.error)?;
    Ok(())
}

/// What is at `resolved` now: a regular file, or nothing. The guard looked before the
/// run; opening or renaming over whatever is there now could reach a device node, a FIFO,
/// a directory or a dangling symlink that appeared since, so those are an error.
fn regular_or_missing(resolved: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(resolved) {
        Ok(meta) => match special_kind(meta.file_type()) {
            Some(kind) => Err(io::Error::other(format!(
                "{} is now {kind}, not a regular file: left as it is",
                resolved.display()
            ))),
            None => Ok(Some(meta)),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Adds `bytes` (given whether the file is new or empty, to put a header first) at the
/// end of `path`, whole or not at all: the old content and the new bytes go to a
/// temporary file that is renamed over it, so a full disk or a signal leaves the old file
/// (or none) as it was. Runs of a sweep may append to one table at once: each holds an
/// exclusive lock on the file it copies, and starts again if another replaced it meanwhile.
pub fn append_whole(path: &Path, bytes: impl FnOnce(bool) -> Vec<u8>) -> io::Result<()> {
    if let Some(stream) = stream(path) {
        return write_stream(stream, &bytes(true));
    }
    let resolved = resolve(path);
    let mut bytes = bytes;
    // Each new attempt means another run replaced the table meanwhile: bounded, so that a
    // path that never stops changing cannot hold this run for ever.
    for _ in 0..1000 {
        regular_or_missing(&resolved)?;
        // An empty file stands in for a missing one while it is locked (and is removed if
        // the append fails).
        let (file, created) = match OpenOptions::new().read(true).write(true).open(&resolved) {
            Ok(file) => (file, false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match OpenOptions::new().read(true).write(true).create_new(true).open(&resolved) {
                    Ok(file) => (file, true),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let opened = file.metadata()?;
        match append_locked(file, &resolved, bytes) {
            Ok(None) => return Ok(()),
            Ok(Some(unused)) => bytes = unused,
            Err(e) => {
                if created && fs::metadata(&resolved).is_ok_and(|m| same_file(&m, &opened)) {
                    let _ = fs::remove_file(&resolved);
                }
                return Err(e);
            }
        }
    }
    Err(io::Error::other(format!("{} kept being replaced by other programs: not appended to", resolved.display())))
}

/// Under an exclusive lock on `file`: when it is still the file at `resolved`, replaces it
/// with its content and then `bytes` (`None`); else gives `bytes` back to try again.
fn append_locked<F: FnOnce(bool) -> Vec<u8>>(file: fs::File, resolved: &Path, bytes: F) -> io::Result<Option<F>> {
    use nix::fcntl::{Flock, FlockArg};
    let mut file = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| io::Error::from(e))?;
    let locked = file.metadata()?;
    if !fs::metadata(resolved).is_ok_and(|m| same_file(&m, &locked)) {
        return Ok(Some(bytes)); // another run renamed its table over this one: copy that
    }
    let new_bytes = bytes(locked.len() == 0);
    replace(resolved, Some(&locked), |tmp| {
        io::copy(&mut *file, tmp)?;
        tmp.write_all(&new_bytes)
    })?;
    Ok(None)
}

/// The process's umask, from /proc/self/status (reading it with umask(2) would change it).
fn umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_safe_names_keep_letters_and_stay_apart() {
        assert_eq!(file_safe_names(&["db-1.x", "a/b c", "a_b_c", "a_b_c"]), ["db-1.x", "a_b_c", "a_b_c-2", "a_b_c-3"]);
        assert_eq!(file_safe_names(&["..", "é"]), ["..", "_"]);
    }

    fn out<'a>(flag: &'static str, path: &'a Path) -> Output<'a> {
        Output { flag, path, is_dir: false }
    }

    #[test]
    fn a_target_or_a_link_to_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.dat");
        fs::write(&target, b"data").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link")).unwrap();
        let targets = vec![target.clone()];
        for p in [target.clone(), dir.path().join("link")] {
            let e = check(&[out("--json", &p)], &targets).unwrap_err();
            assert!(e.message.contains("--json") && e.message.contains("own target"), "{}", e.message);
        }
        // A target not created yet is matched by its resolved path.
        let new_target = dir.path().join("new.dat");
        let spelled = dir.path().join(".").join("new.dat");
        let e = check(&[out("--timeseries", &spelled)], &[new_target]).unwrap_err();
        assert!(e.message.contains("own target"), "{}", e.message);
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        let e = check(&[out("--json", &p), out("--csv", &p)], &[]).unwrap_err();
        assert!(e.message.contains("--json") && e.message.contains("--csv"), "{}", e.message);
        check(&[out("--json", &p), out("--csv", &dir.path().join("r.csv"))], &[]).unwrap();
    }

    #[test]
    fn devices_fifos_directories_and_proc_are_refused_but_streams_pass() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for (p, what) in [
            (Path::new("/dev/full"), "device"),
            (Path::new("/dev/zero"), "device"),
            (fifo.as_path(), "FIFO"),
            (dir.path(), "directory"),
            (Path::new("/proc/version"), "kernel interface"),
        ] {
            let e = check(&[out("--json", p)], &[]).unwrap_err();
            assert!(e.message.contains(what), "{}: {}", p.display(), e.message);
        }
        check(&[out("--json", Path::new("/dev/null")), out("--csv", Path::new("/dev/stdout"))], &[]).unwrap();
    }

    #[test]
    fn whole_writes_replace_and_keep_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_whole(&p, b"first").unwrap();
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o666 & !umask());
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
        // Only the result is left in the directory: no temporary file.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn appends_add_the_header_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        for _ in 0..2 {
            append_whole(&p, |new| if new { b"h\nrow\n".to_vec() } else { b"row\n".to_vec() }).unwrap();
        }
        assert_eq!(fs::read_to_string(&p).unwrap(), "h\nrow\nrow\n");
    }

    #[test]
    fn appends_replace_the_file_whole_and_keep_its_mode() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        fs::write(&p, b"h\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o604)).unwrap();
        let old_ino = fs::metadata(&p).unwrap().ino();
        append_whole(&p, |new| if new { b"h\nrow\n".to_vec() } else { b"row\n".to_vec() }).unwrap();
        let meta = fs::metadata(&p).unwrap();
        assert_ne!(meta.ino(), old_ino, "a new file was renamed into place");
        assert_eq!(meta.permissions().mode() & 0o777, 0o604);
        assert_eq!(fs::read_to_string(&p).unwrap(), "h\nrow\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }

    #[test]
    fn concurrent_appends_lose_no_row() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        std::thread::scope(|s| {
            for t in 0..8 {
                let p = &p;
                s.spawn(move || {
                    for i in 0..10 {
                        let row = format!("{t}-{i}\n");
                        append_whole(p, |new| if new { format!("h\n{row}") } else { row }.into_bytes()).unwrap();
                    }
                });
            }
        });
        let text = fs::read_to_string(&p).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.remove(0), "h", "one header, first");
        lines.sort_unstable();
        lines.dedup();
        assert_eq!(lines.len(), 80, "every row, once: {text}");
    }

    #[test]
    fn a_path_that_became_a_device_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("r.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = write_whole(&link, b"{}").unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(write_whole(&fifo, b"{}").unwrap_err().to_string().contains("FIFO"));
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is left");
        assert!(append_whole(&fifo, |_| b"row\n".to_vec()).unwrap_err().to_string().contains("FIFO"));
        // A dangling link is neither followed nor replaced (and the append does not spin).
        let dangling = dir.path().join("s.csv");
        std::os::unix::fs::symlink(dir.path().join("missing/s.csv"), &dangling).unwrap();
        let e = append_whole(&dangling, |_| b"row\n".to_vec()).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(write_whole(&dangling, b"{}").unwrap_err().to_string().contains("symbolic link"));
        assert!(fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink(), "the link is left");
    }
}
