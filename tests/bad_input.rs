//! Every line of tests/bad_command_lines.txt is a bad command line: iopulse
//! must exit 2 with one line on stderr naming the flag, print nothing on
//! stdout, and leave the directory exactly as it was.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;

fn listing(dir: &Path) -> BTreeSet<String> {
    walk(dir).into_iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn each_bad_command_line_exits_2_naming_the_flag_and_touches_nothing() {
    let corpus = include_str!("bad_command_lines.txt");
    let mut checked = 0;
    for line in corpus.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (expected, args) = line.split_once('\t').expect("expected<TAB>args");
        let dir = temp_dir();
        let file = dir.path().join("existing.dat");
        std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let before = listing(dir.path());
        let mtime_before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| {
                a.replace("{dir}", &path_str(dir.path()))
                    .replace("{file}", &path_str(&file))
                    .replace("{sub}", &path_str(&dir.path().join("sub")))
            })
            .collect();
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run(&arg_refs);
        assert_eq!(code, 2, "{line}: exit {code}, stderr: {stderr}");
        assert!(stderr.contains(expected), "{line}: stderr does not name '{expected}': {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{line}: more than one line: {stderr}");
        assert!(stdout.is_empty(), "{line}: stdout is not empty: {stdout}");
        assert_eq!(listing(dir.path()), before, "{line}: files were created");
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            mtime_before,
            "{line}: existing file modified"
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} lines checked");
}

#[test]
fn help_lists_every_flag_with_examples() {
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--file-size",
        "--block-size",
        "--duration",
        "--read-percent",
        "--write-percent",
        "--random",
        "--threads",
        "--queue-depth",
        "--engine",
        "--direct",
        "--strict-direct",
        "--seed",
        "--output-format",
        "--json",
        "--quiet",
        "--force",
        "--csv",
        "--plot",
        "fio-json",
        "iopulse merge",
        "iopulse plot",
        "iopulse completions",
        "iopulse man",
    ] {
        assert!(stdout.contains(flag), "--help does not mention {flag}");
    }
    assert!(stdout.contains("Examples:"), "--help has no examples");
}
