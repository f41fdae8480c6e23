//! The grid of a sweep: a benchmark command line in which any flag's value may be a comma
//! list (`--queue-depth 1,4,16 --block-size 512,4k`). Each list is an axis; the points are
//! every combination, the first axis varying slowest. Every point's command line is parsed
//! by the benchmark's own parser (`cli::Args`) here, before anything runs, so a bad value is
//! a usage error naming the flag and the point, and nothing is touched.
//!
//! It must not touch a target; it knows the flags only through the clap command.

use crate::cli::Args;
use crate::error::UsageError;
use crate::spec::Spec;
use clap::{CommandFactory, Parser};
use std::ffi::OsString;

/// Flags whose one value is itself a comma list: never an axis.
/// Flags whose value has commas of its own (not a list of runs): `--bssplit`'s separate
/// the reads' split from the writes'.
const LIST_VALUED: &[&str] = &["cpu-cores", "numa-zones", "bssplit"];

/// Flags a sweep or a search does not take among the benchmark's, and why.
const REFUSED: &[(&str, &str)] = &[
    (
        "timeseries",
        "one CSV of intervals per run does not fit many runs: give --interval 1s and read each run's time_series in the --json document",
    ),
    ("start-at", "not with sweeps: start the sweep itself at that time"),
];

/// One list: the flag's long name (without `--`) and its values, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub flag: String,
    pub values: Vec<String>,
}

/// One combination of the axes' values, parsed.
#[derive(Clone, Debug)]
pub struct Point {
    /// (flag, value) for each axis, in the axes' order.
    pub params: Vec<(String, String)>,
    /// The benchmark's command line of this point (without the program name).
    pub argv: Vec<OsString>,
    pub spec: Spec,
}

impl Point {
    /// "queue-depth=4 block-size=4k" (or "(one point)" for a grid without axes).
    pub fn label(&self) -> String {
        if self.params.is_empty() {
            return "(one point)".to_string();
        }
        self.params.iter().map(|(f, v)| format!("{f}={v}")).collect::<Vec<_>>().join(" ")
    }

    /// What identifies the point across runs of the sweep (`--resume`): its command line.
    pub fn key(&self) -> String {
        self.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }
}

#[derive(Clone, Debug)]
pub struct Grid {
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
}

/// A token of the command line: given as is, or an axis's value at this place.
enum Token {
    Fixed(OsString),
    Axis(usize),
}

/// Expands `argv` (the benchmark's flags, without the program name) into its grid.
/// `command` names the subcommand in messages ("iopulse sweep").
pub fn expand(argv: &[OsString], command: &str) -> Result<Grid, UsageError> {
    let (tokens, axes) = tokenize(argv, command)?;
    let total: usize = axes.iter().map(|a| a.values.len()).product();
    const MOST_POINTS: usize = 100_000;
    if total > MOST_POINTS {
        return Err(UsageError::new(format!(
            "the lists make {total} points: at most {MOST_POINTS}; give shorter lists"
        )));
    }
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        // Mixed radix, the last axis fastest.
        let mut rest = index;
        let mut chosen = vec![0; axes.len()];
        for (a, axis) in axes.iter().enumerate().rev() {
            chosen[a] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        let params: Vec<(String, String)> =
            axes.iter().zip(&chosen).map(|(a, &i)| (a.flag.clone(), a.values[i].clone())).collect();
        let argv: Vec<OsString> = tokens
            .iter()
            .map(|t| match t {
                Token::Fixed(s) => s.clone(),
                Token::Axis(a) => OsString::from(format!("--{}={}", axes[*a].flag, axes[*a].values[chosen[*a]])),
            })
            .collect();
        let label = if params.is_empty() {
            String::new()
        } else {
            format!("point {}: ", params.iter().map(|(f, v)| format!("{f}={v}")).collect::<Vec<_>>().join(" "))
        };
        let spec = parse(&argv).map_err(|e| UsageError::new(format!("{label}{e}")))?;
        points.push(Point { params, argv, spec });
    }
    Ok(Grid { axes, points })
}

/// The benchmark's parser over one point's command line.
pub fn parse(argv: &[OsString]) -> Result<Spec, String> {
    let full = std::iter::once(OsString::from("iopulse")).chain(argv.iter().cloned());
    let args = Args::try_parse_from(full).map_err(|e| crate::error::clap_one_line(&e))?;
    args.into_spec().map(|(spec, _)| spec).map_err(|e| e.message)
}

/// The benchmark's parser over `argv` then `overrides`, a flag given again overriding the
/// earlier one (a search's `--rate-iops`, `--queue-depth`).
pub fn parse_overridden(argv: &[OsString], overrides: &[String]) -> Result<Spec, String> {
    use clap::FromArgMatches;
    let full = std::iter::once(OsString::from("iopulse"))
        .chain(argv.iter().cloned())
        .chain(overrides.iter().map(OsString::from));
    let mut matches = Args::command()
        .args_override_self(true)
        .try_get_matches_from(full)
        .map_err(|e| crate::error::clap_one_line(&e))?;
    let args = Args::from_arg_matches_mut(&mut matches).map_err(|e| crate::error::clap_one_line(&e))?;
    args.into_spec().map(|(spec, _)| spec).map_err(|e| e.message)
}

/// Splits the command line into tokens and axes; refuses flags a sweep does not take, an
/// axis given twice and empty list items.
fn tokenize(argv: &[OsString], command: &str) -> Result<(Vec<Token>, Vec<Axis>), UsageError> {
    let clap_command = Args::command();
    let mut tokens = Vec::new();
    let mut axes: Vec<Axis> = Vec::new();
    let mut i = 0;
    let mut positional_only = false;
    while i < argv.len() {
        let token = &argv[i];
        i += 1;
        let Some(text) = token.to_str().filter(|t| !positional_only && t.starts_with("--") && t.len() > 2) else {
            positional_only |= token == "--";
            tokens.push(Token::Fixed(token.clone()));
            continue;
        };
        let (name, inline) = match text[2..].split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (text[2..].to_string(), None),
        };
        if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == name) {
            return Err(UsageError::new(format!("--{name} with `{command}`: {why}")));
        }
        let takes_value = clap_command
            .get_arguments()
            .find(|a| a.get_long() == Some(name.as_str()))
            .is_some_and(|a| a.get_action().takes_values());
        if !takes_value {
            // A switch, or a flag clap will refuse with its own message.
            tokens.push(Token::Fixed(token.clone()));
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => match argv.get(i).and_then(|v| v.to_str()) {
                Some(v) => {
                    i += 1;
                    v.to_string()
                }
                None => {
                    // Missing or not UTF-8: clap says what is wrong.
                    tokens.push(Token::Fixed(token.clone()));
                    continue;
                }
            },
        };
        if !value.contains(',') || LIST_VALUED.contains(&name.as_str()) {
            tokens.push(Token::Fixed(format!("--{name}={value}").into()));
            continue;
        }
        if axes.iter().any(|a| a.flag == name) {
            return Err(UsageError::new(format!(
                "--{name} is given twice with a list: give it once, e.g. --{name} {value}"
            )));
        }
        let values: Vec<String> = value.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(UsageError::new(format!(
                "--{name} {value}: an empty value in the list: give values separated by single commas, e.g. --{name} 1,4,16"
            )));
        }
        if let Some(twice) = values.iter().enumerate().find(|(k, v)| values[..*k].contains(v)).map(|(_, v)| v) {
            return Err(UsageError::new(format!(
                "--{name} {value}: `{twice}` is in the list twice: give each value once"
            )));
        }
        tokens.push(Token::Axis(axes.len()));
        axes.push(Axis { flag: name, values });
    }
    Ok((tokens, axes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(args: &str) -> Result<Grid, String> {
        let argv: Vec<OsString> = args.split_whitespace().map(OsString::from).collect();
        expand(&argv, "iopulse sweep").map_err(|e| e.message)
    }

    #[test]
    fn lists_span_a_grid_first_axis_slowest() {
        let g = grid("--engine null --queue-depth 1,4 --block-size=512,4k --threads 2").unwrap();
        assert_eq!(g.axes.len(), 2);
        assert_eq!(g.points.len(), 4);
        let specs: Vec<(u32, u64, u32)> =
            g.points.iter().map(|p| (p.spec.queue_depth, p.spec.block_size_bytes, p.spec.threads)).collect();
        assert_eq!(specs, vec![(1, 512, 2), (1, 4096, 2), (4, 512, 2), (4, 4096, 2)]);
        assert_eq!(g.points[1].label(), "queue-depth=1 block-size=4k");
        assert_ne!(g.points[0].key(), g.points[1].key());
    }

    #[test]
    fn no_list_is_one_point_and_list_valued_flags_stay_whole() {
        let g = grid("--engine null --queue-depth 2").unwrap();
        assert_eq!((g.axes.len(), g.points.len()), (0, 1));
        assert_eq!(g.points[0].label(), "(one point)");
        let g = grid("--engine null --cpu-cores 0,0").unwrap();
        assert_eq!(g.points.len(), 1);
    }

    #[test]
    fn bad_values_name_the_flag_and_the_point() {
        let e = grid("--engine null --queue-depth 1,0").unwrap_err();
        assert!(e.contains("point queue-depth=0") && e.contains("--queue-depth"), "{e}");
        let e = grid("--queue-depth 1,,4").unwrap_err();
        assert!(e.contains("an empty value") && e.contains("--queue-depth"), "{e}");
        let e = grid("--queue-depth 1,4 --queue-depth 2,8").unwrap_err();
        assert!(e.contains("given twice"), "{e}");
        let e = grid("--queue-depth 4,4").unwrap_err();
        assert!(e.contains("`4` is in the list twice"), "{e}");
        let e = grid("--timeseries t.csv").unwrap_err();
        assert!(e.starts_with("--timeseries with `iopulse sweep`"), "{e}");
        let e = grid("--nope 1,2").unwrap_err();
        assert!(e.contains("--nope"), "{e}");
    }
}
