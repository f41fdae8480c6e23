//! What the guard passed in this process: every ledger judged (a sweep judges one, a job
//! file one, a report one), kept so that the writers touch only what was judged (a symlink
//! is followed only to where an output was seen to land, and nothing is ever written over
//! a target or an input), and so that `--dry-run` can print the whole of it.
//!
//! It keeps and answers; it never writes.

use super::guard::{Passed, Protected};
use super::{Entry, Ledger};
use crate::storage::targets::identity::FileId;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

struct Judged {
    entries: Vec<Entry>,
    /// The entries already kept (a job file of thousands of jobs is kept in linear time).
    kept: Option<std::collections::HashSet<Entry>>,
    inputs: Vec<super::Input>,
    output_landings: Vec<PathBuf>,
    protected: Vec<Protected>,
}

static JUDGED: Mutex<Judged> = Mutex::new(Judged {
    entries: Vec::new(),
    kept: None,
    inputs: Vec::new(),
    output_landings: Vec::new(),
    protected: Vec::new(),
});

fn judged() -> std::sync::MutexGuard<'static, Judged> {
    JUDGED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps what `ledger` was judged to allow (a path judged twice, by a command and by the
/// run it hands over to, is kept once).
pub(super) fn keep(ledger: &Ledger, passed: Passed) {
    let mut j = judged();
    let Judged { entries, kept, .. } = &mut *j;
    let kept = kept.get_or_insert_with(Default::default);
    for entry in &ledger.entries {
        if kept.insert(entry.clone()) {
            entries.push(entry.clone());
        }
    }
    for input in &ledger.inputs {
        if !j.inputs.iter().any(|i| i.path == input.path) {
            j.inputs.push(input.clone());
        }
    }
    j.output_landings.extend(passed.output_landings);
    j.protected.extend(passed.protected);
}

/// Every entry and input judged so far, in the order judged (what `--dry-run` prints).
pub fn all() -> Ledger {
    let j = judged();
    Ledger { entries: j.entries.clone(), inputs: j.inputs.clone() }
}

/// Whether an output was judged to land at `landed` (a writer may follow a link there).
pub fn is_output_landing(landed: &Path) -> bool {
    judged().output_landings.iter().any(|l| l == landed)
}

/// What `landed` is, when it is a target or an input the writers must never replace: by
/// where it lands, and by device and inode checked again where they match (a target
/// removed since, the temporary default, may have left its inode number to a new file).
pub fn protected_at(landed: &Path) -> Option<String> {
    let here = FileId::of(landed);
    let j = judged();
    let is_here =
        |p: &&Protected| p.landing == landed || (here.is_some() && p.id == here && FileId::of(&p.landing) == here);
    j.protected.iter().find(is_here).map(|p| p.shown.clone())
}
