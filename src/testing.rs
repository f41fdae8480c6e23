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
