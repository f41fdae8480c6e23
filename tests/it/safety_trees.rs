//! Metadata trees touch only what is theirs (docs/safety.md, "Metadata trees"): an entry
//! with one of iopulse's names that is a link, a mount point or a hard-linked file is never
//! followed, entered or removed, a run on such a tree is refused before anything is
//! touched, and a second run on a tree in use is refused naming the first. Each case here
//! once deleted or overwrote files outside the tree.

use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Bytes, inode and modification time of every file in `dir`, by name.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>, u64, i64, i64)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let m = std::fs::metadata(&p).unwrap();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
                m.ino(),
                m.mtime(),
                m.mtime_nsec(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A directory of someone else's files named as a tree's files are (f0, f1, ...).
fn foreign_dir(at: &Path) -> std::path::PathBuf {
    let d = at.join("foreign");
    std::fs::create_dir(&d).unwrap();
    for i in 0..6 {
        std::fs::write(d.join(format!("f{i}")), format!("someone else's file {i}\n")).unwrap();
    }
    d
}

/// A run on the tree `kept_tree` makes (30 files, 3 directories) with `phases`: exit code
/// and stderr.
fn run_on_tree(root: &Path, phases: &str) -> (i32, String) {
    let (code, _, stderr) =
        run(&[&path_str(root), "--files", "30", "--dirs-per-dir", "3", "--depth", "1", "--meta-phases", phases]);
    (code, stderr)
}

/// A tree of 30 files in 3 directories, kept.
fn kept_tree(root: &Path) {
    run_ok(&[
        &path_str(root),
        "--files",
        "30",
        "--dirs-per-dir",
        "3",
        "--depth",
        "1",
        "--meta-phases",
        "create",
        "--keep-tree",
        "--quiet",
    ]);
    assert!(root.join("d0").is_dir());
}

#[test]
fn a_subdirectory_replaced_by_a_link_is_never_followed_and_the_run_is_refused() {
    let dir = temp_dir();
    let (root, foreign) = (dir.path().join("tree"), foreign_dir(dir.path()));
    kept_tree(&root);
    std::fs::remove_dir_all(root.join("d0")).unwrap();
    std::os::unix::fs::symlink(&foreign, root.join("d0")).unwrap();
    let before = files_of(&foreign);
    for phases in ["create,unlink", "stat", "append,write"] {
        let (code, _, stderr) =
            run(&[&path_str(&root), "--files", "30", "--dirs-per-dir", "3", "--depth", "1", "--meta-phases", phases]);
        assert_eq!(code, 2, "{phases}: {stderr}");
        assert!(stderr.contains("d0: a symbolic link") && stderr.contains("leaves them alone"), "{phases}: {stderr}");
        assert_eq!(
            files_of(&foreign),
            before,
            "{phases}: the foreign files are byte-identical, same inodes and mtimes"
        );
    }
    assert!(root.join("d0").symlink_metadata().unwrap().file_type().is_symlink(), "the link is left");
}

#[test]
fn a_file_replaced_by_a_link_or_a_hard_link_is_never_written_through() {
    let dir = temp_dir();
    let (root, foreign) = (dir.path().join("tree"), foreign_dir(dir.path()));
    kept_tree(&root);
    let victim = std::fs::read_dir(root.join("d1")).unwrap().next().unwrap().unwrap().path();
    std::fs::remove_file(&victim).unwrap();
    std::os::unix::fs::symlink(foreign.join("f1"), &victim).unwrap();
    let before = files_of(&foreign);
    let (code, stderr) = run_on_tree(&root, "append,write");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(": a symbolic link"), "{stderr}");
    assert_eq!(files_of(&foreign), before, "the file the link points to is unchanged");
    // A hard link to one of the tree's files: the tree's name and the other are one file.
    std::fs::remove_file(&victim).unwrap();
    let other = root.join("d2").read_dir().unwrap().next().unwrap().unwrap().path();
    let outside = dir.path().join("outside");
    std::fs::hard_link(&other, &outside).unwrap();
    let kept = std::fs::read(&outside).unwrap();
    let (code, stderr) = run_on_tree(&root, "append,unlink");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("a file with other hard links"), "{stderr}");
    assert_eq!(std::fs::read(&outside).unwrap(), kept, "the hard-linked file is unchanged");
    assert!(other.exists(), "and not unlinked");
}

#[test]
fn a_mount_point_in_a_tree_is_never_entered() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIP: a mount in a private mount namespace needs root");
        return;
    }
    let dir = temp_dir();
    let root = dir.path().join("tree");
    kept_tree(&root);
    // In a private mount namespace: a tmpfs over d2 holding a file named like the tree's,
    // then the run; the namespace (and its mount) ends with the shell.
    let script = r#"
mount --make-rprivate / && mount -t tmpfs -o size=1m iopulse-test "$1/d2" || exit 99
echo mounted > "$1/d2/f5"
"$0" "$1" --files 30 --dirs-per-dir 3 --depth 1 --meta-phases unlink 2>&1; echo "exit $?"
cat "$1/d2/f5"
"#;
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", script, env!("CARGO_BIN_EXE_iopulse"), &path_str(&root)])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(99) {
        eprintln!("SKIP: cannot mount in a private namespace here: {stdout}");
        return;
    }
    assert!(stdout.contains("exit 2") && stdout.contains("d2: a mount point"), "{stdout}");
    assert!(stdout.trim_end().ends_with("mounted"), "the mounted filesystem's file is left: {stdout}");
    assert!(std::fs::read_dir(root.join("d2")).unwrap().count() > 0, "the tree's own d2 is intact under the mount");
}

#[test]
fn a_link_made_during_a_run_is_left_alone_by_its_cleanup_and_named() {
    let dir = temp_dir();
    let (root, foreign) = (dir.path().join("tree"), foreign_dir(dir.path()));
    let before = files_of(&foreign);
    let child = iopulse()
        .args([
            &path_str(&root),
            "--files",
            "30",
            "--dirs-per-dir",
            "3",
            "--depth",
            "1",
            "--meta-mix",
            "stat=100",
            "--duration",
            "3",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !root.join(".iopulse-tree").exists() || !root.join("d0").is_dir() {
        assert!(Instant::now() < deadline, "the tree was never made");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The run is in its window (the marker says ready once the set-up is done).
    while !std::fs::read_to_string(root.join(".iopulse-tree")).unwrap_or_default().contains("ready") {
        assert!(Instant::now() < deadline, "the set-up never finished");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::rename(root.join("d0"), dir.path().join("moved-d0")).unwrap();
    std::os::unix::fs::symlink(&foreign, root.join("d0")).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Its stats in d0 may fail now (the names under the link are not the tree's): the run
    // may end with that error; what matters is its cleanup.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(files_of(&foreign), before, "the cleanup never went through the link");
    assert!(!stdout.contains("nothing else was touched"), "{stdout}");
    assert!(stdout.contains("left alone") && stdout.contains("d0: a symbolic link"), "{stdout}");
    assert!(root.join("d0").symlink_metadata().unwrap().file_type().is_symlink(), "the link is left");
}

#[test]
fn a_second_run_on_a_tree_in_use_is_refused_naming_the_first() {
    let dir = temp_dir();
    let root = dir.path().join("tree");
    let mut first = iopulse()
        .args([&path_str(&root), "--files", "200", "--meta-mix", "stat=100", "--duration", "20", "--quiet"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(root.join(".iopulse-tree")).unwrap_or_default().contains("ready") {
        assert!(Instant::now() < deadline, "the first run never made its tree");
        std::thread::sleep(Duration::from_millis(10));
    }
    let files_before = walk_count(&root);
    let (code, _, stderr) = run(&[&path_str(&root), "--files", "200", "--meta-phases", "unlink"]);
    let holder = super::common::lock_holder_words(&root, first.id());
    let after_second = walk_count(&root);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(first.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let status = first.wait().unwrap();
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&format!("the tree is in use by another run {holder}")), "{stderr}");
    assert_eq!(after_second, files_before, "the second run touched nothing of the first's tree");
    assert_eq!(status.code(), Some(130));
    assert!(!root.exists(), "the first run removed its own tree");
}

/// Entries under `dir`, all levels.
fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            1 + if p.is_dir() { walk_count(&p) } else { 0 }
        })
        .sum()
}

#[test]
fn a_marker_that_is_a_fifo_never_holds_the_run() {
    let dir = temp_dir();
    let root = dir.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    nix::unistd::mkfifo(&root.join(".iopulse-tree"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut child = iopulse()
        .args([&path_str(&root), "--files", "10", "--duration", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_at_most(&mut child, Duration::from_secs(5), "a run on a tree whose marker is a FIFO");
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains(".iopulse-tree cannot be read (is a FIFO"), "{err}");
}
