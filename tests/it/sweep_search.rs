//! `iopulse sweep` and `iopulse search` end to end, on the null engine (no file, fast):
//! the grid and its interleaved repetitions, summaries that are the figures of their runs,
//! resuming after SIGINT without redoing a run, refusals before anything runs, and the
//! search's answers checked against the curve it reports.

use crate::common::{assert_valid, iopulse, run, run_command, schema_validator, temp_dir};
use serde_json::Value;
use std::path::Path;

/// The CSV's rows as (block_size, queue_depth) pairs, in file order.
fn csv_points(path: &Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines = text.lines();
    let Some(header) = lines.next() else { return Vec::new() };
    let columns: Vec<&str> = header.split(',').collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let (bs, qd) = (at("block_size"), at("queue_depth"));
    lines
        .map(|l| {
            // No field of these runs holds a comma (targets is "(temporary)").
            let f: Vec<&str> = l.split(',').collect();
            (f[bs].parse().unwrap(), f[qd].parse().unwrap())
        })
        .collect()
}

/// Panics with every violation unless `doc` matches docs/sweep.schema.json and each of its
/// runs' results matches docs/result.schema.json.
fn assert_valid_document(doc: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sweep.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the document does not match docs/sweep.schema.json:\n{}", errors.join("\n"));
    let results = schema_validator();
    for (i, r) in doc["runs"].as_array().unwrap().iter().enumerate() {
        assert_valid(&results, &r["result"], &format!("runs[{i}].result"));
    }
    // The schema has teeth: a document without its summaries does not match.
    let mut broken = doc.clone();
    let key = if doc["kind"] == "sweep" { "points" } else { "curve" };
    broken.as_object_mut().unwrap().remove(key);
    assert!(!validator.is_valid(&broken), "a {} without `{key}` matched the schema", doc["kind"]);
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// (block_size, queue_depth) of point `i` of the 2 × 2 grid `--queue-depth 1,4 --block-size 512,4k`.
fn grid_point(i: usize) -> (u64, u64) {
    [(512, 1), (4096, 1), (512, 4), (4096, 4)][i]
}

#[test]
fn a_2x2_sweep_repeated_3_times_runs_12_interleaved_and_sums_up_its_runs() {
    let dir = temp_dir();
    let csv = dir.path().join("s.csv");
    let plots = dir.path().join("plots");
    let (code, stdout, stderr) = run(&[
        "sweep",
        "--engine",
        "null",
        "--duration",
        "100ms",
        "--queue-depth",
        "1,4",
        "--block-size",
        "512,4k",
        "--repeat",
        "3",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        plots.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_valid_document(&doc);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12);
    // Interleaved: points 0, 1, 2, 3, then again, never one point three times in a row.
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["point"], i % 4, "run {i}");
        assert_eq!(r["repetition"], i / 4 + 1, "run {i}");
        let (bs, qd) = grid_point(i % 4);
        assert_eq!(
            (r["result"]["spec"]["block_size_bytes"].as_u64(), r["result"]["spec"]["queue_depth"].as_u64()),
            (Some(bs), Some(qd))
        );
    }
    // The CSV: one row per run, in the order run.
    let rows = csv_points(&csv);
    assert_eq!(rows, (0..12).map(|i| grid_point(i % 4)).collect::<Vec<_>>());
    // Each point's summary is the figures of its own runs.
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    let mut medians = Vec::new();
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p["runs"], 3);
        let mine: Vec<&Value> = runs.iter().filter(|r| r["point"] == i).collect();
        for (field, pick) in [
            ("iops", (|r: &Value| f(&r["result"]["total"]["iops"])) as fn(&Value) -> f64),
            ("bw_bytes_per_sec", |r| f(&r["result"]["total"]["bw_bytes_per_sec"])),
            ("p99_ns", |r| f(&r["result"]["total"]["latency_ns"]["p99"])),
            ("p50_ns", |r| f(&r["result"]["total"]["latency_ns"]["p50"])),
            ("cpu_per_io_ns", |r| f(&r["result"]["cpu"]["per_io_ns"])),
        ] {
            let mut values: Vec<f64> = mine.iter().map(|r| pick(r)).collect();
            let mean = values.iter().sum::<f64>() / 3.0;
            values.sort_by(f64::total_cmp);
            let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(close(f(&p[field]["mean"]), mean), "point {i} {field}: {} vs {mean}", p[field]["mean"]);
            assert!(close(f(&p[field]["median"]), values[1]), "point {i} {field} median");
            assert!(close(f(&p[field]["min"]), values[0]) && close(f(&p[field]["max"]), values[2]), "{field}");
            assert!(close(f(&p[field]["stddev"]), sd), "point {i} {field} stddev {} vs {sd}", p[field]["stddev"]);
        }
        medians.push(f(&p["iops"]["median"]));
    }
    let best = medians.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
    assert_eq!(doc["best"]["point"], best);
    assert_eq!(doc["best"]["by"], "iops");
    assert_eq!(doc["interrupted"], false);
    // Charts: the repetitions' range drawn as a band.
    let chart = std::fs::read_to_string(plots.join("sweep-iops-vs-queue-depth.svg")).unwrap();
    assert_eq!(chart.matches("<polygon").count(), 2, "a band per block size");
    // Without a terminal: a plain line per run on stderr.
    assert_eq!(stderr.lines().filter(|l| l.starts_with("run ")).count(), 12, "{stderr}");
}

#[test]
fn a_sweep_interrupted_by_sigint_resumes_without_redoing_a_run() {
    let dir = temp_dir();
    let csv = dir.path().join("s.csv");
    let args = [
        "sweep",
        "--engine",
        "null",
        "--duration",
        "300ms",
        "--queue-depth",
        "1,4",
        "--block-size",
        "512,4k",
        "--repeat",
        "3",
        "--csv",
        csv.to_str().unwrap(),
        "--quiet",
    ];
    let mut child = iopulse().args(args).stdout(std::process::Stdio::piped()).spawn().unwrap();
    // SIGINT once 5 runs are in the CSV.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while csv_points(&csv).len() < 5 {
        assert!(std::time::Instant::now() < deadline, "5 runs never reached the CSV");
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before 5 runs");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill only sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("interrupted: --resume continues it"), "{stdout}");
    let before = csv_points(&csv);
    assert!((5..12).contains(&before.len()), "{} runs", before.len());
    // The run under way when the signal came is in neither the CSV nor the journal.
    let journal = std::fs::read_to_string(dir.path().join("s.csv.journal")).unwrap();
    assert_eq!(journal.lines().count(), before.len());
    assert_eq!(before, (0..before.len()).map(|i| grid_point(i % 4)).collect::<Vec<_>>());

    let mut resumed = args.to_vec();
    resumed.retain(|a| *a != "--quiet");
    resumed.extend(["--resume", "--output-format", "json"]);
    let (code, stdout, stderr) = run(&resumed);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("resuming: {} of 12 runs done, {} to go", before.len(), 12 - before.len())),
        "{stderr}"
    );
    assert_eq!(stderr.lines().filter(|l| l.starts_with("run ")).count(), 12 - before.len(), "{stderr}");
    let after = csv_points(&csv);
    assert_eq!(after.len(), 12, "{after:?}");
    assert_eq!(&after[..before.len()], &before[..]);
    for i in 0..4 {
        assert_eq!(after.iter().filter(|p| **p == grid_point(i)).count(), 3, "point {i}: {after:?}");
    }
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let mut done: Vec<(u64, u64)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["point"].as_u64().unwrap(), r["repetition"].as_u64().unwrap()))
        .collect();
    assert_eq!(done.len(), 12);
    done.sort_unstable();
    done.dedup();
    assert_eq!(done.len(), 12, "no run twice");
    assert!(doc["points"].as_array().unwrap().iter().all(|p| p["runs"] == 3));
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let dir = temp_dir();
    let csv = dir.path().join("s.csv");
    let c = csv.to_str().unwrap();
    let (code, _, stderr) = run(&["sweep", "--engine", "null", "--queue-depth", "1,0", "--csv", c]);
    assert_eq!(code, 2);
    assert!(stderr.contains("point queue-depth=0") && stderr.contains("--queue-depth"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!csv.exists());
    let (code, _, stderr) = run(&["sweep", "--engine", "null", "--queue-depth", "1,4", "--resume"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--resume needs the --csv FILE"), "{stderr}");
    let (code, _, stderr) = run(&["sweep", "--engine", "null", "--queue-depth", "1,4", "--csv", c, "--resume"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("nothing to resume"), "{stderr}");
    // A journal of another grid.
    let (code, _, stderr) =
        run(&["sweep", "--engine", "null", "--duration", "50ms", "--queue-depth", "1", "--csv", c, "-q"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) =
        run(&["sweep", "--engine", "null", "--duration", "50ms", "--queue-depth", "2,8", "--csv", c, "--resume"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("holds a run of another sweep"), "{stderr}");
    assert_eq!(csv_points(&csv).len(), 1, "nothing more ran");
    let (code, _, stderr) = run(&["sweep", "--engine", "null", "--queue-depth", "1,,4"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--queue-depth 1,,4: an empty value"), "{stderr}");
    let (code, _, stderr) = run(&["sweep", "--engine", "null", "--repeat", "0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--repeat"), "{stderr}");
}

/// The search's document, from `iopulse search ARGS --output-format json`.
fn search_json(args: &[&str]) -> Value {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    all.extend(["--output-format", "json", "--quiet"]);
    let (code, stdout, stderr) = run(&all);
    assert_eq!(code, 0, "{all:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn search_p99_max_finds_the_bound_within_the_precision() {
    // A "device" of about 1000 I/Os per second: the null engine with 1 ms of think time.
    // Offered below what it can do, I/Os start when due (latency near zero); above, they
    // fall behind their schedule and latency from the due time grows through the run.
    let doc = search_json(&["--engine", "null", "--think-time", "1ms", "--duration", "1s", "--p99-max", "50ms"]);
    assert_valid_document(&doc);
    let curve = doc["curve"].as_array().unwrap();
    let max = f(&curve[0]["iops"]);
    assert_eq!(curve[0]["phase"], "max");
    assert!(max > 100.0, "max {max}");
    assert_eq!(curve[1]["phase"], "step");
    assert!((f(&curve[1]["offered_iops"]) - (0.1 * max).round()).abs() <= 1.0);
    // Every verdict agrees with the figures it was made from.
    for c in &curve[1..] {
        assert_eq!(c["passed"].as_bool().unwrap(), c["p99_ns"].as_u64().unwrap() <= 50_000_000, "{c}");
    }
    let answer = &doc["answer"];
    assert_eq!(answer["found"], true, "{doc}");
    let offered = f(&answer["offered_iops"]);
    let chosen = curve.iter().find(|c| c["offered_iops"].as_f64() == Some(offered)).unwrap();
    assert_eq!(chosen["passed"], true);
    assert_eq!(f(&answer["iops"]), f(&chosen["iops"]));
    // The highest passing rate, and no failing rate lies within it: the answer is the bound
    // to 5 % of the maximum, or every step passed.
    let passing = curve[1..].iter().filter(|c| c["passed"] == true).map(|c| f(&c["offered_iops"]));
    assert_eq!(passing.fold(0.0, f64::max), offered);
    let first_fail =
        curve[1..].iter().filter(|c| c["passed"] == false).map(|c| f(&c["offered_iops"])).fold(f64::MAX, f64::min);
    if first_fail < f64::MAX {
        assert!(
            first_fail > offered && first_fail - offered <= 0.05 * max + 1.0,
            "{offered} vs {first_fail}: {curve:?}"
        );
    } else {
        assert_eq!(offered, max.round(), "every step passed: the answer is the 100 % step");
    }
    let text = answer["text"].as_str().unwrap();
    assert!(text.starts_with("p99 ≤ 50.0 ms up to ") && text.contains("% of max"), "{text}");
    assert_eq!(doc["runs"].as_array().unwrap().len(), curve.len());
}

/// When even the 10 % step fails, the search goes on below it (halving, down to 1 % of
/// the maximum) and its answer says how much of the latency was the tool's own lateness,
/// which every paced point of the curve carries.
#[test]
fn search_probes_below_10_percent_and_names_the_tools_lateness() {
    // No latency is at most 1 ns: every paced run fails the bound.
    let doc = search_json(&["--engine", "null", "--think-time", "1ms", "--duration", "300ms", "--p99-max", "1ns"]);
    assert_valid_document(&doc);
    let curve = doc["curve"].as_array().unwrap();
    let max = f(&curve[0]["iops"]);
    let percents: Vec<f64> = curve[1..].iter().map(|c| f(&c["offered_percent"])).collect();
    // 10 %, then 5 %, 2.5 %, 1.25 % (rounded to whole IOPS), and no lower than 1 %.
    assert_eq!(percents.len(), 4, "{percents:?}");
    assert!((percents[0] - 10.0).abs() < 1.0, "{percents:?}");
    for (i, p) in percents.iter().enumerate().skip(1) {
        assert!(p < &percents[i - 1] && *p >= 100.0 * (0.01 * max).max(1.0) / max - 1e-9, "{percents:?}");
    }
    for c in &curve[1..] {
        assert_eq!(c["passed"], false, "{c}");
        assert!(c["lateness_ns"]["p99"].is_u64(), "a paced point without its lateness: {c}");
        assert!(c["lateness_ns"]["p99"].as_u64().unwrap() <= c["p99_ns"].as_u64().unwrap(), "{c}");
    }
    let answer = &doc["answer"];
    assert_eq!(answer["found"], false);
    let text = answer["text"].as_str().unwrap();
    assert!(text.contains("not met even at") && text.contains("the tool's own lateness (due → submitted)"), "{text}");
}

#[test]
fn search_saturate_reports_the_smallest_depth_reaching_95_percent() {
    let doc = search_json(&["--engine", "null", "--duration", "200ms", "--queue-depth", "16", "--saturate"]);
    assert_valid_document(&doc);
    let curve = doc["curve"].as_array().unwrap();
    let max = f(&curve[0]["iops"]);
    let answer = &doc["answer"];
    assert_eq!(answer["found"], true);
    let depth = answer["queue_depth"].as_u64().unwrap();
    // Every smaller depth tried fell short of 95 %, in increasing order.
    let tried: Vec<u64> = curve[1..].iter().map(|c| c["queue_depth"].as_u64().unwrap()).collect();
    assert!(tried.windows(2).all(|w| w[0] < w[1]), "{tried:?}");
    for c in &curve[1..] {
        let reached = f(&c["iops"]) >= 0.95 * max;
        assert_eq!(c["passed"].as_bool().unwrap(), reached);
        assert_eq!(reached, c["queue_depth"].as_u64().unwrap() == depth, "{c}");
    }
    if depth < 16 {
        assert_eq!(tried.last(), Some(&depth));
    }
}

#[test]
fn bad_searches_are_refused() {
    for (args, expected) in [
        (vec!["--engine", "null"], "give a goal"),
        (vec!["--engine", "null", "--p99-max", "1ms", "--saturate"], "give one goal"),
        (vec!["--engine", "null", "--p99-max", "1ms", "--rate-iops", "100"], "--rate-iops: the search sets the rate"),
        (vec!["--engine", "null", "--p99-max", "1ms", "--queue-depth", "1,2"], "lists are for `iopulse sweep`"),
        (vec!["--engine", "null", "--p99-max", "1ms", "--steps", "50,10"], "increasing order"),
        (vec!["--engine", "null", "--p99-max", "1ms", "--precision", "0"], "--precision"),
    ] {
        let mut all = vec!["search"];
        all.extend(args.iter());
        let (code, _, stderr) = run(&all);
        assert_eq!(code, 2, "{all:?}");
        assert!(stderr.contains(expected), "{all:?}: {stderr}");
    }
    let (code, stdout, _) = run_command(iopulse().args(["search", "--help"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("--p99-max") && stdout.contains("Examples:"), "{stdout}");
}

#[test]
fn the_text_report_has_a_row_per_point_and_names_the_best() {
    let (code, stdout, stderr) =
        run(&["sweep", "--engine", "null", "--duration", "50ms", "--threads", "1,2", "--best-by", "p99", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("iopulse sweep · 2 points × 1 repetition · 2 of 2 runs done"), "{stdout}");
    assert!(lines[1].starts_with("threads  runs  IOPS (median)"), "{stdout}");
    assert!(lines[2].starts_with("1 ") && lines[3].starts_with("2 "), "{stdout}");
    assert!(lines[4].starts_with("best by p99: --threads "), "{stdout}");
    assert!(stderr.is_empty() || stderr.lines().all(|l| l.starts_with('⚠')), "--quiet: {stderr}");
    let (code, help, _) = run(&["sweep", "--help"]);
    assert_eq!(code, 0);
    assert!(help.contains("--repeat") && help.contains("--resume") && help.contains("Examples:"), "{help}");
}

#[test]
fn sweep_rows_carry_their_repetition_and_best_and_one_point_sweeps_are_warned_about() {
    let dir = temp_dir();
    let csv = dir.path().join("s.csv");
    let c = csv.to_str().unwrap();
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", "--engine", "null", "--duration", "50ms", "-q"];
        args.extend_from_slice(extra);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        stderr
    };
    let plots = dir.path().join("plots");
    let p = plots.to_str().unwrap();
    let stderr = sweep(&["--block-size", "512,4k,64k", "--repeat", "2", "--csv", c, "--plot", p]);
    // Charts in words and units: never a field name, sizes as typed.
    let p99 = std::fs::read_to_string(plots.join("sweep-p99-vs-block-size.svg")).unwrap();
    assert!(p99.contains("p99 latency") && p99.contains("block size"), "{p99}");
    assert!(!p99.contains("_ns") && !p99.contains("p99_ns"), "a field name on the chart");
    let texts: Vec<&str> = p99.lines().map(str::trim).collect();
    assert!(texts.contains(&"4k") && texts.contains(&"64k") && !texts.contains(&"4096"), "sizes as typed: {p99}");
    let iops = std::fs::read_to_string(plots.join("sweep-iops-vs-block-size.svg")).unwrap();
    assert!(iops.contains("IOPS vs block size"), "the title in words");
    assert!(
        stderr.contains("differ in block size (512 B, 4 KiB, 64 KiB)") && stderr.contains("--best-by bw"),
        "IOPS of two sizes ranked without a word: {stderr}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.last(), Some(&"repetition"));
    let reps: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    assert_eq!(reps, ["1", "1", "1", "2", "2", "2"], "interleaved: each point's first repetition, then its second");

    let stderr = sweep(&["--block-size", "512,4k", "--best-by", "bw"]);
    assert!(!stderr.contains("differ in block size"), "bandwidth compares sizes: {stderr}");
    let stderr = sweep(&["--queue-depth", "1,4"]);
    assert!(!stderr.contains("differ in block size") && !stderr.contains("one point"), "{stderr}");
    let stderr = sweep(&["--queue-depth", "4", "--repeat", "2"]);
    assert!(stderr.contains("the sweep has one point (2 run(s) of it)"), "{stderr}");
}
