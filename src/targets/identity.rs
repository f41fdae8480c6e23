//! The identity of a file: its device and inode. Two paths name the same file
//! when these are equal, whatever symlinks or hard links lie between them; this
//! is how a run refuses one target given twice, or an output written over a
//! target. Only looks (stat).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file's device and inode, as stat(2) gives them after following symlinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    /// The file `path` names, following symlinks; `None` if it does not exist (yet).
    pub fn of(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId { dev: m.dev(), ino: m.ino() })
    }
}

/// What a file that is not a regular file is, for the message refusing it ("a FIFO",
/// "a block device"); `None` for a regular file. One wording for targets, outputs and
/// merge inputs.
pub fn special_kind(ft: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if ft.is_file() {
        return None;
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    })
}

/// What a path stands for, to find two paths that are one file: its device and inode
/// when it exists, else the path it would be created at (its directory resolved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathIdentity {
    Existing(FileId),
    New(PathBuf),
}

impl PathIdentity {
    /// `None` when the path does not exist and its directory cannot be resolved either. A
    /// dangling symbolic link stands for the file a create through it would make: where its
    /// link text (and any link that names) finally points.
    pub fn of(path: &Path) -> Option<PathIdentity> {
        if let Some(id) = FileId::of(path) {
            return Some(PathIdentity::Existing(id));
        }
        let path = dangling_end(path);
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(parent).ok()?;
        Some(PathIdentity::New(dir.join(path.file_name()?)))
    }
}

/// Where a chain of symbolic links that ends nowhere would create its file: the last
/// link's text, resolved against its directory (at most 40 links, as the kernel follows).
fn dangling_end(path: &Path) -> PathBuf {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let Ok(text) = std::fs::read_link(&at) else { break };
        at = match at.parent() {
            Some(dir) if text.is_relative() => dir.join(text),
            _ => text,
        };
    }
    at
}

/// Two target paths name one file: the same path, the same file through links, or the
/// same place a file will be created at (a dangling link to the other's path included).
pub fn same_target(a: &Path, b: &Path) -> bool {
    a == b || PathIdentity::of(a).zip(PathIdentity::of(b)).is_some_and(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_name_the_same_file_and_copies_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, b"x").unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("sym")).unwrap();
        std::fs::hard_link(&a, dir.path().join("hard")).unwrap();
        std::fs::write(dir.path().join("copy"), b"x").unwrap();
        let id = FileId::of(&a).unwrap();
        assert_eq!(FileId::of(&dir.path().join("sym")), Some(id));
        assert_eq!(FileId::of(&dir.path().join("hard")), Some(id));
        assert_ne!(FileId::of(&dir.path().join("copy")), Some(id));
        assert_eq!(FileId::of(&dir.path().join("missing")), None);
        let new_a = PathIdentity::of(&dir.path().join("new")).unwrap();
        assert_eq!(PathIdentity::of(&dir.path().join(".").join("new")), Some(new_a.clone()));
        // A dangling link stands for the file it would create, through a chain of links.
        std::os::unix::fs::symlink("new", dir.path().join("dangling")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("dangling"), dir.path().join("chain")).unwrap();
        assert_eq!(PathIdentity::of(&dir.path().join("dangling")), Some(new_a.clone()));
        assert_eq!(PathIdentity::of(&dir.path().join("chain")), Some(new_a));
        assert!(same_target(&dir.path().join("chain"), &dir.path().join("new")));
        assert!(!same_target(&dir.path().join("chain"), &dir.path().join("copy")));
    }
}
