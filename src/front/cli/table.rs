//! Flag values by flag name, as the ways in other than one command line give them: a job
//! file's tables (and a profile's), a sweep's point, the flags given after a job file or
//! with `--profile`. A table fills the same typed groups (`WorkloadArgs`, `OutputArgs`)
//! that clap fills from a command line, through serde, each value parsed by its type's
//! own parser; no argument list is rebuilt, so a value (a target named `--force`) is
//! never read as a flag.
//!
//! It knows which keys exist and what each takes only through the clap command of the
//! group it fills. It parses values; whether they suit a run is `WorkloadArgs::into_spec`'s.

use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::ffi::OsString;

/// One flag's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlagValue {
    /// A switch given true or false.
    Switch(bool),
    /// A flag's value as typed (`4k`, `io_uring`, `32`).
    Text(String),
}

/// Values by flag, a later value for one flag replacing the earlier one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlagTable {
    /// By the flag's long name (`block-size`).
    values: BTreeMap<String, FlagValue>,
}

/// Why a key cannot fill the group: the message names the flag (`--block-size`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// No flag of that name.
    Unknown { near: Option<String> },
    /// A switch given a value, or a flag that takes a value given true/false.
    Kind(String),
    /// The flag's parser refused the value.
    Value(String),
}

impl FlagTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `long` (a flag's long name, without dashes) to `value`.
    pub fn set(&mut self, long: &str, value: FlagValue) {
        self.values.insert(long.to_string(), value);
    }

    pub fn get(&self, long: &str) -> Option<&FlagValue> {
        self.values.get(long)
    }

    pub fn remove(&mut self, long: &str) -> Option<FlagValue> {
        self.values.remove(long)
    }

    /// Every flag and its value, in name order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &FlagValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every value of `other` over this table's.
    pub fn overlay(&mut self, other: &FlagTable) {
        for (k, v) in &other.values {
            self.values.insert(k.clone(), v.clone());
        }
    }

    /// The flags of `command` given on the command line that `matches` was parsed from,
    /// with their values as typed (a switch is true).
    pub fn from_matches(command: &clap::Command, matches: &clap::ArgMatches) -> FlagTable {
        let mut table = FlagTable::new();
        for arg in command.get_arguments() {
            let (id, Some(long)) = (arg.get_id().as_str(), arg.get_long()) else { continue };
            if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
                continue;
            }
            let value = if arg.get_action().takes_values() {
                let Some(raw) = matches.get_raw(id).and_then(|mut v| v.next_back()) else { continue };
                FlagValue::Text(raw.to_string_lossy().into_owned())
            } else {
                FlagValue::Switch(true)
            };
            table.set(long, value);
        }
        table
    }

    /// Checks one key against `command`'s flags: it exists, it is given a value of its
    /// kind, and the flag's own parser takes the value.
    pub fn check_key(command: &clap::Command, long: &str, value: &FlagValue) -> Result<(), KeyError> {
        let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(long) && !a.is_hide_set()) else {
            let near = command
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long())
                .map(|k| (strsim::levenshtein(k, long), k))
                .filter(|(d, _)| *d <= 2)
                .min()
                .map(|(_, k)| k.to_string());
            // A hidden former name (`no-invalidate`) still works.
            if command.get_arguments().any(|a| a.get_long() == Some(long)) {
                return Ok(());
            }
            return Err(KeyError::Unknown { near });
        };
        let takes_value = arg.get_action().takes_values();
        match (value, takes_value) {
            (FlagValue::Switch(_), false) => Ok(()),
            (FlagValue::Text(text), true) => {
                check_value(arg, text).map_err(|e| KeyError::Value(crate::base::diagnostics::error::clap_one_line(&e)))
            }
            (FlagValue::Text(_), false) => {
                Err(KeyError::Kind(format!("--{long} is a switch: give {long} = true or false")))
            }
            (FlagValue::Switch(_), true) => {
                let example = arg
                    .get_value_names()
                    .and_then(|n| n.first())
                    .map_or_else(|| "VALUE".to_string(), |n| n.to_string());
                Err(KeyError::Kind(format!("--{long} takes a value, e.g. {long} = \"{example}\"")))
            }
        }
    }

    /// The group `T` (whose clap command is `command`) filled from this table; keys that
    /// are not flags of `command` are left to other groups. Each key is checked first
    /// (`check_key`), so a refusal names its flag.
    pub fn fill<T: DeserializeOwned>(&self, command: &clap::Command) -> Result<T, (String, KeyError)> {
        let mut map = serde_json::Map::new();
        for (long, value) in &self.values {
            let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(long.as_str())) else { continue };
            Self::check_key(command, long, value).map_err(|e| (long.clone(), e))?;
            let json = match value {
                FlagValue::Switch(b) => serde_json::Value::Bool(*b),
                FlagValue::Text(t) => serde_json::Value::String(t.clone()),
            };
            map.insert(arg.get_id().as_str().to_string(), json);
        }
        serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| {
            // Every key passed its flag's parser above: a failure here is a flag whose serde
            // reading differs from clap's (a test over every flag keeps them equal).
            (String::new(), KeyError::Value(e.to_string()))
        })
    }
}

/// `text` as a value of `arg`, read by the flag's own parser exactly as on a command line
/// (a command of that one flag reads it; its value is attached, never a flag of its own).
pub fn check_value(arg: &clap::Arg, text: &str) -> Result<(), clap::Error> {
    let long = arg.get_long().unwrap_or_default();
    let mut token = OsString::from(format!("--{long}="));
    token.push(text);
    clap::Command::new("iopulse").no_binary_name(true).arg(arg.clone()).try_get_matches_from([token]).map(|_| ())
}

impl KeyError {
    /// The refusal in words, for the key `long`.
    pub fn describe(&self, long: &str) -> String {
        match self {
            KeyError::Unknown { near } => {
                let near = near.as_ref().map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
                match crate::front::fio::flag_names::iopulse_name_of(&long.replace('-', "_")) {
                    Some(ours) => format!("unknown key: `{long}` is fio's name: iopulse calls this {ours}"),
                    None => format!(
                        "unknown key: {near}keys are the long names of iopulse's flags (iopulse --help) and `targets`, `stonewall`"
                    ),
                }
            }
            KeyError::Kind(m) | KeyError::Value(m) => m.clone(),
        }
    }
}
