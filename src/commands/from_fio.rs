//! `iopulse from-fio FILE.fio`: a fio job file translated into an iopulse job file
//! (TOML, on stdout), checked by the same parser `iopulse run` uses, so what it prints
//! runs; and the loading of a job file of either kind for `iopulse run`.
//!
//! It loads, checks and prints; translation is `fio_import`'s, running `jobs`'s.

use crate::base::diagnostics::error::{UsageError, exit_code};
use crate::front::fio_import;
use crate::front::plan::Plan;
use crate::front::plan::job_file::{self, Overrides};
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  iopulse from-fio randread.fio > randread.toml
      the equivalent iopulse job file; each key's comment names its fio line
  iopulse from-fio legacy.fio --ignore-unsupported
      options without an iopulse equivalent become warnings (comments in the output)
  iopulse from-fio randread.fio --duration 10s
      every job runs 10 s instead of the file's run length (also --ops, --io-limit,
      --ramp, --steady-state: the run-length flags, written into each job)
  iopulse run randread.fio --duration 5s
      run a fio job file directly (translated the same way)

  a fio job file:                     becomes:
    [global]                            [rr]
    ioengine=libaio                     random = true
    direct=1                            block-size = \"4k\"
    bs=4k                               targets = [\"/data/t.dat\"]
    size=1g                             file-size = \"1G\"
    filename=/data/t.dat                engine = \"libaio\"
    [rr]                                queue-depth = 32
    rw=randread                         direct = true
    iodepth=32                          duration = \"30s\"
    runtime=30
    time_based

docs/fio.md lists every fio option iopulse translates and what it becomes; any other
option is an error naming it and its line (or a warning with --ignore-unsupported).
Exit codes: 0 printed, 2 a bad or untranslatable fio job file.";

/// Print the iopulse job file (TOML) equivalent to a fio job file.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct FromFioArgs {
    /// The fio job file.
    ///
    /// The fio job file.
    #[arg(value_name = "FILE.fio")]
    pub file: PathBuf,

    /// Unsupported options warn instead of failing.
    ///
    /// Options without an iopulse equivalent become warnings instead of errors.
    /// E.g. `iopulse from-fio legacy.fio --ignore-unsupported`
    #[arg(long)]
    pub ignore_unsupported: bool,

    /// The run length of every job, instead of the file's (runtime, size, time_based).
    #[command(flatten)]
    pub window: crate::front::cli::WindowArgs,
    #[command(flatten)]
    pub output: crate::front::cli::output::QuietArg,
}

use fio_import::RUN_LENGTH_FLAGS as RUN_LENGTH;

pub fn from_fio(args: FromFioArgs, matches: &clap::ArgMatches) -> i32 {
    let given = crate::front::cli::table::FlagTable::from_matches(
        &crate::front::cli::command_of::<crate::front::cli::WindowArgs>(),
        matches,
    );
    let length_given = given.entries().any(|(k, _)| RUN_LENGTH.contains(&k));
    let mut translated = match fio_import::load(&args.file, args.ignore_unsupported, None, length_given) {
        Ok(t) => t,
        Err(e) => {
            crate::stderr_line!("iopulse from-fio: error: {e}");
            return exit_code::USAGE;
        }
    };
    with_run_length(&mut translated.file, &given);
    // What is printed must run: the same checks as `iopulse run`.
    if let Err(e) = job_file::plan(&translated.file, &Overrides::default(), Vec::new()) {
        crate::stderr_line!("iopulse from-fio: error: {}", translated.in_fio_terms(&e.message));
        return exit_code::USAGE;
    }
    for w in &translated.warnings {
        crate::stderr_line!("⚠ {w}");
    }
    super::write_stdout(&fio_import::toml_out::render(&translated))
}

/// The window flags `given` written into every job (line 0: the command line); a run-length
/// flag replaces the job's whole run length (`duration`, `ops`, `io-limit`).
fn with_run_length(
    file: &mut crate::front::plan::job_file::parse::JobFile,
    given: &crate::front::cli::table::FlagTable,
) {
    use crate::front::cli::table::FlagValue;
    use crate::front::plan::job_file::parse::{Entry, Value};
    let new_length = given.entries().any(|(k, _)| RUN_LENGTH.contains(&k));
    for job in &mut file.jobs {
        job.entries.retain(|e| !(new_length && RUN_LENGTH.contains(&e.key.as_str())) && given.get(&e.key).is_none());
        for (key, value) in given.entries() {
            let value = match value {
                FlagValue::Switch(on) => Value::Switch(*on),
                FlagValue::Text(t) => Value::Text(t.clone()),
            };
            job.entries.push(Entry { key: key.to_string(), line: 0, value });
        }
    }
    if new_length {
        file.global.retain(|e| !RUN_LENGTH.contains(&e.key.as_str()));
    }
    file.global.retain(|e| given.get(&e.key).is_none());
}

/// A job file checked for `iopulse run`: TOML, or fio's format for a `.fio` file.
pub struct Loaded {
    pub plan: Plan,
    /// Options ignored under --ignore-unsupported, to be recorded in the result.
    pub warnings: Vec<String>,
    /// Documented differences of meaning that apply (fio files only).
    pub notes: Vec<String>,
}

/// Loads the job file at `path` with `overrides` applied to every job.
/// `directory` (`--directory`): a fio file's jobs' directory instead of their own.
pub fn load_job_file(
    path: &Path,
    overrides: &Overrides,
    ignore_unsupported: bool,
    directory: Option<&Path>,
) -> Result<Loaded, UsageError> {
    let inputs = vec![path.to_path_buf()];
    if !fio_import::is_fio_file(path) {
        if ignore_unsupported {
            return Err(UsageError::new(
                "--ignore-unsupported applies to fio job files (FILE.fio): drop it for a TOML job file",
            ));
        }
        if directory.is_some() {
            return Err(UsageError::new(
                "--directory applies to fio job files (FILE.fio): for a TOML job file, give --target PATH",
            ));
        }
        let file = crate::front::plan::job_file::parse::read(path)?;
        return Ok(Loaded { plan: job_file::plan(&file, overrides, inputs)?, warnings: Vec::new(), notes: Vec::new() });
    }
    let length_given = RUN_LENGTH.iter().any(|k| overrides.table.get(k).is_some());
    let t = fio_import::load(path, ignore_unsupported, directory, length_given)?;
    let plan = job_file::plan(&t.file, overrides, inputs).map_err(|e| UsageError::new(t.in_fio_terms(&e.message)))?;
    Ok(Loaded { plan, warnings: t.warnings, notes: t.notes })
}
