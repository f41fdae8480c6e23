//! What becomes of a job file's result (`iopulse run FILE`): the `--csv` row of each job
//! says its job and phase, `--timeseries` writes a file per job, `iopulse merge` merges
//! job-file results job by job (and refuses a mix with a single run's, or other jobs),
//! `iopulse plot` and `--plot` draw each job's charts, and the documents match the schema.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// Two jobs in phase 1, one in phase 2, each ending after a fixed number of I/Os, with a
/// time series (`interval`).
fn write_job_file(dir: &Path, name: &str, second_job: &str) -> String {
    let path = dir.join(name);
    let d = path_str(dir);
    let text = format!(
        "[global]\nfile-size = \"4M\"\ninterval = \"50ms\"\n\n\
         [reader]\ntargets = [\"{d}/r.dat\"]\nrandom = true\nops = 1500\n\n\
         [{second_job}]\ntargets = [\"{d}/w.dat\"]\nblock-size = \"64k\"\nwrite-percent = 100\nops = 200\n\n\
         [again]\nstonewall = true\ntargets = [\"{d}/r.dat\"]\nblock-size = \"16k\"\nops = 300\n"
    );
    std::fs::write(&path, text).unwrap();
    path_str(&path)
}

fn job<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["jobs"].as_array().unwrap().iter().find(|j| j["job"] == name).unwrap_or_else(|| panic!("no job {name}"))
}

fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

fn csv_table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().iter().map(str::to_string).collect();
    let rows = reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
    (header, rows)
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

#[test]
fn each_csv_row_says_its_job_and_phase_and_a_single_run_leaves_them_empty() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "writer");
    let csv = dir.path().join("rows.csv");
    run_ok(&["run", &file, "--csv", &path_str(&csv), "--quiet"]);
    // A single run appends its row to the same table.
    run_ok(&[
        &path_str(&dir.path().join("single.dat")),
        "--file-size",
        "1M",
        "--ops",
        "50",
        "--csv",
        &path_str(&csv),
        "--quiet",
    ]);
    let (header, rows) = csv_table(&csv);
    assert_eq!(
        header[header.len() - 3..],
        ["job", "phase", "repetition"],
        "job, phase and repetition are the last columns"
    );
    let (job, phase, ops) = (column(&header, "job"), column(&header, "phase"), column(&header, "ops"));
    let seen: Vec<(&str, &str, &str)> =
        rows.iter().map(|r| (r[job].as_str(), r[phase].as_str(), r[ops].as_str())).collect();
    assert_eq!(seen, [("reader", "1", "1500"), ("writer", "1", "200"), ("again", "2", "300"), ("", "", "50")]);
}

#[test]
fn timeseries_writes_a_file_per_job_whose_rows_add_up_to_the_job() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "writer");
    let json = dir.path().join("r.json");
    run_ok(&[
        "run",
        &file,
        "--timeseries",
        &path_str(&dir.path().join("ts.csv")),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let doc = read_json(&json);
    for name in ["reader", "writer", "again"] {
        let (header, rows) = csv_table(&dir.path().join(format!("ts-{name}.csv")));
        assert!(!rows.is_empty(), "ts-{name}.csv has no rows");
        for op in ["read", "write"] {
            let i = column(&header, &format!("{op}_ops"));
            let sum: u64 = rows.iter().map(|r| r[i].parse::<u64>().unwrap()).sum();
            assert_eq!(sum, u64_at(job(&doc, name), &[op, "ops"]), "ts-{name}.csv: {op} rows do not add up");
        }
    }
    assert!(!dir.path().join("ts.csv").exists(), "no combined time series file");
    // In [global], as any output key.
    let in_global = dir.path().join("g.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let series = path_str(&dir.path().join("g"));
    std::fs::write(&in_global, text.replacen("[global]\n", &format!("[global]\ntimeseries = \"{series}\"\n"), 1))
        .unwrap();
    run_ok(&["run", &path_str(&in_global), "--quiet"]);
    for name in ["g-reader", "g-writer", "g-again"] {
        let (header, rows) = csv_table(&dir.path().join(name));
        assert_eq!(header[0], "t_s", "{name}");
        assert!(!rows.is_empty(), "{name} has no rows");
    }
}

#[test]
fn timeseries_to_a_stream_or_in_a_job_table_is_refused_before_anything_is_touched() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "writer");
    let before = listing(dir.path());
    let (code, stdout, stderr) = run(&["run", &file, "--timeseries", "/dev/stdout"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--timeseries /dev/stdout") && stderr.contains("each job writes its own file"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(listing(dir.path()), before, "files were created");
}

#[test]
fn merge_of_job_file_results_is_the_job_by_job_merge_with_the_combined_figures_recomputed() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "writer");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    run_ok(&["run", &file, "--json", &path_str(&a), "--quiet"]);
    run_ok(&["run", &file, "--json", &path_str(&b), "--quiet"]);
    let (da, db) = (read_json(&a), read_json(&b));
    let merged = run_json(&["merge", &path_str(&a), &path_str(&b)]);
    let validator = schema_validator();
    assert_valid(&validator, &merged, "merged job-file result");
    let names: Vec<&str> = merged["jobs"].as_array().unwrap().iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["reader", "writer", "again"]);
    for name in names {
        let m = job(&merged, name);
        assert_eq!(m["phase"], job(&da, name)["phase"]);
        for op in ["read", "write", "total"] {
            for field in ["ops", "bytes"] {
                let sum = u64_at(job(&da, name), &[op, field]) + u64_at(job(&db, name), &[op, field]);
                assert_eq!(u64_at(m, &[op, field]), sum, "job [{name}] {op} {field}");
            }
        }
        assert_eq!(m["merged_from"].as_array().map(Vec::len), Some(2), "job [{name}]");
    }
    // Each phase's and all phases' figures are recomputed from the merged jobs.
    let phases = merged["phases"].as_array().unwrap();
    assert_eq!(
        u64_at(&phases[0], &["total", "ops"]),
        u64_at(job(&merged, "reader"), &["total", "ops"]) + u64_at(job(&merged, "writer"), &["total", "ops"])
    );
    assert_eq!(u64_at(&phases[1], &["total", "ops"]), 600);
    for field in ["ops", "bytes"] {
        assert_eq!(
            u64_at(&merged, &["total", field]),
            u64_at(&da, &["total", field]) + u64_at(&db, &["total", field]),
            "combined {field}"
        );
    }
    assert_eq!(u64_at(&merged, &["total", "ops"]), 2 * (1500 + 200 + 300));
    assert_eq!(
        u64_at(&merged, &["window_ns"]),
        u64_at(&phases[0], &["window_ns"]) + u64_at(&phases[1], &["window_ns"])
    );
    assert_eq!(merged["merged_from"].as_array().map(Vec::len), Some(2), "the combined figures name both files");
    // The text report has each job's section and the table.
    let (text, _) = run_ok(&["merge", &path_str(&a), &path_str(&b), "--quiet"]);
    assert!(text.contains("══ job [again] · phase 2 ══") && text.contains("all phases"), "{text}");
}

#[test]
fn merge_refuses_a_job_file_result_with_a_single_runs_or_other_jobs_naming_the_file() {
    let dir = temp_dir();
    let (jobs_a, jobs_other, single) =
        (dir.path().join("a.json"), dir.path().join("o.json"), dir.path().join("s.json"));
    let file = write_job_file(dir.path(), "j.toml", "writer");
    run_ok(&["run", &file, "--json", &path_str(&jobs_a), "--quiet"]);
    let other = write_job_file(dir.path(), "o.toml", "logger");
    run_ok(&["run", &other, "--json", &path_str(&jobs_other), "--quiet"]);
    run_ok(&[
        &path_str(&dir.path().join("s.dat")),
        "--file-size",
        "1M",
        "--ops",
        "50",
        "--json",
        &path_str(&single),
        "--quiet",
    ]);
    for (inputs, says) in [
        ([&jobs_a, &single], vec![path_str(&jobs_a), path_str(&single), "is a single run's".to_string()]),
        ([&single, &jobs_a], vec![path_str(&jobs_a), path_str(&single), "is a single run's".to_string()]),
        ([&jobs_a, &jobs_other], vec![format!("{} has the jobs", path_str(&jobs_other)), "[logger]".to_string()]),
    ] {
        let (code, stdout, stderr) = run(&["merge", &path_str(inputs[0]), &path_str(inputs[1])]);
        assert_eq!(code, 2, "{inputs:?}: {stderr}");
        for s in &says {
            assert!(stderr.contains(s.as_str()), "{inputs:?}: stderr does not say `{s}`: {stderr}");
        }
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
    }
}

#[test]
fn plot_draws_the_combined_charts_and_each_jobs_with_its_time_series() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "\"a/b job\"");
    let json = dir.path().join("r.json");
    let during_run = dir.path().join("run-plots");
    run_ok(&["run", &file, "--json", &path_str(&json), "--plot", &path_str(&during_run), "--quiet"]);
    let out = dir.path().join("plots");
    let (listed, _) = run_ok(&["plot", &path_str(&json), "--out", &path_str(&out), "--quiet"]);
    let mut expected: BTreeSet<String> = BTreeSet::from(["latency-percentiles.svg".to_string()]);
    for job in ["reader", "a_b_job", "again"] {
        for chart in ["latency-percentiles.svg", "iops-over-time.svg", "p99-over-time.svg"] {
            expected.insert(format!("job-{job}-{chart}"));
        }
    }
    assert_eq!(listing(&out), expected);
    assert_eq!(listing(&during_run), expected, "--plot during the run draws the same charts");
    assert_eq!(listed.lines().count(), expected.len(), "{listed}");
    for name in &expected {
        let svg = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{name}: {}", &svg[..svg.len().min(60)]);
    }
    // The combined chart names its jobs (not "3 merged results").
    let combined = std::fs::read_to_string(out.join("latency-percentiles.svg")).unwrap();
    assert!(combined.contains("2 phases combined") && !combined.contains("merged results"), "{combined}");
    // Each job's latency chart is its own: the 64 KiB writer's title says 64 KiB.
    let own = std::fs::read_to_string(out.join("job-a_b_job-latency-percentiles.svg")).unwrap();
    assert!(own.contains("64 KiB"), "the job's chart is not drawn from its own result");
}

#[test]
fn a_jobs_chart_that_links_to_a_target_is_refused_before_the_run() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "writer");
    let target = zero_file(dir.path(), "r.dat", 4 << 20);
    let plots = dir.path().join("plots");
    std::fs::create_dir(&plots).unwrap();
    std::os::unix::fs::symlink(&target, plots.join("job-reader-latency-percentiles.svg")).unwrap();
    let before = listing(dir.path());
    let (code, stdout, stderr) = run(&["run", &file, "--plot", &path_str(&plots)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--plot") && stderr.contains("job-reader-latency-percentiles.svg"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(listing(dir.path()), before, "files were created");
    assert!(std::fs::read(&target).unwrap().iter().all(|&b| b == 0), "the target was written");
}

#[test]
fn the_schema_checks_the_jobs_of_a_job_file_result() {
    let dir = temp_dir();
    let file = write_job_file(dir.path(), "j.toml", "writer");
    let doc = run_json(&["run", &file, "--output-format", "json", "--quiet"]);
    let validator = schema_validator();
    assert_valid(&validator, &doc, "job-file result");
    // A job without its name, or a phase 0, is not a valid job-file result.
    let mut nameless = doc.clone();
    nameless["jobs"][1].as_object_mut().unwrap().remove("job");
    assert!(!validator.is_valid(&nameless), "a job without `job` passed the schema");
    let mut phase_zero = doc.clone();
    phase_zero["jobs"][0]["phase"] = Value::from(0);
    assert!(!validator.is_valid(&phase_zero), "phase 0 passed the schema");
    let mut bad_job = doc;
    bad_job["jobs"][2]["total"]["ops"] = Value::from("many");
    assert!(!validator.is_valid(&bad_job), "a job that is not a full result passed the schema");
}
