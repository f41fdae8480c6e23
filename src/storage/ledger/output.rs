//! How an output is written: whole or not at all, and only where the ledger's guard
//! (`ledger::guard`) passed it before anything was touched.
//!
//! A file is written to a temporary file beside where the path lands, synced, and renamed
//! into place, so a full disk or a signal never leaves a half-written result where the old
//! one was; a `--csv` row is appended the same way (old table plus row, renamed over it),
//! after a newline when the table's last line lacks one. The standard streams (/dev/stdout,
//! /dev/stderr, /dev/fd/1, /dev/fd/2) and /dev/null are written through this process's own
//! descriptors and never read back (a `--csv` header is written to a stream once).
//!
//! At write time a path is judged again: what is there must be a regular file or nothing, a
//! symlink is followed only to where the guard saw an output land (`ledger::judged`), and
//! nothing is ever written over a target or an input, so a link made or changed during the
//! run (or one no guard saw) cannot make a chart replace a target.
//!
//! This module only writes bytes it is given; it formats nothing and judges no ledger.

use crate::storage::ledger::judged;
use crate::storage::targets::identity::{landing, special_kind};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

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

/// True for /dev/null and the standard streams: written through this process's own
/// descriptors, never opened, read back or given a journal.
pub use crate::storage::ledger::guard::is_stream;

/// A `--csv` header went to the stream already (a sweep appends a row per run).
static STDOUT_HAS_HEADER: AtomicBool = AtomicBool::new(false);
static STDERR_HAS_HEADER: AtomicBool = AtomicBool::new(false);

/// Writes to a standard stream through this process's own descriptor: opening
/// /dev/stdout again would start a redirected file over at offset 0, over the report
/// already written to it, and reading it would wait on the pipe it is.
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

/// Where a write of `path` goes, judged at write time: what is there now (`landing`) must
/// be a regular file or nothing; a symlink is followed only to where the guard saw it land
/// (a link made or changed since, or one no guard saw, is left as it is); and never onto a
/// target or an input of the run, whatever the path.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let landed = landing(path);
    regular_or_missing(&landed)?;
    let is_link = path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
    if is_link && fs::metadata(path).is_err() {
        return Err(io::Error::other(format!(
            "{} is now a symbolic link to a missing file: left as it is",
            path.display()
        )));
    }
    if !judged::is_output_landing(&landed) {
        let what = if is_link {
            format!("a symbolic link to {}, where no output was checked before the run: not followed", landed.display())
        } else {
            "not in the command's ledger: no output was checked there before the run".to_string()
        };
        return Err(io::Error::other(format!("{} is {what}, nothing replaced", path.display())));
    }
    if let Some(shown) = judged::protected_at(&landed) {
        return Err(io::Error::other(format!("{} is now {shown}: not replaced", path.display())));
    }
    Ok(landed)
}

/// Writes `bytes` as the whole new content of `path`: beside it in a temporary file,
/// synced, then renamed over it (keeping an existing file's permissions). /dev/null and
/// the standard streams are written directly.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(stream) = stream(path) {
        return write_stream(stream, bytes);
    }
    replace(&resolve(path)?, None, |tmp| tmp.write_all(bytes))
}

/// The file a journal line is appended to (`figures/sweep/journal.rs`), judged as `write_whole`
/// judges its path: where the guard saw it land, never a target or an input.
pub fn append_target(path: &Path) -> io::Result<PathBuf> {
    resolve(path)
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
/// (or none) as it was. A last line without its newline gets one first: the new bytes
/// always start a line. Runs of a sweep may append to one table at once: each holds an
/// exclusive lock on the file it copies, and starts again if another replaced it meanwhile.
/// A stream is written as it is, with the header the first time only.
pub fn append_whole(path: &Path, bytes: impl FnOnce(bool) -> Vec<u8>) -> io::Result<()> {
    if let Some(stream) = stream(path) {
        let first = match stream {
            Stream::Null => true,
            Stream::Stdout => !STDOUT_HAS_HEADER.swap(true, Ordering::Relaxed),
            Stream::Stderr => !STDERR_HAS_HEADER.swap(true, Ordering::Relaxed),
        };
        return write_stream(stream, &bytes(first));
    }
    let resolved = resolve(path)?;
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
    let torn = locked.len() > 0 && !ends_with_newline(&file, locked.len())?;
    replace(resolved, Some(&locked), |tmp| {
        io::copy(&mut *file, tmp)?;
        if torn {
            tmp.write_all(b"\n")?;
        }
        tmp.write_all(&new_bytes)
    })?;
    Ok(None)
}

/// Whether the last of the `len` bytes of `file` is a newline (read at its offset: the
/// file's own position is left as it is).
fn ends_with_newline(file: &fs::File, len: u64) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] == b'\n')
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
    use crate::storage::ledger::{Action, Entry, judge_outputs as check_all};
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn file_safe_names_keep_letters_and_stay_apart() {
        assert_eq!(file_safe_names(&["db-1.x", "a/b c", "a_b_c", "a_b_c"]), ["db-1.x", "a_b_c", "a_b_c-2", "a_b_c-3"]);
        assert_eq!(file_safe_names(&["..", "é"]), ["..", "_"]);
    }

    fn out(flag: &'static str, path: &Path) -> Entry {
        Entry::new(flag, path, Action::Replace)
    }

    /// `path` judged as an output of this process, as a command's ledger is before it writes.
    fn judged(path: &Path) {
        check_all(&[out("--json", path)], &[], &[]).unwrap();
    }

    #[test]
    fn a_link_made_after_the_check_is_not_followed_onto_a_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.dat");
        fs::write(&target, b"target data").unwrap();
        let chart = dir.path().join("c.svg");
        check_all(&[out("--plot", &chart)], std::slice::from_ref(&target), &[]).unwrap();
        std::os::unix::fs::symlink(&target, &chart).unwrap();
        let e = write_whole(&chart, b"<svg/>").unwrap_err().to_string();
        assert!(e.contains("not replaced") || e.contains("not followed"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"target data");
        // A link no guard saw (`iopulse plot --out`) is not followed either.
        let other = dir.path().join("other.txt");
        fs::write(&other, b"keep").unwrap();
        let link = dir.path().join("d.svg");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        assert!(write_whole(&link, b"<svg/>").unwrap_err().to_string().contains("not followed"));
        assert_eq!(fs::read(&other).unwrap(), b"keep");
        // A link the guard saw is followed to where it landed.
        let seen = dir.path().join("seen.json");
        let real = dir.path().join("real.json");
        fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink(&real, &seen).unwrap();
        check_all(&[out("--json", &seen)], &[], &[]).unwrap();
        write_whole(&seen, b"new").unwrap();
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn an_append_never_glues_its_row_to_a_last_line_without_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        judged(&p);
        fs::write(&p, b"h\nrow1").unwrap();
        append_whole(&p, |new| if new { b"h\nrow2\n".to_vec() } else { b"row2\n".to_vec() }).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "h\nrow1\nrow2\n");
    }

    #[test]
    fn whole_writes_replace_and_keep_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        judged(&p);
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
        judged(&p);
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
        judged(&p);
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
        judged(&p);
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
