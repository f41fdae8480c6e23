//! Reports: the `RunResult` written for people (text) or programs (JSON).
//! Reports format; they never compute a figure. JSON goes only to stdout or
//! its own file; diagnostics go to stderr.

pub mod text;
pub mod units;

use crate::cli::{OutputFormat, OutputOptions};
use crate::result::RunResult;
use std::io::{self, Write};

/// The JSON result, pretty-printed, with a final newline.
pub fn json(result: &RunResult) -> String {
    let mut text = serde_json::to_string_pretty(result).expect("a RunResult always serializes");
    text.push('\n');
    text
}

/// Writes the report to stdout in the chosen format, and the JSON file if asked.
pub fn emit(result: &RunResult, output: &OutputOptions) -> io::Result<()> {
    if let Some(path) = &output.json_file {
        std::fs::write(path, json(result))
            .map_err(|e| io::Error::new(e.kind(), format!("write --json {}: {e}", path.display())))?;
    }
    let text = match output.format {
        OutputFormat::Text => text::render(result),
        OutputFormat::Json => json(result),
    };
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}
