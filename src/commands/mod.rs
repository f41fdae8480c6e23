//! What the `iopulse` command does: the benchmark itself (`benchmark`: `iopulse
//! [TARGET...] [flags]`), and the subcommands `iopulse run` (a job file), `iopulse sweep`
//! and `iopulse search` (`sweep.rs`, `search.rs`: many runs), `iopulse merge`,
//! `iopulse plot`, `iopulse completions` and `iopulse man` (this file). `main` dispatches on the
//! first argument being exactly one of these names (a target file of that name is
//! written `./merge`), so the benchmark command is unchanged. Each subcommand has
//! its own clap parser, and returns the exit code.

pub mod benchmark;
pub mod from_fio;
pub mod profile;
pub mod search;
pub mod sweep;

use crate::cli::{Args, OutputFormat};
use crate::error::exit_code;
use crate::report;
use crate::report::plot;
use crate::result::merge;
use clap::{CommandFactory, Parser};
use std::io::Write;
use std::path::PathBuf;

/// The subcommand names `main` dispatches on.
pub const NAMES: &[&str] = &["run", "sweep", "search", "from-fio", "profiles", "merge", "plot", "completions", "man"];

const RUN_EXAMPLES: &str = "\
Examples:
  iopulse run db-host.toml
      every job of the file; the jobs of a phase run at once in one shared window
  iopulse run db-host.toml --duration 5s --json result.json
      flags after the file apply to every job (here: 5 s each, and the JSON result)
  iopulse run db-host.toml --interval 1s --timeseries ts.csv --csv runs.csv
      a time series file per job (ts-oltp.csv, ts-log-writer.csv, ts-measure.csv) and
      a CSV row per job, its last columns `job` and `phase`
  iopulse run randread.fio --ignore-unsupported
      a fio job file, translated as `iopulse from-fio` does (docs/fio.md); options
      without an equivalent are warnings, recorded in the result

A job file (docs/jobs.md):
  [global]
  duration = \"30s\"
  direct = true

  [oltp]
  targets = [\"/data/db.dat\"]
  block-size = \"8k\"
  random = true
  write-percent = 30
  queue-depth = 32
  engine = \"io-uring\"

  [log-writer]
  targets = [\"/data/log.dat\"]
  block-size = \"64k\"
  write-percent = 100
  rate-bw = \"20M\"

  [measure]
  stonewall = true          # a new phase: starts when the jobs above have ended
  targets = [\"/data/db.dat\"]
  random = true

Keys are the long names of the flags of `iopulse --help`, with the same meaning; `targets`
lists a job's targets (none: a temporary file, as `iopulse` alone). Output flags (json,
csv, plot, timeseries, output-format, quiet) belong to [global] or after the file.
The report has a section per job and the combined figures; the JSON a `jobs` array.
Exit codes: as `iopulse` (0 ok, 1 a job failed, 2 a bad job file, nothing touched).";

/// Run the jobs of a job file: concurrent jobs in one shared window, phases one after another.
#[derive(Debug, Parser)]
#[command(name = "run", bin_name = "iopulse run", after_help = RUN_EXAMPLES)]
pub struct RunArgs {
    /// The job file (TOML, docs/jobs.md), or a fio job file (FILE.fio, docs/fio.md).
    #[arg(value_name = "FILE.toml|FILE.fio")]
    pub file: PathBuf,

    /// With a fio job file: options without an iopulse equivalent become warnings
    /// (recorded in the result) instead of errors.
    #[arg(long)]
    pub ignore_unsupported: bool,

    /// Flags of `iopulse` applied to every job, overriding the file (e.g. --duration 5s).
    #[arg(value_name = "FLAGS", trailing_var_arg = true, allow_hyphen_values = true)]
    pub overrides: Vec<std::ffi::OsString>,
}

const MERGE_EXAMPLES: &str = "\
Examples:
  iopulse merge host1.json host2.json
      one text report of two hosts that ran the same workload at the same time
  iopulse merge run-*.json --output-format json > merged.json
      the merged result as JSON (with `merged_from`), e.g. for `iopulse plot merged.json`
  iopulse merge a.json b.json --force
      merge although the specs differ (each difference is noted)
  iopulse merge a.json b.json --allow-duplicates
      merge two results that look like one run given twice (same host, start and spec)
  iopulse merge host1-jobs.json host2-jobs.json
      results of one job file (`iopulse run FILE --json`): merged job by job, each
      phase's and the combined figures recomputed; other jobs, or a single run's
      result among them, are refused naming the file

Percentiles come from the added histograms, never from averaged percentiles;
IOPS, bandwidth and CPU time are summed (the runs are taken as concurrent).
Inputs must be regular files of at most 256 MiB (no FIFO, device or /proc file), read as
they are parsed; a histogram whose header lies, a figure no run has (negative, 1e308 IOPS)
or counts whose sum overflows are refused naming the file and field; one result given
twice, or an input that is also stdout (`> a.json`), is refused.
Exit codes: 0 merged, 2 unreadable input, a duplicate, or different specs without --force,
130/143/129 on SIGINT/SIGTERM/SIGHUP.";

/// Combine the JSON results of concurrent runs (several processes or hosts) into one report.
#[derive(Debug, Parser)]
#[command(name = "merge", bin_name = "iopulse merge", after_help = MERGE_EXAMPLES)]
pub struct MergeArgs {
    /// JSON results written by `iopulse --json FILE` or `--output-format json`.
    #[arg(value_name = "RESULT.json", required = true)]
    pub results: Vec<PathBuf>,

    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Merge results whose specs differ (other than the seed); the first one's spec is shown.
    #[arg(long)]
    pub force: bool,
    /// Merge results that look like one run given twice (same host, start and spec), e.g.
    /// two processes started in the same instant with identical command lines.
    #[arg(long)]
    pub allow_duplicates: bool,

    /// No notes on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

const PLOT_EXAMPLES: &str = "\
Examples:
  iopulse plot result.json --out plots/
      plots/latency-percentiles.svg, and iops-over-time.svg and p99-over-time.svg
      when the result has a time series
  iopulse plot jobs.json --out plots/
      a job file's result (`iopulse run FILE --json`): the combined charts, then each
      job's, named after it: plots/job-NAME-latency-percentiles.svg, ...
  iopulse plot --sweep sweep.csv --x queue_depth --y iops --by block_size
      sweep-iops-vs-queue_depth-by-block_size.svg: IOPS against queue depth, one line
      per block size (the median of the repetitions, with their range)
  iopulse plot --sweep sweep.csv --x threads --y read_p99_ns --where block_size=4096 --out plots/
      p99 read latency against threads, 4 KiB runs only

Columns of a --csv file: see docs/usage.md (e.g. queue_depth, block_size, threads,
iops, bw_bytes_per_sec, read_p99_ns, achieved_queue_depth).";

/// Draw SVG charts of a JSON result, or of a sweep written with --csv.
#[derive(Debug, Parser)]
#[command(name = "plot", bin_name = "iopulse plot", after_help = PLOT_EXAMPLES)]
pub struct PlotArgs {
    /// A JSON result (`iopulse --json FILE`, or `iopulse merge --output-format json`).
    #[arg(value_name = "RESULT.json", required_unless_present = "sweep", conflicts_with = "sweep")]
    pub result: Option<PathBuf>,

    /// Directory the SVG files are written to (created if missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,

    /// Plot a sweep from a CSV file written by `--csv` instead of one result.
    #[arg(long, value_name = "FILE.csv")]
    pub sweep: Option<PathBuf>,

    /// Sweep column for the x axis [default: queue_depth]
    #[arg(long, value_name = "COLUMN")]
    pub x: Option<String>,

    /// Sweep column for the y axis [default: iops]
    #[arg(long, value_name = "COLUMN")]
    pub y: Option<String>,

    /// Sweep column that splits the rows into one line per value.
    #[arg(long, value_name = "COLUMN")]
    pub by: Option<String>,

    /// Only the sweep rows whose COLUMN is VALUE (repeatable), e.g. --where threads=1.
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    pub filters: Vec<(String, String)>,

    /// No notes on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_filter(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((column, value)) if !column.is_empty() => Ok((column.to_string(), value.to_string())),
        _ => Err(format!("`{text}`: give COLUMN=VALUE, e.g. threads=1")),
    }
}

/// Print shell completions for iopulse (and its subcommands) on stdout.
#[derive(Debug, Parser)]
#[command(
    name = "completions",
    bin_name = "iopulse completions",
    after_help = "Examples:\n  iopulse completions bash > /etc/bash_completion.d/iopulse\n  iopulse completions zsh > \"${fpath[1]}/_iopulse\"\n  iopulse completions fish > ~/.config/fish/completions/iopulse.fish"
)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Print the iopulse man page (roff) on stdout.
#[derive(Debug, Parser)]
#[command(
    name = "man",
    bin_name = "iopulse man",
    after_help = "Examples:\n  iopulse man > iopulse.1 && man ./iopulse.1\n  iopulse man | gzip > /usr/local/share/man/man1/iopulse.1.gz"
)]
pub struct ManArgs {}

/// The whole command line as one clap command: the run's flags and the subcommands.
/// Completions and the man page are generated from it.
fn full_command() -> clap::Command {
    Args::command()
        .subcommand(RunArgs::command().bin_name("iopulse run"))
        .subcommand(sweep::SweepArgs::command().bin_name("iopulse sweep"))
        .subcommand(search::SearchArgs::command().bin_name("iopulse search"))
        .subcommand(from_fio::FromFioArgs::command().bin_name("iopulse from-fio"))
        .subcommand(profile::ProfilesArgs::command().bin_name("iopulse profiles"))
        .subcommand(MergeArgs::command().bin_name("iopulse merge"))
        .subcommand(PlotArgs::command().bin_name("iopulse plot"))
        .subcommand(CompletionsArgs::command().bin_name("iopulse completions"))
        .subcommand(ManArgs::command().bin_name("iopulse man"))
        .args_conflicts_with_subcommands(true)
}

fn print_notes(quiet: bool, notes: &[String]) {
    if !quiet {
        for n in notes {
            crate::stderr_line!("iopulse: note: {n}");
        }
    }
}

/// `iopulse run FILE [FLAGS]`: every job checked before anything is touched, then the
/// phases in order, the report and the exit code.
pub fn run_file(mut args: RunArgs) -> i32 {
    // `--ignore-unsupported` after the file too, as the other flags there.
    let before = args.overrides.len();
    args.overrides.retain(|o| o != "--ignore-unsupported");
    let ignore_unsupported = args.ignore_unsupported || args.overrides.len() != before;
    let loaded = match from_fio::load_job_file(&args.file, &args.overrides, ignore_unsupported) {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::stderr_line!("iopulse run: error: {e}");
            return exit_code::USAGE;
        }
    };
    if !loaded.plan.output.quiet {
        for n in &loaded.notes {
            crate::stderr_line!("iopulse: note: {n}");
        }
    }
    for w in &loaded.warnings {
        crate::stderr_line!("⚠ {w}");
    }
    let (code, doc) = run_plan(&loaded.plan, &[args.file.as_path()]);
    let Some(mut doc) = doc else { return code };
    doc.combined.warnings.extend(loaded.warnings);
    let failures = report::jobs::emit(&doc, &loaded.plan.output);
    for f in &failures {
        crate::stderr_line!("iopulse: error: {f}");
    }
    if !failures.is_empty() && code == exit_code::SUCCESS { exit_code::OUTPUT_FAILED } else { code }
}

/// Every job of `plan` (read from the files `inputs`, which no output may replace), phase
/// after phase: the exit code, and the result document of the jobs that ran (none if none
/// ran). Errors are said on stderr; the report is the caller's.
fn run_plan(plan: &crate::jobs::Plan, inputs: &[&std::path::Path]) -> (i32, Option<crate::result::jobs::JobsResult>) {
    use crate::jobs::{combined, phases};
    use crate::result::jobs::JobResult;
    let targets: Vec<PathBuf> = plan.jobs.iter().flat_map(|j| j.spec.targets.iter().cloned()).collect();
    let names: Vec<&str> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
    if let Err(e) = report::check_job_outputs(&plan.output, &targets, &names, inputs) {
        crate::stderr_line!("iopulse run: error: {e}");
        return (exit_code::USAGE, None);
    }
    let stop = match crate::signals::install() {
        Ok(stop) => stop,
        Err(e) => {
            crate::stderr_line!("iopulse run: error: cannot install signal handlers: {e}");
            return (exit_code::RUN_FAILED, None);
        }
    };
    let outcomes = phases::run_all(plan, plan.output.quiet, &stop);
    // The first job that failed on its own gives the exit code; those stopped because of it
    // are said in one line after it.
    let mut code = exit_code::SUCCESS;
    for o in &outcomes {
        if let Some(error) = &o.error
            && (!o.stopped_by_others || o.result.is_some())
        {
            crate::stderr_line!("iopulse run: error: job [{}]: {error}", o.name);
        }
        if code == exit_code::SUCCESS && !o.stopped_by_others {
            code = o.exit_code;
        }
    }
    let not_run: Vec<String> = outcomes
        .iter()
        .filter(|o| o.result.is_none() && o.stopped_by_others)
        .map(|o| format!("[{}]", o.name))
        .collect();
    if !not_run.is_empty() && code != exit_code::USAGE {
        crate::stderr_line!("iopulse run: not run: {}", not_run.join(", "));
    }
    let signal = stop.load(std::sync::atomic::Ordering::Relaxed) as i32;
    if code != exit_code::SUCCESS
        && [exit_code::INTERRUPTED, exit_code::TERMINATED, exit_code::HUNG_UP].contains(&signal)
    {
        code = signal;
    }
    let ran: Vec<JobResult> = outcomes
        .into_iter()
        .filter_map(|o| o.result.map(|result| JobResult { job: o.name, phase: o.phase, result }))
        .collect();
    (code, combined::build(&plan.file, ran))
}

pub fn merge(args: MergeArgs) -> i32 {
    end_on_first_signal();
    let paths: Vec<&std::path::Path> = args.results.iter().map(PathBuf::as_path).collect();
    if let Err(e) = merge::refuse_stdout_as_input(&paths) {
        crate::stderr_line!("iopulse merge: error: {e}");
        return exit_code::USAGE;
    }
    let documents = match args.results.iter().map(|p| merge::load_document(p)).collect::<Result<Vec<_>, _>>() {
        Ok(documents) => documents,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    let job_file = documents.iter().find(|(_, jobs)| jobs.is_some()).map(|(i, _)| i.file.clone());
    let single = documents.iter().find(|(_, jobs)| jobs.is_none()).map(|(i, _)| i.file.clone());
    if let (Some(file), Some(plain)) = (job_file.clone(), single) {
        crate::stderr_line!("iopulse merge: error: {}", merge::MergeError::JobFileAndSingleRun { file, plain });
        return exit_code::USAGE;
    }
    let (inputs, jobs): (Vec<_>, Vec<_>) = documents.into_iter().unzip();
    if !args.allow_duplicates
        && let Err(e) = merge::refuse_duplicates(&inputs)
    {
        crate::stderr_line!("iopulse merge: error: {e}");
        return exit_code::USAGE;
    }
    if job_file.is_some() {
        return merge_job_files(&args, inputs, jobs);
    }
    let merged = match merge::merge(&inputs, args.force) {
        Ok(m) => m,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    print_merged(&args, &merged.notes, &merged.warnings, report::render(&merged.result, args.output_format))
}

/// The end of a merge: its notes and warnings on stderr, then the report on stdout.
fn print_merged<E: std::fmt::Display>(
    args: &MergeArgs,
    notes: &[String],
    warnings: &[String],
    rendered: Result<String, E>,
) -> i32 {
    print_notes(args.quiet, notes);
    for w in warnings {
        crate::stderr_line!("⚠ {w}");
    }
    match rendered {
        Ok(text) => write_stdout(&text),
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            exit_code::RUN_FAILED
        }
    }
}

/// `iopulse merge` of job-file results: job by job, the combined figures recomputed.
fn merge_job_files(
    args: &MergeArgs,
    inputs: Vec<merge::Input>,
    jobs: Vec<Option<crate::result::jobs::JobsResult>>,
) -> i32 {
    use crate::jobs::merge_results::{self, JobsInput};
    let inputs: Vec<JobsInput> =
        inputs.into_iter().zip(jobs).filter_map(|(i, doc)| Some(JobsInput { file: i.file, doc: doc? })).collect();
    let merged = match merge_results::merge(&inputs, args.force) {
        Ok(m) => m,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    print_merged(args, &merged.notes, &merged.warnings, report::jobs::render(&merged.doc, args.output_format))
}

/// `merge` and `plot` change nothing that needs cleaning up: SIGINT, SIGTERM and SIGHUP
/// end them at once with 130, 143 or 129, even when the shell that started them in the
/// background set SIGINT to be ignored.
fn end_on_first_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let always = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    for (signal, code) in
        [(SIGINT, exit_code::INTERRUPTED), (SIGTERM, exit_code::TERMINATED), (SIGHUP, exit_code::HUNG_UP)]
    {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, code, std::sync::Arc::clone(&always));
    }
}

pub fn plot(args: PlotArgs) -> i32 {
    end_on_first_signal();
    if args.sweep.is_none() && (args.x.is_some() || args.y.is_some() || args.by.is_some() || !args.filters.is_empty()) {
        crate::stderr_line!(
            "iopulse plot: error: --x, --y, --by and --where apply to --sweep FILE.csv: add --sweep or drop them"
        );
        return exit_code::USAGE;
    }
    if let Some(csv) = &args.sweep {
        let x = args.x.as_deref().unwrap_or("queue_depth");
        let y = args.y.as_deref().unwrap_or("iops");
        let sweep = match crate::sweep::load(csv, x, y, args.by.as_deref(), &args.filters) {
            Ok(s) => s,
            Err(e) => {
                crate::stderr_line!("iopulse plot: error: {e}");
                return exit_code::USAGE;
            }
        };
        if let Err(e) = std::fs::create_dir_all(&args.out) {
            crate::stderr_line!("iopulse plot: error: --out {}: {e}", args.out.display());
            return exit_code::RUN_FAILED;
        }
        let mut name = format!("sweep-{y}-vs-{x}");
        if let Some(by) = &args.by {
            name.push_str(&format!("-by-{by}"));
        }
        for filter in &sweep.filters {
            name.push('-');
            name.push_str(&filter.replace(['/', ' '], "_"));
        }
        name.push_str(".svg");
        let path = args.out.join(name);
        return match plot::sweep_chart(&sweep, &path) {
            Ok(()) => write_stdout(&format!("{}\n", path.display())),
            Err(e) => {
                crate::stderr_line!("iopulse plot: error: {e}");
                exit_code::RUN_FAILED
            }
        };
    }
    let Some(path) = &args.result else { return exit_code::USAGE };
    // Read as it is parsed, bounded, its figures judged: memory for what is drawn, not for
    // the text (`result::load`).
    let loaded = match crate::result::load::with_time_series(path) {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::stderr_line!("iopulse plot: error: {e}");
            return exit_code::USAGE;
        }
    };
    // A job file's result: the combined figures' charts and each job's.
    let charts = match &loaded.jobs {
        Some(doc) => report::jobs::charts(doc, &args.out),
        None => plot::result_charts(&loaded.result, &args.out),
    };
    match charts {
        Ok(outcome) => {
            print_notes(args.quiet, &outcome.notes);
            let listing: String = outcome.written.iter().map(|p| format!("{}\n", p.display())).collect();
            write_stdout(&listing)
        }
        Err(e) => {
            crate::stderr_line!("iopulse plot: error: {e}");
            exit_code::RUN_FAILED
        }
    }
}

pub fn completions(args: CompletionsArgs) -> i32 {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut full_command(), "iopulse", &mut out);
    write_stdout_bytes(&out)
}

pub fn man(_: ManArgs) -> i32 {
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(full_command()).render(&mut out) {
        crate::stderr_line!("iopulse man: error: {e}");
        return exit_code::RUN_FAILED;
    }
    write_stdout_bytes(&out)
}

/// A subcommand parser's error: help and version print as clap makes them (exit 0);
/// errors become one line, exit 2.
pub(crate) fn clap_exit(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return exit_code::SUCCESS;
    }
    crate::stderr_line!("iopulse: {}", crate::error::clap_one_line(&e));
    exit_code::USAGE
}

fn write_stdout(text: &str) -> i32 {
    write_stdout_bytes(text.as_bytes())
}

fn write_stdout_bytes(bytes: &[u8]) -> i32 {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => exit_code::SUCCESS,
        // A closed pipe (`| head`) is not a failure of ours.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit_code::SUCCESS,
        Err(e) => {
            crate::stderr_line!("iopulse: error: write to stdout: {e}");
            exit_code::RUN_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_command_is_consistent() {
        full_command().debug_assert();
        for name in NAMES {
            assert!(full_command().find_subcommand(name).is_some(), "{name}");
        }
    }

    #[test]
    fn plot_needs_a_result_or_a_sweep() {
        assert!(PlotArgs::try_parse_from(["plot"]).is_err());
        assert!(PlotArgs::try_parse_from(["plot", "r.json", "--sweep", "s.csv"]).is_err());
        let a = PlotArgs::try_parse_from(["plot", "--sweep", "s.csv", "--by", "block_size"]).unwrap();
        assert_eq!((a.x, a.y, a.by.as_deref()), (None, None, Some("block_size")));
    }
}
