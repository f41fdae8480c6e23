//! Limits are checked before anything is touched: a run that does not fit its memory
//! cgroup or `ulimit -v` is a usage error (not an OOM kill or an abort that leaves
//! its new file behind), a CPU that does not exist is refused before layout, and a
//! signal during set-up stops the run before its window opens.

use crate::common::root;
use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `iopulse ARGS` started inside `group`: its exit code and stderr.
fn run_in(group: &root::MemoryCgroup, args: &[&str]) -> (i32, String) {
    let mut cmd = iopulse();
    cmd.args(args);
    group.confine(&mut cmd);
    let (code, _, stderr) = run_command(&mut cmd);
    (code, stderr)
}

#[test]
fn a_run_larger_than_its_memory_cgroup_is_refused_before_its_file_exists() {
    let what = "memory cgroup limit";
    let Some(group) = root::MemoryCgroup::new(200 << 20, what) else { return };
    let dir = temp_dir();
    let target = dir.path().join("new.dat");
    let t = path_str(&target);
    // 4 x 128 x 1 MiB = 512 MiB of buffers on a queued engine.
    let (code, stderr) = run_in(
        &group,
        &[
            &t,
            "--engine",
            "libaio",
            "--threads",
            "4",
            "--queue-depth",
            "128",
            "--block-size",
            "1M",
            "--file-size",
            "16M",
            "--duration",
            "1",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cgroup") && stderr.contains(group.limit_file()) && stderr.contains("--threads"),
        "{stderr}"
    );
    assert!(!target.exists(), "no file was created");
    // A run that fits goes ahead inside the same group.
    let (code, stderr) = run_in(&group, &[&t, "--file-size", "4M", "--duration", "200ms", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn many_threads_under_ulimit_v_run_or_are_refused_never_abort() {
    let dir = temp_dir();
    let fits = path_str(&dir.path().join("fits.dat"));
    let too_big = dir.path().join("too_big.dat");
    let run_limited = |kib: u32, target: &str| {
        let script = format!("ulimit -v {kib} && exec \"$0\" \"$@\"");
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_iopulse"))
            .args([target, "--file-size", "16M", "--threads", "200", "--duration", "300ms", "--quiet"])
            .stdout(Stdio::null())
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // About 1 GB of address space: 200 threads fit (glibc's per-thread malloc arenas used to
    // reserve 64 MiB each and abort the run).
    let (code, stderr) = run_limited(1_000_000, &fits);
    assert_eq!(code, 0, "{stderr}");
    // About 600 MB: the stacks and histograms do not fit, which is said before the file exists.
    let (code, stderr) = run_limited(600_000, &path_str(&too_big));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("ulimit -v") && stderr.contains("--threads"), "{stderr}");
    assert!(!too_big.exists(), "no file left behind");
}

#[test]
fn a_cpu_that_does_not_exist_is_refused_before_layout() {
    if !engine_available("io_uring") {
        eprintln!("SKIP: --sqpoll-cpu: io_uring is not available");
        return;
    }
    let dir = temp_dir();
    let target = dir.path().join("new.dat");
    let (code, _, stderr) =
        run(&[&path_str(&target), "--engine", "io_uring", "--sqpoll-cpu", "4095", "--duration", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--sqpoll-cpu 4095") && stderr.contains("available"), "{stderr}");
    assert!(!target.exists(), "the target was not created");
}

#[test]
fn sigint_during_set_up_never_opens_the_window() {
    let dir = temp_dir();
    let target = zero_file(dir.path(), "t.dat", 1 << 20);
    let json = dir.path().join("r.json");
    // The workers are set up at once, then wait for --start-at 30 s away: the signal lands
    // in set-up for sure.
    let at = format!("@{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 30);
    let child = iopulse()
        .args([&path_str(&target), "--engine", "null", "--threads", "64", "--duration", "5", "--start-at", &at])
        .args(["--json", &path_str(&json)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Its handler first (a fixed 500 ms was not always enough for a child starved of CPU
    // to install it, and SIGINT's default action then ended it with no word): set-up lasts
    // until the start time 30 s away, so the signal still lands in it.
    assert!(wait_for_handler(child.id(), libc::SIGINT, Duration::from_secs(20)), "no SIGINT handler in 20 s");
    std::thread::sleep(Duration::from_millis(200));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("before the window opened"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("IOPS"), "no report of a window");
    assert!(!json.exists(), "no result for a run that never started");
}

#[test]
fn a_job_files_jobs_together_larger_than_its_memory_cgroup_are_refused_before_any_file_exists() {
    let what = "a job file in a memory cgroup";
    let Some(group) = root::MemoryCgroup::new(200 << 20, what) else { return };
    let dir = temp_dir();
    // Eight concurrent jobs of 64 x 1 MiB buffers each on a queued engine: 512 MiB together,
    // each of them alone well within the limit.
    let mut text = String::from(
        "[global]\nengine = \"libaio\"\nqueue-depth = 64\nblock-size = \"1M\"\nfile-size = \"16M\"\nduration = \"1s\"\n",
    );
    for j in 0..8 {
        text.push_str(&format!("[j{j}]\ntargets = [\"{}\"]\n", path_str(&dir.path().join(format!("j{j}.dat")))));
    }
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, text).unwrap();
    let (code, stderr) = run_in(&group, &["run", &path_str(&file)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cgroup") && stderr.contains(group.limit_file()), "{stderr}");
    for j in 0..8 {
        assert!(!dir.path().join(format!("j{j}.dat")).exists(), "no file was created (j{j})");
    }
}
