//! Metadata results (`--files`) read back: `iopulse merge` of two runs adds each kind's
//! counts and histograms (checked against the two inputs' own histograms),
//! `iopulse compare` judges each kind (a run against itself, against a copy whose
//! latencies were tripled, five runs against five by the rank test, against a block
//! result), and damaged results, a job file's
//! several results in one stream and a block result beside a metadata one are refused
//! with exit 2, never a panic.

use crate::common::*;
use base64::Engine as _;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A mix run on a new tree under `dir` (named `name`), its JSON result in `name.json`.
fn mix_run(dir: &Path, name: &str, seed: &str) -> (PathBuf, Value) {
    let root = path_str(&dir.join(format!("tree-{name}")));
    let json = dir.join(format!("{name}.json"));
    run_ok(&[
        &root,
        "--files",
        "500",
        "--meta-mix",
        "stat=80,create=10,unlink=10",
        "--ops",
        "4000",
        "--threads",
        "2",
        "--seed",
        seed,
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let r = read_json(&json);
    (json, r)
}

/// Kind `kind` of the `mix` phase of a metadata result.
fn kind<'a>(r: &'a Value, kind: &str) -> &'a Value {
    let mix = &r["phases"][0];
    assert_eq!(mix["name"], "mix", "{r}");
    mix["per_op"].as_array().unwrap().iter().find(|o| o["op"] == kind).unwrap_or_else(|| panic!("{kind}: {mix}"))
}

fn histogram(o: &Value) -> hdrhistogram::Histogram<u64> {
    iopulse::testing::stats::decode_histogram(o["histogram"].as_str().unwrap()).unwrap()
}

fn encode(h: &hdrhistogram::Histogram<u64>) -> String {
    use hdrhistogram::serialization::Serializer as _;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new().serialize(h, &mut bytes).unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn merge_of_two_metadata_runs_adds_each_kinds_counts_and_histograms() {
    let dir = temp_dir();
    let (a_file, a) = mix_run(dir.path(), "a", "1");
    let (b_file, b) = mix_run(dir.path(), "b", "2");
    let (stdout, stderr) = run_ok(&["merge", &path_str(&a_file), &path_str(&b_file), "--output-format", "json"]);
    assert!(stderr.contains("merged from 2 metadata results"), "{stderr}");
    let m: Value = serde_json::from_str(&stdout).expect("merge --output-format json prints JSON only");
    assert_eq!(m["kind"], "iopulse-metadata");
    assert_eq!(m["merged_from"].as_array().unwrap().len(), 2, "{m}");
    assert_eq!(m["merged_from"][0]["ops"], 4000);
    for op in ["stat", "create", "unlink"] {
        let (ka, kb) = (kind(&a, op), kind(&b, op));
        let km = kind(&m, op);
        let count = |o: &Value, f: &str| o[f].as_u64().unwrap();
        for field in ["ops", "files", "bytes"] {
            assert_eq!(count(km, field), count(ka, field) + count(kb, field), "{op}.{field}");
        }
        let mut expected = histogram(ka);
        expected.add(histogram(kb)).unwrap();
        let merged = histogram(km);
        assert_eq!(merged, expected, "{op}: the merged histogram is the sum of both");
        assert_eq!(merged.len(), count(km, "ops"), "{op}: one sample per operation");
        let lat = |o: &Value, f: &str| o["latency_ns"][f].as_u64().unwrap();
        let (min, max) = (lat(ka, "min").min(lat(kb, "min")), lat(ka, "max").max(lat(kb, "max")));
        assert_eq!((lat(km, "min"), lat(km, "max")), (min, max), "{op}");
        assert_eq!(
            lat(km, "p99"),
            expected.value_at_quantile(0.99).clamp(min, max),
            "{op}: p99 of the merged histogram"
        );
        let rate = |o: &Value| o["ops_per_sec"].as_f64().unwrap();
        assert!((rate(km) - rate(ka) - rate(kb)).abs() < 1e-6 * rate(km), "{op}: concurrent runs' rates add");
        // The shares achieved are the merged counts'.
        let total = m["phases"][0]["ops"].as_u64().unwrap();
        let share = km["share_achieved_percent"].as_f64().unwrap();
        assert!((share - count(km, "ops") as f64 * 100.0 / total as f64).abs() < 1e-9, "{op}");
    }
    assert_eq!(m["phases"][0]["ops"], 8000);
    assert_eq!(m["tree"]["files"], 1000, "the two trees' files add");
    let windows = [&a, &b].map(|r| r["phases"][0]["window_ns"].as_u64().unwrap());
    assert_eq!(m["phases"][0]["window_ns"].as_u64().unwrap(), windows[0].max(windows[1]), "the longest window");
    let roots = m["target"].as_str().unwrap();
    assert!(roots.contains("tree-a") && roots.contains("tree-b"), "{roots}");

    // The text report names its sources, and the same file twice is refused.
    let (text, _) = run_ok(&["merge", &path_str(&a_file), &path_str(&b_file)]);
    assert!(text.contains("merged from 2 results") && text.contains("a.json") && text.contains("8,000 ops"), "{text}");
    let (code, stdout, stderr) = run(&["merge", &path_str(&a_file), &path_str(&a_file)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty() && stderr.contains("same result"), "{stderr}");

    // Different workloads: refused unless --force, each difference named.
    let c_root = path_str(&dir.path().join("tree-c"));
    let c_file = dir.path().join("c.json");
    run_ok(&[&c_root, "--files", "300", "--meta-mix", "stat=1", "--ops", "500", "--json", &path_str(&c_file), "-q"]);
    let (code, _, stderr) = run(&["merge", &path_str(&a_file), &path_str(&c_file)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("different specs") && stderr.contains("--force"), "{stderr}");
}

/// `base` with every latency of kind `op` multiplied by `factor` (histogram and summary).
pub(crate) fn slowed(base: &Value, op: &str, factor: u64) -> Value {
    let mut r = base.clone();
    crate::common::as_another_run(&mut r);
    let per_op = r["phases"][0]["per_op"].as_array_mut().unwrap();
    let o = per_op.iter_mut().find(|o| o["op"] == op).unwrap();
    let h = histogram(o);
    let mut slow = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    for v in h.iter_recorded() {
        slow.record_n(v.value_iterated_to() * factor, v.count_at_value()).unwrap();
    }
    o["histogram"] = Value::from(encode(&slow));
    let l = &mut o["latency_ns"];
    for (field, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999), ("p99_99", 0.9999)] {
        l[field] = Value::from(slow.value_at_quantile(q));
    }
    for field in ["min", "mean", "max", "stddev"] {
        l[field] = Value::from(l[field].as_u64().unwrap() * factor);
    }
    r
}

fn compare_schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/compare.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

#[test]
fn compare_judges_each_kind_and_refuses_a_block_result() {
    let dir = temp_dir();
    let (a_file, a) = mix_run(dir.path(), "a", "1");
    let a_s = path_str(&a_file);

    // Against itself: one result counted twice, refused (as merge refuses it).
    let (code, _, stderr) = run(&["compare", &a_s, &a_s, "--output-format", "json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("are the same result (one file, by device and inode)"), "{stderr}");
    // Against a run with the same figures: nothing regressed, exit 0; the JSON matches the
    // schema.
    let again = dir.path().join("again.json");
    let mut copy = a.clone();
    crate::common::as_another_run(&mut copy);
    std::fs::write(&again, serde_json::to_string(&copy).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["compare", &a_s, &path_str(&again), "--output-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let c: Value = serde_json::from_str(&stdout).unwrap();
    let errors: Vec<String> =
        compare_schema().iter_errors(&c).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "does not match docs/compare.schema.json:\n{}", errors.join("\n"));
    assert_eq!(c["regressed"], false);
    assert_eq!(c["counts"]["regressed"], 0);
    let figures = c["figures"].as_array().unwrap();
    for name in ["ops_per_sec", "stat.ops_per_sec", "stat.p50", "create.p99", "unlink.p99.9"] {
        let f = figures.iter().find(|f| f["figure"] == name).unwrap_or_else(|| panic!("{name}: {c}"));
        assert_eq!(f["scope"], "metadata mix");
    }
    let stat_p50 = figures.iter().find(|f| f["figure"] == "stat.p50").unwrap();
    // The same histograms: no change, or (when the run's latencies spread wide on a loaded
    // machine, and the percentile's interval with them) inconclusive; never a change.
    assert_eq!(stat_p50["method"].as_str(), Some("histogram"), "{stat_p50}");
    assert_eq!(stat_p50["change_percent"].as_f64(), Some(0.0), "{stat_p50}");
    assert!(matches!(stat_p50["verdict"].as_str(), Some("no_change" | "inconclusive")), "{stat_p50}");

    // Against a copy whose stat latencies are three times as long: stat regressed, exit 5.
    let slow_file = dir.path().join("slow.json");
    std::fs::write(&slow_file, serde_json::to_string_pretty(&slowed(&a, "stat", 3)).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["compare", &a_s, &path_str(&slow_file)]);
    assert_eq!(code, 5, "{stderr}\n{stdout}");
    let line = stdout.lines().find(|l| l.trim_start().starts_with("stat.p50")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("REGRESSED"), "{line}");
    // Operations are not I/Os: their rates are ops/s, never IOPS.
    assert!(stdout.contains(" ops/s") && !stdout.contains("IOPS"), "{stdout}");
    let (code, json, _) = run(&["compare", &a_s, &path_str(&slow_file), "--output-format", "json"]);
    assert_eq!(code, 5);
    let c: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(c["regressed"], true);
    let f = c["figures"].as_array().unwrap().iter().find(|f| f["figure"] == "stat.p50").unwrap();
    let change = f["change_percent"].as_f64().unwrap();
    // Three times as long, within the histogram's three significant digits.
    assert!((change - 200.0).abs() < 1.0, "{f}");
    assert_eq!(f["verdict"], "regressed");
    let rate = c["figures"].as_array().unwrap().iter().find(|f| f["figure"] == "stat.ops_per_sec").unwrap();
    assert_eq!(rate["unit"], "ops_per_sec", "{rate}");
    let create = stdout.lines().find(|l| l.trim_start().starts_with("create.p50")).unwrap();
    assert!(!create.contains("REGRESSED"), "{create}");
    let (code, md, _) = run(&["compare", &a_s, &path_str(&slow_file), "--output-format", "markdown"]);
    assert_eq!(code, 5);
    assert!(md.contains("| metadata mix | `stat.p50` |") && md.contains("**regressed**"), "{md}");

    // A block result on either side is refused, both files named.
    let block = dir.path().join("block.json");
    run_ok(&[
        &path_str(&dir.path().join("t.dat")),
        "--file-size",
        "1m",
        "--ops",
        "200",
        "--json",
        &path_str(&block),
        "-q",
    ]);
    for (base, new) in [(&a_file, &block), (&block, &a_file)] {
        let (code, stdout, stderr) = run(&["compare", &path_str(base), &path_str(new)]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.contains("a.json is a metadata run's result") && stderr.contains("block.json is a block run's"),
            "{stderr}"
        );
    }
    // And in merge, in either order.
    for (x, y) in [(&a_file, &block), (&block, &a_file)] {
        let (code, stdout, stderr) = run(&["merge", &path_str(x), &path_str(y)]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.contains("a.json is a metadata run's result") && stderr.contains("block.json is a block run's"),
            "{stderr}"
        );
    }
}

#[test]
fn damaged_metadata_results_are_refused_with_exit_2() {
    let dir = temp_dir();
    let (a_file, a) = mix_run(dir.path(), "a", "1");
    let text = std::fs::read_to_string(&a_file).unwrap();
    let stat_index = a["phases"][0]["per_op"].as_array().unwrap().iter().position(|o| o["op"] == "stat").unwrap();
    let at = format!("phases[0].per_op[{stat_index}]");
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = a.clone();
        f(&mut v["phases"][0]["per_op"][stat_index]);
        serde_json::to_string(&v).unwrap()
    };
    let cases: Vec<(&str, String, String)> = vec![
        ("truncated", text[..text.len() / 2].to_string(), "is not an iopulse JSON result".into()),
        ("kind", edit(&|o| o["op"] = Value::from("statx")), format!("{at}.op: unknown variant `statx`")),
        ("huge", edit(&|o| o["ops"] = Value::from(u64::MAX)), format!("{at}.ops is {}", u64::MAX)),
        ("wide", edit(&|o| o["ops"] = serde_json::from_str("1e30").unwrap()), format!("{at}.ops")),
        ("rate", edit(&|o| o["ops_per_sec"] = serde_json::from_str("1e300").unwrap()), format!("{at}.ops_per_sec")),
        ("blob", edit(&|o| o["histogram"] = Value::from("SGVsbG8=")), format!("{at}.histogram")),
    ];
    for (name, content, says) in &cases {
        let bad = dir.path().join(format!("{name}.json"));
        std::fs::write(&bad, content).unwrap();
        for args in
            [vec!["merge", &path_str(&a_file), &path_str(&bad)], vec!["compare", &path_str(&a_file), &path_str(&bad)]]
        {
            let args: Vec<&str> = args.iter().map(|s| s.as_ref()).collect();
            let (code, stdout, stderr) = run(&args);
            assert_eq!(code, 2, "{name} {args:?}: {stderr}");
            assert!(stdout.is_empty(), "{name}: {stdout}");
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
            assert!(stderr.contains(&format!("{name}.json")) && stderr.contains(says.as_str()), "{name}: {stderr}");
        }
    }
}

#[test]
fn counts_past_what_a_histogram_holds_and_formats_a_metadata_result_has_not_are_refused() {
    let dir = temp_dir();
    let (a_file, a) = mix_run(dir.path(), "a", "1");
    // Results whose stat kind holds 2^63 − 1 operations each (the histogram says so too,
    // so each passes on its own): two add up past what one histogram holds (its counts
    // serialize as i64), three past 64 bits; either is refused, naming the file that
    // crossed the line.
    let huge = i64::MAX as u64;
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    h.record_n(1_000, huge).unwrap();
    let mut big = a.clone();
    let phase = &mut big["phases"][0];
    let others: u64 = phase["per_op"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["op"] != "stat")
        .map(|o| o["ops"].as_u64().unwrap())
        .sum();
    phase["ops"] = Value::from(others + huge);
    let stat = phase["per_op"].as_array_mut().unwrap().iter_mut().find(|o| o["op"] == "stat").unwrap();
    stat["ops"] = Value::from(huge);
    stat["files"] = Value::from(huge);
    stat["histogram"] = Value::from(encode(&h));
    let mut files = Vec::new();
    for (name, started) in
        [("big1", "2020-01-01T00:00:00Z"), ("big2", "2020-01-01T00:00:01Z"), ("big3", "2020-01-01T00:00:02Z")]
    {
        big["started_at"] = Value::from(started);
        let f = dir.path().join(format!("{name}.json"));
        std::fs::write(&f, serde_json::to_string(&big).unwrap()).unwrap();
        files.push(path_str(&f));
    }
    let says = [
        "big2.json: its phases[0].per_op[stat].histogram (9223372036854775807) added to the other results' passes 2^63 - 1",
        "big3.json: its phases[0].per_op[stat].ops (9223372036854775807) added to the other results' overflows 64 bits",
    ];
    for (n, says) in [2, 3].into_iter().zip(says) {
        let mut args = vec!["merge"];
        args.extend(files[..n].iter().map(String::as_str));
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{stderr}");
        assert!(stdout.is_empty() && !stderr.contains("panicked"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }

    // Merged metadata results are text or JSON: another format is refused before printing.
    let b = dir.path().join("b.json");
    mix_run(dir.path(), "b", "2");
    let (code, stdout, stderr) = run(&["merge", &path_str(&a_file), &path_str(&b), "--output-format", "fio-json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty() && stderr.contains("--output-format") && stderr.contains("text or json"), "{stderr}");
}

#[test]
fn a_job_files_metadata_results_in_one_stream_are_refused_naming_the_file() {
    let dir = temp_dir();
    let job_file = dir.path().join("two.toml");
    let root = |n: &str| path_str(&dir.path().join(n));
    std::fs::write(
        &job_file,
        format!(
            "[one]\ntargets = [\"{}\"]\nfiles = \"100\"\nmeta-mix = \"stat=1\"\nops = 300\n\n[two]\ntargets = [\"{}\"]\nfiles = \"100\"\nmeta-mix = \"stat=1\"\nops = 300\n",
            root("j1"),
            root("j2")
        ),
    )
    .unwrap();
    let (stdout, _) = run_ok(&["run", &path_str(&job_file), "--output-format", "json", "--quiet"]);
    let both = dir.path().join("both.json");
    std::fs::write(&both, &stdout).unwrap();
    mix_run(dir.path(), "a", "1");
    let (code, out, stderr) = run(&["merge", &path_str(&both), &path_str(&dir.path().join("a.json"))]);
    assert_eq!(code, 2, "{stderr}");
    assert!(out.is_empty());
    assert!(
        stderr.contains("both.json: has more after its JSON result") && stderr.contains("one result per job"),
        "{stderr}"
    );
}

#[test]
fn repetitions_are_judged_by_the_rank_test() {
    let dir = temp_dir();
    let root = path_str(&dir.path().join("tree"));
    let mut base = Vec::new();
    let mut slow = Vec::new();
    let mut again = Vec::new();
    for i in 0..5 {
        let json = dir.path().join(format!("base{i}.json"));
        let seed = (i + 1).to_string();
        run_ok(&[
            &root,
            "--files",
            "300",
            "--meta-mix",
            "stat=9,create=1",
            "--ops",
            "2000",
            "--seed",
            &seed,
            "--json",
            &path_str(&json),
            "-q",
        ]);
        // The same run with stat a hundred times as slow, and so a hundredth of its rate:
        // far beyond the spread between runs on a busy machine (a run of 2,000 operations
        // lasts tens of milliseconds, and one stalled on a loaded CI machine was ten times
        // slower than the others), so every pair of runs says slower.
        let mut r = slowed(&read_json(&json), "stat", 100);
        let stat = r["phases"][0]["per_op"].as_array_mut().unwrap().iter_mut().find(|o| o["op"] == "stat").unwrap();
        stat["ops_per_sec"] = Value::from(stat["ops_per_sec"].as_f64().unwrap() / 100.0);
        let slow_json = dir.path().join(format!("slow{i}.json"));
        std::fs::write(&slow_json, serde_json::to_string(&r).unwrap()).unwrap();
        // The same run again with the same figures (compare counts one run once).
        let mut same = read_json(&json);
        crate::common::as_another_run(&mut same);
        let again_json = dir.path().join(format!("again{i}.json"));
        std::fs::write(&again_json, serde_json::to_string(&same).unwrap()).unwrap();
        base.push(path_str(&json));
        slow.push(path_str(&slow_json));
        again.push(path_str(&again_json));
    }
    let side = |flag: &'static str, files: &[String]| -> Vec<String> {
        std::iter::once(flag.to_string()).chain(files.iter().cloned()).collect()
    };
    let judge = |new: &[String]| -> (i32, Value) {
        let mut args: Vec<String> = vec!["compare".into()];
        args.extend(side("--base", &base));
        args.extend(side("--new", new));
        args.extend(["--output-format".into(), "json".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run(&args);
        (code, serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}")))
    };
    let figure = |c: &Value, name: &str| -> Value {
        c["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["figure"] == name)
            .unwrap_or_else(|| panic!("{name}: {c}"))
            .clone()
    };
    // The five runs against themselves (copies standing for five more runs with the same
    // figures): each figure by the rank test, nothing regressed.
    let (code, c) = judge(&again);
    assert_eq!(code, 0, "{c}");
    assert_eq!((c["base"]["runs"].as_u64(), c["new"]["runs"].as_u64()), (Some(5), Some(5)));
    let rate = figure(&c, "stat.ops_per_sec");
    // Identical sets: no shift and p = 1 (the interval is the runs' own spread, which may
    // be wider than the threshold: then inconclusive, never regressed).
    assert_eq!(rate["method"], "rank_test", "{rate}");
    assert_eq!((rate["change_percent"].as_f64(), rate["p_value"].as_f64()), (Some(0.0), Some(1.0)), "{rate}");
    assert_ne!(rate["verdict"], "regressed");
    // Against the slowed copies: stat's rate and latency regressed, create's did not move.
    let (code, c) = judge(&slow);
    assert_eq!(code, 5, "{c}");
    for name in ["stat.ops_per_sec", "stat.p50"] {
        let f = figure(&c, name);
        assert_eq!((f["method"].as_str(), f["verdict"].as_str()), (Some("rank_test"), Some("regressed")), "{f}");
    }
    let create = figure(&c, "create.p50");
    assert_eq!((create["change_percent"].as_f64(), create["p_value"].as_f64()), (Some(0.0), Some(1.0)), "{create}");
    assert_ne!(create["verdict"], "regressed");
}

/// `--json FILE` with a job file of several metadata jobs writes a result per job
/// (`FILE-JOB.json`, each its job's own run: its tree, its operations), where it used to
/// write every job's result over the last; the files are checked before anything runs.
#[test]
fn json_of_several_metadata_jobs_is_a_file_per_job() {
    let dir = temp_dir();
    let job_file = dir.path().join("two.toml");
    let root = |n: &str| path_str(&dir.path().join(n));
    std::fs::write(
        &job_file,
        format!(
            "[one]\ntargets = [\"{}\"]\nfiles = \"100\"\nmeta-mix = \"stat=1\"\nops = 300\n\n[two]\ntargets = [\"{}\"]\nfiles = \"50\"\nmeta-mix = \"stat=1\"\nops = 200\n",
            root("j1"),
            root("j2")
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    run_ok(&["run", &path_str(&job_file), "--json", &path_str(&json), "--quiet"]);
    assert!(!json.exists(), "no single file: each job has its own");
    for (job, tree, files, ops) in [("one", "j1", 100, 300), ("two", "j2", 50, 200)] {
        let r = read_json(path_str(&dir.path().join(format!("r-{job}.json"))));
        assert!(r["target"].as_str().unwrap().ends_with(tree), "{job}: {}", r["target"]);
        assert_eq!(r["tree"]["files"], files, "{job}");
        assert_eq!(r["phases"][0]["ops"], ops, "{job}");
    }
    // A job's file that is a link to the job file is refused before any tree is made.
    std::fs::remove_dir_all(dir.path().join("j1")).ok();
    let clash = dir.path().join("x-one.json");
    std::fs::write(&clash, "keep").unwrap();
    std::os::unix::fs::symlink(&job_file, dir.path().join("x-two.json")).unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&job_file), "--json", &path_str(&dir.path().join("x.json"))]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--json") && stderr.lines().count() == 1, "{stderr}");
    assert_eq!(std::fs::read_to_string(&clash).unwrap(), "keep");
    assert!(std::fs::read_to_string(&job_file).unwrap().contains("[two]"), "the job file is untouched");
    assert!(!dir.path().join("j1").exists(), "no tree was made");
}

/// `iopulse plot` of a metadata result draws the charts its run's own `--plot` drew, byte
/// for byte (they come from the result alone), and `iopulse report --html` takes it (its
/// section: tests/it/html_report.rs); before, both refused it and told the user to give
/// the file they had given.
#[test]
fn plot_draws_a_metadata_result_as_its_run_did() {
    let dir = temp_dir();
    let (own, json) = (dir.path().join("own"), dir.path().join("m.json"));
    run_ok(&[
        &path_str(&dir.path().join("tree")),
        "--files",
        "300",
        "--meta-mix",
        "stat=80,create=20",
        "--ops",
        "3000",
        "--interval",
        "10ms",
        "--plot",
        &path_str(&own),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let plots = dir.path().join("plots");
    let (stdout, _) = run_ok(&["plot", &path_str(&json), "--plot", &path_str(&plots), "--quiet"]);
    let drawn: Vec<&str> = stdout.lines().collect();
    assert_eq!(drawn.len(), 3, "latency, ops and p99: {stdout}");
    for name in ["latency.svg", "ops.svg", "p99.svg"] {
        let again = std::fs::read(plots.join(name)).unwrap();
        assert_eq!(again, std::fs::read(own.join(name)).unwrap(), "{name} as the run drew it");
        assert!(drawn.contains(&path_str(&plots.join(name)).as_str()), "{name} listed: {stdout}");
    }
}

/// The validator of docs/metadata.schema.json, whose spec is the one of
/// docs/result.schema.json (a relative reference, resolved beside it).
fn metadata_schema() -> jsonschema::Validator {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let read =
        |name: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(docs.join(name)).unwrap()).unwrap() };
    let registry = jsonschema::Registry::new()
        .add("json-schema:///result.schema.json", read("result.schema.json"))
        .unwrap()
        .prepare()
        .unwrap();
    jsonschema::options().with_registry(&registry).build(&read("metadata.schema.json")).unwrap()
}

fn violations(schema: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    schema.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect()
}

/// A mix with a time series, phases, and a merge of two runs all match the metadata schema;
/// each damage a reader must not take (a count below zero, an operation kind iopulse has
/// not, a block result's kind, a phase without figures, a rate that is not a number) is
/// refused by it.
#[test]
fn metadata_results_match_their_schema_and_damaged_ones_do_not() {
    let dir = temp_dir();
    let schema = metadata_schema();
    let (a_file, a) = mix_run(dir.path(), "a", "1");
    let (b_file, _) = mix_run(dir.path(), "b", "2");
    let series = dir.path().join("series.json");
    run_ok(&[
        &path_str(&dir.path().join("tree-series")),
        "--files",
        "300",
        "--meta-phases",
        "create,stat,unlink",
        "--interval",
        "50ms",
        "--json",
        &path_str(&series),
        "--quiet",
    ]);
    let series = read_json(&series);
    assert!(!series["time_series"].as_array().unwrap().is_empty(), "the phases run has rows");
    assert_eq!(series["phases"].as_array().unwrap().len(), 3);
    let flow = dir.path().join("flow.json");
    run_ok(&[
        &path_str(&dir.path().join("tree-flow")),
        "--files",
        "200",
        "--file-size-dist",
        "gamma:4k:1.5",
        "--prealloc",
        "80",
        "--meta-flow",
        "delete,create,append-rand,fsync,close,2*(open,read-whole,close),stat",
        "--duration",
        "300ms",
        "--interval",
        "50ms",
        "--json",
        &path_str(&flow),
        "--quiet",
    ]);
    let flow = read_json(&flow);
    assert_eq!(flow["phases"][0]["steps"].as_array().unwrap().len(), 12, "{flow}");
    assert!(!flow["time_series"].as_array().unwrap().is_empty(), "the flow has rows");
    let (stdout, _) = run_ok(&["merge", &path_str(&a_file), &path_str(&b_file), "--output-format", "json", "--quiet"]);
    let merged: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(merged["merged_from"].as_array().unwrap().len(), 2);
    for (what, doc) in
        [("mix", &a), ("phases with a time series", &series), ("flow with a time series", &flow), ("merge", &merged)]
    {
        let errors = violations(&schema, doc);
        assert!(
            errors.is_empty(),
            "the {what} result does not match docs/metadata.schema.json:\n{}",
            errors.join("\n")
        );
    }
    type Damage = fn(&mut Value);
    let damages: [(&str, Damage, &str); 6] = [
        ("a negative count", |r| r["phases"][0]["per_op"][0]["ops"] = Value::from(-1), "/phases/0/per_op/0/ops"),
        ("an unknown kind", |r| r["phases"][0]["per_op"][0]["op"] = Value::from("chmod"), "/phases/0/per_op/0/op"),
        ("a block result's kind", |r| r["kind"] = Value::from("iopulse"), "/kind"),
        ("a phase without figures", |r| r["phases"][0]["per_op"] = Value::Array(vec![]), "/phases/0/per_op"),
        ("a rate that is text", |r| r["phases"][0]["ops_per_sec"] = Value::from("fast"), "/phases/0/ops_per_sec"),
        (
            "a spec without its block size",
            |r| r["spec"].as_object_mut().unwrap().remove("block_size_bytes").map(drop).unwrap(),
            "/spec",
        ),
    ];
    for (what, damage, at) in damages {
        let mut bad = a.clone();
        damage(&mut bad);
        let errors = violations(&schema, &bad);
        assert!(errors.iter().any(|e| e.ends_with(&format!(" at {at}"))), "{what} at {at} was not refused: {errors:?}");
    }
}
