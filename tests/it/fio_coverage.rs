//! The project's own fio job files (tests/fio_jobs/, written for the project: fio's examples
//! are GPL and are only counted, never copied) use every fio option docs/fio.md lists as
//! mapped to an iopulse key, and tests/fio_jobs/mapped-options.fio, which holds the mapped
//! options no other file uses, runs with each of them in effect in its job's result.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn fio_jobs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_jobs")
}

/// docs/fio.md's table of options: each row's fio names (the first column's backticked
/// words) and whether it maps to an iopulse key (the second column is not `—`).
fn documented_options() -> Vec<(Vec<String>, bool)> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/fio.md")).unwrap();
    let table = doc.split("| fio option").nth(1).expect("docs/fio.md has a table headed `| fio option`");
    let mut rows = Vec::new();
    for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cols: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let names: Vec<String> = cols[0].split('`').skip(1).step_by(2).map(str::to_string).collect();
        rows.push((names, cols.get(1).is_some_and(|c| *c != "—")));
    }
    rows
}

/// The option names set in the project's job files (`name=value` or a bare `name`).
fn options_used() -> std::collections::BTreeSet<String> {
    let mut used = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(fio_jobs()).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with([';', '#', '[']) {
                continue;
            }
            used.insert(line.split('=').next().unwrap().trim().to_string());
        }
    }
    used
}

#[test]
fn every_option_docs_fio_md_lists_as_mapped_is_used_by_a_project_job_file() {
    let rows = documented_options();
    assert!(rows.len() > 40, "docs/fio.md's option table was not found whole: {} rows", rows.len());
    let used = options_used();
    let missing: Vec<String> = rows
        .iter()
        .filter(|(names, mapped)| *mapped && !names.iter().any(|n| used.contains(n)))
        .map(|(names, _)| names.join("/"))
        .collect();
    assert!(missing.is_empty(), "mapped in docs/fio.md but in no file of tests/fio_jobs/: {missing:?}");
}

#[test]
fn the_mapped_options_file_runs_with_each_option_in_effect() {
    let dir = temp_dir();
    let json = dir.path().join("r.json");
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir.path());
    cmd.args(["run", &path_str(&fio_jobs().join("mapped-options.fio")), "--json", &path_str(&json), "--quiet"]);
    let (code, _, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(path_str(&json));
    let job = |name: &str| -> &Value {
        r["jobs"].as_array().unwrap().iter().find(|j| j["job"] == name).unwrap_or_else(|| panic!("no job {name}"))
    };
    // bsrange=8k-8k, io_size=512k, invalidate=0: 64 reads of 8 KiB, the cache kept.
    let ranged = job("ranged");
    assert_eq!(ranged["spec"]["block_size_bytes"], 8192, "{}", ranged["spec"]);
    assert_eq!(ranged["read"]["ops"], 64);
    assert_eq!(ranged["read"]["bytes"], 512 * 1024);
    assert_eq!(ranged["spec"]["cache"], "keep");
    // rate=4m of 4 KiB reads: 1,024 IOPS over the 1 s window, after a 200 ms ramp.
    let paced = job("paced");
    assert_eq!(paced["spec"]["rate"]["iops_per_worker"], 1024.0, "{}", paced["spec"]["rate"]);
    assert_eq!(paced["spec"]["ramp_ns"], 200_000_000);
    let ops = paced["read"]["ops"].as_u64().unwrap();
    assert!((973..=1075).contains(&ops), "a 1 s window at 1,024 IOPS: {ops}");
    // steadystate=iops:50%, ss_dur=1s, ss_ramp=500ms, log_avg_msec=250 (write_iops_log).
    let steady = job("steady");
    assert_eq!(steady["steady_state"]["criterion"], "iops:50%", "{}", steady["steady_state"]);
    assert_eq!(steady["steady_state"]["window_ns"], 1_000_000_000);
    assert_eq!(steady["spec"]["ramp_ns"], 500_000_000);
    assert_eq!(steady["spec"]["interval_ns"], 250_000_000);
    assert!(!steady["time_series"].as_array().unwrap().is_empty(), "the log became the time series");
    // cpus_allowed=0 (split), numa_cpu_nodes=0: the worker pinned to CPU 0 on node 0.
    let pinned = &job("pinned")["workers"][0]["placement"];
    assert_eq!(pinned["cpus"], serde_json::json!([0]), "{pinned}");
    assert_eq!(pinned["cpu_seen"], 0, "{pinned}");
    assert_eq!(pinned["node"], 0, "{pinned}");
}
