//! The time series of metadata runs (`--files` with `--timeseries`, `--interval`): on the
//! sync engine and io_uring, each kind's rows add up exactly to its totals (operations,
//! bytes, and the histograms bucket by bucket), a mix's kinds share every interval, phases'
//! rows carry their phase, the CSV holds the JSON's rows, and a bad --timeseries path is
//! refused before the tree is made.

use crate::common::*;
use iopulse::testing::stats::decode_histogram;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The rows of `phase` and `kind` in a result's time series.
fn rows_of<'a>(r: &'a Value, phase: &str, kind: &str) -> Vec<&'a Value> {
    r["time_series"]
        .as_array()
        .expect("time_series array")
        .iter()
        .filter(|row| row["phase"] == phase && row["op"] == kind)
        .collect()
}

/// Every kind of every phase: its rows' operations, bytes and histograms add up to the
/// phase's figures of that kind; the rows' intervals tile the phase from its start.
fn assert_rows_add_up(r: &Value, interval_ns: u64, what: &str) {
    for phase in r["phases"].as_array().unwrap() {
        let name = phase["name"].as_str().unwrap();
        let window_ns = phase["window_ns"].as_u64().unwrap();
        for figures in phase["per_op"].as_array().unwrap() {
            let kind = figures["op"].as_str().unwrap();
            let rows = rows_of(r, name, kind);
            assert!(!rows.is_empty(), "{what}: no rows of {name}/{kind}");
            let ops: u64 = rows.iter().map(|row| row["ops"].as_u64().unwrap()).sum();
            let bytes: u64 = rows.iter().map(|row| row["bytes"].as_u64().unwrap()).sum();
            assert_eq!(ops, figures["ops"].as_u64().unwrap(), "{what}: {name}/{kind} operations");
            assert_eq!(bytes, figures["bytes"].as_u64().unwrap(), "{what}: {name}/{kind} bytes");
            // The rows' histograms added are the kind's whole histogram, bucket by bucket.
            let whole = decode_histogram(figures["histogram"].as_str().unwrap()).unwrap();
            let mut sum = iopulse::testing::stats::new_latency_histogram();
            for row in &rows {
                if let Some(h) = row["histogram"].as_str() {
                    sum.add(decode_histogram(h).unwrap()).unwrap();
                }
            }
            assert_eq!(sum.len(), whole.len(), "{what}: {name}/{kind} histogram counts");
            let buckets = |h: &hdrhistogram::Histogram<u64>| {
                h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect::<Vec<_>>()
            };
            assert_eq!(buckets(&sum), buckets(&whole), "{what}: {name}/{kind} histogram buckets");
            // One row per interval, in order, each ending where the next starts.
            let mut start = 0;
            for row in &rows {
                let (t, len) = (row["t_ns"].as_u64().unwrap(), row["interval_ns"].as_u64().unwrap());
                assert_eq!(t - len, start, "{what}: {name}/{kind} intervals tile the phase");
                assert!(len <= interval_ns, "{what}: {name}/{kind} interval of {len} ns");
                if row["ops"].as_u64().unwrap() > 0 {
                    let l = &row["latency_ns"];
                    let (p50, p99, max) =
                        (l["p50"].as_u64().unwrap(), l["p99"].as_u64().unwrap(), l["max"].as_u64().unwrap());
                    assert!(0 < p50 && p50 <= p99 && p99 <= max, "{what}: {row}");
                    let rate = row["ops"].as_f64().unwrap() * 1e9 / len as f64;
                    assert!((row["ops_per_sec"].as_f64().unwrap() - rate).abs() <= rate * 1e-9 + 1e-6, "{row}");
                }
                start = t;
            }
            // The last ends within an interval of the phase's window (its first worker's start
            // is at most the window's start).
            assert!(
                start <= window_ns + interval_ns && start + interval_ns >= window_ns,
                "{what}: {name}/{kind}: rows end at {start} ns, the window is {window_ns} ns"
            );
        }
    }
}

/// The CSV file's records are the JSON's rows, in order.
fn assert_csv_is_the_json(csv_path: &Path, r: &Value) {
    let text = std::fs::read_to_string(csv_path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "phase,op,t_s,interval_s,ops,ops_per_sec,bytes,bytes_per_sec,p50_ns,p99_ns,max_ns"
    );
    let rows = r["time_series"].as_array().unwrap();
    let records: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(records.len(), rows.len(), "CSV records against JSON rows");
    for (rec, row) in records.iter().zip(rows) {
        let l = &row["latency_ns"];
        let expected = [
            row["phase"].as_str().unwrap().to_string(),
            row["op"].as_str().unwrap().to_string(),
            format!("{:.3}", row["t_ns"].as_u64().unwrap() as f64 / 1e9),
            format!("{:.3}", row["interval_ns"].as_u64().unwrap() as f64 / 1e9),
            row["ops"].to_string(),
            format!("{:.1}", row["ops_per_sec"].as_f64().unwrap()),
            row["bytes"].to_string(),
            format!("{:.1}", row["bytes_per_sec"].as_f64().unwrap()),
            l["p50"].to_string(),
            l["p99"].to_string(),
            l["max"].to_string(),
        ];
        assert_eq!(rec, &expected.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

/// A 3 s mix at 500 ms intervals with the CSV; the JSON result.
fn mix_run(dir: &Path, engine: &[&str]) -> Value {
    let tree = path_str(&dir.join("tree"));
    let csv = path_str(&dir.join("ts.csv"));
    let mut args = vec![
        &tree[..],
        "--files",
        "2000",
        "--file-size-dist",
        "4k",
        "--meta-mix",
        "create=30,stat=30,read=20,write=10,unlink=10",
        "--duration",
        "3s",
        "--interval",
        "500ms",
        "--timeseries",
        &csv,
        "--threads",
        "2",
    ];
    args.extend(engine);
    let r = run_json(&args);
    assert_csv_is_the_json(&dir.join("ts.csv"), &r);
    r
}

fn assert_mix(r: &Value, what: &str) {
    assert_rows_add_up(r, 500_000_000, what);
    let rows = r["time_series"].as_array().unwrap();
    assert!(rows.iter().all(|row| row["phase"] == "mix"), "{what}");
    // Every kind the mix lists has a row in every interval: they share the intervals.
    let kinds: BTreeSet<&str> =
        r["phases"][0]["per_op"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
    let times: BTreeSet<u64> = rows.iter().map(|row| row["t_ns"].as_u64().unwrap()).collect();
    assert_eq!(rows.len(), kinds.len() * times.len(), "{what}: a row per kind per interval");
    // 3 s at 500 ms: six intervals (a seventh, or on a loaded machine an eighth, when the
    // window ran over).
    assert!((6..=8).contains(&times.len()), "{what}: {} intervals", times.len());
    for t in &times {
        let at: BTreeSet<&str> =
            rows.iter().filter(|row| row["t_ns"] == *t).map(|row| row["op"].as_str().unwrap()).collect();
        assert_eq!(at, kinds, "{what}: kinds at {t} ns");
    }
    // Something completed in each full interval of each asked-for kind.
    for kind in ["create", "stat", "read", "write", "unlink"] {
        let full = rows_of(r, "mix", kind).into_iter().filter(|row| row["interval_ns"] == 500_000_000).count();
        let busy = rows_of(r, "mix", kind)
            .into_iter()
            .filter(|row| row["interval_ns"] == 500_000_000 && row["ops"].as_u64().unwrap() > 0)
            .count();
        assert!(full >= 5 && busy == full, "{what}: {kind}: {busy} of {full} full intervals had operations");
    }
}

#[test]
fn a_mix_on_the_sync_engine_has_rows_per_kind_that_add_up_to_its_totals() {
    let dir = temp_dir();
    let r = mix_run(dir.path(), &["--engine", "sync"]);
    assert_mix(&r, "sync");
}

#[test]
fn a_mix_on_io_uring_has_rows_per_kind_that_add_up_to_its_totals() {
    if !engine_available("io_uring") {
        return;
    }
    let dir = temp_dir();
    let r = mix_run(dir.path(), &["--engine", "io_uring", "--queue-depth", "8"]);
    assert_mix(&r, "io_uring");
}

#[test]
fn each_phase_has_rows_of_its_own_that_add_up_to_its_totals() {
    let mut engines: Vec<(&str, Vec<&str>)> = vec![("sync", vec!["--engine", "sync"])];
    if engine_available("io_uring") {
        engines.push(("io_uring", vec!["--engine", "io_uring", "--queue-depth", "8"]));
    }
    for (what, engine) in engines {
        let dir = temp_dir();
        let tree = path_str(&dir.path().join("tree"));
        let csv = path_str(&dir.path().join("ts.csv"));
        let mut args = vec![
            &tree[..],
            "--files",
            "20000",
            "--file-size-dist",
            "1k",
            "--meta-phases",
            "create,stat,unlink",
            "--interval",
            "20ms",
            "--timeseries",
            &csv,
            "--threads",
            "2",
        ];
        args.extend(&engine);
        let r = run_json(&args);
        assert_csv_is_the_json(&dir.path().join("ts.csv"), &r);
        assert_rows_add_up(&r, 20_000_000, what);
        let rows = r["time_series"].as_array().unwrap();
        // Each phase's rows hold its own kind only, in the phases' order.
        let order: Vec<&str> = rows.iter().map(|row| row["phase"].as_str().unwrap()).collect();
        let mut phases: Vec<&str> = order.clone();
        phases.dedup();
        assert_eq!(phases, ["create", "stat", "unlink"], "{what}");
        assert!(rows.iter().all(|row| row["phase"] == row["op"]), "{what}");
        for (phase, bytes) in [("create", 20000 * 1024), ("stat", 0), ("unlink", 0)] {
            let sum: u64 = rows_of(&r, phase, phase).iter().map(|row| row["ops"].as_u64().unwrap()).sum();
            assert_eq!(sum, 20000, "{what}: {phase}");
            let b: u64 = rows_of(&r, phase, phase).iter().map(|row| row["bytes"].as_u64().unwrap()).sum();
            assert_eq!(b, bytes, "{what}: {phase} bytes");
        }
        assert!(!dir.path().join("tree").exists(), "{what}: the tree is removed");
    }
}

#[test]
fn each_job_of_a_job_file_writes_its_own_time_series() {
    let dir = temp_dir();
    let job = dir.path().join("meta.toml");
    std::fs::write(
        &job,
        "[a]\nfiles = \"300\"\nmeta-phases = \"create,stat\"\n\n[b]\nstonewall = true\nfiles = \"200\"\nmeta-mix = \"stat=1,read=1\"\nops = \"1000\"\n",
    )
    .unwrap();
    let tree = dir.path().join("tree");
    let csv = dir.path().join("ts.csv");
    run_ok(&["run", &path_str(&job), "--target", &path_str(&tree), "--timeseries", &path_str(&csv), "--quiet"]);
    assert!(!csv.exists(), "each job has a file of its own");
    let ops_of = |name: &str, phase: &str| -> u64 {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        text.lines()
            .skip(1)
            .filter(|l| l.starts_with(&format!("{phase},")))
            .map(|l| l.split(',').nth(4).unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!((ops_of("ts-a.csv", "create"), ops_of("ts-a.csv", "stat")), (300, 300));
    assert_eq!(ops_of("ts-b.csv", "mix"), 1000);
}

/// With a time series the run's figures are its intervals added: they still count each
/// operation once, against the number asked for and the bytes the files hold.
#[test]
fn a_mix_for_a_number_of_operations_counts_each_once() {
    let mut engines: Vec<(&str, Vec<&str>)> = vec![("sync", vec!["--engine", "sync"])];
    if engine_available("io_uring") {
        engines.push(("io_uring", vec!["--engine", "io_uring", "--queue-depth", "8"]));
    }
    for (what, engine) in engines {
        let dir = temp_dir();
        let tree = path_str(&dir.path().join("tree"));
        let mut args = vec![
            &tree[..],
            "--files",
            "1000",
            "--file-size-dist",
            "2k",
            "--meta-mix",
            "read=1,stat=1",
            "--ops",
            "6000",
            "--interval",
            "10ms",
            "--threads",
            "3",
        ];
        args.extend(&engine);
        let r = run_json(&args);
        assert_rows_add_up(&r, 10_000_000, what);
        let rows: u64 = r["time_series"].as_array().unwrap().iter().map(|row| row["ops"].as_u64().unwrap()).sum();
        assert_eq!(rows, 6000, "{what}");
        let read = r["phases"][0]["per_op"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap();
        // Round robin at 1:1 in each of 3 workers of 2000 operations: 1000 reads of 2 KiB each.
        assert_eq!((read["ops"].as_u64().unwrap(), read["bytes"].as_u64().unwrap()), (3000, 3000 * 2048), "{what}");
    }
}

#[test]
fn without_a_time_series_the_result_has_none() {
    let dir = temp_dir();
    let tree = path_str(&dir.path().join("tree"));
    let r = run_json(&[&tree, "--files", "200", "--meta-phases", "create,stat"]);
    assert!(r.get("time_series").is_none(), "{r}");
}

#[test]
fn a_bad_timeseries_path_is_refused_before_the_tree_is_made() {
    let dir = temp_dir();
    let tree = dir.path().join("tree");
    let bad = dir.path().join("no-such-dir").join("ts.csv");
    for path in [bad.clone(), tree.clone()] {
        let (code, _, stderr) = run(&[
            &path_str(&tree),
            "--files",
            "100",
            "--meta-phases",
            "create,stat",
            "--timeseries",
            &path_str(&path),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("--timeseries"), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(!tree.exists(), "the tree's root is not made: {stderr}");
        assert!(!bad.exists() && !dir.path().join("no-such-dir").exists());
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing was created: {left:?}");
}
