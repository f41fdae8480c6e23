//! fio job files in iopulse (`iopulse from-fio FILE.fio`, `iopulse run FILE.fio`,
//! docs/fio.md): read as fio reads them (`ini.rs`: sections, includes, `${VAR}`), each
//! option looked up in the table of those iopulse knows (`front/fio/options.rs`), values read in
//! fio's syntax (`values.rs`), the jobs translated into iopulse keys with their fio lines
//! (`translate.rs`), and written as an iopulse TOML job file (`toml_out.rs`).
//!
//! The translation is a `plan::job_file::parse::JobFile`, so a `.fio` file is then checked and run
//! by exactly the code that runs TOML job files. It must not run anything itself.

pub mod ini;
pub mod toml_out;
pub mod translate;
pub mod values;

use crate::base::diagnostics::error::UsageError;
pub use translate::Translated;

/// The flags that give a run its length: one given with a fio job file replaces the
/// file's whole run length (`runtime`, `time_based`, `size`, `io_size`, `number_ios`).
pub const RUN_LENGTH_FLAGS: [&str; 3] = ["duration", "ops", "io-limit"];

/// Whether `path` names a fio job file (by its `.fio` extension).
pub fn is_fio_file(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fio"))
}

/// Reads and translates the fio job file at `path`, with the process's environment for
/// `${VAR}`; options without an equivalent are warnings with `ignore_unsupported`.
/// `directory`: every job's files are in this directory instead of the file's `directory`.
/// `run_length_given`: the command line gives the run length, the file's is not read.
pub fn load(
    path: &std::path::Path,
    ignore_unsupported: bool,
    directory: Option<&std::path::Path>,
    run_length_given: bool,
) -> Result<Translated, UsageError> {
    let sections = ini::read(path, &|name| std::env::var(name).ok())?;
    let commands = [
        crate::front::cli::command_of::<crate::front::cli::WorkloadArgs>(),
        crate::front::cli::command_of::<crate::front::cli::OutputArgs>(),
        crate::front::cli::command_of::<crate::front::cli::TimeseriesArgs>(),
    ];
    let has_flag = |name: &str| commands.iter().any(|c| c.get_arguments().any(|a| a.get_long() == Some(name)));
    let directory = directory.map(|d| d.display().to_string());
    let ctx = translate::Context {
        ignore_unsupported,
        has_flag: &has_flag,
        directory: directory.as_deref(),
        run_length_given,
    };
    translate::translate(&path.display().to_string(), &sections, &ctx)
}
