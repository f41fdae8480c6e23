//! Metadata runs (`--files`): counts that add up against strace and the directory's own
//! listing, a mix's achieved shares, a million empty files on a tmpfs, a full filesystem
//! and one out of inodes (small ext4 on a loop device), the personalities on ext4 and
//! tmpfs, foreign directories refused, and a tree a signal interrupted made usable again.

use crate::common::root::{LoopOptions, loop_device, mount_device, mount_tmpfs, skip};
use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every path below `dir` (files and directories), relative.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

fn files_named_f(list: &[PathBuf]) -> usize {
    list.iter().filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('f'))).count()
}

/// The op kind's figures in phase `phase` of a result.
fn op<'a>(r: &'a Value, phase: &str, kind: &str) -> &'a Value {
    let p =
        r["phases"].as_array().unwrap().iter().find(|p| p["name"] == phase).unwrap_or_else(|| panic!("{phase}: {r}"));
    p["per_op"].as_array().unwrap().iter().find(|o| o["op"] == kind).unwrap_or_else(|| panic!("{kind}: {p}"))
}

fn ops(r: &Value, phase: &str, kind: &str) -> u64 {
    op(r, phase, kind)["ops"].as_u64().unwrap()
}

/// Runs iopulse under `strace -ff`; the JSON result and every traced line.
fn traced(dir: &Path, args: &[&str]) -> Option<(Value, Vec<String>)> {
    let calls = "openat,statx,unlink,unlinkat,renameat,mkdirat";
    let (r, threads) = strace_threads(dir, calls, args, "counts against strace")?;
    Some((r, threads.into_iter().flatten().collect()))
}

/// Successful calls of `call` on a tree file (`"…/fN"` or `"fN"`), with `flag` among the arguments.
fn count_calls(lines: &[String], call: &str, flag: &str) -> usize {
    lines
        .iter()
        .filter(|l| l.starts_with(&format!("{call}(")) && l.contains(flag) && !l.contains("= -1"))
        .filter(|l| {
            l.split('"')
                .nth(1)
                .and_then(|p| p.rsplit('/').next())
                .is_some_and(|n| n.len() > 1 && n.starts_with('f') && n[1..].bytes().all(|b| b.is_ascii_digit()))
        })
        .count()
}

#[test]
fn counts_add_up_against_strace_and_the_listing() {
    let dir = temp_dir();
    let tree = dir.path().join("tree");
    let t = path_str(&tree);
    let Some((r, lines)) = traced(
        dir.path(),
        &[&t, "--files", "500", "--depth", "1", "--threads", "2", "--meta-phases", "create,stat", "--keep-tree"],
    ) else {
        return;
    };
    // Each file created once (O_EXCL), and stat'ed once, as the JSON says and the listing shows.
    assert_eq!(count_calls(&lines, "openat", "O_CREAT|O_EXCL"), 500);
    assert_eq!(count_calls(&lines, "statx", ""), 500);
    assert_eq!((ops(&r, "create", "create"), ops(&r, "stat", "stat")), (500, 500));
    let list = listing(&tree);
    assert_eq!(files_named_f(&list), 500, "{list:?}");
    for i in [0u64, 7, 499] {
        assert!(tree.join(format!("d{}/f{i}", i % 10)).is_file(), "f{i} is in d{}", i % 10);
    }
    assert!(tree.join(".iopulse-tree").is_file());

    // The kept tree changed (files created): the next run removes it first, then makes its own.
    let Some((r, lines)) =
        traced(dir.path(), &[&t, "--files", "300", "--depth", "1", "--meta-phases", "create,unlink", "--keep-tree"])
    else {
        return;
    };
    assert_eq!(count_calls(&lines, "openat", "O_CREAT|O_EXCL"), 300);
    // 500 unlinked by the removal of the old tree, 300 by the unlink phase.
    assert_eq!(count_calls(&lines, "unlinkat", ", 0)") + count_calls(&lines, "unlink", ""), 800);
    assert_eq!(ops(&r, "unlink", "unlink"), 300);
    assert_eq!(files_named_f(&listing(&tree)), 0);
    assert_eq!(r["tree"]["removed_files"], 0, "--keep-tree removes nothing after the run");

    // Without --keep-tree: everything iopulse made goes, the root it created too.
    let r = run_json(&[&t, "--files", "300", "--depth", "1", "--meta-phases", "create,stat"]);
    assert_eq!(r["tree"]["removed_files"], 300);
    assert_eq!(r["tree"]["removed_directories"], 11);
    assert!(!tree.exists(), "the root iopulse created is removed");
}

#[test]
fn a_mix_achieves_its_shares_over_100k_operations() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("tree"));
    let r = run_json(&[
        &t,
        "--files",
        "2000",
        "--threads",
        "2",
        "--meta-mix",
        "create=30,stat=30,read=30,unlink=5,readdir=5",
        "--file-size-dist",
        "0:50,4k:50",
        "--ops",
        "100000",
    ]);
    let asked = [("create", 30.0), ("stat", 30.0), ("read", 30.0), ("unlink", 5.0), ("readdir", 5.0)];
    let total: u64 = asked.iter().map(|(k, _)| ops(&r, "mix", k)).sum();
    assert_eq!(total, 100_000, "{r}");
    assert_eq!(r["phases"][0]["ops"], 100_000);
    for (kind, share) in asked {
        let achieved = ops(&r, "mix", kind) as f64 * 100.0 / total as f64;
        assert!((achieved - share).abs() <= share * 0.02, "{kind}: asked {share}%, achieved {achieved}%");
        assert_eq!(op(&r, "mix", kind)["share_asked_percent"], share);
    }
    // Reads moved whole files: 0 or 4 KiB each.
    let read_bytes = op(&r, "mix", "read")["bytes"].as_u64().unwrap();
    assert_eq!(read_bytes % 4096, 0);
    assert!(read_bytes > 0 && read_bytes <= ops(&r, "mix", "read") * 4096);
    assert_eq!(r["stop_reason"], "ops");
    assert!(!dir.path().join("tree").exists());
}

#[test]
fn a_million_empty_files_are_created_and_removed_on_a_tmpfs() {
    let Some(mount) = mount_tmpfs("2G", "nr_inodes=1200000", "a million files on a tmpfs") else { return };
    let t = path_str(&mount.path().join("tree"));
    let r = run_json(&[&t, "--files", "1M", "--depth", "2", "--threads", "2", "--meta-phases", "create,unlink"]);
    assert_eq!(ops(&r, "create", "create"), 1_000_000);
    assert_eq!(ops(&r, "unlink", "unlink"), 1_000_000);
    assert_eq!(r["tree"]["directories"], 110);
    assert_eq!(r["coverage_percent"], 100.0);
    assert!(listing(mount.path()).is_empty(), "the tmpfs is empty again");
}

/// A small ext4 on a loop device, made with `mkfs_args`, mounted.
fn small_ext4(
    size_bytes: u64,
    mkfs_args: &[&str],
    what: &str,
) -> Option<(crate::common::root::LoopDev, crate::common::root::Mount)> {
    let dev = loop_device(size_bytes, LoopOptions::default(), what)?;
    let mut args = vec!["-q", "-F"];
    args.extend_from_slice(mkfs_args);
    args.push(&dev.path);
    let ok = std::process::Command::new("mkfs.ext4").args(&args).output().is_ok_and(|o| o.status.success());
    if !ok {
        skip(what, "mkfs.ext4 failed or is missing");
        return None;
    }
    let mount = mount_device(&dev.path, what)?;
    Some((dev, mount))
}

#[test]
fn a_full_filesystem_ends_the_run_cleanly_with_the_figures_so_far() {
    let Some((_dev, mount)) = small_ext4(64 << 20, &[], "a full filesystem") else { return };
    let tree = mount.path().join("tree");
    let t = path_str(&tree);
    let before = listing(mount.path());
    // A tree larger than the filesystem is refused before anything is touched.
    let (code, _, stderr) = run(&[&t, "--files", "200", "--file-size-dist", "1M"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("free") && stderr.contains("--files"), "{stderr}");
    assert_eq!(listing(mount.path()), before);
    // Appends fill it during the run: the run ends, names the limit, keeps its figures.
    let (code, stdout, stderr) = run(&[
        &t,
        "--files",
        "50",
        "--meta-mix",
        "append=1",
        "--block-size",
        "1M",
        "--duration",
        "60s",
        "--output-format",
        "json",
        "--quiet",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("the filesystem is full (ENOSPC)") && stderr.contains("append"), "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["stop_reason"], "limit");
    assert!(r["limit"].as_str().unwrap().contains("ENOSPC"));
    let appended = ops(&r, "mix", "append");
    assert!(appended >= 20, "about 60 MiB of 1 MiB appends before the filesystem is full: {appended}");
    assert_eq!(op(&r, "mix", "append")["bytes"].as_u64().unwrap(), appended << 20);
    // The tree is gone, and the space with it.
    assert_eq!(listing(mount.path()), before);
}

#[test]
fn a_filesystem_out_of_inodes_ends_the_run_cleanly() {
    let Some((_dev, mount)) = small_ext4(64 << 20, &["-N", "256"], "out of inodes") else { return };
    let t = path_str(&mount.path().join("tree"));
    let before = listing(mount.path());
    let (code, _, stderr) = run(&[&t, "--files", "1000"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("free inodes"), "{stderr}");
    assert_eq!(listing(mount.path()), before);
    let (code, stdout, stderr) =
        run(&[&t, "--files", "100", "--meta-mix", "create=1", "--duration", "60s", "--output-format", "json", "-q"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("ran out of inodes (ENOSPC)"), "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["stop_reason"], "limit");
    let created = ops(&r, "mix", "create");
    assert!(created > 50 && created < 256, "the inodes left after the tree: {created}");
    assert_eq!(listing(mount.path()), before);
}

/// Each personality for a short window on `dir`: every operation it asks for ran, and its
/// tree is gone afterwards.
fn personalities_on(dir: &Path) {
    for (name, kinds) in [
        ("varmail", &["unlink", "create", "append", "fsync", "close", "open", "read"][..]),
        ("fileserver", &["create", "write", "close", "open", "append", "read", "unlink", "stat"]),
        ("webserver", &["open", "read", "close", "append"]),
    ] {
        let t = path_str(&dir.join(name));
        // A smaller tree than the profile's, so that both filesystems hold it quickly.
        let r = run_json(&["--profile", name, &t, "--duration", "300ms", "--threads", "2", "--files", "1000"]);
        for k in kinds {
            assert!(ops(&r, "flow", k) > 0, "{name}: no {k}: {r}");
        }
        assert!(!dir.join(name).exists(), "{name}: its tree is removed");
    }
    assert!(listing(dir).is_empty());
}

#[test]
fn the_personalities_run_on_ext4_and_tmpfs() {
    if let Some((_dev, mount)) = small_ext4(512 << 20, &[], "personalities on ext4") {
        std::fs::remove_dir(mount.path().join("lost+found")).unwrap();
        personalities_on(mount.path());
    }
    if let Some(mount) = mount_tmpfs("1G", "", "personalities on a tmpfs") {
        personalities_on(mount.path());
    }
}

#[test]
fn a_directory_iopulse_did_not_fill_is_refused_and_force_keeps_what_is_not_its_own() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
    let d = path_str(dir.path());
    let (code, _, stderr) = run(&[&d, "--files", "10"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("did not create (e.g. notes.txt)") && stderr.contains("--force"), "{stderr}");
    std::fs::create_dir(dir.path().join("d3")).unwrap();
    let (code, _, stderr) = run(&[&d, "--files", "10", "--force"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("d3 is not iopulse's"), "{stderr}");
    std::fs::remove_dir(dir.path().join("d3")).unwrap();
    let r =
        run_json(&[&d, "--files", "100", "--force", "--meta-mix", "create=1,stat=1,rename=1,mkdir=1", "--ops", "2000"]);
    assert_eq!(ops(&r, "mix", "rename"), 500);
    assert_eq!(listing(dir.path()), vec![PathBuf::from("notes.txt")]);
    assert_eq!(std::fs::read(dir.path().join("notes.txt")).unwrap(), b"mine");
}

#[test]
fn a_signal_during_the_set_up_leaves_a_tree_the_next_run_uses_or_removes() {
    let dir = temp_dir();
    let tree = dir.path().join("tree");
    let t = path_str(&tree);
    let child = iopulse()
        .args([&t, "--files", "2M", "--depth", "2", "--keep-tree", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the set-up is under way (its marker says so), then interrupt it.
    let marker = tree.join(".iopulse-tree");
    for _ in 0..500 {
        if marker.exists() && tree.join("d9/d9").exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: the pid is the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&marker).unwrap();
    assert!(text.contains("\"used\""), "{text}");
    let partial = files_named_f(&listing(&tree));
    assert!(partial > 0 && partial < 2_000_000, "{partial}");
    // The next run of another shape removes the partial tree and makes its own; then all goes.
    let r = run_json(&[&t, "--files", "1000", "--depth", "1", "--meta-phases", "stat"]);
    assert_eq!(ops(&r, "stat", "stat"), 1000);
    assert!(!tree.exists());
}

#[test]
fn a_kept_tree_of_the_same_shape_is_used_as_it_is() {
    let dir = temp_dir();
    let t = path_str(&dir.path().join("tree"));
    let args = [&t[..], "--files", "300", "--file-size-dist", "4k", "--meta-phases", "read", "--keep-tree"];
    let first = run_json(&args);
    assert_eq!(first["tree"]["setup_files_created"], 300);
    let second = run_json(&args);
    assert_eq!(second["tree"]["reused"], true);
    assert_eq!(second["tree"]["setup_files_created"], 0);
    assert_eq!(op(&second, "read", "read")["bytes"], 300 * 4096);
    let last = run_json(&args[..7]);
    assert_eq!(last["tree"]["reused"], true);
    assert!(!dir.path().join("tree").exists());
}

#[test]
fn io_uring_keeps_many_metadata_operations_in_flight_with_the_same_counts() {
    if !engine_available("io_uring") {
        return;
    }
    let dir = temp_dir();
    let tree = dir.path().join("tree");
    let t = path_str(&tree);
    let uring = ["--engine", "io_uring", "--queue-depth", "16", "--threads", "2"];
    let mut args =
        vec![&t[..], "--files", "2000", "--file-size-dist", "4k", "--meta-phases", "create,stat,read", "--keep-tree"];
    args.extend(uring);
    let r = run_json(&args);
    assert_eq!((ops(&r, "create", "create"), ops(&r, "stat", "stat"), ops(&r, "read", "read")), (2000, 2000, 2000));
    assert_eq!(op(&r, "create", "create")["bytes"], 2000 * 4096);
    assert_eq!(op(&r, "read", "read")["bytes"], 2000 * 4096);
    let list = listing(&tree);
    assert_eq!(files_named_f(&list), 2000);
    for p in list.iter().filter(|p| p.file_name().unwrap().to_string_lossy().starts_with('f')) {
        assert_eq!(std::fs::metadata(tree.join(p)).unwrap().len(), 4096, "{}", p.display());
    }
    // Every operation kind at once, in flight together, at its share; then all of it removed.
    let mix =
        "create=20,read=20,write=10,append=10,stat=10,readdir=5,rename=5,unlink=5,mkdir=5,rmdir=4,fsync=3,fsync-dir=3";
    let mut args = vec![&t[..], "--files", "2000", "--file-size-dist", "4k", "--meta-mix", mix, "--ops", "20000"];
    args.extend(uring);
    let r = run_json(&args);
    let per_op = r["phases"][0]["per_op"].as_array().unwrap();
    let total: u64 = per_op.iter().map(|o| o["ops"].as_u64().unwrap()).sum();
    assert_eq!(total, 20_000);
    for o in per_op {
        let (asked, got) = (o["share_asked_percent"].as_f64().unwrap(), o["share_achieved_percent"].as_f64().unwrap());
        assert!((asked - got).abs() <= asked * 0.02, "{}: asked {asked}%, achieved {got}%", o["op"]);
        assert!(o["ops"].as_u64().unwrap() > 0, "{}", o["op"]);
    }
    assert!(!tree.exists(), "the tree and its root are removed");
}

#[test]
fn a_job_file_of_metadata_jobs_runs_them_in_order_each_on_its_tree() {
    let dir = temp_dir();
    let job = dir.path().join("meta.toml");
    std::fs::write(
        &job,
        "[a]\nfiles = \"500\"\nmeta-phases = \"create,stat\"\n\n[b]\nstonewall = true\nfiles = \"300\"\nmeta-mix = \"stat=1,read=1\"\nops = \"1000\"\n",
    )
    .unwrap();
    let tree = dir.path().join("tree");
    let (stdout, stderr) = run_ok(&["run", &path_str(&job), "--target", &path_str(&tree)]);
    assert!(stderr.contains("job a") && stderr.contains("job b"), "{stderr}");
    assert!(
        stdout.contains("500 files in 10 directories") && stdout.contains("300 files in 10 directories"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("tree: removed").count(), 2, "{stdout}");
    assert!(!tree.exists());
}
