//! Every example iopulse shows is a command that works: each `iopulse ...` line of every
//! `--help` (the examples after it, and each flag's `E.g.`), of the README and of docs/, and
//! the job file in `iopulse run --help`, goes through the parser and the plan
//! (`iopulse::testing`). A doc line that shows a refusal on purpose is followed, within
//! three lines, by the refusal's text (`iopulse: error: ...`), and is checked to be refused.

use crate::common::{iopulse, run, run_command};
use iopulse::testing::{check_command_line, check_job_file};
use std::path::Path;

/// The words of a shell command line from `iopulse` on: quotes kept together, stopped at a
/// redirection, a pipe or a second command; shell variables stand for a small number;
/// `[optional]` brackets dropped.
fn words_from_iopulse(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, ' ' | '\t') => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            (None, '#') if current.is_empty() => break,
            (None, '>' | '|' | ';' | '<') => {
                // `2>` redirects stderr: its 2 is no argument.
                if current == "2" {
                    current.clear();
                }
                break;
            }
            (None, '&') if chars.peek() == Some(&'&') => break,
            (None, '$') => {
                // $var or ${var}: a small number.
                if chars.peek() == Some(&'{') {
                    for d in chars.by_ref() {
                        if d == '}' {
                            break;
                        }
                    }
                } else {
                    while chars.peek().is_some_and(|d| d.is_alphanumeric() || *d == '_') {
                        chars.next();
                    }
                }
                current.push('1');
            }
            (None, '[' | ']') => {}
            (None, c) => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    // A trailing shell line continuation and `...` are not arguments.
    words.retain(|w| w != "\\" && w != "..." && w != "…");
    let start = words.iter().position(|w| w == "iopulse")?;
    Some(words.split_off(start + 1))
}

/// The command lines of a text: lines that are (after a prompt) an `iopulse` command, or
/// that launch one (`mpirun ... iopulse`, `pdsh ... iopulse`, `srun ... iopulse`).
fn command_lines(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let t = line.trim_start().trim_start_matches("$ ");
            // What iopulse printed (`iopulse run: error: ...`), and synopses with placeholders
            // (`iopulse sweep [TARGET...] [--repeat N]`), are not commands.
            let words: Vec<&str> = t.split_whitespace().take(2).collect();
            if words.iter().any(|w| w.ends_with(':')) || t.contains("[TARGET") || t.contains("[FLAGS") {
                return None;
            }
            let launched = ["mpirun ", "pdsh ", "srun ", "sudo "].iter().any(|l| t.starts_with(l));
            (t.starts_with("iopulse ") || t == "iopulse" || (launched && t.contains(" iopulse ")))
                .then(|| (i + 1, t.to_string()))
        })
        .collect()
}

/// The fenced code blocks of a markdown text, with the line each starts on.
fn code_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut inside: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            match inside.take() {
                Some(block) => out.push(block),
                None => inside = Some((i + 2, String::new())),
            }
        } else if let Some((_, body)) = &mut inside {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// Checks each command line of `text` (named `source`); a line followed within three lines
/// by `iopulse: error` shows a refusal and must be refused.
fn check_text(source: &str, text: &str, failures: &mut Vec<String>) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut checked = 0;
    for (line_no, line) in command_lines(text) {
        let Some(args) = words_from_iopulse(&line) else { continue };
        let refused_on_purpose =
            lines.iter().skip(line_no).take(3).any(|l| l.contains("iopulse: error") || l.contains(": error:"));
        let outcome = check_command_line(&args);
        match (outcome, refused_on_purpose) {
            (Ok(()), false) | (Err(_), true) => {}
            (Err(e), false) => failures.push(format!("{source}:{line_no}: `{line}`: {e}")),
            (Ok(()), true) => failures.push(format!("{source}:{line_no}: `{line}` is shown refused but is accepted")),
        }
        checked += 1;
    }
    checked
}

#[test]
fn every_example_of_the_help_readme_and_docs_is_accepted() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut job_files = 0;
    // Every command's help, as written (not wrapped for a terminal): its examples and each
    // flag's E.g.
    let command = iopulse::commands::command();
    let mut helps: Vec<(String, String, Vec<String>)> = Vec::new();
    let flag_helps = |c: &clap::Command| -> Vec<String> {
        c.get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long_help().or(a.get_help()).map(|h| h.to_string()))
            .collect()
    };
    // `--help`'s examples (`-h` shows a few of them).
    let after = |c: &clap::Command| {
        let long = c.get_after_long_help().map(|h| h.to_string()).unwrap_or_default();
        let short = c.get_after_help().map(|h| h.to_string()).unwrap_or_default();
        format!("{long}\n{short}")
    };
    helps.push(("iopulse --help".into(), after(&command), flag_helps(&command)));
    for sub in command.get_subcommands() {
        helps.push((format!("iopulse {} --help", sub.get_name()), after(sub), flag_helps(sub)));
    }
    assert!(helps.len() >= 10, "{} commands", helps.len());
    for (source, text, flags) in &helps {
        checked += check_text(source, text, &mut failures);
        let subcommand = source.split_whitespace().nth(1).filter(|w| *w != "--help");
        for example in flags.iter().flat_map(|h| h.split("E.g. `").skip(1).filter_map(|rest| rest.split('`').next())) {
            let line = if example.starts_with("iopulse ") { example.to_string() } else { format!("iopulse {example}") };
            let Some(words) = words_from_iopulse(&line) else { continue };
            // A flag alone is tried on a target, with the subcommand it belongs to.
            let args: Vec<String> = if example.starts_with("iopulse ") || !example.starts_with("--") {
                words
            } else {
                subcommand
                    .into_iter()
                    .map(String::from)
                    .chain(["/tmp/iopulse-example.dat".to_string()])
                    .chain(words)
                    .collect()
            };
            if let Err(e) = check_command_line(&args) {
                failures.push(format!("{source}: E.g. `{example}`: {e}"));
            }
            checked += 1;
        }
    }
    // The job file of `iopulse run --help`.
    let run_help = &helps.iter().find(|(s, _, _)| s == "iopulse run --help").unwrap().1;
    let job: String = run_help
        .lines()
        .skip_while(|l| !l.starts_with("A job file"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("Keys are"))
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    assert!(job.contains("[oltp]"), "{job}");
    if let Err(e) = check_job_file("iopulse run --help", &job) {
        failures.push(format!("the job file of iopulse run --help: {e}"));
    }
    // README.md and docs/*.md: their code blocks.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    docs.extend(
        std::fs::read_dir(root.join("docs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let name = doc.strip_prefix(root).unwrap().display().to_string();
        for (start, block) in code_blocks(&text) {
            let mut block_failures = Vec::new();
            checked += check_text(&name, &block, &mut block_failures);
            // Line numbers within the block, as lines of the file.
            failures.extend(block_failures.into_iter().map(|f| {
                let (at, rest) = f.split_once(':').map(|(_, r)| r.split_once(':').unwrap()).unwrap();
                format!("{name}:{}:{rest}", start + at.parse::<usize>().unwrap() - 1)
            }));
            // A job file shown in the docs (alone, or in a shell here-document) is planned as
            // `iopulse run` would.
            let job = match block.split_once("<<'TOML'\n") {
                Some((_, rest)) => rest.split("\nTOML").next().unwrap_or("").to_string(),
                None => block.clone(),
            };
            let toml_like = job.lines().any(|l| l.starts_with('[') && l.ends_with(']'))
                && job.lines().any(|l| l.contains(" = "))
                && !job.lines().any(|l| l.contains('=') && !l.contains(" = ") && !l.trim_start().starts_with('#'));
            if toml_like {
                job_files += 1;
                if let Err(e) = check_job_file(&name, &job.replace("{dir}", "/tmp")) {
                    failures.push(format!("{name}:{start}: a job file: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {checked} examples fail:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 150, "only {checked} examples found");
    assert!(job_files >= 3, "only {job_files} job files found in the docs");
}

#[test]
fn the_example_reader_splits_like_a_shell() {
    assert_eq!(
        words_from_iopulse("mpirun -np 8 iopulse /d/t.{rank}.dat --json 'a b.json' > out # note"),
        Some(vec!["/d/t.{rank}.dat".to_string(), "--json".to_string(), "a b.json".to_string()])
    );
    assert_eq!(
        words_from_iopulse("iopulse t --queue-depth $qd && echo"),
        Some(vec!["t", "--queue-depth", "1"].into_iter().map(String::from).collect())
    );
    assert_eq!(words_from_iopulse("fio --name x"), None);
}

/// `-h` reads at a glance: at most 150 lines for `iopulse` and for each subcommand, each
/// flag on one line of its own (its long help is `--help`'s).
#[test]
fn short_help_fits_a_screen_and_long_help_keeps_every_text() {
    let mut commands = vec![Vec::new()];
    commands.extend(iopulse::commands::command().get_subcommands().map(|s| vec![s.get_name().to_string()]));
    for words in commands {
        let mut args = words.clone();
        args.push("-h".into());
        let (code, short, _) = run_command(iopulse().args(&args).env("COLUMNS", "100"));
        assert_eq!(code, 0, "{args:?}");
        let lines = short.lines().count();
        assert!(lines <= 150, "iopulse {} -h prints {lines} lines: {short}", words.join(" "));
        // A flag's line is followed by another flag, a heading or a blank line, never by a
        // wrapped second line of its text, but for the list of its possible values.
        let flag_lines: Vec<&str> =
            short.lines().filter(|l| l.trim_start().starts_with("--") || l.trim_start().starts_with("-q")).collect();
        assert!(!flag_lines.is_empty(), "{args:?}");
        // The flags, before the examples (whose command lines may wrap).
        let all: Vec<&str> = short.lines().take_while(|l| !l.starts_with("Examples")).collect();
        for (i, line) in all.iter().enumerate() {
            if !(line.trim_start().starts_with("--") || line.trim_start().starts_with("-q")) {
                continue;
            }
            if let Some(next) = all.get(i + 1) {
                let wrapped = next.starts_with("      ") && !next.trim_start().starts_with('-');
                assert!(
                    !wrapped || next.contains("values:") || line.contains("[possible"),
                    "iopulse {} -h: a flag's text runs over two lines:\n{line}\n{next}",
                    words.join(" ")
                );
            }
        }
        let mut long_args = words.clone();
        long_args.push("--help".into());
        let (code, long, _) = run_command(iopulse().args(&long_args));
        assert_eq!(code, 0);
        assert!(long.lines().count() > lines, "{long_args:?}: --help holds more than -h");
    }
    // The long texts are still there.
    let (_, long, _) = run(&["--help"]);
    let words = long.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("A shorter file is extended with written data"), "--file-size's long help: {long}");
}

/// `iopulse help TOPIC` prints a document of docs/ as it is (built into the binary), `help
/// SUBCOMMAND` the subcommand's long help, `help topics` the list; anything else is refused.
#[test]
fn help_prints_topics_and_subcommands_long_help() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, list, _) = run(&["help", "topics"]);
    assert_eq!(code, 0);
    for (topic, doc) in [("safety", "docs/safety.md"), ("jobs", "docs/jobs.md"), ("durability", "docs/durability.md")] {
        assert!(list.contains(&format!("  {topic} ")), "{list}");
        let (code, text, _) = run(&["help", topic]);
        assert_eq!(code, 0);
        assert_eq!(text, std::fs::read_to_string(root.join(doc)).unwrap(), "iopulse help {topic} is {doc}");
    }
    let (_, by_help, _) = run(&["help", "run"]);
    let (_, by_flag, _) = run(&["run", "--help"]);
    assert_eq!(by_help, by_flag, "iopulse help run is iopulse run --help");
    let (code, out, err) = run(&["help", "nothing-of-the-kind"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("neither a subcommand") && err.contains("safety") && err.lines().count() == 1, "{err}");
}
