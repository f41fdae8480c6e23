//! What a tree needs of its filesystem and of the process, checked before the set-up
//! touches anything: free space and free inodes (statvfs) and the open-file limit; and
//! the wording of the limits a run can still meet (ENOSPC, EDQUOT, EMFILE, ENFILE).

use crate::io::metadata::workload::MetaSpec;
use std::path::Path;

/// Descriptors a run keeps open besides its workers' (standard streams, the root's, the
/// outputs, the set-up's).
const SPARE_DESCRIPTORS: u64 = 32;

/// Refuses a tree the filesystem under `existing` (the root, or its parent) cannot hold,
/// or a run the open-file limit cannot serve.
pub fn check(meta: &MetaSpec, existing: &Path, threads: u32) -> Result<(), String> {
    let vfs = nix::sys::statvfs::statvfs(existing).map_err(|e| format!("statvfs {}: {e}", existing.display()))?;
    let inodes_needed = meta.files + meta.directories() + 2;
    let inodes_free = vfs.files_available() as u64;
    // A filesystem without an inode count (btrfs, some network ones) reports 0 inodes.
    if vfs.files() > 0 && inodes_free < inodes_needed {
        return Err(format!(
            "{}: the filesystem has {inodes_free} free inodes, and the tree needs {inodes_needed} ({} files, {} directories): give fewer --files, or a filesystem with more inodes",
            existing.display(),
            meta.files,
            meta.directories()
        ));
    }
    let block = (vfs.fragment_size() as u64).max(512);
    let per_file = meta.sizes.mean_bytes().div_ceil(block) * block;
    let bytes_needed = meta.files.saturating_mul(per_file).saturating_add(meta.directories().saturating_mul(block));
    let bytes_free = (vfs.blocks_available() as u64).saturating_mul(block);
    if bytes_needed > bytes_free {
        return Err(format!(
            "{}: the filesystem has {} free, and the tree needs about {} ({} files of {} bytes on average): give fewer --files or smaller --file-size-dist",
            existing.display(),
            crate::base::units::display::bytes(bytes_free),
            crate::base::units::display::bytes(bytes_needed),
            meta.files,
            meta.sizes.mean_bytes()
        ));
    }
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_err(|e| format!("getrlimit(RLIMIT_NOFILE): {e}"))?;
    let needed = u64::from(threads) * 2 + SPARE_DESCRIPTORS;
    if soft < needed {
        return Err(format!(
            "the open-file limit (ulimit -n) is {soft}, and {threads} workers need {needed} descriptors: raise it (`ulimit -n {needed}`) or give fewer --threads"
        ));
    }
    Ok(())
}

/// The limit an errno names, as a sentence (none: not a limit).
pub fn limit_named(errno: i32, inodes_left: Option<u64>) -> Option<String> {
    Some(match errno {
        libc::ENOSPC if inodes_left == Some(0) => "the filesystem ran out of inodes (ENOSPC)".into(),
        libc::ENOSPC => "the filesystem is full (ENOSPC)".into(),
        libc::EDQUOT => "the disk quota is exhausted (EDQUOT)".into(),
        libc::EMFILE => "the process's open-file limit was reached (EMFILE: raise `ulimit -n`)".into(),
        libc::ENFILE => "the system's open-file limit was reached (ENFILE: fs.file-max)".into(),
        _ => return None,
    })
}

/// Free inodes under `path` now (none: not known).
pub fn inodes_left(path: &Path) -> Option<u64> {
    let vfs = nix::sys::statvfs::statvfs(path).ok()?;
    (vfs.files() > 0).then_some(vfs.files_available() as u64)
}
