//! Block-size mixes (`--bssplit`, `--block-align`): the split achieved over many I/Os,
//! per-size figures that add up to the totals (JSON, merge, time series), the sizes and
//! offsets the kernel is asked for (strace), separate splits for reads and writes, and the
//! text's per-size table.

use crate::common::*;
use serde_json::Value;

/// The per-size rows of a result: (size, read ops, write ops, read bytes, write bytes).
fn sizes(r: &Value) -> Vec<(u64, u64, u64, u64, u64)> {
    r["block_sizes"]
        .as_array()
        .unwrap_or_else(|| panic!("no block_sizes in {r}"))
        .iter()
        .map(|b| {
            (
                u64_at(b, &["size_bytes"]),
                u64_at(b, &["read", "ops"]),
                u64_at(b, &["write", "ops"]),
                u64_at(b, &["read", "bytes"]),
                u64_at(b, &["write", "bytes"]),
            )
        })
        .collect()
}

/// Per-size ops and bytes sum to the totals, and each size's bytes are its ops times it.
fn assert_sizes_add_up(r: &Value, what: &str) {
    let rows = sizes(r);
    let sum = |f: fn(&(u64, u64, u64, u64, u64)) -> u64| rows.iter().map(f).sum::<u64>();
    assert_eq!(sum(|s| s.1), u64_at(r, &["read", "ops"]), "{what}: read ops");
    assert_eq!(sum(|s| s.2), u64_at(r, &["write", "ops"]), "{what}: write ops");
    assert_eq!(sum(|s| s.3), u64_at(r, &["read", "bytes"]), "{what}: read bytes");
    assert_eq!(sum(|s| s.4), u64_at(r, &["write", "bytes"]), "{what}: write bytes");
    for (size, reads, writes, read_bytes, write_bytes) in rows {
        assert_eq!((read_bytes, write_bytes), (reads * size, writes * size), "{what}: bytes of {size}");
    }
}

#[test]
fn a_split_of_4k_and_64k_gives_half_of_each_over_100k_ios_and_the_sizes_add_up() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let r = run_json(&[
        &f,
        "--engine",
        "null",
        "--file-size",
        "256m",
        "--bssplit",
        "4k/50:64k/50",
        "--random",
        "--write-percent",
        "50",
        "--threads",
        "2",
        "--ops",
        "100000",
        "--seed",
        "5",
    ]);
    assert_eq!(u64_at(&r, &["total", "ops"]), 100_000);
    assert_sizes_add_up(&r, "null 4k/50:64k/50");
    let rows = sizes(&r);
    assert_eq!(rows.iter().map(|s| s.0).collect::<Vec<_>>(), [4096, 65536]);
    for (size, reads, writes, ..) in &rows {
        let share = 100.0 * (reads + writes) as f64 / 100_000.0;
        assert!((48.0..=52.0).contains(&share), "{size}: {share} % of the I/Os");
    }
    for b in r["block_sizes"].as_array().unwrap() {
        assert_eq!(b["read_asked_percent"], 50.0);
        let achieved = b["read_share_percent"].as_f64().unwrap();
        assert!((47.0..=53.0).contains(&achieved), "{b}");
    }
    assert_eq!(r["spec"]["block_sizes"]["align_bytes"], 4096);
    assert_eq!(r["histograms"]["block_sizes"].as_array().unwrap().len(), 2);
    assert_valid(&schema_validator(), &r, "a result with a block-size mix");
}

/// (offset, length) of each pread/pwrite of `file` an strace of `args` saw (`None` without strace).
fn transfers(dir: &std::path::Path, file: &str, args: &[&str]) -> Option<Vec<(String, u64, u64)>> {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed (apt-get install strace): the system calls cannot be seen");
        return None;
    }
    let out = dir.join("strace.txt");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-y", "-e", "trace=pread64,pwrite64", "-o"]).arg(&out).arg(env!("CARGO_BIN_EXE_iopulse"));
    cmd.args([file, "--cache", "keep", "--quiet"]).args(args);
    let (code, _, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    // pread64(3</tmp/x/t.dat>, "..."..., 65536, 131072) = 65536
    let calls = text
        .lines()
        .filter(|l| l.contains(&format!("<{file}>")) && (l.contains("pread64(") || l.contains("pwrite64(")))
        .map(|l| {
            let call = if l.contains("pread64(") { "read" } else { "write" };
            let args = l.rsplit_once(") = ").unwrap().0;
            let mut nums = args.rsplitn(3, ", ");
            let offset: u64 = nums.next().unwrap().trim().parse().unwrap();
            let len: u64 = nums.next().unwrap().trim().parse().unwrap();
            (call.to_string(), offset, len)
        })
        .collect();
    Some(calls)
}

#[test]
fn the_kernel_is_asked_for_the_splits_sizes_at_aligned_offsets_inside_the_file() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    run_ok(&[&f, "--file-size", "1m", "--duration", "0", "--write-percent", "100", "--block-size", "64k", "--quiet"]);
    let args = ["--bssplit", "8k/50:64k/50", "--block-align", "16k", "--random", "--ops", "400", "--seed", "3"];
    let Some(calls) = transfers(dir.path(), &f, &args) else { return };
    assert_eq!(calls.len(), 400, "one system call per I/O");
    for (_, offset, len) in &calls {
        assert!([8192, 65536].contains(len), "length {len}");
        assert_eq!(offset % 16384, 0, "offset {offset} is aligned to --block-align");
        assert!(offset + len <= 1 << 20, "{offset}+{len} is inside the 1 MiB file");
    }
    let small = calls.iter().filter(|c| c.2 == 8192).count();
    assert!((150..=250).contains(&small), "about half are 8 KiB: {small}");
}

#[test]
fn sequential_ios_of_mixed_sizes_follow_each_other_and_wrap_at_the_end() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    run_ok(&[&f, "--file-size", "1m", "--duration", "0", "--write-percent", "100", "--block-size", "64k", "--quiet"]);
    let Some(calls) = transfers(dir.path(), &f, &["--bssplit", "4k/50:64k/50", "--ops", "300"]) else { return };
    assert_eq!(calls.len(), 300);
    assert_eq!(calls[0].1, 0);
    let mut wraps = 0;
    for pair in calls.windows(2) {
        let (end, next) = (pair[0].1 + pair[0].2, pair[1].1);
        if next == 0 {
            assert!(
                end + pair[1].2 > 1 << 20 || end == 1 << 20,
                "a wrap only when the next I/O does not fit: {pair:?}"
            );
            wraps += 1;
        } else {
            assert_eq!(next, end, "each I/O starts where the last ended: {pair:?}");
        }
    }
    assert!(wraps >= 1, "300 I/Os of 34 KiB on average pass the end of 1 MiB");
}

#[test]
fn reads_and_writes_have_their_own_splits() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let args = [
        f.as_str(),
        "--file-size",
        "4m",
        "--bssplit",
        "4k/100,64k/100",
        "--random",
        "--write-percent",
        "50",
        "--ops",
        "400",
    ];
    let r = run_json(&[&args[..], &["--cache", "keep"]].concat());
    assert_sizes_add_up(&r, "4k/100,64k/100");
    let rows = sizes(&r);
    assert_eq!(rows.len(), 2);
    let (small, large) = (rows[0], rows[1]);
    assert!(small.0 == 4096 && small.1 > 0 && small.2 == 0, "4 KiB: reads only: {small:?}");
    assert!(large.0 == 65536 && large.1 == 0 && large.2 > 0, "64 KiB: writes only: {large:?}");
    assert_eq!(r["block_sizes"][1]["write_asked_percent"], 100.0);
    assert_eq!(r["block_sizes"][1]["read_asked_percent"], 0.0);
    let dir2 = temp_dir();
    let Some(calls) = transfers(dir2.path(), &f, &args[1..]) else { return };
    for (call, _, len) in &calls {
        assert_eq!(*len, if call == "read" { 4096 } else { 65536 }, "{call} of {len}");
    }
}

#[test]
fn the_text_has_a_row_per_size_and_op_with_the_share_achieved_and_asked() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let (stdout, _) = run_ok(&[
        &f,
        "--engine",
        "null",
        "--file-size",
        "64m",
        "--bssplit",
        "4k/70:1m/30",
        "--random",
        "--ops",
        "5000",
    ]);
    assert!(stdout.contains("bssplit 4k/70:1m/30"), "the header names the split: {stdout}");
    let row = |size: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(size) && l.contains("read"))
            .unwrap_or_else(|| panic!("no {size} row: {stdout}"))
            .to_string()
    };
    assert!(row("4 KiB").contains("(70%)") && row("1 MiB").contains("(30%)"), "{stdout}");
    assert!(row("1 MiB").contains("p99") || stdout.contains("p99.9"), "{stdout}");
}

#[test]
fn time_series_bandwidth_counts_each_ios_own_size() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let json = path_str(&dir.path().join("r.json"));
    run_ok(&[
        &f,
        "--engine",
        "null",
        "--file-size",
        "64m",
        "--bssplit",
        "4k/50:1m/50",
        "--random",
        "--duration",
        "1s",
        "--interval",
        "100ms",
        "--json",
        &json,
        "--quiet",
    ]);
    let r = read_json(&json);
    let rows = r["time_series"].as_array().unwrap();
    assert!(rows.len() >= 5, "{} rows", rows.len());
    let bytes: f64 = rows
        .iter()
        .filter(|row| row["ramp"].as_bool() != Some(true))
        .map(|row| row["total"]["bw_bytes_per_sec"].as_f64().unwrap() * row["interval_ns"].as_f64().unwrap() / 1e9)
        .sum();
    let total = u64_at(&r, &["total", "bytes"]) as f64;
    assert!((bytes - total).abs() <= total * 1e-6 + 1.0, "rows carry {bytes} bytes, the run {total}");
}

#[test]
fn merged_results_add_each_sizes_figures() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let (a, b) = (path_str(&dir.path().join("a.json")), path_str(&dir.path().join("b.json")));
    for (json, seed) in [(&a, "1"), (&b, "2")] {
        run_ok(&[
            &f,
            "--engine",
            "null",
            "--file-size",
            "64m",
            "--bssplit",
            "4k/50:64k/50",
            "--random",
            "--ops",
            "2000",
            "--seed",
            seed,
            "--json",
            json,
            "--quiet",
        ]);
    }
    let (stdout, _) = run_ok(&["merge", &a, &b, "--output-format", "json", "--force"]);
    let m: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(u64_at(&m, &["read", "ops"]), 4000);
    assert_sizes_add_up(&m, "merged");
    let (ra, rb) = (sizes(&read_json(&a)), sizes(&read_json(&b)));
    for (i, row) in sizes(&m).iter().enumerate() {
        assert_eq!(row.1, ra[i].1 + rb[i].1, "size {}", row.0);
    }
}

#[test]
fn trims_have_the_third_split_and_their_own_per_size_figures() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let r = run_json(&[
        &f,
        "--file-size",
        "16m",
        "--bssplit",
        "4k/100,64k/100,1m/100",
        "--random",
        "--write-percent",
        "100",
        "--trim-percent",
        "25",
        "--ops",
        "400",
    ]);
    let trims = u64_at(&r, &["trim", "ops"]);
    assert!(trims > 50, "{trims} trims");
    assert_eq!(u64_at(&r, &["trim", "bytes"]), trims << 20, "every trim is 1 MiB");
    let mib = r["block_sizes"].as_array().unwrap().iter().find(|b| b["size_bytes"] == 1 << 20).unwrap();
    assert_eq!(u64_at(mib, &["trim", "ops"]), trims);
    assert_eq!(u64_at(mib, &["write", "ops"]), 0, "writes are 64 KiB");
    assert_eq!(mib["trim_share_percent"], 100.0);
}
