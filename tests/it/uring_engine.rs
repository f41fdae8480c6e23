//! `--engine io_uring` through the real binary: the fallbacks and errors a user
//! sees, depths from 1 to 4096, SQPOLL and --no-register. Data placement is in
//! engine_conformance.rs; short I/O at end of file is a unit test of the engine.
//!
//! Fallbacks the kernel here does not provoke are simulated with the test-only
//! IOPULSE_TEST_URING_FAULTS variable (docs/engines.md).

use crate::common::*;
use std::time::{Duration, Instant};

const FAULTS_ENV: &str = "IOPULSE_TEST_URING_FAULTS";

/// Whether the binary under test injects faults: it does in debug builds only (`cargo
/// test`, the README's test command); a release build never reads the variable.
fn faults_compiled_in(test: &str) -> bool {
    if !cfg!(debug_assertions) {
        eprintln!("SKIP {test}: fault injection is compiled into debug builds only (run `cargo test`)");
    }
    cfg!(debug_assertions)
}

/// Runs iopulse with the fault variable set; returns (exit code, stdout, stderr).
fn run_with_faults(faults: &str, args: &[&str]) -> (i32, String, String) {
    run_command(iopulse().env(FAULTS_ENV, faults).args(args))
}

#[test]
fn iopoll_without_poll_queues_fails_fast_with_the_way_out() {
    if !engine_available("io_uring") {
        return;
    }
    // /tmp is ext4 on a virtio disk, which has no poll queues.
    let dir = tempfile::Builder::new().prefix("iopulse-test-").tempdir_in("/tmp").unwrap();
    let f = path_str(&zero_file(dir.path(), "p.dat", 1 << 20));
    let started = Instant::now();
    let (code, stdout, stderr) = run(&[
        "--engine",
        "io_uring",
        &f,
        "--direct",
        "--strict-direct",
        "--iopoll",
        "--random",
        "--queue-depth",
        "32",
        "--duration",
        "60s",
    ]);
    let took = started.elapsed();
    if stderr.contains("O_DIRECT refused") {
        eprintln!("SKIP: /tmp refuses O_DIRECT here: {stderr}");
        return;
    }
    assert_eq!(code, 1, "stderr: {stderr}\nstdout: {stdout}");
    // It fails before its window: well under its 60 s, however busy the machine is (a bound
    // of 3 s against a 10 s duration left a loaded machine little room to start the process).
    assert!(took < Duration::from_secs(20), "took {took:?}: it must stop at once, not run out the duration");
    assert!(stderr.contains("--iopoll") && stderr.contains("no poll queues"), "{stderr}");
    assert!(stderr.contains("poll_queues") && stderr.contains(&f), "{stderr}");
    assert!(!stdout.contains("IOPS"), "no report of a run that never ran: {stdout}");
}

#[test]
fn iopoll_without_direct_is_a_usage_error() {
    let (code, _, stderr) = run(&["--engine", "io_uring", "/nonexistent/x", "--iopoll"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--iopoll") && stderr.contains("--direct"), "{stderr}");
    let (code, _, stderr) = run(&["/nonexistent/x", "--sqpoll", "--direct"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--sqpoll") && stderr.contains("--engine io_uring"), "{stderr}");
}

#[test]
fn unavailable_io_uring_names_the_cause_and_suggests_other_engines() {
    if !faults_compiled_in("unavailable_io_uring_names_the_cause_and_suggests_other_engines") {
        return;
    }
    for (faults, cause) in [
        ("setup:ENOSYS", "does not provide io_uring"),
        ("setup:EPERM,disabled:0", "seccomp"),
        ("setup:EPERM,disabled:2", "kernel.io_uring_disabled = 2"),
    ] {
        let dir = temp_dir();
        let f = path_str(&dir.path().join("u.dat"));
        let (code, stdout, stderr) =
            run_with_faults(faults, &["--engine", "io_uring", &f, "--file-size", "64k", "--duration", "1"]);
        assert_eq!(code, 1, "{faults}: {stderr}");
        assert!(stderr.contains(cause), "{faults}: {stderr}");
        assert!(stderr.contains("--engine libaio") && stderr.contains("--engine sync"), "{faults}: {stderr}");
        assert!(stdout.is_empty(), "{faults}: {stdout}");
        assert!(!dir.path().join("u.dat").exists(), "{faults}: the file this run created must be removed");
    }
}

#[test]
fn refused_setup_flags_fall_back_and_say_so_once() {
    if !faults_compiled_in("refused_setup_flags_fall_back_and_say_so_once") {
        return;
    }
    if !engine_available("io_uring") {
        return;
    }
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    let args = [
        "--engine",
        "io_uring",
        &f,
        "--file-size",
        "1m",
        "--duration",
        "0",
        "--threads",
        "2",
        "--queue-depth",
        "8",
        "--output-format",
        "json",
    ];
    let (code, stdout, stderr) = run_with_faults("refuse:DEFER_TASKRUN", &args);
    assert_eq!(code, 0, "{stderr}");
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["engine"]["setup"]["setup_flags"], "SINGLE_ISSUER|COOP_TASKRUN|TASKRUN_FLAG");
    assert_eq!(r["engine"]["setup"]["refused_flags"], "DEFER_TASKRUN");
    assert_eq!(stderr.matches("refused IORING_SETUP_DEFER_TASKRUN").count(), 1, "once for 2 workers: {stderr}");
    assert_eq!(r["notes"].as_array().unwrap().iter().filter(|n| n.as_str().unwrap().contains("DEFER")).count(), 1);
    assert_eq!(u64_at(&r, &["read", "ops"]), 256);

    // Without any refusal, all four flags are used.
    let r = run_json(&args[..args.len() - 2]);
    assert_eq!(r["engine"]["setup"]["setup_flags"], "DEFER_TASKRUN|SINGLE_ISSUER|COOP_TASKRUN|TASKRUN_FLAG");
    assert_eq!(r["engine"]["setup"]["registered_buffers"], "true");
    assert_eq!(r["engine"]["setup"]["registered_files"], "true");
}

#[test]
fn refused_registration_falls_back_to_plain_io_and_data_still_lands() {
    if !faults_compiled_in("refused_registration_falls_back_to_plain_io_and_data_still_lands") {
        return;
    }
    if !engine_available("io_uring") {
        return;
    }
    let dir = temp_dir();
    let bs = 4096usize;
    let f = zero_file(dir.path(), "r.dat", 128 * bs as u64);
    let fs = path_str(&f);
    let args = write_pass_args("io_uring", &[&fs], &["--random", "--queue-depth", "16", "--output-format", "json"]);
    let (code, stdout, stderr) = run_with_faults("register_buffers:ENOMEM", &args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("registering the slot buffers failed").count(), 1, "{stderr}");
    assert!(stderr.contains("ulimit -l"), "{stderr}");
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(r["engine"]["setup"]["registered_buffers"].as_str().unwrap().starts_with("false (refused: ENOMEM"));
    assert_blocks_hold_their_offsets(&f, bs, 128, "register_buffers:ENOMEM");
}

/// The real thing, where it can be provoked: without CAP_IPC_LOCK, a locked-memory
/// limit below the buffers makes the kernel refuse the registration with ENOMEM.
#[test]
fn small_memlock_limit_makes_registration_fall_back() {
    if !engine_available("io_uring") {
        return;
    }
    let has = |tool: &str| std::process::Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !has("setpriv") || !has("prlimit") {
        eprintln!("SKIP: setpriv or prlimit is missing");
        return;
    }
    let dir = temp_dir();
    let f = path_str(&dir.path().join("m.dat"));
    let out = std::process::Command::new("setpriv")
        .args(["--bounding-set=-ipc_lock", "prlimit", "--memlock=65536:65536", "--"])
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .args([
            "--engine",
            "io_uring",
            &f,
            "--file-size",
            "4m",
            "--block-size",
            "64k",
            "--queue-depth",
            "64",
            "--duration",
            "0",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && (stderr.contains("setpriv") || stderr.contains("prlimit")) {
        eprintln!("SKIP: cannot drop CAP_IPC_LOCK or set the limit here: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let registered = r["engine"]["setup"]["registered_buffers"].as_str().unwrap();
    if registered == "true" {
        eprintln!("SKIP: the kernel did not account registered buffers against RLIMIT_MEMLOCK here");
        return;
    }
    assert!(registered.starts_with("false (refused: ENOMEM"), "{registered}");
    assert!(stderr.contains("registering the slot buffers failed"), "{stderr}");
    assert_eq!(u64_at(&r, &["read", "ops"]), 64);
}

#[test]
fn queue_depths_from_1_to_4096_cover_every_block_once() {
    if !engine_available("io_uring") {
        return;
    }
    for (depth, direct) in [("1", false), ("4096", true), ("4096", false)] {
        let mut extra = vec!["--random", "--queue-depth", depth];
        if direct {
            extra.push("--direct");
        }
        let r = write_each_block_once("io_uring", 4096, 8192, &extra, &format!("depth {depth} direct {direct}"));
        assert_eq!(u64_at(&r, &["engine", "effective_queue_depth"]), depth.parse::<u64>().unwrap());
    }
}

#[test]
fn sqpoll_and_no_register_runs_move_the_same_data() {
    if !engine_available("io_uring") {
        return;
    }
    for extra in [&["--sqpoll"][..], &["--sqpoll-cpu", "0"], &["--no-register"], &["--no-register", "--sqpoll"]] {
        let args = [&["--queue-depth", "16"][..], extra].concat();
        let r = write_each_block_once("io_uring", 4096, 512, &args, &format!("{extra:?}"));
        let setup = &r["engine"]["setup"];
        let flags = setup["setup_flags"].as_str().unwrap();
        if extra.iter().any(|a| a.starts_with("--sqpoll")) {
            assert!(flags.contains("SQPOLL") && !flags.contains("DEFER_TASKRUN"), "{extra:?}: {flags}");
        }
        if extra.contains(&"--sqpoll-cpu") {
            assert!(flags.contains("SQ_AFF"), "{flags}");
        }
        if extra.contains(&"--no-register") {
            assert_eq!(setup["registered_buffers"], "false (--no-register)");
            assert_eq!(setup["registered_files"], "false (--no-register)");
            assert_eq!(setup["registered_ring_fd"], "false");
        }
    }
}

/// When an io_uring run exits, the files it used are closed: a block device it wrote to
/// can be opened exclusively at once (the next run on it is not refused as "in use"),
/// and a filesystem it ran on can be unmounted at once. Before the engine unregistered
/// its files itself, the ring's teardown closed them in a kernel worker some 30 ms after
/// the process had gone, and 17 of 20 back-to-back runs on a loop device were refused.
#[test]
fn files_are_closed_when_an_io_uring_run_exits() {
    use std::os::unix::fs::OpenOptionsExt;
    if !engine_available("io_uring") {
        return;
    }
    let what = "io_uring releases its files at exit";
    if let Some(dev) = crate::common::root::loop_device(16 << 20, crate::common::root::LoopOptions::default(), what) {
        for round in 0..5 {
            let (code, _, stderr) = run(&[
                &dev.path,
                "--force",
                "--engine",
                "io_uring",
                "--direct",
                "--write-percent",
                "100",
                "--queue-depth",
                "8",
                "--duration",
                "0.1",
                "--quiet",
            ]);
            assert_eq!(code, 0, "round {round}: {stderr}");
            let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(&dev.path);
            assert!(opened.is_ok(), "round {round}: the device is still claimed after the run exited: {opened:?}");
        }
    }
    if let Some(mount) = crate::common::root::mount_tmpfs("16m", "", what) {
        let f = path_str(&mount.path().join("f.dat"));
        for round in 0..5 {
            let (code, _, stderr) = run(&[
                &f,
                "--file-size",
                "4m",
                "--engine",
                "io_uring",
                "--write-percent",
                "50",
                "--duration",
                "0.1",
                "--quiet",
            ]);
            assert_eq!(code, 0, "round {round}: {stderr}");
            // Unmount and mount again: a file still open would make umount fail (EBUSY).
            let out = std::process::Command::new("umount").arg(mount.path()).output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: umount right after the run: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let out = std::process::Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
                .arg(mount.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "mount again: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
