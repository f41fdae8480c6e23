//! Reports: the `RunResult` written for people (text) or programs (JSON,
//! fio-compatible JSON, a CSV row, SVG charts). Reports format; they never
//! compute a figure. JSON goes only to stdout or its own file; diagnostics go
//! to stderr.

pub mod csv;
pub mod fio_json;
pub mod jobs;
pub mod live_line;
pub mod output_path;
pub mod plot;
pub mod profile;
pub mod sweep;
pub mod text;
pub mod timeseries;
/// How quantities are shown to people (one home, below every module that prints one).
pub use crate::units::display as units;

use crate::error::UsageError;

use crate::result::RunResult;
use clap::ValueEnum;
use output_path::Output;
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
}

/// Where the results of a run go. Not part of the `Spec`: it does not change
/// what is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    pub format: OutputFormat,
    pub json_file: Option<PathBuf>,
    pub quiet: bool,
    /// `--csv FILE`: append one row per run.
    pub csv_file: Option<PathBuf>,
    /// `--plot DIR`: write SVG charts there.
    pub plot_dir: Option<PathBuf>,
    /// `--timeseries FILE`: one CSV row per interval.
    pub timeseries_file: Option<PathBuf>,
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
        OutputFormat::FioJson => fio_json::render(result).map_err(io::Error::other)?,
    })
}

/// Checks, before anything is touched, that every output can be written where it is
/// asked to go (`output_path::check`: never a device, a FIFO, /proc, a target of the run
/// or a path two outputs share), and that `--csv` is a table of this iopulse.
pub fn check_outputs(output: &OutputOptions, targets: &[PathBuf]) -> Result<(), UsageError> {
    check_outputs_of(output, targets, None)
}

/// As `check_outputs`, for a job file's run of the jobs named `job_names`: each job's
/// `--timeseries` file (`jobs::timeseries_paths`) and charts are checked.
pub fn check_job_outputs(output: &OutputOptions, targets: &[PathBuf], job_names: &[&str]) -> Result<(), UsageError> {
    check_outputs_of(output, targets, Some(job_names))
}

fn check_outputs_of(output: &OutputOptions, targets: &[PathBuf], job_names: Option<&[&str]>) -> Result<(), UsageError> {
    let timeseries: Vec<PathBuf> = match (&output.timeseries_file, job_names) {
        (Some(path), Some(names)) => jobs::timeseries_paths(path, names)?,
        (Some(path), None) => vec![path.clone()],
        (None, _) => Vec::new(),
    };
    let mut outputs: Vec<Output<'_>> =
        [("--json", &output.json_file, false), ("--csv", &output.csv_file, false), ("--plot", &output.plot_dir, true)]
            .into_iter()
            .filter_map(|(flag, path, is_dir)| path.as_deref().map(|path| Output { flag, path, is_dir }))
            .collect();
    outputs.extend(timeseries.iter().map(|path| Output { flag: "--timeseries", path, is_dir: false }));
    // The charts --plot writes into its directory pass the guard too: one of them may be
    // a link to a target or a device, or the path another output names.
    let charts: Vec<PathBuf> = match (&output.plot_dir, job_names) {
        (Some(dir), None) if dir.is_dir() => plot::CHARTS.iter().map(|name| dir.join(name)).collect(),
        (Some(dir), Some(names)) if dir.is_dir() => plot::job_chart_paths(dir, names),
        _ => Vec::new(),
    };
    outputs.extend(charts.iter().map(|path| Output { flag: "--plot", path, is_dir: false }));
    output_path::check(&outputs, targets)?;
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
        && let Err(e) = timeseries::render(result).and_then(|bytes| output_path::write_whole(path, &bytes))
    {
        failures.push(format!("write --timeseries {}: {e}", path.display()));
    }
    if let Some(dir) = &output.plot_dir {
        let charts = serde_json::to_value(result)
            .map_err(|e| e.to_string())
            .and_then(|value| plot::result_charts(result, value.get("time_series"), dir).map_err(|e| e.to_string()));
        emit_plot_outcome(charts, dir, output, &mut failures);
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
        && let Err(e) = output_path::write_whole(path, json_doc().as_bytes())
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
pub(crate) fn block_size_text(s: &crate::spec::Spec) -> String {
    match &s.block_sizes {
        Some(m) if m.sizes().len() > 1 => format!("bssplit {}", m.fio_syntax()),
        Some(m) => format!(
            "{} at {} offsets",
            crate::units::display::bytes(m.largest_bytes()),
            crate::units::display::bytes(m.align_bytes)
        ),
        None => crate::units::display::bytes(s.block_size_bytes),
    }
}
