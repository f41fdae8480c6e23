//! `iopulse sweep`: the benchmark's flags with comma lists span a grid (figures/sweep/grid.rs);
//! every point runs `--repeat` times, the repetitions interleaved across points (point 1,
//! 2, ... then again), so drift over time hits every point alike. Each run goes to
//! `--csv` as a row as soon as it ends, and to the sweep's journal, which `--resume` reads
//! to skip the runs already done. At the end (or on SIGINT, after aborting the current run,
//! whose partial figures are left out): the table, `--json`, and the charts of `--plot`.
//!
//! Its flags are clap's: its own, the outputs, and every flag of the benchmark taking a
//! comma list (`cli::lists`); every point is planned and checked (`plan::sweep`) before the
//! first run. Also the pieces `iopulse search` shares (`Session`). Runs and writes; the
//! figures come from figures/sweep/summary.rs, the words from output/report/sweep.rs.

use super::json_text;
use crate::base::diagnostics::error::exit_code;
use crate::base::diagnostics::warnings::Diagnostics;
use crate::coordination::cluster::Cluster;
use crate::coordination::run::{self, start_line::StartLine};
use crate::figures::result::RunResult;
use crate::figures::sweep::document::{self, Best, PointEntry, RunEntry, SweepDocument};
use crate::figures::sweep::grid::Grid;
use crate::figures::sweep::journal::{self, Journal};
use crate::figures::sweep::summary::{self, Metric, PointSummary};
use crate::front::cli::IologArgs;
use crate::front::cli::lists::ManyRunsArgs;
use crate::output::report::{self, OutputFormat, OutputOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const SWEEP_EXAMPLES: &str = "\
Examples:
  iopulse sweep /data/t.dat --random --queue-depth 1,4,16,64 --block-size 4k,64k --threads 1,2,4
      24 points (every combination), one run each; a table of the points and the best by IOPS
  iopulse sweep /data/t.dat --random --queue-depth 1,8,32 --repeat 5 --csv s.csv --plot plots/
      each point 5 times, interleaved (1, 8, 32, 1, 8, 32, ...): a CSV row per run, and charts
      of IOPS and p99 against queue depth, the median drawn with the repetitions' range as a band
  iopulse sweep /data/t.dat --random --queue-depth 1,8,32 --repeat 5 --csv s.csv --resume
      after an interruption (Ctrl-C, a reboot): only the runs not yet in s.csv.journal run
  iopulse sweep --engine null --duration 1s --queue-depth 1,8 --output-format json > s.json
      JSON: `runs` (every run's whole result, in the order run) and `points` (a summary each)
  iopulse sweep /data/t.dat --random --queue-depth 1,8 --repeat 2 --write-iolog s.iolog
      each run's I/Os as a fio iolog of its own: s-point0-rep1.iolog, s-point1-rep1.iolog,
      s-point0-rep2.iolog, s-point1-rep2.iolog (N as in the JSON's `points`, from 0)

Any flag of `iopulse --help` takes a comma list (except --cpu-cores and --numa-zones, whose
values are lists); flags without a list apply to every point. Every point is checked
before the first run: a bad value is an error naming the flag and the point (exit 2).
Each point sums up its runs: mean, median, standard deviation, min and max of IOPS,
bandwidth, p50 and p99 latency and CPU time per I/O. SIGINT aborts the current run (its
figures are left out), writes the outputs with the runs done, and exits 130.
Exit codes: 0 every run succeeded, 1 a run failed, 2 usage, 130/143/129 interrupted.";

/// Run the benchmark over a grid of flag values (comma lists), each point --repeat times:
/// the sweep's own flags, then the benchmark's targets, flags (any may take a comma list,
/// `cli::lists`) and outputs.
#[derive(Debug, clap::Args)]
#[command(after_help = SWEEP_EXAMPLES)]
pub struct SweepArgs {
    /// Runs of each point, interleaved.
    ///
    /// Runs of each point, interleaved across the points. E.g. `--repeat 3`
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Sweep")]
    pub repeat: u32,

    /// Skip the runs an interrupted sweep already did.
    ///
    /// Skip the runs an interrupted sweep with the same flags already did (read from the
    /// journal beside --csv or --json: FILE.journal). E.g. `--csv s.csv --resume`
    #[arg(long, help_heading = "Sweep")]
    pub resume: bool,

    /// The figure that picks the best point.
    ///
    /// The figure that picks the best point (its median over the runs). E.g. `--best-by p99`
    #[arg(long, value_enum, value_name = "METRIC", default_value_t = Metric::Iops, help_heading = "Sweep")]
    pub best_by: Metric,

    #[command(flatten)]
    pub runs: ManyRunsArgs,

    /// `--write-iolog FILE`: a log per run, FILE-pointN-repR (`plan::iologs`).
    #[command(flatten)]
    pub iolog: IologArgs,
}

/// Most runs a sweep may plan: points × --repeat.
pub const MOST_RUNS: u64 = 1_000_000;

fn usage(message: impl std::fmt::Display) -> i32 {
    crate::stderr_line!("iopulse sweep: error: {message}");
    exit_code::USAGE
}

pub fn sweep(args: SweepArgs) -> i32 {
    if let Some((flag, why)) = args.runs.refused {
        return usage(format!("{flag} with `iopulse sweep`: {why}"));
    }
    let mut grid = match crate::front::plan::sweep::grid(&args.runs.targets, &args.runs.flags) {
        Ok(g) => g,
        Err(e) => return usage(e),
    };
    let runs = grid.points.len() as u64 * u64::from(args.repeat);
    if runs > MOST_RUNS {
        return usage(format!(
            "{} points × --repeat {} make {runs} runs: at most {MOST_RUNS}; give fewer points or a smaller --repeat",
            grid.points.len(),
            args.repeat
        ));
    }
    if grid.points.len() == 1 {
        crate::stderr_line!(
            "⚠ iopulse sweep: no flag was given a comma list, so the sweep has one point ({} run(s) of it): give a list to sweep (e.g. --queue-depth 1,8,32), or keep --repeat alone to repeat one workload",
            args.repeat
        );
    }
    let output = args.runs.output.options(&Default::default());
    // `--write-iolog`: every point records; each run's log is a file of its own.
    let iolog = args.iolog.write_iolog.clone();
    if let Some(path) = &iolog {
        if let Err(e) = crate::front::plan::iologs::refuse_stream(path, "--write-iolog", "each run of a sweep") {
            return usage(e);
        }
        for p in &mut grid.points {
            p.spec.output.record_iolog = true;
        }
    }
    let log_of = |point: usize, repetition: u32| {
        iolog.as_deref().map(|path| crate::front::plan::iologs::per_sweep_run(path, point, repetition))
    };
    let Ok(stop) = crate::io::host::signals::install() else {
        crate::stderr_line!("iopulse sweep: error: cannot install signal handlers");
        return exit_code::RUN_FAILED;
    };
    // What a run would refuse (a target, a size, a limit), for every point, before the first.
    if let Err(code) = check_points(&grid, &stop) {
        return code;
    }
    // A stream (`--csv /dev/stdout`) has no journal: it is written, never read back.
    let journal_path = journal::path_beside(args.runs.output.csv.as_deref(), args.runs.output.json.as_deref());
    let axes: Vec<document::Axis> =
        grid.axes.iter().map(|a| document::Axis { flag: a.flag.clone(), values: a.values.clone() }).collect();
    let logs: Vec<PathBuf> =
        (1..=args.repeat).flat_map(|rep| (0..grid.points.len()).filter_map(move |p| log_of(p, rep))).collect();
    let specs: Vec<&crate::workload::spec::Spec> = grid.points.iter().map(|p| &p.spec).collect();
    if let Err(e) = check_outputs(&output, report::Writes::Sweep(&axes), &specs, &logs) {
        return usage(e);
    }
    if let Some(code) = super::dry_run_exit() {
        return code;
    }
    let point_keys: Vec<String> = grid.points.iter().map(|p| p.key.clone()).collect();
    let repeat = args.repeat;
    let planned_runs = grid.points.len() * repeat as usize;
    let planned = (1..=repeat).flat_map(|rep| (0..grid.points.len()).map(move |p| (p, rep)));
    // With --resume: the runs already done, from the journal.
    let done = match resumed_runs(&args, journal_path.as_deref(), &point_keys, repeat) {
        Ok(done) => done,
        Err(code) => return code,
    };
    let mut journal = match open_journal(journal_path.as_deref(), args.resume, &point_keys) {
        Ok(journal) => journal,
        Err(code) => return code,
    };
    let done_set: BTreeSet<(usize, u32)> = done.iter().map(|e| (e.point, e.repetition)).collect();
    let todo = planned.filter(|k| !done_set.contains(k));
    let mut session = Session::new(&output, planned_runs, Arc::clone(&stop));
    if args.resume && !args.runs.output.quiet {
        crate::stderr_line!(
            "iopulse sweep: resuming: {} of {planned_runs} runs done, {} to go",
            done.len(),
            planned_runs - done_set.len()
        );
    }
    session.start(done.len());
    // A run that failed before the interruption fails the resumed sweep too.
    let mut code = done.iter().map(|r| r.exit_code).find(|&c| c != exit_code::SUCCESS).unwrap_or(exit_code::SUCCESS);
    let mut runs = done;
    for (point, repetition) in todo {
        let p = &grid.points[point];
        let what = format!("{} · repetition {repetition}/{repeat}", p.label());
        match session.run(&p.spec, &what, Some(repetition), log_of(point, repetition).as_deref()) {
            Step::Done(result, run_code) => {
                if run_code != exit_code::SUCCESS && code == exit_code::SUCCESS {
                    code = run_code;
                }
                let entry = RunEntry { point, repetition, exit_code: run_code, result: *result };
                if let Some(j) = &mut journal {
                    journal_run(j, &mut session, &p.key, &entry);
                }
                runs.push(entry);
            }
            Step::Failed(message, run_code) => {
                crate::stderr_line!("iopulse sweep: error: {what}: {message}");
                code = run_code;
                break;
            }
            Step::Interrupted(signal_code) => {
                code = signal_code;
                break;
            }
        }
    }
    session.finish();
    let interrupted = session.interrupted();
    let doc = document(&grid, repeat, args.best_by, runs, interrupted);
    if let Some(warning) = best_across_sizes(&grid, &doc) {
        crate::stderr_line!("⚠ iopulse sweep: {warning}");
    }
    write_outputs(&mut session, &output, &grid, &doc);
    session.exit_code(code)
}

/// With `--resume`: the runs the interrupted sweep finished, from its journal beside the
/// `--csv` (or `--json`) file; none without. Err: the exit code of a refusal, said.
fn resumed_runs(
    args: &SweepArgs,
    journal_path: Option<&std::path::Path>,
    point_keys: &[String],
    repeat: u32,
) -> Result<Vec<RunEntry>, i32> {
    if !args.resume {
        return Ok(Vec::new());
    }
    let Some(path) = journal_path else {
        return Err(usage(
            "--resume needs the --csv FILE (or --json FILE) of the interrupted sweep: its journal is FILE.journal",
        ));
    };
    match journal::resume(path, point_keys, repeat) {
        Ok(resumed) => {
            if resumed.other_runs > 0 && !args.runs.output.quiet {
                crate::stderr_line!(
                    "iopulse sweep: note: {} holds {} run(s) of other sweeps sharing it: left out",
                    path.display(),
                    resumed.other_runs
                );
            }
            Ok(resumed
                .runs
                .into_iter()
                .map(|(point, e)| RunEntry {
                    point,
                    repetition: e.repetition,
                    exit_code: e.exit_code,
                    result: e.result,
                })
                .collect())
        }
        Err(e) => Err(usage(e)),
    }
}

/// A finished run's line in the journal; a failure to append it is the session's (a
/// `--resume` would redo the run).
fn journal_run(journal: &mut Journal, session: &mut Session, point_key: &str, entry: &RunEntry) {
    let line = journal::Entry {
        point_key: point_key.to_string(),
        repetition: entry.repetition,
        exit_code: entry.exit_code,
        result: entry.result.clone(),
    };
    if let Err(e) = journal.append(&line) {
        session.output_failure(format!("write the journal: {e} (--resume would redo this run)"));
    }
}

/// The sweep's journal, a line per finished run (none for a stream): made anew, or
/// appended to with `--resume`. Err: the exit code of a failure to open it, said.
fn open_journal(path: Option<&std::path::Path>, resume: bool, point_keys: &[String]) -> Result<Option<Journal>, i32> {
    let Some(path) = path else { return Ok(None) };
    match Journal::open(path, !resume, &journal::grid_id(point_keys)) {
        Ok(j) => Ok(Some(j)),
        Err(e) => {
            crate::stderr_line!("iopulse sweep: error: open the journal {}: {e}", path.display());
            Err(exit_code::RUN_FAILED)
        }
    }
}

/// What a run would refuse (a target, a size, a limit), for every point, before the
/// first runs. Err: the exit code (a refusal, said, or the signal's).
fn check_points(grid: &Grid, stop: &AtomicUsize) -> Result<(), i32> {
    for p in &grid.points {
        if stop.load(Ordering::Relaxed) != 0 {
            return Err(stop.load(Ordering::Relaxed) as i32);
        }
        if let Err(e) = run::check(&p.spec) {
            crate::stderr_line!("iopulse sweep: error: point {}: {e}", p.label());
            return Err(e.exit_code());
        }
    }
    Ok(())
}

/// The sweep's document on stdout in the form asked for, its `--json` file and its charts;
/// a failure to write one is the session's, said at the end.
fn write_outputs(session: &mut Session, output: &OutputOptions, grid: &Grid, doc: &SweepDocument) {
    let text = match output.format {
        OutputFormat::Json => json_text(doc),
        OutputFormat::Junit => {
            let scopes: Vec<(String, &crate::figures::result::RunResult)> = doc
                .runs
                .iter()
                .map(|r| {
                    let point = grid.points.get(r.point).map_or_else(String::new, |p| p.label());
                    (format!("point {point} repetition {}", r.repetition), &r.result)
                })
                .collect();
            report::ci_render(&scopes, OutputFormat::Junit)
        }
        _ => report::sweep::sweep_text(doc),
    };
    session.write_stdout(&text);
    if let Some(path) = &output.json_file
        && let Err(e) = crate::storage::ledger::output::write_whole(path, json_text(doc).as_bytes())
    {
        session.output_failure(format!("write --json {}: {e}", path.display()));
    }
    if let Some(dir) = &output.plot_dir {
        for metric in report::plot::SWEEP_CHART_METRICS {
            match plot_sweep(doc, metric, dir) {
                Ok(Some(path)) if !output.quiet => crate::stderr_line!("iopulse sweep: chart {}", path.display()),
                Ok(_) => {}
                Err(e) => session.output_failure(e),
            }
        }
    }
}

/// When the best point is chosen by a count of I/Os (IOPS, CPU per I/O) or a latency
/// among points of different block sizes, it says so: 4k and 64k I/Os are not rivals.
fn best_across_sizes(grid: &Grid, doc: &SweepDocument) -> Option<String> {
    let best = doc.best.as_ref()?;
    if best.by == Metric::Bw {
        return None;
    }
    let mut sizes: Vec<u64> = grid.points.iter().map(|p| p.spec.shape.block_size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    (sizes.len() > 1).then(|| {
        let shown: Vec<String> = sizes.iter().map(|s| report::units::bytes(*s)).collect();
        format!(
            "the points ranked for `best` differ in block size ({}): their {} are not rivals; rank by --best-by bw, or read the best of each size from the table",
            shown.join(", "),
            match best.by {
                Metric::Iops => "IOPS",
                Metric::CpuPerIo => "CPU times per I/O",
                _ => "latencies",
            }
        )
    })
}

/// The sweep's document: its runs, a summary per point, the best point.
fn document(grid: &Grid, repeat: u32, best_by: Metric, runs: Vec<RunEntry>, interrupted: bool) -> SweepDocument {
    let params = |i: usize| -> BTreeMap<String, String> { grid.points[i].params.iter().cloned().collect() };
    let summaries: Vec<PointSummary> = (0..grid.points.len())
        .map(|i| PointSummary::of(runs.iter().filter(|r| r.point == i).map(|r| &r.result)))
        .collect();
    let best = summary::best(&summaries, best_by).map(|i| Best {
        by: best_by,
        point: i,
        params: params(i),
        median: summaries[i].spread(best_by).median,
    });
    SweepDocument {
        kind: "sweep".into(),
        iopulse_version: env!("CARGO_PKG_VERSION").into(),
        axes: grid.axes.iter().map(|a| document::Axis { flag: a.flag.clone(), values: a.values.clone() }).collect(),
        repeat,
        planned_runs: grid.points.len() * repeat as usize,
        runs,
        points: summaries
            .into_iter()
            .enumerate()
            .map(|(index, summary)| PointEntry { index, params: params(index), summary })
            .collect(),
        best,
        interrupted,
    }
}

/// A chart of `metric` against the first axis, a line per value of the others.
fn plot_sweep(doc: &SweepDocument, metric: Metric, dir: &std::path::Path) -> Result<Option<PathBuf>, String> {
    let Some(sweep) = document::chart_data(doc, metric) else { return Ok(None) };
    std::fs::create_dir_all(dir).map_err(|e| format!("--plot {}: {e}", dir.display()))?;
    let path = dir.join(report::plot::sweep_chart_name(metric, &sweep.x));
    report::plot::sweep_chart(&sweep, &path).map_err(|e| e.to_string())?;
    Ok(Some(path))
}

/// The guard over the whole ledger (`report::check_planned`): every run's targets, its
/// `--verify-state` record (one path given to every run is one record) and `--write-iolog`
/// file, the journal and the charts, before anything runs.
pub(crate) fn check_outputs(
    output: &OutputOptions,
    writes: report::Writes<'_>,
    specs: &[&crate::workload::spec::Spec],
    logs: &[PathBuf],
) -> Result<(), crate::base::diagnostics::error::UsageError> {
    let mut ledger = crate::storage::ledger::Ledger::new();
    for spec in specs {
        ledger.add_run(spec, &spec.targets, None, "");
    }
    let mut records: Vec<&PathBuf> = specs.iter().filter_map(|s| s.data.verify_state.as_ref()).collect();
    records.sort();
    records.dedup();
    for record in records {
        ledger.touch("--verify-state", record, crate::storage::ledger::Action::Record);
    }
    for log in logs {
        ledger.touch("--write-iolog", log, crate::storage::ledger::Action::Replace);
    }
    report::check_planned(output, writes, ledger)
}

/// What became of one run.
pub(crate) enum Step {
    Done(Box<RunResult>, i32),
    /// It could not run (a refused target, a failed set-up): the message and exit code.
    Failed(String, i32),
    /// A signal stopped it: its figures are left out. The signal's exit code.
    Interrupted(i32),
}

/// The runs of a sweep or a search one after another: the stop word, the progress (a bar
/// on a terminal, else a line per run), `--csv` rows, warnings said once.
pub(crate) struct Session {
    stop: Arc<AtomicUsize>,
    csv: Option<PathBuf>,
    quiet: bool,
    bar: Option<indicatif::ProgressBar>,
    planned: usize,
    done: usize,
    ran_here: usize,
    started: Instant,
    warned: BTreeSet<String>,
    output_failures: Vec<String>,
    /// `--live`: the full screen over the runs, given back by `finish`.
    screen: Option<super::LiveScreen>,
}

impl Session {
    pub(crate) fn new(output: &OutputOptions, planned: usize, stop: Arc<AtomicUsize>) -> Session {
        use std::io::IsTerminal;
        // Taken first: with the screen up, stderr is its and the bar stays away.
        let screen = super::live_screen(output);
        let on_terminal = std::io::stderr().is_terminal() && std::env::var("CI").map_or(true, |v| v != "true");
        let bar = (!output.quiet && on_terminal).then(|| {
            let bar = indicatif::ProgressBar::new(planned as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs · {eta} left · {wide_msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Session {
            stop,
            csv: output.csv_file.clone(),
            quiet: output.quiet,
            bar,
            planned,
            done: 0,
            ran_here: 0,
            started: Instant::now(),
            warned: BTreeSet::new(),
            output_failures: Vec::new(),
            screen,
        }
    }

    /// `done` runs were done before this process (--resume).
    pub(crate) fn start(&mut self, done: usize) {
        self.done = done;
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            bar.reset_eta();
        }
        self.started = Instant::now();
    }

    /// Set the number of runs planned (a search learns it as it goes).
    pub(crate) fn set_planned(&mut self, planned: usize) {
        self.planned = planned;
        if let Some(bar) = &self.bar {
            bar.set_length(planned as u64);
        }
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }

    /// Runs `spec` (unless a signal came first); its row goes to --csv, with its
    /// `repetition` of the point (a sweep's; none for a search), and its I/Os to `iolog`
    /// (`--write-iolog`'s file of this run; `spec.record_iolog` is set with it).
    pub(crate) fn run(
        &mut self,
        spec: &crate::workload::spec::Spec,
        what: &str,
        repetition: Option<u32>,
        iolog: Option<&std::path::Path>,
    ) -> Step {
        let signal = self.stop.load(Ordering::Relaxed);
        if signal != 0 {
            return Step::Interrupted(signal as i32);
        }
        if let Some(bar) = &self.bar {
            bar.set_message(what.to_string());
        }
        let cluster = Cluster::alone();
        let start = StartLine::new(&cluster, None);
        // Each run's warnings are recorded in its result; said here once per sweep.
        // A live view names the point, and the time the runs left take at this pace.
        let left = self.planned.saturating_sub(self.done);
        let left_words = (self.ran_here > 0 && left > 0).then(|| {
            let each_ns = self.started.elapsed().as_nanos() as f64 / self.ran_here as f64;
            format!(" · {} left", crate::base::units::display::seconds_ns((each_ns * left as f64) as u64))
        });
        let label = format!("{} of {}: {what}{}", self.done + 1, self.planned, left_words.unwrap_or_default());
        let diag = Diagnostics::silent().labelled(label);
        let outcome = run::run(spec, &diag, Arc::clone(&self.stop), &start);
        let signal = self.stop.load(Ordering::Relaxed);
        match outcome {
            Ok(o) if signal != 0 || o.result.window.interrupted => {
                Step::Interrupted(if signal != 0 { signal as i32 } else { exit_code::INTERRUPTED })
            }
            Ok(mut o) => {
                // Written as the run ends, as its --csv row is; the log leaves the result
                // (which the sweep keeps) once written.
                if let Some(path) = iolog {
                    let text =
                        o.result.schedule.iolog.take().map(|log| report::iolog::render(&log)).unwrap_or_default();
                    if let Err(e) = crate::storage::ledger::output::write_whole(path, text.as_bytes()) {
                        self.output_failure(format!("write --write-iolog {}: {e}", path.display()));
                    }
                }
                // Said once per kind: the same warning with other figures is not new.
                let notes =
                    o.result.outcome.notes.iter().filter(|_| !self.quiet).map(|n| format!("iopulse: note: {n}"));
                for line in o.result.outcome.warnings.iter().map(|w| format!("⚠ {w}")).chain(notes).collect::<Vec<_>>()
                {
                    if self.warned.insert(line.chars().filter(|c| !c.is_ascii_digit()).collect()) {
                        self.say(&line);
                    }
                }
                // --expect: each run's outcomes, a line each (the document holds them too).
                for e in &o.result.outcome.expectations {
                    let figure = e.value.map_or_else(
                        || "none (the run has no such figure)".to_string(),
                        |v| report::compare::value(e.unit, v),
                    );
                    let verdict = if e.passed { "pass" } else { "FAIL" };
                    self.say(&format!("{what}: expect {verdict} {}: {} is {figure}", e.expectation, e.figure));
                }
                if let Some(path) = &self.csv
                    && let Err(e) = report::csv::append_run(path, &o.result, None, repetition)
                {
                    self.output_failure(format!("write --csv {}: {e}", path.display()));
                }
                self.done += 1;
                self.ran_here += 1;
                let left = self.planned.saturating_sub(self.done);
                let left_ns = (self.ran_here > 0 && left > 0)
                    .then(|| (self.started.elapsed().as_nanos() as f64 / self.ran_here as f64 * left as f64) as u64);
                match &self.bar {
                    Some(bar) => bar.set_position(self.done as u64),
                    None if !self.quiet => crate::stderr_line!(
                        "{}",
                        report::sweep::run_line(
                            self.done,
                            self.planned,
                            what,
                            o.result.figures.total.iops,
                            o.result.figures.total.latency_ns.p99,
                            left_ns
                        )
                    ),
                    None => {}
                }
                Step::Done(Box::new(o.result), o.exit_code)
            }
            Err(_) if signal != 0 => Step::Interrupted(signal as i32),
            Err(e) => Step::Failed(e.to_string(), e.exit_code()),
        }
    }

    fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| crate::stderr_line!("{line}")),
            None => crate::stderr_line!("{line}"),
        }
    }

    /// The progress bar goes; an interruption is said.
    pub(crate) fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.screen = None;
        if self.interrupted() {
            crate::stderr_line!(
                "iopulse: interrupted: {} of {} runs done (the run under way is left out)",
                self.done,
                self.planned
            );
        }
    }

    pub(crate) fn output_failure(&mut self, message: String) {
        self.output_failures.push(message);
    }

    pub(crate) fn write_stdout(&mut self, text: &str) {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            self.output_failures.push(format!("write the report to stdout: {e}"));
        }
    }

    /// The exit code: the runs' own, or 4 when only an output failed.
    pub(crate) fn exit_code(&self, runs_code: i32) -> i32 {
        for f in &self.output_failures {
            crate::stderr_line!("iopulse: error: {f}");
        }
        if !self.output_failures.is_empty() && runs_code == exit_code::SUCCESS {
            exit_code::OUTPUT_FAILED
        } else {
            runs_code
        }
    }
}
