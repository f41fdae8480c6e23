//! Profiles: `iopulse` with no target runs the default profile (KDiskMark's tests: SEQ1M
//! Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, each read and written, `--loops` passes) on
//! a temporary file, prints one table with read and write side by side (the mean of the
//! passes, as KDiskMark's Default) and removes the file, on ext4 and on a tmpfs; where $TMPDIR is in memory it
//! moves to $XDG_CACHE_HOME on a disk, or says once that it measures memory; `iopulse
//! profiles` lists the shipped profiles and prints them; `--profile NAME` runs one on a
//! given target; a workload flag without a target is still one run.

use crate::common::root;
use crate::common::*;
use serde_json::Value;
use std::path::Path;

const TESTS: &[(&str, u64, bool, u64)] = &[
    // KDiskMark's name, block size, random, queue depth
    ("SEQ1M Q8T1", 1 << 20, false, 8),
    ("SEQ1M Q1T1", 1 << 20, false, 1),
    ("RND4K Q32T1", 4096, true, 32),
    ("RND4K Q1T1", 4096, true, 1),
];

/// The default profile, 2 passes of 200 ms on a 32 MiB file, with `env` set: the table and
/// the result checked against each other and KDiskMark's tests. Returns the I/O mode line,
/// the place line (if any), stderr and the JSON document.
fn default_profile_with(env: &[(&str, &Path)], filesystem: &str) -> (String, Option<String>, String, Value) {
    let out = temp_dir();
    let json = out.path().join("profile.json");
    let mut cmd = iopulse();
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(["--duration", "200ms", "--loops", "2", "--file-size", "32M", "--json", &path_str(&json)]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let mut lines = stdout.lines();
    let header = lines.next().unwrap();
    assert!(header.contains("profile default") && header.contains("(temporary, removed)"), "{stdout}");
    assert!(header.contains(filesystem), "not on {filesystem}: {header}");
    assert!(header.contains("32 MiB"), "{header}");
    let mut line = lines.next().unwrap();
    let place = (!line.starts_with("I/O: ")).then(|| line.to_string());
    if place.is_some() {
        line = lines.next().unwrap();
    }
    let mode = line.to_string();
    assert!(
        mode.contains("at most 0.200 s or 100% of the file per step, 2 passes: MB/s and IOPS their mean"),
        "{mode}"
    );
    assert!(lines.next().unwrap().contains("Read"), "{stdout}");
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(head, ["test", "MB/s", "IOPS", "p50", "p99", "±", "│", "MB/s", "IOPS", "p50", "p99", "±"], "{stdout}");
    let doc = read_json(&json);
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), TESTS.len() * 4, "each test read and written, twice");
    let job = |name: &str| {
        jobs.iter()
            .find(|j| j["job"] == name)
            .unwrap_or_else(|| panic!("no job {name}: {:?}", jobs.iter().map(|j| &j["job"]).collect::<Vec<_>>()))
    };
    let mut total_writes = 0;
    for (test, bs, random, depth) in TESTS {
        let row = lines.next().unwrap_or_else(|| panic!("no row for {test}: {stdout}"));
        assert!(row.starts_with(test), "{row}");
        let (read_cells, write_cells) = row[test.len()..].split_once('│').unwrap();
        for (cells, dir, write) in [(read_cells, "read", false), (write_cells, "write", true)] {
            let name = format!("{}-{dir}", test.replace(' ', "-"));
            let passes = [job(&name), job(&format!("{name}.pass2"))];
            for (i, j) in passes.iter().enumerate() {
                let spec = &j["spec"];
                assert_eq!(u64_at(spec, &["block_size_bytes"]), *bs, "{name}");
                assert_eq!(u64_at(spec, &["queue_depth"]), *depth, "{name}");
                assert_eq!(u64_at(spec, &["threads"]), 1, "{name}");
                assert_eq!(spec["order"] == "random", *random, "{name}: {}", spec["order"]);
                assert_eq!(spec["direct"], true, "{name}: O_DIRECT is asked for");
                assert_eq!(
                    u64_at(j, &["phase"]) as usize,
                    jobs.iter().position(|x| x == *j).unwrap() + 1,
                    "{name}: a phase each"
                );
                let (reads, writes) = (u64_at(j, &["read", "ops"]), u64_at(j, &["write", "ops"]));
                // A slow device may complete no 1 MiB write in a 200 ms step: the writes
                // are counted over all write steps below.
                assert!(
                    if write { reads == 0 } else { reads > 0 && writes == 0 },
                    "{name} pass {i}: {reads} reads, {writes} writes"
                );
                total_writes += writes;
                assert_eq!(j["targets"][0]["removed_after_run"], true);
            }
            // MB/s shown is the mean of the passes' figures (KDiskMark's Default).
            let mbs: Vec<f64> = passes.iter().map(|j| j["total"]["bw_bytes_per_sec"].as_f64().unwrap() / 1e6).collect();
            let shown: Vec<&str> = cells.split_whitespace().collect();
            assert_eq!(shown[0], format!("{:.1}", (mbs[0] + mbs[1]) / 2.0), "{name}: {row}");
            let spread = (mbs[0] - mbs[1]).abs() / ((mbs[0] + mbs[1]) / 2.0);
            let spread_shown = if spread.is_finite() { format!("{:.0}%", spread * 100.0) } else { "0%".into() };
            assert_eq!(*shown.last().unwrap(), spread_shown, "{name}: {row}");
        }
    }
    assert!(total_writes > 0, "no write step wrote");
    // As KDiskMark's fio: each step stops at the file's size (or its time), writes end with
    // an fsync counted in the step, buffers on base pages, a sleeping wait; what differs is
    // named under the table, the shortened steps among it.
    for j in jobs {
        let spec = &j["spec"];
        assert_eq!(spec["io_limit_percent"], 100, "{}", j["job"]);
        assert_eq!(spec["buffer_pages"], "base", "{}", j["job"]);
        let write = j["job"].as_str().unwrap().contains("-write");
        assert_eq!(spec["end_fsync"] == true, write, "{}", j["job"]);
        if write {
            assert_eq!(u64_at(j, &["flush", "ops"]), 1, "{}: the end's fsync is counted", j["job"]);
        }
    }
    let beside = lines.find(|l| l.starts_with("Beside KDiskMark")).unwrap_or_else(|| panic!("{stdout}"));
    for said in ["KiB/s ÷ 1000 (2.4 % less)", "no 5 s pause", "steps of 0.200 s (KDiskMark: 5 s)"] {
        assert!(beside.contains(said), "{said}: {beside}");
    }
    for not_said in ["engine", "huge pages", "spinning", "whole time"] {
        assert!(!beside.contains(not_said), "{not_said}: {beside}");
    }
    (mode, place, stderr, doc)
}

/// Flags that move the default profile away from KDiskMark's fio are named under its table.
#[test]
fn the_default_profile_names_each_flag_that_departs_from_kdiskmark() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    // The default profile on 16 MiB, one pass, with `extra` flags: its table.
    let table = |extra: &[&str]| {
        let mut args = vec!["--profile", "default", f.as_str(), "--file-size", "16M", "--loops", "1"];
        args.extend_from_slice(extra);
        run_ok(&args).0
    };
    let stdout = table(&["--engine", "io_uring", "--buffer-pages", "huge", "--completion-wait", "adaptive"]);
    let beside = stdout.lines().find(|l| l.starts_with("Beside KDiskMark")).unwrap_or_else(|| panic!("{stdout}"));
    for said in ["engine io_uring (KDiskMark: libaio)", "buffers on huge pages", "spinning up to 50 µs"] {
        assert!(beside.contains(said), "{said}: {beside}");
    }
    assert!(!beside.contains("steps of"), "5 s steps as KDiskMark's: {beside}");
    // With the null engine the tool's CPU is all there is: the steps whose worker was busy
    // at least 90 % of the window (its CPU time over the window, from the result) are named
    // with their CPU per I/O, and no other. On a machine as busy as a test run's (four
    // tests on two cores) a worker may be given less than that in every step of one try:
    // a few tries, then a skip that says so.
    let json = dir.path().join("steps.json");
    let json_arg = path_str(&json);
    let mut bound = Vec::new();
    for _ in 0..4 {
        let stdout = table(&["--engine", "null", "--io-limit", "20000%", "--json", &json_arg]);
        let doc = read_json(&json);
        let busy_steps: Vec<String> = doc["jobs"]
            .as_array()
            .expect("the steps' results")
            .iter()
            .filter(|j| {
                let cpu = &j["cpu"]["workers"];
                let busy_ns = cpu["user_ns"].as_u64().unwrap() + cpu["sys_ns"].as_u64().unwrap();
                let threads = j["spec"]["threads"].as_u64().unwrap() as f64;
                busy_ns as f64 / (j["window_ns"].as_u64().unwrap().max(1) as f64 * threads) >= 0.9
            })
            .map(|j| {
                // `SEQ1M-Q8T1-read` is the table's `SEQ1M Q8T1 read`.
                let (test, side) = j["job"].as_str().unwrap().rsplit_once('-').unwrap();
                format!("{} {side}:", test.replace('-', " "))
            })
            .collect();
        bound = stdout.lines().filter(|l| l.contains(": its worker was busy")).map(str::to_string).collect();
        // The table's order is by test; the results', reads then writes.
        let mut named: Vec<&str> = bound.iter().map(|l| &l[..l.find(':').unwrap() + 1]).collect();
        named.sort_unstable();
        let mut busy_steps = busy_steps;
        busy_steps.sort_unstable();
        assert_eq!(named, busy_steps, "the steps named are those whose worker was busy ≥ 90 %:\n{stdout}");
        if !bound.is_empty() {
            break;
        }
    }
    if bound.is_empty() {
        root::skip("a step bound by the tool's CPU", "no step's worker had 90 % of a CPU in four tries here");
        return;
    }
    for line in bound {
        assert!(line.contains("% of the window at") && line.contains("of CPU per I/O"), "{line}");
    }
}

/// The folder the profile's file was in: empty (the file and its folder removed).
fn assert_removed(doc: &Value, dir: &Path) {
    let path = doc["jobs"][0]["targets"][0]["path"].as_str().unwrap();
    assert!(path.starts_with(&path_str(dir)), "{path} is not in {}", dir.display());
    assert!(!Path::new(path).exists(), "{path} was left behind");
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "the temporary folder was left behind");
}

#[test]
fn the_default_profile_runs_kdiskmarks_tests_on_ext4_and_removes_its_file() {
    let dir = temp_dir();
    let fs = String::from_utf8(
        std::process::Command::new("stat").args(["-f", "-c", "%T", &path_str(dir.path())]).output().unwrap().stdout,
    )
    .unwrap();
    if fs.trim() != "ext2/ext3" {
        eprintln!("SKIP: {} is on {}, not ext4", dir.path().display(), fs.trim());
        return;
    }
    let (mode, place, stderr, doc) = default_profile_with(&[("TMPDIR", dir.path())], "ext4");
    assert_eq!(place, None, "$TMPDIR is on a disk: nothing to say");
    assert!(mode.starts_with("I/O: O_DIRECT ·"), "{mode}");
    assert_removed(&doc, dir.path());
    // The steps' warnings, gathered: each once (whatever its figures), naming its steps.
    let mut seen = std::collections::HashSet::new();
    for line in stderr.lines().filter(|l| l.starts_with('⚠')) {
        assert!(line.ends_with(')'), "a warning without its steps: {line}");
        let text = line.rsplit_once(" (").unwrap().0;
        let masked: String = text.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
        assert!(seen.insert(masked), "said twice: {stderr}");
    }
}

/// The steps' warnings are said under the table, not above it: each once, with the steps
/// it concerns (on a tmpfs every step warns that it measures memory). Before, each step
/// printed its own as it ran, above the table, `[step] ⚠ ...`.
#[test]
fn the_steps_warnings_are_gathered_under_the_table_naming_their_steps() {
    let Some(mount) = crate::common::root::mount_tmpfs("200M", "", "the default profile's warnings on a tmpfs") else {
        return;
    };
    let home = mount.path().join("home");
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", "exec \"$0\" \"$@\" 2>&1"])
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .args(["--duration", "100ms", "--loops", "1", "--file-size", "16M"])
        .env("TMPDIR", mount.path())
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let table_end = lines.iter().position(|l| l.starts_with("MB/s is 10^6")).expect("the table's last line");
    let table_start = lines.iter().position(|l| l.starts_with("test ")).expect("the table's head");
    assert!(lines[table_start..table_end].iter().all(|l| !l.contains('⚠')), "a warning inside the table: {text}");
    assert!(lines.iter().all(|l| !l.starts_with('[')), "a step's own line: {text}");
    let under: Vec<&&str> = lines[table_end + 1..].iter().filter(|l| l.starts_with('⚠')).collect();
    assert!(!under.is_empty(), "the steps' warnings under the table: {text}");
    let memory: Vec<&&&str> = under.iter().filter(|l| l.contains("memory")).collect();
    assert_eq!(memory.len(), 1, "the steps' word on memory, once: {text}");
    assert!(memory[0].ends_with("(every step)"), "naming the steps: {}", memory[0]);
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn where_tmpdir_is_in_memory_the_cache_directory_on_a_disk_is_used() {
    let Some(mount) = crate::common::root::mount_tmpfs("100M", "", "the default profile with $TMPDIR on a tmpfs")
    else {
        return;
    };
    let cache = temp_dir();
    let (_, place, _, doc) =
        default_profile_with(&[("TMPDIR", mount.path()), ("XDG_CACHE_HOME", cache.path())], "ext4");
    let place = place.expect("the place is said above the table");
    assert!(
        place.contains("is in memory (tmpfs): the file is in $XDG_CACHE_HOME")
            && place.contains(&path_str(cache.path())),
        "{place}"
    );
    assert_removed(&doc, cache.path());
    assert_eq!(std::fs::read_dir(mount.path()).unwrap().count(), 0, "nothing in $TMPDIR");
}

#[test]
fn with_no_disk_to_be_found_the_profile_says_once_that_it_measures_memory() {
    let Some(mount) = crate::common::root::mount_tmpfs("300M", "", "the default profile on a tmpfs") else { return };
    let home = mount.path().join("home");
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    let (mode, place, stderr, doc) = default_profile_with(
        &[("TMPDIR", mount.path()), ("XDG_CACHE_HOME", &home.join(".cache")), ("HOME", &home)],
        "tmpfs",
    );
    // Older kernels refuse O_DIRECT on tmpfs (the loud fallback), newer ones accept it on
    // memory: either way the table says which, and never plain O_DIRECT.
    assert!(!mode.starts_with("I/O: O_DIRECT ·"), "a tmpfs has no device: {mode}");
    let place = place.expect("said above the table");
    assert!(
        place.contains("is in memory (tmpfs) and neither $XDG_CACHE_HOME nor ~/.cache is a directory on a disk"),
        "{place}"
    );
    assert!(place.contains("give a file on the disk to test"), "the fix: {place}");
    assert_eq!(stderr.matches("these figures are memory's").count(), 1, "said once: {stderr}");
    // The steps' own word on memory (the same for each) is said once too, not per step.
    let memory_lines = stderr.lines().filter(|l| l.contains("memory") && l.contains('⚠')).count();
    assert!(memory_lines <= 2, "one warning about memory, not one per step: {stderr}");
    assert!(
        doc["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("these figures are memory's"))
    );
    let path = doc["jobs"][0]["targets"][0]["path"].as_str().unwrap();
    assert!(path.starts_with(&path_str(mount.path())), "{path}");
    std::fs::remove_dir_all(&home).unwrap();
    assert_eq!(std::fs::read_dir(mount.path()).unwrap().count(), 0, "the temporary folder was left behind");
}

#[test]
fn loops_without_a_profile_are_refused_naming_the_fix() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let (code, stdout, stderr) = run(&[&f, "--loops", "3", "--duration", "0.1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("--loops repeats the steps of a profile: give --profile NAME"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing created");
    let (code, _, stderr) = run(&["--loops", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--loops"), "{stderr}");
}

#[test]
fn profiles_are_listed_printed_and_run_on_a_given_target() {
    let (list, _) = run_ok(&["profiles"]);
    for name in ["default", "oltp", "streaming", "cache-cdn", "integrity"] {
        assert!(list.lines().any(|l| l.starts_with(name)), "{name} missing: {list}");
        let (text, _) = run_ok(&["profiles", name]);
        let shipped =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("profiles/{name}.toml")));
        assert_eq!(text, shipped.unwrap(), "{name}: not the shipped file");
    }
    let dir = temp_dir();
    let target = dir.path().join("stream.dat");
    let t = path_str(&target);
    let r = run_json(&["--profile", "streaming", &t, "--file-size", "8M", "--duration", "200ms"]);
    let jobs: Vec<&str> = r["jobs"].as_array().unwrap().iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(jobs, vec!["read", "write"]);
    assert!(u64_at(&r["jobs"][0], &["read", "ops"]) > 0 && u64_at(&r["jobs"][1], &["write", "ops"]) > 0);
    assert_eq!(u64_at(&r["jobs"][1], &["spec", "block_size_bytes"]), 1 << 20);
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 8 << 20, "the given target stays");
}

#[test]
fn a_profile_printed_runs_as_a_job_file_and_bad_names_are_refused() {
    let dir = temp_dir();
    let (code, stdout, stderr) = run(&["--profile", "nope", "--duration", "1s"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--profile no profile `nope`: give one of default, default-t16, oltp"), "{stderr}");
    let (code, _, stderr) = run(&["profiles", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no profile `nope`"), "{stderr}");
    // In a job file, `profile` is not a key.
    let job = dir.path().join("j.toml");
    std::fs::write(&job, "[a]\nprofile = \"oltp\"\n").unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&job)]);
    assert_eq!(code, 2);
    assert!(stderr.contains(":2: key `profile` of [a]: a profile is a job file of its own"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "something was created");
}

#[test]
fn a_workload_flag_without_a_target_is_one_run_on_a_temporary_file() {
    let dir = temp_dir();
    let mut cmd = iopulse();
    cmd.env("TMPDIR", dir.path()).args(["--random", "--duration", "200ms", "--output-format", "json", "--quiet"]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert!(r.get("jobs").is_none(), "a profile ran");
    assert_eq!(r["spec"]["order"], "random");
    assert_eq!(u64_at(&r, &["targets", "0", "size_bytes"]), 256 << 20);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
