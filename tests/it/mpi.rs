//! Cluster runs under MPI (`--features mpi`): the real binary started by
//! `mpirun --allow-run-as-root --oversubscribe -np 2` on this machine. Two ranks
//! lay out their own files, meet, measure and hand their results to rank 0,
//! whose one report must be exactly the sum of theirs; a rank that fails ends
//! the job with a message naming it, and nobody hangs.
//!
//! Without mpirun (Debian: openmpi-bin) each test prints `SKIP: mpirun not found`; with a
//! binary under test built without the feature (`iopulse --version` names its features),
//! `SKIP: ... built without --features mpi` (scripts/ci-features.sh runs them on one).

use crate::common::*;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A job that has not ended after this long is a hang: the test fails.
const JOB_TIMEOUT: Duration = Duration::from_secs(120);

fn mpirun_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("mpirun")).find(|p| p.is_file())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}

/// Runs `iopulse args` as `ranks` MPI ranks on this machine; (exit code, stdout, stderr),
/// or `None` (with a SKIP line) when there is no mpirun. Fails the test on a hang.
fn mpirun(ranks: u32, args: &[&str], during: impl FnOnce()) -> Option<(i32, String, String)> {
    if !built_with("mpi") {
        eprintln!("SKIP: the binary under test was built without --features mpi (scripts/ci-features.sh runs these)");
        return None;
    }
    let Some(mpirun) = mpirun_path() else {
        eprintln!("SKIP: mpirun not found: install openmpi-bin (Debian) to run the MPI cluster tests");
        return None;
    };
    // Each job has its own session directory: jobs of tests running at once otherwise race
    // to create the shared /tmp/ompi.HOST.UID, and the loser fails in orte_init ("A call to
    // mkdir was unable to create the desired directory ... File exists").
    let session = temp_dir();
    let mut child = Command::new(mpirun)
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string()])
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .args(args)
        // Shared-memory transfers without ptrace rights (containers, some VMs).
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("OMPI_MCA_orte_tmpdir_base", session.path())
        .env_remove("IOPULSE_BENCH_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    during();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > JOB_TIMEOUT {
            let _ = child.kill();
            panic!("the MPI job hung for {JOB_TIMEOUT:?}: {args:?}\nstderr: {}", stderr.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Some((status.code().unwrap_or(-1), stdout.join().unwrap(), stderr.join().unwrap()))
}

fn decode(v: &Value, op: &str) -> hdrhistogram::Histogram<u64> {
    iopulse::testing::stats::decode_histogram(v["histograms"][op].as_str().unwrap()).unwrap()
}

#[test]
fn two_ranks_make_one_cluster_result_that_is_the_sum_of_theirs() {
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.dat"));
    let args = [
        template.as_str(),
        "--file-size",
        "2m",
        "--duration",
        "0.5",
        "--random",
        "--write-percent",
        "30",
        "--output-format",
        "json",
        "--quiet",
    ];
    let Some((code, stdout, stderr)) = mpirun(2, &args, || {}) else { return };
    assert_eq!(code, 0, "stderr: {stderr}");
    let m: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {stdout}"));
    assert_valid(&schema_validator(), &m, "the cluster result");

    // Each rank laid out its own file.
    for rank in 0..2 {
        let file = dir.path().join(format!("t.{rank}.dat"));
        assert_eq!(std::fs::metadata(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())).len(), 2 << 20);
    }
    let c = &m["cluster"];
    assert_eq!((c["launcher"].as_str(), c["size"].as_u64()), (Some("mpi"), Some(2)));
    assert_eq!(c["hosts"], serde_json::json!([hostname()]));
    let ranks = c["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    let results: Vec<&Value> = ranks.iter().map(|r| &r["result"]).collect();
    for (i, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"], i as u64);
        assert_eq!(r["host"], hostname().as_str());
        assert_eq!(r["exit_code"], 0);
        assert!(r["error"].is_null());
        assert_eq!(r["ops"], results[i]["total"]["ops"]);
        assert!(u64_at(r, &["ops"]) > 0, "rank {i} did no I/O");
        let path = path_str(&dir.path().join(format!("t.{i}.dat")));
        assert_eq!(results[i]["targets"][0]["path"], path.as_str(), "rank {i}'s target");
        assert_eq!(results[i]["spec"]["targets"][0], template.as_str());
    }

    // Totals are the sum of the ranks', and the histograms their bucket-by-bucket sum.
    let sum = |path: &[&str]| results.iter().map(|r| u64_at(r, path)).sum::<u64>();
    assert_eq!(u64_at(&m, &["total", "ops"]), sum(&["total", "ops"]));
    for op in ["read", "write"] {
        assert_eq!(u64_at(&m, &[op, "ops"]), sum(&[op, "ops"]), "{op} ops");
        assert_eq!(u64_at(&m, &[op, "bytes"]), sum(&[op, "bytes"]), "{op} bytes");
        let mut expected = decode(results[0], op);
        expected.add(decode(results[1], op)).unwrap();
        let merged = decode(&m, op);
        assert_eq!(merged, expected, "{op}: the cluster histogram is the sum of the ranks'");
        for (a, b) in merged.iter_recorded().zip(expected.iter_recorded()) {
            assert_eq!((a.value_iterated_to(), a.count_at_value()), (b.value_iterated_to(), b.count_at_value()));
        }
        assert_eq!(merged.len(), u64_at(&m, &[op, "ops"]));
        let iops: f64 = results.iter().map(|r| r[op]["iops"].as_f64().unwrap()).sum();
        assert!((m[op]["iops"].as_f64().unwrap() - iops).abs() <= 1e-6 * iops.max(1.0), "{op} IOPS add up");
    }

    // The windows opened together: their starts are recorded and compared.
    let skew = &m["window_skew"];
    assert_eq!(skew["results"], 2);
    let starts: Vec<u64> = results.iter().map(|r| u64_at(r, &["window_start_unix_ns"])).collect();
    assert_eq!(u64_at(skew, &["start_ns"]), starts[0].abs_diff(starts[1]));
    assert!(u64_at(skew, &["start_ns"]) < 500_000_000, "ranks opened their windows 0.5 s apart: {skew}");
    let sources = m["merged_from"].as_array().unwrap();
    assert_eq!(sources[1]["file"], format!("rank 1 (host {})", hostname()).as_str());
}

#[test]
fn the_cluster_text_report_has_a_row_per_rank_and_only_rank_0_prints() {
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.dat"));
    let json = path_str(&dir.path().join("cluster.{rank}.json"));
    let series = path_str(&dir.path().join("series.csv"));
    let args = [
        template.as_str(),
        "--file-size",
        "1m",
        "--duration",
        "0.3",
        "--engine",
        "null",
        "--json",
        &json,
        "--timeseries",
        &series,
        "--interval",
        "100ms",
    ];
    let Some((code, stdout, stderr)) = mpirun(2, &args, || {}) else { return };
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout.matches("iopulse 0.").count(), 1, "one report, from rank 0: {stdout}");
    let host = hostname();
    assert!(stdout.contains(&format!("Cluster:  2 ranks on 1 host ({host}) · MPI")), "{stdout}");
    assert!(stdout.contains("Windows:  2 results · starts"), "{stdout}");
    let header = stdout.lines().find(|l| l.starts_with("Ranks")).unwrap_or_else(|| panic!("no rank table: {stdout}"));
    assert!(header.contains("IOPS") && header.contains("p99"), "{header}");
    for rank in 0..2 {
        let row = format!(" {rank}  {host}");
        assert!(stdout.lines().any(|l| l.contains(&row)), "no row for rank {rank}: {stdout}");
    }
    // --json is written once, by rank 0 ({rank} is 0 there), with the whole cluster.
    let written = read_json(dir.path().join("cluster.0.json"));
    assert_eq!(written["cluster"]["ranks"].as_array().unwrap().len(), 2);
    assert!(!dir.path().join("cluster.1.json").exists());
    // --timeseries: every rank's intervals, each row naming its rank.
    let csv = std::fs::read_to_string(dir.path().join("series.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("rank,t_s,interval_s,read_ops"), "{csv}");
    for rank in ["0", "1"] {
        let rows = csv.lines().skip(1).filter(|l| l.split(',').next() == Some(rank)).count();
        assert!(rows >= 2, "rank {rank} has {rows} intervals of 100 ms in a 0.3 s run: {csv}");
    }
}

#[test]
fn a_rank_with_a_bad_target_ends_the_job_naming_it() {
    let dir = temp_dir();
    // Rank 0's directory exists, rank 1's does not.
    std::fs::create_dir(dir.path().join("d0")).unwrap();
    let template = path_str(&dir.path().join("d{rank}/t.dat"));
    let args = [template.as_str(), "--file-size", "1m", "--duration", "5"];
    let Some((code, stdout, stderr)) = mpirun(2, &args, || {}) else { return };
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("iopulse: error: rank 1 (host "))
        .unwrap_or_else(|| panic!("no message naming rank 1: {stderr}"));
    assert!(line.contains(&hostname()) && line.contains("d1"), "{line}");
    assert!(!stderr.contains("rank 0 (host"), "rank 0 did not fail: {stderr}");
    assert!(!stdout.contains("IOPS"), "no report for a job that never started: {stdout}");
    // The ranks met before anything was touched: rank 0 never laid its file out.
    assert!(!dir.path().join("d0/t.dat").exists(), "rank 0 created its file");

    // Every rank refusing its target: nothing was touched anywhere, exit 2, each rank named.
    let nowhere = path_str(&dir.path().join("none{rank}/t.dat"));
    let Some((code, _, stderr)) = mpirun(2, &[nowhere.as_str(), "--duration", "5"], || {}) else { return };
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("rank 0 (host ") && stderr.contains("rank 1 (host "), "{stderr}");

    // A command line every rank refuses: exit 2, said once (by rank 0).
    let Some((code, _, stderr)) = mpirun(2, &[template.as_str(), "--block-size", "0"], || {}) else { return };
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.matches("iopulse: error: --block-size 0").count(), 1, "{stderr}");
}

#[test]
fn a_rank_failing_during_layout_ends_the_job_and_the_others_remove_their_files() {
    // Rank 1's directory is a 1 MiB tmpfs: its 8 MiB layout runs out of space, while
    // rank 0 lays its file out and then waits for rank 1 at the start line.
    let Some(tmpfs) = root::mount_tmpfs("1m", "", "a rank failing during layout") else { return };
    let dir = temp_dir();
    std::fs::create_dir(dir.path().join("r0")).unwrap();
    std::os::unix::fs::symlink(tmpfs.path(), dir.path().join("r1")).unwrap();
    let template = path_str(&dir.path().join("r{rank}/t.dat"));
    let args = [template.as_str(), "--file-size", "8m", "--duration", "5"];
    let Some((code, stdout, stderr)) = mpirun(2, &args, || {}) else { return };
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("iopulse: error: rank 1 (host "))
        .unwrap_or_else(|| panic!("no message naming rank 1: {stderr}"));
    assert!(line.contains("full") || line.contains("space"), "{line}");
    assert!(!stdout.contains("IOPS"), "no report for a job that never started: {stdout}");
    assert!(!dir.path().join("r0/t.dat").exists(), "rank 0 left the file it created behind");
    assert!(!tmpfs.path().join("t.dat").exists(), "rank 1 left its partial file behind");
}

#[test]
fn a_rank_failing_during_the_window_fails_the_job_with_its_name_in_the_report() {
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.dat"));
    let victim = dir.path().join("t.1.dat");
    let args = [template.as_str(), "--file-size", "1m", "--duration", "4", "--random", "--output-format", "json"];
    // Once rank 1's file is laid out, cut it short under its feet: its reads come back short.
    let cut = || {
        let started = Instant::now();
        while std::fs::metadata(&victim).map_or(true, |m| m.len() < 1 << 20) {
            assert!(started.elapsed() < Duration::from_secs(60), "rank 1 never laid its file out");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1500));
        std::fs::OpenOptions::new().write(true).open(&victim).unwrap().set_len(0).unwrap();
    };
    let Some((code, stdout, stderr)) = mpirun(2, &args, cut) else { return };
    assert_eq!(code, 1, "stderr: {stderr}");
    let m: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("no cluster result ({e}): {stdout}"));
    let error = m["error"].as_str().unwrap_or_else(|| panic!("no error in the cluster result: {m}"));
    assert!(error.starts_with(&format!("rank 1 (host {}): ", hostname())), "{error}");
    assert_eq!(m["stop_reason"], "error");
    let ranks = m["cluster"]["ranks"].as_array().unwrap();
    assert_eq!((ranks[0]["exit_code"].as_i64(), ranks[1]["exit_code"].as_i64()), (Some(0), Some(1)));
    assert!(ranks[0]["error"].is_null() && ranks[1]["error"].is_string());
    assert!(stderr.contains("iopulse: error: rank 1 (host"), "{stderr}");
}

#[test]
fn cluster_results_of_different_specs_merge_only_with_force() {
    let dir = temp_dir();
    let mut files = Vec::new();
    for bs in ["4k", "8k"] {
        let json = dir.path().join(format!("cluster-{bs}.json"));
        let template = path_str(&dir.path().join("t.{rank}.dat"));
        let args = [
            template.as_str(),
            "--file-size",
            "1m",
            "--duration",
            "0.2",
            "--engine",
            "null",
            "--block-size",
            bs,
            "--json",
            &path_str(&json),
            "--quiet",
        ];
        let Some((code, _, stderr)) = mpirun(2, &args, || {}) else { return };
        assert_eq!(code, 0, "{stderr}");
        files.push(path_str(&json));
    }
    let (code, stdout, stderr) = run(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("spec.block_size_bytes is 4096 in") && stderr.contains("--force"), "{stderr}");

    let (code, stdout, stderr) = run(&["merge", &files[0], &files[1], "--force", "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let m: Value = serde_json::from_str(&stdout).unwrap();
    assert_valid(&schema_validator(), &m, "a merge of cluster results");
    // Each input's rank table stays in its own file; the totals add up.
    assert!(m.get("cluster").is_none());
    let (a, b) = (read_json(Path::new(&files[0])), read_json(Path::new(&files[1])));
    assert_eq!(u64_at(&m, &["total", "ops"]), u64_at(&a, &["total", "ops"]) + u64_at(&b, &["total", "ops"]));
    assert!(m["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("cluster results merged")));
}

#[test]
fn the_ranks_of_a_job_keep_a_verify_state_record_each() {
    let dir = temp_dir();
    let template = path_str(&dir.path().join("t.{rank}.dat"));
    let state = dir.path().join("s.state");
    let s = path_str(&state);
    let args = [
        template.as_str(),
        "--file-size",
        "256k",
        "--block-size",
        "16k",
        "--write-percent",
        "100",
        "--verify",
        "--fdatasync-every",
        "4",
        "--ops",
        "32",
        "--verify-state",
        &s,
        "--quiet",
    ];
    let Some((code, stdout, stderr)) = mpirun(2, &args, || {}) else { return };
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(!state.exists(), "two ranks shared the record");
    for rank in 0..2 {
        let record = dir.path().join(format!("s.state.rank{rank}"));
        let r = iopulse::testing::durable_record::read(&record).unwrap();
        assert_eq!(r.header.targets[0].path, dir.path().join(format!("t.{rank}.dat")));
        let (code, out, err) = run(&["verify", "--state", &path_str(&record)]);
        assert_eq!(code, 0, "{err}{out}");
    }
}
