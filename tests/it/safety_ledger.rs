//! The ledger (docs/safety.md, "The ledger"): every path a command touches is judged
//! before anything happens, whatever the feature that asks for it. Each case here once
//! wrote where it must not: a record renamed over /dev/null, a file created in /dev, the
//! command's own input overwritten with benchmark data, an HTML page or a chart written
//! over a benchmark's target. Device paths are tried in a private mount namespace, on a
//! tmpfs mounted over /dev with nodes of its own: the machine's /dev is never reached.

use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a file is now, to tell it was not touched: its bytes, inode and modification time.
fn state_of(path: &Path) -> (Vec<u8>, u64, i64, i64) {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (std::fs::read(path).unwrap(), meta.ino(), meta.mtime(), meta.mtime_nsec())
}

/// Runs `script` (sh, with "$0" the iopulse binary) in a private mount namespace where
/// /dev is a fresh tmpfs holding null, zero, stdout and stderr: (stdout, stderr, exit
/// code of sh). `None` (said) without root or unshare.
fn in_private_dev(script: &str, cwd: &Path) -> Option<(String, String, i32)> {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIP: a private /dev needs root");
        return None;
    }
    let setup = "mount --make-rprivate / && mount -t tmpfs -o size=1m,mode=755 iopulse-test-dev /dev \
        && mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 \
        && ln -s /proc/self/fd/1 /dev/stdout && ln -s /proc/self/fd/2 /dev/stderr && ln -s /proc/self/fd /dev/fd";
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &format!("{setup} || exit 99\n{script}"), env!("CARGO_BIN_EXE_iopulse")])
        .current_dir(cwd)
        .output();
    match out {
        Ok(o) if o.status.code() != Some(99) && !String::from_utf8_lossy(&o.stderr).contains("unshare failed") => {
            Some((
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
                o.status.code().unwrap_or(-1),
            ))
        }
        other => {
            eprintln!("SKIP: a private /dev cannot be made here: {other:?}");
            None
        }
    }
}

#[test]
fn a_verify_state_record_on_a_device_or_a_stream_is_refused_and_the_node_stays() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("j.toml"), "[w]\ntargets = [\"t2.dat\"]\nverify-state = \"/dev/null\"\n").unwrap();
    // Each command's exit code, then what /dev/null is, and whether a target was created.
    let script = r#"
for p in /dev/null /dev/stdout /dev/stderr; do
  "$0" t.dat --file-size 1m --write-percent 100 --verify --fdatasync-every 8 --verify-state "$p" --duration 1 --quiet >/dev/null 2>>err.txt
  echo "exit $?"
done
"$0" run j.toml --file-size 1m --write-percent 100 --verify --fdatasync-every 8 --duration 1 --quiet >/dev/null 2>>err.txt
echo "exit $?"
stat -c 'null is %F %t:%T' /dev/null
ls t.dat t2.dat 2>/dev/null
cat err.txt
"#;
    let Some((stdout, _, _)) = in_private_dev(script, dir.path()) else { return };
    assert_eq!(stdout.matches("exit 2").count(), 4, "every record on a device or a stream is refused: {stdout}");
    assert!(stdout.contains("null is character special file 1:3"), "/dev/null is still the device: {stdout}");
    assert!(!stdout.contains("t.dat"), "no target was created: {stdout}");
    assert_eq!(stdout.matches("--verify-state /dev/").count(), 4, "each refusal names the flag and path: {stdout}");
}

#[test]
fn no_file_and_no_tree_is_created_in_dev_by_any_way_in() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("mem.fio"), "[j]\nfilename=/dev/mem\nrw=write\nsize=64k\n").unwrap();
    let script = r#"
"$0" /dev/newfile --file-size 1m --write-percent 100 --duration 1 2>>err.txt; echo "exit $?"
"$0" run mem.fio 2>>err.txt; echo "exit $?"
"$0" /dev/tree --files 10 --duration 1 2>>err.txt; echo "exit $?"
"$0" man --dir /dev 2>>err.txt; echo "exit $?"
"$0" man --dir /dev/man1 2>>err.txt; echo "exit $?"
echo "dev holds: $(ls /dev | tr '\n' ' ')"
mkdir /dev/shm && mount -t tmpfs -o size=4m shm /dev/shm || exit 98
"$0" /dev/shm/t.dat --file-size 1m --duration 0.2 --quiet 2>>err.txt; echo "shm exit $?"
cat err.txt
"#;
    let Some((stdout, _, _)) = in_private_dev(script, dir.path()) else { return };
    assert_eq!(stdout.matches("exit 2").count(), 5, "{stdout}");
    assert!(stdout.contains("dev holds: fd null stderr stdout zero \n"), "nothing was created in /dev: {stdout}");
    assert!(stdout.contains("TARGET /dev/newfile does not exist, and would be created"), "{stdout}");
    assert!(stdout.contains("/dev/mem does not exist, and would be created"), "{stdout}");
    assert!(stdout.contains("--files /dev/tree is in the device directory"), "{stdout}");
    assert!(stdout.contains("--dir /dev is under /dev"), "{stdout}");
    // A filesystem of its own mounted under /dev for files (a tmpfs at /dev/shm) is a place
    // for a target like any other.
    assert!(stdout.contains("shm exit 0"), "{stdout}");
}

/// An iolog v2 of one write, naming `file`.
fn iolog_naming(file: &Path) -> String {
    let f = file.display();
    format!("fio version 2 iolog\n{f} add\n{f} open\n{f} write 0 4096\n{f} close\n")
}

#[test]
fn the_command_s_own_input_is_never_its_target() {
    let dir = temp_dir();
    let d = dir.path();
    let log = d.join("T.log");
    std::fs::write(&log, iolog_naming(&log)).unwrap();
    let fio = d.join("self.fio");
    std::fs::write(&fio, "[job]\nfilename=self.fio\nrw=write\nsize=64k\n").unwrap();
    let toml = d.join("self.toml");
    std::fs::write(&toml, "[global]\ntargets = [\"self.toml\"]\nwrite-percent = 100\nfile-size = \"64k\"\n[a]\n")
        .unwrap();
    let link = d.join("link.log");
    std::os::unix::fs::symlink(&log, &link).unwrap();
    let cases: Vec<(Vec<String>, &PathBuf, &str)> = vec![
        (vec!["replay".into(), path_str(&log), path_str(&log)], &log, "the trace this command replays"),
        // The iolog names itself: its one file is the target.
        (vec!["replay".into(), path_str(&log)], &log, "the trace this command replays"),
        // Through a symlink to the trace.
        (vec!["replay".into(), path_str(&log), path_str(&link)], &log, "the trace this command replays"),
        (vec!["run".into(), "self.fio".into()], &fio, "an input this command reads"),
        (vec!["run".into(), "self.toml".into(), "--duration".into(), "1".into()], &toml, "an input this command reads"),
        (vec!["run".into(), "self.toml".into(), "--dry-run".into()], &toml, "an input this command reads"),
    ];
    for (args, input, what) in cases {
        let before = state_of(input);
        let (code, stdout, stderr) = run_command(iopulse().args(&args).current_dir(d));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("TARGET") && stderr.contains(what), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(state_of(input), before, "{args:?}: the input is unchanged, bytes, inode and mtime");
    }
}

#[test]
fn a_blktrace_given_as_its_own_target_is_refused() {
    let dir = temp_dir();
    // One record as the kernel writes it (`struct blk_io_trace`): a 4 KiB write queued.
    let mut rec = Vec::new();
    rec.extend_from_slice(&0x6561_7407u32.to_le_bytes()); // magic | version 7
    rec.extend_from_slice(&0u32.to_le_bytes()); // sequence
    rec.extend_from_slice(&1_000_000u64.to_le_bytes()); // time
    rec.extend_from_slice(&8u64.to_le_bytes()); // sector
    rec.extend_from_slice(&4096u32.to_le_bytes()); // bytes
    rec.extend_from_slice(&((2u32 << 16) | 1).to_le_bytes()); // a write, queued
    rec.extend_from_slice(&1234u32.to_le_bytes()); // pid
    rec.extend_from_slice(&((7u32 << 20) | 3).to_le_bytes()); // device 7:3
    rec.extend_from_slice(&0u32.to_le_bytes()); // cpu
    rec.extend_from_slice(&0u16.to_le_bytes()); // error
    rec.extend_from_slice(&0u16.to_le_bytes()); // pdu length
    let trace = dir.path().join("sda.blktrace.0");
    std::fs::write(&trace, &rec).unwrap();
    let before = state_of(&trace);
    let (code, _, stderr) = run(&["replay", &path_str(&trace), &path_str(&trace), "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("TARGET") && stderr.contains("the trace this command replays"), "{stderr}");
    assert_eq!(state_of(&trace), before, "the trace is unchanged");
}

#[test]
fn an_html_page_or_a_chart_never_lands_on_a_target_a_result_names() {
    let dir = temp_dir();
    let d = dir.path();
    let target = d.join("f.dat");
    let json = d.join("r.json");
    run_ok(&[&path_str(&target), "--file-size", "1m", "--duration", "1", "--quiet", "--json", &path_str(&json)]);
    let link = d.join("page.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let charts = d.join("charts");
    std::fs::create_dir(&charts).unwrap();
    std::os::unix::fs::symlink(&target, charts.join("latency-percentiles.svg")).unwrap();
    let before = state_of(&target);
    for args in [
        vec!["report".to_string(), path_str(&json), "--html".into(), path_str(&target)],
        vec!["report".to_string(), path_str(&json), "--html".into(), path_str(&link)],
        vec!["plot".to_string(), path_str(&json), "--out".into(), path_str(&charts)],
    ] {
        let (code, _, stderr) = run_command(iopulse().args(&args));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("a target of the run") && stderr.contains("r.json"), "{args:?}: {stderr}");
        assert_eq!(state_of(&target), before, "{args:?}: the target is unchanged");
    }
    // Elsewhere, both are written.
    run_ok(&["report", &path_str(&json), "--html", &path_str(&d.join("ok.html"))]);
    assert!(std::fs::read_to_string(d.join("ok.html")).unwrap().contains("<html"));
}

#[test]
fn dry_run_prints_every_path_and_what_would_happen_and_touches_nothing() {
    let dir = temp_dir();
    let d = dir.path();
    std::fs::write(d.join("old.dat"), vec![1u8; 65536]).unwrap();
    std::fs::write(
        d.join("j.toml"),
        "[global]\nduration = \"1s\"\n[a]\ntargets = [\"a.dat\"]\nwrite-percent = 100\n[b]\ntargets = [\"old.dat\"]\n",
    )
    .unwrap();
    let listing = |d: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let before = listing(d);
    let old = state_of(&d.join("old.dat"));
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec![
                "new.dat",
                "--file-size",
                "1m",
                "--write-percent",
                "30",
                "--json",
                "r.json",
                "--csv",
                "r.csv",
                "--plot",
                "p",
                "--dry-run",
            ],
            vec![
                "create   new.dat",
                "TARGET: created and laid out, then read and written in place",
                "replace  r.json",
                "append   r.csv",
                "mkdir    p",
                "p/latency-percentiles.svg",
            ],
        ),
        (
            vec!["run", "j.toml", "--json", "jobs.json", "--dry-run"],
            vec![
                "read     j.toml",
                "TARGET of job [a]: created and laid out, then read and written in place",
                "old.dat",
                "TARGET of job [b]: a file of 64 KiB now, read in place",
                "replace  jobs.json",
            ],
        ),
        (
            vec!["sweep", "old.dat", "--queue-depth", "1,2", "--csv", "s.csv", "--dry-run"],
            vec!["append   s.csv", "s.csv.journal", "a line per finished run"],
        ),
        (vec!["tree", "--files", "10", "--dry-run"], vec!["tree     tree", "only the names iopulse gave are removed"]),
        (vec!["man", "--dir", "m", "--dry-run"], vec!["mkdir    m", "m/iopulse.1", "m/iopulse-run.1"]),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = run_command(iopulse().args(&args).current_dir(d));
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stdout.starts_with("--dry-run: nothing was touched"), "{args:?}: {stdout}");
        for e in expected {
            assert!(stdout.contains(e), "{args:?}: `{e}` is not in:\n{stdout}");
        }
        assert_eq!(listing(d), before, "{args:?}: nothing was created");
        assert_eq!(state_of(&d.join("old.dat")), old, "{args:?}: nothing was written");
    }
    // A refusal is still a refusal.
    let (code, stdout, stderr) =
        run_command(iopulse().args(["old.dat", "--json", "old.dat", "--dry-run"]).current_dir(d));
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("--json old.dat is the run's own target"), "{stderr}");
}

#[test]
fn a_tree_root_that_is_a_link_a_kernel_interface_or_read_only_is_refused() {
    let dir = temp_dir();
    let d = dir.path();
    std::fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
    let (code, _, stderr) = run(&[&path_str(&d.join("link")), "--files", "10", "--duration", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--files") && stderr.contains("is a symbolic link to"), "{stderr}");
    assert_eq!(std::fs::read_dir(d.join("real")).unwrap().count(), 0, "nothing was made through the link");
    let (code, _, stderr) = run(&["/proc/iopulse-tree", "--files", "10", "--duration", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("kernel interface"), "{stderr}");
    // An output inside the tree the run makes and removes.
    let (code, _, stderr) =
        run(&[&path_str(&d.join("t")), "--files", "10", "--duration", "1", "--json", &path_str(&d.join("t/r.json"))]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("lands inside the tree"), "{stderr}");
    if let Some(ro) = root::mount_tmpfs("1m", "ro", "a read-only tree root") {
        let (code, _, stderr) = run(&[&path_str(&ro.path().join("t")), "--files", "10", "--duration", "1"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("read-only filesystem"), "{stderr}");
    }
}
