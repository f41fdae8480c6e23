//! Profiles: `iopulse profiles` (list them), `iopulse profiles NAME` (print one, to copy
//! and edit), and running one: `iopulse --profile NAME [TARGET...] [flags]`, or `iopulse`
//! with no target and no workload flag, which runs the `default` profile. A profile is a
//! job file (`profiles.rs`); it runs on the targets given, else on a temporary file in
//! $TMPDIR removed afterwards, with the other flags applied to each of its steps; its
//! report is one table (`report/profile.rs`).
//!
//! It chooses, runs and prints; the jobs run as `iopulse run` runs them.

use crate::error::exit_code;
use crate::jobs::parse::{Entry, Value};
use crate::profiles::{self, PROFILES};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  iopulse profiles
      the profiles shipped in iopulse, with what each measures
  iopulse profiles oltp > oltp.toml
      a profile's job file, to copy and edit; then `iopulse run oltp.toml`
  iopulse
      the default profile on a temporary file in $TMPDIR: sequential 1 MiB reads and
      writes at depth 8, random 4 KiB reads and writes at depth 32 and at depth 1
  iopulse --profile oltp /data/db.dat --duration 10s
      a profile on your file; flags apply to each of its steps";

/// List the profiles shipped in iopulse, or print one (a job file to copy and edit).
#[derive(Debug, Parser)]
#[command(name = "profiles", bin_name = "iopulse profiles", after_help = EXAMPLES)]
pub struct ProfilesArgs {
    /// Print this profile's job file (TOML) instead of the list.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

pub fn profiles(args: ProfilesArgs) -> i32 {
    match args.name {
        None => {
            let mut text = String::new();
            for p in PROFILES {
                text.push_str(&format!("{:<12} {}\n", p.name, p.summary()));
            }
            text.push_str(
                "\nRun one with `iopulse --profile NAME [TARGET]` (no TARGET: a temporary file);\nprint its job file with `iopulse profiles NAME`.\n",
            );
            super::write_stdout(&text)
        }
        Some(name) => match profiles::find(&name) {
            Some(p) => super::write_stdout(p.text),
            None => {
                crate::stderr_line!("iopulse profiles: error: {}", unknown(&name));
                exit_code::USAGE
            }
        },
    }
}

fn unknown(name: &str) -> String {
    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
    format!("no profile `{name}`: give one of {} (iopulse profiles lists them)", names.join(", "))
}

/// Flags of the benchmark that say how long and where results go: given alone (no
/// target), `iopulse` still runs the default profile with them.
const RUN_WIDE: &[&str] = &["duration", "quiet", "output_format", "json", "csv", "plot"];

/// The profile this command line runs, if any: `--profile NAME`, or the default one when
/// no target and no flag that shapes the workload is given.
pub fn chosen(matches: &clap::ArgMatches) -> Option<String> {
    if let Some(name) = matches.get_one::<String>("profile") {
        return Some(name.clone());
    }
    use clap::CommandFactory;
    let given = |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    // The arguments only: the derived struct's own group of them is not a flag.
    let workload_flag = crate::cli::Args::command()
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .any(|id| given(&id) && !RUN_WIDE.contains(&id.as_str()));
    (!workload_flag).then(|| profiles::DEFAULT.to_string())
}

/// The flags given on the command line other than the targets and --profile, as the
/// flags after a job file.
pub fn overrides(matches: &clap::ArgMatches) -> Vec<OsString> {
    use clap::CommandFactory;
    let command = crate::cli::Args::command();
    let mut out = Vec::new();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "targets" || id == "profile" {
            continue;
        }
        if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let Some(long) = arg.get_long() else { continue };
        if arg.get_action().takes_values() {
            for raw in matches.get_raw(id).into_iter().flatten() {
                let mut flag = OsString::from(format!("--{long}="));
                flag.push(raw);
                out.push(flag);
            }
        } else {
            out.push(format!("--{long}").into());
        }
    }
    out
}

/// Removes the temporary folder of a profile run when dropped.
struct TempFolder(PathBuf);

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs profile `name` on `targets` (none: a temporary file), with `overrides` applied to
/// each step; returns the exit code.
pub fn run(name: &str, targets: &[PathBuf], overrides: &[OsString]) -> i32 {
    let Some(profile) = profiles::find(name) else {
        crate::stderr_line!("iopulse: error: --profile {}", unknown(name));
        return exit_code::USAGE;
    };
    let mut file = match crate::jobs::parse::parse(&format!("profile {name}"), profile.text) {
        Ok(f) => f,
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    // Checked before anything is created: the folder is made only for a run that starts.
    let temp = match targets.is_empty().then(crate::target::temp_dir::choose).transpose() {
        Ok(dir) => dir.map(|dir| {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            dir.join(format!("iopulse-profile-{}-{nanos}", std::process::id()))
        }),
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::USAGE;
        }
    };
    let paths: Vec<String> = match &temp {
        Some(dir) => vec![dir.join(format!("{name}.dat")).display().to_string()],
        None => targets.iter().map(|t| t.display().to_string()).collect(),
    };
    file.global.retain(|e| e.key != "targets");
    file.global.push(Entry { key: "targets".into(), line: 0, value: Value::List(paths) });
    let plan = match crate::jobs::to_spec::plan(&file, overrides) {
        Ok(plan) => plan,
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::USAGE;
        }
    };
    let planned: Vec<PathBuf> = plan.jobs.iter().flat_map(|j| j.spec.targets.iter().cloned()).collect();
    let names: Vec<&str> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
    if let Err(e) = crate::report::check_job_outputs(&plan.output, &planned, &names, &[]) {
        crate::stderr_line!("iopulse: error: {e}");
        return exit_code::USAGE;
    }
    let _cleanup = match &temp {
        Some(dir) => match std::fs::create_dir(dir) {
            Ok(()) => Some(TempFolder(dir.clone())),
            Err(e) => {
                crate::stderr_line!("iopulse: error: create a temporary folder {}: {e}", dir.display());
                return exit_code::RUN_FAILED;
            }
        },
        None => None,
    };
    let (code, doc) = super::run_plan(&plan, &[]);
    let Some(mut doc) = doc else { return code };
    if temp.is_some() {
        // The folder and its file go when this function returns, after the report.
        for job in &mut doc.jobs {
            for t in &mut job.result.targets {
                t.removed_after_run = true;
            }
        }
        for t in &mut doc.combined.targets {
            t.removed_after_run = true;
        }
    }
    let failures = crate::report::jobs::emit_as(&doc, &plan.output, &|d| crate::report::profile::text(name, d));
    for f in &failures {
        crate::stderr_line!("iopulse: error: {f}");
    }
    if !failures.is_empty() && code == exit_code::SUCCESS { exit_code::OUTPUT_FAILED } else { code }
}
