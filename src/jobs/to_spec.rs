//! A job file's jobs as `Spec`s: each job's table over `[global]`'s, then the flags given
//! after the file, becomes a command line that the benchmark's own parser (`cli::Args`)
//! reads, so a key means exactly what the flag of that name means. A refusal of that
//! parser is given back naming the file, the line and the key that caused it.
//!
//! Everything is checked here, for every job of every phase, before any job runs. It
//! must not touch a target; it knows which keys exist only through the clap command.

use super::parse::{Entry, Job, JobFile, Value};
use crate::cli::{Args, OutputOptions};
use crate::error::UsageError;
use crate::spec::Spec;
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;

/// One job ready to run.
#[derive(Debug)]
pub struct JobSpec {
    pub name: String,
    /// 1 for the first phase; a job with `stonewall = true` starts the next one.
    pub phase: u32,
    pub spec: Spec,
}

/// Every job of a job file, checked, and where the results go.
#[derive(Debug)]
pub struct Plan {
    pub file: String,
    pub jobs: Vec<JobSpec>,
    pub output: OutputOptions,
}

impl Plan {
    pub fn phases(&self) -> u32 {
        self.jobs.iter().map(|j| j.phase).max().unwrap_or(0)
    }
}

/// Keys of a job file that are not flags.
const TARGETS: &str = "targets";
const STONEWALL: &str = "stonewall";
/// Flags that say where results go: for the whole run, so in [global] or after the file.
/// (`timeseries` too: each job writes FILE-JOB.csv, `report::jobs::timeseries_paths`.)
const OUTPUT_KEYS: &[&str] = &["output-format", "json", "csv", "plot", "quiet", "timeseries"];
/// Flags a job file does not take yet, and why.
const REFUSED: &[(&str, &str)] = &[
    ("start-at", "not with job files yet: start the run itself at that time"),
    (
        "profile",
        "a profile is a job file of its own: run it with `iopulse --profile NAME`, or print it with `iopulse profiles NAME` and copy its jobs here",
    ),
    ("help", "not a job file key"),
    ("version", "not a job file key"),
];

/// Checks every job of `file`, with `overrides` (the flags after the file) applied to each.
pub fn plan(file: &JobFile, overrides: &[OsString]) -> Result<Plan, UsageError> {
    check_overrides(overrides)?;
    let command = Args::command();
    for e in &file.global {
        check_key(&command, file, "global", e)?;
        if e.key == STONEWALL {
            return Err(at(file, e, "global", "stonewall belongs to the job that starts a new phase, not to [global]"));
        }
    }
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut output = None;
    let mut phase = 1;
    for (index, job) in file.jobs.iter().enumerate() {
        for e in &job.entries {
            check_key(&command, file, &job.name, e)?;
            if OUTPUT_KEYS.contains(&e.key.as_str()) {
                return Err(at(
                    file,
                    e,
                    &job.name,
                    "says where the results of the whole run go: put it in [global] or after the job file",
                ));
            }
        }
        if index > 0 && job.entries.iter().any(|e| e.key == STONEWALL && e.value == Value::Switch(true)) {
            phase += 1;
        }
        let entries = merged(&file.global, &job.entries);
        let (spec, out) = to_spec(file, job, &entries, overrides)?;
        if let Some(other) = jobs.iter().find(|o| o.phase == phase && shares_a_target(&o.spec, &spec)) {
            return Err(UsageError::new(format!(
                "{}:{}: jobs [{}] and [{}] run at the same time on the same target: give each its own targets, or put stonewall = true in [{}] to run it after",
                file.path, job.line, other.name, job.name, job.name
            )));
        }
        output.get_or_insert(out);
        jobs.push(JobSpec { name: job.name.clone(), phase, spec });
    }
    let output = output.expect("a job file has at least one job");
    Ok(Plan { file: file.path.clone(), jobs, output })
}

/// The flags after the file must parse on their own and name no target.
fn check_overrides(overrides: &[OsString]) -> Result<(), UsageError> {
    let argv = std::iter::once(OsString::from("iopulse")).chain(overrides.iter().cloned());
    let args = Args::try_parse_from_for_jobs(argv).map_err(|e| {
        UsageError::new(format!("in the flags after the job file: {}", crate::error::clap_one_line(&e)))
    })?;
    if let Some(t) = args.targets.first() {
        return Err(UsageError::new(format!(
            "in the flags after the job file: `{}` is not a flag; targets go in the job file (targets = [\"{}\"])",
            t.display(),
            t.display()
        )));
    }
    for (key, why) in REFUSED {
        if overrides
            .iter()
            .any(|o| o.to_str().is_some_and(|o| o == format!("--{key}") || o.starts_with(&format!("--{key}="))))
        {
            return Err(UsageError::new(format!("--{key} with `iopulse run`: {why}")));
        }
    }
    Ok(())
}

/// Parses like the benchmark's command line, a flag given again overriding the earlier one.
trait ParseForJobs: Sized {
    fn try_parse_from_for_jobs(argv: impl IntoIterator<Item = OsString>) -> Result<Self, clap::Error>;
}

impl ParseForJobs for Args {
    fn try_parse_from_for_jobs(argv: impl IntoIterator<Item = OsString>) -> Result<Self, clap::Error> {
        let mut matches = Args::command().args_override_self(true).try_get_matches_from(argv)?;
        Args::from_arg_matches_mut(&mut matches)
    }
}

/// A key must be a flag's long name (or `targets`, `stonewall`) with a value of its kind.
fn check_key(command: &clap::Command, file: &JobFile, table: &str, e: &Entry) -> Result<(), UsageError> {
    if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == e.key) {
        return Err(at(file, e, table, why));
    }
    if e.key == TARGETS {
        return match &e.value {
            Value::List(_) | Value::Text(_) => Ok(()),
            Value::Switch(_) => Err(at(file, e, table, "give the target paths, e.g. targets = [\"/data/a.dat\"]")),
        };
    }
    if e.key == STONEWALL {
        return match e.value {
            Value::Switch(_) => Ok(()),
            _ => Err(at(file, e, table, "give true or false")),
        };
    }
    let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(e.key.as_str())) else {
        let known = command.get_arguments().filter_map(|a| a.get_long()).chain([TARGETS, STONEWALL]);
        let near = known
            .map(|k| (strsim::levenshtein(k, &e.key), k))
            .filter(|(d, _)| *d <= 2)
            .min()
            .map(|(_, k)| format!("did you mean `{k}`? "))
            .unwrap_or_default();
        return Err(at(
            file,
            e,
            table,
            &format!(
                "unknown key: {near}keys are the long names of iopulse's flags (iopulse --help) and `targets`, `stonewall`"
            ),
        ));
    };
    let takes_value = arg.get_action().takes_values();
    match (&e.value, takes_value) {
        (Value::Switch(_), false) | (Value::Text(_), true) => Ok(()),
        (_, false) => Err(at(file, e, table, &format!("--{} is a switch: give {} = true or false", e.key, e.key))),
        (Value::Switch(_), true) => {
            Err(at(file, e, table, &format!("--{} takes a value, e.g. {} = \"{}\"", e.key, e.key, example(arg))))
        }
        (Value::List(_), true) => Err(at(file, e, table, &format!("--{} takes one value, not a list", e.key))),
    }
}

fn example(arg: &clap::Arg) -> String {
    arg.get_value_names().and_then(|n| n.first()).map_or_else(|| "VALUE".to_string(), |n| n.to_string())
}

/// "FILE:LINE: key `K` of [TABLE]: WHY".
fn at(file: &JobFile, e: &Entry, table: &str, why: &str) -> UsageError {
    UsageError::new(format!("{}:{}: key `{}` of [{table}]: {why}", file.path, e.line, e.key))
}

/// [global]'s entries that the job does not give, then the job's own.
fn merged<'a>(global: &'a [Entry], job: &'a [Entry]) -> Vec<(&'a Entry, bool)> {
    global
        .iter()
        .filter(|g| !job.iter().any(|j| j.key == g.key))
        .map(|g| (g, true))
        .chain(job.iter().map(|j| (j, false)))
        .collect()
}

/// The job's command line, parsed and checked as the benchmark's.
fn to_spec(
    file: &JobFile,
    job: &Job,
    entries: &[(&Entry, bool)],
    overrides: &[OsString],
) -> Result<(Spec, OutputOptions), UsageError> {
    let mut argv: Vec<OsString> = vec!["iopulse".into()];
    for (e, _) in entries {
        match (&e.value, e.key.as_str()) {
            (Value::List(paths), TARGETS) => argv.extend(paths.iter().map(OsString::from)),
            (Value::Text(path), TARGETS) => argv.push(path.into()),
            (_, STONEWALL) | (Value::Switch(false), _) => {}
            (Value::Switch(true), key) => argv.push(format!("--{key}").into()),
            (Value::Text(v), key) => argv.push(format!("--{key}={v}").into()),
            (Value::List(_), _) => {}
        }
    }
    argv.extend(overrides.iter().cloned());
    let blame = |message: String| blame(file, job, entries, overrides, &message);
    let args = Args::try_parse_from_for_jobs(argv).map_err(|e| blame(crate::error::clap_one_line(&e)))?;
    args.into_spec().map_err(|e| blame(e.message))
}

/// The refusal `message` of job `job`, naming the key of the file it is about: the first
/// flag the message names that the job's table (or [global]) gives.
fn blame(file: &JobFile, job: &Job, entries: &[(&Entry, bool)], overrides: &[OsString], message: &str) -> UsageError {
    let mut rest = message;
    while let Some(i) = rest.find("--") {
        let name: String =
            rest[i + 2..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect::<String>();
        rest = &rest[i + 2..];
        if let Some((e, from_global)) = entries.iter().find(|(e, _)| e.key == name) {
            let table = if *from_global { format!("[global] (job [{}])", job.name) } else { format!("[{}]", job.name) };
            return UsageError::new(format!("{}:{}: key `{}` of {table}: {message}", file.path, e.line, e.key));
        }
        let flag = format!("--{name}");
        if overrides.iter().any(|o| o.to_str().is_some_and(|o| o == flag || o.starts_with(&format!("{flag}=")))) {
            return UsageError::new(format!("in the flags after the job file (job [{}]): {message}", job.name));
        }
    }
    if (message.contains("TARGET") || message.contains("target"))
        && let Some((e, _)) = entries.iter().find(|(e, _)| e.key == TARGETS)
    {
        return UsageError::new(format!("{}:{}: key `targets` of [{}]: {message}", file.path, e.line, job.name));
    }
    UsageError::new(format!("{}:{}: job [{}]: {message}", file.path, job.line, job.name))
}

/// The two specs name one target path.
fn shares_a_target(a: &Spec, b: &Spec) -> bool {
    a.targets.iter().any(|t| b.targets.contains(t))
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn plan_of(text: &str, overrides: &[&str]) -> Result<Plan, String> {
        let file = parse("j.toml", text).map_err(|e| e.to_string())?;
        let overrides: Vec<OsString> = overrides.iter().map(OsString::from).collect();
        plan(&file, &overrides).map_err(|e| e.to_string())
    }

    #[test]
    fn a_job_inherits_global_and_overrides_it() {
        let p = plan_of(
            "[global]\nblock-size = \"8k\"\nduration = \"3s\"\n[a]\ntargets = [\"/x/a\"]\n[b]\ntargets = [\"/x/b\"]\nblock-size = 4096\nqueue-depth = 4\nrandom = true\n",
            &[],
        )
        .unwrap();
        assert_eq!(p.jobs.len(), 2);
        assert_eq!((p.jobs[0].spec.block_size_bytes, p.jobs[1].spec.block_size_bytes), (8192, 4096));
        assert_eq!(p.jobs[1].spec.queue_depth, 4);
        assert_eq!(p.jobs[0].spec.run_length, crate::spec::RunLength::Duration { ns: 3_000_000_000 });
        assert_eq!(p.phases(), 1);
    }

    #[test]
    fn flags_after_the_file_override_every_job_and_stonewall_starts_a_phase() {
        let p = plan_of(
            "[a]\ntargets = [\"/x/a\"]\nduration = \"9s\"\n[b]\nstonewall = true\ntargets = [\"/x/a\"]\n",
            &["--duration", "2s"],
        )
        .unwrap();
        for j in &p.jobs {
            assert_eq!(j.spec.run_length, crate::spec::RunLength::Duration { ns: 2_000_000_000 });
        }
        assert_eq!((p.jobs[0].phase, p.jobs[1].phase), (1, 2));
    }

    #[test]
    fn refusals_name_file_line_and_key() {
        let e = plan_of("[a]\n\nblocksize = \"8k\"\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:3: key `blocksize` of [a]: unknown key: did you mean `block-size`?"), "{e}");
        let e = plan_of("[a]\nblock-size = \"abc\"\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:2: key `block-size` of [a]: "), "{e}");
        let e = plan_of("[global]\nread-percent = 60\n[a]\nwrite-percent = 60\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:2: key `read-percent` of [global] (job [a]): "), "{e}");
        let e = plan_of("[a]\ndirect = \"yes\"\n", &[]).unwrap_err();
        assert!(e.contains("j.toml:2: key `direct` of [a]: --direct is a switch"), "{e}");
        let e = plan_of("[a]\njson = \"r.json\"\n", &[]).unwrap_err();
        assert!(e.contains("j.toml:2: key `json` of [a]"), "{e}");
        let e = plan_of("[a]\ntargets = [\"/x\"]\n[b]\ntargets = [\"/x\"]\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:3: jobs [a] and [b]"), "{e}");
        let e = plan_of("[a]\n", &["--block-size", "0"]).unwrap_err();
        assert!(e.starts_with("in the flags after the job file (job [a]): ") && e.contains("--block-size"), "{e}");
        let e = plan_of("[a]\n", &["/x"]).unwrap_err();
        assert!(e.contains("targets go in the job file"), "{e}");
    }
}
