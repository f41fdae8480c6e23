//! `--ramp` and `--steady-state`: the ramp runs before the window and none of it is
//! counted (its time-series rows are marked and left out of the totals); a steady state
//! stops the run and its window becomes the result, and a run that never steadies says
//! so loudly.

use crate::common::*;
use serde_json::Value;
use std::time::Instant;

fn rows(r: &Value) -> &Vec<Value> {
    r["time_series"].as_array().expect("time_series array")
}

fn is_ramp(row: &Value) -> bool {
    row["ramp"].as_bool().unwrap_or(false)
}

/// The ops of the rows that are (`ramp`) or are not ramp rows.
fn row_ops(r: &Value, ramp: bool, op: &str) -> u64 {
    rows(r).iter().filter(|row| is_ramp(row) == ramp).map(|row| u64_at(row, &[op, "ops"])).sum()
}

#[test]
fn a_ramp_runs_before_the_window_and_is_not_counted() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("ramp.dat"));
    let csv = dir.path().join("ts.csv");
    let json = dir.path().join("r.json");
    let t0 = Instant::now();
    let (code, stdout, stderr) = run(&[
        &f,
        "--engine",
        "null",
        "--ramp",
        "1s",
        "--duration",
        "2s",
        "--interval",
        "250ms",
        "--timeseries",
        &path_str(&csv),
        "--json",
        &path_str(&json),
    ]);
    let wall_s = t0.elapsed().as_secs_f64();
    assert_eq!(code, 0, "{stderr}");
    // The ramp comes before the 2 s window: about 3 s in all (generous bounds).
    assert!((2.5..6.0).contains(&wall_s), "ran {wall_s:.2} s for --ramp 1s --duration 2s");
    let r = read_json(&json);
    assert_valid(&schema_validator(), &r, "a result with a ramp");
    assert_eq!(u64_at(&r, &["ramp_ns"]), 1_000_000_000);
    // A run stopped by its deadline ends exactly there: the window is the duration.
    assert_eq!(u64_at(&r, &["window_ns"]), 2_000_000_000);
    assert_eq!(r["stop_reason"], "duration");
    // The counted ops are exactly the window's rows; the ramp's rows are marked and apart.
    for op in ["read", "write", "total"] {
        assert_eq!(u64_at(&r, &[op, "ops"]), row_ops(&r, false, op), "{op}: result vs non-ramp rows");
    }
    let ramp_rows: Vec<&Value> = rows(&r).iter().filter(|row| is_ramp(row)).collect();
    assert_eq!(ramp_rows.len(), 4, "1 s of ramp at 250 ms");
    assert!(ramp_rows.iter().all(|row| u64_at(row, &["t_ns"]) <= 1_000_000_000));
    assert!(rows(&r).iter().filter(|row| !is_ramp(row)).all(|row| u64_at(row, &["t_ns"]) > 1_000_000_000));
    // The ramp did I/O, counted apart; its rows hold it (the tail handed over at its end).
    let ramp_ops = u64_at(&r, &["ramp_ops"]);
    assert!(ramp_ops > 0 && row_ops(&r, true, "total") > 0);
    assert!(row_ops(&r, true, "total") <= ramp_ops);
    // The first row of the window starts at the ramp's end.
    let first = rows(&r).iter().find(|row| !is_ramp(row)).unwrap();
    assert_eq!(u64_at(first, &["t_ns"]) - u64_at(first, &["interval_ns"]), 1_000_000_000);
    // The text report says the ramp ran and was not counted; the CSV marks its rows.
    let text = stdout;
    assert!(text.contains("Ramp:") && text.contains("not counted"), "{text}");
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "ramp").expect("a ramp column");
    let marks: Vec<&str> = lines.map(|l| l.split(',').nth(col).unwrap()).collect();
    assert_eq!(marks.iter().filter(|m| **m == "1").count(), 4, "{table}");
    assert!(marks[..4].iter().all(|m| *m == "1") && marks[4..].iter().all(|m| *m == "0"), "{table}");
}

#[test]
fn a_ramp_on_a_real_file_counts_only_the_window_bytes() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("real.dat"));
    let r = run_json(&[
        &f,
        "--file-size",
        "4m",
        "--random",
        "--write-percent",
        "50",
        "--ramp",
        "400ms",
        "--duration",
        "600ms",
        "--interval",
        "200ms",
    ]);
    assert_eq!(u64_at(&r, &["window_ns"]), 600_000_000);
    assert_eq!(u64_at(&r, &["ramp_ns"]), 400_000_000);
    for op in ["read", "write"] {
        let ops = u64_at(&r, &[op, "ops"]);
        assert_eq!(ops, row_ops(&r, false, op), "{op}");
        assert_eq!(u64_at(&r, &[op, "bytes"]), ops * 4096, "{op}");
        // The per-worker figures are the window's too.
        let per_worker: u64 = r["workers"].as_array().unwrap().iter().map(|w| u64_at(w, &[op, "ops"])).sum();
        assert_eq!(per_worker, ops, "{op}: workers");
    }
    assert!(u64_at(&r, &["ramp_ops"]) > 0);
}

#[test]
fn without_a_ramp_the_result_has_no_ramp_fields() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("none.dat"));
    let r = run_json(&[&f, "--engine", "null", "--duration", "300ms", "--interval", "100ms"]);
    assert!(r.get("ramp_ns").is_none() && r.get("ramp_ops").is_none() && r.get("steady_state").is_none());
    assert!(rows(&r).iter().all(|row| row.get("ramp").is_none()));
}

#[test]
fn steady_state_is_reached_on_a_steady_rate_and_its_window_is_the_result() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("steady.dat"));
    let plot = dir.path().join("charts");
    // A rate limit makes every 100 ms row hold 200 I/Os (±1): steady within 10 %.
    let r = run_json(&[
        &f,
        "--engine",
        "null",
        "--rate-iops",
        "2000",
        "--interval",
        "100ms",
        "--steady-state",
        "iops:10%",
        "--steady-state-window",
        "500ms",
        "--ramp",
        "200ms",
        "--duration",
        "30s",
        "--plot",
        &path_str(&plot),
    ]);
    assert_valid(&schema_validator(), &r, "a steady result");
    let s = &r["steady_state"];
    assert_eq!(s["reached"], true, "{s}");
    assert_eq!(r["stop_reason"], "steady_state");
    assert_eq!(s["criterion"], "iops:10%");
    assert_eq!(u64_at(s, &["window_intervals"]), 5);
    assert_eq!(u64_at(s, &["window_ns"]), 500_000_000);
    // The run stopped once steady, long before its 30 s bound (as the run itself measured).
    let whole = &s["whole_run"];
    assert!(u64_at(whole, &["window_ns"]) < 20_000_000_000, "{whole}");
    // The window's figures are the result, and they are the sum of its rows.
    assert_eq!(s["figures_are_window"], true);
    assert_eq!(u64_at(&r, &["window_ns"]), 500_000_000);
    let (start, end) = (u64_at(s, &["window", "start_ns"]), u64_at(s, &["window", "end_ns"]));
    assert_eq!(end - start, 500_000_000);
    assert_eq!(u64_at(s, &["reached_at_ns"]), end);
    let in_window: u64 = rows(&r)
        .iter()
        .filter(|row| {
            let t = u64_at(row, &["t_ns"]);
            t > start && t <= end
        })
        .map(|row| u64_at(row, &["total", "ops"]))
        .sum();
    assert_eq!(u64_at(&r, &["total", "ops"]), in_window);
    assert_eq!(u64_at(&r, &["total", "ops"]), u64_at(s, &["window", "total", "ops"]));
    // 2000 IOPS over 0.5 s, with the 10 % the criterion allows.
    let ops = u64_at(&r, &["total", "ops"]);
    assert!((900..=1100).contains(&ops), "{ops} ops in the steady window");
    // The window lies after the ramp; the whole run holds at least the window.
    assert!(start >= 200_000_000);
    assert!(u64_at(whole, &["total", "ops"]) >= ops);
    // The chart marks the steady window as a shaded band.
    let svg = std::fs::read_to_string(plot.join("iops-over-time.svg")).unwrap();
    assert!(svg.contains("#3CAA5A"), "no steady band in the chart");
    assert!(svg.contains("#A0A0A0"), "no ramp band in the chart");
}

#[test]
fn a_run_that_never_steadies_says_so_loudly() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("drift.dat"));
    let json = dir.path().join("r.json");
    // Unpaced, the null engine's interval counts differ by thousands: a bound of one
    // millionth of the mean (under one I/O per interval) never holds.
    let (code, stdout, stderr) = run(&[
        &f,
        "--engine",
        "null",
        "--interval",
        "100ms",
        "--steady-state",
        "iops:0.0001%",
        "--steady-state-window",
        "300ms",
        "--duration",
        "1s",
        "--json",
        &path_str(&json),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    assert_valid(&schema_validator(), &r, "a result not steady");
    let s = &r["steady_state"];
    assert_eq!(s["reached"], false, "{s}");
    assert!(s["reached_at_ns"].is_null());
    assert_eq!(s["figures_are_window"], false);
    assert_eq!(r["stop_reason"], "duration");
    // The figures stay the whole run's, and the last window judged is reported.
    assert_eq!(u64_at(&r, &["window_ns"]), 1_000_000_000);
    let test = &s["window"]["test"];
    assert!(test["figure"].as_f64().unwrap() > test["bound"].as_f64().unwrap(), "{test}");
    assert!(stderr.contains("STEADY STATE NOT REACHED"), "{stderr}");
    assert!(stdout.contains("STEADY STATE NOT REACHED"), "{stdout}");
    assert!(r["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("STEADY STATE NOT REACHED")));
}

#[test]
fn a_ramp_in_a_job_file_works_by_its_long_name() {
    let dir = temp_dir();
    let job = dir.path().join("ramp.toml");
    let json = dir.path().join("r.json");
    std::fs::write(
        &job,
        format!(
            "[warm]\ntargets = [\"{}\"]\nengine = \"null\"\nramp = \"300ms\"\nduration = \"500ms\"\ninterval = \"100ms\"\n",
            path_str(&dir.path().join("j.dat"))
        ),
    )
    .unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&job), "--json", &path_str(&json), "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = read_json(&json);
    let text = doc.to_string();
    assert!(text.contains("\"ramp_ns\":300000000"), "no ramp in the job's result: {text:.400}");
}

#[test]
fn a_steady_state_in_a_job_file_stops_its_own_job_only() {
    let dir = temp_dir();
    let job = dir.path().join("steady.toml");
    let json = dir.path().join("r.json");
    let (a, b) = (path_str(&dir.path().join("a.dat")), path_str(&dir.path().join("b.dat")));
    std::fs::write(
        &job,
        format!(
            "[global]\nengine = \"null\"\ninterval = \"100ms\"\nduration = \"2s\"\n\n\
             [steady]\ntargets = [\"{a}\"]\nrate-iops = 1000\nsteady-state = \"iops:20%\"\nsteady-state-window = \"500ms\"\n\n\
             [other]\ntargets = [\"{b}\"]\n"
        ),
    )
    .unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&job), "--json", &path_str(&json), "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = read_json(&json);
    let jobs = doc["jobs"].as_array().expect("jobs");
    assert_eq!(jobs[0]["stop_reason"], "steady_state", "{}", jobs[0]["steady_state"]);
    assert_eq!(u64_at(&jobs[0], &["window_ns"]), 500_000_000);
    // The other job of the phase ran its whole duration.
    assert_eq!(jobs[1]["stop_reason"], "duration");
    assert_eq!(u64_at(&jobs[1], &["window_ns"]), 2_000_000_000);
}

#[test]
fn fio_json_keeps_its_shape_with_a_ramp_and_counts_the_window() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("fio.dat"));
    let json = dir.path().join("r.json");
    let (code, stdout, stderr) = run(&[
        &f,
        "--engine",
        "null",
        "--ramp",
        "300ms",
        "--duration",
        "500ms",
        "--output-format",
        "fio-json",
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let fio: Value = serde_json::from_str(&stdout).unwrap();
    let job = &fio["jobs"][0];
    assert_eq!(job["job options"]["ramp_time"], "300ms");
    assert_eq!(u64_at(job, &["job_runtime"]), 500);
    let r = read_json(&json);
    assert_eq!(u64_at(job, &["read", "total_ios"]), u64_at(&r, &["read", "ops"]));
    assert!(u64_at(&r, &["ramp_ops"]) > 0);
}

/// Each row of this run is one 128 MiB read, issued at the row's start and lasting far
/// longer than the sampler used to wait for the workers (a twentieth of the interval):
/// the rows were judged before the worker handed them in, counted as stalls, and the
/// steady state was never reached. Judged once complete, the rows are steady, and every
/// figure said of the window is the rows' own.
#[test]
fn steady_state_is_reached_on_rows_that_a_long_io_delays() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("big.dat"));
    let json = dir.path().join("r.json");
    let (code, stdout, stderr) = run(&[
        &f,
        "--file-size",
        "256M",
        "--block-size",
        "128M",
        "--rate-iops",
        "5",
        "--interval",
        "200ms",
        "--steady-state",
        "iops:60%",
        "--steady-state-window",
        "1s",
        "--duration",
        "20s",
        "--json",
        &path_str(&json),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let s = &r["steady_state"];
    assert_eq!(s["reached"], true, "{s}\n{stdout}");
    assert_eq!(r["stop_reason"], "steady_state");
    // The figures of the window, recomputed from the result's own rows.
    let (start, end) = (u64_at(s, &["window", "start_ns"]), u64_at(s, &["window", "end_ns"]));
    let iops: Vec<f64> = rows(&r)
        .iter()
        .filter(|row| (start + 1..=end).contains(&u64_at(row, &["t_ns"])))
        .map(|row| row["total"]["iops"].as_f64().unwrap())
        .collect();
    assert_eq!(iops.len(), 5, "{s}");
    let mean = iops.iter().sum::<f64>() / iops.len() as f64;
    let deviation = iops.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
    let test = &s["window"]["test"];
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert!(close(test["mean"].as_f64().unwrap(), mean), "{test} vs mean {mean}");
    assert!(close(test["max_deviation"].as_f64().unwrap(), deviation), "{test} vs deviation {deviation}");
    assert!(close(test["figure"].as_f64().unwrap(), deviation), "{test}");
    assert!(close(test["bound"].as_f64().unwrap(), 0.6 * mean), "{test}");
    // No row of the window is a stall: each holds the read that the rate put in it.
    assert!(iops.iter().all(|&v| v > 0.0), "{iops:?}");
}
