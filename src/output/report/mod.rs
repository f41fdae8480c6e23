//! Reports: the `RunResult` written for people (text) or programs (JSON,
//! fio-compatible JSON, a CSV row, SVG charts). Reports format; they never
//! compute a figure. JSON goes only to stdout or its own file; diagnostics go
//! to stderr.

pub mod bench_action;
pub mod ci;
pub mod compare;
pub mod csv;
pub mod fio_json;
pub mod html;
pub mod iolog;
pub mod jobs;
pub mod junit;
pub mod ledger;
pub mod live_line;
pub mod live_screen;
pub mod markdown;
pub mod metadata;
pub mod metadata_plot;
pub mod mixed_jobs;
pub mod plot;
pub mod profile;
pub mod sweep;
pub mod text;
pub mod timeseries;
/// How quantities are shown to people (one home, below every module that prints one).
pub use crate::base::units::display as units;

use crate::base::diagnostics::error::UsageError;

use crate::figures::result::RunResult;
use crate::storage::ledger::{Action, Entry, Ledger};
use clap::ValueEnum;
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// a report for people
    Text,
    /// the JSON result (docs/json.md) on stdout
    Json,
    /// the subset of fio's JSON output that fio tooling reads (docs/json.md)
    FioJson,
    /// fio's json+: fio-json with the latency histograms' buckets (clat_ns.bins, lat_ns.bins)
    #[value(name = "fio-json+", alias = "fio-json-plus")]
    FioJsonPlus,
    /// JUnit XML: each --expect a test case (docs/ci.md)
    Junit,
    /// a Markdown summary table, for a CI job's page (docs/ci.md)
    Markdown,
    /// the rates as github-action-benchmark's customBiggerIsBetter JSON (docs/ci.md)
    BenchmarkBigger,
    /// the latencies and CPU per I/O as customSmallerIsBetter JSON (docs/ci.md)
    BenchmarkSmaller,
}

impl OutputFormat {
    /// fio's JSON forms: their IOPS and bandwidth statistics are taken over interval rows,
    /// so a run reported in them keeps its rows.
    pub fn wants_interval_rows(self) -> bool {
        matches!(self, OutputFormat::FioJson | OutputFormat::FioJsonPlus)
    }
}

/// Where the results of a run go. Not part of the `Spec`: it does not change
/// what is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    pub format: OutputFormat,
    pub json_file: Option<PathBuf>,
    pub quiet: bool,
    /// `--live`: a full-screen view while the runs go (`report::live_screen`).
    pub live: bool,
    /// `--csv FILE`: append one row per run.
    pub csv_file: Option<PathBuf>,
    /// `--plot DIR`: write SVG charts there.
    pub plot_dir: Option<PathBuf>,
    /// `--timeseries FILE`: one CSV row per interval.
    pub timeseries_file: Option<PathBuf>,
    /// `--write-iolog FILE`: the run's I/Os as a fio iolog v3.
    pub iolog_file: Option<PathBuf>,
}

/// The JSON result, pretty-printed, with a final newline.
pub fn json(result: &RunResult) -> String {
    let mut text = serde_json::to_string_pretty(result).expect("a RunResult always serializes");
    text.push('\n');
    text
}

/// The report of `result` in `format`.
pub fn render(result: &RunResult, format: OutputFormat) -> io::Result<String> {
    Ok(match format {
        OutputFormat::Text => text::render(result),
        OutputFormat::Json => json(result),
        OutputFormat::FioJson => fio_json::render(result, fio_json::Form::Json).map_err(io::Error::other)?,
        OutputFormat::FioJsonPlus => fio_json::render(result, fio_json::Form::JsonPlus).map_err(io::Error::other)?,
        format => ci_render(&[("run".to_string(), result)], format),
    })
}

/// The CI formats (JUnit, Markdown, benchmark JSON) of results by scope (`run`, `job NAME`).
pub fn ci_render(scopes: &[(String, &RunResult)], format: OutputFormat) -> String {
    match format {
        OutputFormat::Junit => ci::junit(scopes),
        OutputFormat::Markdown => ci::markdown(scopes),
        OutputFormat::BenchmarkBigger => ci::benchmark(scopes, true),
        _ => ci::benchmark(scopes, false),
    }
}

/// What a command writes besides its report: which charts and per-job files go with the
/// outputs it is given.
#[derive(Clone, Copy, Debug)]
pub enum Writes<'a> {
    /// One run (`iopulse [TARGET...]`, a rank of an MPI job).
    Run,
    /// A job file's run or a profile's: its job names in file order (a `--timeseries` file
    /// and charts per job).
    Jobs(&'a [&'a str]),
    /// A sweep over these axes: a chart per metric against its x axis, and its journal
    /// beside `--csv` (or `--json`).
    Sweep(&'a [crate::figures::sweep::document::Axis]),
    /// A search: its curve.
    Search,
    /// A metadata run (`--files`): its charts (`metadata_plot`), of one run (None) or of
    /// each job of a job file (a `--timeseries` file per job too).
    Metadata(Option<&'a [&'a str]>),
    /// A job file mixing block jobs and metadata jobs: the block jobs' outputs as `Jobs`,
    /// and each metadata job's own files (`mixed_jobs`).
    Mixed(&'a mixed_jobs::MixedNames<'a>),
}

/// Every path a command given `output` will write, each with the flag that names it, in
/// this order: `--json`, `--csv`, a sweep's journal, each `--timeseries` file, `--plot`'s
/// directory and each chart in it. A stream (`--json /dev/stdout`) is listed as it is (it
/// gets no journal). Each is an entry of the command's ledger (`ledger::Ledger`).
pub fn planned_outputs(output: &OutputOptions, writes: Writes<'_>) -> Result<Vec<Entry>, UsageError> {
    let file = |flag: &str, path: PathBuf| Entry::new(flag, path, Action::Replace);
    let mut outputs = Vec::new();
    if let Some(path) = &output.json_file {
        match writes {
            // Several metadata jobs: a result document each (`FILE-JOB.json`).
            Writes::Metadata(Some(names)) if names.len() > 1 => {
                outputs.extend(jobs::metadata_json_paths(path, names)?.into_iter().map(|p| file("--json", p)))
            }
            _ => outputs.push(file("--json", path.clone())),
        }
    }
    if let Some(path) = &output.csv_file {
        outputs.push(Entry::new("--csv", path, Action::Append));
    }
    if let Writes::Sweep(_) = writes
        && let Some(journal) =
            crate::figures::sweep::journal::path_beside(output.csv_file.as_deref(), output.json_file.as_deref())
    {
        let flag = if output.csv_file.as_deref().is_some_and(|p| !crate::storage::ledger::output::is_stream(p)) {
            "--csv (its journal)"
        } else {
            "--json (its journal)"
        };
        outputs.push(Entry::new(flag, journal, Action::Journal));
    }
    if let Some(path) = &output.timeseries_file {
        match writes {
            Writes::Jobs(names) | Writes::Metadata(Some(names)) => {
                outputs.extend(jobs::timeseries_paths(path, names)?.into_iter().map(|p| file("--timeseries", p)))
            }
            Writes::Mixed(names) => outputs.extend(
                jobs::timeseries_paths(path, &names.all[..names.block_count])?
                    .into_iter()
                    .map(|p| file("--timeseries", p)),
            ),
            _ => outputs.push(file("--timeseries", path.clone())),
        }
    }
    if let Some(path) = &output.iolog_file {
        outputs.push(file("--write-iolog", path.clone()));
    }
    if let Some(dir) = &output.plot_dir {
        outputs.push(Entry::new("--plot", dir, Action::MakeDir));
        // The charts it writes pass the guard too: one of them may be a link to a target or a
        // device, or the path another output names.
        let names = match writes {
            Writes::Run => plot::run_chart_names(),
            Writes::Jobs(names) => plot::job_chart_names(names),
            Writes::Sweep(axes) => plot::sweep_chart_names(axes),
            Writes::Search => plot::search_chart_names(),
            Writes::Metadata(jobs) => metadata_plot::chart_names(jobs),
            Writes::Mixed(names) => plot::job_chart_names(&names.all[..names.block_count]),
        };
        outputs.extend(names.into_iter().map(|name| file("--plot", dir.join(name))));
    }
    if let Writes::Mixed(names) = writes {
        outputs.extend(names.planned(output)?.into_iter().map(|(flag, path)| file(flag, path)));
    }
    Ok(outputs)
}

/// The whole guard over what a command writes, before anything is touched: `ledger` (its
/// targets, records, trees and inputs) with every output of `output` added
/// (`planned_outputs`), judged whole (`Ledger::judge`); then `--csv`'s header (a table of
/// this iopulse) and `--plot`'s directory.
pub fn check_planned(output: &OutputOptions, writes: Writes<'_>, mut ledger: Ledger) -> Result<(), UsageError> {
    ledger.entries.extend(planned_outputs(output, writes)?);
    ledger.judge()?;
    if let Some(path) = &output.csv_file {
        csv::check(path)?;
    }
    if let Some(dir) = &output.plot_dir {
        plot::check_dir("--plot", dir)?;
    }
    Ok(())
}

/// Writes the report to stdout in the chosen format, then the JSON file, the CSV row, the
/// time series and the charts if asked. A failed output does not stop the others: every
/// failure is returned, one line each naming the output ("stdout", "--json PATH").
pub fn emit(result: &RunResult, output: &OutputOptions) -> Vec<String> {
    let mut failures = Vec::new();
    emit_report_and_json(render(result, output.format), || json(result), output, &mut failures);
    if let Some(path) = &output.csv_file
        && let Err(e) = csv::append(path, result)
    {
        failures.push(format!("write --csv {}: {e}", path.display()));
    }
    if let Some(path) = &output.timeseries_file
        && let Err(e) =
            timeseries::render(result).and_then(|bytes| crate::storage::ledger::output::write_whole(path, &bytes))
    {
        failures.push(format!("write --timeseries {}: {e}", path.display()));
    }
    if let Some(dir) = &output.plot_dir {
        emit_plot_outcome(plot::result_charts(result, dir), dir, output, &mut failures);
    }
    if let Some(path) = &output.iolog_file {
        let text = result.schedule.iolog.as_deref().map(iolog::render).unwrap_or_default();
        if let Err(e) = crate::storage::ledger::output::write_whole(path, text.as_bytes()) {
            failures.push(format!("write --write-iolog {}: {e}", path.display()));
        }
    }
    failures
}

/// What every kind of result emits first: the rendered report on stdout and the JSON
/// document to `--json` (rendered only when asked for). Each failure is named and pushed.
pub(super) fn emit_report_and_json(
    rendered: io::Result<String>,
    json_doc: impl FnOnce() -> String,
    output: &OutputOptions,
    failures: &mut Vec<String>,
) {
    match rendered {
        Ok(text) => {
            let mut stdout = io::stdout().lock();
            if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
                failures.push(format!("write the report to stdout: {e}"));
            }
        }
        Err(e) => failures.push(format!("render the report: {e}")),
    }
    if let Some(path) = &output.json_file
        && let Err(e) = crate::storage::ledger::output::write_whole(path, json_doc().as_bytes())
    {
        failures.push(format!("write --json {}: {e}", path.display()));
    }
}

/// `--plot`'s outcome: its notes on stderr (unless quiet), or its failure pushed.
pub(super) fn emit_plot_outcome<E: std::fmt::Display>(
    charts: Result<plot::PlotOutcome, E>,
    dir: &std::path::Path,
    output: &OutputOptions,
    failures: &mut Vec<String>,
) {
    match charts {
        Ok(outcome) if !output.quiet => {
            for note in &outcome.notes {
                crate::stderr_line!("iopulse: note: --plot: {note}");
            }
        }
        Ok(_) => {}
        Err(e) => failures.push(format!("write --plot {}: {e}", dir.display())),
    }
}

/// The run's block size: `4 KiB`; a mix in fio's syntax; one size at a finer alignment
/// with it (`64 KiB at 4 KiB offsets`).
pub(crate) fn block_size_text(s: &crate::workload::spec::Spec) -> String {
    match &s.shape.block_sizes {
        Some(m) if m.sizes().len() > 1 => format!("bssplit {}", m.fio_syntax()),
        Some(m) => format!(
            "{} at {} offsets",
            crate::base::units::display::bytes(m.largest_bytes()),
            crate::base::units::display::bytes(m.align_bytes)
        ),
        None => crate::base::units::display::bytes(s.shape.block_size_bytes),
    }
}
