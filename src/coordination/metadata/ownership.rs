//! Which trees are iopulse's: the marker file `.iopulse-tree` at a tree's root records
//! its shape and state, a directory holding anything else is refused (unless `--force`,
//! and even then none of iopulse's names may be taken), and the removal deletes only the
//! names iopulse gives (`tree::is_our_name`) in the directories of a marked tree, never
//! recursing into what it did not make. Every walk goes through directory handles opened
//! without following links and never leaves the root's filesystem: an entry with one of
//! iopulse's names that is a link, a mount point, a hard-linked file or of the wrong kind
//! is left alone and named (`odd_entries` finds them before a run, which is then refused).
//! It never deletes outside the root.

use crate::io::metadata::tree::is_our_name;
use crate::io::metadata::workload::MetaSpec;
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The marker's name at the root of a tree.
pub const MARKER: &str = ".iopulse-tree";

/// The most of a marker read (it is a few hundred bytes).
const MAX_MARKER_BYTES: u64 = 64 * 1024;

/// What the marker records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub tool: String,
    pub files: u64,
    pub dirs_per_dir: u32,
    pub depth: u32,
    pub sizes: crate::io::metadata::workload::SizeDist,
    /// iopulse created the root directory itself (and removes it with the tree).
    pub root_created: bool,
    /// `setting-up` (interrupted: removed and made again), `ready` (every file there, as
    /// made: a later run of the same shape uses it), `used` (a run changed it).
    pub state: String,
}

pub const SETTING_UP: &str = "setting-up";
pub const READY: &str = "ready";
pub const USED: &str = "used";

impl Marker {
    pub fn new(meta: &MetaSpec, root_created: bool, state: &str) -> Marker {
        Marker {
            tool: "iopulse".into(),
            files: meta.files,
            dirs_per_dir: meta.dirs_per_dir,
            depth: meta.depth,
            sizes: meta.sizes.clone(),
            root_created,
            state: state.into(),
        }
    }

    pub fn same_shape(&self, meta: &MetaSpec) -> bool {
        self.files == meta.files
            && self.dirs_per_dir == meta.dirs_per_dir
            && self.depth == meta.depth
            && self.sizes == meta.sizes
    }
}

/// What is at the root before the run.
#[derive(Debug)]
pub enum Found {
    /// Nothing: the root is created (its parent must exist).
    Nothing,
    /// An empty directory, or one holding only others' entries (with `--force`).
    Directory,
    /// One of iopulse's trees.
    Tree(Marker),
}

/// Looks at `root` and refuses what is not iopulse's; touches nothing.
pub fn look(root: &Path, force: bool) -> Result<Found, String> {
    let meta = match std::fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !parent.is_dir() {
                return Err(format!(
                    "{}: its parent directory {} does not exist: create it first",
                    root.display(),
                    parent.display()
                ));
            }
            return Ok(Found::Nothing);
        }
        Err(e) => return Err(format!("{}: {e}", root.display())),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(format!(
            "{}: --files needs a directory (the tree's root), and this is not one: give a directory, or a path that does not exist yet",
            root.display()
        ));
    }
    // The marker is an input: a regular file, bounded, opened without blocking (a FIFO of
    // that name never holds the run).
    let cannot_read = |e: &dyn std::fmt::Display| {
        format!("{}: its {MARKER} cannot be read ({e}): remove the directory by hand if it is yours", root.display())
    };
    match crate::storage::targets::input_file::open(&root.join(MARKER), MAX_MARKER_BYTES) {
        Ok(mut file) => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text).map_err(|e| cannot_read(&e))?;
            return serde_json::from_str::<Marker>(&text).map(Found::Tree).map_err(|e| cannot_read(&e));
        }
        Err(crate::storage::targets::input_file::InputFileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
        }
        Err(e) => return Err(cannot_read(&e)),
    }
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut foreign = Vec::new();
    for entry in entries.flatten() {
        foreign.push(entry.file_name());
    }
    if foreign.is_empty() {
        return Ok(Found::Directory);
    }
    if !force {
        return Err(format!(
            "{} holds {} entries iopulse did not create (e.g. {}): give an empty or new directory, or --force to make the tree among them (only iopulse's own entries are removed)",
            root.display(),
            foreign.len(),
            foreign[0].to_string_lossy()
        ));
    }
    if let Some(taken) = foreign.iter().find(|n| is_our_name(n.as_encoded_bytes())) {
        return Err(format!(
            "{}: {} is not iopulse's but has a name of its tree: give another directory",
            root.display(),
            taken.to_string_lossy()
        ));
    }
    Ok(Found::Directory)
}

/// Writes the marker (whole, then renamed over the old one).
pub fn write_marker(root: &Path, marker: &Marker) -> std::io::Result<()> {
    let tmp = root.join(format!("{MARKER}.new"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(marker).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, root.join(MARKER))
}

/// What a removal did.
#[derive(Debug, Default)]
pub struct Removed {
    pub files: u64,
    pub directories: u64,
    /// Directories left because they hold entries iopulse did not make (root-relative).
    pub kept_directories: Vec<PathBuf>,
    /// Entries with iopulse's names left alone, each with why (`d0: a symbolic link`): never
    /// followed, entered or removed.
    pub left: Vec<String>,
}

/// What an entry with one of iopulse's names is found to be, when it is not what the tree
/// made: a walk leaves it alone.
fn odd_entry(name: &[u8], st: &nix::sys::stat::FileStat, tree_dev: u64) -> Option<&'static str> {
    let kind = st.st_mode & libc::S_IFMT;
    if kind == libc::S_IFLNK {
        return Some("a symbolic link");
    }
    match name[0] {
        b'f' if kind != libc::S_IFREG => Some("not a regular file"),
        b'f' if st.st_nlink > 1 => Some("a file with other hard links"),
        b'd' | b'm' if kind != libc::S_IFDIR => Some("not a directory"),
        b'd' | b'm' if st.st_dev != tree_dev => Some("a mount point (another filesystem)"),
        _ => None,
    }
}

/// Walks the tree at `root` through directory handles opened without following links
/// (openat with O_NOFOLLOW, fstatat without following, never leaving the root's
/// filesystem): each entry with one of iopulse's names that is a symbolic link, a mount
/// point, a hard-linked file or of the wrong kind is listed and left alone. With `remove`,
/// iopulse's own files are unlinked and its directories removed once empty (a directory
/// holding anything else stays, named); `threads` share the files of a large directory.
fn walk(root: &Path, remove: bool, threads: u32) -> std::io::Result<Removed> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let root_fd = openat(nix::fcntl::AT_FDCWD, root, dir_flags, Mode::empty()).map_err(std::io::Error::from)?;
    let tree_dev = nix::sys::stat::fstat(&root_fd).map_err(std::io::Error::from)?.st_dev;
    let mut removed = Removed::default();
    walk_dir(&root_fd, Path::new(""), tree_dev, remove, threads.clamp(1, 64), &mut removed);
    Ok(removed)
}

/// One directory of the walk (`rel`: its path under the root; `dir`: its handle).
fn walk_dir(dir: &std::os::fd::OwnedFd, rel: &Path, tree_dev: u64, remove: bool, threads: u32, out: &mut Removed) {
    use nix::fcntl::{AtFlags, OFlag, openat};
    use nix::sys::stat::{Mode, fstatat};
    use nix::unistd::{UnlinkatFlags, unlinkat};
    let Some(mut listing) = dir.try_clone().ok().and_then(|fd| nix::dir::Dir::from_fd(fd).ok()) else { return };
    let names: Vec<std::ffi::CString> = listing
        .iter()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_owned())
        .filter(|n| !matches!(n.as_bytes(), b"." | b".."))
        .collect();
    let mut foreign = false;
    let mut files = Vec::new();
    for name in names {
        let bytes = name.as_bytes();
        if bytes.starts_with(MARKER.as_bytes()) && rel.as_os_str().is_empty() {
            continue;
        }
        if !is_our_name(bytes) {
            foreign = true;
            continue;
        }
        let shown = || rel.join(std::ffi::OsStr::from_bytes(bytes)).display().to_string();
        let Ok(st) = fstatat(dir, name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW) else { continue };
        if let Some(why) = odd_entry(bytes, &st, tree_dev) {
            out.left.push(format!("{}: {why}", shown()));
            foreign = true;
            continue;
        }
        if bytes[0] == b'f' {
            files.push(name);
            continue;
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(child) = openat(dir, name.as_c_str(), flags, Mode::empty()) else {
            foreign = true;
            continue;
        };
        // Checked again on the handle: the name may have been swapped since the fstatat.
        if nix::sys::stat::fstat(&child).map_or(true, |c| c.st_dev != tree_dev || c.st_ino != st.st_ino) {
            out.left.push(format!("{}: changed while the tree was walked", shown()));
            foreign = true;
            continue;
        }
        let child_rel = rel.join(std::ffi::OsStr::from_bytes(bytes));
        walk_dir(&child, &child_rel, tree_dev, remove, threads, out);
        drop(child);
        if remove {
            match unlinkat(dir, name.as_c_str(), UnlinkatFlags::RemoveDir) {
                Ok(()) => out.directories += 1,
                Err(_) => foreign = true,
            }
        }
    }
    if remove {
        out.files += unlink_files(dir, &files, threads);
        if foreign && !rel.as_os_str().is_empty() {
            out.kept_directories.push(rel.to_path_buf());
        }
    }
}

/// Unlinks `names` in `dir` (files the walk found to be iopulse's), `threads` at once when
/// there are many; the number unlinked.
fn unlink_files(dir: &std::os::fd::OwnedFd, names: &[std::ffi::CString], threads: u32) -> u64 {
    use nix::unistd::{UnlinkatFlags, unlinkat};
    let unlink = |chunk: &[std::ffi::CString]| {
        chunk.iter().filter(|n| unlinkat(dir, n.as_c_str(), UnlinkatFlags::NoRemoveDir).is_ok()).count() as u64
    };
    if names.len() < 4096 || threads == 1 {
        return unlink(names);
    }
    let per = names.len().div_ceil(threads as usize);
    std::thread::scope(|s| {
        let handles: Vec<_> = names.chunks(per).map(|chunk| s.spawn(move || unlink(chunk))).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).sum()
    })
}

/// The entries of the tree at `root` that a run would go through but that are not as the
/// tree made them (links, mount points, hard-linked files, wrong kinds), each named; looks
/// only.
pub fn odd_entries(root: &Path) -> std::io::Result<Vec<String>> {
    walk(root, false, 1).map(|w| w.left)
}

/// Removes the tree at `root` (marked `marker`): iopulse's files and directories (see
/// `walk`), then its marker and, when iopulse created it, the root.
pub fn remove(root: &Path, marker: &Marker, threads: u32) -> Removed {
    let mut removed = remove_contents(root, marker, threads);
    let _ = std::fs::remove_file(root.join(MARKER));
    let _ = std::fs::remove_file(root.join(format!("{MARKER}.new")));
    if marker.root_created && std::fs::remove_dir(root).is_ok() {
        removed.directories += 1;
    }
    removed
}

/// As `remove`, but the root and its marker stay (a tree about to be made again).
pub fn remove_contents(root: &Path, _marker: &Marker, threads: u32) -> Removed {
    walk(root, true, threads).unwrap_or_default()
}
