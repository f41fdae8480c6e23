//! Metadata jobs (`files`) beside block jobs in one phase of a job file (issue 36): one
//! start word releases both jobs' workers, each job's count matches the system calls
//! strace saw, each job's CSV, time series and charts hold its own figures, the options
//! the mixed form cannot honour are refused before anything is touched, SIGINT ends both jobs with their figures so far and leaves a tree the next
//! run removes, and a full filesystem in one job ends the phase for both.

use crate::common::root::{LoopOptions, loop_device, mount_device, skip};
use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A job file of a block job `[reader]` (sync 4 KiB reads of `block`, 1 MiB) and a
/// metadata job `[tree]` (`meta` keys, on `tree`), in one phase of `duration`.
fn mixed_file(dir: &Path, duration: &str, block: &Path, block_keys: &str, tree: &Path, meta: &str) -> String {
    let text = format!(
        "[global]\nduration = \"{duration}\"\n\n[reader]\ntargets = [\"{}\"]\nfile-size = \"1M\"\nengine = \"sync\"\nblock-size = \"4k\"\n{block_keys}\n\n[tree]\ntargets = [\"{}\"]\n{meta}\n",
        path_str(block),
        path_str(tree)
    );
    let path = dir.join("mixed.toml");
    std::fs::write(&path, text).unwrap();
    path_str(&path)
}

/// Every entry of `dir`, sorted (to show nothing was made).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// `"dN/fN"`: the name of a file of a tree (`io/metadata/tree.rs`), as strace prints it.
fn is_tree_file(arg: &str) -> bool {
    let Some((d, f)) = arg.split_once('/') else { return false };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    d.strip_prefix('d').is_some_and(digits) && f.strip_prefix('f').is_some_and(digits)
}

#[test]
fn a_block_job_and_a_metadata_job_share_one_window_and_match_strace() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        skip("a mixed phase against strace", "strace is not installed");
        return;
    }
    let dir = temp_dir();
    let (block, tree) = (dir.path().join("blk.dat"), dir.path().join("tree"));
    let file = mixed_file(dir.path(), "1s", &block, "", &tree, "files = \"200\"\nmeta-mix = \"stat=1\"");
    let prefix = dir.path().join("trace");
    // -y: each fd with its path, so that the block job's reads are told apart by their file.
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-ff", "-qq", "-y", "-e", "trace=pread64,statx,newfstatat", "-o"])
        .arg(&prefix)
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .args(["run", &file, "--output-format", "json", "--quiet"]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let mut lines = Vec::new();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with("trace.") {
            lines.extend(std::fs::read_to_string(&p).unwrap().lines().map(String::from));
        }
    }
    let block_marker = format!("<{}>", path_str(&block.canonicalize().unwrap()));
    let preads = lines.iter().filter(|l| l.starts_with("pread64(") && l.contains(&block_marker)).count() as u64;
    let stats = lines
        .iter()
        .filter(|l| l.starts_with("statx(") || l.starts_with("newfstatat("))
        .filter(|l| !l.contains("= -1") && l.split('"').nth(1).is_some_and(is_tree_file))
        .count() as u64;

    let jobs = doc["jobs"].as_array().unwrap();
    let trees = doc["metadata_jobs"].as_array().unwrap();
    assert_eq!((jobs.len(), trees.len()), (1, 1), "{doc}");
    let (reader, meta) = (&jobs[0], &trees[0]);
    assert_eq!((reader["job"].as_str(), meta["job"].as_str()), (Some("reader"), Some("tree")));
    assert_eq!((meta["phase"].as_u64(), meta["stop_reason"].as_str()), (Some(1), Some("duration")));
    let read_ops = u64_at(reader, &["read", "ops"]);
    let stat_ops = u64_at(&meta["phases"][0], &["ops"]);
    assert!(read_ops > 0 && stat_ops > 0, "both jobs ran: {read_ops} reads, {stat_ops} stats");
    // Each stat of the mix is one statx of a tree file. The one worker of the block job
    // may have one pread64 under way when its window ends, issued but not counted.
    assert_eq!(stats, stat_ops, "statx calls on the tree's files vs the job's stat count");
    assert!((read_ops..=read_ops + 1).contains(&preads), "{preads} pread64 calls for {read_ops} reads");
    // One start word released both: the same instant on the wall clock. The metadata
    // job's first operation followed it well within the block job's 1 s window (a futex
    // wake and a clock read, on two CPUs shared with the block job's worker, strace and
    // the rest of the suite): after the block job, it would have come a second late.
    let start = u64_at(reader, &["window_start_unix_ns"]);
    assert!(start > 0);
    assert_eq!(u64_at(meta, &["window_start_unix_ns"]), start);
    let lag_ns = u64_at(meta, &["window_start_lag_ns"]);
    assert!(lag_ns < 500_000_000, "the metadata workers began {lag_ns} ns after the release");
    // Its window runs from its first operation (the lag after the release) to the shared
    // stop a second after the release: it may be short of 1 s by that lag.
    let window_ns = u64_at(&meta["phases"][0], &["window_ns"]);
    assert!(
        (1_000_000_000 - lag_ns..3_000_000_000).contains(&window_ns),
        "metadata window {window_ns} ns, lag {lag_ns} ns"
    );
    // The tree iopulse made is gone; the block job's file stays, as a given target does.
    assert!(!tree.exists());
    assert!(block.is_file());

    // The text report: each job's section.
    let (stdout, _) = run_ok(&["run", &file, "--quiet"]);
    assert!(stdout.contains("══ job [reader] ══") && stdout.contains("══ job [tree] · files ══"), "{stdout}");
    assert!(stdout.contains("200 files in 10 directories"), "{stdout}");
    assert!(stdout.contains("released with every job of its phase (one start word)"), "{stdout}");
}

#[test]
fn what_the_mixed_form_cannot_honour_is_refused_before_anything_is_touched() {
    let dir = temp_dir();
    let (block, tree) = (dir.path().join("blk.dat"), dir.path().join("tree"));
    let file = mixed_file(dir.path(), "1s", &block, "", &tree, "files = \"50\"\nmeta-mix = \"stat=1\"");
    let before = entries(dir.path());
    // fio's JSON has no place for a tree's figures.
    let (code, stdout, stderr) = run(&["run", &file, "--output-format", "fio-json"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("--output-format") && stderr.contains("not yet"), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(entries(dir.path()), before, "nothing made");

    // A block-I/O key in [global] reaches the tree's job too, where it would mean nothing:
    // refused naming the file, line, key and job, nothing made.
    let global = dir.path().join("global.toml");
    std::fs::write(&global, std::fs::read_to_string(&file).unwrap().replace("[global]\n", "[global]\ndirect = true\n"))
        .unwrap();
    let before = entries(dir.path());
    let (code, _, stderr) = run(&["run", &path_str(&global)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("global.toml:2: key `direct` of [global] (job [tree])") && stderr.contains("--direct"),
        "{stderr}"
    );
    assert_eq!(entries(dir.path()), before, "nothing made");

    // A block target inside the tree's root (a directory of the user's), and two trees
    // that meet: refused with the plan, the directory left as it was.
    std::fs::create_dir(&tree).unwrap();
    let inside =
        mixed_file(dir.path(), "1s", &tree.join("blk.dat"), "", &tree, "files = \"50\"\nmeta-mix = \"stat=1\"");
    let (code, _, stderr) = run(&["run", &inside]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("job [reader]'s target") && stderr.contains("inside the tree of job [tree]"), "{stderr}");
    assert!(entries(&tree).is_empty(), "nothing made in the tree's root");
    let two = dir.path().join("two.toml");
    std::fs::write(
        &two,
        format!(
            "[a]\ntargets = [\"{t}\"]\nfiles = \"10\"\nmeta-mix = \"stat=1\"\n\n[b]\ntargets = [\"{t}/sub\"]\nfiles = \"10\"\nmeta-mix = \"stat=1\"\n\n[c]\ntargets = [\"{}\"]\nfile-size = \"1M\"\n",
            path_str(&block),
            t = path_str(&tree)
        ),
    )
    .unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&two)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the trees of jobs [a]") && stderr.contains("[b]") && stderr.contains("meet"), "{stderr}");
    assert!(entries(&tree).is_empty() && !block.exists());
    std::fs::remove_dir(&tree).unwrap();
}

/// A tree of `meta-phases` alone in a later phase of a mixed job file runs its phases in
/// order (create, stat, unlink), each its own window; in the block job's phase it is
/// refused before anything is made (the phases cannot share the block job's window).
#[test]
fn meta_phases_run_alone_in_a_later_phase_of_a_mixed_job_file() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let text = |stonewall: &str| {
        format!(
            "[global]\nduration = \"300ms\"\n\n[reader]\ntargets = [\"{d}/blk.dat\"]\nfile-size = \"1M\"\nengine = \"sync\"\n\n\
             [tree]\n{stonewall}targets = [\"{d}/tree\"]\nfiles = \"200\"\nmeta-phases = \"create,stat,unlink\"\n"
        )
    };
    let file = dir.path().join("phases.toml");
    std::fs::write(&file, text("stonewall = true\n")).unwrap();
    let json = path_str(&dir.path().join("r.json"));
    run_ok(&["run", &path_str(&file), "--json", &json, "--quiet"]);
    let doc = read_json(&json);
    let tree = &doc["metadata_jobs"][0];
    assert_eq!(tree["phase"], 2, "{tree}");
    let phases: Vec<(&str, u64)> = tree["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["ops"].as_u64().unwrap()))
        .collect();
    assert_eq!(phases, [("create", 200), ("stat", 200), ("unlink", 200)], "{tree}");
    assert!(!dir.path().join("tree").exists(), "the tree is removed");

    // In the block job's phase: refused with the plan, nothing made.
    std::fs::remove_file(dir.path().join("blk.dat")).unwrap();
    std::fs::write(&file, text("")).unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&file)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("job [tree]") && stderr.contains("stonewall = true"), "{stderr}");
    assert!(!dir.path().join("blk.dat").exists() && !dir.path().join("tree").exists());
}

/// `iopulse merge` of mixed results (two hosts ran one job file): the block job merged as
/// block results are, the tree's job as metadata results are (each kind's count the sum,
/// outside the combined figures); a damaged metadata job's histogram is refused naming
/// where it is, and so are results whose metadata jobs differ.
#[test]
fn mixed_results_merge_job_by_job_and_a_damaged_tree_job_is_refused() {
    let dir = temp_dir();
    let out = |name: &str| path_str(&dir.path().join(name));
    let mut results = Vec::new();
    for host in ["a", "b"] {
        let (block, tree) = (dir.path().join(format!("{host}.dat")), dir.path().join(format!("tree-{host}")));
        let file = mixed_file(dir.path(), "300ms", &block, "", &tree, "files = \"50\"\nmeta-mix = \"stat=1,read=1\"");
        let json = out(&format!("{host}.json"));
        run_ok(&["run", &file, "--json", &json, "--quiet"]);
        results.push(read_json(&json));
    }
    let (a, b) = (out("a.json"), out("b.json"));
    let (code, stdout, stderr) = run(&["merge", &a, &b, "--force", "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let merged: Value = serde_json::from_str(&stdout).unwrap();
    let ops = |doc: &Value, op: &str| {
        let kinds = doc["metadata_jobs"][0]["phases"][0]["per_op"].as_array().unwrap_or_else(|| panic!("{doc}"));
        kinds.iter().find(|k| k["op"] == op).and_then(|k| k["ops"].as_u64()).unwrap()
    };
    for op in ["stat", "read"] {
        assert_eq!(ops(&merged, op), ops(&results[0], op) + ops(&results[1], op), "{op}");
    }
    let block_ops = |doc: &Value| doc["jobs"][0]["read"]["ops"].as_u64().unwrap();
    assert_eq!(block_ops(&merged), block_ops(&results[0]) + block_ops(&results[1]));
    assert_eq!(merged["read"]["ops"].as_u64().unwrap(), block_ops(&merged), "the tree is outside the combined figures");
    assert_eq!(merged["metadata_jobs"][0]["job"], "tree");

    // A histogram of the tree's job damaged: refused, the place named, exit 2.
    let mut damaged = results[1].clone();
    damaged["metadata_jobs"][0]["phases"][0]["per_op"][0]["histogram"] = Value::String("AAAA".into());
    let bad = out("bad.json");
    std::fs::write(&bad, serde_json::to_string(&damaged).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["merge", &a, &bad, "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty() && stderr.contains("metadata_jobs[0]"), "{stderr}");

    // Without the tree's job, the results are not of one job file.
    let mut fewer = results[1].clone();
    fewer["metadata_jobs"] = Value::Array(Vec::new());
    let other = out("other.json");
    std::fs::write(&other, serde_json::to_string(&fewer).unwrap()).unwrap();
    let (code, _, stderr) = run(&["merge", &a, &other, "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("[tree (files)]"), "{stderr}");
}

/// `iopulse compare` of mixed results: the tree's job is judged beside the block job, in
/// scopes named after it; a tree job twice as slow is a regression (exit 5), and a side
/// without it lists it as compared on one side only.
#[test]
fn compare_judges_a_mixed_results_tree_job_beside_its_block_job() {
    let dir = temp_dir();
    let out = |name: &str| path_str(&dir.path().join(name));
    let (block, tree) = (dir.path().join("blk.dat"), dir.path().join("tree"));
    let file = mixed_file(dir.path(), "300ms", &block, "", &tree, "files = \"50\"\nmeta-mix = \"stat=1\"");
    let base = out("base.json");
    run_ok(&["run", &file, "--json", &base, "--quiet"]);
    let again = out("again.json");
    let mut copy = read_json(&base);
    crate::common::as_another_run(&mut copy);
    std::fs::write(&again, serde_json::to_string(&copy).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["compare", &base, &again, "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let c: Value = serde_json::from_str(&stdout).unwrap();
    let figures = c["figures"].as_array().unwrap();
    let scoped = |scope: &str, figure: &str| figures.iter().any(|f| f["scope"] == scope && f["figure"] == figure);
    assert!(scoped("job reader", "read.p50") && scoped("job tree: metadata mix", "stat.p99"), "{c}");
    assert_eq!(c["regressed"], false, "{c}");

    let mut doc = copy.clone();
    doc["metadata_jobs"][0] = crate::metadata_outputs::slowed(&doc["metadata_jobs"][0], "stat", 2);
    let slow = out("slow.json");
    std::fs::write(&slow, serde_json::to_string(&doc).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["compare", &base, &slow, "--output-format", "json"]);
    assert_eq!(code, 5, "{stderr}");
    let c: Value = serde_json::from_str(&stdout).unwrap();
    let p99 = c["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["scope"] == "job tree: metadata mix" && f["figure"] == "stat.p99")
        .unwrap();
    assert_eq!(p99["verdict"], "regressed", "{p99}");

    doc["metadata_jobs"] = Value::Array(Vec::new());
    let without = out("without.json");
    std::fs::write(&without, serde_json::to_string(&doc).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["compare", &base, &without, "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let c: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(c["only_in_base"], serde_json::json!(["job tree (files)"]), "{c}");
}

/// `--csv`, `--timeseries` and `--plot` of a mixed job file: the block job's files as in a
/// job file of block jobs, and the metadata job's own (`FILE-JOB.csv`, `job-NAME-*.svg`),
/// whose figures are the document's: CSV rows per kind with the result's counts, time
/// series rows adding up to them.
#[test]
fn a_mixed_job_files_csv_time_series_and_charts_hold_each_jobs_figures() {
    let dir = temp_dir();
    let (block, tree) = (dir.path().join("blk.dat"), dir.path().join("tree"));
    let file = mixed_file(dir.path(), "1s", &block, "", &tree, "files = \"100\"\nmeta-mix = \"stat=1,read=1\"");
    let out = |name: &str| path_str(&dir.path().join(name));
    let (json, csv, series, charts) = (out("r.json"), out("r.csv"), out("ts.csv"), out("charts"));
    run_ok(&["run", &file, "--json", &json, "--csv", &csv, "--timeseries", &series, "--plot", &charts, "--quiet"]);
    let doc = read_json(&json);
    let meta = &doc["metadata_jobs"][0];
    assert_eq!(meta["job"], "tree", "{doc}");
    let kinds = meta["phases"][0]["per_op"].as_array().unwrap();
    let count = |op: &str| {
        kinds.iter().find(|k| k["op"] == op).and_then(|k| k["ops"].as_u64()).unwrap_or_else(|| panic!("{op}: {meta}"))
    };
    assert!(count("stat") > 0 && count("read") > 0, "{meta}");

    // The block job's CSV row went to FILE, as in a job file of block jobs; the tree's
    // rows, with their own header, to FILE-tree.csv.
    let block_csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(block_csv.lines().count(), 2, "a header and [reader]'s row: {block_csv}");
    assert!(block_csv.lines().nth(1).unwrap().contains("reader"), "{block_csv}");
    let tree_csv = std::fs::read_to_string(out("r-tree.csv")).unwrap();
    let mut rows = tree_csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {header:?}"));
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert_eq!(rows.len(), kinds.len(), "a row per kind: {tree_csv}");
    for row in &rows {
        let op = row[column("op")];
        assert_eq!(row[column("ops")].parse::<u64>().unwrap(), count(op), "{op}: {tree_csv}");
    }

    // Each job's time series: [reader]'s block rows, [tree]'s rows per kind adding up to
    // its counts.
    let reader_series = std::fs::read_to_string(out("ts-reader.csv")).unwrap();
    assert!(reader_series.starts_with("t_s,") && reader_series.lines().count() >= 2, "{reader_series}");
    let tree_series = std::fs::read_to_string(out("ts-tree.csv")).unwrap();
    let mut lines = tree_series.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (op_at, ops_at) =
        (header.iter().position(|h| *h == "op").unwrap(), header.iter().position(|h| *h == "ops").unwrap());
    let mut summed = std::collections::BTreeMap::<String, u64>::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        *summed.entry(fields[op_at].to_string()).or_default() += fields[ops_at].parse::<u64>().unwrap();
    }
    for (op, sum) in &summed {
        assert_eq!(*sum, count(op), "{op}: {tree_series}");
    }
    assert_eq!(summed.len(), kinds.len(), "{tree_series}");

    // The charts: the combined and [reader]'s, and [tree]'s own, each a drawing.
    let mut drawn: Vec<String> =
        std::fs::read_dir(&charts).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    drawn.sort();
    for name in [
        "latency-percentiles.svg",
        "job-reader-latency-percentiles.svg",
        "job-tree-latency.svg",
        "job-tree-ops.svg",
        "job-tree-p99.svg",
    ] {
        assert!(drawn.iter().any(|d| d == name), "{name} not in {drawn:?}");
        let svg = std::fs::read_to_string(dir.path().join("charts").join(name)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("</svg>"), "{name}");
    }

    // The tree's own files pass the output guard: its CSV made a link to the block job's
    // target is refused before anything runs, and the target keeps its bytes.
    let target_before = std::fs::read(&block).unwrap();
    std::fs::remove_file(out("r-tree.csv")).unwrap();
    std::os::unix::fs::symlink(&block, out("r-tree.csv")).unwrap();
    let (code, _, stderr) = run(&["run", &file, "--csv", &csv, "--quiet"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--csv") && stderr.contains("r-tree.csv"), "{stderr}");
    assert_eq!(std::fs::read(&block).unwrap(), target_before, "the target was written through the link");
}

#[test]
fn sigint_in_the_mixed_phase_gives_both_jobs_figures_and_a_tree_the_next_run_removes() {
    let dir = temp_dir();
    let (block, tree) = (dir.path().join("blk.dat"), dir.path().join("tree"));
    let file = mixed_file(dir.path(), "30s", &block, "", &tree, "files = \"300\"\nmeta-mix = \"stat=1,read=1\"");
    let json = path_str(&dir.path().join("r.json"));
    let child = iopulse()
        .args(["run", &file, "--json", &json, "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the tree is made and its marker says it is ready, then a little more.
    let marker = tree.join(".iopulse-tree");
    let since = Instant::now();
    while !(marker.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m.contains("\"ready\"")))
        && since.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: the pid is the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(since.elapsed() < Duration::from_secs(25), "SIGINT ended the 30 s phase");
    let doc = read_json(&json);
    let reader = &doc["jobs"][0];
    let meta = &doc["metadata_jobs"][0];
    assert_eq!(reader["stop_reason"], "interrupted", "{reader}");
    assert_eq!(meta["stop_reason"], "interrupted", "{meta}");
    assert!(u64_at(reader, &["read", "ops"]) > 0);
    assert!(u64_at(&meta["phases"][0], &["ops"]) > 0);
    // The tree is removed (or, were it kept, marked for the next run): the next run of the
    // file makes its own and removes it.
    let (code, _, stderr) = run(&["run", &file, "--duration", "200ms", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!tree.exists());
}

#[test]
fn a_full_filesystem_in_the_metadata_job_ends_the_phase_for_both_jobs() {
    let what = "a full filesystem shared by a block job and a metadata job";
    let Some(dev) = loop_device(64 << 20, LoopOptions::default(), what) else { return };
    let ok = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.path])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(what, "mkfs.ext4 failed or is missing");
        return;
    }
    let Some(mount) = mount_device(&dev.path, what) else { return };
    let dir = temp_dir();
    let (block, tree) = (mount.path().join("blk.dat"), mount.path().join("tree"));
    // The block job rewrites its 1 MiB file; the metadata job's appends fill the rest.
    let file = mixed_file(
        dir.path(),
        "60s",
        &block,
        "write-percent = 100",
        &tree,
        "files = \"50\"\nmeta-mix = \"append=1\"\nblock-size = \"1M\"",
    );
    let json = path_str(&dir.path().join("r.json"));
    let since = Instant::now();
    let (code, _, stderr) = run(&["run", &file, "--json", &json, "--quiet"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(since.elapsed() < Duration::from_secs(50), "the phase ended at ENOSPC, not at its 60 s");
    assert!(stderr.contains("ENOSPC"), "{stderr}");
    let doc = read_json(&json);
    let (reader, meta) = (&doc["jobs"][0], &doc["metadata_jobs"][0]);
    assert_eq!(meta["stop_reason"], "limit", "{meta}");
    let appended = meta["phases"][0]["per_op"].as_array().unwrap().iter().find(|o| o["op"] == "append").unwrap();
    assert!(appended["ops"].as_u64().unwrap() >= 20, "{appended}");
    // The block job stopped with it, its figures so far kept.
    assert!(u64_at(reader, &["write", "ops"]) > 0, "{reader}");
    assert!(u64_at(reader, &["window_ns"]) < 50_000_000_000);
    assert!(!tree.exists(), "the tree is removed, and its space with it");
}

#[test]
fn two_trees_beside_a_block_job_and_a_tree_alone_in_the_next_phase() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let file = dir.path().join("multi.toml");
    std::fs::write(
        &file,
        format!(
            "[global]\nduration = \"300ms\"\n\n[reader]\ntargets = [\"{d}/blk.dat\"]\nfile-size = \"1M\"\nengine = \"sync\"\n\n\
             [t1]\ntargets = [\"{d}/tree1\"]\nfiles = \"100\"\nmeta-mix = \"stat=1,read=1\"\n\n\
             [t2]\ntargets = [\"{d}/tree2\"]\nfiles = \"100\"\nmeta-mix = \"create=1,unlink=1\"\nthreads = 2\n\n\
             [t3]\nstonewall = true\ntargets = [\"{d}/tree3\"]\nfiles = \"100\"\nmeta-mix = \"stat=1\"\n"
        ),
    )
    .unwrap();
    let json = path_str(&dir.path().join("r.json"));
    let (stdout, stderr) = run_ok(&["run", &path_str(&file), "--json", &json, "--quiet"]);
    let doc = read_json(&json);
    let start = u64_at(&doc["jobs"][0], &["window_start_unix_ns"]);
    let trees = doc["metadata_jobs"].as_array().unwrap();
    let names: Vec<(&str, u64)> =
        trees.iter().map(|m| (m["job"].as_str().unwrap(), m["phase"].as_u64().unwrap())).collect();
    assert_eq!(names, [("t1", 1), ("t2", 1), ("t3", 2)], "{stderr}");
    for m in trees {
        assert!(u64_at(&m["phases"][0], &["ops"]) > 0, "{m}");
        assert_eq!(m["stop_reason"], "duration");
    }
    // Phase 1's three jobs were released by one start word; phase 2 opened after it ended.
    assert_eq!(u64_at(&trees[0], &["window_start_unix_ns"]), start);
    assert_eq!(u64_at(&trees[1], &["window_start_unix_ns"]), start);
    assert!(u64_at(&trees[2], &["window_start_unix_ns"]) >= start + 300_000_000);
    for header in
        ["══ job [reader] · phase 1 ══", "══ job [t2] · phase 1 · files ══", "══ job [t3] · phase 2 · files ══"]
    {
        assert!(stdout.contains(header), "{header}: {stdout}");
    }
    for t in ["tree1", "tree2", "tree3"] {
        assert!(!dir.path().join(t).exists(), "{t} removed");
    }
}
