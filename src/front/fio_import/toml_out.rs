//! A translated job file written as an iopulse TOML job file (docs/jobs.md): a header
//! saying where it came from, the warnings and notes as comments, keys every job shares
//! in `[global]`, then one table per job, each key commented with its fio line.
//!
//! It formats; it must not translate or check (what it writes was checked already).

use super::translate::Translated;
use crate::front::plan::job_file::parse::{Entry, Value};
use std::fmt::Write as _;

/// The TOML text of `t`, read back by `iopulse run` to the same jobs.
pub fn render(t: &Translated) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# iopulse job file translated from the fio job file {} (iopulse from-fio)", t.file.path);
    let _ = writeln!(out, "# Each key's comment gives the line of the fio option it comes from; docs/fio.md");
    let _ = writeln!(out, "# says what each fio option becomes.");
    for w in &t.warnings {
        let _ = writeln!(out, "# warning: {w}");
    }
    for n in &t.notes {
        let _ = writeln!(out, "# note: {n}");
    }
    let shared = shared_entries(t);
    if !shared.is_empty() {
        out.push_str("\n[global]\n");
        for e in &shared {
            entry(&mut out, e);
        }
    }
    for job in &t.file.jobs {
        let _ = writeln!(out, "\n[{}]", key(&job.name));
        for e in job.entries.iter().filter(|e| !shared.iter().any(|s| s.key == e.key && s.value == e.value)) {
            entry(&mut out, e);
        }
    }
    out
}

/// The entries every job gives alike (with two jobs or more), for `[global]`.
fn shared_entries(t: &Translated) -> Vec<Entry> {
    let [first, rest @ ..] = t.file.jobs.as_slice() else { return Vec::new() };
    if rest.is_empty() {
        return Vec::new();
    }
    first
        .entries
        .iter()
        .filter(|e| e.key != "stonewall")
        .filter(|e| rest.iter().all(|j| j.entries.iter().any(|o| o.key == e.key && o.value == e.value)))
        .cloned()
        .collect()
}

fn entry(out: &mut String, e: &Entry) {
    let value = match &e.value {
        Value::Switch(b) => b.to_string(),
        Value::Text(t) if t.parse::<u64>().is_ok() => t.clone(),
        Value::Text(t) => quoted(t),
        Value::List(items) => format!("[{}]", items.iter().map(|i| quoted(i)).collect::<Vec<_>>().join(", ")),
    };
    if e.line == 0 {
        let _ = writeln!(out, "{} = {value}    # given to from-fio", key(&e.key));
    } else {
        let _ = writeln!(out, "{} = {value}    # line {}", key(&e.key), e.line);
    }
}

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A bare key when TOML allows one, else quoted.
fn key(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        name.to_string()
    } else {
        quoted(name)
    }
}
