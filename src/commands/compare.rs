//! `iopulse compare BASE NEW`: two sets of results side by side, each figure with its
//! change, confidence interval and verdict. It reads (`compare::inputs`), refuses sides
//! that are not comparable unless forced, compares (`compare`) and prints
//! (`report::compare`); the exit code says whether something regressed.

use crate::base::diagnostics::error::exit_code;
use crate::figures::compare::{self, inputs};
use crate::output::report;
use std::path::PathBuf;

const COMPARE_EXAMPLES: &str = "\
Examples:
  iopulse compare base.json new.json
      one run on each side: latency percentiles judged from the histograms; IOPS from
      single runs cannot be judged (their run-to-run spread is unknown)
  iopulse compare baseline/ candidate/ --threshold 5%
      two directories of five --json results each: every figure judged by the spread of
      its runs (Mann-Whitney rank test, Hodges-Lehmann interval); exit 5 on a regression
  iopulse compare --base b1.json b2.json b3.json --new n1.json n2.json n3.json --confidence 90%
      the sets given file by file (three runs a side reach 90 % confidence, five reach 99 %)
  iopulse compare base-sweep.json new-sweep.json --output-format markdown >> \"$GITHUB_STEP_SUMMARY\"
      two sweeps (--repeat 5): each point compared, its repetitions the set; a Markdown table
  iopulse compare base.json new.json --output-format junit > compare.xml
      each verdict a JUnit test case (a regression fails, inconclusive is skipped)
  iopulse compare old-kernel/ new-kernel/ --force
      compare although the sides differ (here the kernel): each difference warned about
  iopulse compare meta-base.json meta-new.json
      metadata results (--files): each phase's ops/s, each operation kind's ops/s and
      p50/p99/p99.9 (stat.p99, create.ops_per_sec); a block result against one is refused

Figures: iops, bw, p50/p99/p99.9 of each op type (read.p99, write.p50, ...), cpu.per_io;
per run, per job of a job file, per point of a sweep.
Verdicts: regressed / improved when the interval excludes no change and the change is at
least --threshold; no change when the interval lies within ±threshold (or the change is
real but smaller); else inconclusive.
Refused (exit 2) unless --force: sides whose spec (the seeds aside), engine, iopulse
version, kernel, CPU model, governor, boost, SMT, target device, filesystem or O_DIRECT
differ; each difference is named.
Exit codes: 0 no regression, 5 some figure regressed, 2 unreadable input or not comparable.";

/// The report formats of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// a table for people
    Text,
    /// the comparison (docs/compare.schema.json)
    Json,
    /// a summary table for a CI job's page
    Markdown,
    /// a JUnit test case per figure (regressed: a failure)
    Junit,
    /// the new side's rates, as github-action-benchmark's customBiggerIsBetter reads them
    BenchmarkBigger,
    /// the new side's latencies and CPU per I/O, as customSmallerIsBetter reads them
    BenchmarkSmaller,
}

/// Compare two sets of results: change, confidence interval and verdict of each figure.
#[derive(Debug, clap::Args)]
#[command(after_help = COMPARE_EXAMPLES)]
pub struct CompareArgs {
    /// The base: a result, or a directory of them.
    ///
    /// The base: a JSON result (a run's, a job file's, a sweep's) or a directory of them.
    #[arg(value_name = "BASE", required_unless_present = "base", conflicts_with_all = ["base", "new"])]
    pub base_path: Option<PathBuf>,

    /// The new side, as BASE.
    ///
    /// The new side, as BASE.
    #[arg(value_name = "NEW", required_unless_present = "base")]
    pub new_path: Option<PathBuf>,

    /// The base as several files or directories.
    ///
    /// The base as several files or directories. E.g. `iopulse compare --base b1.json b2.json --new n1.json n2.json`
    #[arg(long, value_name = "RESULT", num_args = 1.., requires = "new")]
    pub base: Vec<PathBuf>,

    /// The new side as several files or directories.
    ///
    /// The new side as several files or directories. E.g. `iopulse compare --base b/ --new n1.json n2.json n3.json`
    #[arg(long, value_name = "RESULT", num_args = 1.., requires = "base")]
    pub new: Vec<PathBuf>,

    /// The smallest change that matters.
    ///
    /// The smallest change that matters. E.g. `iopulse compare base/ new/ --threshold 5%`
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, default_value = "5%")]
    pub threshold: f64,

    /// Confidence of the intervals.
    ///
    /// Confidence of the intervals and the rank test. E.g. `iopulse compare base/ new/ --confidence 95%`
    #[arg(long, value_name = "PERCENT", value_parser = parse_confidence, default_value = "99%")]
    pub confidence: f64,

    /// Compare although the sides differ.
    ///
    /// Compare although the sides differ besides their figures (each difference is warned
    /// about and recorded).
    #[arg(long)]
    pub force: bool,

    /// Report format on stdout.
    ///
    /// Report format on stdout. E.g. `iopulse compare base/ new/ --output-format markdown`
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = CompareFormat::Text)]
    pub output_format: CompareFormat,

    #[command(flatten)]
    pub output: crate::front::cli::output::QuietArg,
}

/// `5%`, `5` or `0.5%` → 0.05, 0.05, 0.005.
fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..1000.0).contains(&v) => Ok(v / 100.0),
        _ => Err(format!("`{text}` is not a percentage: give one such as 5% (0 to 1000)")),
    }
}

fn parse_confidence(text: &str) -> Result<f64, String> {
    match parse_percent(text) {
        Ok(v) if (0.5..1.0).contains(&v) => Ok(v),
        _ => Err(format!("`{text}` is not a confidence: give a percentage from 50% to below 100%, e.g. 95%")),
    }
}

pub fn compare(args: CompareArgs) -> i32 {
    super::end_on_first_signal();
    let (base_paths, new_paths) = match (&args.base_path, &args.new_path) {
        (Some(b), Some(n)) => (vec![b.clone()], vec![n.clone()]),
        _ => (args.base.clone(), args.new.clone()),
    };
    let load = |paths: &[PathBuf]| {
        inputs::load_side(paths).map_err(|e| {
            crate::stderr_line!("iopulse compare: error: {e}");
            exit_code::USAGE
        })
    };
    let base = match load(&base_paths) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let new = match load(&new_paths) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Err(e) = inputs::refuse_duplicates(&base, &new) {
        crate::stderr_line!("iopulse compare: error: {e}");
        return exit_code::USAGE;
    }
    // Metadata runs' own results are compared as such; the metadata jobs of job files
    // are compared beside their block jobs (below).
    if base.metadata.iter().chain(&new.metadata).any(|m| m.job.is_none()) {
        return compare_metadata(&args, &base, &new);
    }
    if !base.scopes.iter().any(|(s, _)| new.runs(s).is_some()) {
        let names = |s: &inputs::Side| s.scopes.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>().join(", ");
        crate::stderr_line!(
            "iopulse compare: error: the sides have nothing in common: base has {} but new has {}; compare results of the same run, job file or sweep",
            names(&base),
            names(&new)
        );
        return exit_code::USAGE;
    }
    let mut differences = compare::differences(&base, &new);
    differences.extend(compare::metadata::differences(&base, &new));
    if !differences.is_empty() {
        let list: Vec<String> = differences
            .iter()
            .map(|d| {
                format!("{}: {} is {} in {} but {} in {}", d.scope, d.field, d.base, d.base_file, d.new, d.new_file)
            })
            .collect();
        if let Some(code) = refuse_or_warn(&list, args.force) {
            return code;
        }
    }
    let options = compare::Options { threshold: args.threshold, confidence: args.confidence };
    print(&args, &compare::compare(&base, &new, differences, options))
}

/// `iopulse compare` of metadata runs' results: refused against block results (naming a
/// file of each kind), else judged phase by phase, kind by kind (`compare::metadata`).
fn compare_metadata(args: &CompareArgs, base: &inputs::Side, new: &inputs::Side) -> i32 {
    let block = |s: &inputs::Side| s.scopes.iter().flat_map(|(_, runs)| runs.first()).map(|r| r.file.clone()).next();
    let meta = |s: &inputs::Side| s.metadata.first().map(|r| r.file.clone());
    let mixed =
        [(meta(base), block(base)), (meta(new), block(new)), (meta(base), block(new)), (meta(new), block(base))]
            .into_iter()
            .find_map(|pair| match pair {
                (Some(m), Some(b)) => Some((m, b)),
                _ => None,
            });
    if let Some((m, b)) = mixed {
        crate::stderr_line!(
            "iopulse compare: error: {m} is a metadata run's result (--files) but {b} is a block run's: compare metadata results only with metadata results"
        );
        return exit_code::USAGE;
    }
    let differences = compare::metadata::differences(base, new);
    if !differences.is_empty() {
        let list: Vec<String> = differences
            .iter()
            .map(|d| format!("{} is {} in {} but {} in {}", d.field, d.base, d.base_file, d.new, d.new_file))
            .collect();
        if let Some(code) = refuse_or_warn(&list, args.force) {
            return code;
        }
    }
    let options = compare::Options { threshold: args.threshold, confidence: args.confidence };
    print(args, &compare::metadata::compare(base, new, differences, options))
}

/// What differs between the sides besides the figures, `list` (one line each): refused
/// with exit 2 (`Some`), or with `--force` each said as a warning and compared anyway.
fn refuse_or_warn(list: &[String], force: bool) -> Option<i32> {
    if !force {
        crate::stderr_line!(
            "iopulse compare: error: the results are not comparable: {}; compare runs of one workload on one setup, or pass --force to compare them anyway",
            list.join("; ")
        );
        return Some(exit_code::USAGE);
    }
    for d in list {
        crate::stderr_line!("⚠ NOT COMPARABLE (compared anyway, --force): {d}");
    }
    None
}

/// The comparison in the format asked for on stdout; the exit code.
fn print(args: &CompareArgs, comparison: &compare::Comparison) -> i32 {
    let text = match args.output_format {
        CompareFormat::Text => report::compare::text(comparison),
        CompareFormat::Json => super::json_text(comparison),
        CompareFormat::Markdown => report::compare::markdown(comparison),
        CompareFormat::Junit => report::compare::junit(comparison),
        CompareFormat::BenchmarkBigger => report::bench_action::compare(comparison, true),
        CompareFormat::BenchmarkSmaller => report::bench_action::compare(comparison, false),
    };
    let code = super::write_stdout(&text);
    if code != exit_code::SUCCESS {
        return code;
    }
    if comparison.regressed { exit_code::REGRESSION } else { exit_code::SUCCESS }
}
