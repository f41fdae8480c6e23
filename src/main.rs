//! The `iopulse` binary: parse the command line, join the job (MPI ranks, or
//! this process alone), run, print, and map the outcome to an exit code (0 ok,
//! 1 run failed, 2 usage, 3 verification, 130/143 interrupted). Everything
//! else lives in the library (`job` runs and reports).

#![deny(clippy::disallowed_macros)]

use clap::{CommandFactory, FromArgMatches, Parser};
use iopulse::cli::Args;
use iopulse::cluster::{Cluster, launcher_rank};
use iopulse::commands::{self, benchmark};
use iopulse::error::exit_code;
use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(run() as u8)
}

/// One malloc arena for the whole process. glibc otherwise gives each thread an arena
/// that reserves 64 MiB of address space, so `--threads 200` under `ulimit -v` aborted on
/// an allocation; workers allocate only during set-up (the loop allocates nothing), so one
/// arena costs no speed, and the address space a run needs becomes what memory.rs plans.
fn one_malloc_arena() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes malloc's tuning; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

fn run() -> i32 {
    one_malloc_arena();
    // Subcommands: the first argument exactly `run`, `merge`, `plot`, `completions` or `man`
    // (a target file of that name is written `./merge`).
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(name) = argv.get(1).and_then(|a| a.to_str()).filter(|a| commands::NAMES.contains(a)) {
        let rest = argv[2..].iter().cloned();
        return match name {
            "run" => parsed(name, rest).map_or_else(clap_error, commands::run_file),
            "sweep" => commands::sweep::main(name, rest.collect()),
            "search" => commands::search::main(name, rest.collect()),
            "from-fio" => parsed(name, rest).map_or_else(clap_error, commands::from_fio::from_fio),
            "profiles" => parsed(name, rest).map_or_else(clap_error, commands::profile::profiles),
            "merge" => parsed(name, rest).map_or_else(clap_error, commands::merge),
            "plot" => parsed(name, rest).map_or_else(clap_error, commands::plot),
            "completions" => parsed(name, rest).map_or_else(clap_error, commands::completions),
            _ => parsed(name, rest).map_or_else(clap_error, commands::man),
        };
    }
    if let Some(message) = argv.get(1).and_then(|a| a.to_str()).and_then(mistyped_subcommand) {
        if speaks_for_the_job() {
            iopulse::stderr_line!("iopulse: error: {message}");
        }
        return exit_code::USAGE;
    }
    let matches = match Args::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_error(e),
    };
    let args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => return clap_error(e),
    };
    // `--profile NAME`, or no target and no workload flag: a profile (a job file) runs.
    let profile = commands::profile::chosen(&matches);
    let targets = args.targets.clone();
    let start_at = args.start_at;
    let (spec, output) = match args.into_spec() {
        Ok(v) => v,
        Err(e) => {
            // Every rank of a job has the same command line: one of them says what is wrong.
            if speaks_for_the_job() {
                iopulse::stderr_line!("iopulse: error: {e}");
            }
            return exit_code::USAGE;
        }
    };
    if let Some(name) = profile {
        return commands::profile::run(&name, &targets, &commands::profile::overrides(&matches));
    }
    // Under an MPI launcher (and built with MPI) this meets the other ranks; else a job of one.
    let cluster = match Cluster::join() {
        Ok(c) => c,
        Err(e) => {
            iopulse::stderr_line!("iopulse: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    benchmark::run(&cluster, &spec, output, start_at)
}

/// Subcommands planned but not in this build: a first argument naming one is a mistake,
/// not a target file to create.
const PLANNED_SUBCOMMANDS: &[&str] = &[];

/// A first argument that looks like a mistyped subcommand, with what to write instead.
/// Only a bare word that is not an existing path counts (`./merge` or `data.dat` never do).
fn mistyped_subcommand(first: &str) -> Option<String> {
    if first.starts_with('-') || first.contains(['/', '.']) || std::path::Path::new(first).exists() {
        return None;
    }
    let escape = format!("to use a file of that name as a target, write ./{first}");
    if PLANNED_SUBCOMMANDS.contains(&first) {
        return Some(format!(
            "`{first}` is not a subcommand of this iopulse (subcommands: {}); {escape}",
            commands::NAMES.join(", ")
        ));
    }
    // Short names are one edit from many words: allow one edit there, two in longer names.
    let near = commands::NAMES
        .iter()
        .find(|name| first.len() >= 3 && strsim::levenshtein(first, name) <= if name.len() <= 4 { 1 } else { 2 })?;
    Some(format!("`{first}` is not a subcommand: did you mean `iopulse {near}`? ({escape})"))
}

/// Not a rank other than 0 of an MPI job (whose errors would repeat rank 0's).
fn speaks_for_the_job() -> bool {
    launcher_rank().is_none_or(|l| l.rank == 0)
}

/// A subcommand's own parser over the arguments after its name.
fn parsed<P: Parser>(name: &str, rest: impl Iterator<Item = std::ffi::OsString>) -> Result<P, clap::Error> {
    P::try_parse_from(std::iter::once(std::ffi::OsString::from(format!("iopulse {name}"))).chain(rest))
}

/// Help and version print as clap makes them; errors become one line, exit 2.
fn clap_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return exit_code::SUCCESS;
    }
    let rendered = e.to_string();
    let line = rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join(" ");
    if speaks_for_the_job() {
        iopulse::stderr_line!("iopulse: {line}");
    }
    exit_code::USAGE
}
