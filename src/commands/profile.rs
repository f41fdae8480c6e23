//! Profiles: `iopulse profiles` (list them), `iopulse profiles NAME` (print one, to copy
//! and edit), and running one: `iopulse --profile NAME [TARGET...] [flags]`, or `iopulse`
//! with no target and no workload flag, which runs the `default` profile. A profile is a
//! job file (`profiles.rs`); it runs on the targets given, else on a temporary file in
//! $TMPDIR removed afterwards, with the other flags applied to each of its steps; its
//! report is one table (`output/report/profile.rs`).
//!
//! It chooses, runs and prints; the jobs run as `iopulse run` runs them.

use crate::base::diagnostics::error::exit_code;
use crate::front::cli::table::FlagTable;
use crate::front::cli::{WorkloadArgs, command_of};
use crate::front::plan::job_file::parse::{Entry, Value};
use crate::front::plan::job_file::{self, Overrides};
use crate::front::plan::profiles::{self, PROFILES};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  iopulse profiles
      the profiles shipped in iopulse, with what each measures
  iopulse profiles oltp > oltp.toml
      a profile's job file, to copy and edit; then `iopulse run oltp.toml`
  iopulse
      the default profile, KDiskMark's tests (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1,
      RND4K Q1T1, each read and written, 5 passes of 1 s on a 1 GiB file) on a
      temporary file on a disk ($TMPDIR, or ~/.cache where $TMPDIR is in memory)
  iopulse --loops 3 --file-size 4G --duration 5s
      the same, 3 passes of 5 s per step on a 4 GiB file (KDiskMark's sizes: 16M to 64G)
  iopulse --profile oltp /data/db.dat --duration 10s
      a profile on your file; flags apply to each of its steps
  iopulse --profile oltp /data/db.dat --write-iolog oltp.iolog
      each step's I/Os as a fio iolog of its own: oltp-STEP.iolog (a pass after the
      first: oltp-STEP.passK.iolog)";

/// List the profiles shipped in iopulse, or print one (a job file to copy and edit).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ProfilesArgs {
    /// Print this profile's job file.
    ///
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

/// The profile this command line runs, if any: `--profile NAME`, or the default one when
/// no target and no flag that shapes the workload is given (`--duration`, `--file-size`,
/// `--loops` and the output flags do not shape it).
pub fn chosen(args: &crate::front::cli::BenchArgs, matches: &clap::ArgMatches) -> Option<String> {
    if let Some(name) = &args.profile {
        return Some(name.clone());
    }
    if !args.targets.is_empty() {
        return None;
    }
    let mut given = FlagTable::from_matches(&command_of::<WorkloadArgs>(), matches);
    // The default profile's own knobs: how long each pass, and the file's size.
    given.remove("duration");
    given.remove("file-size");
    given.is_empty().then(|| profiles::DEFAULT.to_string())
}

/// `--profile`'s help: what it does, and every profile shipped, from the list itself.
pub fn profile_help() -> String {
    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
    format!(
        "Run a profile, a job file shipped in iopulse ({}; `iopulse profiles` says what each measures), on the TARGET given or else on a temporary file; the other flags apply to each of its steps, and the report is one table. E.g. `iopulse --profile oltp /data/db.dat --duration 10s`. With no TARGET and no flag that shapes the workload, `iopulse` runs the default profile.",
        names.join(", ")
    )
}

/// Each job of `file` `loops` times, one pass after another (each its own phase), the
/// passes after the first named `NAME.passK` (`jobs::profile_steps` reads them back).
fn repeat_steps(file: &mut crate::front::plan::job_file::parse::JobFile, loops: u32) {
    use crate::figures::result::profile_steps::pass_name;
    if loops <= 1 {
        return;
    }
    let jobs = std::mem::take(&mut file.jobs);
    for job in jobs {
        for pass in 2..=loops {
            let mut copy = job.clone();
            copy.name = pass_name(&job.name, pass);
            copy.entries.retain(|e| e.key != "stonewall");
            copy.entries.push(Entry { key: "stonewall".into(), line: job.line, value: Value::Switch(true) });
            if pass == 2 {
                file.jobs.push(job.clone());
            }
            file.jobs.push(copy);
        }
    }
}

/// Removes the temporary folder of a profile run when dropped.
struct TempFolder(PathBuf);

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs profile `name` on `targets` (none: a temporary file on a disk, `temp_dir::on_disk`),
/// with `overrides` applied to each step, each step `loops` times (`--loops`; else the
/// profile's default); returns the exit code.
pub fn run(name: &str, targets: &[PathBuf], overrides: &Overrides, loops: Option<u32>) -> i32 {
    let Some(profile) = profiles::find(name) else {
        crate::stderr_line!("iopulse: error: --profile {}", unknown(name));
        return exit_code::USAGE;
    };
    let mut file = match crate::front::plan::job_file::parse::parse(&format!("profile {name}"), profile.text) {
        Ok(f) => f,
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    repeat_steps(&mut file, loops.unwrap_or_else(|| profiles::default_loops(name)));
    // Checked before anything is created: the folder is made only for a run that starts.
    let place = match targets.is_empty().then(crate::storage::targets::temp_dir::on_disk).transpose() {
        Ok(place) => place,
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::USAGE;
        }
    };
    let temp = place.as_ref().map(|p| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        p.dir.join(format!("iopulse-profile-{}-{nanos}", std::process::id()))
    });
    let said = place.as_ref().and_then(|p| p.said.clone());
    let paths: Vec<String> = match &temp {
        Some(dir) => vec![dir.join(format!("{name}.dat")).display().to_string()],
        None => targets.iter().map(|t| t.display().to_string()).collect(),
    };
    file.global.retain(|e| e.key != "targets");
    file.global.push(Entry { key: "targets".into(), line: 0, value: Value::List(paths) });
    let mut plan = match job_file::plan(&file, overrides, Vec::new()) {
        Ok(plan) => plan,
        Err(e) => {
            crate::stderr_line!("iopulse: error: {e}");
            return exit_code::USAGE;
        }
    };
    // The outputs are checked before the folder is made; the targets, once it exists
    // (`run_plan` checks the whole plan).
    if let Err(e) = crate::front::plan::ledger::check(&plan) {
        crate::stderr_line!("iopulse: error: {e}");
        return exit_code::USAGE;
    }
    if let Some(code) = super::dry_run_exit() {
        return code;
    }
    let Ok(stop) = crate::io::host::signals::install() else {
        crate::stderr_line!("iopulse: error: cannot install signal handlers");
        return exit_code::RUN_FAILED;
    };
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
    // Said once, before the steps (their own word on memory is gathered under the table).
    if let Some(p) = place.as_ref().filter(|p| p.in_memory)
        && let Some(said) = &p.said
    {
        crate::stderr_line!("iopulse: ⚠ {said}");
    }
    if super::metadata::is_metadata(&plan) {
        // A personality's tree: a directory of its own in the temporary folder.
        if let Some(dir) = &temp {
            for job in plan.phases.iter_mut().flat_map(|p| p.jobs.iter_mut()) {
                job.spec.targets = vec![dir.join(format!("{name}-tree"))];
            }
        }
        return super::metadata::run_plan(&plan, &stop);
    }
    let screen = super::live_screen(&plan.output);
    let (code, doc) = super::run::run_plan(&plan, &stop, true);
    // The full screen is given back before anything is reported.
    drop(screen);
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
    if let Some(p) = place.as_ref().filter(|p| p.in_memory)
        && let Some(said) = &p.said
    {
        doc.combined.outcome.warnings.push(said.clone());
    }
    let mut failures = super::run::write_iologs(&plan, &mut doc);
    failures.extend(crate::output::report::jobs::emit_as(&doc, &plan.output, &|d| {
        crate::output::report::profile::text(name, d, said.as_deref())
    }));
    // The steps' warnings and notes, under the table: each once, with its steps.
    for line in crate::output::report::profile::gathered(&doc, plan.output.quiet) {
        crate::stderr_line!("{line}");
    }
    for f in &failures {
        crate::stderr_line!("iopulse: error: {f}");
    }
    if !failures.is_empty() && code == exit_code::SUCCESS { exit_code::OUTPUT_FAILED } else { code }
}
