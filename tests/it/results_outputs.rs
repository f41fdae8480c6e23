//! The outputs of issue 9 from the real binary: the JSON result against its
//! schema (docs/result.schema.json), `--csv` rows, `iopulse merge` (exact
//! histogram addition, spec checks), SVG charts, fio-compatible JSON with
//! fio's keys and units, shell completions and the man page, the achieved
//! queue depth, and subcommand names as targets.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// Runs a random 70/30 read/write mix on a 2 MiB file at `target` for `duration` with
/// the `extra` flags; asserts that it exited 0 and returns (stdout, stderr).
fn run_mix(target: &str, duration: &str, extra: &[&str]) -> (String, String) {
    let mix = [target, "--file-size", "2m", "--duration", duration, "--random", "--write-percent", "30"];
    run_ok(&[&mix[..], extra].concat())
}

#[test]
fn json_results_validate_against_the_schema() {
    let validator = schema_validator();
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    let cases: Vec<Vec<&str>> = vec![
        vec![&f, "--file-size", "1m", "--duration", "0.1"],
        vec![&f, "--duration", "0", "--random", "--write-percent", "30", "--threads", "2", "--block-size", "8k"],
        vec![&f, "--engine", "null", "--ops", "5000", "--random", "--distribution", "zipf", "--queue-depth", "4"],
        vec![&f, "--duration", "0.1", "--random", "--distribution", "gaussian", "--file-distribution", "partitioned"],
        vec!["--duration", "0.1", "--write-percent", "100"],
    ];
    for args in cases {
        let r = run_json(&args);
        assert_valid(&validator, &r, &format!("iopulse {args:?}"));
    }
    // A result that misses a field or has a wrong type is refused: the schema has teeth.
    let mut r = run_json(&[&f, "--duration", "0.05"]);
    r["read"]["latency_ns"]["p99"] = Value::from("fast");
    assert!(!validator.is_valid(&r));
    r.as_object_mut().unwrap().remove("histograms");
    assert!(!validator.is_valid(&r));
}

#[test]
fn csv_twice_gives_one_header_and_two_rows() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("c.dat"));
    let csv = dir.path().join("sweep.csv");
    let csvs = path_str(&csv);
    for (qd, bs) in [("1", "4k"), ("4", "64k")] {
        run_mix(&f, "0.1", &["--queue-depth", qd, "--block-size", bs, "--csv", &csvs, "--quiet"]);
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], iopulse::testing::csv_header());
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(row.len(), header.len(), "a row has as many columns as the header");
    }
    let col = |row: &csv::StringRecord, name: &str| row[header.iter().position(|h| h == name).unwrap()].to_string();
    assert_eq!(col(&rows[0], "queue_depth"), "1");
    assert_eq!(col(&rows[1], "queue_depth"), "4");
    assert_eq!(col(&rows[1], "block_size"), "65536");
    assert_eq!(col(&rows[1], "read_percent"), "70");
    assert_eq!(col(&rows[1], "order"), "random");
    assert_eq!(col(&rows[1], "duration_s"), "0.1");
    assert!(col(&rows[0], "iops").parse::<f64>().unwrap() > 0.0);
    assert!(col(&rows[0], "read_p99_ns").parse::<u64>().unwrap() > 0);
    assert!(col(&rows[0], "achieved_queue_depth").parse::<f64>().unwrap() > 0.0);
}

#[test]
fn csv_of_another_layout_is_refused_before_anything_is_touched() {
    let dir = temp_dir();
    let target = dir.path().join("never.dat");
    let csv = dir.path().join("other.csv");
    std::fs::write(&csv, "a,b,c\n1,2,3\n").unwrap();
    let (code, _, stderr) = run(&[&path_str(&target), "--file-size", "1m", "--csv", &path_str(&csv)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--csv") && stderr.contains("header"), "{stderr}");
    assert!(!target.exists(), "the target was created by a refused run");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "a,b,c\n1,2,3\n");

    let (code, _, stderr) = run(&[&path_str(&target), "--csv", &path_str(&dir.path().join("no/such/dir/x.csv"))]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!target.exists());
    let (code, _, stderr) = run(&[&path_str(&target), "--plot", &path_str(&dir.path().join("no/such/dir"))]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--plot"), "{stderr}");
    assert!(!target.exists());
}

/// Two runs with JSON files, and their merge as JSON.
fn two_runs_and_merge(dir: &Path) -> (Value, Value, Value) {
    let mut results = Vec::new();
    for (name, seed) in [("a", "1"), ("b", "2")] {
        let f = path_str(&dir.join(format!("{name}.dat")));
        let json = path_str(&dir.join(format!("{name}.json")));
        run_mix(&f, "0.2", &["--seed", seed, "--json", &json, "--quiet"]);
        results.push(read_json(&json));
    }
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let (stdout, _) = run_ok(&["merge", &path_str(&a), &path_str(&b), "--output-format", "json", "--force"]);
    let merged: Value = serde_json::from_str(&stdout).expect("merge --output-format json prints JSON only");
    let b = results.pop().unwrap();
    (results.pop().unwrap(), b, merged)
}

#[test]
fn merge_of_two_runs_equals_their_histograms_added() {
    let dir = temp_dir();
    let (a, b, m) = two_runs_and_merge(dir.path());
    assert_valid(&schema_validator(), &m, "the merged result");
    assert_eq!(m["merged_from"].as_array().unwrap().len(), 2);
    for op in ["read", "write"] {
        let decode =
            |v: &Value| iopulse::testing::stats::decode_histogram(v["histograms"][op].as_str().unwrap()).unwrap();
        let mut expected = decode(&a);
        expected.add(decode(&b)).unwrap();
        let merged = decode(&m);
        assert_eq!(merged, expected, "{op}: the merged histogram is the sum of both");
        assert_eq!(u64_at(&m, &[op, "ops"]), u64_at(&a, &[op, "ops"]) + u64_at(&b, &[op, "ops"]));
        assert_eq!(merged.len(), u64_at(&m, &[op, "ops"]));
        // Over the runs that did some of `op` (a short run on a loaded machine may do none of
        // a minor op, and then has no minimum to merge).
        let did = [&a, &b].into_iter().filter(|v| u64_at(v, &[op, "ops"]) > 0);
        let min = did.clone().map(|v| u64_at(v, &[op, "latency_ns", "min"])).min().unwrap_or(0);
        let max = did.map(|v| u64_at(v, &[op, "latency_ns", "max"])).max().unwrap_or(0);
        assert_eq!(u64_at(&m, &[op, "latency_ns", "min"]), min);
        assert_eq!(u64_at(&m, &[op, "latency_ns", "max"]), max);
        assert_eq!(u64_at(&m, &[op, "latency_ns", "p99"]), expected.value_at_quantile(0.99).clamp(min, max));
        // Item 8: no percentile outside [min, max], after merging too.
        for p in ["p50", "p90", "p99", "p99_9", "p99_99"] {
            let v = u64_at(&m, &[op, "latency_ns", p]);
            assert!((min..=max).contains(&v), "{op} {p} = {v} outside [{min}, {max}]");
        }
        let iops = m[op]["iops"].as_f64().unwrap();
        let sum = a[op]["iops"].as_f64().unwrap() + b[op]["iops"].as_f64().unwrap();
        assert!((iops - sum).abs() < 1e-6 * sum.max(1.0), "{op}: IOPS of concurrent runs add up");
    }
    assert_eq!(u64_at(&m, &["total", "ops"]), u64_at(&a, &["total", "ops"]) + u64_at(&b, &["total", "ops"]));
    assert_eq!(m["workers"].as_array().unwrap().len(), 2);
    let aqd = m["achieved_queue_depth"]["total"].as_f64().unwrap();
    let sum =
        a["achieved_queue_depth"]["total"].as_f64().unwrap() + b["achieved_queue_depth"]["total"].as_f64().unwrap();
    assert!((aqd - sum).abs() < 1e-9);
    // The depth counts add up value by value (each run's I/Os were all issued once).
    for key in ["at_issue", "per_submit", "per_reap"] {
        let counts = |v: &Value| -> std::collections::BTreeMap<u64, u64> {
            let list = v["io_depths"][key].as_array().unwrap_or_else(|| panic!("no io_depths.{key}: {v}"));
            list.iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap())).collect()
        };
        let mut expected = counts(&a);
        for (n, c) in counts(&b) {
            *expected.entry(n).or_default() += c;
        }
        assert_eq!(counts(&m), expected, "{key}");
    }
    let issued: u64 = m["io_depths"]["at_issue"].as_array().unwrap().iter().map(|p| p[1].as_u64().unwrap()).sum();
    assert!(issued >= u64_at(&m, &["total", "ops"]), "every counted I/O was issued: {}", m["io_depths"]);

    // The text report of a merge names its sources.
    let (text, _) =
        run_ok(&["merge", &path_str(&dir.path().join("a.json")), &path_str(&dir.path().join("b.json")), "--force"]);
    assert!(text.contains("Merged:   2 concurrent results"), "{text}");
}

#[test]
fn merge_refuses_different_specs_and_bad_input_with_exit_2() {
    let dir = temp_dir();
    let mut files = Vec::new();
    for (name, bs) in [("a", "4k"), ("b", "8k")] {
        let json = dir.path().join(format!("{name}.json"));
        let f = path_str(&dir.path().join("t.dat"));
        run_ok(&[&f, "--file-size", "1m", "--duration", "0.05", "--block-size", bs, "--json", &path_str(&json)]);
        files.push(path_str(&json));
    }
    let (code, stdout, stderr) = run(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("spec.block_size_bytes is 4096 in") && stderr.contains("8192"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    // Different targets too: both named.
    let (_, stderr) = run_ok(&["merge", &files[0], &files[1], "--force"]);
    assert!(stderr.contains("--force: merged despite different specs"), "{stderr}");

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"not\": \"a result\"}").unwrap();
    let (code, _, stderr) = run(&["merge", &files[0], &path_str(&junk)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("junk.json is not an iopulse JSON result"), "{stderr}");
    let (code, _, stderr) = run(&["merge", &path_str(&dir.path().join("missing.json"))]);
    assert_eq!(code, 2);
    assert!(stderr.contains("missing.json"), "{stderr}");
    let (code, _, _) = run(&["merge"]);
    assert_eq!(code, 2);
}

fn assert_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc =
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg", "{}", path.display());
    assert!(
        doc.descendants().any(|n| n.has_tag_name("polyline") || n.has_tag_name("path")),
        "{}: no line drawn",
        path.display()
    );
    assert!(doc.descendants().any(|n| n.has_tag_name("text")), "{}: no labels", path.display());
}

#[test]
fn plots_are_well_formed_svg() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("p.dat"));
    let plots = dir.path().join("plots");
    let json = dir.path().join("r.json");
    let (_, stderr) = run_mix(&f, "0.2", &["--plot", &path_str(&plots), "--json", &path_str(&json)]);
    assert_svg(&plots.join("latency-percentiles.svg"));

    // Without --interval or --timeseries there is no time series: those charts are skipped, with a note.
    let r = read_json(&json);
    assert!(r.get("time_series").is_none());
    assert!(stderr.contains("no time_series"), "the skipped charts are noted: {stderr}");

    // `iopulse plot` on a result that has a real time series.
    run_mix(&path_str(&dir.path().join("t2.dat")), "1s", &["--interval", "200ms", "--json", &path_str(&json)]);
    let r = read_json(&json);
    assert!(r["time_series"].as_array().is_some_and(|rows| rows.len() >= 4), "{}", r["time_series"]);
    let with_ts = dir.path().join("ts.json");
    std::fs::write(&with_ts, serde_json::to_string(&r).unwrap()).unwrap();
    let out = dir.path().join("out");
    let (stdout, _) = run_ok(&["plot", &path_str(&with_ts), "--out", &path_str(&out)]);
    for name in ["latency-percentiles.svg", "iops-over-time.svg", "p99-over-time.svg"] {
        assert!(stdout.contains(name), "{stdout}");
        assert_svg(&out.join(name));
    }

    // A sweep from a --csv file.
    let csv = dir.path().join("s.csv");
    for (qd, bs) in [("1", "4k"), ("2", "4k"), ("1", "16k"), ("2", "16k"), ("2", "16k")] {
        run_ok(&[
            &f,
            "--engine",
            "null",
            "--ops",
            "2000",
            "--queue-depth",
            qd,
            "--block-size",
            bs,
            "--csv",
            &path_str(&csv),
            "--quiet",
        ]);
    }
    let (stdout, _) = run_ok(&[
        "plot",
        "--sweep",
        &path_str(&csv),
        "--x",
        "queue_depth",
        "--y",
        "iops",
        "--by",
        "block_size",
        "--out",
        &path_str(&out),
    ]);
    let svg = out.join("sweep-iops-vs-queue_depth-by-block_size.svg");
    assert_eq!(stdout.trim(), path_str(&svg));
    assert_svg(&svg);
    let text = std::fs::read_to_string(&svg).unwrap();
    // In the flag's words, sizes as typed (it said `block_size = 4096`).
    assert!(text.contains("--block-size 4k") && text.contains("--block-size 16k"), "legend names both series");
    assert!(!text.contains("block_size ="), "{text}");

    let (code, _, stderr) = run(&["plot", "--sweep", &path_str(&csv), "--x", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no column `nope`"), "{stderr}");
    let (code, _, _) = run(&["plot"]);
    assert_eq!(code, 2);
    let (code, _, stderr) = run(&["plot", &path_str(&json), "--x", "threads"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--sweep"), "{stderr}");
}

/// Every key path of a JSON value ("jobs.0.read.lat_ns.percentile.99.000000"), with
/// array indices replaced by `[]`.
fn key_paths(v: &Value, prefix: &str, out: &mut Vec<(String, &'static str)>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}/{k}") };
                key_paths(child, &p, out);
            }
        }
        Value::Array(items) => {
            for child in items.iter().take(1) {
                key_paths(child, &format!("{prefix}/[]"), out);
            }
        }
        Value::Number(n) => out.push((prefix.to_string(), if n.is_f64() { "float" } else { "int" })),
        Value::String(_) => out.push((prefix.to_string(), "string")),
        _ => out.push((prefix.to_string(), "other")),
    }
}

#[test]
fn fio_json_has_fios_keys_and_units() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("fio.dat"));
    let json = dir.path().join("r.json");
    let (stdout, _) = run_mix(&f, "0.3", &["--output-format", "fio-json", "--json", &path_str(&json), "--quiet"]);
    let fio: Value = serde_json::from_str(&stdout).expect("fio-json on stdout is one JSON document");
    let r = read_json(&json);
    assert!(fio["fio version"].as_str().unwrap().starts_with("iopulse-"));
    assert!(fio["timestamp"].as_u64().unwrap() > 1_600_000_000);
    let job = &fio["jobs"][0];
    let window_ms = (u64_at(&r, &["window_ns"]) as f64 / 1e6).ceil() as u64;
    for op in ["read", "write"] {
        let o = &job[op];
        assert_eq!(o["total_ios"], r[op]["ops"]);
        assert_eq!(o["io_bytes"], r[op]["bytes"]);
        assert_eq!(u64_at(o, &["io_kbytes"]), u64_at(&r, &[op, "bytes"]) / 1024);
        let bw_bytes = r[op]["bw_bytes_per_sec"].as_f64().unwrap();
        assert_eq!(u64_at(o, &["bw_bytes"]), bw_bytes.round() as u64);
        assert_eq!(u64_at(o, &["bw"]), (bw_bytes / 1024.0).round() as u64, "bw is KiB/s");
        assert!((o["iops"].as_f64().unwrap() - r[op]["iops"].as_f64().unwrap()).abs() < 1e-6);
        assert_eq!(u64_at(o, &["runtime"]), window_ms, "runtime is ms");
        // Submission to completion: fio's lat_ns and, unpaced, its clat_ns too (slat_ns is
        // not measured apart).
        let lat = &o["lat_ns"];
        assert_eq!(lat["min"], r[op]["latency_ns"]["min"]);
        assert_eq!(lat["max"], r[op]["latency_ns"]["max"]);
        assert_eq!(lat["N"], r[op]["ops"]);
        assert!(lat["mean"].is_f64() && lat["stddev"].is_f64());
        assert_eq!(o["clat_ns"]["N"], r[op]["ops"]);
        assert_eq!(o["clat_ns"]["percentile"], lat["percentile"]);
        assert_eq!(o["slat_ns"]["N"], 0);
        let p = lat["percentile"].as_object().unwrap();
        assert_eq!(p.len(), 17);
        assert_eq!(p["50.000000"], r[op]["latency_ns"]["p50"]);
        assert_eq!(p["99.000000"], r[op]["latency_ns"]["p99"]);
        assert_eq!(p["99.900000"], r[op]["latency_ns"]["p99_9"]);
        assert_eq!(p["99.990000"], r[op]["latency_ns"]["p99_99"]);
        let mut pairs: Vec<(f64, u64)> = p.iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(pairs[0].0, 1.0);
        let values: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "percentiles ascending: {values:?}");
    }
    let cpu_pct = |ns: u64| ns as f64 * 100.0 / u64_at(&r, &["window_ns"]) as f64;
    assert!((job["usr_cpu"].as_f64().unwrap() - cpu_pct(u64_at(&r, &["cpu", "workers", "user_ns"]))).abs() < 1e-6);
    assert!((job["sys_cpu"].as_f64().unwrap() - cpu_pct(u64_at(&r, &["cpu", "workers", "sys_ns"]))).abs() < 1e-6);
    assert_eq!(job["job options"]["rw"], "randrw");
    assert_eq!(job["job options"]["rwmixread"], "70");

    // Every key iopulse writes is one fio writes, with the same JSON number kind.
    let Ok(out) = std::process::Command::new("fio")
        .args([
            "--name=t",
            &format!("--filename={f}"),
            "--size=2m",
            "--bs=4k",
            "--rw=randrw",
            "--rwmixread=70",
            "--runtime=0.2",
            "--time_based",
            "--lat_percentiles=1",
            "--output-format=json",
        ])
        .output()
    else {
        eprintln!("SKIP: fio is not installed: keys not compared with fio's own output");
        return;
    };
    let real: Value = serde_json::from_slice(&out.stdout).expect("fio prints JSON");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    key_paths(&fio, "", &mut ours);
    key_paths(&real, "", &mut theirs);
    // `job options` echo the options given, which differ between the two command lines;
    // the top-level `iopulse` key is iopulse's own by design (docs/json.md), never fio's.
    assert!(!theirs.iter().any(|(p, _)| p == "iopulse" || p.starts_with("iopulse/")), "fio has an iopulse key");
    let own = |p: &str| p == "iopulse" || p.starts_with("iopulse/");
    for (path, kind) in ours.iter().filter(|(p, _)| !p.contains("/job options/") && !own(p)) {
        let found = theirs.iter().find(|(p, _)| p == path);
        let (_, their_kind) = found.unwrap_or_else(|| panic!("fio writes no `{path}`"));
        // fio prints floats with 6 decimals ("0.000000"), so an integral value parses as a float.
        let compatible = kind == their_kind || (*kind == "float" && *their_kind == "int") || *their_kind == "float";
        assert!(compatible, "`{path}`: iopulse writes {kind}, fio {their_kind}");
    }
}

#[test]
fn completions_and_man_page_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let (stdout, _) = run_ok(&["completions", shell]);
        for word in ["block-size", "queue-depth", "csv", "fio-json", "merge", "plot"] {
            assert!(stdout.contains(word), "{shell} completions lack {word}");
        }
    }
    let (code, _, _) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    let (stdout, _) = run_ok(&["man"]);
    assert!(stdout.starts_with(".ie") || stdout.contains(".TH iopulse"), "{}", &stdout[..200.min(stdout.len())]);
    assert!(stdout.contains("block\\-size") && stdout.contains("merge"), "the man page lists flags and subcommands");
}

#[test]
fn a_target_named_like_a_subcommand_is_written_with_a_path() {
    let dir = temp_dir();
    let out = iopulse()
        .current_dir(dir.path())
        .args(["./merge", "--file-size", "1m", "--duration", "0.05", "--output-format", "json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("merge").is_file());
}

#[test]
fn achieved_queue_depth_is_reported_per_worker_and_in_total() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("q.dat"));
    let json = dir.path().join("q.json");
    let (text, _) = run_ok(&[
        &f,
        "--file-size",
        "2m",
        "--duration",
        "0.3",
        "--random",
        "--threads",
        "2",
        "--json",
        &path_str(&json),
    ]);
    let r = read_json(&json);
    let workers: Vec<f64> =
        r["workers"].as_array().unwrap().iter().map(|w| w["achieved_queue_depth"].as_f64().unwrap()).collect();
    let total = r["achieved_queue_depth"]["total"].as_f64().unwrap();
    assert!((workers.iter().sum::<f64>() - total).abs() < 1e-6 * total.max(1.0));
    // sync: one I/O at a time per worker, so each worker is between 0 and 1.
    assert!(workers.iter().all(|&q| q > 0.0 && q <= 1.0 + 1e-9), "{workers:?}");
    // Little's law from the published figures: IOPS x mean latency.
    let iops = r["total"]["iops"].as_f64().unwrap();
    let mean_s = r["total"]["latency_ns"]["mean"].as_f64().unwrap() / 1e9;
    assert!((iops * mean_s - total).abs() <= total * 0.01 + 1e-3, "{} vs {total}", iops * mean_s);
    assert!((r["achieved_queue_depth"]["mean_per_worker"].as_f64().unwrap() - total / 2.0).abs() < 1e-9);
    let line = text.lines().find(|l| l.starts_with("QD ")).unwrap_or_else(|| panic!("no QD line:\n{text}"));
    assert!(line.contains("1 requested") && line.contains("achieved per worker"), "{line}");
    assert!(text.contains("in flight in total"), "{text}");
}
