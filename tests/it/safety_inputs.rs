//! What iopulse reads is bounded before it is decoded, and what it writes goes only where
//! the output guard judged it may: result files given to `merge` and `plot` (histogram
//! blobs, deflate bombs, huge time series, figures no run has, counts that overflow), a
//! sweep's journal read by `--resume` (tampered lines, two sweeps sharing it), appends to a
//! CSV, every output path of a run, a sweep, a search or a job file (links, streams, /dev,
//! the job file, stdout), a fio `include`, and `TMPDIR`. Each refusal exits 2 and leaves the
//! disk as it was (checksums), and each run is bounded in time.

use crate::common::*;
use base64::Engine as _;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with stdout and stderr read as they come, killing it if it has not ended
/// after `limit` (a hang fails the test): (exit code, stdout, stderr).
fn bounded(cmd: &mut Command, limit: Duration) -> (i32, String, String) {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = |v: Vec<u8>| String::from_utf8_lossy(&v).into_owned();
    (status.code().unwrap_or(-1), text(out_reader.join().unwrap()), text(err_reader.join().unwrap()))
}

const LIMIT: Duration = Duration::from_secs(60);

fn run_limited(args: &[&str]) -> (i32, String, String) {
    bounded(iopulse().args(args), LIMIT)
}

/// Every entry under `dir` (not following links) with a checksum of its bytes, or its
/// link text, or its kind: what "the disk unchanged" is compared by.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if meta.is_dir() {
                stack.push(p.clone());
                "dir".to_string()
            } else if meta.is_file() {
                format!("crc {:08x} len {}", crc32c::crc32c(&std::fs::read(&p).unwrap()), meta.len())
            } else {
                "special".to_string()
            };
            out.insert(p.strip_prefix(dir).unwrap().display().to_string(), what);
        }
    }
    out
}

fn checksum(path: &Path) -> u32 {
    crc32c::crc32c(&std::fs::read(path).unwrap())
}

/// A real result (null engine, `extra` flags) written as JSON to `dir/name`.
fn result_file(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let json = dir.join(name);
    let j = path_str(&json);
    let mut args = vec!["--engine", "null", "--block-size", "4k", "--duration", "100ms", "--quiet", "--json", &j];
    args.extend_from_slice(extra);
    let (code, _, stderr) = run_limited(&args);
    assert_eq!(code, 0, "{stderr}");
    json
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// A histogram blob as a result holds it: the plain HdrHistogram V2 `plain` (header and
/// counts) behind the compressed cookie, deflated, base64.
fn blob(plain: &[u8]) -> String {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut z, plain).unwrap();
    let compressed = z.finish().unwrap();
    let mut bytes = 0x1c84_9314u32.to_be_bytes().to_vec();
    bytes.extend((compressed.len() as u32).to_be_bytes());
    bytes.extend(compressed);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The plain V2 bytes of a result's blob.
fn plain_of(text: &str) -> Vec<u8> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
    let mut plain = Vec::new();
    flate2::read::ZlibDecoder::new(&bytes[8..]).read_to_end(&mut plain).unwrap();
    plain
}

/// `iopulse merge` and `iopulse plot` of `bad` (beside a good result): exit 2, one line on
/// stderr naming the file and containing `words`, nothing written.
fn assert_merge_and_plot_refuse(dir: &Path, bad: &Path, good: &Path, words: &[&str], shell_prefix: Option<&str>) {
    let out = dir.join("plots");
    let before = tree(dir);
    let merge = ["merge", &path_str(bad), &path_str(good), "--force", "--allow-duplicates"];
    let plot = ["plot", &path_str(bad), "--out", &path_str(&out)];
    for args in [&merge[..], &plot[..]] {
        let mut cmd = match shell_prefix {
            // A limit on the address space, set by the shell before it becomes iopulse.
            Some(prefix) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(format!("{prefix}; exec \"$0\" \"$@\"")).arg(env!("CARGO_BIN_EXE_iopulse")).args(args);
                c
            }
            None => {
                let mut c = iopulse();
                c.args(args);
                c
            }
        };
        let (code, stdout, stderr) = bounded(&mut cmd, LIMIT);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(&path_str(bad)), "{args:?}: {stderr}");
        for w in words {
            assert!(stderr.contains(w), "{args:?}: no `{w}` in {stderr}");
        }
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(tree(dir), before, "{args:?}: nothing written");
    }
}

/// A result of 10 KB whose histogram header says its counts take 2 GiB: merge and plot
/// used to allocate that (and abort, exit 134, where memory is short: here the address
/// space is limited to 96 MiB, which merge and plot of a whole result fit in many times).
#[test]
fn a_histogram_whose_header_claims_2_gib_is_refused_before_any_allocation() {
    let dir = temp_dir();
    let good = result_file(dir.path(), "good.json", &[]);
    let bad = result_file(dir.path(), "bad.json", &[]);
    edit_json(&bad, |v| {
        let mut plain = plain_of(v["histograms"]["read"].as_str().unwrap());
        plain[4..8].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        v["histograms"]["read"] = Value::String(blob(&plain));
    });
    assert!(std::fs::metadata(&bad).unwrap().len() < 64 << 10);
    let words = ["histograms.read", "2147483647 bytes", "33792 counters"];
    assert_merge_and_plot_refuse(dir.path(), &bad, &good, &words, Some("ulimit -v 98304"));
}

/// A blob whose stream inflates to 128 MiB (a deflate bomb of a few hundred KB): refused
/// from its header, never inflated. The address space is limited to 96 MiB, which merge and
/// plot of a whole result fit in many times over: inflating the bomb would not.
#[test]
fn a_deflate_bomb_is_refused_before_it_is_inflated() {
    let dir = temp_dir();
    let good = result_file(dir.path(), "good.json", &[]);
    let bad = result_file(dir.path(), "bomb.json", &[]);
    edit_json(&bad, |v| {
        let mut plain = plain_of(v["histograms"]["read"].as_str().unwrap());
        let bomb = 128u32 << 20;
        plain[4..8].copy_from_slice(&bomb.to_be_bytes());
        plain.truncate(40);
        plain.resize(40 + bomb as usize, 0);
        v["histograms"]["read"] = Value::String(blob(&plain));
    });
    assert!(std::fs::metadata(&bad).unwrap().len() < 1 << 20, "a bomb of a few hundred KB");
    assert_merge_and_plot_refuse(dir.path(), &bad, &good, &["more than 33792 counters can"], Some("ulimit -v 98304"));
    // The good one merges under the same limit.
    let (code, _, stderr) = bounded(
        Command::new("sh")
            .args(["-c", "ulimit -v 98304; exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_iopulse"))
            .args(["merge", &path_str(&good), "--quiet"]),
        LIMIT,
    );
    assert_eq!(code, 0, "{stderr}");
}

/// A result of 40 MB, nearly all of it a time series: plot holds what it draws (the rows,
/// typed), not the text parsed as a tree (about 18 times the text); merge holds no row.
/// Both fit in 256 MiB of address space; reading the text whole into a tree did not.
#[test]
fn plot_and_merge_of_a_large_result_hold_memory_for_what_they_use() {
    let dir = temp_dir();
    let small = result_file(dir.path(), "small.json", &["--interval", "10ms"]);
    let big = dir.path().join("big.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&small).unwrap()).unwrap();
    let rows = v["time_series"].as_array().unwrap().clone();
    assert!(!rows.is_empty());
    let mut many = Vec::new();
    for i in 0..40_000u64 {
        let mut row = rows[i as usize % rows.len()].clone();
        row["t_ns"] = Value::from((i + 1) * 10_000_000);
        many.push(row);
    }
    v["time_series"] = Value::Array(many);
    std::fs::write(&big, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let len = std::fs::metadata(&big).unwrap().len();
    assert!(len > 30 << 20, "{len} bytes");
    let out = dir.path().join("plots");
    let limited = |args: &[&str]| {
        bounded(
            Command::new("sh")
                .args(["-c", "ulimit -v 262144; exec \"$0\" \"$@\""])
                .arg(env!("CARGO_BIN_EXE_iopulse"))
                .args(args),
            Duration::from_secs(300),
        )
    };
    let (code, stdout, stderr) = limited(&["plot", &path_str(&big), "--out", &path_str(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("iops-over-time.svg"), "{stdout}");
    let svg = std::fs::read_to_string(out.join("iops-over-time.svg")).unwrap();
    assert!(svg.contains("<polyline") || svg.contains("<path"), "a line is drawn");
    let (code, _, stderr) =
        limited(&["merge", &path_str(&big), &path_str(&small), "--force", "--allow-duplicates", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}

/// Byte and op counts whose sum does not fit in 64 bits are refused naming the file whose
/// count overflowed (a release build wrapped them silently).
#[test]
fn merge_refuses_counts_that_overflow_naming_the_file() {
    let dir = temp_dir();
    let a = result_file(dir.path(), "a.json", &[]);
    let b = result_file(dir.path(), "b.json", &[]);
    for (op, field) in [("read", "bytes"), ("total", "ops")] {
        edit_json(&b, |v| v[op][field] = Value::from(u64::MAX - 1));
        let before = tree(dir.path());
        let (code, stdout, stderr) = run_limited(&["merge", &path_str(&a), &path_str(&b), "--force", "--quiet"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&path_str(&b)) && stderr.contains(&format!("{op}.{field}")) && stderr.contains("overflows"),
            "{stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stdout.is_empty());
        assert_eq!(tree(dir.path()), before);
        edit_json(&b, |v| v[op][field] = Value::from(1000u64));
    }
}

/// Figures no run has (negative, 1e308 IOPS, a negative count) are refused naming the file
/// and the field: merged, 1e308 IOPS used to print as 300 digits.
#[test]
fn absurd_figures_are_refused_naming_the_file_and_the_field() {
    let dir = temp_dir();
    let good = result_file(dir.path(), "good.json", &[]);
    let bad = dir.path().join("bad.json");
    let cases: [(&str, Value, &str); 4] = [
        ("iops", Value::from(1e308), "total.iops is 1e308"),
        ("bw_bytes_per_sec", Value::from(-5.0), "total.bw_bytes_per_sec is -5"),
        ("ops", Value::from(-1), "total.ops"),
        ("iops", Value::from(2e12), "above 1e12"),
    ];
    for (field, value, words) in cases {
        std::fs::copy(&good, &bad).unwrap();
        edit_json(&bad, |v| v["total"][field] = value);
        assert_merge_and_plot_refuse(dir.path(), &bad, &good, &[words], None);
    }
}

/// The lines of `path` (a journal) as JSON values.
fn journal_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a journal line that is not JSON ({e}): {l}")))
        .collect()
}

fn write_journal(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{}\n", serde_json::to_string(l).unwrap())).collect();
    std::fs::write(path, text).unwrap();
}

const SWEEP: [&str; 8] = ["sweep", "--engine", "null", "--duration", "50ms", "--block-size", "4k", "--queue-depth"];

/// `--resume` trusts a journal only as far as it is consistent: figures no run has, an
/// exit code no run has, or a success for a run whose result says it failed are refused
/// naming the journal and the line; a failed run resumed keeps the sweep failed.
#[test]
fn a_tampered_journal_is_refused_naming_the_line_and_a_failed_run_stays_failed() {
    let dir = temp_dir();
    let csv = dir.path().join("s.csv");
    let c = path_str(&csv);
    let journal = dir.path().join("s.csv.journal");
    let mut args = SWEEP.to_vec();
    args.extend(["1,2", "--csv", &c, "--quiet"]);
    let (code, _, stderr) = run_limited(&args);
    assert_eq!(code, 0, "{stderr}");
    let lines = journal_lines(&journal);
    assert_eq!(lines.len(), 2);
    let mut resume = args.clone();
    resume.retain(|a| *a != "--quiet");
    resume.push("--resume");
    type Edit = fn(&mut Value);
    let tampered: [(Edit, &str); 5] = [
        (|l| l["result"]["total"]["iops"] = Value::from(-5.0), "result.total.iops is -5"),
        (|l| l["result"]["read"]["iops"] = Value::from(1e300), "result.read.iops is 1e300"),
        (|l| l["exit_code"] = Value::from(77), "exit_code 77"),
        (
            |l| {
                l["result"]["stop_reason"] = Value::from("error");
                l["result"]["error"] = Value::from("an I/O failed");
            },
            "exit_code 0 (success), but its result says it stopped on an error",
        ),
        (
            |l| l["result"]["write"]["ops"] = Value::from(-3),
            "not a sweep journal entry: result.write.ops: invalid value",
        ),
    ];
    for (edit, words) in tampered {
        let mut edited = lines.clone();
        edit(&mut edited[1]);
        write_journal(&journal, &edited);
        let before = tree(dir.path());
        let (code, _, stderr) = run_limited(&resume);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!("{}: line 2", journal.display())) && stderr.contains(words),
            "`{words}`: {stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert_eq!(tree(dir.path()), before, "nothing ran, nothing was written");
    }
    // A run that failed (exit 1) before the interruption: the resumed sweep fails too.
    let mut failed = lines.clone();
    failed[0]["exit_code"] = Value::from(1);
    failed.truncate(1);
    write_journal(&journal, &failed);
    let (code, _, stderr) = run_limited(&resume);
    assert_eq!(code, 1, "a failed run is not a success once resumed: {stderr}");
    assert!(stderr.contains("resuming: 1 of 2 runs done, 1 to go"), "{stderr}");
}

/// The CSV rows of `path` (header first), each checked to have the header's columns.
fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_path(path).unwrap();
    let rows: Vec<Vec<String>> =
        reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect::<Vec<_>>()).collect();
    for row in &rows {
        assert_eq!(row.len(), rows[0].len(), "a row of {} columns: {row:?}", row.len());
    }
    rows
}

/// Two sweeps appending to one CSV at once share its journal: their lines never splice
/// (one write each, under a lock; the second sweep does not empty a journal the first is
/// writing), and each sweep then resumes, leaving out the other's runs.
#[test]
fn two_sweeps_appending_to_one_csv_keep_the_journal_whole_and_both_resume() {
    let dir = temp_dir();
    let csv = dir.path().join("shared.csv");
    let c = path_str(&csv);
    let journal = dir.path().join("shared.csv.journal");
    let sweep = |depths: &'static str| {
        let mut args = SWEEP.to_vec();
        args.extend([depths, "--repeat", "4", "--csv", &c, "--quiet"]);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let (a, b) = (sweep("1,2"), sweep("4,8"));
    let mut first = iopulse().args(&a).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // The second starts once the first has written its journal.
    let deadline = Instant::now() + LIMIT;
    while std::fs::metadata(&journal).map_or(0, |m| m.len()) == 0 {
        assert!(Instant::now() < deadline, "the first sweep never wrote its journal");
        std::thread::sleep(Duration::from_millis(5));
    }
    let (code, _, stderr) = bounded(iopulse().args(&b), LIMIT);
    assert_eq!(code, 0, "{stderr}");
    let started = Instant::now();
    while first.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < LIMIT, "the first sweep did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(first.wait().unwrap().code(), Some(0));
    let lines = journal_lines(&journal);
    assert_eq!(lines.len(), 16, "8 runs of each sweep");
    assert_eq!(csv_rows(&csv).len(), 17, "a header and 16 rows");
    for (args, other) in [(&a, "4,8"), (&b, "1,2")] {
        let mut resume = args.clone();
        resume.retain(|s| s != "--quiet");
        resume.push("--resume".into());
        let (code, _, stderr) = bounded(iopulse().args(&resume), LIMIT);
        assert_eq!(code, 0, "resume beside {other}: {stderr}");
        assert!(stderr.contains("resuming: 8 of 8 runs done, 0 to go"), "{stderr}");
        assert!(stderr.contains("8 run(s) of other sweeps sharing it"), "{stderr}");
    }
}

/// A table whose last line lacks its newline (cut by hand, or by another program) gets the
/// next row on a line of its own, never glued to it.
#[test]
fn a_csv_without_its_last_newline_gets_the_next_row_on_its_own_line() {
    let dir = temp_dir();
    let csv = dir.path().join("t.csv");
    let c = path_str(&csv);
    let args = ["--engine", "null", "--block-size", "4k", "--duration", "50ms", "--quiet", "--csv", &c];
    let (code, _, stderr) = run_limited(&args);
    assert_eq!(code, 0, "{stderr}");
    let mut text = std::fs::read(&csv).unwrap();
    assert_eq!(text.pop(), Some(b'\n'));
    std::fs::write(&csv, &text).unwrap();
    let (code, _, stderr) = run_limited(&args);
    assert_eq!(code, 0, "{stderr}");
    let rows = csv_rows(&csv);
    assert_eq!(rows.len(), 3, "the header and two rows");
    assert!(std::fs::read(&csv).unwrap().starts_with(&text), "the old table is kept as it was");
}

/// A file of 1 MiB of non-zero bytes at `dir/name`.
fn data_file(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, (0..1u32 << 20).map(|i| (i * 7 % 253) as u8 + 1).collect::<Vec<u8>>()).unwrap();
    p
}

/// A sweep's chart (and a search's) that is a link to the target is refused before the
/// first run, as a single run refuses it: it used to replace the target with an SVG.
#[test]
fn sweep_and_search_charts_linked_to_a_target_are_refused_before_anything_runs() {
    let dir = temp_dir();
    let target = data_file(dir.path(), "t.dat");
    let t = path_str(&target);
    let plots = dir.path().join("plots");
    std::fs::create_dir(&plots).unwrap();
    let p = path_str(&plots);
    for (chart, args) in [
        ("sweep-iops-vs-queue-depth.svg", vec!["sweep", &t, "--queue-depth", "1,2"]),
        ("sweep-p99-vs-queue-depth.svg", vec!["sweep", &t, "--queue-depth", "1,2"]),
        ("search-curve.svg", vec!["search", &t, "--queue-depth", "4", "--saturate"]),
    ] {
        let link = plots.join(chart);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let before = tree(dir.path());
        let mut all = args.clone();
        all.extend(["--engine", "null", "--duration", "50ms", "--plot", &p, "--quiet"]);
        let (code, stdout, stderr) = run_limited(&all);
        assert_eq!(code, 2, "{chart}: {stderr}");
        assert!(stderr.contains(chart) && stderr.contains("own target"), "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(tree(dir.path()), before, "{chart}: the target and the link are as they were");
        std::fs::remove_file(&link).unwrap();
    }
}

/// A chart made a link to the target while the sweep runs is not followed when the chart
/// is written: the target stays, and the sweep says the chart failed (exit 4).
#[test]
fn a_chart_linked_to_the_target_during_a_sweep_never_replaces_it() {
    let dir = temp_dir();
    let target = data_file(dir.path(), "t.dat");
    let sum = checksum(&target);
    let t = path_str(&target);
    let plots = dir.path().join("plots");
    std::fs::create_dir(&plots).unwrap();
    let csv = dir.path().join("s.csv");
    let (p, c) = (path_str(&plots), path_str(&csv));
    let mut child = iopulse()
        .args(["sweep", &t, "--engine", "null", "--duration", "300ms", "--queue-depth", "1,2,4"])
        .args(["--plot", &p, "--csv", &c, "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + LIMIT;
    while !csv.exists() {
        assert!(Instant::now() < deadline, "no run ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::os::unix::fs::symlink(&target, plots.join("sweep-iops-vs-queue-depth.svg")).unwrap();
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the sweep did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("sweep-iops-vs-queue-depth.svg")
            && (stderr.contains("not followed") || stderr.contains("not replaced")),
        "{stderr}"
    );
    assert_eq!(checksum(&target), sum, "the target is as it was");
    assert!(std::fs::symlink_metadata(plots.join("sweep-iops-vs-queue-depth.svg")).unwrap().file_type().is_symlink());
    assert!(plots.join("sweep-p99-vs-queue-depth.svg").is_file(), "the other chart is written");
}

/// The job file is never an output: `run jf.toml --json jf.toml` (or `json = "jf.toml"` in
/// its [global]) used to replace the job file with the JSON.
#[test]
fn the_job_file_is_never_an_output() {
    let dir = temp_dir();
    let jf = dir.path().join("jf.toml");
    let target = path_str(&dir.path().join("t.dat"));
    let body = format!("[a]\nengine = \"null\"\ntargets = [\"{target}\"]\nduration = \"50ms\"\n");
    for (text, extra) in [
        (body.clone(), vec!["--json".to_string(), path_str(&jf)]),
        (format!("[global]\njson = \"{}\"\n{body}", path_str(&jf)), vec![]),
        (body.clone(), vec!["--csv".to_string(), path_str(&dir.path().join("./jf.toml"))]),
    ] {
        std::fs::write(&jf, &text).unwrap();
        let before = tree(dir.path());
        let mut args = vec!["run".to_string(), path_str(&jf)];
        args.extend(extra);
        let (code, stdout, stderr) = bounded(iopulse().args(&args), LIMIT);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("an input this command reads"), "{stderr}");
        assert!(stdout.is_empty());
        assert_eq!(tree(dir.path()), before, "{args:?}: the job file is as it was");
    }
}

/// `--csv /dev/stdout` is written, never read back: the run (and a sweep) ends, even with
/// stdout a pipe. A stream gets no journal: `sweep --json /dev/stdout` creates no
/// `/dev/stdout.journal`, and `--json /dev/fd/1` is a stream, not "a path on procfs".
#[test]
fn a_csv_on_stdout_ends_and_a_stream_gets_no_journal() {
    let dir = temp_dir();
    let target = path_str(&zero_file(dir.path(), "t.dat", 1 << 20));
    let (code, stdout, stderr) = run_limited(&[&target, "--duration", "200ms", "--csv", "/dev/stdout", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("started_at,hostname"), "{stdout}");
    let mut args = SWEEP.to_vec();
    args.extend(["1,2", "--csv", "/dev/stdout", "--quiet"]);
    let (code, stdout, stderr) = run_limited(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.matches("started_at,hostname").count(), 1, "one header, then a row per run: {stdout}");
    for json in ["/dev/stdout", "/dev/fd/1"] {
        let mut args = SWEEP.to_vec();
        args.extend(["1,2", "--json", json, "--quiet"]);
        let (code, stdout, stderr) = run_limited(&args);
        assert_eq!(code, 0, "--json {json}: {stderr}");
        assert!(stdout.contains("\"kind\": \"sweep\""), "{stdout}");
        assert!(!Path::new(&format!("{json}.journal")).exists(), "{json}.journal was created");
        let mut resume = args.clone();
        resume.push("--resume");
        let (code, _, stderr) = run_limited(&resume);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("--resume needs the --csv FILE"), "{stderr}");
    }
}

/// One rule for every way in: a path under /dev other than the standard streams is refused,
/// by a single run as by a job file's run (`--timeseries /dev/shm/x.csv` used to pass the
/// one and be refused by the other as if it were a stream).
#[test]
fn outputs_under_dev_are_refused_by_every_way_in() {
    let dir = temp_dir();
    let target = path_str(&dir.path().join("t.dat"));
    let name = format!("iopulse-test-{}.csv", std::process::id());
    let shm = format!("/dev/shm/{name}");
    let jf = dir.path().join("jf.toml");
    std::fs::write(&jf, format!("[a]\nengine = \"null\"\ntargets = [\"{target}\"]\nduration = \"50ms\"\n")).unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&shm, &link).unwrap();
    let l = path_str(&link);
    let before = tree(dir.path());
    let j = path_str(&jf);
    for args in [
        vec![target.as_str(), "--engine", "null", "--duration", "50ms", "--timeseries", &shm],
        vec!["run", &j, "--timeseries", &shm],
        vec![target.as_str(), "--engine", "null", "--duration", "50ms", "--json", &l],
        vec!["sweep", "--engine", "null", "--duration", "50ms", "--queue-depth", "1,2", "--csv", &shm],
    ] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (code, _, stderr) = bounded(iopulse().args(&args), LIMIT);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("is under /dev"), "{args:?}: {stderr}");
        assert_eq!(tree(dir.path()), before);
        let created: Vec<_> = std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.starts_with(&format!("iopulse-test-{}", std::process::id())))
            .collect();
        assert!(created.is_empty(), "{args:?}: created {created:?}");
    }
}

/// A read run with stdout appended to its target (`>> TARGET`) would grow the target by
/// its report: refused, the target unchanged.
#[test]
fn stdout_that_is_a_target_is_refused() {
    let dir = temp_dir();
    let target = data_file(dir.path(), "t.dat");
    let sum = checksum(&target);
    let t = path_str(&target);
    for stream in ["stdout", "stderr"] {
        let file = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
        let mut cmd = iopulse();
        cmd.args([&t, "--duration", "100ms"]);
        let (code, stdout, stderr) = if stream == "stdout" {
            let out = cmd.stdout(file).stderr(Stdio::piped()).output().unwrap();
            (out.status.code().unwrap_or(-1), String::new(), String::from_utf8_lossy(&out.stderr).into_owned())
        } else {
            let out = cmd.stderr(file).stdout(Stdio::piped()).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            (out.status.code().unwrap_or(-1), text, String::new())
        };
        assert_eq!(code, 2, "{stream}: {stderr}{stdout}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(checksum(&target), sum, "{stream}: the target is as it was");
        assert_eq!(std::fs::metadata(&target).unwrap().len(), 1 << 20);
    }
    // The message, with stdout the target.
    let file = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
    let out = iopulse().args([&t, "--duration", "100ms"]).stdout(file).stderr(Stdio::piped()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stdout is the run's own target") && stderr.contains("redirect stdout"), "{stderr}");
}

/// A target that is a dangling link is the file a create through it would make: the
/// `--json` path it names is refused as the target, and two targets that are one file
/// through it are one target.
#[test]
fn a_dangling_link_target_is_the_file_it_names() {
    let dir = temp_dir();
    let json = dir.path().join("r.json");
    let link = dir.path().join("t.dat");
    std::os::unix::fs::symlink("r.json", &link).unwrap();
    let before = tree(dir.path());
    let (code, _, stderr) =
        run_limited(&[&path_str(&link), "--file-size", "1m", "--duration", "100ms", "--json", &path_str(&json)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--json") && stderr.contains("own target"), "{stderr}");
    assert_eq!(tree(dir.path()), before, "nothing laid out, nothing written");
    let (code, _, stderr) =
        run_limited(&[&path_str(&link), &path_str(&json), "--file-size", "1m", "--duration", "100ms"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("are the same file"), "{stderr}");
    assert_eq!(tree(dir.path()), before);
}

/// `include /proc/self/environ` in a fio job file is refused unread: it used to be read,
/// and its first variable's name echoed in the error.
#[test]
fn a_fio_include_of_a_kernel_interface_device_or_fifo_is_refused_unread() {
    let dir = temp_dir();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let fio = dir.path().join("j.fio");
    for (include, words) in
        [("/proc/self/environ", "procfs"), ("/dev/zero", "character device"), (path_str(&fifo).as_str(), "FIFO")]
    {
        std::fs::write(&fio, format!("[a]\nrw=read\ninclude {include}\n")).unwrap();
        let before = tree(dir.path());
        let (code, _, stderr) = bounded(
            iopulse().args(["run", &path_str(&fio)]).env_clear().env("IOPULSE_CANARY_SECRET", "1"),
            Duration::from_secs(20),
        );
        assert_eq!(code, 2, "{include}: {stderr}");
        assert!(stderr.contains("j.fio:3: include") && stderr.contains(words), "{stderr}");
        assert!(!stderr.to_lowercase().contains("canary"), "nothing of the file is echoed: {stderr}");
        assert_eq!(tree(dir.path()), before);
    }
}

/// TMPDIR, where a run with no target makes its temporary file: a file, /proc, /dev or a
/// read-only directory is refused (exit 2) naming TMPDIR and the reason (it used to be
/// exit 1 "No such file or directory"); an empty TMPDIR means /tmp, not the current
/// directory.
#[test]
fn tmpdir_is_checked_and_named() {
    let dir = temp_dir();
    let file = data_file(dir.path(), "file");
    let mut cases = vec![
        (path_str(&file), "is a regular file, not a directory"),
        ("/proc".to_string(), "procfs"),
        ("/dev".to_string(), "devtmpfs"),
        (path_str(&dir.path().join("missing")), "No such file or directory"),
    ];
    let ro = root::mount_tmpfs("4m", "ro", "a read-only TMPDIR");
    if let Some(m) = &ro {
        cases.push((path_str(m.path()), "is not writable (Read-only file system"));
    }
    let before = tree(dir.path());
    for (tmpdir, why) in &cases {
        // A run (a workload flag, no target) and a profile (no flag at all).
        for args in [&["--block-size", "4k", "--duration", "100ms"][..], &["--quiet"][..]] {
            let (code, _, stderr) = bounded(iopulse().args(args).env("TMPDIR", tmpdir).current_dir(dir.path()), LIMIT);
            assert_eq!(code, 2, "TMPDIR={tmpdir} {args:?}: {stderr}");
            assert!(stderr.contains(&format!("TMPDIR={tmpdir}")) && stderr.contains(why), "{stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        }
        // A sweep with no target refuses it before its first run.
        let (code, _, stderr) = bounded(
            iopulse().args(["sweep", "--block-size", "4k,8k", "--duration", "50ms"]).env("TMPDIR", tmpdir),
            LIMIT,
        );
        assert_eq!(code, 2, "sweep, TMPDIR={tmpdir}: {stderr}");
        assert!(stderr.contains("TMPDIR"), "{stderr}");
    }
    assert_eq!(tree(dir.path()), before);
    let json = dir.path().join("r.json");
    let (code, _, stderr) = bounded(
        iopulse()
            .args(["--block-size", "4k", "--duration", "100ms", "--quiet", "--json", &path_str(&json)])
            .env("TMPDIR", "")
            .current_dir(dir.path()),
        LIMIT,
    );
    assert_eq!(code, 0, "{stderr}");
    let path = read_json(&json)["targets"][0]["path"].as_str().unwrap().to_string();
    assert!(path.starts_with("/tmp/iopulse-default-"), "{path}");
}

/// `plot --sweep` of a table whose figure is not a finite number (`inf`, `NaN`) is refused
/// naming the line and column: with `inf` it used to draw for ever (an axis to infinity).
#[test]
fn plot_sweep_refuses_a_figure_that_is_not_a_finite_number() {
    let dir = temp_dir();
    let csv = dir.path().join("s.csv");
    let c = path_str(&csv);
    let mut args = SWEEP.to_vec();
    args.extend(["1,2", "--csv", &c, "--quiet"]);
    let (code, _, stderr) = run_limited(&args);
    assert_eq!(code, 0, "{stderr}");
    let rows = csv_rows(&csv);
    let iops = rows[0].iter().position(|h| h == "iops").unwrap();
    for bad in ["inf", "NaN"] {
        let mut edited = rows.clone();
        edited[2][iops] = bad.to_string();
        let mut w = csv::Writer::from_path(&csv).unwrap();
        for row in &edited {
            w.write_record(row).unwrap();
        }
        w.flush().unwrap();
        let out = dir.path().join("plots");
        let (code, stdout, stderr) = run_limited(&["plot", "--sweep", &c, "--out", &path_str(&out)]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(
            stderr.contains("line 3") && stderr.contains("`iops`") && stderr.contains("not a finite number"),
            "{stderr}"
        );
        assert!(stdout.is_empty() && !out.exists(), "nothing drawn");
    }
}
