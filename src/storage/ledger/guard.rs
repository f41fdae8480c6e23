//! The one guard over a command's ledger, before anything is touched. Each path is judged
//! where a write to it lands (`identity::landing`: every symlink followed, a dangling
//! one's text included, a missing file by its directory), by what will happen to it:
//!
//! - an output (a file written whole, a table, a journal, a record, a directory) is never
//!   a device, a FIFO, a socket, a directory where a file is wanted, on a kernel
//!   pseudo-filesystem, under /dev (but for the standard streams and /dev/null, written as
//!   streams where the output allows one: never a record or a journal), nor a file this
//!   user may not write, nor in a directory that cannot take it;
//! - a target that does not exist yet is never created under /dev or on a devtmpfs;
//! - a tree's root is never a symbolic link, under /dev, on a kernel or read-only
//!   filesystem, nor a directory this user cannot write in;
//! - nothing is written onto an input (the job file, a trace, a result, a record, a
//!   target a result names), onto a target (but the target itself), onto another entry's
//!   file, or inside a tree;
//! - stdout and stderr, when regular files, are neither a target, an input nor an output.
//!
//! It looks (stat, statfs, access, readlink) and never creates, opens for writing or
//! writes.

use super::{Action, Entry, Ledger};
use crate::base::diagnostics::error::UsageError;
use crate::storage::targets::identity::{FileId, landing, special_kind};
use crate::storage::targets::pseudo_fs::pseudo_filesystem;
use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Paths written as they are, through this process's own descriptors: the bit bucket and
/// the standard streams (whatever they were redirected to).
pub const STREAMS: &[&str] =
    &["/dev/null", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"];

/// True for /dev/null and the standard streams.
pub fn is_stream(path: &Path) -> bool {
    STREAMS.iter().any(|s| Path::new(s) == path)
}

/// A file a write must never land on (a target, an input) or that is written once (an
/// entry): its device and inode when it exists, and where a write to it lands.
#[derive(Clone, Debug)]
pub struct Protected {
    pub id: Option<FileId>,
    pub landing: PathBuf,
    pub shown: String,
}

impl Protected {
    fn of(path: &Path, shown: String) -> Protected {
        Protected { id: FileId::of(path), landing: landing(path), shown }
    }
}

/// What a judged ledger allows: where its outputs land (a writer follows a symlink there
/// and nowhere else), and the files never written over (targets and inputs).
pub struct Passed {
    pub output_landings: Vec<PathBuf>,
    pub protected: Vec<Protected>,
}

/// Judges `ledger` whole; looks only.
pub fn judge(ledger: &Ledger) -> Result<Passed, UsageError> {
    let inputs: Vec<Protected> = ledger
        .inputs
        .iter()
        .filter(|i| !is_stream(&i.path))
        .map(|i| Protected::of(&i.path, format!("{}, {}", i.path.display(), i.what)))
        .collect();
    let mut input_index = Index::default();
    for (i, p) in inputs.iter().enumerate() {
        input_index.insert(p, i);
    }
    // Targets are judged first: an output is then refused as landing on a target, whatever
    // their order.
    let mut targets: Vec<Protected> = Vec::new();
    let mut target_index = Index::default();
    let mut trees: Vec<(PathBuf, &Entry)> = Vec::new();
    for entry in &ledger.entries {
        match entry.action {
            Action::Target { creates, .. } => {
                let me = Protected::of(&entry.path, format!("the run's own target {}", entry.path.display()));
                if let Some(i) = input_index.find(&me) {
                    return Err(refusal(entry, &format!("is {}", inputs[i].shown), TARGET_ON_INPUT_FIX));
                }
                if creates && me.id.is_none() {
                    judge_new_target(entry, &me.landing)?;
                }
                target_index.insert(&me, targets.len());
                targets.push(me);
            }
            Action::Untouched => {
                let me = Protected::of(&entry.path, format!("the run's own target {}", entry.path.display()));
                target_index.insert(&me, targets.len());
                targets.push(me);
            }
            Action::Tree { .. } => {
                let me = Protected::of(&entry.path, String::new());
                if let Some(i) = input_index.find(&me) {
                    return Err(refusal(entry, &format!("is {}", inputs[i].shown), TARGET_ON_INPUT_FIX));
                }
                judge_tree_root(entry, &me.landing)?;
                trees.push((me.landing, entry));
            }
            _ => {}
        }
    }
    // Directories created (--plot, man --dir): what lands inside needs no directory yet.
    let new_dirs: Vec<PathBuf> =
        ledger.entries.iter().filter(|e| e.action == Action::MakeDir).map(|e| landing(&e.path)).collect();
    let mut seen: Vec<(Protected, &Entry)> = Vec::new();
    let mut seen_index = Index::default();
    for entry in ledger.entries.iter().filter(|e| e.action.is_output()) {
        if is_stream(&entry.path) {
            judge_stream(entry)?;
            continue;
        }
        let me = Protected::of(&entry.path, String::new());
        if let Some((root, tree)) = trees.iter().find(|(root, _)| me.landing.starts_with(root)) {
            return Err(refusal(
                entry,
                &format!(
                    "lands inside the tree {} {} makes and removes ({})",
                    tree.flag,
                    tree.path.display(),
                    root.display()
                ),
                "give a path outside the tree",
            ));
        }
        judge_output(entry, &me.landing, &new_dirs)?;
        if let Some(i) = target_index.find(&me) {
            return Err(refusal(
                entry,
                &format!("is {}", targets[i].shown),
                "writing the output there would destroy it; give another path",
            ));
        }
        if let Some(i) = input_index.find(&me) {
            return Err(refusal(
                entry,
                &format!("is {}", inputs[i].shown),
                "writing the output there would destroy it; give another path",
            ));
        }
        if let Some(i) = seen_index.find(&me) {
            let first = seen[i].1;
            return Err(UsageError::new(format!(
                "{} {} and {} {} are the same file: one output would overwrite the other; give each its own path",
                first.flag,
                first.path.display(),
                entry.flag,
                entry.path.display()
            )));
        }
        seen_index.insert(&me, seen.len());
        seen.push((me, entry));
    }
    let protected: Vec<Protected> = targets.into_iter().chain(inputs).collect();
    check_std_streams(&protected, &seen)?;
    Ok(Passed { output_landings: seen.into_iter().map(|(p, _)| p.landing).collect(), protected })
}

const TARGET_ON_INPUT_FIX: &str =
    "the run would write benchmark data over what this command reads; give another target";

fn refusal(entry: &Entry, what: &str, fix: &str) -> UsageError {
    UsageError::new(format!("{} {} {what}: {fix}", entry.flag, entry.path.display()))
}

/// Files looked up by device and inode, or by where they land (a file not created yet):
/// a job file of thousands of jobs and charts is checked in linear time.
#[derive(Default)]
struct Index {
    by_id: HashMap<FileId, usize>,
    by_landing: HashMap<PathBuf, usize>,
}

impl Index {
    fn insert(&mut self, p: &Protected, at: usize) {
        if let Some(id) = p.id {
            self.by_id.entry(id).or_insert(at);
        }
        self.by_landing.entry(p.landing.clone()).or_insert(at);
    }

    fn find(&self, p: &Protected) -> Option<usize> {
        p.id.and_then(|id| self.by_id.get(&id)).or_else(|| self.by_landing.get(&p.landing)).copied()
    }
}

/// Where a landing is said when a link (or `..` over one) takes the path elsewhere.
fn shown_landing(path: &Path, landed: &Path) -> String {
    let spelled = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if landed == spelled { String::new() } else { format!(" (it lands at {})", landed.display()) }
}

/// Whether `path` (landing at `landed`) is under /dev, where outputs never go (the
/// streams aside): one rule for every output, /dev/shm included.
fn under_dev(path: &Path, landed: &Path) -> bool {
    (path.is_absolute() && path.starts_with("/dev")) || landed.starts_with("/dev")
}

/// Whether a file created at `landed` would live in the device directory's own filesystem
/// (devtmpfs: memory, among the device nodes): the filesystem of /dev itself, or a devtmpfs
/// mounted elsewhere, judged by the nearest existing directory. A filesystem mounted under
/// /dev for files (a tmpfs at /dev/shm) is not the device directory.
fn in_device_filesystem(landed: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(existing) = landed.ancestors().find(|p| p.symlink_metadata().is_ok()) else { return false };
    let same_as_dev = landed.starts_with("/dev")
        && fs::metadata(existing).ok().zip(fs::metadata("/dev").ok()).is_some_and(|(a, d)| a.dev() == d.dev());
    same_as_dev || crate::storage::targets::fsinfo::mount_of_path(existing).is_some_and(|m| m.fs_type == "devtmpfs")
}

/// A stream is a valid output only where the output can be written as one.
fn judge_stream(entry: &Entry) -> Result<(), UsageError> {
    match entry.action {
        Action::Replace | Action::Append => Ok(()),
        Action::MakeDir => {
            Err(refusal(entry, "is a stream, not a directory", "give a directory (it is created if missing)"))
        }
        Action::Record => Err(refusal(
            entry,
            "is a device, not a file: the record is a regular file written in place and read back by `iopulse verify`",
            "give a file path on a real filesystem",
        )),
        _ => Err(refusal(entry, "is a stream, not a file", "give a file path on a real filesystem")),
    }
}

/// A target that does not exist yet is created where it lands: never in the device
/// directory (a regular file there lives in memory, among the device nodes).
fn judge_new_target(entry: &Entry, landed: &Path) -> Result<(), UsageError> {
    if in_device_filesystem(landed) {
        return Err(refusal(
            entry,
            &format!(
                "does not exist, and would be created as a regular file in the device directory (devtmpfs, in memory){}",
                shown_landing(&entry.path, landed)
            ),
            "give an existing device, or a file path on a real filesystem",
        ));
    }
    Ok(())
}

/// A tree's root: its directories and files are made there, and removed at the end.
fn judge_tree_root(entry: &Entry, landed: &Path) -> Result<(), UsageError> {
    let link = entry.path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
    if link {
        return Err(refusal(
            entry,
            &format!("is a symbolic link to {}", landed.display()),
            "give the tree's directory itself (a link could be changed to point elsewhere between runs)",
        ));
    }
    if in_device_filesystem(landed) {
        return Err(refusal(
            entry,
            &format!("is in the device directory (devtmpfs, in memory){}", shown_landing(&entry.path, landed)),
            "give a directory on a real filesystem",
        ));
    }
    if let Some(fs) = pseudo_filesystem(landed) {
        return Err(refusal(
            entry,
            &format!("is on {fs}, a kernel interface"),
            "give a directory on a real filesystem",
        ));
    }
    // The directory the tree is made in: the root when it exists, else its parent.
    let exists = landed.symlink_metadata().is_ok();
    let place = if exists { landed.to_path_buf() } else { parent_of(landed).to_path_buf() };
    if !place.is_dir() {
        return Ok(()); // metadata::check names a missing parent or a root that is a file
    }
    if nix::sys::statvfs::statvfs(&place).is_ok_and(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY)) {
        return Err(refusal(
            entry,
            &format!("is on a read-only filesystem ({} is mounted read-only)", place.display()),
            "give a directory on a writable filesystem",
        ));
    }
    use nix::unistd::{AccessFlags, access};
    if let Err(e) = access(&place, AccessFlags::W_OK | AccessFlags::X_OK) {
        return Err(refusal(
            entry,
            &format!("cannot be written in ({}: {})", place.display(), io::Error::from(e)),
            "give a directory this user can write in",
        ));
    }
    Ok(())
}

fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// One output judged where it lands (`landed`); `new_dirs` are the directories the
/// command creates (a file inside one needs no existing directory).
fn judge_output(entry: &Entry, landed: &Path, new_dirs: &[PathBuf]) -> Result<(), UsageError> {
    let is_dir = entry.action == Action::MakeDir;
    let refuse = |what: &str, fix: &str| Err(refusal(entry, what, fix));
    let found = fs::metadata(landed);
    // What is there first: a device is refused as a device, wherever it is.
    if let Ok(meta) = &found
        && !is_dir
        && let Some(kind) = special_kind(meta.file_type())
    {
        let ft = meta.file_type();
        let fix = if ft.is_dir() {
            "give a file name (e.g. inside it)"
        } else if ft.is_block_device() || ft.is_char_device() {
            "outputs are never written to devices (only /dev/null and /dev/stdout, /dev/stderr); give a file path"
        } else {
            "outputs are written to a temporary file and renamed into place; give a regular file path (or /dev/stdout)"
        };
        return refuse(&format!("is {kind}{}", shown_landing(&entry.path, landed)), fix);
    }
    if under_dev(&entry.path, landed) || in_device_filesystem(landed) {
        return refuse(
            &format!("is under /dev{}", shown_landing(&entry.path, landed)),
            "outputs go to files on a real filesystem; of /dev only /dev/stdout, /dev/stderr, /dev/fd/1, /dev/fd/2 and /dev/null are written (as streams)",
        );
    }
    if let Some(fs) = pseudo_filesystem(landed) {
        return refuse(
            &format!("is on {fs}, a kernel interface{}", shown_landing(&entry.path, landed)),
            "give a path on a real filesystem",
        );
    }
    match found {
        Ok(meta) => {
            if is_dir {
                if !meta.file_type().is_dir() {
                    return refuse("exists and is not a directory", "give a directory (it is created if missing)");
                }
                return check_writable_dir(entry, landed);
            }
            // A file this user may not write (read-only, immutable) is not replaced either:
            // found now, not after the run.
            if let Err(e) = nix::unistd::access(landed, nix::unistd::AccessFlags::W_OK) {
                return refuse(
                    &format!("is not writable ({})", io::Error::from(e)),
                    "make it writable or give another path",
                );
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if entry.path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                return refuse(
                    &format!(
                        "is a symbolic link to a missing {}{}",
                        if is_dir { "directory" } else { "file" },
                        shown_landing(&entry.path, landed)
                    ),
                    "give the path of the file itself",
                );
            }
        }
        Err(e) => return refuse(&format!("cannot be examined ({e})"), "give a path this user can reach"),
    }
    let dir = parent_of(landed);
    if new_dirs.iter().any(|d| d == dir) {
        return Ok(()); // created by the command, itself judged
    }
    if !dir.is_dir() {
        return Err(UsageError::new(format!(
            "{} {}: directory {} does not exist: create it first or give another path",
            entry.flag,
            entry.path.display(),
            dir.display()
        )));
    }
    check_writable_dir(entry, dir)
}

/// The output's directory must take a new file (the temporary one, then the rename).
fn check_writable_dir(entry: &Entry, dir: &Path) -> Result<(), UsageError> {
    use nix::unistd::{AccessFlags, access};
    access(dir, AccessFlags::W_OK | AccessFlags::X_OK).map_err(|e| {
        UsageError::new(format!(
            "{} {}: cannot write in directory {} ({}): give a path in a writable directory",
            entry.flag,
            entry.path.display(),
            dir.display(),
            io::Error::from(e)
        ))
    })
}

/// stdout and stderr, when a regular file: never a target or an input (a read run with
/// `>> TARGET` would grow the target through its report), nor a file an output replaces.
/// With stderr a target, the refusal itself would be written into it: stderr is pointed at
/// /dev/null first, and the exit code alone says it.
fn check_std_streams(protected: &[Protected], outputs: &[(Protected, &Entry)]) -> Result<(), UsageError> {
    for (stat, name) in
        [(nix::sys::stat::fstat(io::stdout()), "stdout"), (nix::sys::stat::fstat(io::stderr()), "stderr")]
    {
        let Ok(stat) = stat else { continue };
        if stat.st_mode & libc::S_IFMT != libc::S_IFREG {
            continue;
        }
        let id = Some(FileId { dev: stat.st_dev, ino: stat.st_ino });
        if let Some(p) = protected.iter().find(|p| p.id.is_some() && p.id == id) {
            if name == "stderr" {
                // Even this refusal would be written into the target: it goes nowhere instead.
                if let Ok(null) = OpenOptions::new().write(true).open("/dev/null") {
                    let _ = nix::unistd::dup2_stderr(null);
                }
            }
            return Err(UsageError::new(format!(
                "{name} is {}: the report would be written into it; redirect {name} to another file",
                p.shown
            )));
        }
        if let Some((_, out)) = outputs.iter().find(|(p, _)| p.id.is_some() && p.id == id) {
            return Err(UsageError::new(format!(
                "{name} is {} {}: the output would replace what is written to {name}; give the output another path, or {} /dev/{name}",
                out.flag,
                out.path.display(),
                out.flag
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::ledger::judge_outputs as check_all;

    fn out(flag: &'static str, path: &Path) -> Entry {
        Entry::new(flag, path, Action::Replace)
    }

    #[test]
    fn a_target_or_a_link_to_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.dat");
        fs::write(&target, b"data").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link")).unwrap();
        let targets = vec![target.clone()];
        for p in [target.clone(), dir.path().join("link")] {
            let e = check_all(&[out("--json", &p)], &targets, &[]).unwrap_err();
            assert!(e.message.contains("--json") && e.message.contains("own target"), "{}", e.message);
        }
        // A target not created yet is matched by its resolved path.
        let new_target = dir.path().join("new.dat");
        let spelled = dir.path().join(".").join("new.dat");
        let e = check_all(&[out("--timeseries", &spelled)], &[new_target], &[]).unwrap_err();
        assert!(e.message.contains("own target"), "{}", e.message);
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        let e = check_all(&[out("--json", &p), out("--csv", &p)], &[], &[]).unwrap_err();
        assert!(e.message.contains("--json") && e.message.contains("--csv"), "{}", e.message);
        check_all(&[out("--json", &p), out("--csv", &dir.path().join("r.csv"))], &[], &[]).unwrap();
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
            let e = check_all(&[out("--json", p)], &[], &[]).unwrap_err();
            assert!(e.message.contains(what), "{}: {}", p.display(), e.message);
        }
        check_all(&[out("--json", Path::new("/dev/null")), out("--csv", Path::new("/dev/stdout"))], &[], &[]).unwrap();
    }

    #[test]
    fn a_dangling_link_is_judged_where_a_create_through_it_lands() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        // A target that is a dangling link to the --json path: one file.
        let target = dir.path().join("t.dat");
        std::os::unix::fs::symlink("r.json", &target).unwrap();
        let e = check_all(&[out("--json", &json)], std::slice::from_ref(&target), &[]).unwrap_err();
        assert!(e.message.contains("own target") && e.message.contains("t.dat"), "{}", e.message);
        // An output that is a dangling link into /dev lands under /dev.
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink("/dev/shm/iopulse-never-created.json", &link).unwrap();
        let e = check_all(&[out("--json", &link)], &[], &[]).unwrap_err();
        assert!(e.message.contains("under /dev") && e.message.contains("lands at /dev/shm"), "{}", e.message);
    }

    #[test]
    fn inputs_journals_and_dev_paths_are_refused_and_streams_pass() {
        let dir = tempfile::tempdir().unwrap();
        let job_file = dir.path().join("jf.toml");
        fs::write(&job_file, b"[a]\n").unwrap();
        let e = check_all(&[out("--json", &job_file)], &[], &[job_file.as_path()]).unwrap_err();
        assert!(e.message.contains("an input this command reads"), "{}", e.message);
        let csv = dir.path().join("s.csv");
        let journal = dir.path().join("s.csv.journal");
        let e =
            check_all(&[out("--csv", &csv), out("--csv (its journal)", &journal), out("--json", &journal)], &[], &[])
                .unwrap_err();
        assert!(e.message.contains("--csv (its journal)") && e.message.contains("same file"), "{}", e.message);
        for p in ["/dev/shm/iopulse-never-created.csv", "/dev/iopulse-no-such-dir/x.csv"] {
            let e = check_all(&[out("--timeseries", Path::new(p))], &[], &[]).unwrap_err();
            assert!(e.message.contains("under /dev"), "{p}: {}", e.message);
        }
        for p in ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2", "/dev/null"] {
            check_all(&[out("--csv", Path::new(p))], &[], &[]).unwrap();
        }
        let e = check_all(&[Entry::new("--plot", "/dev/stdout", Action::MakeDir)], &[], &[]).unwrap_err();
        assert!(e.message.contains("not a directory"), "{}", e.message);
    }

    #[test]
    fn charts_in_a_directory_plot_creates_need_no_directory_yet() {
        let dir = tempfile::tempdir().unwrap();
        let plots = dir.path().join("plots");
        check_all(&[Entry::new("--plot", &plots, Action::MakeDir), out("--plot", &plots.join("a.svg"))], &[], &[])
            .unwrap();
        let e = check_all(&[out("--plot", &plots.join("a.svg"))], &[], &[]).unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
    }
}
