//! `iopulse run FILE.toml`: jobs of one phase share one window and each does what its own
//! table says, the combined figures are the exact merge of the jobs', phases follow each
//! other, the flags after the file apply to every job, and a bad job file (the corpus in
//! tests/bad_job_files/) is refused naming file, line and key, exit 2, nothing created.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn write_job_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text.replace("{dir}", &path_str(dir))).unwrap();
    path_str(&path)
}

fn job<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["jobs"].as_array().unwrap().iter().find(|j| j["job"] == name).unwrap_or_else(|| panic!("no job {name}"))
}

fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn two_concurrent_jobs_do_their_own_work_in_one_window_and_combine_exactly() {
    let dir = temp_dir();
    let uring = engine_available("io_uring");
    let writer_engine = if uring { "io_uring" } else { "sync" };
    if !uring {
        eprintln!("SKIP: io_uring unavailable: the writer job runs on sync");
    }
    let file = write_job_file(
        dir.path(),
        "two.toml",
        &format!(
            "[global]\nfile-size = \"8M\"\nduration = \"20s\"\n\n\
             [reader]\ntargets = [\"{{dir}}/r.dat\"]\nblock-size = \"4k\"\nrandom = true\nops = 2000\n\n\
             [writer]\ntargets = [\"{{dir}}/w.dat\"]\nblock-size = \"64k\"\nwrite-percent = 100\nengine = \"{writer_engine}\"\nqueue-depth = 4\nops = 300\n"
        ),
    );
    let json = dir.path().join("out.json");
    let (out, _) = run_ok(&["run", &file, "--json", &path_str(&json), "--quiet"]);
    assert!(
        out.contains("══ job [reader] ══") && out.contains("══ job [writer] ══") && out.contains("combined"),
        "{out}"
    );
    let doc = read_json(&json);
    assert_valid(&schema_validator(), &doc, "job file result");
    let (r, w) = (job(&doc, "reader"), job(&doc, "writer"));
    // Each job did exactly what its own table asked, with its own engine.
    assert_eq!((u64_at(r, &["read", "ops"]), u64_at(r, &["write", "ops"])), (2000, 0));
    assert_eq!(u64_at(r, &["read", "bytes"]), 2000 * 4096);
    assert_eq!((u64_at(w, &["write", "ops"]), u64_at(w, &["read", "ops"])), (300, 0));
    assert_eq!(u64_at(w, &["write", "bytes"]), 300 * 65536);
    assert_eq!(w["engine"]["name"], writer_engine);
    assert_eq!(r["engine"]["name"], "sync");
    assert_eq!((r["phase"].as_u64(), w["phase"].as_u64()), (Some(1), Some(1)));
    // The written file holds the writer's 64 KiB blocks.
    assert_eq!(std::fs::metadata(dir.path().join("w.dat")).unwrap().len(), 8 << 20);
    // The combined figures are the exact merge: sums of counts and bytes.
    for op in ["read", "write", "total"] {
        assert_eq!(u64_at(&doc, &[op, "ops"]), u64_at(r, &[op, "ops"]) + u64_at(w, &[op, "ops"]), "{op} ops");
        assert_eq!(u64_at(&doc, &[op, "bytes"]), u64_at(r, &[op, "bytes"]) + u64_at(w, &[op, "bytes"]), "{op} bytes");
        let iops = doc[op]["iops"].as_f64().unwrap();
        let sum = r[op]["iops"].as_f64().unwrap() + w[op]["iops"].as_f64().unwrap();
        assert!((iops - sum).abs() <= 1e-6 * sum.max(1.0), "{op} iops {iops} vs {sum}");
    }
    assert!(doc.get("phases").is_none(), "one phase: no phases array");
    // One window: both were released by the same start line.
    let (rs, ws) = (u64_at(r, &["window_start_unix_ns"]), u64_at(w, &["window_start_unix_ns"]));
    assert!(rs > 0 && ws > 0);
    assert!(rs.abs_diff(ws) < 50_000_000, "windows opened {} ns apart", rs.abs_diff(ws));
    assert_eq!(u64_at(&doc, &["window_start_unix_ns"]), rs.min(ws));
}

#[test]
fn a_stonewall_phase_starts_after_the_previous_one_ends() {
    let dir = temp_dir();
    let file = write_job_file(
        dir.path(),
        "phases.toml",
        "[fill]\ntargets = [\"{dir}/d.dat\"]\nfile-size = \"4M\"\nblock-size = \"64k\"\nwrite-percent = 100\nduration = \"300ms\"\n\n\
         [measure]\nstonewall = true\ntargets = [\"{dir}/d.dat\"]\nrandom = true\nops = 500\n",
    );
    let doc = run_json(&["run", &file, "--output-format", "json", "--quiet"]);
    assert_valid(&schema_validator(), &doc, "two phases");
    let (fill, measure) = (job(&doc, "fill"), job(&doc, "measure"));
    assert_eq!((fill["phase"].as_u64(), measure["phase"].as_u64()), (Some(1), Some(2)));
    let fill_end = u64_at(fill, &["window_start_unix_ns"]) + u64_at(fill, &["window_ns"]);
    assert!(u64_at(measure, &["window_start_unix_ns"]) >= fill_end, "the second phase opened before the first ended");
    assert_eq!(u64_at(measure, &["read", "ops"]), 500);
    let phases = doc["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[1]["job_names"][0], "measure");
    // All phases: counts add up, the window is the sum of the phases' windows.
    assert_eq!(u64_at(&doc, &["total", "ops"]), u64_at(fill, &["total", "ops"]) + 500);
    assert_eq!(u64_at(&doc, &["window_ns"]), u64_at(&phases[0], &["window_ns"]) + u64_at(&phases[1], &["window_ns"]));
}

#[test]
fn flags_after_the_file_override_every_job() {
    let dir = temp_dir();
    let file = write_job_file(
        dir.path(),
        "o.toml",
        "[global]\nfile-size = \"4M\"\nops = 100000000\n\n[a]\ntargets = [\"{dir}/a.dat\"]\nblock-size = \"8k\"\n\n[b]\ntargets = [\"{dir}/b.dat\"]\nblock-size = \"16k\"\n",
    );
    let csv = dir.path().join("rows.csv");
    let doc = run_json(&["run", &file, "--ops", "123", "--output-format", "json", "--quiet", "--csv", &path_str(&csv)]);
    for (name, bs) in [("a", 8192), ("b", 16384)] {
        let j = job(&doc, name);
        assert_eq!(u64_at(j, &["total", "ops"]), 123, "job {name}");
        assert_eq!(u64_at(j, &["spec", "block_size_bytes"]), bs, "job {name} keeps its own block size");
    }
    // --csv: the header and a row per job.
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
}

#[test]
fn each_bad_job_file_exits_2_naming_file_line_and_key_and_touches_nothing() {
    let mut checked = 0;
    let mut cases: Vec<_> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_job_files"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    for case in cases {
        let text = std::fs::read_to_string(&case).unwrap();
        let expected = text.lines().next().and_then(|l| l.strip_prefix("# expect: ")).expect("first line: # expect: ");
        let dir = temp_dir();
        // A fio job file (`.fio`) is translated first: its refusals are in the same corpus.
        let extension = case.extension().and_then(|e| e.to_str()).unwrap_or("toml");
        let file = write_job_file(dir.path(), &format!("job.{extension}"), &text);
        let before = listing(dir.path());
        let (code, stdout, stderr) = run(&["run", &file]);
        let name = case.display();
        assert_eq!(code, 2, "{name}: exit {code}, stderr: {stderr}");
        assert!(stderr.contains(file.as_str()), "{name}: stderr does not name the file: {stderr}");
        assert!(stderr.contains(expected), "{name}: stderr does not say '{expected}': {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: more than one line: {stderr}");
        assert!(stdout.is_empty(), "{name}: stdout: {stdout}");
        assert_eq!(listing(dir.path()), before, "{name}: files were created");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} cases");
}

#[test]
fn a_job_refused_at_its_targets_stops_the_other_jobs_before_anything_is_touched() {
    let dir = temp_dir();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    // [bad] names a directory: refused when targets are planned, which every job of the
    // phase passes together: [good] must not lay out its file.
    let file = write_job_file(
        dir.path(),
        "t.toml",
        "[good]\ntargets = [\"{dir}/good.dat\"]\nfile-size = \"4M\"\nops = 10\n[bad]\ntargets = [\"{dir}/sub\"]\nops = 10\n",
    );
    let before = listing(dir.path());
    let (code, stdout, stderr) = run(&["run", &file]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("job [bad]"), "{stderr}");
    assert!(!stderr.contains("job [good]:"), "the job stopped by another says nothing of its own: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(listing(dir.path()), before, "a file was created");
}

/// Two phases that write one block device with io_uring: the second opens the device
/// exclusively as the first did, so the first must have let it go. Before io_uring
/// unregistered its files itself, the kernel closed them some 30 ms after the ring, and
/// the second phase was refused ("job [measure]: TARGET ... is in use").
#[test]
fn io_uring_phases_on_one_block_device_each_get_the_device() {
    if !engine_available("io_uring") {
        return;
    }
    let what = "io_uring phases on a loop device";
    let Some(dev) = crate::common::root::loop_device(16 << 20, crate::common::root::LoopOptions::default(), what)
    else {
        return;
    };
    let dir = temp_dir();
    let file = write_job_file(
        dir.path(),
        "device-phases.toml",
        &format!(
            "[global]\nforce = true\ndirect = true\nengine = \"io_uring\"\nwrite-percent = 100\n\n\
             [fill]\ntargets = [\"{dev}\"]\nblock-size = \"128k\"\nqueue-depth = 8\nops = 128\n\n\
             [measure]\nstonewall = true\ntargets = [\"{dev}\"]\nblock-size = \"4k\"\nrandom = true\nqueue-depth = 16\nops = 500\n",
            dev = dev.path
        ),
    );
    let (code, stdout, stderr) = run(&["run", &file, "--output-format", "json", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
    assert_eq!(u64_at(job(&doc, "fill"), &["write", "ops"]), 128);
    assert_eq!(u64_at(job(&doc, "measure"), &["write", "ops"]), 500);
}
