//! `iopulse run FILE`: a job file (TOML, or a fio job file), every job of every phase
//! planned and checked whole (`plan::job_file`) before anything is touched, then the
//! phases in order (`jobs::phases`), the report and the exit code.

use crate::base::diagnostics::error::exit_code;
use crate::front::cli::table::FlagTable;
use crate::front::cli::{IologArgs, OutputArgs, TimeseriesArgs, WorkloadArgs, command_of};
use crate::front::plan::{self, Plan};
use crate::output::report;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The exit code of the signal that stopped the run (SIGINT, SIGTERM, SIGHUP), if one did.
fn signal_code(stop: &AtomicUsize) -> Option<i32> {
    let word = stop.load(Ordering::Relaxed) as i32;
    [exit_code::INTERRUPTED, exit_code::TERMINATED, exit_code::HUNG_UP].contains(&word).then_some(word)
}

/// What `run -h` shows after the flags (`--help`: `RUN_EXAMPLES`, with a job file).
const RUN_EXAMPLES_SHORT: &str = "\
Examples:
  iopulse run db-host.toml
      every job of the file; the jobs of a phase run at once in one shared window
  iopulse run db-host.toml --duration 5s --json result.json
      flags after the file apply to every job (here: 5 s each, and the JSON result)
  iopulse run randread.fio --ignore-unsupported
      a fio job file, translated as `iopulse from-fio` does (docs/fio.md)
  iopulse run db-host.toml --dry-run
      every path the jobs would touch, and what would happen to it; nothing touched

Keys are the long names of the flags, with the same meaning (docs/jobs.md); `iopulse run
--help` shows more examples and a job file.";

const RUN_EXAMPLES: &str = "\
Examples:
  iopulse run db-host.toml
      every job of the file; the jobs of a phase run at once in one shared window
  iopulse run db-host.toml --duration 5s --json result.json
      flags after the file apply to every job (here: 5 s each, and the JSON result)
  iopulse run db-host.toml --interval 1s --timeseries ts.csv --csv runs.csv
      a time series file per job (ts-oltp.csv, ts-log-writer.csv, ts-measure.csv) and
      a CSV row per job, its last columns `job` and `phase`
  iopulse run db-host.toml --write-iolog run.iolog
      each job's I/Os as a fio iolog v3 of its own (run-oltp.iolog, run-log-writer.iolog,
      run-measure.iolog), for `iopulse replay` or fio's --read_iolog
  iopulse run mail-and-db.toml --json r.json --csv r.csv --plot charts
      a job with `files` (a tree of files, docs/metadata.md) beside block jobs in one
      phase: one start word releases both; `metadata_jobs` beside `jobs` in the JSON,
      the tree's own CSV (r-mail.csv) and charts (charts/job-mail-*.svg)
  iopulse run trees.toml
      a job file whose jobs all have `files`: the jobs of a phase share one window
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
  engine = \"io_uring\"

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
`write-iolog = \"FILE\"` in a job is that job's iolog; in [global] (or --write-iolog after
the file) it is a file per job, FILE with the job's name before the extension.
The report has a section per job and the combined figures; the JSON a `jobs` array.
Exit codes: as `iopulse` (0 ok, 1 a job failed, 2 a bad job file, nothing touched).";

/// Run the jobs of a job file: concurrent jobs in one shared window, phases one after another.
#[derive(Debug, clap::Args)]
#[command(after_help = RUN_EXAMPLES_SHORT, after_long_help = RUN_EXAMPLES)]
pub struct RunArgs {
    /// The job file (TOML, or fio's).
    ///
    /// The job file (TOML, docs/jobs.md), or a fio job file (FILE.fio, docs/fio.md).
    #[arg(value_name = "FILE.toml|FILE.fio")]
    pub file: PathBuf,

    /// Paths after the job file: refused, naming --target.
    ///
    /// Paths after the job file: refused, naming --target.
    #[arg(value_name = "TARGET", hide = true)]
    pub stray: Vec<PathBuf>,

    /// Run every job on this target instead.
    ///
    /// Run every job on this target instead of the file's (repeat for several). E.g.
    /// `iopulse run db.fio --target /mnt/new/db.dat`
    #[arg(long = "target", value_name = "PATH")]
    pub target: Vec<PathBuf>,

    /// With a fio job file: its files are in DIR.
    ///
    /// With a fio job file: its jobs' files are in DIR instead of the file's `directory`
    /// (relative file names, and the files fio would name itself). E.g.
    /// `iopulse run db.fio --directory /mnt/new`
    #[arg(long, value_name = "DIR")]
    pub directory: Option<PathBuf>,

    /// With a fio job file: unsupported options warn.
    ///
    /// With a fio job file: options without an iopulse equivalent become warnings
    /// (recorded in the result) instead of errors. E.g. `iopulse run old.fio --ignore-unsupported`
    #[arg(long)]
    pub ignore_unsupported: bool,

    /// Flags of `iopulse` given with the file apply to every job, overriding the file
    /// (e.g. --duration 5s).
    #[command(flatten)]
    pub workload: WorkloadArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub timeseries: TimeseriesArgs,

    #[command(flatten)]
    pub iolog: IologArgs,
}

/// The flags given on the command line with the job file (`matches`: this subcommand's),
/// as the overrides of every job.
pub(crate) fn overrides(matches: &clap::ArgMatches, said_as: &str) -> plan::job_file::Overrides {
    let mut table = FlagTable::new();
    for command in [
        command_of::<WorkloadArgs>(),
        command_of::<OutputArgs>(),
        command_of::<TimeseriesArgs>(),
        command_of::<IologArgs>(),
    ] {
        table.overlay(&FlagTable::from_matches(&command, matches));
    }
    plan::job_file::Overrides { table, targets: Vec::new(), said_as: said_as.to_string() }
}

/// `iopulse run FILE [FLAGS]`: every job checked before anything is touched, then the
/// phases in order, the report and the exit code.
pub fn run_file(args: RunArgs, matches: &clap::ArgMatches) -> i32 {
    if let Some(t) = args.stray.first() {
        crate::stderr_line!(
            "iopulse run: error: `{}` after the job file is not a flag; give --target {} to run every job on it, or targets = [\"{}\"] in the job file",
            t.display(),
            t.display(),
            t.display()
        );
        return exit_code::USAGE;
    }
    // First: a signal while thousands of jobs are read, planned and checked stops the run.
    let stop = match crate::io::host::signals::install() {
        Ok(stop) => stop,
        Err(e) => {
            crate::stderr_line!("iopulse run: error: cannot install signal handlers: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    let mut overrides = overrides(matches, "in the flags after the job file");
    overrides.targets = args.target;
    let loaded = match super::from_fio::load_job_file(
        &args.file,
        &overrides,
        args.ignore_unsupported,
        args.directory.as_deref(),
    ) {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::stderr_line!("iopulse run: error: {e}");
            return exit_code::USAGE;
        }
    };
    if let Some(signal) = signal_code(&stop) {
        crate::stderr_line!("iopulse run: interrupted while reading the job file: nothing was touched");
        return signal;
    }
    if !loaded.plan.output.quiet {
        for n in &loaded.notes {
            crate::stderr_line!("iopulse: note: {n}");
        }
    }
    for w in &loaded.warnings {
        crate::stderr_line!("⚠ {w}");
    }
    let mixed = super::metadata::is_mixed(&loaded.plan);
    if mixed {
        // Metadata jobs beside block jobs: what the mixed form cannot honour yet is
        // refused before anything is touched.
        if let Some(message) = super::metadata::refuse_mixed(&loaded.plan) {
            crate::stderr_line!("iopulse run: error: {message}");
            return exit_code::USAGE;
        }
    } else if super::metadata::is_metadata(&loaded.plan) {
        return super::metadata::run_plan(&loaded.plan, &stop);
    }
    let screen = super::live_screen(&loaded.plan.output);
    let (code, doc, metadata_jobs) = run_plan_with_trees(&loaded.plan, &stop, false);
    // The full screen is given back before anything is reported.
    drop(screen);
    let Some(mut doc) = doc else {
        // No block job ran (they failed before the window): the metadata jobs' reports.
        let output = report::OutputOptions { json_file: None, ..loaded.plan.output.clone() };
        for m in &metadata_jobs {
            for f in report::metadata::emit(&m.result, &output) {
                crate::stderr_line!("iopulse: error: {f}");
            }
        }
        return code;
    };
    doc.metadata_jobs = metadata_jobs;
    doc.combined.outcome.warnings.extend(loaded.warnings);
    // The translation's notes (fio options without effect, approximations) stay with the result.
    doc.combined.outcome.notes.extend(loaded.notes);
    let mut failures = write_iologs(&loaded.plan, &mut doc);
    failures.extend(report::jobs::emit(&doc, &loaded.plan.output));
    if mixed {
        // Each metadata job's CSV, time series and charts: files of its own, named from
        // the list the output guard checked.
        let kinds = loaded.plan.job_kinds();
        let names = report::mixed_jobs::MixedNames::new(&kinds);
        failures.extend(report::mixed_jobs::emit(&doc, &loaded.plan.output, &names));
    }
    for f in &failures {
        crate::stderr_line!("iopulse: error: {f}");
    }
    if !failures.is_empty() && code == exit_code::SUCCESS { exit_code::OUTPUT_FAILED } else { code }
}

/// Every job of `plan`, phase after phase: the exit code, and the result document of the
/// jobs that ran (none if none ran). Errors are said on stderr; the report is the caller's.
/// `stop` is the signals' stop word (`signals::install`); `steps`: a profile's plan (its
/// jobs are steps, `phases::run_all`).
pub(crate) fn run_plan(
    plan: &Plan,
    stop: &Arc<AtomicUsize>,
    steps: bool,
) -> (i32, Option<crate::figures::result::jobs::JobsResult>) {
    let (code, doc, _) = run_plan_with_trees(plan, stop, steps);
    (code, doc)
}

/// As `run_plan`, with the results of the jobs with `files` (metadata trees) that ran
/// beside the block jobs, in file order.
fn run_plan_with_trees(
    plan: &Plan,
    stop: &Arc<AtomicUsize>,
    steps: bool,
) -> (i32, Option<crate::figures::result::jobs::JobsResult>, Vec<crate::figures::result::jobs::MetaJobResult>) {
    use crate::figures::result::jobs::{JobResult, MetaJobResult};
    use crate::front::jobs::{combined, phases};
    // The whole plan, every phase and output, before anything is touched.
    if let Err(e) = plan::check(plan, stop) {
        crate::stderr_line!("iopulse run: error: {e}");
        return (signal_code(stop).unwrap_or(e.exit_code()), None, Vec::new());
    }
    if let Some(code) = super::dry_run_exit() {
        return (code, None, Vec::new());
    }
    let outcomes = phases::run_all(plan, plan.output.quiet, stop, steps);
    // The first job that failed on its own gives the exit code; those stopped because of it
    // are said in one line after it.
    let mut code = exit_code::SUCCESS;
    for o in &outcomes {
        if let Some(error) = &o.error
            && (!o.stopped_by_others || o.result.is_some() || o.metadata.is_some())
        {
            crate::stderr_line!("iopulse run: error: job [{}]: {error}", o.name);
        }
        if code == exit_code::SUCCESS && !o.stopped_by_others {
            code = o.exit_code;
        }
    }
    let not_run: Vec<String> = outcomes
        .iter()
        .filter(|o| o.result.is_none() && o.metadata.is_none() && o.stopped_by_others)
        .map(|o| format!("[{}]", o.name))
        .collect();
    if !not_run.is_empty() && code != exit_code::USAGE {
        crate::stderr_line!("iopulse run: not run: {}", not_run.join(", "));
    }
    // Interrupted: a job that failed, or one that never ran, makes the signal's code.
    if let Some(signal) = signal_code(stop)
        && (code != exit_code::SUCCESS || outcomes.iter().any(|o| o.result.is_none() && o.metadata.is_none()))
    {
        code = signal;
    }
    let mut ran: Vec<JobResult> = Vec::new();
    let mut trees: Vec<MetaJobResult> = Vec::new();
    for o in outcomes {
        if let Some(result) = o.result {
            ran.push(JobResult { job: o.name, phase: o.phase, result });
        } else if let Some(result) = o.metadata {
            trees.push(MetaJobResult { job: o.name, phase: o.phase, result: *result });
        }
    }
    (code, combined::build(&plan.source, ran), trees)
}

/// Each job's `--write-iolog` file (`plan::Job::iolog`), of the jobs that ran: the I/Os it
/// issued as a fio iolog v3. The logs leave the results once written. A failure is
/// returned, one line each naming the file and the job.
pub(crate) fn write_iologs(plan: &Plan, doc: &mut crate::figures::result::jobs::JobsResult) -> Vec<String> {
    let files: std::collections::HashMap<&str, &plan::IologFile> =
        plan.jobs().filter_map(|j| j.iolog.as_ref().map(|log| (j.name.as_str(), log))).collect();
    let mut failures = Vec::new();
    for job in &mut doc.jobs {
        let Some(file) = files.get(job.job.as_str()) else { continue };
        let text = job.result.schedule.iolog.take().map(|log| report::iolog::render(&log)).unwrap_or_default();
        if let Err(e) = crate::storage::ledger::output::write_whole(&file.path, text.as_bytes()) {
            failures.push(format!("write --write-iolog {} (job [{}]): {e}", file.path.display(), job.job));
        }
    }
    failures
}
