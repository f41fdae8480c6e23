//! The ledger for people: what `--dry-run` prints, a line per path with what the command
//! would do to it. The state of a target (missing, a file of some size, a device) is read
//! when printed, by looking only.
//!
//! It formats; it judges nothing and touches nothing.

use crate::base::units::display::bytes;
use crate::storage::ledger::{Action, Entry, Ledger};
use std::fmt::Write;
use std::os::unix::fs::FileTypeExt;

/// The whole ledger, a line per path: inputs first, then every path touched, in the order
/// planned.
pub fn render(ledger: &Ledger) -> String {
    let mut text = String::from("--dry-run: nothing was touched. This command would:\n");
    let width = ledger
        .inputs
        .iter()
        .map(|i| i.path.as_os_str().len())
        .chain(ledger.entries.iter().map(|e| e.path.as_os_str().len()))
        .max()
        .unwrap_or(0)
        .min(60);
    for input in &ledger.inputs {
        let _ = writeln!(text, "  {:<8} {:<width$}  {}, never written", "read", input.path.display(), input.what);
    }
    for entry in &ledger.entries {
        let (verb, what) = described(entry);
        let _ = writeln!(text, "  {verb:<8} {:<width$}  {}: {what}", entry.path.display(), entry.flag);
    }
    if ledger.entries.is_empty() {
        text.push_str("  write nothing but its report (stdout and stderr)\n");
    }
    text
}

/// A verb and what happens, for one entry.
fn described(entry: &Entry) -> (&'static str, String) {
    let is_stream = crate::storage::ledger::guard::is_stream(&entry.path);
    match entry.action {
        Action::Replace | Action::Append if is_stream => {
            ("stream", "written through this process's own descriptor".into())
        }
        Action::Replace => ("replace", "written whole (a temporary file beside it, synced, renamed over it)".into()),
        Action::Append => {
            ("append", "a row added (the table copied with it into a temporary file, renamed over it)".into())
        }
        Action::Journal => ("append", "a line per finished run, appended in place under a lock".into()),
        Action::MakeDir => ("mkdir", "created if missing; the files written in it are listed".into()),
        Action::Record => ("record", "written in place, locked for the run, updated as writes become durable".into()),
        Action::Target { writes, creates } => target(entry, writes, creates),
        Action::Untouched => ("name", "never opened (the engine moves no bytes)".into()),
        Action::TempFile => ("temp", "a temporary file made in it for the run, removed after it".into()),
        Action::Tree { keep } => (
            "tree",
            if keep {
                "directories and files made (or reused) under it, kept after the run (--keep-tree)".into()
            } else {
                "directories and files made (or reused) under it; at the end only the names iopulse gave are removed"
                    .into()
            },
        ),
    }
}

fn target(entry: &Entry, writes: bool, creates: bool) -> (&'static str, String) {
    let used = if writes { "read and written in place" } else { "read in place" };
    match std::fs::metadata(&entry.path) {
        Ok(m) if m.file_type().is_block_device() => ("device", format!("a block device, {used}")),
        Ok(m) if m.is_file() => {
            ("target", format!("a file of {} now, {used} (laid out where it lacks data)", bytes(m.len())))
        }
        Ok(_) => ("target", used.to_string()),
        Err(_) if creates => ("create", format!("created and laid out, then {used}")),
        Err(_) => ("target", format!("missing, {used}")),
    }
}
