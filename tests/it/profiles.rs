//! Profiles: `iopulse` with no target runs the default profile (sequential 1 MiB reads
//! and writes at depth 8, random 4 KiB reads and writes at depth 32 and 1) on a
//! temporary file, prints one table and removes the file, on ext4 and on a tmpfs;
//! `iopulse profiles` lists the shipped profiles and prints them; `--profile NAME` runs
//! one on a given target; a workload flag without a target is still one run.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

const STEPS: &[(&str, u64, bool, u64, bool)] = &[
    // name, block size, random, queue depth, writes
    ("seq-read-1M-q8", 1 << 20, false, 8, false),
    ("seq-write-1M-q8", 1 << 20, false, 8, true),
    ("rand-read-4K-q32", 4096, true, 32, false),
    ("rand-write-4K-q32", 4096, true, 32, true),
    ("rand-read-4K-q1", 4096, true, 1, false),
    ("rand-write-4K-q1", 4096, true, 1, true),
];

/// `iopulse --duration 200ms --json FILE` with TMPDIR=`tmpdir`: the default profile. Checks
/// the table and the result against each other and the steps; returns the I/O modes shown.
fn default_profile_in(tmpdir: &Path, filesystem: &str) -> Vec<String> {
    let out = temp_dir();
    let json = out.path().join("profile.json");
    let mut cmd = iopulse();
    cmd.env("TMPDIR", tmpdir).args(["--duration", "200ms", "--json", &path_str(&json)]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let mut lines = stdout.lines();
    let header = lines.next().unwrap();
    assert!(header.contains("profile default") && header.contains("(temporary, removed)"), "{stdout}");
    assert!(header.contains(filesystem), "not on {filesystem}: {header}");
    assert!(lines.next().unwrap().split_whitespace().eq(["step", "I/O", "mode", "MB/s", "IOPS", "p50", "p99", "time"]));
    let doc = read_json(&json);
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), STEPS.len());
    let mut modes = Vec::new();
    let mut total_writes = 0;
    for ((name, bs, random, depth, writes), job) in STEPS.iter().zip(jobs) {
        let row = lines.next().unwrap_or_else(|| panic!("no row for {name}: {stdout}"));
        assert!(row.starts_with(name), "{row}");
        assert_eq!(job["job"], *name);
        let spec = &job["spec"];
        assert_eq!(u64_at(spec, &["block_size_bytes"]), *bs, "{name}");
        assert_eq!(u64_at(spec, &["queue_depth"]), *depth, "{name}");
        assert_eq!(spec["order"] == "random", *random, "{name}: {}", spec["order"]);
        assert_eq!(spec["direct"], true, "{name}: O_DIRECT is asked for");
        let (reads, writes_done) = (u64_at(job, &["read", "ops"]), u64_at(job, &["write", "ops"]));
        // A step does only its own direction; a slow device may complete no 1 MiB write in
        // a 200 ms step, so the writes are counted over all write steps below.
        assert!(
            if *writes { reads == 0 } else { reads > 0 && writes_done == 0 },
            "{name}: {reads} reads, {writes_done} writes"
        );
        total_writes += writes_done;
        // The mode shown is the one the step really ran with.
        let direct = &job["direct"];
        let mode = match (direct["effective"].as_bool().unwrap(), direct["memory_backed"].as_bool().unwrap_or(false)) {
            (true, true) => "O_DIRECT (in memory)",
            (true, false) => "O_DIRECT",
            (false, _) => "buffered (no O_DIRECT)",
        };
        assert!(row[20..].trim_start().starts_with(mode), "{name}: {mode} expected: {row}");
        // The figures shown are the result's: IOPS as the report writes them.
        // Columns: step 20, mode 22, MB/s 10, IOPS 10, one space apart.
        let shown_iops: String = row.chars().skip(55).take(10).collect();
        assert_eq!(shown_iops.trim(), iops_text(job), "{row}");
        assert_eq!(job["targets"][0]["removed_after_run"], true);
        modes.push(mode.to_string());
    }
    assert!(total_writes > 0, "no write step wrote");
    let path = jobs[0]["targets"][0]["path"].as_str().unwrap();
    assert!(path.starts_with(&path_str(tmpdir)), "{path}");
    assert!(!Path::new(path).exists(), "{path} was left behind");
    assert_eq!(std::fs::read_dir(tmpdir).unwrap().count(), 0, "the temporary folder was left behind");
    modes
}

/// IOPS of `job` as the text report shows them (the report's own rounding).
fn iops_text(job: &Value) -> String {
    let iops = job["total"]["iops"].as_f64().unwrap();
    iopulse::testing::shown_iops(iops)
}

#[test]
fn the_default_profile_runs_on_ext4_and_removes_its_file() {
    let dir = temp_dir();
    let fs = String::from_utf8(
        std::process::Command::new("stat").args(["-f", "-c", "%T", &path_str(dir.path())]).output().unwrap().stdout,
    )
    .unwrap();
    if fs.trim() != "ext2/ext3" {
        eprintln!("SKIP: {} is on {}, not ext4", dir.path().display(), fs.trim());
        return;
    }
    let modes = default_profile_in(dir.path(), "ext4");
    eprintln!("ext4: {modes:?}");
}

#[test]
fn the_default_profile_runs_on_a_tmpfs_with_the_mode_it_really_got() {
    let Some(mount) = crate::common::root::mount_tmpfs("300M", "", "the default profile on a tmpfs") else { return };
    let modes = default_profile_in(mount.path(), "tmpfs");
    // Older kernels refuse O_DIRECT on tmpfs (the loud fallback), newer ones accept it on
    // memory: either way the table says which.
    eprintln!("tmpfs: {modes:?}");
    assert!(modes.iter().all(|m| m != "O_DIRECT"), "a tmpfs has no device: {modes:?}");
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
    assert!(stderr.contains("--profile no profile `nope`: give one of default, oltp"), "{stderr}");
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
