//! The `iopulse` binary: parse the command line, run, print, and map the
//! outcome to an exit code (0 ok, 1 run failed, 2 usage, 3 verification,
//! 130/143 interrupted). Everything else lives in the library.

use clap::Parser;
use iopulse::cli::Args;
use iopulse::diag::Diagnostics;
use iopulse::error::{Error, UsageError, exit_code};
use iopulse::{commands, coordinator, report, signals};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

fn main() -> ExitCode {
    ExitCode::from(run() as u8)
}

fn run() -> i32 {
    // Subcommands: the first argument exactly `merge`, `plot`, `completions` or `man`
    // (a target file of that name is written `./merge`).
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(name) = argv.get(1).and_then(|a| a.to_str()).filter(|a| commands::NAMES.contains(a)) {
        let rest = argv[2..].iter().cloned();
        return match name {
            "merge" => parsed(name, rest).map_or_else(clap_error, commands::merge),
            "plot" => parsed(name, rest).map_or_else(clap_error, commands::plot),
            "completions" => parsed(name, rest).map_or_else(clap_error, commands::completions),
            _ => parsed(name, rest).map_or_else(clap_error, commands::man),
        };
    }
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => return clap_error(e),
    };
    let (spec, output) =
        match args.into_spec().and_then(|(spec, output)| check_output(&output).map(|()| (spec, output))) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("iopulse: error: {e}");
                return exit_code::USAGE;
            }
        };
    let stop = match signals::install() {
        Ok(stop) => stop,
        Err(e) => {
            eprintln!("iopulse: error: cannot install signal handlers: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    let diag = Diagnostics::new(output.quiet);
    match coordinator::run(&spec, &diag, stop.clone()) {
        Ok(outcome) => {
            if let Err(e) = report::emit(&outcome.result, &output) {
                eprintln!("iopulse: error: {e}");
                return exit_code::RUN_FAILED;
            }
            if let Some(error) = &outcome.result.error {
                eprintln!("iopulse: error: {error}");
            }
            outcome.exit_code
        }
        Err(e) => {
            eprintln!("iopulse: error: {e}");
            match (&e, stop.load(Ordering::Relaxed)) {
                (Error::Run(_), code)
                    if code == exit_code::INTERRUPTED as usize || code == exit_code::TERMINATED as usize =>
                {
                    code as i32
                }
                _ => e.exit_code(),
            }
        }
    }
}

/// The JSON file's directory must exist before anything is touched.
fn check_output(output: &iopulse::cli::OutputOptions) -> Result<(), UsageError> {
    report::check_outputs(output)?;
    if let Some(path) = &output.json_file {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(UsageError::new(format!(
                "--json {}: directory {} does not exist",
                path.display(),
                dir.display()
            )));
        }
    }
    Ok(())
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
    eprintln!("iopulse: {line}");
    exit_code::USAGE
}
