//! Runs on several hosts without MPI (docs/distributed.md): `--start-at` opens
//! the window at a wall-clock time, `{rank}` and `{host}` give each process
//! its own paths, and `iopulse merge` says how far apart the windows were.
//! (The MPI cluster runs themselves are in tests/mpi.rs.)

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn now_unix_s() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}

#[test]
fn start_at_opens_the_window_no_earlier_than_asked() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    // Whole seconds, at least 2 s ahead: the window must not open before.
    let at_s = now_unix_s() + 3;
    let r = run_json(&[&target, "--file-size", "1m", "--duration", "0.2", "--start-at", &format!("@{at_s}")]);
    let at_ns = at_s * 1_000_000_000;
    let start_ns = u64_at(&r, &["window_start_unix_ns"]);
    assert!(start_ns >= at_ns, "the window opened {} ns before --start-at", at_ns - start_ns);
    assert_eq!(u64_at(&r, &["start_at", "requested_unix_ns"]), at_ns);
    assert_eq!(r["start_at"]["missed"], false);
    let late_ns = u64_at(&r, &["start_at", "late_ns"]);
    assert_eq!(late_ns, start_ns - at_ns);
    assert!(late_ns < 500_000_000, "opened {late_ns} ns late on an idle machine");
    let requested = r["start_at"]["requested"].as_str().unwrap();
    assert!(requested.ends_with('Z'), "{requested}");
}

#[test]
fn a_start_time_already_past_starts_at_once_and_says_so() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let json = dir.path().join("r.json");
    let at = format!("@{}", now_unix_s() - 5);
    let (code, stdout, stderr) =
        run(&[&target, "--file-size", "1m", "--duration", "0.1", "--start-at", &at, "--json", &path_str(&json)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("--start-at") && stderr.contains("had passed"), "{stderr}");
    assert!(stdout.contains("Start at:") && stdout.contains("missed"), "{stdout}");
    let r = read_json(&json);
    assert_eq!(r["start_at"]["missed"], true);
    assert!(u64_at(&r, &["start_at", "late_ns"]) >= 5_000_000_000);
    assert!(r["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("--start-at")));
}

#[test]
fn rank_and_host_placeholders_are_rank_0_and_this_host_without_mpi() {
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.{host}.dat"));
    let json_template = path_str(&dir.path().join("r.{host}.json"));
    let (code, _, stderr) =
        run(&[&template, "--file-size", "64k", "--duration", "0.05", "--json", &json_template, "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let host = hostname();
    let target = dir.path().join(format!("t.0.{host}.dat"));
    assert_eq!(std::fs::metadata(&target).expect("the substituted target").len(), 64 << 10);
    let r = read_json(dir.path().join(format!("r.{host}.json")));
    assert_eq!(r["targets"][0]["path"], path_str(&target));
    // The spec keeps the template: the same command line on every host gives equal specs.
    assert_eq!(r["spec"]["targets"][0], template.as_str());
    assert!(!dir.path().join("r.{host}.json").exists());
}

/// Starts iopulse with `args` in the background (JSON to a file), returns the child.
fn spawn(args: &[String]) -> std::process::Child {
    iopulse().args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn iopulse")
}

#[test]
fn merge_says_how_far_apart_the_windows_were() {
    let dir = temp_dir();
    // Two processes launched separately, as pdsh would, meeting at one --start-at.
    let at = format!("@{}", now_unix_s() + 3);
    let mut children = Vec::new();
    for name in ["a", "b"] {
        let args: Vec<String> = [
            path_str(&dir.path().join(format!("{name}.dat"))),
            "--file-size".into(),
            "1m".into(),
            "--duration".into(),
            "1".into(),
            "--engine".into(),
            "null".into(),
            "--seed".into(),
            "7".into(),
            "--start-at".into(),
            at.clone(),
            "--json".into(),
            path_str(&dir.path().join(format!("{name}.json"))),
            "--quiet".into(),
        ]
        .into();
        children.push(spawn(&args));
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let (a, b) = (path_str(&dir.path().join("a.json")), path_str(&dir.path().join("b.json")));
    // The targets differ (a.dat, b.dat): merged with --force, as a loop over hosts' own files would be.
    let (code, stdout, stderr) = run(&["merge", &a, &b, "--force", "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let m: Value = serde_json::from_str(&stdout).unwrap();
    let skew = &m["window_skew"];
    assert_eq!(skew["results"], 2);
    let starts: Vec<u64> =
        [&a, &b].iter().map(|f| u64_at(&read_json(Path::new(f)), &["window_start_unix_ns"])).collect();
    assert_eq!(u64_at(skew, &["start_ns"]), starts[0].abs_diff(starts[1]));
    assert!(u64_at(skew, &["start_ns"]) < 500_000_000, "windows 0.5 s apart despite --start-at: {skew}");
    assert_eq!(m["window_start_unix_ns"].as_u64(), starts.iter().min().copied());
    assert!(!stderr.contains("never ran all at once"), "{stderr}");
    let sources = m["merged_from"].as_array().unwrap();
    assert!(sources.iter().all(|s| s["window_start_unix_ns"].as_u64().unwrap() > 0));

    let (code, text, _) = run(&["merge", &a, &b, "--force", "--quiet"]);
    assert_eq!(code, 0);
    let line = text.lines().find(|l| l.starts_with("Windows:")).unwrap_or_else(|| panic!("no Windows line: {text}"));
    assert!(line.contains("2 results") && line.contains("starts") && line.contains("apart"), "{line}");
}

#[test]
fn merge_warns_when_the_windows_did_not_overlap() {
    let dir = temp_dir();
    let mut files = Vec::new();
    for name in ["a", "b"] {
        let json = dir.path().join(format!("{name}.json"));
        let target = path_str(&dir.path().join("t.dat"));
        let (code, _, stderr) = run(&[
            &target,
            "--file-size",
            "1m",
            "--duration",
            "0.1",
            "--engine",
            "null",
            "--json",
            &path_str(&json),
            "--quiet",
        ]);
        assert_eq!(code, 0, "{stderr}");
        files.push(path_str(&json));
        std::thread::sleep(Duration::from_millis(200));
    }
    let (code, text, stderr) = run(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("never ran all at once"), "one after the other, yet no warning: {stderr}");
    assert!(text.contains("Windows:  2 results"), "{text}");
    assert!(text.contains("all open together for 0.000 s"), "{text}");
}

/// A build without MPI started by mpirun: every process runs alone, but `{rank}` is the
/// launcher's rank, so processes on one host do not share a file, and it says so.
#[test]
fn a_build_without_mpi_under_an_mpi_launcher_runs_alone_with_the_launchers_rank() {
    if built_with("mpi") {
        eprintln!("SKIP: the binary under test was built with MPI; this is a build without it");
        return;
    }
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.dat"));
    let out = iopulse()
        .args([&template, "--file-size", "64k", "--duration", "0.05"])
        .env("OMPI_COMM_WORLD_RANK", "1")
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("built without MPI") && stderr.contains("rank 1 of 2"), "{stderr}");
    assert!(dir.path().join("t.1.dat").exists() && !dir.path().join("t.0.dat").exists());
}

/// The ranks of a job never share one `--verify-state` record: each keeps FILE.rankN (or
/// the path `{rank}` gives), and `iopulse verify` reads each against its rank's target.
#[test]
fn each_rank_keeps_its_own_verify_state_record() {
    if built_with("mpi") {
        eprintln!("SKIP: the binary under test was built with MPI (tests/it/mpi.rs runs its ranks' records)");
        return;
    }
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.dat"));
    let state = dir.path().join("s.state");
    for rank in ["0", "1"] {
        let out = iopulse()
            .args([&template, "--file-size", "256k", "--block-size", "16k", "--write-percent", "100", "--verify"])
            .args(["--fdatasync-every", "4", "--ops", "32", "--quiet", "--verify-state", &path_str(&state)])
            .env("OMPI_COMM_WORLD_RANK", rank)
            .env("OMPI_COMM_WORLD_SIZE", "2")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(!state.exists(), "two ranks shared the record");
    for rank in 0..2 {
        let record = dir.path().join(format!("s.state.rank{rank}"));
        let r = iopulse::testing::durable_record::read(&record).unwrap();
        assert_eq!(r.header.targets[0].path, dir.path().join(format!("t.{rank}.dat")));
        let out = iopulse().args(["verify", "--state", &path_str(&record)]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains(&format!("t.{rank}.dat")) && text.contains("intact"), "{text}");
    }
    // A path that names the rank is taken as it is.
    let named = path_str(&dir.path().join("s.{rank}.state"));
    let out = iopulse()
        .args([&template, "--file-size", "256k", "--block-size", "16k", "--write-percent", "100", "--verify"])
        .args(["--fdatasync-every", "4", "--ops", "32", "--quiet", "--verify-state", &named])
        .env("OMPI_COMM_WORLD_RANK", "1")
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("s.1.state").exists());
}
