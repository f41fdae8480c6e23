//! `iopulse merge` reads only real result files, of a sane size, each once; and the
//! smaller safety items: `--max-errors N` counts exactly N on every engine, mmap says
//! ENOSPC when the filesystem is full.

mod common;
use common::root;
use common::*;
use std::time::Duration;

fn result_file(dir: &std::path::Path, name: &str) -> String {
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
    for other in [&a, &copy] {
        let (code, stdout, stderr) = run(&["merge", &a, other]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("same result") && stderr.contains("--allow-duplicates"), "{stderr}");
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
fn devices_fifos_and_huge_inputs_are_refused_at_once() {
    let dir = temp_dir();
    let a = result_file(dir.path(), "a");
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(300 << 20).unwrap();
    let dir_path = path_str(dir.path());
    for (input, word) in [
        ("/dev/zero".to_string(), "device"),
        (path_str(&fifo), "FIFO"),
        (path_str(&huge), "larger than"),
        (dir_path, "directory"),
        ("/proc/self/status".to_string(), "procfs"),
    ] {
        // A regression reads /dev/zero or waits on the FIFO for ever: the wait is bounded.
        let (code, stderr) = run_bounded(&["merge", &input, &a], Duration::from_secs(20));
        assert_eq!(code, 2, "{input}: {stderr}");
        assert!(stderr.contains(&input) && stderr.contains(word), "{stderr}");
    }
}

#[test]
fn max_errors_counts_exactly_n_on_every_engine() {
    for engine in ["sync", "libaio", "io_uring"] {
        if !engine_available(engine) {
            eprintln!("SKIP: --max-errors on {engine}: the engine is not available");
            continue;
        }
        let Some(fs) = root::mount_tmpfs("8m", "", "--max-errors on a full tmpfs") else { return };
        let f = fs.path().join("sparse.dat");
        std::fs::File::create(&f).unwrap().set_len(16 << 20).unwrap();
        let out = temp_dir();
        let json = path_str(&out.path().join("r.json"));
        let (code, _, stderr) = run(&[
            &path_str(&f),
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
        assert!(stderr.contains("--max-errors 5 reached (5 I/Os failed)"), "{engine}: {stderr}");
    }
}

#[test]
fn mmap_writes_on_a_full_filesystem_say_enospc() {
    let Some(fs) = root::mount_tmpfs("8m", "", "mmap ENOSPC") else { return };
    let f = fs.path().join("sparse.dat");
    std::fs::File::create(&f).unwrap().set_len(16 << 20).unwrap();
    let (code, _, stderr) = run(&[&path_str(&f), "--engine", "mmap", "--write-percent", "100", "--duration", "0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains(&path_str(&f)) && stderr.contains("offset"), "{stderr}");
}

#[test]
fn coverage_counts_only_blocks_whose_io_succeeded() {
    let Some(fs) = root::mount_tmpfs("8m", "", "coverage of failed writes") else { return };
    let f = fs.path().join("sparse.dat");
    std::fs::File::create(&f).unwrap().set_len(16 << 20).unwrap();
    let out = temp_dir();
    let json = path_str(&out.path().join("r.json"));
    let (code, _, stderr) =
        run(&[&path_str(&f), "--write-percent", "100", "--duration", "0", "--continue-on-error", "--json", &json]);
    assert_eq!(code, 1, "errors were met: {stderr}");
    let r = read_json(&json);
    let written = u64_at(&r, &["write", "ops"]);
    let failed = r["io_errors"]["total"].as_u64().unwrap();
    assert!(failed > 0 && written > 0, "some writes failed, some fitted: {written} / {failed}");
    assert_eq!(written + failed, 4096, "every block was tried once");
    assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), written, "only the written blocks are covered");
}
