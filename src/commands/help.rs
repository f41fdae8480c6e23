//! `iopulse help [TOPIC]`: the long help of the command or of a subcommand (`iopulse help
//! run` is `iopulse run --help`), or a topic's long explanation: the documents of docs/,
//! built into the binary so that they are there wherever the binary is (`iopulse help
//! safety`, `iopulse help jobs`). `iopulse -h` stays one screen; what it leaves out is here.
//!
//! It prints; it reads no file and runs nothing.

use crate::base::diagnostics::error::exit_code;

/// The topics: a name, what it covers, and the document.
const TOPICS: &[(&str, &str, &str)] = &[
    ("usage", "every flag and behaviour, with examples", include_str!("../../docs/usage.md")),
    ("safety", "what iopulse refuses to touch, the ledger, how every path ends", include_str!("../../docs/safety.md")),
    ("jobs", "job files: jobs in one window, phases", include_str!("../../docs/jobs.md")),
    ("sweep", "sweeps and searches", include_str!("../../docs/sweep.md")),
    ("fio", "fio job files and fio's flag names", include_str!("../../docs/fio.md")),
    ("metadata", "trees of files (--files): operations, personalities", include_str!("../../docs/metadata.md")),
    ("replay", "replaying fio iologs and blktraces, --write-iolog", include_str!("../../docs/replay.md")),
    ("durability", "--verify-state and iopulse verify after a crash", include_str!("../../docs/durability.md")),
    ("ci", "--expect, iopulse compare, CI formats, HTML reports", include_str!("../../docs/ci.md")),
    ("engines", "the engines and what each costs", include_str!("../../docs/engines.md")),
    ("cache", "the page cache: drop, warm, keep", include_str!("../../docs/cache.md")),
    ("json", "the JSON result, field by field", include_str!("../../docs/json.md")),
    ("distributed", "MPI ranks, --start-at, merging hosts' results", include_str!("../../docs/distributed.md")),
    ("device-witness", "the device's own counters beside the run's", include_str!("../../docs/device-witness.md")),
];

/// Print the help of iopulse or of a subcommand, or a topic's explanation.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iopulse help
      every flag of the benchmark with its long help (as iopulse --help)
  iopulse help run
      a subcommand's long help (as iopulse run --help)
  iopulse help safety
      a topic: what iopulse refuses to touch and why (iopulse help topics lists them)")]
pub struct HelpArgs {
    /// A subcommand, a topic, or `topics` to list the topics.
    #[arg(value_name = "SUBCOMMAND|TOPIC")]
    pub topic: Option<String>,
}

pub fn help(args: HelpArgs) -> i32 {
    let mut command = super::command();
    let Some(topic) = args.topic else {
        return super::write_stdout(&command.render_long_help().to_string());
    };
    if topic == "topics" {
        let width = TOPICS.iter().map(|(name, ..)| name.len()).max().unwrap_or(0);
        let list: String = TOPICS.iter().map(|(name, what, _)| format!("  {name:<width$}  {what}\n")).collect();
        return super::write_stdout(&format!("Topics (iopulse help TOPIC):\n{list}"));
    }
    if let Some((_, _, text)) = TOPICS.iter().find(|(name, ..)| *name == topic) {
        return super::write_stdout(text);
    }
    // Built, so that a subcommand's usage line names `iopulse` before it.
    command.build();
    if let Some(sub) = command.find_subcommand_mut(&topic) {
        return super::write_stdout(&sub.render_long_help().to_string());
    }
    let subcommands: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_string()).collect();
    let topics: Vec<&str> = TOPICS.iter().map(|(name, ..)| *name).collect();
    crate::stderr_line!(
        "iopulse help: error: `{topic}` is neither a subcommand ({}) nor a topic ({}): give one of them",
        subcommands.join(", "),
        topics.join(", ")
    );
    exit_code::USAGE
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_topic_is_a_document_with_a_title() {
        for (name, what, text) in super::TOPICS {
            assert!(text.starts_with("# "), "{name}: {what}");
            assert!(text.len() > 1000, "{name}");
        }
    }
}
