//! A document read from a file typed, and a field that does not parse named by its path
//! (`total.ops`, `targets[0].device_witness.read_ios_share`), also inside the sections that
//! `#[serde(flatten)]` puts at their holder's level.
//!
//! serde reads a flattened section from a buffered copy of its holder's remaining keys, and
//! the path tracking stops at the holder: a negative `total.ops` was reported as an error
//! of the whole result. Here each section type of the documents (the result's, the spec's,
//! a target's, a device witness's, a replay's, a metadata result's) is tried alone on the
//! holder (a section reads its own keys and ignores the others); the one that fails with
//! the same error names the field, and a section within a section is followed the same way.
//! Only on failure: a document that parses is read once. It must not judge figures
//! (`figures.rs` does) or read files (`load.rs` does).

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

/// Why a document did not parse: the field's path (empty: the document itself) and the error.
#[derive(Debug)]
pub struct Unparsed {
    pub path: String,
    pub error: serde_json::Error,
}

/// `value` as a `T`, or the path of the first field that does not parse and why.
pub fn typed<T: DeserializeOwned>(value: &Value) -> Result<T, Unparsed> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut path: Vec<Segment> = e.path().iter().cloned().collect();
        let error = e.into_inner();
        refine(value, &mut path, &error.to_string());
        Unparsed { path: display(&path), error }
    })
}

/// Each section type, tried alone on a holder: the path within it where it fails with
/// `message`, if it does.
type SectionTry = fn(&Value, &str) -> Option<Vec<Segment>>;

const SECTIONS: &[SectionTry] = &[
    failing_at::<super::RunWindow>,
    failing_at::<super::IoFigures>,
    failing_at::<super::MachineFacts>,
    failing_at::<super::DataFacts>,
    failing_at::<super::RunOutcome>,
    failing_at::<super::Schedule>,
    failing_at::<super::Combination>,
    failing_at::<super::TargetStorage>,
    failing_at::<super::ReplayCounts>,
    failing_at::<super::ReplayTiming>,
    failing_at::<super::ReplayFit>,
    failing_at::<crate::storage::targets::WitnessShares>,
    failing_at::<crate::storage::targets::WitnessCaveats>,
    failing_at::<crate::figures::result::meta_document::MetaWindow>,
    failing_at::<crate::figures::result::meta_document::MetaMessages>,
    failing_at::<crate::workload::spec::shape::ShapeSpec>,
    failing_at::<crate::workload::spec::access::AccessSpec>,
    failing_at::<crate::workload::spec::window::WindowSpec>,
    failing_at::<crate::workload::spec::io_path::IoSpec>,
    failing_at::<crate::workload::spec::data::DataSpec>,
    failing_at::<crate::workload::spec::durability::DurabilitySpec>,
    failing_at::<crate::workload::spec::pacing::PacingSpec>,
    failing_at::<crate::workload::spec::errors::ErrorSpec>,
    failing_at::<crate::workload::spec::output::OutputSpec>,
];

fn failing_at<S: DeserializeOwned>(holder: &Value, message: &str) -> Option<Vec<Segment>> {
    match serde_path_to_error::deserialize::<_, S>(holder) {
        Err(e) if e.inner().to_string() == message => Some(e.path().iter().cloned().collect()),
        _ => None,
    }
}

/// Extends `path` into the flattened sections of the value it leads to, while a section
/// fails there with `message` further in.
fn refine(root: &Value, path: &mut Vec<Segment>, message: &str) {
    // Sections nest a few levels at most (a target's storage, its witness's shares).
    for _ in 0..8 {
        let Some(holder) = at(root, path).filter(|v| v.is_object()) else { return };
        match SECTIONS.iter().find_map(|section| section(holder, message)) {
            Some(further) if !further.is_empty() => path.extend(further),
            _ => return,
        }
    }
}

fn at<'a>(root: &'a Value, path: &[Segment]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, segment| match segment {
        Segment::Seq { index } => v.get(index),
        Segment::Map { key } => v.get(key),
        Segment::Enum { .. } | Segment::Unknown => None,
    })
}

fn display(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Enum { variant } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(variant);
            }
            Segment::Unknown => out.push_str(if out.is_empty() { "?" } else { ".?" }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::result::RunResult;

    /// A real result as its JSON: a short null-engine run on a small file.
    fn result_value() -> Value {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.dat");
        let argv = [target.to_str().unwrap(), "--file-size", "64k", "--duration", "0.05", "--engine", "null"];
        let spec = crate::testing::spec_of(argv).unwrap();
        let cluster = crate::coordination::cluster::Cluster::alone();
        let start = crate::coordination::run::start_line::StartLine::new(&cluster, None);
        let diag = crate::base::diagnostics::warnings::Diagnostics::silent();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let result = crate::coordination::run::run(&spec, &diag, stop, &start).unwrap().result;
        serde_json::to_value(&result).unwrap()
    }

    #[test]
    fn a_bad_field_inside_a_flattened_section_is_named_by_its_path() {
        let good = result_value();
        assert!(typed::<RunResult>(&good).is_ok());
        for (pointer, path) in [
            ("/total/ops", "total.ops"),
            ("/window_ns", "window_ns"),
            ("/spec/block_size_bytes", "spec.block_size_bytes"),
            ("/targets/0/size_bytes", "targets[0].size_bytes"),
        ] {
            let mut bad = good.clone();
            *bad.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer} in the sample")) = Value::from(-1);
            let e = typed::<RunResult>(&bad).unwrap_err();
            assert_eq!(e.path, path, "{}", e.error);
            assert!(e.error.to_string().contains("-1"), "{}", e.error);
        }
    }
}
