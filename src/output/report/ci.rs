//! A run's (or a job file's) result in the formats CI systems read: JUnit XML (each
//! `--expect` a test case), a Markdown summary table (a CI job's page), and the JSON of
//! benchmark dashboards (github-action-benchmark's customBiggerIsBetter and
//! customSmallerIsBetter). Each takes the results by scope: `run`, or `job NAME`.
//!
//! It formats; it judges nothing (expectations were judged when the result was made).

use super::bench_action::{self, Entry};
use super::junit::{Case, Outcome};
use crate::figures::result::RunResult;
use crate::figures::result::named;
use std::fmt::Write;

fn shown(unit: named::Unit, v: f64) -> String {
    super::compare::value(unit, v)
}

fn expectation_text(e: &crate::figures::result::ExpectationOutcome) -> String {
    let figure = e.value.map_or_else(|| "none (the run has no such figure)".to_string(), |v| shown(e.unit, v));
    format!("{}: {} is {figure}, {}", e.expectation, e.figure, if e.passed { "met" } else { "NOT met" })
}

/// The headline figures of a result, one line.
fn summary(r: &RunResult) -> String {
    let mut parts = vec![
        format!("iops {}", shown(named::Unit::Iops, r.figures.total.iops)),
        format!("bw {}", shown(named::Unit::BytesPerSec, r.figures.total.bw_bytes_per_sec)),
    ];
    for (op, s) in [("read", &r.figures.read), ("write", &r.figures.write)] {
        if s.ops > 0 {
            parts.push(format!("{op}.p99 {}", super::units::latency_ns(s.latency_ns.p99)));
        }
    }
    parts.join(", ")
}

/// Each expectation a test case (class `iopulse.SCOPE`); a run that failed is a failed
/// case of its own; a run with neither is one passing case carrying its figures.
pub fn junit(scopes: &[(String, &RunResult)]) -> String {
    let mut cases = Vec::new();
    for (scope, r) in scopes {
        let class = format!("iopulse.{scope}");
        if let Some(error) = &r.outcome.error {
            cases.push(Case {
                class: class.clone(),
                name: "run".into(),
                outcome: Outcome::Failed(error.clone()),
                output: summary(r),
            });
        }
        for e in &r.outcome.expectations {
            let text = expectation_text(e);
            cases.push(Case {
                class: class.clone(),
                name: e.expectation.clone(),
                outcome: if e.passed { Outcome::Passed } else { Outcome::Failed(text.clone()) },
                output: text,
            });
        }
        if r.outcome.error.is_none() && r.outcome.expectations.is_empty() {
            cases.push(Case { class, name: "run".into(), outcome: Outcome::Passed, output: summary(r) });
        }
    }
    super::junit::document("iopulse", &cases)
}

/// A table of each scope's headline figures, then one of the expectations.
pub fn markdown(scopes: &[(String, &RunResult)]) -> String {
    let mut out = String::from(
        "### iopulse\n\n| scope | IOPS | bandwidth | read p50 | read p99 | write p50 | write p99 | CPU per I/O |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let lat = |s: &crate::io::stats::OpSummary, ns: u64| {
        if s.ops > 0 { super::units::latency_ns(ns) } else { "-".into() }
    };
    for (scope, r) in scopes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            super::markdown::cell(scope),
            super::units::iops(r.figures.total.iops),
            super::units::bandwidth_binary(r.figures.total.bw_bytes_per_sec),
            lat(&r.figures.read, r.figures.read.latency_ns.p50),
            lat(&r.figures.read, r.figures.read.latency_ns.p99),
            lat(&r.figures.write, r.figures.write.latency_ns.p50),
            lat(&r.figures.write, r.figures.write.latency_ns.p99),
            super::units::latency_ns(r.machine.cpu.per_io_ns.round() as u64)
        );
    }
    let all: Vec<(&String, &crate::figures::result::ExpectationOutcome)> =
        scopes.iter().flat_map(|(s, r)| r.outcome.expectations.iter().map(move |e| (s, e))).collect();
    if !all.is_empty() {
        let failed = all.iter().filter(|(_, e)| !e.passed).count();
        let _ = writeln!(
            out,
            "\n{} of {} expectations met{}\n\n| scope | expectation | figure | result |\n|---|---|---:|---|",
            all.len() - failed,
            all.len(),
            if failed > 0 { ": **FAILED**" } else { "" }
        );
        for (scope, e) in all {
            let figure = e.value.map_or_else(|| "none".to_string(), |v| shown(e.unit, v));
            let _ = writeln!(
                out,
                "| {} | `{}` | {figure} | {} |",
                super::markdown::cell(scope),
                super::markdown::cell(&e.expectation),
                if e.passed { "pass" } else { "**FAIL**" }
            );
        }
    }
    for (scope, r) in scopes {
        if let Some(error) = &r.outcome.error {
            let _ = writeln!(out, "\n**{scope} failed:** {error}");
        }
    }
    out
}

/// The figures `compare` compares, of each scope: rates (`bigger`) or times.
pub fn benchmark(scopes: &[(String, &RunResult)], bigger: bool) -> String {
    let mut entries = Vec::new();
    for (scope, r) in scopes {
        for name in named::compared(r) {
            let Some(parsed) = named::parse(&name) else { continue };
            if parsed.unit.higher_is_better() != bigger {
                continue;
            }
            let Some(value) = named::value(r, &parsed) else { continue };
            entries.push(Entry {
                name: format!("{scope} {name}"),
                unit: bench_action::unit_name(parsed.unit),
                value,
                range: None,
                extra: None,
            });
        }
    }
    bench_action::array(&entries)
}
