//! The benchmark's flags taking comma lists, for `iopulse sweep`: `--queue-depth 1,4,16`
//! is three values, each checked by the flag's own parser as clap reads the command line,
//! so a bad value is refused naming its flag before anything runs. Flags whose one value
//! is itself a list (`--cpu-cores 0-3,8`, `--numa-zones`, `--bssplit`) keep it whole.

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use std::ffi::OsStr;

/// Flags whose one value has commas of its own: never an axis.
pub const LIST_VALUED: &[&str] =
    &["cpu-cores", "numa-zones", "bssplit", "expect", "meta-mix", "meta-phases", "meta-flow", "file-size-dist"];

/// The values a flag was given: one, or the items of its comma list, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Values(pub Vec<String>);

/// A flag's parser applied to each item of a comma list.
#[derive(Clone)]
struct ListOf {
    /// The flag as it takes one value.
    one: clap::Arg,
    whole: bool,
}

impl TypedValueParser for ListOf {
    type Value = Values;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<Values, clap::Error> {
        let flag = arg.and_then(|a| a.get_long()).unwrap_or("");
        let fail =
            |message: String| clap::Error::raw(ErrorKind::InvalidValue, format!("--{flag} {message}\n")).with_cmd(cmd);
        let text = value.to_str().ok_or_else(|| fail("is not UTF-8".into()))?;
        let items: Vec<String> =
            if self.whole { vec![text.to_string()] } else { text.split(',').map(|v| v.trim().to_string()).collect() };
        if items.iter().any(String::is_empty) {
            return Err(fail(format!(
                "{text}: an empty value in the list: give values separated by single commas, e.g. --{flag} 1,4,16"
            )));
        }
        if let Some(twice) = items.iter().enumerate().find(|(k, v)| items[..*k].contains(v)).map(|(_, v)| v) {
            return Err(fail(format!("{text}: `{twice}` is in the list twice: give each value once")));
        }
        for item in &items {
            super::table::check_value(&self.one, item).map_err(|e| e.with_cmd(cmd))?;
        }
        Ok(Values(items))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let values: Vec<clap::builder::PossibleValue> = self.one.get_possible_values();
        (!values.is_empty()).then(|| Box::new(values.into_iter()) as Box<dyn Iterator<Item = _>>)
    }
}

/// `command` with each flag of `longs` that takes a value taking a comma list of them.
pub fn with_lists(mut command: clap::Command, longs: &[String]) -> clap::Command {
    for long in longs {
        let Some(id) =
            command.get_arguments().find(|a| a.get_long() == Some(long.as_str())).map(|a| a.get_id().clone())
        else {
            continue;
        };
        command = command.mut_arg(id, |a| {
            if !a.get_action().takes_values() {
                return a;
            }
            let whole = a.get_long().is_some_and(|l| LIST_VALUED.contains(&l));
            let one = a.clone();
            a.value_parser(ListOf { one, whole })
        });
    }
    command
}

/// One flag as given to a command made by `with_lists`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Given {
    Switch,
    Values(Vec<String>),
}

/// The flags of `longs` given in `matches`, in the order they were given (a sweep's first
/// list is its first axis).
pub fn given(matches: &clap::ArgMatches, command: &clap::Command, longs: &[String]) -> Vec<(String, Given)> {
    let mut out: Vec<(usize, String, Given)> = Vec::new();
    for long in longs {
        let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(long.as_str())) else { continue };
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let at = matches.index_of(id).unwrap_or(usize::MAX);
        if arg.get_action().takes_values() {
            if let Some(Values(v)) = matches.get_one::<Values>(id) {
                out.push((at, long.clone(), Given::Values(v.clone())));
            }
        } else {
            out.push((at, long.clone(), Given::Switch));
        }
    }
    out.sort_by_key(|(at, _, _)| *at);
    out.into_iter().map(|(_, long, given)| (long, given)).collect()
}

/// The targets, the benchmark's flags (each may take a comma list) and the outputs of a
/// command that runs the benchmark many times (`iopulse sweep`, `iopulse search`).
#[derive(Clone, Debug, Default)]
pub struct ManyRunsArgs {
    pub targets: Vec<std::path::PathBuf>,
    /// The benchmark's flags given, in the order of its flags: each a switch or its values.
    pub flags: Vec<(String, Given)>,
    pub output: super::OutputArgs,
    /// `--timeseries` or `--start-at`, which such a command refuses (the flag and why).
    pub refused: Option<(&'static str, &'static str)>,
}

/// The long names of the benchmark's flags.
fn workload_flags() -> Vec<String> {
    super::command_of::<super::WorkloadArgs>()
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

/// Flags of the benchmark such a command refuses, and why.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "timeseries",
        "--timeseries",
        "one CSV of intervals per run does not fit many runs: give --interval 1s and read each run's time_series in the --json document",
    ),
    ("start_at", "--start-at", "not with many runs: start the command itself at that time"),
];

impl clap::FromArgMatches for ManyRunsArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let command = <ManyRunsArgs as clap::Args>::augment_args(clap::Command::new("runs"));
        let refused = REFUSED
            .iter()
            .find(|(id, _, _)| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
            .map(|(_, flag, why)| (*flag, *why));
        Ok(ManyRunsArgs {
            targets: matches
                .get_many::<std::path::PathBuf>("targets")
                .map(|t| t.cloned().collect())
                .unwrap_or_default(),
            flags: given(matches, &command, &workload_flags()),
            output: super::OutputArgs::from_arg_matches(matches)?,
            refused,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for ManyRunsArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        let command = command.arg(
            clap::Arg::new("targets")
                .value_name("TARGET")
                .num_args(0..)
                .value_parser(clap::value_parser!(std::path::PathBuf))
                .help("Regular files or block devices, as the benchmark's (none: a temporary file)."),
        );
        let command = REFUSED.iter().fold(command, |c, (id, flag, _)| {
            c.arg(clap::Arg::new(*id).long(&flag[2..]).value_name("VALUE").hide(true))
        });
        let command = <super::OutputArgs as clap::Args>::augment_args(command)
            .mut_arg("output_format", super::output::many_runs_format);
        with_lists(<super::WorkloadArgs as clap::Args>::augment_args(command), &workload_flags())
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl ManyRunsArgs {
    /// The flags as one run's (a search's): a list is refused.
    pub fn single(
        &self,
        command_name: &str,
    ) -> Result<super::WorkloadArgs, crate::base::diagnostics::error::UsageError> {
        let mut table = super::table::FlagTable::new();
        for (flag, given) in &self.flags {
            match given {
                Given::Switch => table.set(flag, super::table::FlagValue::Switch(true)),
                Given::Values(v) if v.len() == 1 => table.set(flag, super::table::FlagValue::Text(v[0].clone())),
                Given::Values(v) => {
                    return Err(crate::base::diagnostics::error::UsageError::new(format!(
                        "--{flag} {}: {command_name} takes one value per flag (lists are for `iopulse sweep`)",
                        v.join(",")
                    )));
                }
            }
        }
        table.fill(&super::command_of::<super::WorkloadArgs>()).map_err(|(flag, e)| {
            crate::base::diagnostics::error::UsageError::new(format!("--{flag}: {}", e.describe(&flag)))
        })
    }
}
