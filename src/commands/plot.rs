//! `iopulse plot`: SVG charts of a JSON result (a run's, a job file's) or of a sweep's
//! `--csv` table. It reads and draws (`report::plot`).

use crate::base::diagnostics::error::exit_code;
use crate::output::report::{self, plot};
use crate::storage::ledger::{Action, Ledger};
use std::path::{Path, PathBuf};

const PLOT_EXAMPLES: &str = "\
Examples:
  iopulse plot result.json --plot plots/
      plots/latency-percentiles.svg, and iops-over-time.svg and p99-over-time.svg
      when the result has a time series
  iopulse plot jobs.json --plot plots/
      a job file's result (`iopulse run FILE --json`): the combined charts, then each
      job's, named after it: plots/job-NAME-latency-percentiles.svg, ...
  iopulse plot --sweep sweep.csv --x queue_depth --y iops --by block_size
      sweep-iops-vs-queue_depth-by-block_size.svg: IOPS against queue depth, one line
      per block size (the median of the repetitions, with their range)
  iopulse plot --sweep sweep.csv --x threads --y read_p99_ns --where block_size=4096 --plot plots/
      p99 read latency against threads, 4 KiB runs only

Columns of a --csv file: see docs/usage.md (e.g. queue_depth, block_size, threads,
iops, bw_bytes_per_sec, read_p99_ns, achieved_queue_depth).";

/// Draw SVG charts of a JSON result, or of a sweep written with --csv.
#[derive(Debug, clap::Args)]
#[command(after_help = PLOT_EXAMPLES)]
pub struct PlotArgs {
    /// A JSON result.
    ///
    /// A JSON result (`iopulse --json FILE`, or `iopulse merge --output-format json`).
    #[arg(value_name = "RESULT.json", required_unless_present = "sweep", conflicts_with = "sweep")]
    pub result: Option<PathBuf>,

    /// Directory the charts are written to.
    ///
    /// Directory the SVG files are written to (created if missing), as --plot of a run.
    /// E.g. `--plot plots/`
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub plot: PathBuf,

    /// Former name of --plot.
    ///
    /// Former name of --plot.
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "plot")]
    pub out: Option<PathBuf>,

    /// Plot a sweep's CSV table instead.
    ///
    /// Plot a sweep from a CSV file written by `--csv` instead of one result.
    #[arg(long, value_name = "FILE.csv")]
    pub sweep: Option<PathBuf>,

    /// Sweep column for the x axis [default: queue_depth]
    ///
    /// Sweep column for the x axis [default: queue_depth]
    #[arg(long, value_name = "COLUMN")]
    pub x: Option<String>,

    /// Sweep column for the y axis [default: iops]
    ///
    /// Sweep column for the y axis [default: iops]
    #[arg(long, value_name = "COLUMN")]
    pub y: Option<String>,

    /// Sweep column that splits the lines.
    ///
    /// Sweep column that splits the rows into one line per value.
    #[arg(long, value_name = "COLUMN")]
    pub by: Option<String>,

    /// Only sweep rows whose COLUMN is VALUE.
    ///
    /// Only the sweep rows whose COLUMN is VALUE (repeatable), e.g. --where threads=1.
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    pub filters: Vec<(String, String)>,

    #[command(flatten)]
    pub output: crate::front::cli::output::QuietArg,
}

fn parse_filter(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((column, value)) if !column.is_empty() => Ok((column.to_string(), value.to_string())),
        _ => Err(format!("`{text}`: give COLUMN=VALUE, e.g. threads=1")),
    }
}

pub fn plot(mut args: PlotArgs) -> i32 {
    super::end_on_first_signal();
    if let Some(dir) = args.out.take() {
        args.plot = dir;
    }
    if args.sweep.is_none() && (args.x.is_some() || args.y.is_some() || args.by.is_some() || !args.filters.is_empty()) {
        crate::stderr_line!(
            "iopulse plot: error: --x, --y, --by and --where apply to --sweep FILE.csv: add --sweep or drop them"
        );
        return exit_code::USAGE;
    }
    if let Some(csv) = &args.sweep {
        let x = args.x.as_deref().unwrap_or("queue_depth");
        let y = args.y.as_deref().unwrap_or("iops");
        let sweep = match crate::figures::sweep::load(csv, x, y, args.by.as_deref(), &args.filters) {
            Ok(s) => s,
            Err(e) => {
                crate::stderr_line!("iopulse plot: error: {e}");
                return exit_code::USAGE;
            }
        };
        let mut name = format!("sweep-{y}-vs-{x}");
        if let Some(by) = &args.by {
            name.push_str(&format!("-by-{by}"));
        }
        for filter in &sweep.filters {
            name.push('-');
            name.push_str(&filter.replace(['/', ' '], "_"));
        }
        name.push_str(".svg");
        let path = args.plot.join(name);
        let mut ledger = Ledger::new();
        ledger.read("the sweep's table this command reads", csv);
        if let Some(code) = judge(ledger, &args.plot, std::slice::from_ref(&path)) {
            return code;
        }
        if let Err(e) = std::fs::create_dir_all(&args.plot) {
            crate::stderr_line!("iopulse plot: error: --plot {}: {e}", args.plot.display());
            return exit_code::RUN_FAILED;
        }
        return match plot::sweep_chart(&sweep, &path) {
            Ok(()) => super::write_stdout(&format!("{}\n", path.display())),
            Err(e) => {
                crate::stderr_line!("iopulse plot: error: {e}");
                exit_code::RUN_FAILED
            }
        };
    }
    let Some(path) = &args.result else { return exit_code::USAGE };
    // Read as it is parsed, bounded, its figures judged: memory for what is drawn, not for
    // the text (`result::load`).
    let loaded = match crate::figures::result::load::with_time_series(path) {
        Ok(loaded) => loaded,
        Err(crate::figures::result::load::LoadError::MetadataResult { .. }) => return metadata_charts(&args, path),
        Err(e) => {
            crate::stderr_line!("iopulse plot: error: {e}");
            return exit_code::USAGE;
        }
    };
    // The charts may land on neither the result nor a target it names.
    let mut ledger = Ledger::new();
    ledger.read("the result this command reads", path);
    let file = path.display().to_string();
    let names = match &loaded.jobs {
        Some(doc) => {
            let jobs: Vec<&str> = doc.jobs.iter().map(|j| j.job.as_str()).collect();
            for (file, target) in super::report::targets_of(&file, &doc.combined)
                .into_iter()
                .chain(doc.jobs.iter().flat_map(|j| super::report::targets_of(&file, &j.result)))
            {
                ledger.read(format!("a target of the run {file} records"), target);
            }
            plot::job_chart_names(&jobs)
        }
        None => {
            for (file, target) in super::report::targets_of(&file, &loaded.result) {
                ledger.read(format!("a target of the run {file} records"), target);
            }
            plot::run_chart_names()
        }
    };
    let charts: Vec<PathBuf> = names.into_iter().map(|n| args.plot.join(n)).collect();
    if let Some(code) = judge(ledger, &args.plot, &charts) {
        return code;
    }
    // A job file's result: the combined figures' charts and each job's.
    let charts = match &loaded.jobs {
        Some(doc) => report::jobs::charts(doc, &args.plot),
        None => plot::result_charts(&loaded.result, &args.plot),
    };
    said_and_listed(&args, charts)
}

/// A metadata run's result: the charts its run's `--plot DIR` draws (latency per kind; ops/s
/// and p99 over time with a time series), under the same ledger as a block run's.
fn metadata_charts(args: &PlotArgs, path: &Path) -> i32 {
    let loaded = match crate::figures::result::load::metadata_with_time_series(path) {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::stderr_line!("iopulse plot: error: {e}");
            return exit_code::USAGE;
        }
    };
    let mut ledger = Ledger::new();
    ledger.read("the result this command reads", path);
    ledger.read(format!("the tree the run {} records", loaded.file), PathBuf::from(&loaded.result.target));
    let charts: Vec<PathBuf> =
        report::metadata_plot::chart_names(None).into_iter().map(|n| args.plot.join(n)).collect();
    if let Some(code) = judge(ledger, &args.plot, &charts) {
        return code;
    }
    said_and_listed(args, report::metadata_plot::charts(&loaded.result, &args.plot, ""))
}

/// The charts drawn: their notes on stderr (unless `--quiet`), their paths on stdout.
fn said_and_listed(args: &PlotArgs, charts: Result<report::plot::PlotOutcome, report::plot::PlotError>) -> i32 {
    match charts {
        Ok(outcome) => {
            super::print_notes(args.output.quiet, &outcome.notes);
            let listing: String = outcome.written.iter().map(|p| format!("{}\n", p.display())).collect();
            super::write_stdout(&listing)
        }
        Err(e) => {
            crate::stderr_line!("iopulse plot: error: {e}");
            exit_code::RUN_FAILED
        }
    }
}

/// The ledger of `plot`: its inputs with the directory and the charts that may be written
/// in it, judged whole; `Some(exit code)` when the command ends here (a refusal, or
/// `--dry-run`).
fn judge(mut ledger: Ledger, dir: &Path, charts: &[PathBuf]) -> Option<i32> {
    ledger.touch("--out", dir, Action::MakeDir);
    for chart in charts {
        ledger.touch("--out", chart, Action::Replace);
    }
    if let Err(e) = ledger.judge() {
        crate::stderr_line!("iopulse plot: error: {e}");
        return Some(exit_code::USAGE);
    }
    super::dry_run_exit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Plot {
        #[command(flatten)]
        args: PlotArgs,
    }

    #[test]
    fn plot_needs_a_result_or_a_sweep() {
        assert!(Plot::try_parse_from(["plot"]).is_err());
        assert!(Plot::try_parse_from(["plot", "r.json", "--sweep", "s.csv"]).is_err());
        let a = Plot::try_parse_from(["plot", "--sweep", "s.csv", "--by", "block_size"]).unwrap().args;
        assert_eq!((a.x, a.y, a.by.as_deref()), (None, None, Some("block_size")));
        let a = Plot::try_parse_from(["plot", "r.json", "--out", "d"]).unwrap().args;
        assert_eq!(a.out, Some(PathBuf::from("d")));
    }
}
