//! `iopulse compare` of metadata runs' results (`iopulse DIR --files N --json FILE`):
//! each phase a scope (`metadata mix`, `metadata create`), each operation kind's ops/s
//! and its p50, p99 and p99.9 latency a figure (`stat.ops_per_sec`, `create.p99`), and
//! the phase's ops/s (`ops_per_sec`), judged as block figures are (`compare::judge`: the
//! rank test over repetitions, a percentile's interval from each histogram for single
//! runs). What differs between the sides besides their figures: the spec (the seeds
//! aside, as merge compares it), the iopulse version and the result layout.
//!
//! It compares; it reads no file (`inputs.rs`) and formats nothing (`output/report/compare.rs`).

use super::comparable::Difference;
use super::inputs::{MetaRun, Side};
use super::{Comparison, Figure, FigureComparison, Options, SideSummary, comparison, judge};
use crate::figures::result::meta_document::{MetaResult, OpFigures, PhaseResult};
use crate::figures::result::named::Unit;
use crate::io::metadata::workload::MetaOp;

/// Each kind's percentiles compared, with their quantiles.
const PERCENTILES: &[(&str, f64)] = &[("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)];

/// The scope of phase `name` (of job `job`, in a job file beside block jobs).
fn scope(job: Option<&str>, name: &str) -> String {
    match job {
        None => format!("metadata {name}"),
        Some(job) => format!("job {job}: metadata {name}"),
    }
}

/// The jobs the metadata runs of both sides belong to (`None`: runs of their own), in
/// the order first met.
fn jobs<'a>(base: &'a Side, new: &'a Side) -> Vec<Option<&'a str>> {
    let mut jobs: Vec<Option<&str>> = Vec::new();
    for run in base.metadata.iter().chain(&new.metadata) {
        if !jobs.contains(&run.job.as_deref()) {
            jobs.push(run.job.as_deref());
        }
    }
    jobs
}

/// The runs of `side` of job `job`.
fn runs_of<'a>(side: &'a Side, job: Option<&str>) -> Vec<&'a MetaRun> {
    side.metadata.iter().filter(|r| r.job.as_deref() == job).collect()
}

/// Every difference between the two sides, and within each side, that makes the runs not
/// comparable: each run against the base's first of the same job.
pub fn differences(base: &Side, new: &Side) -> Vec<Difference> {
    let mut out: Vec<Difference> = Vec::new();
    for job in jobs(base, new) {
        let runs: Vec<&MetaRun> = runs_of(base, job).into_iter().chain(runs_of(new, job)).collect();
        let Some(first) = runs.first() else { continue };
        for other in &runs[1..] {
            for d in differences_of(first, other) {
                // Each field once: five runs of one other version are one difference.
                if !out.iter().any(|o| o.scope == d.scope && o.field == d.field) {
                    out.push(d);
                }
            }
        }
    }
    out
}

fn differences_of(a: &MetaRun, b: &MetaRun) -> Vec<Difference> {
    let (ra, rb) = (&a.result, &b.result);
    let mut pairs: Vec<(String, String, String)> =
        crate::figures::result::merge::spec_differences_of(&ra.spec, &rb.spec)
            .into_iter()
            .map(|d| (d.field, d.first, d.other))
            .collect();
    pairs.push(("tool_version".into(), ra.tool_version.clone(), rb.tool_version.clone()));
    pairs.push(("schema_version".into(), ra.schema_version.to_string(), rb.schema_version.to_string()));
    let phases = |r: &MetaResult| r.phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(",");
    pairs.push(("phases".into(), phases(ra), phases(rb)));
    pairs
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(field, base, new)| Difference {
            scope: a.job.as_ref().map_or_else(|| "metadata".into(), |job| format!("job {job} (files)")),
            field,
            base,
            new,
            base_file: a.file.clone(),
            new_file: b.file.clone(),
        })
        .collect()
}

/// Compares the metadata runs of `new` against those of `base`, phase by phase, kind by kind.
pub fn compare(base: &Side, new: &Side, differences: Vec<Difference>, options: Options) -> Comparison {
    let (figures, only_in) = figures_of(&runs_of(base, None), &runs_of(new, None), None, options);
    let summary = |s: &Side| SideSummary { files: s.files.clone(), runs: s.metadata.len() };
    comparison([summary(base), summary(new)], differences, only_in, figures, options)
}

/// The figures of the metadata jobs of job files (each job's runs against the same job's
/// of the other side, its scopes named after it), and the scopes of one side only (a job,
/// or a phase of one, that the other side lacks): what a comparison of job files adds to
/// its block jobs' figures.
pub fn job_figures(base: &Side, new: &Side, options: Options) -> (Vec<FigureComparison>, [Vec<String>; 2]) {
    let (mut figures, mut only_in) = (Vec::new(), [Vec::new(), Vec::new()]);
    for job in jobs(base, new).into_iter().flatten() {
        let (b, n) = (runs_of(base, Some(job)), runs_of(new, Some(job)));
        if b.is_empty() || n.is_empty() {
            only_in[usize::from(b.is_empty())].push(format!("job {job} (files)"));
            continue;
        }
        let (f, [ob, on]) = figures_of(&b, &n, Some(job), options);
        figures.extend(f);
        only_in[0].extend(ob);
        only_in[1].extend(on);
    }
    (figures, only_in)
}

/// The figures of the phases `base` and `new` share, and the phases of one side only.
fn figures_of(
    base: &[&MetaRun],
    new: &[&MetaRun],
    job: Option<&str>,
    options: Options,
) -> (Vec<FigureComparison>, [Vec<String>; 2]) {
    let names = |runs: &[&MetaRun]| -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for run in runs {
            for p in &run.result.phases {
                if !names.contains(&p.name) {
                    names.push(p.name.clone());
                }
            }
        }
        names
    };
    let (base_names, new_names) = (names(base), names(new));
    let mut figures = Vec::new();
    for name in base_names.iter().filter(|n| new_names.contains(n)) {
        figures.extend(phase_figures(&scope(job, name), &phases(base, name), &phases(new, name), options));
    }
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|n| !b.contains(n)).map(|n| scope(job, n)).collect()
    };
    (figures, [only(&base_names, &new_names), only(&new_names, &base_names)])
}

/// Phase `name` of each run of `runs` that has it.
fn phases<'a>(runs: &[&'a MetaRun], name: &str) -> Vec<&'a PhaseResult> {
    runs.iter().filter_map(|r| r.result.phases.iter().find(|p| p.name == name)).collect()
}

/// The figures of one phase: its ops/s, then each kind's (in `MetaOp::ALL`'s order) that
/// either side's first run has.
fn phase_figures(scope: &str, base: &[&PhaseResult], new: &[&PhaseResult], options: Options) -> Vec<FigureComparison> {
    let scope = scope.to_string();
    let mut out = Vec::new();
    let rate =
        |phases: &[&PhaseResult]| -> Vec<f64> { phases.iter().filter(|p| p.ops > 0).map(|p| p.ops_per_sec).collect() };
    let fig = Figure { scope: &scope, name: "ops_per_sec", unit: Unit::OpsPerSec, quantile: None };
    out.push(judge(&fig, &rate(base), &rate(new), || (None, None), options));
    let has = |phases: &[&PhaseResult], op: MetaOp| phases.first().is_some_and(|p| kind(p, op).is_some());
    for op in MetaOp::ALL.into_iter().filter(|op| has(base, *op) || has(new, *op)) {
        // A kind with no operation has neither a rate nor a latency to judge.
        let (b, n) = (kinds(base, op), kinds(new, op));
        let figure_name = format!("{}.ops_per_sec", op.name());
        let fig = Figure { scope: &scope, name: &figure_name, unit: Unit::OpsPerSec, quantile: None };
        let rates = |k: &[&OpFigures]| -> Vec<f64> { k.iter().map(|o| o.ops_per_sec).collect() };
        out.push(judge(&fig, &rates(&b), &rates(&n), || (None, None), options));
        for (metric, q) in PERCENTILES {
            let figure_name = format!("{}.{metric}", op.name());
            let fig = Figure { scope: &scope, name: &figure_name, unit: Unit::Ns, quantile: Some(*q) };
            let values = |k: &[&OpFigures]| -> Vec<f64> {
                k.iter()
                    .map(|o| {
                        let l = &o.latency_ns;
                        (match *metric {
                            "p50" => l.p50,
                            "p99" => l.p99,
                            _ => l.p99_9,
                        }) as f64
                    })
                    .collect()
            };
            let histogram =
                |k: &[&OpFigures]| k.first().and_then(|o| crate::io::stats::decode_histogram(&o.histogram).ok());
            out.push(judge(&fig, &values(&b), &values(&n), || (histogram(&b), histogram(&n)), options));
        }
    }
    out
}

/// Kind `op` of each phase that has an operation of it.
fn kinds<'a>(phases: &[&'a PhaseResult], op: MetaOp) -> Vec<&'a OpFigures> {
    phases.iter().filter_map(|p| kind(p, op)).filter(|o| o.ops > 0).collect()
}

fn kind(p: &PhaseResult, op: MetaOp) -> Option<&OpFigures> {
    p.per_op.iter().find(|o| o.op == op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::stats::{LatencySummary, OpStats, encode_histogram};

    /// A result of one mix phase with one kind, `stat`, whose latencies are `lat_ns`.
    fn result(lat_ns: impl Iterator<Item = u64>) -> MetaResult {
        let mut s = OpStats::new();
        for v in lat_ns {
            s.record(0, v);
        }
        let summary: LatencySummary = s.latency_summary();
        let text = format!(
            r#"{{"kind":"iopulse-metadata","schema_version":1,"tool_version":"0","started_at":"x","target":"/t",
            "spec":{spec},"tree":{{"files":1,"directories":1,"leaf_directories":1,"dirs_per_dir":1,"depth":0,"reused":false,
            "setup_ns":1,"setup_files_created":1,"setup_directories_created":1,"setup_bytes_written":0,"kept":false,
            "removed_files":1,"removed_directories":1}},"phases":[{{"name":"mix","window_ns":1000000000,"ops":{ops},
            "ops_per_sec":{ops},"files_per_sec":0,"bytes_per_sec":0,"per_op":[{{"op":"stat","ops":{ops},"files":{ops},
            "bytes":0,"ops_per_sec":{ops},"files_per_sec":{ops},"bytes_per_sec":0,"latency_ns":{lat},"histogram":"{h}"}}]}}],
            "coverage_percent":100,"stop_reason":"ops","error":null,"limit":null,"warnings":[],"notes":[]}}"#,
            spec = serde_json::to_string(
                &crate::testing::spec_of(["/t", "--files", "10", "--meta-mix", "stat=1"]).unwrap()
            )
            .unwrap(),
            ops = s.ops,
            lat = serde_json::to_string(&summary).unwrap(),
            h = encode_histogram(&s.latency),
        );
        serde_json::from_str(&text).unwrap()
    }

    fn side(r: MetaResult) -> Side {
        Side {
            files: vec!["f".into()],
            metadata: vec![MetaRun { file: "f".into(), result: r, job: None }],
            ..Side::default()
        }
    }

    #[test]
    fn a_slower_kind_is_judged_from_the_histograms_and_a_run_against_itself_is_not() {
        let options = Options { threshold: 0.05, confidence: 0.99 };
        let base = side(result((0..10_000u64).map(|i| 10_000 + i)));
        let same = compare(&base, &base, Vec::new(), options);
        assert!(!same.regressed, "{same:?}");
        let slow = side(result((0..10_000u64).map(|i| 20_000 + 2 * i)));
        let c = compare(&base, &slow, Vec::new(), options);
        assert!(c.regressed);
        let p99 = c.figures.iter().find(|f| f.figure == "stat.p99").unwrap();
        assert_eq!((p99.scope.as_str(), p99.verdict), ("metadata mix", super::super::Verdict::Regressed));
        // Rates of single runs are not judged.
        let rate = c.figures.iter().find(|f| f.figure == "stat.ops_per_sec").unwrap();
        assert_eq!(rate.method, super::super::Method::None);
    }
}
