//! A metadata tree's life around a run: taken (its root made if need be, locked, what is
//! there judged again under the lock, an earlier tree removed or used as it is), set up
//! (its marker saying how far it got), and left (its state for the next run written, then
//! removed unless kept, every entry not of its making left alone and named). Every walk and
//! removal is `ownership.rs`'s, through directory handles.

use super::ownership::{self, Found, Marker};
use super::{Planned, lock_root, plan, setup};
use crate::base::diagnostics::error::{Error, RunError};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::base::primitives::clock::Clock;
use crate::figures::result::meta_document::TreeInfo;
use crate::io::metadata::worker::OpFailure;
use crate::io::metadata::workload::{MetaOp, MetaSpec};
use crate::storage::ledger::lock::Held;
use crate::workload::spec::Spec;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The tree this run holds: its root opened and locked for the run, whether the root is of
/// the tree's making, whether an earlier tree is used as it is, and what the result says.
pub(super) struct TakenTree {
    pub(super) dir: std::fs::File,
    lock: Held,
    root_created: bool,
    pub(super) reuse: bool,
    pub(super) info: TreeInfo,
}

/// Touches the root (another run may have made it since the planning), then locks it, then
/// judges what is there again: a second run on the tree is refused here, having touched
/// nothing of the first's.
pub(super) fn take_tree(
    spec: &Spec,
    meta: &MetaSpec,
    root: &Path,
    found: Found,
    diag: &Diagnostics,
) -> Result<TakenTree, Error> {
    let io = |what: &str, e: std::io::Error| RunError::Other(format!("{what} {}: {e}", root.display()));
    let made_root = match &found {
        Found::Nothing => match std::fs::create_dir(root) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(io("create the tree's root", e).into()),
        },
        _ => false,
    };
    let (dir, lock) = lock_root(root)?;
    let Planned { found, reuse } =
        if made_root { Planned { found: Found::Nothing, reuse: false } } else { plan(spec, meta)? };
    let root_created = match &found {
        Found::Nothing => true,
        Found::Tree(m) => m.root_created,
        Found::Directory => false,
    };
    if let Found::Tree(old) = &found
        && !reuse
    {
        diag.note(format!(
            "{}: removing the tree an earlier run left ({}, {} files) before making this one",
            root.display(),
            old.state,
            old.files
        ));
        ownership::remove_contents(root, old, spec.shape.threads);
    }
    let info = TreeInfo {
        files: meta.files,
        directories: meta.directories(),
        leaf_directories: meta.leaves(),
        dirs_per_dir: meta.dirs_per_dir,
        depth: meta.depth,
        reused: reuse,
        setup_ns: 0,
        setup_files_created: 0,
        setup_directories_created: 0,
        setup_bytes_written: 0,
        kept: meta.keep_tree,
        removed_files: 0,
        removed_directories: 0,
        kept_directories: Vec::new(),
        left_entries: Vec::new(),
    };
    Ok(TakenTree { dir, lock, root_created, reuse, info })
}

/// Makes the tree (unless an earlier one is used as it is), its marker saying how far it
/// got; returns the operation that failed, if one did.
pub(super) fn set_up_tree(
    spec: &Spec,
    meta: &MetaSpec,
    root: &Path,
    taken: &mut TakenTree,
    diag: &Diagnostics,
    stop: &AtomicUsize,
) -> Result<Option<OpFailure>, Error> {
    if taken.reuse {
        return Ok(None);
    }
    let io = |what: &str, e: std::io::Error| RunError::Other(format!("{what} {}: {e}", root.display()));
    ownership::write_marker(root, &Marker::new(meta, taken.root_created, ownership::SETTING_UP))
        .map_err(|e| io("write the tree's marker in", e))?;
    let clock = Clock::new();
    let made = setup::set_up(
        taken.dir.as_raw_fd(),
        meta,
        spec.shape.threads,
        meta.setup_creates_files(),
        diag.show_progress(),
        stop,
    );
    taken.info.setup_ns = clock.now_ns();
    taken.info.setup_files_created = made.files;
    taken.info.setup_directories_created = made.directories;
    taken.info.setup_bytes_written = made.bytes;
    if made.failure.is_none() && stop.load(Ordering::Relaxed) == 0 {
        let state = if meta.setup_creates_files() { ownership::READY } else { ownership::USED };
        ownership::write_marker(root, &Marker::new(meta, taken.root_created, state))
            .map_err(|e| io("write the tree's marker in", e))?;
    }
    Ok(made.failure)
}

/// The tree's state for the next run written, then the tree removed unless kept; returns
/// what the result says of it, and the lock, held until the result is made.
pub(super) fn leave_tree(
    spec: &Spec,
    meta: &MetaSpec,
    root: &Path,
    taken: TakenTree,
    set_up_done: bool,
    diag: &Diagnostics,
) -> (TreeInfo, Held) {
    let mutated =
        !set_up_done || !meta.ops().iter().all(|op| matches!(op, MetaOp::Read | MetaOp::Stat | MetaOp::Readdir));
    let state = if mutated { ownership::USED } else { ownership::READY };
    let marker = Marker::new(meta, taken.root_created, state);
    let _ = ownership::write_marker(root, &marker);
    let TakenTree { dir, lock, mut info, .. } = taken;
    drop(dir);
    if meta.keep_tree {
        diag.note(format!(
            "--keep-tree: the tree stays in {} ({}); `iopulse {} --files {} ...` without --keep-tree removes it",
            root.display(),
            if mutated { "changed by the run: the next run makes it again" } else { "ready for the next run" },
            root.display(),
            meta.files
        ));
    } else {
        let removed = ownership::remove(root, &marker, spec.shape.threads);
        info.removed_files = removed.files;
        info.removed_directories = removed.directories;
        info.kept_directories = removed.kept_directories.iter().map(|p| p.display().to_string()).collect();
        info.left_entries = removed.left;
        if let Some(first) = info.left_entries.first() {
            diag.warn(format!(
                "{} entries with iopulse's names are not as the tree made them and were left alone, never followed (e.g. {first})",
                info.left_entries.len()
            ));
        }
        if !info.kept_directories.is_empty() {
            diag.warn(format!(
                "{} directories of the tree hold entries iopulse did not create and were left in place (e.g. {})",
                info.kept_directories.len(),
                info.kept_directories[0]
            ));
        }
    }
    (info, lock)
}
