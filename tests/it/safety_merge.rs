//! `iopulse merge` reads only real result files, of a sane size, each once, never one it
//! writes to, and ends on the first signal; and the smaller safety items: `--max-errors N`
//! counts exactly N on every engine, coverage counts only blocks an I/O succeeded on, mmap
//! says ENOSPC when the filesystem is full (and never writes into a page it lost), and a
//! hostile `{host}` stays inside its directory.

use crate::common::root;
use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn result_file(dir: &Path, name: &str) -> String {
    let target = zero_file(dir, &format!("{name}.dat"), 1 << 20);
    let json = path_str(&dir.join(format!("{name}.json")));
    run_ok(&[&path_str(&target), "--duration", "200ms", "--quiet", "--json", &json]);
    json
}

#[test]
fn one_result_twice_is_refused_unless_allowed() {
    let dir = temp_dir();
    let a = result_file(dir.path(), "a");
    let copy = path_str(&dir.path().join("copy.json"));
    std::fs::copy(&a, &copy).unwrap();
    let hard = path_str(&dir.path().join("hard.json"));
    std::fs::hard_link(&a, &hard).unwrap();
    let sym = path_str(&dir.path().join("sym.json"));
    std::os::unix::fs::symlink(&a, &sym).unwrap();
    for (other, how) in
        [(&a, "one file"), (&hard, "one file"), (&sym, "one file"), (&copy, "same host, start and spec")]
    {
        let (code, stdout, stderr) = run(&["merge", &a, other]);
        assert_eq!(code, 2, "{other}: {stderr}");
        assert!(stderr.contains(&format!("{a} and {other} are the same result ({how}")), "{stderr}");
        assert!(stderr.contains("--allow-duplicates"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stdout.is_empty());
    }
    let merged = run_json(&["merge", &a, &copy, "--allow-duplicates"]);
    let single = read_json(&a);
    assert_eq!(u64_at(&merged, &["read", "ops"]), 2 * u64_at(&single, &["read", "ops"]));
    // Two real runs merge as before.
    let b = path_str(&dir.path().join("b.json"));
    run_ok(&[&path_str(&dir.path().join("a.dat")), "--duration", "200ms", "--quiet", "--json", &b]);
    let (code, _, stderr) = run(&["merge", &a, &b, "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn devices_fifos_sockets_and_huge_inputs_are_refused_at_once() {
    let dir = temp_dir();
    let a = result_file(dir.path(), "a");
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(300 << 20).unwrap();
    let dir_path = path_str(dir.path());
    for (input, word) in [
        ("/dev/zero".to_string(), "is a character device"),
        (path_str(&fifo), "is a FIFO"),
        (path_str(&socket), "is a socket"),
        (path_str(&huge), "larger than 256 MiB"),
        (dir_path, "is a directory"),
        ("/proc/self/status".to_string(), "procfs"),
    ] {
        // A regression reads /dev/zero or waits on the FIFO for ever: the wait is bounded.
        let started = Instant::now();
        let (code, stderr) = run_bounded(&["merge", &input, &a], Duration::from_secs(20));
        assert_eq!(code, 2, "{input}: {stderr}");
        assert!(stderr.contains(&input) && stderr.contains(word), "{stderr}");
        assert!(started.elapsed() < Duration::from_secs(5), "{input}: refused only after {:?}", started.elapsed());
    }
}

/// `merge a.json b.json > a.json` (the shell has emptied a.json) and `>> a.json` (the
/// merged result would be appended to an input) are refused before anything is read.
#[test]
fn stdout_that_is_one_of_the_inputs_is_refused() {
    let dir = temp_dir();
    let a = result_file(dir.path(), "a");
    let b = result_file(dir.path(), "b");
    let before = std::fs::read(&b).unwrap();
    let append = std::fs::OpenOptions::new().append(true).open(&b).unwrap();
    let (code, stdout, stderr) = run_command(iopulse().args(["merge", &a, &b]).stdout(append));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains(&format!("stdout is {b}, one of the results to merge")), "{stderr}");
    assert_eq!(std::fs::read(&b).unwrap(), before, "the input is unchanged");
    let truncated = std::fs::File::create(&a).unwrap();
    let (code, _, stderr) = run_command(iopulse().args(["merge", &a, &b]).stdout(truncated));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&format!("stdout is {a}")) && stderr.contains("another file"), "{stderr}");
}

/// A merge blocked writing its result (a pipe nobody reads) ends on SIGINT, SIGTERM and
/// SIGHUP with 130, 143 and 129, even when started with SIGINT ignored (as a shell starts
/// a background job): no handler used to be installed, so the ignored SIGINT left it
/// waiting for ever.
#[test]
fn merge_ends_on_the_first_signal_even_when_started_with_sigint_ignored() {
    use nix::sys::signal::{Signal, kill};
    let dir = temp_dir();
    let a = result_file(dir.path(), "a");
    let b = result_file(dir.path(), "b");
    for (signal, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143), (Signal::SIGHUP, 129)] {
        // The smallest pipe (one page): the merged JSON result (tens of KiB) cannot fit.
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        let _ = nix::fcntl::fcntl(&write_end, nix::fcntl::FcntlArg::F_SETPIPE_SZ(4096));
        let mut child = Command::new("sh")
            .args(["-c", "trap '' INT; exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_iopulse"))
            .args(["merge", &a, &b, "--force", "--quiet", "--output-format", "json"])
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        assert!(child.try_wait().unwrap().is_none(), "merge did not block on the full pipe");
        kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let sent = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if sent.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("merge still running 10 s after {signal}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        drop(read_end);
        assert_eq!(status.code(), Some(code), "{signal}: {status:?}");
    }
}

/// Errors reaped in one batch past the limit, or in flight in another worker, used to be
/// counted too (6, 9 or 11 for `--max-errors 5`); and blocks of I/Os abandoned in flight
/// when the run stopped were counted as covered.
#[test]
fn max_errors_counts_exactly_n_on_every_engine() {
    for engine in ["sync", "libaio", "io_uring", "mmap"] {
        if !engine_available(engine) {
            eprintln!("SKIP: --max-errors on {engine}: the engine is not available");
            continue;
        }
        let Some((_fs, f)) = root::sparse_on_full_tmpfs("--max-errors on a full tmpfs") else { return };
        let out = temp_dir();
        let json = path_str(&out.path().join("r.json"));
        let (code, stdout, stderr) = run(&[
            &f,
            "--engine",
            engine,
            "--queue-depth",
            "16",
            "--threads",
            "2",
            "--write-percent",
            "100",
            "--duration",
            "0",
            "--max-errors",
            "5",
            "--json",
            &json,
        ]);
        assert_eq!(code, 1, "{engine}: {stderr}");
        let r = read_json(&json);
        assert_eq!(r["io_errors"]["total"], 5, "{engine}: {}", r["io_errors"]);
        assert_eq!(r["io_errors"]["kinds"][0]["count"], 5, "{engine}: {}", r["io_errors"]);
        assert!(stderr.contains("--max-errors 5 reached (5 I/Os failed)"), "{engine}: {stderr}");
        assert!(stdout.contains("5 I/Os failed (--max-errors 5)"), "{engine}: {stdout}");
        let written = u64_at(&r, &["write", "ops"]);
        assert_eq!(written, 2048, "{engine}: the 8 MiB that fit, in 4 KiB blocks");
        assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), written, "{engine}: only written blocks are covered");
    }
}

#[test]
fn mmap_writes_on_a_full_filesystem_say_enospc() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("mmap ENOSPC") else { return };
    let (code, _, stderr) = run(&[&f, "--engine", "mmap", "--write-percent", "100", "--duration", "0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains(&format!("write {f} at offset ")), "{stderr}");
}

/// Blocks smaller than a page: the first write into a page that cannot be allocated
/// faults; the handler used to leave an anonymous page there, so the other writes into
/// that page "succeeded" without reaching the file (2,048 failures reported of 16,384).
#[test]
fn mmap_never_counts_a_write_into_a_page_it_could_not_allocate() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("mmap sub-page writes on a full tmpfs") else { return };
    let out = temp_dir();
    let json = path_str(&out.path().join("r.json"));
    let (code, _, stderr) = run(&[
        &f,
        "--engine",
        "mmap",
        "--block-size",
        "512",
        "--write-percent",
        "100",
        "--duration",
        "0",
        "--continue-on-error",
        "--json",
        &json,
    ]);
    assert_eq!(code, 1, "{stderr}");
    let r = read_json(&json);
    let written = u64_at(&r, &["write", "ops"]);
    let failed = r["io_errors"]["total"].as_u64().unwrap();
    // 16 MiB in 512-byte blocks; 8 MiB of them fit.
    assert_eq!((written, failed), (16384, 16384), "{}", r["io_errors"]);
    assert_eq!(r["io_errors"]["kinds"][0]["errno"], "ENOSPC", "{}", r["io_errors"]);
    assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), written);
}

#[test]
fn coverage_counts_only_blocks_whose_io_succeeded() {
    let Some((_fs, f)) = root::sparse_on_full_tmpfs("coverage of failed writes") else { return };
    let out = temp_dir();
    let json = path_str(&out.path().join("r.json"));
    let (code, _, stderr) =
        run(&[&f, "--write-percent", "100", "--duration", "0", "--continue-on-error", "--json", &json]);
    assert_eq!(code, 1, "errors were met: {stderr}");
    let r = read_json(&json);
    let written = u64_at(&r, &["write", "ops"]);
    let failed = r["io_errors"]["total"].as_u64().unwrap();
    assert!(failed > 0 && written > 0, "some writes failed, some fitted: {written} / {failed}");
    assert_eq!(written + failed, 4096, "every block was tried once");
    assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), written, "only the written blocks are covered");
}

/// A host name `a/../../b` (set in a UTS namespace of the test's own) used to turn
/// `sub/t.{host}.dat` into `sub/t.a/../../b.dat`, two directories up.
#[test]
fn a_hostile_host_name_stays_inside_the_directory() {
    if !root::is_root() {
        eprintln!("SKIP: {{host}} with a hostile host name: needs root for a UTS namespace");
        return;
    }
    let dir = temp_dir();
    let sub = dir.path().join("sub");
    // The directories a naive substitution would climb through.
    std::fs::create_dir_all(sub.join("t.a")).unwrap();
    std::fs::create_dir_all(sub.join("r.a")).unwrap();
    let target = path_str(&sub.join("t.{host}.dat"));
    let json = path_str(&sub.join("r.{host}.json"));
    if !Command::new("unshare").args(["--uts", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("SKIP: {{host}} with a hostile host name: unshare --uts is not available");
        return;
    }
    let script = "printf %s 'a/../../b' > /proc/sys/kernel/hostname && exec \"$0\" \"$@\"";
    let out = Command::new("unshare")
        .args(["--uts", "sh", "-c", script, env!("CARGO_BIN_EXE_iopulse")])
        .args([&target, "--file-size", "1m", "--duration", "100ms", "--quiet", "--json", &json])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.path().join("b.dat").exists() && !dir.path().join("b.json").exists(), "escaped the directory");
    let mut names: Vec<String> =
        std::fs::read_dir(&sub).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["r.a", "r.a_.._.._b.json", "t.a", "t.a_.._.._b.dat"]);
}
