//! The ledger: every path a command will create, write, truncate, rename onto or delete,
//! each with what will happen to it, and every file the command reads. Planning makes it
//! before anything is touched (`front/plan/ledger.rs` for plans, each command for its own
//! outputs); one guard (`guard.rs`) judges it whole against the inputs and the rules of
//! what is never written (docs/safety.md); what it passed is kept for the process
//! (`judged.rs`), and the writers touch nothing else: every output goes through
//! `output.rs`, which writes only what the guard passed. `--dry-run` prints it.
//! `lock.rs`: the exclusive locks a run holds on what two runs must not share.
//!
//! It plans, judges, locks and writes the bytes it is handed; it never decides what an
//! output holds, never touches benchmark data, and never formats for people
//! (`output/report/ledger.rs`).

pub mod guard;
pub mod judged;
pub mod lock;
pub mod output;

use crate::base::diagnostics::error::UsageError;
use crate::workload::spec::Spec;
use std::path::{Path, PathBuf};

/// What a command will do to one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A file written whole: a temporary file beside it, synced, renamed over it. /dev/null
    /// and the standard streams are written through this process's own descriptors.
    Replace,
    /// A table: its rows copied with one more into a temporary file renamed over it.
    Append,
    /// A journal: lines appended in place, under a lock (never a stream).
    Journal,
    /// A directory created if missing; what is written inside is listed on its own.
    MakeDir,
    /// A `--verify-state` record: a regular file written in place, locked for the run
    /// (never a stream, a device or a link onto one).
    Record,
    /// A target: read (and written when `writes`) in place; created and laid out when it
    /// does not exist and the engine touches storage (`creates`).
    Target { writes: bool, creates: bool },
    /// A target the run names but never opens (an engine that moves no bytes).
    Untouched,
    /// A temporary target of the run's own, created in this directory and removed after it.
    TempFile,
    /// A metadata tree's root: directories and files made under it, used, and only the
    /// names iopulse gives removed at the end (`--keep-tree`: kept).
    Tree { keep: bool },
}

impl Action {
    /// Actions that create or replace a file whose name the user gave (an output).
    pub fn is_output(self) -> bool {
        matches!(self, Action::Replace | Action::Append | Action::Journal | Action::Record | Action::MakeDir)
    }
}

/// One path the command touches: who asked for it (a flag, `TARGET`, a key of a job file),
/// the path as given, and what will happen to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub flag: String,
    pub path: PathBuf,
    pub action: Action,
}

impl Entry {
    pub fn new(flag: impl Into<String>, path: impl Into<PathBuf>, action: Action) -> Entry {
        Entry { flag: flag.into(), path: path.into(), action }
    }
}

/// A file the command reads and never writes (a job file, a trace, a result, a target a
/// result names), and what it is to the command.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Input {
    pub path: PathBuf,
    pub what: String,
}

/// Everything one command touches and reads.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    pub entries: Vec<Entry>,
    pub inputs: Vec<Input>,
}

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// A path the command writes, creates or deletes.
    pub fn touch(&mut self, flag: impl Into<String>, path: impl Into<PathBuf>, action: Action) {
        self.entries.push(Entry::new(flag, path, action));
    }

    /// A file the command reads and must never write.
    pub fn read(&mut self, what: impl Into<String>, path: impl Into<PathBuf>) {
        self.inputs.push(Input { path: path.into(), what: what.into() });
    }

    /// What one run of `spec` touches besides its report's outputs: its targets (`targets`,
    /// as the run will name them: `{rank}` and `{host}` substituted), or its tree, or the
    /// temporary file of the embedded default; its `--verify-state` record (`record`, per
    /// rank); and the trace it replays, read. `job` names the job for messages ("" alone).
    pub fn add_run(&mut self, spec: &Spec, targets: &[PathBuf], record: Option<&Path>, job: &str) {
        let target_flag = if job.is_empty() { "TARGET".to_string() } else { format!("TARGET of job [{job}]") };
        if let Some(meta) = &spec.metadata {
            let flag = if job.is_empty() { "--files".to_string() } else { format!("--files of job [{job}]") };
            for root in targets {
                self.touch(flag.clone(), root, Action::Tree { keep: meta.keep_tree });
            }
        } else if spec.is_embedded_default() {
            if spec.io.engine.caps().touches_storage
                && let Ok(dir) = crate::storage::targets::temp_dir::choose()
            {
                self.touch("TMPDIR", dir, Action::TempFile);
            }
        } else {
            let action = if spec.io.engine.caps().touches_storage {
                Action::Target { writes: spec.writes() || spec.trims(), creates: true }
            } else {
                Action::Untouched
            };
            for target in targets {
                self.touch(target_flag.clone(), target, action);
            }
        }
        if let Some(record) = record {
            self.touch("--verify-state", record, Action::Record);
        }
        if let Some(replay) = &spec.replay {
            for file in &replay.trace_files {
                self.read("the trace this command replays", file);
            }
        }
    }

    /// Judges the whole ledger (`guard::judge`) and, once it passes, keeps what it allows
    /// for the writers of this process (`judged`).
    pub fn judge(&self) -> Result<(), UsageError> {
        let passed = guard::judge(self)?;
        judged::keep(self, passed);
        Ok(())
    }
}

/// For the tests of the guard and of the writers: `outputs` judged against `targets`
/// (written) and `inputs` (job files).
#[cfg(test)]
pub(crate) fn judge_outputs(outputs: &[Entry], targets: &[PathBuf], inputs: &[&Path]) -> Result<(), UsageError> {
    let mut ledger = Ledger::new();
    for t in targets {
        ledger.touch("TARGET", t, Action::Target { writes: true, creates: true });
    }
    for i in inputs {
        ledger.read("an input this command reads", *i);
    }
    ledger.entries.extend(outputs.iter().cloned());
    ledger.judge()
}
