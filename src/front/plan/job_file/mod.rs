//! The plan of a job file (TOML, a fio file translated, or a profile): each job's table
//! over `[global]`'s, then the flags given with the file (`overrides`), fills the same
//! typed flag groups a command line fills (`cli::table`), and becomes a `Spec` through the
//! same checks. A refusal names the file, the line and the key that caused it. A job's
//! `write-iolog` is its own file as given; one in `[global]` or given with the file is a
//! file per job (`plan::iologs`).
//!
//! Everything is checked here, for every job of every phase, before any job runs. It
//! must not touch a target; it knows which keys exist only through the clap commands of
//! the flag groups.

pub mod parse;

use super::{IologFile, Job, Phase, Plan, iologs};
use crate::base::diagnostics::error::UsageError;
use crate::front::cli::table::{FlagTable, FlagValue, KeyError};
use crate::front::cli::{IologArgs, OutputArgs, TimeseriesArgs, WorkloadArgs, command_of};
use parse::{Entry, JobFile, Value};
use std::collections::HashMap;
use std::path::PathBuf;

/// Keys of a job file that are not flags.
const TARGETS: &str = "targets";
const STONEWALL: &str = "stonewall";
/// Keys a job file does not take, and why.
const REFUSED: &[(&str, &str)] = &[
    ("start-at", "not with job files yet: start the run itself at that time"),
    (
        "profile",
        "a profile is a job file of its own: run it with `iopulse --profile NAME`, or print it with `iopulse profiles NAME` and copy its jobs here",
    ),
    ("help", "not a job file key"),
    ("version", "not a job file key"),
];

/// The flags of a job file: the workload's, the outputs' (which belong to the whole run),
/// and `write-iolog` (a job's own, or a file per job).
struct Commands {
    workload: clap::Command,
    output: clap::Command,
    timeseries: clap::Command,
    iolog: clap::Command,
}

impl Commands {
    fn new() -> Self {
        Self {
            workload: command_of::<WorkloadArgs>(),
            output: command_of::<OutputArgs>(),
            timeseries: command_of::<TimeseriesArgs>(),
            iolog: command_of::<IologArgs>(),
        }
    }

    fn is_output(&self, key: &str) -> bool {
        [&self.output, &self.timeseries].iter().any(|c| c.get_arguments().any(|a| a.get_long() == Some(key)))
    }

    /// The command `key` belongs to (the workload's when none: its refusal names the key).
    fn of(&self, key: &str) -> &clap::Command {
        [&self.output, &self.timeseries, &self.iolog]
            .into_iter()
            .find(|c| c.get_arguments().any(|a| a.get_long() == Some(key)))
            .unwrap_or(&self.workload)
    }
}

/// The flags given with the job file (after it on `iopulse run`, or with `--profile`).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub table: FlagTable,
    /// `iopulse run FILE --target PATH`: every job's targets instead of the file's.
    pub targets: Vec<PathBuf>,
    /// How the messages name them: "the flags after the job file".
    pub said_as: String,
}

/// Every job of `file` checked, with `overrides` applied to each; `inputs` the files the
/// plan was read from (never written).
pub fn plan(file: &JobFile, overrides: &Overrides, inputs: Vec<PathBuf>) -> Result<Plan, UsageError> {
    let commands = Commands::new();
    for e in &file.global {
        check_entry(&commands, file, "global", e)?;
        if e.key == STONEWALL {
            return Err(at(file, e, "global", "stonewall belongs to the job that starts a new phase, not to [global]"));
        }
    }
    let mut phases: Vec<Phase> = Vec::new();
    // The identity of every target of the current phase, and the job (its index) it is of.
    let mut phase_targets = HashMap::new();
    let mut timeseries = false;
    let output = output_of(file, overrides, &commands, &mut timeseries)?;
    // A `write-iolog` given for every job becomes a file per job, named after it.
    let names: Vec<&str> = file.jobs.iter().map(|j| j.name.as_str()).collect();
    let mut per_job = None;
    for (index, job) in file.jobs.iter().enumerate() {
        for e in &job.entries {
            check_entry(&commands, file, &job.name, e)?;
            if commands.is_output(&e.key) {
                return Err(at(
                    file,
                    e,
                    &job.name,
                    "says where the results of the whole run go: put it in [global] or after the job file",
                ));
            }
        }
        let new_phase = index == 0 || job.entries.iter().any(|e| e.key == STONEWALL && e.value == Value::Switch(true));
        if new_phase {
            phases.push(Phase { number: phases.len() as u32 + 1, jobs: Vec::new() });
        }
        let entries = merged(&file.global, &job.entries, &commands);
        let mut spec = to_spec(file, &job.name, job.line, &entries, overrides, &commands, timeseries)?;
        let iolog = iolog_of(file, job, &entries, overrides, index, &names, &mut per_job)?;
        if let Some(log) = &iolog
            && spec.metadata.is_some()
        {
            return Err(UsageError::new(format!(
                "{}: an iolog records block I/O, and job [{}] runs on a tree of files (`files`), which issues none: leave write-iolog out of it",
                log.asked_by, job.name
            )));
        }
        spec.output.record_iolog = iolog.is_some();
        if new_phase {
            phase_targets.clear();
        }
        let phase = phases.last_mut().expect("the first job starts a phase");
        // Each target's identity is looked up once, so that thousands of jobs are checked
        // in one pass, not every pair of them.
        let mut own = HashMap::new();
        for t in &spec.targets {
            let id = crate::storage::targets::identity::PathIdentity::of(t);
            if let Some(&other) = phase_targets.get(&id) {
                let other: &Job = &phase.jobs[other];
                return Err(UsageError::new(format!(
                    "{}:{}: jobs [{}] and [{}] run at the same time on the same target: give each its own targets, or put stonewall = true in [{}] to run it after",
                    file.path, job.line, other.name, job.name, job.name
                )));
            }
            own.insert(id, phase.jobs.len());
        }
        phase_targets.extend(own);
        phase.jobs.push(Job { name: job.name.clone(), spec, iolog });
    }
    Ok(Plan { source: file.path.clone(), phases, output, inputs })
}

/// Job `index`'s `write-iolog`: the flags given with the file (a file per job), else the
/// job's own key (its file as given), else `[global]`'s (a file per job). `names`: every
/// job's, in file order; `per_job`: the files per job once made from a shared path.
fn iolog_of(
    file: &JobFile,
    job: &parse::Job,
    entries: &[(&Entry, bool)],
    overrides: &Overrides,
    index: usize,
    names: &[&str],
    per_job: &mut Option<(PathBuf, Vec<PathBuf>)>,
) -> Result<Option<IologFile>, UsageError> {
    let mut shared = |path: PathBuf, said_as: String| -> Result<Option<IologFile>, UsageError> {
        iologs::refuse_stream(&path, &said_as, "each job")?;
        if per_job.as_ref().is_none_or(|(p, _)| *p != path) {
            *per_job = Some((path.clone(), iologs::per_job(&path, names)));
        }
        let paths = &per_job.as_ref().expect("made above").1;
        Ok(Some(IologFile { path: paths[index].clone(), asked_by: format!("{said_as} (job [{}])", job.name) }))
    };
    if let Some(value) = overrides.table.get(iologs::KEY) {
        let FlagValue::Text(path) = value else {
            return Err(UsageError::new(format!(
                "{}: --write-iolog takes a file, e.g. --write-iolog run.iolog",
                overrides.said_as
            )));
        };
        return shared(PathBuf::from(path), format!("--write-iolog {}", overrides.said_as));
    }
    let Some((e, from_global)) = entries.iter().find(|(e, _)| e.key == iologs::KEY) else { return Ok(None) };
    // `check_entry` let only a text through.
    let Value::Text(path) = &e.value else { return Ok(None) };
    if *from_global {
        let said_as = format!("{}:{}: key `{}` of [global]", file.path, e.line, e.key);
        return shared(PathBuf::from(path), said_as);
    }
    let asked_by = format!("{}:{}: key `{}` of [{}]", file.path, e.line, e.key, job.name);
    iologs::refuse_stream(std::path::Path::new(path), &asked_by, "each job")?;
    Ok(Some(IologFile { path: PathBuf::from(path), asked_by }))
}

/// Where the results go: `[global]`'s output keys, then the flags given with the file.
fn output_of(
    file: &JobFile,
    overrides: &Overrides,
    commands: &Commands,
    timeseries: &mut bool,
) -> Result<crate::output::report::OutputOptions, UsageError> {
    let mut table = FlagTable::new();
    for e in file.global.iter().filter(|e| commands.is_output(&e.key)) {
        table.set(&e.key, flag_value(&e.value));
    }
    table.overlay(&overrides.table);
    let fill_error =
        |(key, e): (String, KeyError)| UsageError::new(format!("{}: --{key}: {}", overrides.said_as, e.describe(&key)));
    let output: OutputArgs = table.fill(&commands.output).map_err(fill_error)?;
    let series: TimeseriesArgs = table.fill(&commands.timeseries).map_err(fill_error)?;
    let options = output.options(&series);
    *timeseries = series.timeseries.is_some() || options.format.wants_interval_rows();
    Ok(options)
}

/// A key must be a flag's long name (or `targets`, `stonewall`) with a value of its kind.
fn check_entry(commands: &Commands, file: &JobFile, table: &str, e: &Entry) -> Result<(), UsageError> {
    if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == e.key) {
        return Err(at(file, e, table, why));
    }
    match (e.key.as_str(), &e.value) {
        (TARGETS, Value::List(_) | Value::Text(_)) => Ok(()),
        (TARGETS, Value::Switch(_)) => {
            Err(at(file, e, table, "give the target paths, e.g. targets = [\"/data/a.dat\"]"))
        }
        (STONEWALL, Value::Switch(_)) => Ok(()),
        (STONEWALL, _) => Err(at(file, e, table, "give true or false")),
        // A flag whose one value is a comma list takes a TOML list too (`expect = [...]`).
        (key, Value::List(_))
            if !crate::front::cli::lists::LIST_VALUED.contains(&key)
                && commands.of(key).get_arguments().any(|a| a.get_long() == Some(key)) =>
        {
            Err(at(file, e, table, &format!("--{key} takes one value, not a list")))
        }
        (key, value) => FlagTable::check_key(commands.of(key), key, &flag_value(value))
            .map_err(|k| at(file, e, table, &k.describe(key))),
    }
}

fn flag_value(value: &Value) -> FlagValue {
    match value {
        Value::Switch(b) => FlagValue::Switch(*b),
        Value::Text(t) => FlagValue::Text(t.clone()),
        Value::List(items) => FlagValue::Text(items.join(",")),
    }
}

/// "FILE:LINE: key `K` of [TABLE]: WHY".
fn at(file: &JobFile, e: &Entry, table: &str, why: &str) -> UsageError {
    UsageError::new(format!("{}:{}: key `{}` of [{table}]: {why}", file.path, e.line, e.key))
}

/// [global]'s workload entries that the job does not give, then the job's own (each with
/// whether it came from [global]).
fn merged<'a>(global: &'a [Entry], job: &'a [Entry], commands: &Commands) -> Vec<(&'a Entry, bool)> {
    global
        .iter()
        .filter(|g| !commands.is_output(&g.key) && !job.iter().any(|j| j.key == g.key))
        .map(|g| (g, true))
        .chain(job.iter().map(|j| (j, false)))
        .collect()
}

/// The job's flags filled from its entries and the overrides, checked as the benchmark's.
fn to_spec(
    file: &JobFile,
    name: &str,
    line: usize,
    entries: &[(&Entry, bool)],
    overrides: &Overrides,
    commands: &Commands,
    timeseries: bool,
) -> Result<crate::workload::spec::Spec, UsageError> {
    let mut table = FlagTable::new();
    let mut targets: Vec<PathBuf> = Vec::new();
    for (e, _) in entries {
        match (&e.value, e.key.as_str()) {
            (Value::List(paths), TARGETS) => targets = paths.iter().map(PathBuf::from).collect(),
            (Value::Text(path), TARGETS) => targets = vec![PathBuf::from(path)],
            (_, STONEWALL) => {}
            (value, key) => table.set(key, flag_value(value)),
        }
    }
    table.overlay(&overrides.table);
    if !overrides.targets.is_empty() {
        targets = overrides.targets.clone();
    }
    let blame = |message: String| blame(file, name, line, entries, overrides, &message);
    let workload: WorkloadArgs =
        table.fill(&commands.workload).map_err(|(key, e)| blame(format!("--{key}: {}", e.describe(&key))))?;
    workload.into_spec(targets, timeseries).map_err(|e| blame(e.message))
}

/// The refusal `message` of job `name`, naming the key of the file it is about: the first
/// flag the message names that the job's table (or [global]) gives.
fn blame(
    file: &JobFile,
    name: &str,
    line: usize,
    entries: &[(&Entry, bool)],
    overrides: &Overrides,
    message: &str,
) -> UsageError {
    let mut rest = message;
    while let Some(i) = rest.find("--") {
        let flag: String = rest[i + 2..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        rest = &rest[i + 2..];
        if overrides.table.get(&flag).is_some() {
            return UsageError::new(format!("{} (job [{name}]): {message}", overrides.said_as));
        }
        if let Some((e, from_global)) = entries.iter().find(|(e, _)| e.key == flag) {
            let table = if *from_global { format!("[global] (job [{name}])") } else { format!("[{name}]") };
            return UsageError::new(format!("{}:{}: key `{}` of {table}: {message}", file.path, e.line, e.key));
        }
    }
    if (message.contains("TARGET") || message.contains("target"))
        && let Some((e, _)) = entries.iter().find(|(e, _)| e.key == TARGETS)
    {
        return UsageError::new(format!("{}:{}: key `targets` of [{name}]: {message}", file.path, e.line));
    }
    UsageError::new(format!("{}:{line}: job [{name}]: {message}", file.path))
}

#[cfg(test)]
mod tests {
    use super::parse::parse;
    use super::*;

    fn plan_of(text: &str, overrides: &[(&str, FlagValue)]) -> Result<Plan, String> {
        let file = parse("j.toml", text).map_err(|e| e.to_string())?;
        let mut table = FlagTable::new();
        for (k, v) in overrides {
            table.set(k, v.clone());
        }
        let overrides = Overrides { table, targets: Vec::new(), said_as: "in the flags after the job file".into() };
        plan(&file, &overrides, Vec::new()).map_err(|e| e.to_string())
    }

    fn text(v: &str) -> FlagValue {
        FlagValue::Text(v.into())
    }

    #[test]
    fn a_job_inherits_global_and_overrides_it() {
        let p = plan_of(
            "[global]\nblock-size = \"8k\"\nduration = \"3s\"\n[a]\ntargets = [\"/x/a\"]\n[b]\ntargets = [\"/x/b\"]\nblock-size = 4096\nqueue-depth = 4\nrandom = true\n",
            &[],
        )
        .unwrap();
        let jobs: Vec<&Job> = p.jobs().collect();
        assert_eq!(jobs.len(), 2);
        assert_eq!((jobs[0].spec.shape.block_size_bytes, jobs[1].spec.shape.block_size_bytes), (8192, 4096));
        assert_eq!(jobs[1].spec.shape.queue_depth, 4);
        assert_eq!(jobs[0].spec.window.run_length, crate::workload::spec::RunLength::Duration { ns: 3_000_000_000 });
        assert_eq!(p.phases.len(), 1);
    }

    #[test]
    fn flags_given_with_the_file_override_every_job_and_stonewall_starts_a_phase() {
        let p = plan_of(
            "[a]\ntargets = [\"/x/a\"]\nduration = \"9s\"\n[b]\nstonewall = true\ntargets = [\"/x/a\"]\n",
            &[("duration", text("2s"))],
        )
        .unwrap();
        for j in p.jobs() {
            assert_eq!(j.spec.window.run_length, crate::workload::spec::RunLength::Duration { ns: 2_000_000_000 });
        }
        assert_eq!(p.phases.iter().map(|ph| ph.jobs.len()).collect::<Vec<_>>(), [1, 1]);
    }

    #[test]
    fn write_iolog_is_a_jobs_own_file_or_one_per_job_from_global_or_the_flags() {
        let logs = |p: &Plan| -> Vec<(Option<PathBuf>, bool)> {
            p.jobs().map(|j| (j.iolog.as_ref().map(|l| l.path.clone()), j.spec.output.record_iolog)).collect()
        };
        let file = "[global]\nwrite-iolog = \"/l/run.iolog\"\n[a]\n[\"b/c\"]\nwrite-iolog = \"/l/own.iolog\"\n[d]\n";
        let p = plan_of(file, &[]).unwrap();
        assert_eq!(
            logs(&p),
            [
                (Some("/l/run-a.iolog".into()), true),
                (Some("/l/own.iolog".into()), true),
                (Some("/l/run-d.iolog".into()), true)
            ]
        );
        let asked: Vec<&str> = p.jobs().map(|j| j.iolog.as_ref().unwrap().asked_by.as_str()).collect();
        assert_eq!(asked[0], "j.toml:2: key `write-iolog` of [global] (job [a])");
        assert_eq!(asked[1], "j.toml:5: key `write-iolog` of [b/c]");
        // The flag after the file: a file per job, over every key of the file.
        let p = plan_of(file, &[("write-iolog", text("/f/x.log"))]).unwrap();
        assert_eq!(
            logs(&p),
            [(Some("/f/x-a.log".into()), true), (Some("/f/x-b_c.log".into()), true), (Some("/f/x-d.log".into()), true)]
        );
        assert!(p.jobs().next().unwrap().iolog.as_ref().unwrap().asked_by.starts_with("--write-iolog in the flags"));
        // None asked: nothing recorded, nothing planned.
        assert_eq!(logs(&plan_of("[a]\n[b]\n", &[]).unwrap()), [(None, false), (None, false)]);
        let e = plan_of("[a]\nwrite-iolog = \"/dev/stdout\"\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:2: key `write-iolog` of [a]: /dev/stdout is a stream"), "{e}");
        let e = plan_of("[a]\nwrite-iolog = true\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:2: key `write-iolog` of [a]: --write-iolog takes a value"), "{e}");
    }

    #[test]
    fn a_target_is_a_path_whatever_its_name() {
        let p = plan_of("[a]\ntargets = [\"--force\", \"--write-percent=100\"]\n", &[]).unwrap();
        let spec = &p.phases[0].jobs[0].spec;
        assert_eq!(spec.targets, [PathBuf::from("--force"), PathBuf::from("--write-percent=100")]);
        assert!(!spec.force && spec.access.read_percent == 100, "{spec:?}");
    }

    #[test]
    fn refusals_name_file_line_and_key() {
        let e = plan_of("[a]\n\nblok-size = \"8k\"\n", &[]).unwrap_err();
        assert!(e.starts_with("j.toml:3: key `blok-size` of [a]: unknown key: did you mean `block-size`?"), "{e}");
        let e = plan_of("[a]\nbs = \"8k\"\n", &[]).unwrap_err();
        assert!(e.contains("`bs` is fio's name: iopulse calls this --block-size"), "{e}");
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
        let e = plan_of("[a]\n", &[("block-size", text("0"))]).unwrap_err();
        assert!(e.starts_with("in the flags after the job file (job [a]): ") && e.contains("--block-size"), "{e}");
    }
}
