//! Which trees are iopulse's: the marker file `.iopulse-tree` at a tree's root records
//! its shape and state, a directory holding anything else is refused (unless `--force`,
//! and even then none of iopulse's names may be taken), and the removal deletes only the
//! names iopulse gives (`tree::is_our_name`) in the directories of a marked tree, never
//! recursing into what it did not make. It never deletes outside the root.

use super::tree::is_our_name;
use crate::spec::metadata::MetaSpec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The marker's name at the root of a tree.
pub const MARKER: &str = ".iopulse-tree";

/// What the marker records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub tool: String,
    pub files: u64,
    pub dirs_per_dir: u32,
    pub depth: u32,
    pub sizes: crate::spec::metadata::SizeDist,
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
    if let Ok(text) = std::fs::read_to_string(root.join(MARKER)) {
        return serde_json::from_str::<Marker>(&text).map(Found::Tree).map_err(|e| {
            format!(
                "{}: its {MARKER} cannot be read ({e}): remove the directory by hand if it is yours",
                root.display()
            )
        });
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
    /// Directories left because they hold entries iopulse did not make.
    pub kept_directories: Vec<PathBuf>,
}

/// Removes the tree at `root` (marked `marker`): in each of its directories the entries
/// with iopulse's names, bottom-up; a directory holding anything else stays. `threads`
/// share the leaves.
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
pub fn remove_contents(root: &Path, marker: &Marker, threads: u32) -> Removed {
    let k = u64::from(marker.dirs_per_dir);
    let depth = marker.depth;
    // The directories of each level, deepest first; each is removed once emptied of ours.
    let mut removed = Removed::default();
    let level_dirs = |level: u32| -> Vec<PathBuf> {
        let count = k.pow(level);
        (0..count)
            .map(|j| {
                let mut p = root.to_path_buf();
                for l in 0..level {
                    p.push(format!("d{}", (j / k.pow(level - 1 - l)) % k));
                }
                p
            })
            .collect()
    };
    let leaves = level_dirs(depth);
    let threads = threads.clamp(1, 64) as usize;
    let per = leaves.len().div_ceil(threads);
    let parts: Vec<Removed> = std::thread::scope(|s| {
        let handles: Vec<_> = leaves.chunks(per.max(1)).map(|chunk| s.spawn(move || empty_dirs(chunk))).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for p in parts {
        removed.files += p.files;
        removed.directories += p.directories;
        // The root holds what others put there (--force) by design: only its subtrees count.
        removed.kept_directories.extend(p.kept_directories.into_iter().filter(|d| d != root));
    }
    // The levels' own directories, deepest first (the leaves were emptied above).
    for level in (1..=depth).rev() {
        for dir in level_dirs(level) {
            match std::fs::remove_dir(&dir) {
                Ok(()) => removed.directories += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => {
                    if level < depth {
                        removed.kept_directories.push(dir);
                    }
                }
            }
        }
    }
    removed
}

/// In each directory: iopulse's files unlinked, its `mkdir`s removed (each only if empty).
fn empty_dirs(dirs: &[PathBuf]) -> Removed {
    let mut removed = Removed::default();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut foreign = false;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let bytes = name.as_encoded_bytes();
            if bytes.starts_with(MARKER.as_bytes()) {
                continue;
            }
            if !is_our_name(bytes) {
                foreign = true;
                continue;
            }
            let path = entry.path();
            let ok = match bytes[0] {
                b'f' => std::fs::remove_file(&path).is_ok_and(|()| {
                    removed.files += 1;
                    true
                }),
                // A directory of ours made by mkdir holds nothing of ours.
                _ => std::fs::remove_dir(&path).is_ok_and(|()| {
                    removed.directories += 1;
                    true
                }),
            };
            foreign |= !ok;
        }
        if foreign {
            removed.kept_directories.push(dir.clone());
        }
    }
    removed
}
