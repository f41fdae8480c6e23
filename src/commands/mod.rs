//! What the `iopulse` command does: the command line as one clap command (`Cli`), the
//! benchmark itself (`benchmark.rs`: `iopulse [TARGET...] [flags]`) and one file per
//! subcommand (`Command`): `run` (a job file), `sweep` and `search` (many runs),
//! `replay` (a trace), `from-fio`, `profiles`, `merge`, `compare`, `plot`, `report`, `verify` (after a crash),
//! `completions` and `man`. A subcommand is the
//! first argument exactly (a target file of that name is written `./merge`).
//!
//! Each command parses through clap, plans (`front/plan/`), runs and reports, and returns its
//! exit code.

pub mod benchmark;
pub mod compare;
pub mod completions;
pub mod from_fio;
pub mod help;
pub mod man;
pub mod merge;
pub mod metadata;
pub mod plot;
pub mod profile;
pub mod replay;
pub mod report;
pub mod run;
pub mod search;
pub mod sweep;
pub mod verify;

use crate::base::diagnostics::error::exit_code;
use crate::coordination::cluster::launcher_rank;
use crate::front::cli::BenchArgs;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::io::Write;

const EXAMPLES: &str = include_str!("examples.txt");
/// What `-h` shows after the flags: a few examples (`--help` shows `EXAMPLES`).
const EXAMPLES_SHORT: &str = include_str!("examples_short.txt");
/// `--version`: the version and the optional features this binary was built with, so that
/// a bug report, or a test of the binary under test, knows what it is.
const VERSION: &str = match (cfg!(feature = "hwloc"), cfg!(feature = "mpi")) {
    (false, false) => env!("CARGO_PKG_VERSION"),
    (true, false) => concat!(env!("CARGO_PKG_VERSION"), " (features: hwloc)"),
    (false, true) => concat!(env!("CARGO_PKG_VERSION"), " (features: mpi)"),
    (true, true) => concat!(env!("CARGO_PKG_VERSION"), " (features: hwloc, mpi)"),
};

/// The whole command line: the benchmark's flags, or a subcommand.
#[derive(Debug, Parser)]
#[command(
    name = "iopulse",
    version = VERSION,
    about = "A Linux storage benchmark: true O_DIRECT, exact HDR latency percentiles, honest coverage.",
    after_help = EXAMPLES_SHORT,
    after_long_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub bench: BenchArgs,

    /// Print what the command would touch, touch nothing.
    ///
    /// Plan and judge everything, touch nothing: print each path the command would create,
    /// write, rename onto or remove, and each file it reads, with what would happen to it;
    /// exit 0, or 2 with the refusal. E.g. `iopulse run jobs.toml --dry-run`
    #[arg(long, global = true, help_heading = "Outputs")]
    pub dry_run: bool,
}

/// `--dry-run` was given: commands stop once their ledger is judged.
static DRY_RUN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this command only plans and prints its ledger (`--dry-run`).
pub(crate) fn is_dry_run() -> bool {
    DRY_RUN.load(std::sync::atomic::Ordering::Relaxed)
}

/// Where a command has judged its whole ledger and touched nothing: with `--dry-run`, the
/// ledger is printed and the command ends (`Some(exit code)`); else it goes on (`None`).
pub(crate) fn dry_run_exit() -> Option<i32> {
    is_dry_run().then(|| write_stdout(&crate::output::report::ledger::render(&crate::storage::ledger::judged::all())))
}

/// The subcommands: one file each in this folder. The first paragraph of each is its line
/// in `iopulse -h`; the whole, its `--help`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job file: jobs in one window, phases one after another.
    Run(Box<run::RunArgs>),
    /// Run a grid of flag values (comma lists), each point --repeat times.
    Sweep(sweep::SweepArgs),
    /// Find the highest load within a latency bound, or where it saturates.
    Search(search::SearchArgs),
    /// Replay a trace (fio iolog, blktrace) at its own times.
    ///
    /// Replay a trace (fio iolog v2/v3, blktrace) on a file or device at the trace's times;
    /// each I/O's lag beside the latencies.
    Replay(Box<replay::ReplayArgs>),
    /// Print the iopulse job file (TOML) equivalent to a fio job file.
    FromFio(from_fio::FromFioArgs),
    /// List the shipped profiles, or print one to copy and edit.
    Profiles(profile::ProfilesArgs),
    /// Combine the results of concurrent runs (hosts, processes) into one.
    Merge(merge::MergeArgs),
    /// Compare two sets of results: each figure's change and verdict.
    ///
    /// Compare two sets of results: each figure's change, confidence interval and verdict.
    Compare(compare::CompareArgs),
    /// Draw SVG charts of a JSON result, or of a sweep's --csv table.
    Plot(plot::PlotArgs),
    /// Write one self-contained HTML page of results.
    ///
    /// Write one self-contained HTML page of results: figures, tables and charts.
    Report(report::ReportArgs),
    /// After a crash: judge targets against their durable record (exit 3: lost).
    ///
    /// After a power cut or a crash: check a target against the durable record of the run
    /// that wrote it (`--verify-state`): flushed blocks lost, torn or corrupt exit 3.
    Verify(verify::VerifyArgs),
    /// Print shell completions on stdout.
    Completions(completions::CompletionsArgs),
    /// Print the man page, or write every page into a directory.
    Man(man::ManArgs),
    /// Print the long help of iopulse or a subcommand, or a topic (iopulse help topics).
    Help(help::HelpArgs),
}

impl Command {
    /// Runs the subcommand; `matches` are its own (for the flags given with a job file).
    fn execute(self, matches: &clap::ArgMatches) -> i32 {
        if is_dry_run()
            && let Some(reads) = self.reads_only()
        {
            let mut ledger = crate::storage::ledger::Ledger::new();
            for (what, path) in reads {
                ledger.read(what, path);
            }
            return match ledger.judge() {
                Ok(()) => dry_run_exit().unwrap_or(exit_code::SUCCESS),
                Err(e) => usage(Some(self.name()), &e.message),
            };
        }
        match self {
            Command::Run(args) => run::run_file(*args, matches),
            Command::Sweep(args) => sweep::sweep(args),
            Command::Search(args) => search::search(args),
            Command::Replay(args) => replay::replay(*args),
            Command::FromFio(args) => from_fio::from_fio(args, matches),
            Command::Profiles(args) => profile::profiles(args),
            Command::Merge(args) => merge::merge(args),
            Command::Compare(args) => compare::compare(args),
            Command::Plot(args) => plot::plot(args),
            Command::Report(args) => report::report(args),
            Command::Verify(args) => verify::verify(args),
            Command::Completions(args) => completions::completions(args),
            Command::Man(args) => man::man(args),
            Command::Help(args) => help::help(args),
        }
    }
}

impl Command {
    /// The files a subcommand that writes nothing but its report reads, each with what it
    /// is (`--dry-run` lists them); `None` for one that writes files (it judges and prints
    /// its own ledger).
    fn reads_only(&self) -> Option<Vec<(&'static str, std::path::PathBuf)>> {
        let files =
            |what: &'static str, paths: &[std::path::PathBuf]| paths.iter().map(|p| (what, p.clone())).collect();
        match self {
            Command::Merge(a) => Some(files("a result to merge", &a.results)),
            Command::Compare(a) => {
                let base: Vec<_> = a.base_path.iter().chain(&a.base).cloned().collect();
                let new: Vec<_> = a.new_path.iter().chain(&a.new).cloned().collect();
                let mut reads: Vec<_> = files("a result of the base side", &base);
                reads.extend(files("a result of the new side", &new));
                Some(reads)
            }
            Command::Verify(a) => {
                let mut reads = vec![("the durable record", a.state.clone())];
                reads.extend(files("a target judged against the record", &a.targets));
                Some(reads)
            }
            Command::FromFio(a) => Some(vec![("the fio job file", a.file.clone())]),
            Command::Profiles(_) | Command::Completions(_) | Command::Help(_) => Some(Vec::new()),
            Command::Man(a) if a.dir.is_none() => Some(Vec::new()),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::Sweep(_) => "sweep",
            Command::Search(_) => "search",
            Command::Replay(_) => "replay",
            Command::FromFio(_) => "from-fio",
            Command::Profiles(_) => "profiles",
            Command::Merge(_) => "merge",
            Command::Compare(_) => "compare",
            Command::Plot(_) => "plot",
            Command::Report(_) => "report",
            Command::Verify(_) => "verify",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
            Command::Help(_) => "help",
        }
    }
}

/// The clap command of the whole command line, as it parses: fio's flag names answered
/// (`fio::flag_names`), `--profile`'s help listing every profile. Completions and the man
/// pages are made from it too.
pub fn command() -> clap::Command {
    let with_fio_names = |c: clap::Command| crate::front::fio::flag_names::augment(c);
    // A flag given again overrides the earlier one (`iopulse run FILE --duration 2s` after
    // an alias that gave one), as in most tools.
    let runs = |c: clap::Command| with_fio_names(c).args_override_self(true);
    Cli::command()
        .disable_help_subcommand(true)
        .mut_arg("profile", |a| {
            a.help("Run a shipped profile (`iopulse profiles` lists them)").long_help(profile::profile_help())
        })
        .mut_subcommand("run", runs)
        .mut_subcommand("sweep", runs)
        .mut_subcommand("search", runs)
        .mut_subcommand("replay", replay::help_of_shared_flags)
        .args_override_self(true)
        .pipe(with_fio_names)
        .pipe(short_help_at_a_glance)
}

/// Flags for the finer points of a workload: listed by `--help` (and the man pages), left
/// out of `-h` so that it reads at a glance.
const FINER_POINTS: &[&str] = &[
    "block_align",
    "sequential_overlap",
    "random_percent",
    "zipf_theta",
    "pareto_h",
    "gaussian_stddev",
    "gaussian_center",
    "no_scramble",
    "strict_direct",
    "submit_batch",
    "completion_wait",
    "poll_completions",
    "no_register",
    "sqpoll_cpu",
    "mmap_populate",
    "no_invalidate",
    "fsync_on_close",
    "end_fsync",
    "think_mode",
    "think_every",
    "think_adaptive_percent",
    "verify_max_reports",
    "verify_state_every",
    "steady_state_window",
    "cpu_policy",
    "io_timeout",
    "dirs_per_dir",
    "depth",
    "file_size_dist",
    "keep_tree",
    "out",
];

/// `command` with the flags of `FINER_POINTS` left out of its `-h`, and of its subcommands'.
fn short_help_at_a_glance(command: clap::Command) -> clap::Command {
    let ids: Vec<String> = command
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| FINER_POINTS.contains(&id.as_str()))
        .collect();
    let names: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_string()).collect();
    let command = ids.into_iter().fold(command, |c, id| c.mut_arg(id, |a| a.hide_short_help(true)));
    names.into_iter().fold(command, |c, name| c.mut_subcommand(name, short_help_at_a_glance))
}

/// `f(self)`, to chain a function into a builder.
trait Pipe: Sized {
    fn pipe(self, f: impl FnOnce(Self) -> Self) -> Self {
        f(self)
    }
}

impl Pipe for clap::Command {}

/// One malloc arena for the process: for `main`, before any thread exists.
pub use crate::base::sys::process::one_malloc_arena;

/// `iopulse ARGS...`: parse, dispatch, the exit code.
pub fn main(argv: Vec<OsString>) -> i32 {
    let matches = match command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return clap_exit(e),
    };
    let (name, sub) = match matches.subcommand() {
        Some((name, sub)) => (Some(name), sub),
        None => (None, &matches),
    };
    if let Some(refusal) = crate::front::fio::flag_names::refusal(sub) {
        return usage(name, &refusal);
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    DRY_RUN.store(cli.dry_run, std::sync::atomic::Ordering::Relaxed);
    // A run shows itself on the live line while it goes (where its diagnostics show progress).
    crate::io::stats::live::register(&crate::output::report::live_line::LiveLines);
    match cli.command {
        Some(command) => command.execute(sub),
        None => {
            if let Some(message) = cli.bench.targets.first().and_then(|t| t.to_str()).and_then(mistyped_subcommand) {
                return usage(None, &message);
            }
            benchmark::main(cli.bench, &matches)
        }
    }
}

/// `--live`: the full screen for the command's runs while the returned value lives; where
/// it cannot be drawn, a one-line note says why and the live line shows the runs.
pub(crate) fn live_screen(output: &crate::output::report::OutputOptions) -> Option<LiveScreen> {
    if !output.live {
        return None;
    }
    let title: Vec<String> = std::env::args().skip(1).collect();
    match crate::output::report::live_screen::start(title.join(" ")) {
        Ok(screen) => Some(LiveScreen { _installed: crate::io::stats::live::install(screen.views()), _screen: screen }),
        Err(why) => {
            crate::stderr_line!("iopulse: note: {why}");
            None
        }
    }
}

/// `--live`'s screen, its views installed for the runs: dropped, the views go first, then
/// the terminal and stderr are given back.
pub(crate) struct LiveScreen {
    _installed: crate::io::stats::live::Installed,
    _screen: crate::output::report::live_screen::Screen,
}

/// A usage error of `iopulse` or of its subcommand `name`: one line, exit 2.
fn usage(name: Option<&str>, message: &str) -> i32 {
    if speaks_for_the_job() {
        match name {
            Some(name) => crate::stderr_line!("iopulse {name}: error: {message}"),
            None => crate::stderr_line!("iopulse: error: {message}"),
        }
    }
    exit_code::USAGE
}

/// A first argument that looks like a mistyped subcommand, with what to write instead.
/// Only a bare word that is not an existing path counts (`./merge` or `data.dat` never do).
fn mistyped_subcommand(first: &str) -> Option<String> {
    if first.starts_with('-') || first.contains(['/', '.']) || std::path::Path::new(first).exists() {
        return None;
    }
    let names: Vec<String> = Cli::command().get_subcommands().map(|c| c.get_name().to_string()).collect();
    // Short names are one edit from many words: allow one edit there, two in longer names.
    let near = names
        .iter()
        .find(|name| first.len() >= 3 && strsim::levenshtein(first, name) <= if name.len() <= 4 { 1 } else { 2 })?;
    Some(format!(
        "`{first}` is not a subcommand: did you mean `iopulse {near}`? (to use a file of that name as a target, write ./{first})"
    ))
}

/// Not a rank other than 0 of an MPI job (whose errors would repeat rank 0's).
fn speaks_for_the_job() -> bool {
    launcher_rank().is_none_or(|l| l.rank == 0)
}

/// A parser's error: help and version print as clap makes them (exit 0); errors become
/// one line, exit 2.
pub(crate) fn clap_exit(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return exit_code::SUCCESS;
    }
    if speaks_for_the_job() {
        crate::stderr_line!("iopulse: error: {}", crate::base::diagnostics::error::clap_one_line(&e));
    }
    exit_code::USAGE
}

fn print_notes(quiet: bool, notes: &[String]) {
    if !quiet {
        for n in notes {
            crate::stderr_line!("iopulse: note: {n}");
        }
    }
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

pub(crate) fn json_text<T: serde::Serialize>(doc: &T) -> String {
    let mut text = serde_json::to_string_pretty(doc).expect("a document always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_consistent_and_every_subcommand_has_examples() {
        command().debug_assert();
        for sub in command().get_subcommands() {
            let after = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(after.contains("Examples:"), "iopulse {} --help has no examples", sub.get_name());
        }
    }

    /// clap prints a default given to it after the flag's text: a text that names it too
    /// showed `[default: text] [default: text]` (merge, compare).
    #[test]
    fn no_flag_names_a_default_clap_prints_already() {
        let top = command();
        let mut problems = Vec::new();
        for cmd in std::iter::once(&top).chain(top.get_subcommands()) {
            for arg in cmd.get_arguments().filter(|a| !a.get_default_values().is_empty()) {
                for text in [arg.get_help(), arg.get_long_help()].into_iter().flatten() {
                    if text.to_string().contains("[default:") {
                        problems.push(format!("iopulse {} --{}", cmd.get_name(), arg.get_id()));
                    }
                }
            }
        }
        assert!(problems.is_empty(), "a default named twice in the help of: {problems:?}");
    }

    /// Every subcommand that runs, reads results or prints a report takes `-q/--quiet` and
    /// `--dry-run`, and every one whose report is a document on stdout `--output-format`: a
    /// new subcommand that misses one fails here (`verify` once took no `--quiet`).
    #[test]
    fn every_subcommand_has_the_common_output_flags() {
        // Print a fixed text (completions, a man page, help, the list of profiles) or a
        // job file, and nothing else.
        const NO_QUIET: [&str; 4] = ["completions", "man", "help", "profiles"];
        // Write files (plot: SVG; report: HTML) or a job file (from-fio) instead.
        const NO_FORMAT: [&str; 7] = ["completions", "man", "help", "profiles", "plot", "report", "from-fio"];
        let mut top = command();
        // Global flags (--dry-run) reach the subcommands when the command is built.
        top.build();
        let mut problems = Vec::new();
        for cmd in std::iter::once(&top).chain(top.get_subcommands()) {
            let name = cmd.get_name();
            let arg = |id: &str| cmd.get_arguments().find(|a| a.get_id() == id);
            if !NO_QUIET.contains(&name) && arg("quiet").and_then(|a| a.get_short()) != Some('q') {
                problems.push(format!("iopulse {name} has no -q/--quiet"));
            }
            if !NO_FORMAT.contains(&name) && arg("output_format").is_none() {
                problems.push(format!("iopulse {name} has no --output-format"));
            }
            if arg("dry_run").is_none() {
                problems.push(format!("iopulse {name} has no --dry-run"));
            }
        }
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn a_mistyped_subcommand_is_named() {
        let m = mistyped_subcommand("swep").unwrap();
        assert!(m.contains("did you mean `iopulse sweep`") && m.contains("./swep"), "{m}");
        assert_eq!(mistyped_subcommand("data.dat"), None);
    }
}
