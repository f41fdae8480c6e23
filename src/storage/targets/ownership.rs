//! Which files iopulse laid out itself. A file it created and laid out carries the
//! extended attribute `user.iopulse.layout`, so a later run may lay it out to a larger
//! `--file-size` without asking; any other existing file is someone else's, and a run
//! that only reads never extends it unless told to with `--force`. Where the
//! filesystem has no user extended attributes, no file is marked, and so every
//! existing non-empty file counts as someone else's (the safe side).

use std::fs::File;
use std::path::Path;

/// The extended attribute set on files iopulse laid out.
pub const LAYOUT_MARK: &str = "user.iopulse.layout";

/// Marks `file` as laid out by iopulse; a filesystem without user xattrs is not an error.
pub fn mark_laid_out(file: &File) {
    use xattr::FileExt;
    let _ = file.set_xattr(LAYOUT_MARK, b"1");
}

/// True when `path` carries the mark.
pub fn laid_out_by_iopulse(path: &Path) -> bool {
    matches!(xattr::get(path, LAYOUT_MARK), Ok(Some(_)))
}
