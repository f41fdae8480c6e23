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

/// Where a write to `path` lands: the file itself once every symlink is followed, when it
/// exists; else where a create would put it: a dangling symlink's text followed (open(2)
/// with O_CREAT creates the file the link names), and the nearest existing directory
/// resolved. Looks only (stat, readlink); at most 40 links are followed, as the kernel does.
pub fn landing(path: &Path) -> PathBuf {
    landing_within(path, 40)
}

fn landing_within(path: &Path, mut links: u32) -> PathBuf {
    let mut p = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    loop {
        if let Ok(real) = std::fs::canonicalize(&p) {
            return real;
        }
        match std::fs::read_link(&p) {
            // A dangling link: where its text points, relative to the link's directory.
            Ok(text) if links > 0 => {
                links -= 1;
                p = p.parent().map_or_else(|| text.clone(), |dir| dir.join(&text));
            }
            _ => break,
        }
    }
    // Missing (or a loop of links): under its directory's landing.
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) if links > 0 => landing_within(dir, links - 1).join(name),
        _ => p,
    }
}

/// What a path stands for, to find two paths that are one file: its device and inode
/// when it exists, else the path it would be created at (`landing`: through a dangling
/// symlink to the file it names, its directory resolved).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathIdentity {
    Existing(FileId),
    New(PathBuf),
}

impl PathIdentity {
    /// Always `Some` (a path that cannot be resolved stands for itself, made absolute).
    pub fn of(path: &Path) -> Option<PathIdentity> {
        if let Some(id) = FileId::of(path) {
            return Some(PathIdentity::Existing(id));
        }
        Some(PathIdentity::New(landing(path)))
    }
}

/// Two target paths name one file: the same path, the same file through links, or the
/// same place a file will be created at (a dangling link to the other's path included).
#[cfg(test)]
fn same_target(a: &Path, b: &Path) -> bool {
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

    #[test]
    fn a_dangling_link_stands_for_the_file_a_create_through_it_would_make() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        // Relative link text, relative to the link's directory; a chain of two links.
        std::os::unix::fs::symlink("sub/../data.dat", dir.path().join("l1")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("l1"), dir.path().join("sub/l2")).unwrap();
        assert_eq!(landing(&dir.path().join("sub/l2")), real.join("data.dat"));
        let id = PathIdentity::of(&dir.path().join("sub/l2"));
        assert_eq!(id, PathIdentity::of(&dir.path().join("data.dat")), "one file through a dangling link");
        // A missing directory under a dangling link to a directory.
        std::os::unix::fs::symlink("nowhere", dir.path().join("dlink")).unwrap();
        assert_eq!(landing(&dir.path().join("dlink/x.json")), real.join("nowhere/x.json"));
        // A loop of links ends.
        std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
        let _ = landing(&dir.path().join("loop-a"));
    }
}
