//! What the tests and benches reach that the binary does not: a benchmark command line
//! turned into the `Spec` it runs, through the same parser and plan as `iopulse ARGS`.
//! Nothing here is used by the binary itself.

use crate::spec::Spec;

/// The `Spec` of `iopulse ARGS...` (the arguments without the program name), or the
/// one-line refusal it would print.
pub fn spec_of<I, T>(args: I) -> Result<Spec, String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let argv = std::iter::once(std::ffi::OsString::from("iopulse")).chain(args.into_iter().map(Into::into));
    let matches = crate::commands::command().try_get_matches_from(argv).map_err(|e| crate::error::clap_one_line(&e))?;
    let cli = crate::commands::Cli::from_arg_matches(&matches).map_err(|e| crate::error::clap_one_line(&e))?;
    if let Some(refusal) = crate::cli::fio_names::refusal(&matches) {
        return Err(refusal);
    }
    let plan = crate::plan::flags::plan(&cli.bench).map_err(|e| e.message)?;
    Ok(plan.phases.into_iter().next().and_then(|p| p.jobs.into_iter().next()).expect("one job").spec)
}

/// Checks `iopulse ARGS...` (without the program name) as far as it can be without a
/// file: the clap command, fio's names, and the plan of a benchmark, a sweep or a search
/// (their flags into `Spec`s). A job file is not read. The refusal it would print, if any.
pub fn check_command_line<I, T>(args: I) -> Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use crate::commands::Command;
    use clap::FromArgMatches;
    let argv = std::iter::once(std::ffi::OsString::from("iopulse")).chain(args.into_iter().map(Into::into));
    let matches = crate::commands::command().try_get_matches_from(argv).map_err(|e| crate::error::clap_one_line(&e))?;
    let sub = matches.subcommand().map_or(&matches, |(_, m)| m);
    if let Some(refusal) = crate::cli::fio_names::refusal(sub) {
        return Err(refusal);
    }
    let cli = crate::commands::Cli::from_arg_matches(&matches).map_err(|e| crate::error::clap_one_line(&e))?;
    match cli.command {
        None => crate::plan::flags::plan(&cli.bench).map(|_| ()).map_err(|e| e.message),
        Some(Command::Sweep(s)) => {
            crate::plan::sweep::grid(&s.runs.targets, &s.runs.flags).map(|_| ()).map_err(|e| e.message)
        }
        Some(Command::Search(s)) => s.runs.single("a search").map(|_| ()).map_err(|e| e.message),
        Some(_) => Ok(()),
    }
}

/// Checks the text of a job file (TOML) as `iopulse run` plans it, without running it.
pub fn check_job_file(name: &str, text: &str) -> Result<(), String> {
    let file = crate::plan::job_file::parse::parse(name, text).map_err(|e| e.message)?;
    crate::plan::job_file::plan(&file, &Default::default(), Vec::new()).map(|_| ()).map_err(|e| e.message)
}
