//! `iopulse compare`'s report: a table for people (text), a summary table for a CI job's
//! page (Markdown), a test case per verdict (JUnit, `junit.rs`), and the new side's
//! figures as CI dashboards read them (benchmark-action JSON, `bench_action.rs`).
//!
//! It formats a `compare::Comparison`; it computes nothing.

use super::units;
use crate::figures::compare::{Comparison, FigureComparison, Verdict};
use crate::figures::result::named::Unit;
use std::fmt::Write;

/// A figure's value in its unit, for people.
pub fn value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Iops => format!("{} IOPS", units::iops(v)),
        Unit::OpsPerSec => format!("{} ops/s", units::iops(v)),
        Unit::BytesPerSec => units::bandwidth_binary(v),
        Unit::Ns => units::latency_ns(v.round().max(0.0) as u64),
    }
}

fn opt_value(unit: Unit, v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| value(unit, v))
}

pub(super) fn change(f: &FigureComparison) -> String {
    f.change_percent.map_or_else(|| "-".into(), |c| format!("{c:+.1}%"))
}

pub(super) fn interval(f: &FigureComparison) -> String {
    f.interval_percent.map_or_else(|| "-".into(), |[lo, hi]| format!("[{lo:+.1}%, {hi:+.1}%]"))
}

fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Improved => "improved",
        Verdict::Regressed => "REGRESSED",
        Verdict::NoChange => "no change",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// The sides, the differences and one line per figure, grouped by scope.
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compare: base {} run(s) from {} file(s), new {} run(s) from {} file(s); threshold {}%, confidence {}%",
        c.base.runs,
        c.base.files.len(),
        c.new.runs,
        c.new.files.len(),
        c.threshold_percent,
        c.confidence_percent
    );
    for d in &c.differences {
        let _ = writeln!(out, "⚠ NOT COMPARABLE ({}): {} is {} in base but {} in new", d.scope, d.field, d.base, d.new);
    }
    for s in &c.only_in_base {
        let _ = writeln!(out, "note: {s} is in the base only: not compared");
    }
    for s in &c.only_in_new {
        let _ = writeln!(out, "note: {s} is in the new side only: not compared");
    }
    let mut scope = "";
    for f in &c.figures {
        if f.scope != scope {
            scope = &f.scope;
            let _ = writeln!(out, "\n{scope}:");
            let _ = writeln!(
                out,
                "  {:<16} {:>16} {:>16} {:>9} {:>20}  verdict",
                "figure", "base", "new", "change", "interval"
            );
        }
        let _ = writeln!(
            out,
            "  {:<16} {:>16} {:>16} {:>9} {:>20}  {}",
            f.figure,
            opt_value(f.unit, f.base),
            opt_value(f.unit, f.new),
            change(f),
            interval(f),
            mark(f.verdict)
        );
    }
    let mut notes: Vec<&str> = c.figures.iter().filter_map(|f| f.note.as_deref()).collect();
    notes.sort_unstable();
    notes.dedup();
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            let _ = writeln!(out, "note: {n}");
        }
    }
    let k = &c.counts;
    let _ = writeln!(
        out,
        "\n{} improved, {} regressed, {} no change, {} inconclusive{}",
        k.improved,
        k.regressed,
        k.no_change,
        k.inconclusive,
        if c.regressed { ": REGRESSION" } else { "" }
    );
    out
}

/// A GitHub-flavoured Markdown summary: the verdict line, the differences, one table row
/// per figure.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let k = &c.counts;
    let _ = writeln!(
        out,
        "### iopulse compare: {}\n\n{} improved, {} regressed, {} no change, {} inconclusive (threshold {}%, confidence {}%; base {} run(s), new {} run(s))\n",
        if c.regressed { "regression" } else { "no regression" },
        k.improved,
        k.regressed,
        k.no_change,
        k.inconclusive,
        c.threshold_percent,
        c.confidence_percent,
        c.base.runs,
        c.new.runs
    );
    if !c.differences.is_empty() {
        let _ = writeln!(out, "> [!WARNING]\n> The sides differ besides their figures:");
        for d in &c.differences {
            let _ = writeln!(out, "> - {}: `{}` is `{}` in base but `{}` in new", d.scope, d.field, d.base, d.new);
        }
        out.push('\n');
    }
    let _ = writeln!(out, "| scope | figure | base | new | change | interval | verdict |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---|");
    for f in &c.figures {
        let verdict = match f.verdict {
            Verdict::Regressed => "**regressed**".to_string(),
            v => v.name().to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} | {} |",
            super::markdown::cell(&f.scope),
            super::markdown::cell(&f.figure),
            opt_value(f.unit, f.base),
            opt_value(f.unit, f.new),
            change(f),
            interval(f),
            verdict
        );
    }
    out
}

/// Each figure's verdict as a JUnit test case: regressed is a failure, inconclusive
/// skipped, improved and no change pass.
pub fn junit(c: &Comparison) -> String {
    let cases: Vec<super::junit::Case> = c
        .figures
        .iter()
        .map(|f| {
            let message = format!(
                "{}: base {}, new {}, change {} (interval {}), {}{}",
                f.figure,
                opt_value(f.unit, f.base),
                opt_value(f.unit, f.new),
                change(f),
                interval(f),
                f.verdict.name(),
                f.note.as_deref().map(|n| format!("; {n}")).unwrap_or_default()
            );
            super::junit::Case {
                class: format!("iopulse.compare.{}", f.scope),
                name: f.figure.clone(),
                outcome: match f.verdict {
                    Verdict::Regressed => super::junit::Outcome::Failed(message.clone()),
                    Verdict::Inconclusive => super::junit::Outcome::Skipped(message.clone()),
                    _ => super::junit::Outcome::Passed,
                },
                output: message,
            }
        })
        .collect();
    super::junit::document("iopulse compare", &cases)
}
