//! Reports: the `RunResult` written for people (text) or programs (JSON,
//! fio-compatible JSON, a CSV row, SVG charts). Reports format; they never
//! compute a figure. JSON goes only to stdout or its own file; diagnostics go
//! to stderr.

pub mod csv;
pub mod fio_json;
pub mod plot;
pub mod text;
pub mod timeseries;
pub mod units;

use crate::error::UsageError;

use crate::cli::{OutputFormat, OutputOptions};
use crate::result::RunResult;
use std::io::{self, Write};

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

/// Checks, before anything is touched, that the outputs of `--csv` and `--plot` can be
/// written (see `csv::check` and `plot::check_dir`).
pub fn check_outputs(output: &OutputOptions) -> Result<(), UsageError> {
    if let Some(path) = &output.csv_file {
        csv::check(path)?;
    }
    if let Some(dir) = &output.plot_dir {
        plot::check_dir("--plot", dir)?;
    }
    if let Some(path) = &output.timeseries_file {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(UsageError::new(format!(
                "--timeseries {}: directory {} does not exist",
                path.display(),
                dir.display()
            )));
        }
        if path.is_dir() {
            return Err(UsageError::new(format!("--timeseries {} is a directory: give a file name", path.display())));
        }
    }
    Ok(())
}

/// Writes the report to stdout in the chosen format, the JSON file, the CSV row and the
/// charts if asked.
pub fn emit(result: &RunResult, output: &OutputOptions) -> io::Result<()> {
    if let Some(path) = &output.json_file {
        std::fs::write(path, json(result))
            .map_err(|e| io::Error::new(e.kind(), format!("write --json {}: {e}", path.display())))?;
    }
    let text = render(result, output.format)?;
    {
        let mut stdout = io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
    }
    if let Some(path) = &output.csv_file {
        csv::append(path, result)?;
    }
    if let Some(path) = &output.timeseries_file {
        timeseries::write(path, result)
            .map_err(|e| io::Error::new(e.kind(), format!("write --timeseries {}: {e}", path.display())))?;
    }
    if let Some(dir) = &output.plot_dir {
        let value = serde_json::to_value(result).map_err(io::Error::other)?;
        let outcome = plot::result_charts(result, value.get("time_series"), dir)
            .map_err(|e| io::Error::other(format!("--plot {}: {e}", dir.display())))?;
        if !output.quiet {
            for note in &outcome.notes {
                crate::stderr_line!("iopulse: note: --plot: {note}");
            }
        }
    }
    Ok(())
}
