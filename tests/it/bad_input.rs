//! Every line of tests/it/bad_command_lines.txt is a bad command line: iopulse
//! must exit 2 with one line on stderr naming the flag, print nothing on
//! stdout, and leave the directory exactly as it was.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::Path;

fn listing(dir: &Path) -> BTreeSet<String> {
    walk(dir).into_iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn each_bad_command_line_exits_2_naming_the_flag_and_touches_nothing() {
    let corpus = include_str!("bad_command_lines.txt");
    let mut checked = 0;
    for line in corpus.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (expected, args) = line.split_once('\t').expect("expected<TAB>args");
        let dir = temp_dir();
        let file = dir.path().join("existing.dat");
        std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let (fifo, socket, _listener) = special_files(dir.path());
        let before = listing(dir.path());
        let mtime_before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| {
                a.replace("{dir}", &path_str(dir.path()))
                    .replace("{file}", &path_str(&file))
                    .replace("{sub}", &path_str(&dir.path().join("sub")))
                    .replace("{fifo}", &path_str(&fifo))
                    .replace("{socket}", &path_str(&socket))
            })
            .collect();
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run(&arg_refs);
        assert_eq!(code, 2, "{line}: exit {code}, stderr: {stderr}");
        assert!(stderr.contains(expected), "{line}: stderr does not name '{expected}': {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{line}: more than one line: {stderr}");
        // A huge value is echoed with an exponent (1.00e300), never as 300 digits.
        let longest_digits = stderr.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
        assert!(longest_digits <= 24, "{line}: a number of {longest_digits} digits: {stderr}");
        assert!(stdout.is_empty(), "{line}: stdout is not empty: {stdout}");
        assert_eq!(listing(dir.path()), before, "{line}: files were created");
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            mtime_before,
            "{line}: existing file modified"
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} lines checked");
}

/// A FIFO and a listening Unix socket in `dir` (the listener must stay alive).
fn special_files(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::os::unix::net::UnixListener) {
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(path_str(&fifo)).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path during the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    let socket = dir.join("socket");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    (fifo, socket, listener)
}

#[test]
fn help_lists_every_flag_with_examples() {
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--file-size",
        "--block-size",
        "--duration",
        "--read-percent",
        "--write-percent",
        "--random",
        "--threads",
        "--queue-depth",
        "--engine",
        "--direct",
        "--strict-direct",
        "--seed",
        "--output-format",
        "--json",
        "--quiet",
        "--force",
        "--csv",
        "--plot",
        "fio-json",
        "iopulse merge",
        "iopulse plot",
        "iopulse completions",
        "iopulse man",
        "--continue-on-error",
        "--max-errors",
        "--io-timeout",
        "--start-at",
        "{rank}",
        "{host}",
        "mpirun",
    ] {
        assert!(stdout.contains(flag), "--help does not mention {flag}");
    }
    assert!(stdout.contains("Examples:"), "--help has no examples");
}

/// Runs iopulse as `uid` (root dropping privileges) or as the current user.
fn run_as(uid: Option<u32>, args: &[&str]) -> (i32, String, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = iopulse();
    cmd.args(args);
    if let Some(uid) = uid {
        cmd.uid(uid).gid(uid);
    }
    let out = cmd.output().expect("run iopulse");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An unreadable target, and a target the user may not write for a write run, are
/// refused up front (exit 2, one line, nothing touched). As root, permission bits do
/// not apply: the runs are made as `nobody`.
#[test]
fn unreadable_and_unwritable_targets_are_refused_before_anything_is_touched() {
    use std::os::unix::fs::PermissionsExt;
    let uid = crate::common::root::is_root().then_some(65534);
    let dir = temp_dir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = dir.path().join("secret.dat");
    std::fs::write(&secret, vec![1u8; 1 << 20]).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readonly = dir.path().join("readonly.dat");
    std::fs::write(&readonly, vec![2u8; 1 << 20]).unwrap();
    std::fs::set_permissions(&readonly, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&readonly).unwrap();

    let (code, stdout, stderr) = run_as(uid, &[&path_str(&secret), "--duration", "0.1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("is not readable (Permission denied)"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");

    let (code, _, stderr) = run_as(uid, &[&path_str(&readonly), "--write-percent", "10", "--duration", "0.1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is not writable (Permission denied)") && stderr.contains("--write-percent 10"),
        "{stderr}"
    );
    // A read-only run of the same file is fine, and a new file in a directory the user
    // cannot write is refused.
    let (code, _, stderr) = run_as(uid, &[&path_str(&readonly), "--duration", "0.1", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(&readonly).unwrap(), before);
    if uid.is_some() {
        let (code, _, stderr) = run_as(uid, &[&path_str(&dir.path().join("new.dat")), "--duration", "0.1"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("cannot be created in"), "{stderr}");
        assert!(!dir.path().join("new.dat").exists());
    }
}

/// Root writes through permission bits, but not to a read-only mount or an immutable
/// file: those are refused for write runs (and for layouts) up front.
#[test]
fn read_only_mounts_and_immutable_files_are_refused_for_writes() {
    let Some(fs) = crate::common::root::mount_tmpfs("8m", "", "read-only mounts") else { return };
    let file = fs.path().join("data.dat");
    std::fs::write(&file, vec![3u8; 1 << 20]).unwrap();
    let remount = std::process::Command::new("mount").args(["-o", "remount,ro", &path_str(fs.path())]).status();
    if !remount.is_ok_and(|s| s.success()) {
        eprintln!("SKIP: read-only mounts: cannot remount a tmpfs read-only");
        return;
    }
    let (code, stdout, stderr) = run(&[&path_str(&file), "--write-percent", "100", "--duration", "0.1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("is not writable (Read-only file system)"), "{stderr}");
    let (code, _, stderr) = run(&[&path_str(&file), "--file-size", "2m", "--duration", "0.1"]);
    assert_eq!(code, 2, "a layout is a write too: {stderr}");
    assert!(stderr.contains("would be laid out"), "{stderr}");
    let (code, _, stderr) = run(&[&path_str(&fs.path().join("new.dat")), "--duration", "0.1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot be created in") && stderr.contains("Read-only file system"), "{stderr}");
    let (code, _, stderr) = run(&[&path_str(&file), "--duration", "0.1", "--quiet"]);
    assert_eq!(code, 0, "reads of a read-only mount are fine: {stderr}");

    // An immutable file on the (ext4) temporary directory.
    let dir = temp_dir();
    let frozen = dir.path().join("frozen.dat");
    std::fs::write(&frozen, vec![4u8; 1 << 20]).unwrap();
    let Some(_thaw) = crate::common::root::immutable(&frozen, "immutable files") else { return };
    let (code, _, stderr) = run(&[&path_str(&frozen), "--write-percent", "50", "--duration", "0.1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not writable (Operation not permitted)"), "{stderr}");
    assert_eq!(std::fs::read(&frozen).unwrap(), vec![4u8; 1 << 20]);
}
