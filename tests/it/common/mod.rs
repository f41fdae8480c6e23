//! Helpers shared by the integration tests: run the real `iopulse` binary on
//! temporary files, read what it printed and wrote, and check the blocks it
//! wrote with `--verify`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn iopulse() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iopulse"));
    cmd.env_remove("IOPULSE_BENCH_DIR");
    cmd
}

/// Whether the binary under test was built with the optional `feature` (`hwloc`, `mpi`), as
/// its `--version` line says. The tests themselves are compiled the same either way, so
/// that CI runs the one test binary against the default build and the feature build.
pub fn built_with(feature: &str) -> bool {
    static FEATURES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FEATURES
        .get_or_init(|| {
            let out = iopulse().arg("--version").output().expect("run iopulse --version");
            let line = String::from_utf8_lossy(&out.stdout).into_owned();
            line.split_once("(features: ")
                .and_then(|(_, rest)| rest.split_once(')'))
                .map(|(list, _)| list.split(", ").map(str::to_string).collect())
                .unwrap_or_default()
        })
        .iter()
        .any(|f| f == feature)
}

/// Runs `cmd` (an `iopulse()` with extra settings) to its end; returns (exit code,
/// stdout, stderr), the code -1 when a signal ended it.
pub fn run_command(cmd: &mut Command) -> (i32, String, String) {
    let out: Output = cmd.output().expect("run iopulse");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs iopulse with `args`; returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    run_command(iopulse().args(args))
}

/// Runs iopulse with `args` and asserts that it exited 0 (naming the arguments and
/// stderr if not); returns (stdout, stderr).
pub fn run_ok(args: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "iopulse {args:?} exited {code}\nstderr: {stderr}\nstdout: {stdout}");
    (stdout, stderr)
}

/// Runs iopulse with JSON on stdout and returns the parsed result; panics with
/// stderr if it did not exit 0.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--output-format", "json", "--quiet"]);
    let (code, stdout, stderr) = run(&all);
    assert_eq!(code, 0, "iopulse {all:?} exited {code}\nstderr: {stderr}\nstdout: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
}

/// The JSON document in the file at `path` (a result written with `--json`).
pub fn read_json(path: impl AsRef<Path>) -> serde_json::Value {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON ({e}): {text}", path.display()))
}

/// Whether `engine` can run here (a tiny run on a fresh file succeeds); prints why
/// not when it cannot, so that a test skipping it says so.
pub fn engine_available(engine: &str) -> bool {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("probe.dat"));
    let (code, _, stderr) = run(&["--engine", engine, &f, "--file-size", "64k", "--duration", "0", "--quiet"]);
    if code != 0 {
        eprintln!("SKIP: engine {engine} is not available here: {stderr}");
    }
    code == 0
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("iopulse-test-").tempdir().expect("temp dir")
}

pub fn path_str(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

/// A file of `len` bytes of zeros at `dir/name`.
pub fn zero_file(dir: &Path, name: &str, len: u64) -> PathBuf {
    let p = dir.join(name);
    let f = std::fs::File::create(&p).expect("create");
    f.set_len(0).unwrap();
    std::fs::write(&p, vec![0u8; len as usize]).expect("write zeros");
    p
}

/// For each `bs`-byte block of `data` written with `--verify`, the offset its header
/// says it was written for (read independently of iopulse's own code: bytes 0..8 are
/// the magic "IOPULSE\x01", bytes 8..16 the offset); `u64::MAX` for a block without header.
pub fn header_offsets(data: &[u8], bs: usize) -> Vec<u64> {
    data.chunks(bs)
        .map(|b| if &b[..8] == b"IOPULSE\x01" { u64::from_le_bytes(b[8..16].try_into().unwrap()) } else { u64::MAX })
        .collect()
}

/// Asserts that the file at `path` is `blocks` blocks of `bs` bytes and that each
/// holds the `--verify` header of its own offset: every block was written, and
/// landed where it was meant to. `context` (the engine, the flags) leads each message.
pub fn assert_blocks_hold_their_offsets(path: &Path, bs: usize, blocks: usize, context: &str) {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let stamps = header_offsets(&data, bs);
    assert_eq!(stamps.len(), blocks, "{context}: {} has {} blocks of {bs} bytes", path.display(), stamps.len());
    for (i, stamp) in stamps.into_iter().enumerate() {
        let held = if stamp == u64::MAX { "no header".to_string() } else { format!("the header of offset {stamp}") };
        assert_eq!(stamp, (i * bs) as u64, "{context}: {} block {i} holds {held}", path.display());
    }
}

/// The arguments of a run that writes each block of the `targets` once with
/// `--engine engine`, stamping every block with its offset (`--verify`), then `extra`.
pub fn write_pass_args<'a>(engine: &'a str, targets: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--engine", engine];
    args.extend_from_slice(targets);
    args.extend_from_slice(&["--duration", "0", "--write-percent", "100", "--verify"]);
    args.extend_from_slice(extra);
    args
}

/// Writes each block of a fresh zeroed file of `blocks` blocks of `bs` bytes once
/// (see `write_pass_args`) with `--engine engine` and the `extra` flags; asserts that
/// all the writes were counted and each block holds its own offset; returns the JSON
/// result. `context` leads each failure message.
pub fn write_each_block_once(
    engine: &str,
    bs: usize,
    blocks: usize,
    extra: &[&str],
    context: &str,
) -> serde_json::Value {
    let dir = temp_dir();
    let f = zero_file(dir.path(), "w.dat", (blocks * bs) as u64);
    let fs = path_str(&f);
    let bs_arg = bs.to_string();
    let flags = [&["--block-size", bs_arg.as_str()][..], extra].concat();
    let r = run_json(&write_pass_args(engine, &[&fs], &flags));
    assert_eq!(u64_at(&r, &["write", "ops"]), blocks as u64, "{context}: write ops");
    assert_blocks_hold_their_offsets(&f, bs, blocks, context);
    r
}

/// Read plus write ops summed over the result's per-worker entries (what the
/// run-wide totals must add up to).
pub fn per_worker_ops(r: &serde_json::Value) -> u64 {
    let workers = r["workers"].as_array().unwrap_or_else(|| panic!("no workers array: {r}"));
    workers.iter().map(|w| u64_at(w, &["read", "ops"]) + u64_at(w, &["write", "ops"])).sum()
}

/// u64 field of a JSON value by a path of keys (numbers index arrays).
pub fn u64_at(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for k in path {
        cur = match k.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[*k],
        };
    }
    cur.as_u64().unwrap_or_else(|| panic!("{path:?} is not a u64: {cur}"))
}

/// The validator of docs/result.schema.json.
pub fn schema_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{} is not a valid schema: {e}", path.display()))
}

/// Panics with every violation if `doc` does not match the result schema.
pub fn assert_valid(validator: &jsonschema::Validator, doc: &serde_json::Value, what: &str) {
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not match docs/result.schema.json:\n{}", errors.join("\n"));
}

/// Root-only facilities (tmpfs, loop devices, blkio throttling) for the fault tests.
pub mod root;

/// Runs iopulse with `args`, killing it if it has not ended after `limit`: a hang fails the
/// test instead of hanging the suite. Returns (exit code, stderr).
pub fn run_bounded(args: &[&str], limit: std::time::Duration) -> (i32, String) {
    use std::process::Stdio;
    let mut child = iopulse().args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{args:?}: still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A run with the text report on stdout and the JSON result in `dir/r.json`, checked
/// against the schema: (text, stderr, JSON). `what` names the result in a schema failure.
pub fn run_text_and_json(dir: &Path, args: &[&str], what: &str) -> (String, String, serde_json::Value) {
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let json_s = path_str(&json);
    let mut all = args.to_vec();
    all.extend_from_slice(&["--json", &json_s]);
    let (stdout, stderr) = run_ok(&all);
    let r = read_json(&json);
    assert_valid(&schema_validator(), &r, what);
    (stdout, stderr, r)
}

/// Waits until the process `pid` has a handler of its own for `signal` (the SigCgt mask
/// of /proc/PID/status), at most `limit`; false if it never had one in that time (or is
/// gone). A test that signals a child it just started waits for this instead of a fixed
/// sleep: on a machine busy with other work the child may not have reached the line that
/// installs its handlers, and the signal's default action would end it instead.
pub fn wait_for_handler(pid: u32, signal: i32, limit: std::time::Duration) -> bool {
    let started = std::time::Instant::now();
    loop {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return false };
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1u64 << (signal - 1)) != 0 {
            return true;
        }
        if started.elapsed() > limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Held by the tests that make a CPU latency request (`--cpu-dma-latency`): the request is
/// the machine's (the smallest in force wins), so a test that reads the machine's limit
/// must not overlap another that makes one.
pub static CPU_LATENCY_REQUESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes `CPU_LATENCY_REQUESTS` (also after a test that held it failed).
pub fn cpu_latency_requests() -> std::sync::MutexGuard<'static, ()> {
    CPU_LATENCY_REQUESTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A result's JSON made to stand for another run of the same workload (a repetition with
/// the same figures): every run's start moved (`started_at` a minute later, each
/// `window_start_unix_ns` one later), so that `compare` and `merge`, which count one run
/// once, take the copy as a run of its own.
pub fn as_another_run(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), &*value) {
                    ("window_start_unix_ns", serde_json::Value::Number(n)) => {
                        *value = serde_json::Value::from(n.as_u64().unwrap_or(0) + 1);
                    }
                    ("started_at", serde_json::Value::String(s)) => {
                        let moved = s.parse::<jiff::Timestamp>().map_or_else(
                            |_| format!("{s} (another run)"),
                            |t| (t + jiff::SignedDuration::from_secs(60)).to_string(),
                        );
                        *value = serde_json::Value::from(moved);
                    }
                    _ => as_another_run(value),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(as_another_run),
        _ => {}
    }
}

/// Waits for `child` (started by the test) at most `limit`; past it, kills it by its pid and
/// fails naming `what`: no test waits for ever on a run that should have ended.
pub fn wait_at_most(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Runs iopulse with `args` (and `--output-format json --quiet`) under `strace -ff` tracing
/// `calls` (a file per thread, so no line is split), in `dir`; its JSON result and each
/// thread's lines. `None`, said as skipping `what`, without strace.
pub fn strace_threads(
    dir: &Path,
    calls: &str,
    args: &[&str],
    what: &str,
) -> Option<(serde_json::Value, Vec<Vec<String>>)> {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        root::skip(what, "strace is not installed");
        return None;
    }
    let prefix = dir.join("trace");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-ff", "-qq", "-s", "0", "-e", &format!("trace={calls}"), "-o"])
        .arg(&prefix)
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .args(args)
        .args(["--output-format", "json", "--quiet"]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    let mut threads = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with("trace.") {
            threads.push(std::fs::read_to_string(&p).unwrap().lines().map(String::from).collect());
            std::fs::remove_file(p).unwrap();
        }
    }
    Some((serde_json::from_str(&stdout).unwrap(), threads))
}

/// How a refusal names the run holding a lock on `path` (held by `pid`): `(pid N)` where
/// /proc/locks lists that flock by the device and inode stat gives; under an overlay (a
/// container's root) or a sandboxed /proc it is listed otherwise or not at all, and the
/// refusal says the pid is not listed. Called while the lock is held.
pub fn lock_holder_words(path: &Path, pid: u32) -> String {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    let key =
        format!("{:02x}:{:02x}:{} ", nix::sys::stat::major(meta.dev()), nix::sys::stat::minor(meta.dev()), meta.ino());
    // Read a few times: a lock released meanwhile by another process can make one reading
    // miss it (the kernel lists the locks a page at a time).
    let listed = (0..4).any(|_| {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        locks.lines().any(|l| l.contains(" FLOCK ") && l.contains(&key))
    });
    if listed {
        format!("(pid {pid})")
    } else {
        eprintln!("/proc/locks does not list the lock on {} as {key}: the holder cannot be named", path.display());
        "(its pid is not listed in /proc/locks)".to_string()
    }
}
