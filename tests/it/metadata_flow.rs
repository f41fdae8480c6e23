//! Flows (`--meta-flow`) and the personalities built on them, against strace: each worker
//! thread's system calls follow its personality's filebench flowops in order; varmail
//! fsyncs the descriptor it just appended to; webserver's reads return the served files'
//! sizes (only the log grows); each step's figures add up to its kind's.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// Runs iopulse under `strace -ff`: the JSON result and each thread's lines.
fn traced_threads(dir: &Path, args: &[&str]) -> Option<(Value, Vec<Vec<String>>)> {
    let calls = "openat,unlinkat,lseek,write,pwrite64,pread64,fsync,close,statx";
    strace_threads(dir, calls, args, "a flow's system calls against strace")
}

/// The name a call's quoted path ends in (`f12` of `"d0/d3/f12"`).
fn file_name(line: &str) -> Option<&str> {
    line.split('"').nth(1).and_then(|p| p.rsplit('/').next())
}

/// The first argument (a descriptor) of a call.
fn first_arg(line: &str) -> Option<i64> {
    line.split_once('(')?.1.split([',', ')']).next()?.trim().parse().ok()
}

/// The last argument of a call (an offset), before `) = `.
fn last_arg(line: &str) -> Option<i64> {
    let (call, _) = line.rsplit_once(" = ")?;
    call.trim_end().strip_suffix(')')?.rsplit(", ").next()?.trim().parse().ok()
}

/// A worker's system calls as the flow's steps they are (a read or write whole begins at
/// offset 0; an append at its lseek to the end), leaving out the log file's open (untimed,
/// not a step); failed calls and the output's own writes are not steps.
fn steps_of(lines: &[String], log_name: &str) -> Vec<&'static str> {
    let mut steps = Vec::new();
    for l in lines.iter().filter(|l| !l.contains("= -1")) {
        let step = if l.starts_with("unlinkat(") {
            "delete"
        } else if l.starts_with("openat(") && l.contains("O_RDWR") {
            if file_name(l) == Some(log_name) {
                continue;
            }
            if l.contains("O_CREAT") { "create" } else { "open" }
        } else if l.starts_with("pread64(") && last_arg(l) == Some(0) {
            "read-whole"
        } else if l.starts_with("pwrite64(") && last_arg(l) == Some(0) {
            "write-whole"
        } else if l.starts_with("lseek(") && l.contains("SEEK_END") {
            "append"
        } else if l.starts_with("fsync(") {
            "fsync"
        } else if l.starts_with("close(") {
            "close"
        } else if l.starts_with("statx(") {
            "stat"
        } else {
            continue;
        };
        steps.push(step);
    }
    steps
}

/// The worker threads' traces: those that opened a tree file for reading and writing
/// (the set-up writes with O_WRONLY|O_TRUNC, the removal only unlinks).
fn workers(threads: &[Vec<String>]) -> Vec<&Vec<String>> {
    threads.iter().filter(|t| t.iter().any(|l| l.starts_with("openat(") && l.contains("O_RDWR"))).collect()
}

/// Each worker's steps are the flow's, in order from its first step, over and over (the
/// last may be the close of a file the window's end left open).
fn assert_follows(name: &str, threads: &[Vec<String>], flow: &[&str], log_name: &str) {
    let workers = workers(threads);
    assert!(!workers.is_empty(), "{name}: no worker thread in the trace");
    for w in workers {
        let seen = steps_of(w, log_name);
        let cycles = seen.len() / flow.len();
        assert!(cycles >= 2, "{name}: a worker ran {} steps only", seen.len());
        for (i, step) in seen.iter().enumerate() {
            let want = flow[i % flow.len()];
            // The window's end closes what the worker held (its file, its log), untimed.
            if *step != want && seen.len() - i <= 2 && seen[i..].iter().all(|s| *s == "close") {
                break;
            }
            assert_eq!(*step, want, "{name}: step {i} of a worker is {step}, the flow's is {want}");
        }
    }
}

#[test]
fn varmail_fsyncs_the_file_it_appended_and_follows_its_flowops() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("mail"));
    let Some((r, threads)) =
        traced_threads(dir.path(), &["--profile", "varmail", &t, "--threads", "2", "--duration", "1s"])
    else {
        return;
    };
    let flow = [
        "delete",
        "create",
        "append",
        "fsync",
        "close",
        "open",
        "read-whole",
        "append",
        "fsync",
        "close",
        "open",
        "read-whole",
        "close",
    ];
    assert_follows("varmail", &threads, &flow, "f1000");
    // Each fsync's descriptor against the one the same thread appended to last.
    let (mut fsyncs, mut of_last) = (0, 0);
    for w in workers(&threads) {
        let mut appended: Option<i64> = None;
        for l in w.iter().filter(|l| !l.contains("= -1")) {
            if l.starts_with("lseek(") && l.contains("SEEK_END") {
                appended = first_arg(l);
            } else if l.starts_with("fsync(") {
                fsyncs += 1;
                if appended.is_some() && first_arg(l) == appended {
                    of_last += 1;
                }
            }
        }
    }
    assert!(fsyncs > 20, "too few fsyncs to judge: {fsyncs}");
    assert!(of_last * 100 >= fsyncs * 95, "{of_last} of {fsyncs} fsyncs were of the file appended last");
    // The figures: the phase is the flow, its steps add up to its kinds.
    let phase = &r["phases"][0];
    assert_eq!(phase["name"], "flow");
    let steps = phase["steps"].as_array().unwrap();
    assert_eq!(steps.len(), flow.len());
    assert_eq!(steps[3]["name"], "fsync");
    assert_eq!(steps[3]["filebench"], "fsync");
    let kind_ops = |kind: &str| {
        phase["per_op"].as_array().unwrap().iter().find(|o| o["op"] == kind).map_or(0, |o| o["ops"].as_u64().unwrap())
    };
    let step_ops = |names: &[&str]| -> u64 {
        steps.iter().filter(|s| names.contains(&s["name"].as_str().unwrap())).map(|s| s["ops"].as_u64().unwrap()).sum()
    };
    assert_eq!(kind_ops("fsync"), step_ops(&["fsync"]));
    assert_eq!(kind_ops("append"), step_ops(&["append-rand"]));
    assert_eq!(kind_ops("unlink"), step_ops(&["delete"]));
    assert_eq!(phase["ops"].as_u64().unwrap(), steps.iter().map(|s| s["ops"].as_u64().unwrap()).sum::<u64>());
    // 80 % of the 1000 names made at the set-up; appends of 0 to 16 KiB − 2 bytes.
    assert_eq!(r["tree"]["setup_files_created"], 800);
    let (ab, ao) = (step_ops_bytes(steps, "append-rand"), step_ops(&["append-rand"]));
    let mean = ab as f64 / ao as f64;
    assert!((7000.0..9400.0).contains(&mean), "appends of {mean} bytes on average ({ab} over {ao})");
}

fn step_ops_bytes(steps: &[Value], name: &str) -> u64 {
    steps.iter().filter(|s| s["name"] == name).map(|s| s["bytes"].as_u64().unwrap()).sum()
}

#[test]
fn webserver_reads_its_files_whole_and_appends_only_to_its_log() {
    let dir = temp_dir();
    let tree = dir.path().join("www");
    let t = path_str(&tree);
    let Some((r, threads)) = traced_threads(
        dir.path(),
        // --keep-tree given with a profile reaches its steps (it was refused as the flags
        // alone were checked first, without the profile's --files).
        &["--profile", "webserver", &t, "--threads", "4", "--duration", "1s", "--keep-tree"],
    ) else {
        return;
    };
    let mut flow: Vec<&str> = Vec::new();
    for _ in 0..10 {
        flow.extend(["open", "read-whole", "close"]);
    }
    flow.push("append");
    assert_follows("webserver", &threads, &flow, "f1000");
    // The served files have the sizes the set-up gave them: only the log file grew. The
    // sizes are drawn from each file's index, so a run that only opened files tells them.
    let sizes = |tree: &Path| {
        let (mut served, mut log) = (0u64, 0u64);
        for e in walk(tree) {
            let name = e.file_name().unwrap().to_string_lossy().to_string();
            if name == "f1000" {
                log = e.metadata().unwrap().len();
            } else if name.starts_with('f') {
                served += e.metadata().unwrap().len();
            }
        }
        (served, log)
    };
    let (served, log) = sizes(&tree);
    let fresh = dir.path().join("fresh");
    run_ok(&["--profile", "webserver", &path_str(&fresh), "--threads", "4", "--ops", "4", "--keep-tree", "-q"]);
    let (served_at_setup, log_at_setup) = sizes(&fresh);
    assert_eq!(served, served_at_setup, "the served files are as the set-up made them");
    let appended = r["phases"][0]["steps"][30]["bytes"].as_u64().unwrap();
    // Writers at one end may write over each other (lseek, then write, as filebench).
    assert!(
        appended > 0 && log > log_at_setup && log <= log_at_setup + appended,
        "log {log_at_setup} → {log} after {appended} appended"
    );
    // Mean bytes per read: the served files' mean size (each read whole), near filebench's 16 KiB.
    let read = r["phases"][0]["per_op"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap().clone();
    let per_read = read["bytes"].as_u64().unwrap() as f64 / read["ops"].as_u64().unwrap() as f64;
    let served_mean = served as f64 / 1000.0;
    assert!((per_read / served_mean - 1.0).abs() < 0.05, "{per_read} bytes per read; the files' mean is {served_mean}");
    assert!((per_read / 16384.0 - 1.0).abs() < 0.05, "{per_read} bytes per read against 16 KiB");
    // The kept tree is removed by the next run (a flow's tree is set up anew each time).
    let r2 = run_json(&["--profile", "webserver", &t, "--threads", "2", "--duration", "200ms"]);
    assert_eq!(r2["tree"]["reused"], false);
    assert!(!tree.exists());
    run_ok(&["--profile", "webserver", &path_str(&fresh), "--threads", "2", "--ops", "2", "-q"]);
    assert!(!fresh.exists());
}

#[test]
fn fileserver_follows_its_flowops() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("share"));
    let Some((r, threads)) = traced_threads(
        dir.path(),
        &["--profile", "fileserver", &t, "--threads", "2", "--files", "1000", "--duration", "1s"],
    ) else {
        return;
    };
    let flow =
        ["create", "write-whole", "close", "open", "append", "close", "open", "read-whole", "close", "delete", "stat"];
    assert_follows("fileserver", &threads, &flow, "f1000");
    // Whole writes write each file's size: 128 KiB on average, as the set-up's.
    let steps = r["phases"][0]["steps"].as_array().unwrap();
    let writes = steps[1]["ops"].as_u64().unwrap();
    let mean = steps[1]["bytes"].as_u64().unwrap() as f64 / writes as f64;
    assert!(writes > 10 && (mean / 131072.0 - 1.0).abs() < 0.35, "{writes} whole writes of {mean} bytes on average");
}

#[test]
fn a_flow_that_cannot_find_its_file_is_refused_before_anything_is_touched() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("t"));
    for (flow, says) in [
        ("read-whole,close", "step 1 (read-whole) acts on a held file and none is"),
        ("open,read-whole", "the flow ends with step 1's file held"),
    ] {
        let (code, _, stderr) = run(&[&t, "--files", "10", "--meta-flow", flow]);
        assert_eq!(code, 2, "{flow}: {stderr}");
        assert!(stderr.contains(says), "{flow}: {stderr}");
    }
    let (code, _, stderr) = run(&[&t, "--files", "10", "--prealloc", "50"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--prealloc") && stderr.contains("--meta-flow"), "{stderr}");
    let (code, _, stderr) = run(&[&t, "--files", "10", "--meta-flow", "stat", "--meta-mix", "stat=1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--meta-mix and --meta-flow both given"), "{stderr}");
    assert!(!dir.path().join("t").exists(), "nothing was made");
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_flow_says_what_it_is_in_the_text_html_and_its_steps_add_up() {
    let dir = temp_dir();
    let json = dir.path().join("flow.json");
    let (stdout, _) = run_ok(&[
        &path_str(&dir.path().join("t")),
        "--files",
        "100",
        "--prealloc",
        "50",
        "--file-size-dist",
        "gamma:8k:2",
        "--meta-flow",
        "create,write-whole,close,open,read-whole,close,delete,stat",
        "--ops",
        "800",
        "--json",
        &path_str(&json),
    ]);
    // --ops counts steps: 800 over one worker is 100 turns of the flow.
    let r = read_json(&json);
    let steps = r["phases"][0]["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["ops"] == 100), "{steps:?}");
    assert_eq!(r["phases"][0]["ops"], 800);
    assert_eq!(r["tree"]["setup_files_created"], 50);
    assert_eq!(r["stop_reason"], "ops");
    assert!(steps[1]["bytes"].as_u64().unwrap() > 0 && steps[4]["bytes"].as_u64().unwrap() > 0, "{steps:?}");
    for (i, line) in ["1 create", "2 write-whole  writewholefile", "8 stat"].iter().enumerate() {
        assert!(stdout.contains(line), "row {i} ({line}) is not in the text report:\n{stdout}");
    }
    let page = dir.path().join("page.html");
    run_ok(&["report", &path_str(&json), "--html", &path_str(&page), "-q"]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("metadata flow of 8 steps (create, write-whole, close"), "{html}");
    assert!(html.contains("<td>writewholefile</td>"), "the steps' table");
}
