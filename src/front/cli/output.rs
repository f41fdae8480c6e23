//! Where results go: the one group of output flags that every command that reports takes
//! (help heading "Outputs"): the benchmark, `run`, `sweep`, `search` and `merge` take
//! what fits them of it.

use crate::output::report::{OutputFormat, OutputOptions};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Outputs")]
#[serde(default)]
pub struct OutputArgs {
    /// Report format on stdout [default: text]
    ///
    /// Report format on stdout. E.g. `--output-format json`; `--output-format fio-json+` for
    /// fio's json+ (with the latency buckets fio_jsonplus_clat2csv reads) [default: text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub output_format: Option<OutputFormat>,

    /// Also write the JSON result to FILE.
    ///
    /// Also write the JSON result to FILE (docs/json.md). E.g. `--json result.json`
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub json: Option<PathBuf>,

    /// Append one CSV row per run to FILE.
    ///
    /// Append one CSV row per run (the spec's sweep parameters and the headline figures) to
    /// FILE; the header is written when FILE is new (docs/usage.md lists the columns).
    /// E.g. `--csv runs.csv`
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub csv: Option<PathBuf>,

    /// Write SVG charts into DIR.
    ///
    /// Write SVG charts into DIR (created if missing): latency percentiles, and IOPS and p99
    /// over time when the result has a time series (a sweep: IOPS and p99 against the first
    /// list's flag; a search: latency percentiles against IOPS; a metadata run: each
    /// operation kind's, and ops/s for IOPS, docs/metadata.md). E.g. `--plot plots/`
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub plot: Option<PathBuf>,

    /// No progress or notes on stderr.
    ///
    /// No progress or notes on stderr; warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    /// A full-screen live view while the runs go (q stops).
    ///
    /// A full-screen view on stdout's terminal while the runs go, redrawn each interval:
    /// the run in focus (progress, IOPS, bandwidth, p50/p99/p99.9, sparklines), the
    /// devices' own counters and the CPU, every run (jobs, a sweep's points, a profile's
    /// steps), each worker's part, and what was said on stderr. Keys: q or Ctrl-C stops as
    /// SIGINT does (every output written), p pauses the display, 1 2 3 or Tab switch views,
    /// ↑↓ choose the run. Where stdout is not a terminal, or it is smaller than 72×20, the
    /// live line is shown instead. E.g. `iopulse data.dat --random --duration 60 --live`
    #[arg(long)]
    pub live: bool,
}

/// `-q/--quiet` of every subcommand that reads results or records (merge, compare, plot,
/// report, verify, from-fio), declared once so that each has the same flag with the same
/// meaning as a run's (`OutputArgs::quiet`); `commands::tests` fails for a subcommand
/// without it.
#[derive(Clone, Copy, Debug, Default, PartialEq, clap::Args)]
pub struct QuietArg {
    /// No notes on stderr.
    ///
    /// No notes on stderr; warnings and errors are still printed. E.g. `iopulse merge a.json
    /// b.json --output-format json --quiet`
    #[arg(long, short, help_heading = "Outputs")]
    pub quiet: bool,
}

/// `--write-iolog`: the run's I/Os as a fio iolog v3: the benchmark's and `replay`'s one
/// run, and a file per run of `run`, a profile, `sweep` and `search` (`plan::iologs`).
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
#[command(next_help_heading = "Outputs")]
pub struct IologArgs {
    /// Record every I/O in FILE as a fio iolog v3.
    ///
    /// Record every I/O the run issues (time, file, read/write/trim/flush, offset, length)
    /// in FILE as a fio iolog v3, written after the run: `iopulse replay FILE` or fio's
    /// `--read_iolog=FILE` replays it. At most 4 Mi I/Os per worker are kept (a warning
    /// says when more were issued). With many runs, a file per run named after it: per job
    /// of `iopulse run FILE` or step of `--profile` (run-JOB.iolog), per sweep point and
    /// repetition (run-point0-rep1.iolog), per search run (run-run1.iolog). E.g.
    /// `--write-iolog run.iolog`
    #[arg(long, value_name = "FILE")]
    pub write_iolog: Option<PathBuf>,
}

/// `--timeseries`: a file of interval rows, for the commands whose runs have one window
/// each to write (the benchmark, `run`).
#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Outputs")]
#[serde(default)]
pub struct TimeseriesArgs {
    /// Write one CSV row per interval to FILE.
    ///
    /// Write one CSV row per interval to FILE: time, IOPS, bandwidth and the p50/p99/p99.9/max
    /// latency of that interval alone, per op type (and a time_series array in the JSON).
    /// E.g. `--timeseries ts.csv --interval 250ms`
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub timeseries: Option<PathBuf>,
}

impl OutputArgs {
    pub fn format(&self) -> OutputFormat {
        self.output_format.unwrap_or(OutputFormat::Text)
    }

    pub fn options(&self, timeseries: &TimeseriesArgs) -> OutputOptions {
        OutputOptions {
            format: self.format(),
            json_file: self.json.clone(),
            quiet: self.quiet,
            live: self.live,
            csv_file: self.csv.clone(),
            plot_dir: self.plot.clone(),
            timeseries_file: timeseries.timeseries.clone(),
            iolog_file: None,
        }
    }
}

/// The formats of a command whose report is a document of many runs (sweep, search):
/// fio's layout is one run's, so it is not offered.
pub fn many_runs_format(arg: clap::Arg) -> clap::Arg {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    arg.value_parser(PossibleValuesParser::new(["text", "json", "junit"]).map(|name| match name.as_str() {
        "json" => OutputFormat::Json,
        "junit" => OutputFormat::Junit,
        _ => OutputFormat::Text,
    }))
    .help("Report format on stdout [default: text]")
    .long_help("Report format on stdout: the table (of points, or the curve and the answer), the JSON document, or JUnit XML (each run's --expect a test case, docs/ci.md). E.g. `--output-format json` [default: text]")
}
