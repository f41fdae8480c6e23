//! What `merge` takes in, and what it refuses before adding anything: standard input,
//! the same run twice, results of different specs (unless forced), each named with its file.

use super::{Input, MergeError};
use crate::figures::result::RunResult;
use crate::figures::result::jobs::JobsResult;
use crate::storage::targets::identity::FileId;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Spec fields that may differ between runs of the same workload.
/// The seeds: two runs of one workload draw their own offsets and write their own bytes.
const SPEC_FIELDS_ALLOWED_TO_DIFFER: &[&str] = &["spec.seed", "spec.data_seed"];

/// Spec fields, with everything under them, that may differ too: `--expect` judges a
/// result and changes nothing the run does.
const SPEC_PREFIXES_ALLOWED_TO_DIFFER: &[&str] = &["spec.expect"];

/// A spec field whose value differs between two results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecDifference {
    /// JSON path of the field, e.g. `spec.block_size_bytes`.
    pub field: String,
    pub first: String,
    pub other: String,
}

pub(crate) fn describe(differences: &[SpecDifference], first: &str, other: &str) -> String {
    differences
        .iter()
        .map(|d| format!("{} is {} in {first} but {} in {other}", d.field, d.first, d.other))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A block result read (`load::document`: a regular file on a real filesystem of at most
/// `load::MAX_RESULT_BYTES`, parsed without its time series, which merging drops, its
/// figures judged) as an input to merge, with the job-file document (`jobs[]`,
/// `phases[]`) when the file is the result of a job file (`iopulse run`).
pub fn document_of(loaded: crate::figures::result::load::Loaded) -> (Input, Option<JobsResult>) {
    (Input { file: loaded.file, result: loaded.result, id: Some(loaded.id) }, loaded.jobs)
}

/// Refuses an input that is also where the merged result goes (stdout, a regular file
/// by device and inode): `merge a.json b.json > a.json` would read an emptied `a.json`,
/// and `>> a.json` would append the merged result to it. Checked before any input is read.
pub fn refuse_stdout_as_input(paths: &[&Path]) -> Result<(), MergeError> {
    let Ok(out) = nix::sys::stat::fstat(std::io::stdout()) else { return Ok(()) };
    if out.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Ok(());
    }
    let out = Some(FileId { dev: out.st_dev, ino: out.st_ino });
    match paths.iter().find(|p| FileId::of(p) == out) {
        Some(p) => Err(MergeError::StdoutIsAnInput { file: p.display().to_string() }),
        None => Ok(()),
    }
}

/// Refuses one result given twice: the same file (by device and inode), or two copies of
/// one run (same host, same start to the nanosecond where recorded, same spec and seed).
/// Merging takes its inputs as concurrent runs, so a duplicate would double the figures.
pub fn refuse_duplicates(inputs: &[Input]) -> Result<(), MergeError> {
    refuse_duplicates_by(inputs, |i| (i.file.as_str(), i.id, &i.result), same_run, SAME_RUN)
}

/// What `same_run` matches, for messages.
pub const SAME_RUN: &str = "same host, start and spec";

/// Two results that are copies of one run: same host, same start to the nanosecond where
/// recorded, same spec and seed (what `merge` and `compare` refuse to count twice).
pub fn same_run(a: &RunResult, b: &RunResult) -> bool {
    a.machine.environment.hostname == b.machine.environment.hostname
        && a.window.started_at == b.window.started_at
        && a.window.window_start_unix_ns == b.window.window_start_unix_ns
        && a.spec.seed == b.spec.seed
        && spec_differences(a, b).is_empty()
}

/// The duplicate check of any kind of result (block or metadata): each pair of inputs,
/// refused when both were read from one file or `same_run` says they are one run (`how`
/// names what matched). `parts` gives an input's name, file identity and result.
pub(crate) fn refuse_duplicates_by<I, R>(
    inputs: &[I],
    parts: impl Fn(&I) -> (&str, Option<FileId>, &R),
    same_run: impl Fn(&R, &R) -> bool,
    how: &'static str,
) -> Result<(), MergeError> {
    for (i, a) in inputs.iter().enumerate() {
        let (a_file, a_id, a_result) = parts(a);
        for b in &inputs[i + 1..] {
            let (b_file, b_id, b_result) = parts(b);
            let how = if a_id.is_some() && a_id == b_id {
                "one file, by device and inode"
            } else if same_run(a_result, b_result) {
                how
            } else {
                continue;
            };
            return Err(MergeError::Duplicate { first: a_file.to_string(), other: b_file.to_string(), how });
        }
    }
    Ok(())
}

/// The fields of two specs that differ (by their JSON form), the seeds aside.
pub fn spec_differences(a: &RunResult, b: &RunResult) -> Vec<SpecDifference> {
    spec_differences_of(&a.spec, &b.spec)
}

/// The fields of two specs that differ (by their JSON form), the seeds aside: what
/// `spec_differences` compares, for any result that carries a spec (a metadata run's).
pub fn spec_differences_of(a: &crate::workload::spec::Spec, b: &crate::workload::spec::Spec) -> Vec<SpecDifference> {
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    flatten("spec", &serde_json::to_value(a).unwrap_or(Value::Null), &mut fa);
    flatten("spec", &serde_json::to_value(b).unwrap_or(Value::Null), &mut fb);
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !SPEC_FIELDS_ALLOWED_TO_DIFFER.contains(&k.as_str()))
        .filter(|k| !SPEC_PREFIXES_ALLOWED_TO_DIFFER.iter().any(|p| *k == p || k.starts_with(&format!("{p}."))))
        .filter_map(|k| {
            let (x, y) = (fa.get(k), fb.get(k));
            (x != y).then(|| SpecDifference {
                field: k.clone(),
                first: x.cloned().unwrap_or_else(|| "absent".into()),
                other: y.cloned().unwrap_or_else(|| "absent".into()),
            })
        })
        .collect()
}

/// Leaves of a JSON value by dotted path (`spec.run_length.duration.ns`, `spec.targets.0`).
pub(super) fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                flatten(&format!("{prefix}.{k}"), child, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), child, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// The inputs' specs against the first's: a different schema is refused; different specs
/// are refused unless `force`, and then noted.
pub(super) fn check_specs(first: &Input, others: &[Input], force: bool) -> Result<Vec<String>, MergeError> {
    let mut notes = Vec::new();
    for other in others {
        let versions = (first.result.schema_version, other.result.schema_version);
        let differences = spec_differences(&first.result, &other.result);
        notes.extend(judge_pair((&first.file, &other.file), versions, differences, force)?);
    }
    Ok(notes)
}

/// One input (`files.1`) against the first (`files.0`), for a merge of runs or of metadata
/// runs: another schema version (`versions`: the first's, the other's) is refused; specs
/// with `differences` are refused unless `force`, and then the note is returned.
pub(crate) fn judge_pair(
    (first, other): (&str, &str),
    (expected, found): (u32, u32),
    differences: Vec<SpecDifference>,
    force: bool,
) -> Result<Option<String>, MergeError> {
    if found != expected {
        return Err(MergeError::SchemaVersion { file: other.into(), found, first: first.into(), expected });
    }
    if differences.is_empty() {
        return Ok(None);
    }
    if !force {
        return Err(MergeError::SpecMismatch { first: first.into(), other: other.into(), differences });
    }
    Ok(Some(format!(
        "--force: merged despite different specs ({}); the spec shown is {first}'s",
        describe(&differences, first, other)
    )))
}
