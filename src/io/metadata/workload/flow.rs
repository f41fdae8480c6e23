//! A flow (`--meta-flow`): filebench's flowops as steps each worker runs in order on the
//! file it holds, the groups that repeat them (`10*(open,read-whole,close)`), the checks
//! that every step finds its file, and `--prealloc`, the share of the names the set-up
//! makes for them. Plain data and parsing; it runs nothing (`io/metadata/flow.rs` does).

use super::MetaOp;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// One step of a flow (`--meta-flow`), after filebench's flowop of the same role (named
/// beside each). The steps between an `open` (or `create`) and its `close` act on the file
/// it holds; the others pick a file of the worker's own in turn (a rotor over its files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowStep {
    /// deletefile: unlink the next existing file.
    Delete,
    /// createfile: create the next absent file, empty, and hold it.
    Create,
    /// openfile: open the next existing file and hold it.
    Open,
    /// closefile: close the held file.
    Close,
    /// readwholefile: read the held file from its start to its end, in reads of `FLOW_IO_BYTES`.
    ReadWhole,
    /// writewholefile: write the held file's size from its start, in writes of `FLOW_IO_BYTES`.
    WriteWhole,
    /// appendfilerand: append 0 to block size − 2 bytes (uniform) at the held file's end.
    AppendRand,
    /// fsync: fsync the held file.
    Fsync,
    /// statfile: stat the next existing file.
    Stat,
    /// appendfilerand to the run's one log file, which every worker holds open from its
    /// first append on (filebench's webserver: `fd=2` on a fileset of one file).
    AppendLog,
}

/// Bytes per read of `read-whole` and per write of `write-whole` (filebench's personalities'
/// `iosize`).
pub const FLOW_IO_BYTES: usize = 1 << 20;

impl FlowStep {
    pub const ALL: [FlowStep; 10] = [
        FlowStep::Delete,
        FlowStep::Create,
        FlowStep::Open,
        FlowStep::Close,
        FlowStep::ReadWhole,
        FlowStep::WriteWhole,
        FlowStep::AppendRand,
        FlowStep::Fsync,
        FlowStep::Stat,
        FlowStep::AppendLog,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FlowStep::Delete => "delete",
            FlowStep::Create => "create",
            FlowStep::Open => "open",
            FlowStep::Close => "close",
            FlowStep::ReadWhole => "read-whole",
            FlowStep::WriteWhole => "write-whole",
            FlowStep::AppendRand => "append-rand",
            FlowStep::Fsync => "fsync",
            FlowStep::Stat => "stat",
            FlowStep::AppendLog => "append-log",
        }
    }

    /// The filebench flowop it follows.
    pub fn filebench_name(self) -> &'static str {
        match self {
            FlowStep::Delete => "deletefile",
            FlowStep::Create => "createfile",
            FlowStep::Open => "openfile",
            FlowStep::Close => "closefile",
            FlowStep::ReadWhole => "readwholefile",
            FlowStep::WriteWhole => "writewholefile",
            FlowStep::AppendRand | FlowStep::AppendLog => "appendfilerand",
            FlowStep::Fsync => "fsync",
            FlowStep::Stat => "statfile",
        }
    }

    /// The operation kind whose figures it adds to.
    pub fn kind(self) -> MetaOp {
        match self {
            FlowStep::Delete => MetaOp::Unlink,
            FlowStep::Create => MetaOp::Create,
            FlowStep::Open => MetaOp::Open,
            FlowStep::Close => MetaOp::Close,
            FlowStep::ReadWhole => MetaOp::Read,
            FlowStep::WriteWhole => MetaOp::Write,
            FlowStep::AppendRand | FlowStep::AppendLog => MetaOp::Append,
            FlowStep::Fsync => MetaOp::Fsync,
            FlowStep::Stat => MetaOp::Stat,
        }
    }

    /// Whether it acts on the file an `open` or `create` holds.
    pub fn needs_held(self) -> bool {
        matches!(
            self,
            FlowStep::Close | FlowStep::ReadWhole | FlowStep::WriteWhole | FlowStep::AppendRand | FlowStep::Fsync
        )
    }
}

/// `--meta-flow delete,create,append-rand,fsync,close,...`: steps each worker runs in
/// order, over and over, until the window ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaFlow(pub Vec<FlowStep>);

impl FromStr for MetaFlow {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut steps = Vec::new();
        let written_out = expand_groups(text)?;
        for item in written_out.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let step = FlowStep::ALL.iter().copied().find(|s| s.name() == item).ok_or_else(|| {
                let names: Vec<&str> = FlowStep::ALL.iter().map(|s| s.name()).collect();
                format!("unknown step '{item}': give steps of {}", names.join(", "))
            })?;
            steps.push(step);
        }
        if steps.is_empty() {
            return Err("no step: e.g. open,read-whole,close".into());
        }
        check_held(&steps)?;
        Ok(MetaFlow(steps))
    }
}

/// Most steps a flow may have, its groups written out.
const MAX_FLOW_STEPS: usize = 10_000;

/// `10*(open,read-whole,close)` written out: each group its count of times, in place.
fn expand_groups(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let close = rest[open..]
            .find(')')
            .map(|c| open + c)
            .ok_or_else(|| format!("'{text}': a '(' without its ')': write N*(STEP,...)"))?;
        let inner = &rest[open + 1..close];
        if inner.contains('(') {
            return Err(format!("'{text}': a group inside a group: write the inner one out"));
        }
        let head = rest[..open].trim_end().strip_suffix('*').map(str::trim_end).ok_or_else(|| {
            format!("'{text}': a group needs its count before it: write N*(STEP,...), e.g. 10*(open,read-whole,close)")
        })?;
        let digits = head.rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
        let count: usize = head[digits..]
            .parse()
            .ok()
            .filter(|n| (1..=MAX_FLOW_STEPS).contains(n))
            .ok_or_else(|| format!("'{text}': a group's count must be 1 to {MAX_FLOW_STEPS}, e.g. 10*(...)"))?;
        out.push_str(&head[..digits]);
        out.push_str(&vec![inner; count].join(","));
        rest = &rest[close + 1..];
        if out.len() > MAX_FLOW_STEPS * 16 {
            break;
        }
    }
    if rest.contains(')') {
        return Err(format!("'{text}': a ')' without its '('"));
    }
    out.push_str(rest);
    if out.split(',').filter(|s| !s.trim().is_empty()).count() > MAX_FLOW_STEPS {
        return Err(format!("'{text}': more than {MAX_FLOW_STEPS} steps written out: give fewer"));
    }
    Ok(out)
}

/// A flow whose steps find the file they act on: a step on the held file comes after an
/// `open` or `create` and before its `close`; no `open` or `create` while a file is held;
/// none held at the end (the flow starts over with nothing held).
fn check_held(steps: &[FlowStep]) -> Result<(), String> {
    let mut held: Option<usize> = None;
    for (i, &step) in steps.iter().enumerate() {
        let n = i + 1;
        match step {
            FlowStep::Open | FlowStep::Create => {
                if let Some(h) = held {
                    return Err(format!(
                        "step {n} ({}) while step {h}'s file is held: close it first (…,close,{})",
                        step.name(),
                        step.name()
                    ));
                }
                held = Some(n);
            }
            _ if step.needs_held() && held.is_none() => {
                return Err(format!(
                    "step {n} ({}) acts on a held file and none is: open or create one before it (open,{})",
                    step.name(),
                    step.name()
                ));
            }
            FlowStep::Close => held = None,
            _ => {}
        }
    }
    match held {
        Some(h) => Err(format!("the flow ends with step {h}'s file held: end it with close (the flow starts over)")),
        None => Ok(()),
    }
}

/// `--prealloc 80`: the share of the tree's files made at the set-up, in percent (the rest
/// are names a flow's `create` makes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreallocPercent(pub u32);

impl FromStr for PreallocPercent {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim().trim_end_matches('%');
        t.parse::<u32>()
            .ok()
            .filter(|p| *p <= 100)
            .map(PreallocPercent)
            .ok_or_else(|| format!("'{text}': give a percentage from 0 to 100, e.g. 80"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_parse_their_groups_and_refuse_steps_without_their_file() {
        let f: MetaFlow = "2*(open,read-whole,close),append-log".parse().unwrap();
        use FlowStep::*;
        assert_eq!(f.0, vec![Open, ReadWhole, Close, Open, ReadWhole, Close, AppendLog]);
        let f: MetaFlow = "delete, create,append-rand,fsync,close".parse().unwrap();
        assert_eq!(f.0.len(), 5);
        for (bad, says) in [
            ("read-whole", "step 1 (read-whole) acts on a held file and none is"),
            ("open,close,fsync", "step 3 (fsync) acts on a held file"),
            ("open,create,close", "step 2 (create) while step 1's file is held"),
            ("create,append-rand", "the flow ends with step 1's file held"),
            ("open,reed,close", "unknown step 'reed'"),
            ("2*(open,close", "without its ')'"),
            ("(open,close)", "needs its count"),
            ("0*(open,close)", "count must be 1 to"),
            ("open,close)", "without its '('"),
            ("9999*(open,close)", "more than 10000 steps"),
            ("", "no step"),
        ] {
            let e = bad.parse::<MetaFlow>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!("80%".parse::<PreallocPercent>().unwrap().0, 80);
        assert!("101".parse::<PreallocPercent>().unwrap_err().contains("0 to 100"));
    }
}
