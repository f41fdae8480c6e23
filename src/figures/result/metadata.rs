//! Metadata runs' results (`iopulse DIR --files N --json FILE`, the document of
//! `meta_document.rs`) merged into one (several
//! hosts on one shared filesystem, or two processes side by side), their figures judged
//! when read (`load.rs`, `figures::check_metadata`), by the rules of a block result's
//! merge (`merge.rs`): counts
//! added, each kind's histograms added exactly (never an average of percentiles), rates
//! summed, the longest window, different specs refused unless forced.
//!
//! It merges; it reads no file (`load.rs`) and formats nothing (`output/report/metadata.rs`).

use super::merge::{MergeError, add_within, judge_pair, merged_latency, refuse_duplicates_by, spec_differences_of};
use super::meta_document::{MetaMergedSource, MetaResult, OpFigures, PhaseResult};
use crate::io::metadata::workload::MetaOp;
use crate::io::stats::{decode_histogram, encode_histogram, new_latency_histogram};
use crate::storage::targets::identity::FileId;

/// The spec fields that may differ between metadata runs merged, besides the seeds: each
/// run makes and removes a tree of its own, so concurrent runs on one filesystem have
/// different roots.
const TARGETS: &str = "spec.targets";

/// One metadata result to merge, with the name it was given by.
#[derive(Clone, Debug)]
pub struct Input {
    pub file: String,
    pub result: MetaResult,
    /// The file it was read from, to refuse one file given twice by two names.
    pub id: Option<FileId>,
}

/// The merged result and the notes the merge adds (also in its `notes`).
pub struct Merged {
    pub result: MetaResult,
    pub notes: Vec<String>,
}

/// Refuses one result given twice: the same file (by device and inode), or two copies of
/// one run (same start, tree and spec with its seed): merged, it would double the figures.
pub fn refuse_duplicates(inputs: &[Input]) -> Result<(), MergeError> {
    refuse_duplicates_by(inputs, |i| (i.file.as_str(), i.id, &i.result), same_run, SAME_RUN)
}

/// What `same_run` matches, for messages.
pub const SAME_RUN: &str = "same start, tree and spec";

/// Two metadata results that are copies of one run: same start, tree, spec and seed.
pub fn same_run(a: &MetaResult, b: &MetaResult) -> bool {
    a.window.started_at == b.window.started_at
        && a.target == b.target
        && a.spec.seed == b.spec.seed
        && spec_differences_of(&a.spec, &b.spec).is_empty()
}

/// Merges `inputs` (metadata results of concurrent runs). With `force`, different specs
/// are merged anyway (the first one's spec is kept, and each difference is noted); the
/// tree's root (`spec.targets`) may always differ. Different phases are always refused:
/// there is nothing to add a phase to.
pub fn merge(inputs: &[Input], force: bool) -> Result<Merged, MergeError> {
    let Some(first) = inputs.first() else { return Err(MergeError::Empty) };
    let mut notes = check_inputs(first, &inputs[1..], force)?;
    let phase_names = |r: &MetaResult| r.phases.iter().map(|p| p.name.clone()).collect::<Vec<_>>();

    let mut phases = Vec::with_capacity(first.result.phases.len());
    for (i, name) in phase_names(&first.result).iter().enumerate() {
        let parts: Vec<(&str, &PhaseResult)> =
            inputs.iter().map(|input| (input.file.as_str(), &input.result.phases[i])).collect();
        phases.push(merge_phase(i, name, &parts)?);
    }

    let results: Vec<&MetaResult> = inputs.iter().map(|i| &i.result).collect();
    let mut m = first.result.clone();
    m.tool_version = env!("CARGO_PKG_VERSION").into();
    m.window.started_at = results.iter().map(|r| r.window.started_at.clone()).min().unwrap_or_default();
    let mut targets: Vec<&str> = Vec::new();
    for r in &results {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    m.target = targets.join(",");
    m.phases = phases;

    m.tree = merged_tree(inputs)?;
    // Files touched over files of all the trees (each coverage is over its own tree).
    let touched: f64 = results.iter().map(|r| r.coverage_percent * r.tree.files as f64).sum();
    m.coverage_percent = if m.tree.files == 0 { 0.0 } else { touched / m.tree.files as f64 };

    m.window.stop_reason = ["error", "limit", "interrupted"]
        .into_iter()
        .find(|worst| results.iter().any(|r| r.window.stop_reason == *worst))
        .map(str::to_string)
        .unwrap_or_else(|| first.result.window.stop_reason.clone());
    m.messages.error = inputs.iter().find_map(|i| i.result.messages.error.as_ref().map(|e| format!("{}: {e}", i.file)));
    m.messages.limit = inputs.iter().find_map(|i| i.result.messages.limit.as_ref().map(|e| format!("{}: {e}", i.file)));
    m.messages.warnings = inputs
        .iter()
        .flat_map(|i| i.result.messages.warnings.iter().map(move |w| format!("{}: {w}", i.file)))
        .collect();
    notes.insert(
        0,
        format!(
            "merged from {} metadata results of concurrent runs: latency from each kind's added histograms, ops/s, files/s and bytes/s summed",
            inputs.len()
        ),
    );
    // Each run's intervals are its own clock's: the series are not added.
    m.time_series = Vec::new();
    if inputs.iter().any(|i| !i.result.time_series.is_empty()) {
        notes.push("time series are not merged: each result's own is in its file".into());
    }
    m.messages.notes = notes.clone();
    m.merged_from = Some(
        inputs
            .iter()
            .map(|i| MetaMergedSource {
                file: i.file.clone(),
                target: i.result.target.clone(),
                started_at: i.result.window.started_at.clone(),
                seed: i.result.spec.seed,
                ops: i.result.phases.iter().map(|p| p.ops).fold(0u64, u64::saturating_add),
                window_ns: i.result.phases.iter().map(|p| p.window_ns).fold(0u64, u64::saturating_add),
            })
            .collect(),
    );
    Ok(Merged { result: m, notes })
}

/// The inputs against the first: the same schema, the same spec but for the tree's root
/// (or different and forced, then noted), and the same phases.
fn check_inputs(first: &Input, others: &[Input], force: bool) -> Result<Vec<String>, MergeError> {
    let mut notes = Vec::new();
    let phase_names = |r: &MetaResult| r.phases.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
    for other in others {
        let versions = (first.result.schema_version, other.result.schema_version);
        let differences: Vec<_> = spec_differences_of(&first.result.spec, &other.result.spec)
            .into_iter()
            .filter(|d| d.field != TARGETS && !d.field.starts_with(&format!("{TARGETS}.")))
            .collect();
        notes.extend(judge_pair((&first.file, &other.file), versions, differences, force)?);
        if phase_names(&other.result) != phase_names(&first.result) {
            return Err(MergeError::MetadataPhases {
                file: other.file.clone(),
                found: phase_names(&other.result).join(", "),
                first: first.file.clone(),
                expected: phase_names(&first.result).join(", "),
            });
        }
    }

    Ok(notes)
}

/// The trees: each run made and removed its own, so their counts add; the shape is the
/// spec's, the same in each.
fn merged_tree(inputs: &[Input]) -> Result<crate::figures::result::meta_document::TreeInfo, MergeError> {
    let mut tree = inputs[0].result.tree.clone();
    let tree_sum = |name: &str, get: fn(&MetaResult) -> u64| {
        inputs.iter().try_fold(0u64, |total, input| {
            total.checked_add(get(&input.result)).ok_or_else(|| MergeError::Overflow {
                file: input.file.clone(),
                field: format!("tree.{name}"),
                value: get(&input.result),
            })
        })
    };
    tree.files = tree_sum("files", |r| r.tree.files)?;
    tree.directories = tree_sum("directories", |r| r.tree.directories)?;
    tree.leaf_directories = tree_sum("leaf_directories", |r| r.tree.leaf_directories)?;
    tree.setup_files_created = tree_sum("setup_files_created", |r| r.tree.setup_files_created)?;
    tree.setup_directories_created = tree_sum("setup_directories_created", |r| r.tree.setup_directories_created)?;
    tree.setup_bytes_written = tree_sum("setup_bytes_written", |r| r.tree.setup_bytes_written)?;
    tree.removed_files = tree_sum("removed_files", |r| r.tree.removed_files)?;
    tree.removed_directories = tree_sum("removed_directories", |r| r.tree.removed_directories)?;
    // The set-ups ran side by side: the longest is how long setting up took.
    tree.setup_ns = inputs.iter().map(|i| &i.result).map(|r| r.tree.setup_ns).max().unwrap_or(0);
    tree.reused = inputs.iter().map(|i| &i.result).all(|r| r.tree.reused);
    tree.kept = inputs.iter().map(|i| &i.result).any(|r| r.tree.kept);
    tree.kept_directories =
        inputs.iter().map(|i| &i.result).flat_map(|r| r.tree.kept_directories.iter().cloned()).collect();
    tree.left_entries = inputs.iter().map(|i| &i.result).flat_map(|r| r.tree.left_entries.iter().cloned()).collect();
    Ok(tree)
}

/// One phase (`phases[index]`, named `name`) over concurrent runs, each part with the
/// file it came from: each kind's counts added and histograms added, rates summed.
fn merge_phase(index: usize, name: &str, parts: &[(&str, &PhaseResult)]) -> Result<PhaseResult, MergeError> {
    let mut per_op = Vec::new();
    for op in MetaOp::ALL {
        let kinds: Vec<(&str, &OpFigures)> =
            parts.iter().filter_map(|(file, p)| Some((*file, p.per_op.iter().find(|o| o.op == op)?))).collect();
        if let Some(merged) = merge_kind(index, op, &kinds)? {
            per_op.push(merged);
        }
    }
    let total = per_op.iter().try_fold(0u64, |sum, o: &OpFigures| sum.checked_add(o.ops));
    let Some(total) = total else {
        return Err(MergeError::Overflow {
            file: parts[0].0.to_string(),
            field: format!("phases[{index}].ops"),
            value: parts[0].1.ops,
        });
    };
    for o in &mut per_op {
        if o.share_asked_percent.is_some() {
            o.share_achieved_percent = Some(if total == 0 { 0.0 } else { o.ops as f64 * 100.0 / total as f64 });
        }
    }
    Ok(PhaseResult {
        name: name.to_string(),
        window_ns: parts.iter().map(|(_, p)| p.window_ns).max().unwrap_or(0),
        ops: total,
        ops_per_sec: parts.iter().map(|(_, p)| p.ops_per_sec).sum(),
        files_per_sec: parts.iter().map(|(_, p)| p.files_per_sec).sum(),
        bytes_per_sec: parts.iter().map(|(_, p)| p.bytes_per_sec).sum(),
        per_op,
        steps: Vec::new(),
    })
}

/// One kind `op` of phase `index` over the inputs that have it; `None` when none has.
fn merge_kind(index: usize, op: MetaOp, kinds: &[(&str, &OpFigures)]) -> Result<Option<OpFigures>, MergeError> {
    let Some((_, first)) = kinds.first() else { return Ok(None) };
    let sum = |name: &str, get: fn(&OpFigures) -> u64| {
        kinds.iter().try_fold(0u64, |total, (file, o)| {
            total.checked_add(get(o)).ok_or_else(|| MergeError::Overflow {
                file: file.to_string(),
                field: format!("phases[{index}].per_op[{}].{name}", op.name()),
                value: get(o),
            })
        })
    };
    let ops = sum("ops", |o| o.ops)?;
    let files = sum("files", |o| o.files)?;
    let bytes = sum("bytes", |o| o.bytes)?;
    let mut hist = new_latency_histogram();
    for (file, o) in kinds.iter().filter(|(_, o)| o.ops > 0) {
        let h = decode_histogram(&o.histogram)
            .map_err(|source| MergeError::Histogram { file: file.to_string(), source })?;
        add_within(&mut hist, &h, file, &format!("phases[{index}].per_op[{}].histogram", op.name()))?;
    }
    let latency_ns = merged_latency(&hist, ops, kinds.iter().map(|(_, o)| (o.ops, &o.latency_ns)));
    Ok(Some(OpFigures {
        op,
        ops,
        files,
        bytes,
        ops_per_sec: kinds.iter().map(|(_, o)| o.ops_per_sec).sum(),
        files_per_sec: kinds.iter().map(|(_, o)| o.files_per_sec).sum(),
        bytes_per_sec: kinds.iter().map(|(_, o)| o.bytes_per_sec).sum(),
        share_asked_percent: first.share_asked_percent,
        share_achieved_percent: first.share_achieved_percent,
        latency_ns,
        histogram: if ops == 0 { String::new() } else { encode_histogram(&hist) },
    }))
}
