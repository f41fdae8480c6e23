//! `iopulse report RESULT... --html FILE`: one self-contained HTML page of results (a run's,
//! a job file's, a sweep's, a search's, a comparison's). It guards the output path (never an
//! input, a device or a target: `report::output_path::check_all`), reads each input with the
//! bounded loader (`result::load`), has `report::html` format the page and writes it whole.

use crate::diagnostics::error::exit_code;
use crate::report::html::{self, Section};
use crate::report::output_path::{self, Output};
use crate::result::load::{self, LoadError};
use std::path::{Path, PathBuf};

const REPORT_EXAMPLES: &str = "\
Examples:
  iopulse report result.json --html report.html
      one run: its figures, per-size table, latency percentile chart and, when it
      recorded a time series (--interval), its IOPS and p99 over time
  iopulse report jobs.json sweep.json compare.json --html ci-report.html --title \"nightly\"
      a job file's result (a table of jobs, then each job), a sweep's points and curves,
      and a comparison (`iopulse compare ... --output-format json`) side by side, one page

The page holds everything it shows: inline CSS and SVG charts, no script, font, image or
link to load; open it anywhere, attach it to a CI job. It never replaces an input.";

/// Write one self-contained HTML page of results: figures, tables and charts.
#[derive(Debug, clap::Args)]
#[command(after_help = REPORT_EXAMPLES)]
pub struct ReportArgs {
    /// JSON results: a run's (`--json FILE`), a job file's, a sweep's or a search's
    /// (`--output-format json`), or a comparison's (`iopulse compare --output-format json`).
    #[arg(value_name = "RESULT.json", required = true)]
    pub results: Vec<PathBuf>,

    /// The HTML file written (replaced whole). E.g. `--html report.html`
    #[arg(long, value_name = "FILE", required = true)]
    pub html: PathBuf,

    /// The page's title [default: iopulse report]
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

pub fn report(args: ReportArgs) -> i32 {
    super::end_on_first_signal();
    let inputs: Vec<&Path> = args.results.iter().map(PathBuf::as_path).collect();
    if let Err(e) = output_path::check_all(&[Output::file("--html", &args.html)], &[], &inputs) {
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
    let title = args.title.as_deref().unwrap_or("iopulse report");
    let page = match html::page(title, &sections) {
        Ok(page) => page,
        Err(e) => {
            crate::stderr_line!("iopulse report: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    match output_path::write_whole(&args.html, page.as_bytes()) {
        Ok(()) => super::write_stdout(&format!("{}\n", args.html.display())),
        Err(e) => {
            crate::stderr_line!("iopulse report: error: write --html {}: {e}", args.html.display());
            exit_code::RUN_FAILED
        }
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
            let doc: crate::sweep::document::SweepDocument = load::typed_document(&file, &value)?;
            for (i, run) in doc.runs.iter().enumerate() {
                load::check_result(&file, &format!("runs[{i}].result"), &run.result)?;
            }
            Ok(Section::Sweep { file, doc: Box::new(doc) })
        }
        Some("search") => {
            let doc: crate::sweep::document::SearchDocument = load::typed_document(&file, &value)?;
            for (i, run) in doc.runs.iter().enumerate() {
                load::check_result(&file, &format!("runs[{i}].result"), &run.result)?;
            }
            Ok(Section::Search { file, doc: Box::new(doc) })
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
