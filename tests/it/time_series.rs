//! The time series and the live line: rows cover the run and add up to the
//! totals, interval latencies are the interval's own, the CSV matches its
//! header, and the live line appears only on a terminal.

use crate::common::*;

#[test]
fn rows_cover_the_run_and_add_up_to_the_totals() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("ts.dat"));
    let r = run_json(&[
        &f,
        "--file-size",
        "8m",
        "--random",
        "--write-percent",
        "30",
        "--duration",
        "2s",
        "--interval",
        "500ms",
    ]);
    let rows = r["time_series"].as_array().expect("time_series array");
    assert!((4..=5).contains(&rows.len()), "{} rows for 2 s at 500 ms", rows.len());
    for op in ["read", "write", "total"] {
        let sum: u64 = rows.iter().map(|row| u64_at(row, &[op, "ops"])).sum();
        assert_eq!(sum, u64_at(&r, &[op, "ops"]), "{op}: rows do not add up to the total");
    }
    let mut last = 0;
    for row in rows {
        let t = u64_at(row, &["t_ns"]);
        assert!(t > last, "rows not in time order");
        last = t;
        // Interval latencies lie inside the run's own extremes (2 significant digits).
        for op in ["read", "write"] {
            if u64_at(row, &[op, "ops"]) > 0 {
                let max = u64_at(row, &[op, "latency_ns", "max"]) as f64;
                assert!(max <= u64_at(&r, &[op, "latency_ns", "max"]) as f64 * 1.01);
            }
        }
    }
    assert!(last <= u64_at(&r, &["window_ns"]), "the last row ends after the window");
    // The worst interval holds the run's maximum latency.
    let worst = rows.iter().map(|row| u64_at(row, &["read", "latency_ns", "max"])).max().unwrap() as f64;
    let run_max = u64_at(&r, &["read", "latency_ns", "max"]) as f64;
    assert!((worst - run_max).abs() <= run_max * 0.01, "worst interval max {worst} vs run max {run_max}");
}

#[test]
fn timeseries_csv_has_a_header_and_one_row_per_interval() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("c.dat"));
    let csv = dir.path().join("ts.csv");
    let json = dir.path().join("r.json");
    let (code, _, stderr) = run(&[
        &f,
        "--file-size",
        "4m",
        "--engine",
        "null",
        "--duration",
        "1s",
        "--interval",
        "250ms",
        "--timeseries",
        &path_str(&csv),
        "--json",
        &path_str(&json),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "t_s");
    assert!(header.contains(&"read_p99_ns") && header.contains(&"write_p99_9_ns") && header.contains(&"total_iops"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!((4..=5).contains(&rows.len()), "{} rows", rows.len());
    assert!(rows.iter().all(|r| r.len() == header.len()), "a row's columns do not match the header");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let read_ops = header.iter().position(|h| *h == "read_ops").unwrap();
    let sum: u64 = rows.iter().map(|r| r[read_ops].parse::<u64>().unwrap()).sum();
    assert_eq!(sum, u64_at(&r, &["read", "ops"]));
}

#[test]
fn no_time_series_unless_asked_and_no_live_line_without_a_terminal() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("n.dat"));
    let (code, stdout, stderr) = run(&[&f, "--file-size", "4m", "--duration", "1.2s", "--output-format", "json"]);
    assert_eq!(code, 0);
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(r.get("time_series").is_none(), "time series collected though not asked for");
    assert!(!stderr.contains('\r'), "a live line was drawn without a terminal: {stderr:?}");
}

#[test]
fn the_live_line_shows_on_a_terminal_and_not_with_quiet() {
    // `script` runs the command under a pseudo-terminal (util-linux).
    if std::process::Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIP: no `script` command to give iopulse a terminal");
        return;
    }
    let dir = temp_dir();
    let f = path_str(&dir.path().join("l.dat"));
    let bin = env!("CARGO_BIN_EXE_iopulse");
    let run_tty = |extra: &str| {
        let cmd = format!("{bin} {f} --file-size 4m --engine null --duration 1.5s --interval 250ms {extra} >/dev/null");
        let out = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = run_tty("");
    assert!(shown.contains("IOPS") && shown.contains("/ 1.50 s]") && shown.contains("p99"), "{shown:?}");
    let quiet = run_tty("--quiet");
    assert!(!quiet.contains("IOPS"), "--quiet still drew the live line: {quiet:?}");
}
