//! A job file whose jobs all have `files` (metadata jobs only): the jobs of one phase run
//! at once in one window (the same start instant in each job's result, windows that
//! overlap, each job's counts and outputs its own), phases run one after another,
//! `meta-phases` and trees that meet in a shared phase are refused before anything is
//! touched, and SIGINT ends the shared phase with both jobs' figures and no later phase.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Writes `text` as the job file `meta.toml` in `dir`; its path.
fn job_file(dir: &Path, text: &str) -> String {
    let path = dir.join("meta.toml");
    std::fs::write(&path, text).unwrap();
    path_str(&path)
}

/// A metadata job `[name]` on `root`: `files` files, a stat and read mix on one worker,
/// `more` keys after it.
fn job(name: &str, root: &Path, files: u64, more: &str) -> String {
    format!(
        "[{name}]\ntargets = [\"{}\"]\nfiles = \"{files}\"\nmeta-mix = \"stat=1,read=1\"\nthreads = 1\n{more}\n",
        path_str(root)
    )
}

/// Every entry of `dir`, sorted (to show nothing was made).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A result's window on the wall clock (ns since the epoch), from its own fields: the
/// phase's release plus the lag of its first operation, to that plus the mix's window.
fn window(r: &Value) -> (u64, u64) {
    let start = u64_at(r, &["window_start_unix_ns"]) + u64_at(r, &["window_start_lag_ns"]);
    (start, start + u64_at(&r["phases"][0], &["window_ns"]))
}

/// A kind's operations in the mix of a result.
fn ops_of(r: &Value, kind: &str) -> u64 {
    let per_op = r["phases"][0]["per_op"].as_array().unwrap();
    per_op.iter().find(|o| o["op"] == kind).map_or(0, |o| o["ops"].as_u64().unwrap())
}

/// A kind's operations summed over the rows of a `--timeseries` CSV.
fn series_ops(path: &Path, kind: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some(kind))
        .map(|l| l.split(',').nth(4).unwrap().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn two_metadata_jobs_of_one_phase_share_one_window() {
    let dir = temp_dir();
    let (j1, j2) = (dir.path().join("j1"), dir.path().join("j2"));
    let file = job_file(
        dir.path(),
        &format!("{}\n{}", job("a", &j1, 200, "duration = \"2s\""), job("b", &j2, 100, "duration = \"2s\"")),
    );
    let (json, csv, charts) = (dir.path().join("r.json"), dir.path().join("ts.csv"), dir.path().join("charts"));
    std::fs::create_dir(&charts).unwrap();
    let (stdout, stderr) = run_ok(&[
        "run",
        &file,
        "--json",
        &path_str(&json),
        "--timeseries",
        &path_str(&csv),
        "--plot",
        &path_str(&charts),
    ]);
    let (a, b) = (read_json(dir.path().join("r-a.json")), read_json(dir.path().join("r-b.json")));

    // One start word released both: the same instant in both results.
    let start = u64_at(&a, &["window_start_unix_ns"]);
    assert!(start > 0, "{a}");
    assert_eq!(u64_at(&b, &["window_start_unix_ns"]), start);
    // Their windows overlap: both 2 s long, together far less than the 4 s of one after
    // the other.
    let ((a_start, a_end), (b_start, b_end)) = (window(&a), window(&b));
    for (r, (s, e)) in [(&a, (a_start, a_end)), (&b, (b_start, b_end))] {
        assert_eq!(r["stop_reason"], "duration", "{r}");
        // Each worker's 2 s count from its own clock read after the release, a moment before
        // its first operation: a preemption there under load shortens the window by it.
        assert!(e - s >= 1_500_000_000, "a window of about the 2 s asked: {} ns", e - s);
        assert!(s - start < 1_000_000_000, "its first operation {} ns after the release", s - start);
    }
    let overlap = a_end.min(b_end).saturating_sub(a_start.max(b_start));
    // One after the other, they would not overlap and would span 4 s: the bounds leave a
    // loaded machine a second of lag either way.
    assert!(overlap >= 1_000_000_000, "the windows overlap by {overlap} ns");
    let span = a_end.max(b_end) - start;
    assert!(span < 3_900_000_000, "both jobs within {span} ns of the release, not one after the other");

    // Each job's figures are its own: its tree, its counts adding up, its time series.
    for (name, r, root, files) in [("a", &a, "j1", 200), ("b", &b, "j2", 100)] {
        assert!(r["target"].as_str().unwrap().ends_with(root), "{name}: {}", r["target"]);
        assert_eq!(r["tree"]["files"], files, "{name}");
        let (stats, reads) = (ops_of(r, "stat"), ops_of(r, "read"));
        assert!(stats > 0 && reads > 0, "{name}: {stats} stats, {reads} reads");
        assert_eq!(u64_at(&r["phases"][0], &["ops"]), stats + reads, "{name}: the kinds add up to the mix");
        let series = dir.path().join(format!("ts-{name}.csv"));
        assert_eq!((series_ops(&series, "stat"), series_ops(&series, "read")), (stats, reads), "{name}");
        assert!(charts.join(format!("job-{name}-latency.svg")).is_file(), "{name}: {:?}", entries(&charts));
    }
    assert!(!json.exists() && !csv.exists(), "each job has files of its own");

    // The reports after the phase, in file order, each under its job's header.
    assert_eq!(stdout.matches("200 files in 10 directories").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("100 files in 10 directories").count(), 1, "{stdout}");
    assert!(stdout.find("200 files").unwrap() < stdout.find("100 files").unwrap(), "{stdout}");
    assert_eq!(stdout.matches("tree: removed").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("window: released with every job of its phase").count(), 2, "{stdout}");
    let (ha, hb) = (stderr.find("iopulse: job a"), stderr.find("iopulse: job b"));
    assert!(ha.is_some() && hb.is_some() && ha < hb, "{stderr}");
    assert!(!j1.exists() && !j2.exists(), "both trees are removed");
}

#[test]
fn the_jobs_of_the_next_phase_start_after_those_of_the_first_ended() {
    let dir = temp_dir();
    let root = |n: &str| dir.path().join(n);
    let file = job_file(
        dir.path(),
        &format!(
            "[global]\nduration = \"500ms\"\n\n{}\n{}\n{}\n{}",
            job("a", &root("t1"), 100, ""),
            job("b", &root("t2"), 100, ""),
            job("c", &root("t3"), 100, "stonewall = true"),
            job("d", &root("t4"), 100, ""),
        ),
    );
    let json = dir.path().join("r.json");
    run_ok(&["run", &file, "--json", &path_str(&json), "--quiet"]);
    let r: Vec<Value> =
        ["a", "b", "c", "d"].iter().map(|n| read_json(dir.path().join(format!("r-{n}.json")))).collect();
    let released = |r: &Value| u64_at(r, &["window_start_unix_ns"]);
    assert_eq!(released(&r[0]), released(&r[1]), "phase 1 shares one window");
    assert_eq!(released(&r[2]), released(&r[3]), "phase 2 shares one window");
    let first_ended = window(&r[0]).1.max(window(&r[1]).1);
    assert!(
        released(&r[2]) >= first_ended,
        "phase 2 released at {} before phase 1 ended at {first_ended}",
        released(&r[2])
    );
    for (n, r) in ["a", "b", "c", "d"].iter().zip(&r) {
        assert!(ops_of(r, "stat") > 0 && ops_of(r, "read") > 0, "{n}: {r}");
    }
    for n in ["t1", "t2", "t3", "t4"] {
        assert!(!root(n).exists(), "{n} removed");
    }
}

#[test]
fn meta_phases_in_a_shared_phase_is_refused_before_any_tree_is_made() {
    let dir = temp_dir();
    let root = |n: &str| dir.path().join(n);
    let phases = |name: &str, r: &str, keys: &str| {
        format!("[{name}]\ntargets = [\"{}\"]\nfiles = \"50\"\n{keys}\n", path_str(&root(r)))
    };
    // An earlier phase of one job, then the shared phase: nothing runs, not even phase 1.
    let cases = [
        (
            "meta-phases given",
            format!(
                "{}\n{}\n{}",
                job("first", &root("t1"), 50, ""),
                job("x", &root("t2"), 50, "stonewall = true"),
                phases("y", "t3", "meta-phases = \"create,stat\""),
            ),
        ),
        ("the default phases", format!("{}\n{}", phases("y", "t3", ""), job("x", &root("t2"), 50, ""))),
    ];
    for (what, text) in cases {
        let file = job_file(dir.path(), &text);
        let before = entries(dir.path());
        let (code, stdout, stderr) = run(&["run", &file]);
        assert_eq!(code, 2, "{what}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: one line: {stderr}");
        assert!(
            stderr.contains("meta.toml") && stderr.contains("job [y]") && stderr.contains("stonewall = true"),
            "{what}: {stderr}"
        );
        assert!(stderr.contains("meta-mix"), "{what}: the other fix: {stderr}");
        assert!(stdout.is_empty(), "{what}: {stdout}");
        assert_eq!(entries(dir.path()), before, "{what}: no tree or directory made");
    }

    // Beside a block job, the same refusal, before the block job's file is made.
    let block = root("blk.dat");
    let file = job_file(
        dir.path(),
        &format!(
            "[reader]\ntargets = [\"{}\"]\nfile-size = \"1M\"\nduration = \"200ms\"\n\n{}",
            path_str(&block),
            phases("y", "t3", "meta-phases = \"create,stat\"")
        ),
    );
    let before = entries(dir.path());
    let (code, _, stderr) = run(&["run", &file]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("job [y]") && stderr.contains("stonewall = true"), "{stderr}");
    assert_eq!(entries(dir.path()), before, "nothing made");

    // In a phase of its own it runs, after a shared phase.
    let file = job_file(
        dir.path(),
        &format!(
            "{}\n{}\n{}",
            job("a", &root("t1"), 50, "ops = 200"),
            job("b", &root("t2"), 50, "ops = 200"),
            phases("y", "t3", "stonewall = true\nmeta-phases = \"create,stat\""),
        ),
    );
    let (stdout, _) = run_ok(&["run", &file, "--quiet"]);
    assert_eq!(stdout.matches("tree: removed").count(), 3, "{stdout}");
    assert!(!root("t1").exists() && !root("t2").exists() && !root("t3").exists());
}

#[test]
fn trees_that_meet_in_a_shared_phase_are_refused_and_in_two_phases_run_in_turn() {
    let dir = temp_dir();
    let tree = dir.path().join("tree");
    let two = |b_root: &str, more: &str| {
        format!(
            "[a]\ntargets = [\"{t}\"]\nfiles = \"50\"\nmeta-mix = \"stat=1\"\nops = 100\n\n[b]\n{more}targets = [\"{t}{b_root}\"]\nfiles = \"30\"\nmeta-mix = \"stat=1\"\nops = 100\n",
            t = path_str(&tree)
        )
    };
    // One tree inside the other, in one phase: refused with the plan, the directory (the
    // user's, empty) left as it was.
    std::fs::create_dir(&tree).unwrap();
    let file = job_file(dir.path(), &two("/sub", ""));
    let before = entries(dir.path());
    let (code, _, stderr) = run(&["run", &file]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("meta.toml")
            && stderr.contains("the trees of jobs [a]")
            && stderr.contains("meet")
            && stderr.contains("stonewall = true"),
        "{stderr}"
    );
    assert_eq!(entries(dir.path()), before, "nothing made");
    assert!(entries(&tree).is_empty(), "nothing made in the tree's root");
    // One tree for both, one phase after the other: each run makes and removes its own.
    std::fs::remove_dir(&tree).unwrap();
    let file = job_file(dir.path(), &two("", "stonewall = true\n"));
    let (stdout, _) = run_ok(&["run", &file, "--quiet"]);
    assert!(stdout.contains("50 files") && stdout.contains("30 files"), "{stdout}");
    assert!(!tree.exists());
}

#[test]
fn sigint_in_a_shared_phase_gives_both_jobs_figures_and_runs_no_later_phase() {
    let dir = temp_dir();
    let root = |n: &str| dir.path().join(n);
    let file = job_file(
        dir.path(),
        &format!(
            "[global]\nduration = \"30s\"\n\n{}\n{}\n{}",
            job("a", &root("t1"), 100, ""),
            job("b", &root("t2"), 100, ""),
            job("c", &root("t3"), 100, "stonewall = true"),
        ),
    );
    let json = dir.path().join("r.json");
    let child = iopulse()
        .args(["run", &file, "--json", &path_str(&json), "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Both trees set up and ready (the window opens once both are), then a little more.
    let ready = |r: &str| std::fs::read_to_string(root(r).join(".iopulse-tree")).is_ok_and(|m| m.contains("\"ready\""));
    let since = Instant::now();
    while !(ready("t1") && ready("t2")) && since.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(700));
    let killed = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(since.elapsed() < Duration::from_secs(25), "SIGINT ended the 30 s phase");
    for n in ["a", "b"] {
        let r = read_json(dir.path().join(format!("r-{n}.json")));
        assert_eq!(r["stop_reason"], "interrupted", "{n}: {r}");
        assert!(u64_at(&r["phases"][0], &["ops"]) > 0, "{n}: its figures so far");
    }
    assert!(!dir.path().join("r-c.json").exists(), "the next phase did not run");
    // Each tree removed (or, were it kept, marked for the next run); the next phase's never made.
    for n in ["t1", "t2", "t3"] {
        assert!(!root(n).exists(), "{n}: {:?}", entries(dir.path()));
    }
    let (code, _, stderr) = run(&["run", &file, "--duration", "200ms", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}

/// The jobs of one phase run their workers at once: more than a window holds (4,096
/// threads in all) is refused with the plan, naming the phase and the fix, before any
/// tree is made.
#[test]
fn the_threads_of_a_shared_phase_are_checked_together_before_any_tree_is_made() {
    let dir = temp_dir();
    let root = |n: &str| dir.path().join(n);
    let threads =
        |name: &str, r: &str, n: u32| job(name, &root(r), 50, "").replace("threads = 1", &format!("threads = {n}"));
    let text = format!("{}\n{}", threads("a", "t1", 4000), threads("b", "t2", 200));
    let file = job_file(dir.path(), &text);
    let before = entries(dir.path());
    let (code, stdout, stderr) = run(&["run", &file]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("phase 1 has 2 jobs with 4200 worker threads") && stderr.contains("stonewall"), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(entries(dir.path()), before, "nothing made");
}
