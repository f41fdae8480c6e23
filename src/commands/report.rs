//! `iopulse report RESULT... --html FILE`: one self-contained HTML page of results (a run's,
//! a replay's, a metadata run's, a job file's, a sweep's, a search's, a comparison's). It
//! reads each input with the bounded loader (`result::load`), judges its ledger (the page,
//! against the inputs and
//! every target the results name: a page written over a benchmark's target would destroy
//! it), has `report::html` format the page and writes it whole.

use crate::base::diagnostics::error::exit_code;
use crate::figures::result::RunResult;
use crate::figures::result::load::{self, LoadError};
use crate::output::report::html::{self, Section};
use crate::storage::ledger::{Action, Ledger};
use std::path::{Path, PathBuf};

const REPORT_EXAMPLES: &str = "\
Examples:
  iopulse report result.json --html report.html
      one run: its figures, per-size table, latency percentile chart and, when it
      recorded a time series (--interval), its IOPS and p99 over time
  iopulse report jobs.json sweep.json compare.json --html ci-report.html --title \"nightly\"
      a job file's result (a table of jobs, then each job), a sweep's points and curves,
      and a comparison (`iopulse compare ... --output-format json`) side by side, one page
  iopulse report tree.json replay.json --html runs.html
      a metadata run (a table per phase, a row per operation kind, its charts) and a
      replay (its trace, speed and each I/O's lag behind its due time)

The page holds everything it shows: inline CSS and SVG charts, no script, font, image or
link to load; open it anywhere, attach it to a CI job. It never replaces an input.";

/// Write one self-contained HTML page of results: figures, tables and charts.
#[derive(Debug, clap::Args)]
#[command(after_help = REPORT_EXAMPLES)]
pub struct ReportArgs {
    /// JSON results: runs, replays, metadata runs, job files, sweeps, searches, comparisons.
    ///
    /// JSON results: a run's, a replay's or a metadata run's (`--json FILE`), a job file's,
    /// a sweep's or a search's (`--output-format json`), or a comparison's (`iopulse compare
    /// --output-format json`).
    #[arg(value_name = "RESULT.json", required = true)]
    pub results: Vec<PathBuf>,

    /// The HTML file written.
    ///
    /// The HTML file written (replaced whole). E.g. `--html report.html`
    #[arg(long, value_name = "FILE", required = true)]
    pub html: PathBuf,

    /// The page's title.
    ///
    /// The page's title [default: iopulse report]
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    #[command(flatten)]
    pub output: crate::front::cli::output::QuietArg,
}

pub fn report(args: ReportArgs) -> i32 {
    super::end_on_first_signal();
    let mut ledger = Ledger::new();
    for path in &args.results {
        ledger.read("an input this command reads", path);
    }
    // The page may not land on an input: judged before a byte of them is read (a FIFO or
    // a huge file named as both is refused as the output it cannot be).
    if let Err(e) = crate::storage::ledger::guard::judge(&output_ledger(&ledger, &args.html)) {
        crate::stderr_line!("iopulse report: error: {e}");
        return exit_code::USAGE;
    }
    let mut sections = Vec::new();
    for path in &args.results {
        match section(path) {
            Ok(s) => sections.push(s),
            Err(e) => {
                crate::stderr_line!("iopulse report: error: {e}");
                return exit_code::USAGE;
            }
        }
    }
    // Nor on a target a result names.
    for (file, target) in sections.iter().flat_map(named_targets) {
        ledger.read(format!("a target of the run {file} records"), target);
    }
    if let Err(e) = output_ledger(&ledger, &args.html).judge() {
        crate::stderr_line!("iopulse report: error: {e}");
        return exit_code::USAGE;
    }
    if let Some(code) = super::dry_run_exit() {
        return code;
    }
    let title = args.title.as_deref().unwrap_or("iopulse report");
    let page = match html::page(title, &sections) {
        Ok(page) => page,
        Err(e) => {
            crate::stderr_line!("iopulse report: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    match crate::storage::ledger::output::write_whole(&args.html, page.as_bytes()) {
        Ok(()) => super::write_stdout(&format!("{}\n", args.html.display())),
        Err(e) => {
            crate::stderr_line!("iopulse report: error: write --html {}: {e}", args.html.display());
            exit_code::RUN_FAILED
        }
    }
}

/// `ledger` (the inputs) with the page written whole at `html`.
fn output_ledger(ledger: &Ledger, html: &Path) -> Ledger {
    let mut whole = ledger.clone();
    whole.touch("--html", html, Action::Replace);
    whole
}

/// The targets `result` names, each with `file`, the result file that names it.
pub(super) fn targets_of(file: &str, result: &RunResult) -> Vec<(String, PathBuf)> {
    result.targets.iter().map(|t| (file.to_string(), PathBuf::from(&t.path))).collect()
}

/// The targets the results of a section name, each with the file that names it.
fn named_targets(section: &Section) -> Vec<(String, PathBuf)> {
    let of = targets_of;
    match section {
        Section::Run { file, result } => of(file, result),
        Section::Jobs { file, doc } => {
            of(file, &doc.combined).into_iter().chain(doc.jobs.iter().flat_map(|j| of(file, &j.result))).collect()
        }
        Section::Sweep { file, doc } => doc.runs.iter().flat_map(|r| of(file, &r.result)).collect(),
        Section::Search { file, doc } => doc.runs.iter().flat_map(|r| of(file, &r.result)).collect(),
        Section::Metadata { file, result } => vec![(file.clone(), PathBuf::from(&result.target))],
        Section::Compare { .. } => Vec::new(),
    }
}

/// The input at `path` as what it is (its `kind`, or a `jobs` array), every result in it
/// judged as `merge` and `compare` judge theirs.
fn section(path: &Path) -> Result<Section, LoadError> {
    let (file, value) = load::document_without_time_series(path)?;
    match value.get("kind").and_then(|k| k.as_str()) {
        Some("compare") => {
            let doc = load::typed_document(&file, &value)?;
            Ok(Section::Compare { file, doc: Box::new(doc) })
        }
        Some("sweep") => {
            let doc: crate::figures::sweep::document::SweepDocument = load::typed_document(&file, &value)?;
            for (i, run) in doc.runs.iter().enumerate() {
                load::check_result(&file, &format!("runs[{i}].result"), &run.result)?;
            }
            Ok(Section::Sweep { file, doc: Box::new(doc) })
        }
        Some("search") => {
            let doc: crate::figures::sweep::document::SearchDocument = load::typed_document(&file, &value)?;
            for (i, run) in doc.runs.iter().enumerate() {
                load::check_result(&file, &format!("runs[{i}].result"), &run.result)?;
            }
            Ok(Section::Search { file, doc: Box::new(doc) })
        }
        Some(crate::figures::result::meta_document::KIND) => {
            drop(value);
            // Read again with its time series, for the charts over time.
            let loaded = load::metadata_with_time_series(path)?;
            Ok(Section::Metadata { file: loaded.file, result: Box::new(loaded.result) })
        }
        _ => {
            drop(value);
            // Read again with its time series, for the charts over time.
            let loaded = load::with_time_series(path)?;
            Ok(match loaded.jobs {
                Some(doc) => Section::Jobs { file: loaded.file, doc: Box::new(doc) },
                None => Section::Run { file: loaded.file, result: Box::new(loaded.result) },
            })
        }
    }
}
