//! `--write-iolog` from every way in: a job file's key (in a job: its file; in [global] or
//! given with the file: a file per job), a profile (a file per step), a sweep (per point
//! and repetition), a search (per run) and a fio job file's `write_iolog`. Each log holds
//! as many I/Os as its run's JSON counts, a job's log replays with the same counts, and a
//! log path that is a target, the job file or another job's log is refused before anything
//! is written.

use crate::common::{iopulse, path_str, read_json, run, run_command, run_ok, temp_dir, u64_at};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The I/O entries of a fio iolog v3 written by iopulse (every line but the header and
/// the files' add/open/close): the log must be one, or this panics.
fn entries(log: &Path) -> u64 {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("fio version 3 iolog"), "{}", log.display());
    lines
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, _, "add" | "open" | "close"] => false,
                [_, _, "read" | "write" | "trim" | "sync" | "datasync", _, _] => true,
                _ => panic!("{}: not an iolog v3 line: {l}", log.display()),
            }
        })
        .count() as u64
}

/// A result's I/Os: its reads and writes (these runs issue nothing else).
fn ios(result: &Value) -> u64 {
    u64_at(result, &["read", "ops"]) + u64_at(result, &["write", "ops"])
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A job file of two jobs at once on their own files, each a fixed number of I/Os.
fn two_jobs(dir: &Path, global_extra: &str) -> PathBuf {
    let job = dir.join("j.toml");
    let (a, b) = (path_str(&dir.join("a.dat")), path_str(&dir.join("b.dat")));
    std::fs::write(
        &job,
        format!(
            "[global]\nfile-size = \"2M\"\nblock-size = \"4k\"\n{global_extra}\n[reader]\ntargets = [\"{a}\"]\nrandom = true\nops = 300\n\n[writer]\ntargets = [\"{b}\"]\nwrite-percent = 100\nops = 200\n"
        ),
    )
    .unwrap();
    job
}

#[test]
fn a_job_file_of_two_jobs_writes_a_log_per_job_with_its_io_counts() {
    let dir = temp_dir();
    let log = dir.path().join("run.iolog");
    let job = two_jobs(dir.path(), &format!("write-iolog = \"{}\"", path_str(&log)));
    let json = dir.path().join("r.json");
    run_ok(&["run", &path_str(&job), "--json", &path_str(&json), "--quiet"]);
    let r = read_json(&json);
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for (job, file, expected) in [(&jobs[0], "run-reader.iolog", 300), (&jobs[1], "run-writer.iolog", 200)] {
        assert_eq!(ios(job), expected, "{}", job["job"]);
        assert_eq!(entries(&dir.path().join(file)), ios(job), "{file}: one entry per I/O of its job");
    }
    // Exactly the two logs (no shared run.iolog), besides the targets, the file and the JSON.
    assert_eq!(
        listing(dir.path()),
        ["a.dat", "b.dat", "j.toml", "r.json", "run-reader.iolog", "run-writer.iolog"],
        "the directory"
    );

    // Given after the file, the flag names the files (and overrides [global]'s).
    let flagged = dir.path().join("flag.iolog");
    let json2 = dir.path().join("r2.json");
    run_ok(&["run", &path_str(&job), "--write-iolog", &path_str(&flagged), "--json", &path_str(&json2), "--quiet"]);
    let r = read_json(&json2);
    assert_eq!(entries(&dir.path().join("flag-reader.iolog")), ios(&r["jobs"][0]));
    assert_eq!(entries(&dir.path().join("flag-writer.iolog")), ios(&r["jobs"][1]));

    // A job's own key is its file as given; the other job keeps [global]'s.
    let own = dir.path().join("own.iolog");
    let text = std::fs::read_to_string(&job).unwrap();
    let text = text.replace("ops = 200\n", &format!("ops = 200\nwrite-iolog = \"{}\"\n", path_str(&own)));
    std::fs::write(&job, text).unwrap();
    std::fs::remove_file(dir.path().join("run-writer.iolog")).unwrap();
    let json3 = dir.path().join("r3.json");
    run_ok(&["run", &path_str(&job), "--json", &path_str(&json3), "--quiet"]);
    let r = read_json(&json3);
    assert_eq!(entries(&own), ios(&r["jobs"][1]));
    assert_eq!(entries(&dir.path().join("run-reader.iolog")), ios(&r["jobs"][0]));
    assert!(!dir.path().join("run-writer.iolog").exists(), "the job with its own key wrote [global]'s name");
}

#[test]
fn a_log_written_from_a_job_file_is_replayed_with_equal_counts() {
    let dir = temp_dir();
    let log = dir.path().join("run.iolog");
    let job = two_jobs(dir.path(), &format!("write-iolog = \"{}\"", path_str(&log)));
    let json = dir.path().join("r.json");
    run_ok(&["run", &path_str(&job), "--json", &path_str(&json), "--quiet"]);
    let r = read_json(&json);
    for (i, name) in ["reader", "writer"].iter().enumerate() {
        let written = dir.path().join(format!("run-{name}.iolog"));
        let back = dir.path().join(format!("back-{name}.json"));
        run_ok(&["replay", &path_str(&written), "--json", &path_str(&back), "--quiet"]);
        let replayed = read_json(&back);
        let job = &r["jobs"][i];
        for op in ["read", "write"] {
            assert_eq!(
                u64_at(&replayed, &[op, "ops"]),
                u64_at(job, &[op, "ops"]),
                "[{name}]: {op}s replayed against the job's"
            );
        }
        assert_eq!(replayed["replay"]["issued"].as_u64(), Some(ios(job)), "[{name}]");
    }
}

#[test]
fn a_profile_writes_a_log_per_step() {
    let dir = temp_dir();
    let target = dir.path().join("stream.dat");
    let log = dir.path().join("p.iolog");
    let json = dir.path().join("r.json");
    run_ok(&[
        "--profile",
        "streaming",
        &path_str(&target),
        "--file-size",
        "8M",
        "--ops",
        "40",
        "--write-iolog",
        &path_str(&log),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let r = read_json(&json);
    let steps = r["jobs"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["read", "write"]);
    for step in steps {
        let file = dir.path().join(format!("p-{}.iolog", step["job"].as_str().unwrap()));
        assert_eq!(ios(step), 40);
        assert_eq!(entries(&file), ios(step), "{}", file.display());
    }
    assert!(!log.exists(), "one log per step, none shared");
}

#[test]
fn a_sweep_writes_a_log_per_point_and_repetition() {
    let dir = temp_dir();
    let target = dir.path().join("t.dat");
    let log = dir.path().join("s.iolog");
    let (code, stdout, stderr) = run(&[
        "sweep",
        &path_str(&target),
        "--file-size",
        "1M",
        "--random",
        "--queue-depth",
        "1,2",
        "--ops",
        "64,96",
        "--repeat",
        "2",
        "--write-iolog",
        &path_str(&log),
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8, "4 points × 2 repetitions");
    let mut expected = Vec::new();
    for r in runs {
        let (point, rep) = (r["point"].as_u64().unwrap(), r["repetition"].as_u64().unwrap());
        let file = format!("s-point{point}-rep{rep}.iolog");
        assert_eq!(entries(&dir.path().join(&file)), ios(&r["result"]), "{file}");
        let asked: u64 = doc["points"][point as usize]["params"]["ops"].as_str().unwrap().parse().unwrap();
        assert_eq!(ios(&r["result"]), asked, "{file}: the point's own --ops");
        expected.push(file);
    }
    expected.push("t.dat".into());
    expected.sort();
    assert_eq!(listing(dir.path()), expected, "a log per run, nothing else");
}

#[test]
fn a_search_writes_a_log_per_run() {
    let dir = temp_dir();
    let log = dir.path().join("q.iolog");
    let (code, stdout, stderr) = run(&[
        "search",
        "--engine",
        "null",
        "--think-time",
        "50us",
        "--ops",
        "200",
        "--p99-max",
        "10ms",
        "--max-runs",
        "3",
        "--write-iolog",
        &path_str(&log),
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for (i, r) in runs.iter().enumerate() {
        let file = dir.path().join(format!("q-run{}.iolog", i + 1));
        assert_eq!(ios(&r["result"]), 200);
        assert_eq!(entries(&file), ios(&r["result"]), "{}", file.display());
    }
    assert_eq!(listing(dir.path()), ["q-run1.iolog", "q-run2.iolog", "q-run3.iolog"]);
}

/// Runs `args`, expecting a refusal (exit 2, one line containing each of `said`), and
/// that `victim` still holds `bytes` and `dir` holds only `before`.
fn refused(args: &[&str], said: &[&str], victim: &Path, bytes: &[u8], dir: &Path, before: &[String]) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    for s in said {
        assert!(stderr.contains(s), "`{s}` not in: {stderr}");
    }
    assert_eq!(std::fs::read(victim).unwrap(), bytes, "{} was written", victim.display());
    assert_eq!(listing(dir), before, "something was created");
}

#[test]
fn a_log_on_a_target_the_job_file_or_another_jobs_log_is_refused_before_anything_is_written() {
    let dir = temp_dir();
    let d = dir.path();
    let bytes = b"precious bytes, not an iolog\n".repeat(4096);
    let target = d.join("t.dat");
    std::fs::write(&target, &bytes).unwrap();
    let t = path_str(&target);
    let job = d.join("j.toml");

    // A job's own key equal to its target.
    std::fs::write(&job, format!("[a]\ntargets = [\"{t}\"]\nops = 10\nwrite-iolog = \"{t}\"\n")).unwrap();
    let before = listing(d);
    refused(
        &["run", &path_str(&job)],
        &[
            &format!("j.toml:4: key `write-iolog` of [a]: --write-iolog {t} is the run's own target"),
            "give another path",
        ],
        &target,
        &bytes,
        d,
        &before,
    );

    // [global]'s, whose file for job [a] (j-a.toml) is the job file itself.
    let j = path_str(&job);
    let named = d.join("j-a.toml");
    std::fs::write(&named, format!("[global]\nwrite-iolog = \"{j}\"\n[a]\ntargets = [\"{t}\"]\nops = 10\n")).unwrap();
    std::fs::remove_file(&job).unwrap();
    let job_text = std::fs::read(&named).unwrap();
    let before = listing(d);
    refused(
        &["run", &path_str(&named)],
        &[&format!(
            "j-a.toml:2: key `write-iolog` of [global] (job [a]): --write-iolog {n} is {n}, an input this command reads",
            n = path_str(&named)
        )],
        &named,
        &job_text,
        d,
        &before,
    );

    // A job's own key equal to the job file, and two jobs on one path.
    std::fs::remove_file(&named).unwrap();
    std::fs::write(&job, format!("[a]\ntargets = [\"{t}\"]\nops = 10\nwrite-iolog = \"{j}\"\n")).unwrap();
    let job_text = std::fs::read(&job).unwrap();
    let before = listing(d);
    refused(
        &["run", &path_str(&job)],
        &[&format!("j.toml:4: key `write-iolog` of [a]: --write-iolog {j} is {j}, an input this command reads")],
        &job,
        &job_text,
        d,
        &before,
    );
    let shared = d.join("x.iolog");
    std::fs::write(&shared, &bytes).unwrap();
    let x = path_str(&shared);
    let other = path_str(&d.join("u.dat"));
    std::fs::write(
        &job,
        format!(
            "[a]\ntargets = [\"{t}\"]\nops = 10\nwrite-iolog = \"{x}\"\n[b]\ntargets = [\"{other}\"]\nops = 10\nwrite-iolog = \"{x}\"\n"
        ),
    )
    .unwrap();
    let before = listing(d);
    refused(
        &["run", &path_str(&job)],
        &[
            &format!("jobs [a] and [b] would write one iolog, {x}"),
            "j.toml:4: key `write-iolog` of [a]",
            "j.toml:8: key `write-iolog` of [b]",
            "give each job its own write-iolog path",
        ],
        &shared,
        &bytes,
        d,
        &before,
    );

    // The flag after the file, whose file per job is another output.
    std::fs::write(&job, format!("[a]\ntargets = [\"{t}\"]\nops = 10\n")).unwrap();
    let json = d.join("r-a.iolog");
    std::fs::write(&json, &bytes).unwrap();
    let before = listing(d);
    refused(
        &["run", &path_str(&job), "--write-iolog", &path_str(&d.join("r.iolog")), "--json", &path_str(&json)],
        &["--write-iolog in the flags after the job file (job [a])", "are the same file"],
        &json,
        &bytes,
        d,
        &before,
    );

    // A sweep's file of one run that is its target; a search's.
    let victim = d.join("s-point1-rep1.iolog");
    std::fs::write(&victim, &bytes).unwrap();
    let v = path_str(&victim);
    let before = listing(d);
    refused(
        &["sweep", &v, "--ops", "10", "--queue-depth", "1,2", "--write-iolog", &path_str(&d.join("s.iolog"))],
        &[&format!("--write-iolog {v} is the run's own target")],
        &victim,
        &bytes,
        d,
        &before,
    );
    let victim = d.join("q-run2.iolog");
    std::fs::write(&victim, &bytes).unwrap();
    let v = path_str(&victim);
    let before = listing(d);
    refused(
        &["search", &v, "--ops", "10", "--p99-max", "1ms", "--write-iolog", &path_str(&d.join("q.iolog"))],
        &[&format!("--write-iolog {v} is the run's own target")],
        &victim,
        &bytes,
        d,
        &before,
    );
}

#[test]
fn a_fio_job_file_with_write_iolog_writes_its_logs() {
    let dir = temp_dir();
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_jobs/write-iolog.fio");
    let json = dir.path().join("r.json");
    let mut cmd = iopulse();
    cmd.current_dir(dir.path()).args([
        "run",
        &path_str(&fio),
        "--directory",
        &path_str(dir.path()),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let (code, _, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let jobs = r["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["seq-read", "rand-write"]);
    // size=1m of bs=4k: 256 I/Os each; [global]'s name with the job's, the job's own as given.
    for (job, file) in [(&jobs[0], "fio-run-seq-read.iolog"), (&jobs[1], "own.iolog")] {
        assert_eq!(ios(job), 256, "{}", job["job"]);
        assert_eq!(entries(&dir.path().join(file)), 256, "{file}");
    }
    assert!(!dir.path().join("fio-run.iolog").exists());
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("write_iolog in [global]: job [seq-read] writes its own log")),
        "{notes:?}"
    );
}

/// Each entry per action of a log: reads, writes, trims, flushes; and whether every entry's
/// time is at most its target's `close` line's, which comes after every entry.
fn per_action(log: &Path) -> ([u64; 4], bool) {
    let text = std::fs::read_to_string(log).unwrap();
    let mut counts = [0u64; 4];
    let (mut last_entry_us, mut close_us, mut entry_after_close) = (0u64, None::<u64>, false);
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let us: u64 = f[0].parse().unwrap();
        match f[2] {
            "add" | "open" => {}
            "close" => close_us = Some(us),
            action => {
                entry_after_close |= close_us.is_some();
                last_entry_us = last_entry_us.max(us);
                let i = ["read", "write", "trim", "sync", "datasync"].iter().position(|a| *a == action).unwrap();
                counts[i.min(3)] += 1;
            }
        }
    }
    (counts, !entry_after_close && close_us.is_some_and(|c| c >= last_entry_us))
}

/// The log holds exactly the I/Os the result counts, per action, and nothing after `close`:
/// runs that end on time with I/Os in flight (io_uring at depth 16, and sync), one with a
/// ramp (whose I/Os are in no figure), one with trims and flushes, and one with --end-fsync
/// (whose flushes the result counts). Before, the I/Os in
/// flight at the window's end were logged though not counted (1,501 entries for 1,500
/// ops), and a ramp's too.
#[test]
fn the_log_holds_exactly_the_ios_the_result_counts_and_nothing_after_close() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let cases: [&[&str]; 5] = [
        &["--engine", "io_uring", "--queue-depth", "16", "--random", "--read-percent", "70", "--duration", "0.5"],
        // --end-fsync's flushes are counted: each is in the log (they were not).
        &["--threads", "2", "--random", "--read-percent", "50", "--duration", "0.3", "--end-fsync"],
        &["--random", "--read-percent", "50", "--duration", "0.3"],
        &["--engine", "io_uring", "--queue-depth", "8", "--random", "--duration", "0.3", "--ramp", "0.2"],
        &[
            "--engine",
            "io_uring",
            "--queue-depth",
            "4",
            "--random",
            "--trim-percent",
            "10",
            "--read-percent",
            "50",
            "--fsync-every",
            "8",
            "--duration",
            "0.3",
        ],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let (log, json) = (dir.path().join(format!("{i}.iolog")), dir.path().join(format!("{i}.json")));
        let mut args = vec![f.as_str(), "--file-size", "8M"];
        args.extend_from_slice(extra);
        let (log_s, json_s) = (path_str(&log), path_str(&json));
        args.extend(["--write-iolog", &log_s, "--json", &json_s, "--quiet"]);
        run_ok(&args);
        let r = read_json(&json);
        let counted = |op: &str| r[op]["ops"].as_u64().unwrap_or(0);
        let want = [counted("read"), counted("write"), counted("trim"), counted("flush")];
        let (got, closed_last) = per_action(&log);
        assert_eq!(got, want, "{extra:?}: the log's reads, writes, trims, flushes against the result's");
        assert!(want[0] + want[1] > 0, "{extra:?}: the run did I/O");
        assert!(closed_last, "{extra:?}: an entry after close");
    }
}
