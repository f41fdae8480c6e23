//! Verification on real files, corrupted deliberately between the write run and
//! the read run: each kind of damage is found, told apart and located, and the
//! run exits 3; clean runs have no false positives.

use crate::common::*;
use std::os::unix::fs::FileExt;

const BS: u64 = 4096;

/// Writes every block of a fresh 1 MiB file with --verify (the seed workflow's first command).
fn written_file(dir: &std::path::Path, extra: &[&str]) -> std::path::PathBuf {
    written_file_with(dir, "random", extra)
}

/// `written_file` with the payload `--verify-pattern pattern`.
fn written_file_with(dir: &std::path::Path, pattern: &str, extra: &[&str]) -> std::path::PathBuf {
    let f = dir.join("v.dat");
    let fs = path_str(&f);
    let mut args = vec![
        fs.as_str(),
        "--file-size",
        "1m",
        "--duration",
        "0",
        "--write-percent",
        "100",
        "--random",
        "--verify",
        "--verify-pattern",
        pattern,
    ];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    assert_eq!(u64_at(&r, &["write", "ops"]), 256);
    assert_eq!(r["write_data"]["pattern"], pattern);
    assert_eq!(r["write_data"]["verified"], true);
    f
}

/// The seed workflow's second command: read everything back with --verify.
fn read_back(f: &std::path::Path, extra: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = f.parent().unwrap();
    let json = dir.join("read.json");
    let fs = path_str(f);
    let js = path_str(&json);
    let mut args = vec![fs.as_str(), "--duration", "0", "--read-percent", "100", "--random", "--verify", "--json", &js];
    args.extend_from_slice(extra);
    let (code, text, stderr) = run(&args);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("{stderr}"))).unwrap();
    (code, text, r)
}

fn failures(r: &serde_json::Value) -> Vec<(u64, String)> {
    r["verification"]["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["offset_bytes"].as_u64().unwrap(), m["failure"]["kind"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn the_seed_workflow_writes_then_verifies_with_no_failures() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &[]);
    let (code, text, r) = read_back(&f, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("Verification: Operations: 256, Failures: 0, Success: 100%"), "{text}");
    assert_eq!(u64_at(&r, &["verification", "operations"]), 256);
}

#[test]
fn one_flipped_byte_reports_exactly_that_block() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &[]);
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&f).unwrap();
    let mut byte = [0u8; 1];
    file.read_exact_at(&mut byte, 37 * BS + 1234).unwrap();
    file.write_all_at(&[byte[0] ^ 0x04], 37 * BS + 1234).unwrap();
    let (code, text, r) = read_back(&f, &[]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(failures(&r), vec![(37 * BS, "corrupted".to_string())]);
    assert_eq!(r["verification"]["mismatches"][0]["failure"]["first_bad_byte"], 1234);
    assert!(text.contains("Verification: Operations: 256, Failures: 1, Success: 99.61%"), "{text}");
    assert!(text.contains(&format!("at offset {}: corrupted: first differing byte at 1234", 37 * BS)), "{text}");
    assert!(text.contains("expected +04d0:") && text.contains("found    +04d0:"), "{text}");
}

#[test]
fn two_swapped_blocks_are_both_misplaced() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &[]);
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&f).unwrap();
    let (mut a, mut b) = (vec![0u8; BS as usize], vec![0u8; BS as usize]);
    file.read_exact_at(&mut a, 10 * BS).unwrap();
    file.read_exact_at(&mut b, 200 * BS).unwrap();
    file.write_all_at(&b, 10 * BS).unwrap();
    file.write_all_at(&a, 200 * BS).unwrap();
    let (code, _, r) = read_back(&f, &[]);
    assert_eq!(code, 3);
    assert_eq!(failures(&r), vec![(10 * BS, "misplaced".to_string()), (200 * BS, "misplaced".to_string())]);
    assert_eq!(r["verification"]["mismatches"][0]["failure"]["written_for_offset"], 200 * BS);
    assert_eq!(r["verification"]["mismatches"][1]["failure"]["written_for_offset"], 10 * BS);
}

#[test]
fn zeroed_and_punched_blocks_are_never_written() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &[]);
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&f).unwrap();
    file.write_all_at(&vec![0u8; BS as usize], 5 * BS).unwrap();
    // SAFETY: fallocate on a descriptor we own, punching one block out of the file.
    let rc = unsafe {
        use std::os::fd::AsRawFd;
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            (9 * BS) as i64,
            BS as i64,
        )
    };
    let mut expected = vec![(5 * BS, "never_written_zeros".to_string())];
    if rc == 0 {
        expected.push((9 * BS, "never_written_zeros".to_string()));
    } else {
        eprintln!("SKIP hole punching: fallocate refused it here");
    }
    // Stale data without a header: never written by a verifying run.
    file.write_all_at(&vec![0x5au8; BS as usize], 11 * BS).unwrap();
    expected.push((11 * BS, "never_written_stale".to_string()));
    let (code, text, r) = read_back(&f, &[]);
    assert_eq!(code, 3);
    assert_eq!(failures(&r), expected);
    assert!(text.contains("never written (all zeros: a hole or a zeroed block)"), "{text}");
}

#[test]
fn a_different_seed_reports_every_block_as_another_run() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &["--seed", "1"]);
    let (code, _, r) = read_back(&f, &["--seed", "2", "--verify-max-reports", "1000"]);
    assert_eq!(code, 3);
    assert_eq!(u64_at(&r, &["verification", "failures"]), 256);
    assert_eq!(u64_at(&r, &["verification", "failures_by_kind", "other_run"]), 256);
    assert_eq!(r["verification"]["mismatches"].as_array().unwrap().len(), 256);
    // The same seed reads clean.
    let (code, _, _) = read_back(&f, &["--seed", "1"]);
    assert_eq!(code, 0);
}

#[test]
fn a_torn_block_is_told_apart_from_corruption() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &[]);
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&f).unwrap();
    let mut first = vec![0u8; BS as usize];
    file.read_exact_at(&mut first, 3 * BS).unwrap();
    // Write the file again (new sequences), then put back the first half of the old block 3.
    written_file(dir.path(), &[]);
    file.write_all_at(&first[..2048], 3 * BS).unwrap();
    let (code, _, r) = read_back(&f, &[]);
    assert_eq!(code, 3);
    assert_eq!(failures(&r), vec![(3 * BS, "torn".to_string())]);
    assert_eq!(r["verification"]["mismatches"][0]["failure"]["first_bad_byte"], 2048);
}

/// With the `unique` payload (the default write data's pattern) every kind of damage is
/// still found and told apart: a flipped byte, two swapped blocks, a zeroed block, stale
/// bytes, a torn block, another seed.
#[test]
fn every_kind_of_damage_is_found_with_the_unique_payload_too() {
    let dir = temp_dir();
    let f = written_file_with(dir.path(), "unique", &[]);
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&f).unwrap();
    let block = |n: u64| {
        let mut b = vec![0u8; BS as usize];
        file.read_exact_at(&mut b, n * BS).unwrap();
        b
    };
    let torn_first_half = block(3)[..2048].to_vec();
    // Written again (new sequences), then the damage.
    written_file_with(dir.path(), "unique", &[]);
    file.write_all_at(&torn_first_half, 3 * BS).unwrap();
    file.write_all_at(&vec![0u8; BS as usize], 5 * BS).unwrap();
    file.write_all_at(&vec![0x5au8; BS as usize], 11 * BS).unwrap();
    let (a, b) = (block(10), block(200));
    file.write_all_at(&b, 10 * BS).unwrap();
    file.write_all_at(&a, 200 * BS).unwrap();
    let byte = block(37)[1234];
    file.write_all_at(&[byte ^ 0x04], 37 * BS + 1234).unwrap();
    let (code, text, r) = read_back(&f, &["--verify-pattern", "unique"]);
    assert_eq!(code, 3, "{text}");
    let want = [
        (3, "torn"),
        (5, "never_written_zeros"),
        (10, "misplaced"),
        (11, "never_written_stale"),
        (37, "corrupted"),
        (200, "misplaced"),
    ];
    assert_eq!(failures(&r), want.map(|(n, k)| (n * BS, k.to_string())).to_vec());
    let (code, _, r) = read_back(&f, &["--verify-pattern", "unique", "--seed", "9"]);
    assert_eq!(code, 3);
    // Every block whose header is whole is another run's (the swapped ones too); the torn,
    // zeroed, stale and corrupted ones stay what they are.
    assert_eq!(u64_at(&r, &["verification", "failures_by_kind", "other_run"]), 252);
}

#[test]
fn max_reports_limits_the_details_not_the_count() {
    let dir = temp_dir();
    let f = written_file(dir.path(), &[]);
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&f).unwrap();
    for b in 0..20 {
        // Flip bits rather than write a value the random data may already hold.
        let mut byte = [0u8; 1];
        file.read_exact_at(&mut byte, b * 10 * BS + 100).unwrap();
        file.write_all_at(&[byte[0] ^ 0xee], b * 10 * BS + 100).unwrap();
    }
    let (code, text, r) = read_back(&f, &["--verify-max-reports", "3"]);
    assert_eq!(code, 3);
    assert_eq!(u64_at(&r, &["verification", "failures"]), 20);
    assert_eq!(r["verification"]["mismatches"].as_array().unwrap().len(), 3);
    assert!(text.contains("17 more failed blocks"), "{text}");
}

#[test]
fn layout_writes_the_verify_pattern_so_fresh_files_verify() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("fresh.dat"));
    let r = run_json(&[&f, "--file-size", "2m", "--duration", "0", "--random", "--verify", "--block-size", "8k"]);
    assert_eq!(u64_at(&r, &["verification", "operations"]), 256);
    assert_eq!(u64_at(&r, &["verification", "failures"]), 0);
}

/// Engines to check, skipping (with a message) those this build or kernel lacks.
fn engines() -> Vec<&'static str> {
    ["sync", "io_uring", "libaio", "mmap"]
        .into_iter()
        .filter(|e| {
            let dir = temp_dir();
            let f = path_str(&dir.path().join("probe.dat"));
            let (code, _, stderr) = run(&["--engine", e, &f, "--file-size", "64k", "--duration", "0", "--quiet"]);
            if code != 0 {
                eprintln!("SKIP engine {e}: {}", stderr.trim());
            }
            code == 0
        })
        .collect()
}

#[test]
fn no_false_positives_with_four_threads_mixed_random_on_every_engine() {
    for engine in engines() {
        for direct in [false, true] {
            if direct && engine == "mmap" {
                continue;
            }
            let dir = temp_dir();
            let f = path_str(&dir.path().join("mix.dat"));
            let mut args = vec![
                f.as_str(),
                "--engine",
                engine,
                "--file-size",
                "64m",
                "--threads",
                "4",
                "--queue-depth",
                "8",
                "--random",
                "--write-percent",
                "50",
                "--verify",
                "--duration",
                "1",
            ];
            if direct {
                args.push("--direct");
            }
            let r = run_json(&args);
            let checked = u64_at(&r, &["verification", "operations"]);
            assert!(checked > 100, "{engine} direct={direct}: only {checked} reads checked");
            assert_eq!(u64_at(&r, &["verification", "failures"]), 0, "{engine} direct={direct}: {}", r["verification"]);
            assert_eq!(r["verification"]["lost_write_detection"], true);
        }
    }
}

/// `--dedupe-ratio` and `--compress-ratio` with `--verify`: the clean file verifies, and a
/// flipped byte (in a unique block and in a duplicate one), a zeroed block and a block
/// of another seed's run are each found, at their offsets, with each ratio setting.
#[test]
fn reduced_data_still_catches_corruption_zeros_and_another_seed() {
    for ratios in
        [&["--dedupe-ratio", "3"][..], &["--compress-ratio", "2"], &["--dedupe-ratio", "3", "--compress-ratio", "2"]]
    {
        let dir = temp_dir();
        let f = written_file(dir.path(), ratios);
        let (code, _, r) = read_back(&f, ratios);
        assert_eq!((code, u64_at(&r, &["verification", "failures"])), (0, 0), "{ratios:?}: the clean file");
        let data = std::fs::read(&f).unwrap();
        let blocks: Vec<&[u8]> = data.chunks(BS as usize).collect();
        let repeated = |i: usize| blocks.iter().filter(|b| **b == blocks[i]).count() > 1;
        let unique: Vec<u64> = (0..blocks.len()).filter(|&i| !repeated(i)).map(|i| i as u64 * BS).collect();
        let duplicate = (0..blocks.len()).find(|&i| repeated(i)).map(|i| i as u64 * BS);
        assert_eq!(duplicate.is_some(), ratios.contains(&"--dedupe-ratio"), "{ratios:?}: duplicates");
        // Another seed's file, same ratios: its block at unique[2] goes into ours.
        let other_dir = temp_dir();
        let other = written_file(other_dir.path(), &[ratios, &["--seed", "99"][..]].concat());
        let mut foreign = vec![0u8; BS as usize];
        std::fs::File::open(&other).unwrap().read_exact_at(&mut foreign, unique[2]).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        let flip = |at: u64| {
            let mut byte = [data[at as usize]];
            byte[0] ^= 0x20;
            file.write_all_at(&byte, at).unwrap();
        };
        flip(unique[0] + 3000);
        file.write_all_at(&vec![0u8; BS as usize], unique[1]).unwrap();
        file.write_all_at(&foreign, unique[2]).unwrap();
        let mut want = vec![
            (unique[0], "corrupted".to_string()),
            (unique[1], "never_written_zeros".to_string()),
            (unique[2], "other_run".to_string()),
        ];
        if let Some(d) = duplicate {
            flip(d + 100);
            want.push((d, "corrupted".to_string()));
        }
        want.sort();
        let (code, _, r) = read_back(&f, ratios);
        assert_eq!(code, 3, "{ratios:?}: exit code of a failed verification");
        assert_eq!(failures(&r), want, "{ratios:?}");
    }
}
