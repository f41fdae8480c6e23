//! The JSON that CI benchmark dashboards read (github-action-benchmark's `customBiggerIsBetter`
//! and `customSmallerIsBetter` tools): an array of `{name, unit, value, range, extra}`, one
//! entry per figure, rates in one file and times in the other.
//!
//! It formats figures it is given; it computes none.

use crate::figures::compare::Comparison;
use crate::figures::result::named::Unit;
use serde::Serialize;

/// One entry of the array.
#[derive(Debug, Serialize)]
pub struct Entry {
    pub name: String,
    pub unit: &'static str,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<String>,
}

/// The unit as the dashboard shows it (values are in it: IOPS, bytes/s, ns).
pub fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Iops => "IOPS",
        Unit::OpsPerSec => "ops/s",
        Unit::BytesPerSec => "bytes/s",
        Unit::Ns => "ns",
    }
}

/// The entries as the JSON array.
pub fn array(entries: &[Entry]) -> String {
    let mut text = serde_json::to_string_pretty(entries).expect("entries always serialize");
    text.push('\n');
    text
}

/// The new side's medians of a comparison: rates (`bigger`) or times.
pub fn compare(c: &Comparison, bigger: bool) -> String {
    let entries: Vec<Entry> = c
        .figures
        .iter()
        .filter(|f| f.higher_is_better == bigger)
        .filter_map(|f| {
            Some(Entry {
                name: format!("{} {}", f.scope, f.figure),
                unit: unit_name(f.unit),
                value: f.new?,
                range: f.interval_percent.map(|[lo, hi]| format!("{lo:+.1}% .. {hi:+.1}%")),
                extra: Some(format!(
                    "{} run(s); vs base: {}",
                    f.new_runs,
                    f.change_percent.map_or_else(|| "-".into(), |c| format!("{c:+.1}% ({})", f.verdict.name()))
                )),
            })
        })
        .collect();
    array(&entries)
}
