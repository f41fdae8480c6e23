//! Access patterns from the command line: fixed amounts of work, runs until
//! covered with every distribution, file distributions, several targets and
//! coverage figures.

use crate::common::*;

#[test]
fn ops_and_io_limit_stop_after_exactly_that_much_work() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("o.dat"));
    for engine in ["null", "sync"] {
        let r =
            run_json(&[&f, "--engine", engine, "--file-size", "4m", "--random", "--ops", "12345", "--threads", "3"]);
        assert_eq!(u64_at(&r, &["total", "ops"]), 12345, "{engine}");
        assert_eq!(r["stop_reason"], "complete");
    }
    let r = run_json(&[&f, "--engine", "null", "--io-limit", "10M", "--block-size", "64k"]);
    assert_eq!(u64_at(&r, &["total", "ops"]), 160);
    // With a duration too, whichever comes first: here the ops limit.
    let r = run_json(&[&f, "--engine", "null", "--ops", "1000", "--duration", "30s"]);
    assert_eq!(u64_at(&r, &["total", "ops"]), 1000);
}

#[test]
fn skewed_runs_until_covered_issue_one_io_per_block_and_report_coverage() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    for dist in ["zipf", "pareto", "gaussian"] {
        let r = run_json(&[
            &f,
            "--engine",
            "null",
            "--file-size",
            "8m",
            "--random",
            "--distribution",
            dist,
            "--duration",
            "0",
            "--threads",
            "2",
        ]);
        assert_eq!(u64_at(&r, &["total", "ops"]), 2048, "{dist}");
        let accessed = u64_at(&r, &["coverage", "blocks_accessed"]);
        assert!(accessed > 0 && accessed < 2048, "{dist}: {accessed} blocks");
        assert_eq!(r["coverage"]["exact"], true);
        assert!(r["coverage"]["hottest_20pct_share"].as_f64().unwrap() > 0.2, "{dist} is skewed");
    }
    // Uniform until covered: every block exactly once, so coverage is complete and flat.
    // (The null engine creates no file: the region is given again.)
    let r = run_json(&[&f, "--engine", "null", "--file-size", "8m", "--random", "--duration", "0", "--threads", "3"]);
    assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), 2048);
    assert!((r["coverage"]["hottest_20pct_share"].as_f64().unwrap() - 0.2).abs() < 0.001);
}

#[test]
fn zipf_concentrates_and_no_scramble_keeps_the_hot_set_at_the_start() {
    let dir = temp_dir();
    let bs = 4096usize;
    let f = zero_file(dir.path(), "z.dat", 4096 * bs as u64);
    let fs = path_str(&f);
    run_json(&[
        &fs,
        "--random",
        "--distribution",
        "zipf",
        "--zipf-theta",
        "1.5",
        "--no-scramble",
        "--write-percent",
        "100",
        "--ops",
        "2000",
        "--seed",
        "1",
    ]);
    let data = std::fs::read(&f).unwrap();
    // Written blocks hold random data; the others are still zeros.
    let written: Vec<usize> =
        data.chunks(bs).enumerate().filter(|(_, b)| b.iter().any(|&x| x != 0)).map(|(i, _)| i).collect();
    assert!(
        written.iter().take(5).all(|&b| b < 16),
        "hot blocks not at the start: {:?}",
        &written[..5.min(written.len())]
    );
    let in_first_tenth = written.iter().filter(|&&b| b < 410).count();
    assert!(
        in_first_tenth * 2 > written.len(),
        "{in_first_tenth} of {} written blocks in the first tenth",
        written.len()
    );
}

#[test]
fn partitioned_slices_are_disjoint_and_cover_the_target() {
    let dir = temp_dir();
    let bs = 4096usize;
    let f = zero_file(dir.path(), "p.dat", 1000 * bs as u64);
    let fs = path_str(&f);
    let r = run_json(&[
        &fs,
        "--file-distribution",
        "partitioned",
        "--threads",
        "3",
        "--duration",
        "0",
        "--random",
        "--write-percent",
        "100",
        "--verify",
    ]);
    let per_worker: Vec<u64> = r["workers"].as_array().unwrap().iter().map(|w| u64_at(w, &["write", "ops"])).collect();
    assert_eq!(per_worker, vec![333, 333, 334], "each worker wrote its own slice once");
    let data = std::fs::read(&f).unwrap();
    for (i, stamp) in header_offsets(&data, bs).into_iter().enumerate() {
        assert_eq!(stamp, (i * bs) as u64, "block {i} not written");
    }
    assert_eq!(u64_at(&r, &["coverage", "blocks_accessed"]), 1000);
}

#[test]
fn per_worker_files_exist_with_the_right_sizes() {
    let dir = temp_dir();
    let base = dir.path().join("pw.dat");
    let r = run_json(&[
        &path_str(&base),
        "--file-distribution",
        "per-worker",
        "--threads",
        "3",
        "--file-size",
        "2m",
        "--duration",
        "0",
    ]);
    for w in 0..3 {
        let p = dir.path().join(format!("pw.dat.{w}"));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 2 << 20, "{}", p.display());
        assert_eq!(r["targets"][w]["path"], path_str(&p));
        assert_eq!(u64_at(&r, &["targets", &w.to_string(), "read", "ops"]), 512);
    }
    assert!(!base.exists(), "the base name itself is not used");
    assert_eq!(u64_at(&r, &["read", "ops"]), 3 * 512);
}

#[test]
fn several_targets_report_per_target_figures_that_add_up() {
    let dir = temp_dir();
    let (a, b) = (path_str(&dir.path().join("a.dat")), path_str(&dir.path().join("b.dat")));
    let (code, text, stderr) =
        run(&[&a, &b, "--file-size", "2m", "--random", "--ops", "5000", "--write-percent", "20", "--threads", "2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains(&format!("  {a}: read")) && text.contains(&format!("  {b}: read")), "{text}");
    let r = run_json(&[&a, &b, "--random", "--ops", "5000", "--write-percent", "20", "--threads", "2", "--seed", "3"]);
    let targets = r["targets"].as_array().unwrap();
    for op in ["read", "write"] {
        let sum: u64 = targets.iter().map(|t| u64_at(t, &[op, "ops"])).sum();
        assert_eq!(sum, u64_at(&r, &[op, "ops"]), "{op}");
        assert!(targets.iter().all(|t| u64_at(t, &[op, "ops"]) > 0), "{op}: a target got no I/O");
    }
}

#[test]
fn same_seed_same_offsets() {
    let dir = temp_dir();
    let bs = 4096usize;
    let run_once = |name: &str| {
        let f = zero_file(dir.path(), name, 512 * bs as u64);
        run_json(&[
            &path_str(&f),
            "--random",
            "--distribution",
            "pareto",
            "--write-percent",
            "100",
            "--ops",
            "100",
            "--seed",
            "77",
        ]);
        std::fs::read(&f).unwrap().chunks(bs).map(|b| b.iter().any(|&x| x != 0)).collect::<Vec<bool>>()
    };
    assert_eq!(run_once("one.dat"), run_once("two.dat"));
}

/// The offsets a sync run read, in order, as strace saw its pread64 calls (`None`
/// without strace).
fn pread_offsets(args: &[&str], block_size: u64) -> Option<Vec<u64>> {
    let probe = std::process::Command::new("strace").arg("-V").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: strace is not installed (apt-get install strace): the offsets cannot be seen");
        return None;
    }
    let dir = temp_dir();
    let trace = dir.path().join("trace");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=pread64", "-e", "signal=none", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iopulse"));
    let out = cmd.args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&trace).unwrap();
    // "1234  pread64(3, ""..., 4096, 81920) = 4096": the offset is the last argument.
    let offsets: Vec<u64> = text
        .lines()
        .filter(|l| l.contains("pread64(") && l.trim_end().ends_with(&format!("= {block_size}")))
        .map(|l| {
            let args_end = l.rfind(')').unwrap();
            let start = l[..args_end].rfind(", ").unwrap() + 2;
            l[start..args_end].parse::<u64>().unwrap()
        })
        .collect();
    Some(offsets)
}

#[test]
fn random_percent_gives_that_share_of_jumps_and_sequential_runs_between() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("rp.dat"));
    let bs = 4096u64;
    for (percent, expected) in [("50", 0.5), ("0", 0.0), ("100", 1.0)] {
        let args = [
            f.as_str(),
            "--engine",
            "sync",
            "--file-size",
            "64m",
            "--random",
            "--random-percent",
            percent,
            "--ops",
            "20000",
            "--quiet",
        ];
        let Some(offsets) = pread_offsets(&args, bs) else { return };
        // The layout of a new file writes; only the measured reads are pread64 calls of one block.
        assert_eq!(offsets.len(), 20000, "--random-percent {percent}: one pread per I/O");
        assert!(offsets.iter().all(|o| o % bs == 0 && *o < 64 << 20));
        let jumps = offsets.windows(2).filter(|w| w[1] != w[0] + bs).count();
        let share = jumps as f64 / (offsets.len() - 1) as f64;
        assert!((share - expected).abs() < 0.02, "--random-percent {percent}: {share:.3} of the I/Os jumped");
    }
    // Recorded in the result, and refused where it has no meaning.
    let r = run_json(&[&f, "--engine", "null", "--random", "--random-percent", "30", "--ops", "10"]);
    assert_eq!(r["spec"]["random_percent"], 30);
    let (code, _, err) = run(&[&f, "--engine", "null", "--random-percent", "30", "--ops", "10"]);
    assert_eq!(code, 2);
    assert!(err.contains("--random-percent 30 needs --random"), "{err}");
}

#[test]
fn zoned_distributions_give_each_zone_its_share_of_the_offsets_read() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("zoned.dat"));
    let json = path_str(&dir.path().join("zoned.json"));
    let (bs, file_bytes) = (4096u64, 64u64 << 20);
    let args = [
        f.as_str(),
        "--engine",
        "sync",
        "--file-size",
        "64m",
        "--random",
        "--distribution",
        "zoned",
        "--zones",
        "60/10:30/20:10/70",
        "--ops",
        "100000",
        "--json",
        json.as_str(),
        "--quiet",
    ];
    let Some(offsets) = pread_offsets(&args, bs) else { return };
    assert_eq!(offsets.len(), 100_000, "one pread per I/O");
    // The zones' bounds: 10 % and 30 % of the file's blocks, rounded to whole blocks.
    let blocks = file_bytes / bs;
    let bound = |fraction: f64| (blocks as f64 * fraction).round() as u64 * bs;
    let (first_end, second_end) = (bound(0.1), bound(0.3));
    let mut seen = [0u64; 3];
    for &o in &offsets {
        assert!(o % bs == 0 && o < file_bytes, "offset {o}");
        seen[if o < first_end {
            0
        } else if o < second_end {
            1
        } else {
            2
        }] += 1;
    }
    let r = read_json(&json);
    for (i, asked) in [60.0, 30.0, 10.0].into_iter().enumerate() {
        let share = seen[i] as f64 * 100.0 / offsets.len() as f64;
        assert!((share - asked).abs() < 2.0, "zone {i}: {share:.2} % of the preads for {asked} %");
        // The result's counts are the offsets strace saw, zone by zone.
        assert_eq!(r["zones"][i]["ios"], seen[i], "zone {i} in the JSON");
        assert_eq!(r["zones"][i]["io_percent_asked"], asked);
    }
    assert_eq!(r["spec"]["distribution"]["kind"], "zoned");

    // Absolute zones: nothing after the last zone is read.
    let abs = [
        f.as_str(),
        "--engine",
        "sync",
        "--random",
        "--distribution",
        "zoned-abs",
        "--zones",
        "70/64k:30/1m",
        "--ops",
        "20000",
        "--quiet",
    ];
    let Some(offsets) = pread_offsets(&abs, bs) else { return };
    assert_eq!(offsets.len(), 20_000);
    let in_first = offsets.iter().filter(|&&o| o < 64 << 10).count() as f64 / 200.0;
    assert!(offsets.iter().all(|&o| o < (64 << 10) + (1 << 20)), "an offset beyond the zones");
    assert!((in_first - 70.0).abs() < 2.0, "{in_first} % in the first zone");
}

/// Zones per direction (fio's `READS,WRITES`): a 50/50 mix's reads fall in the reads'
/// zones and its writes in the writes', as strace sees the preads and pwrites, and the
/// result counts each direction's zones apart.
#[test]
fn zones_per_direction_send_reads_and_writes_to_their_own_zones() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("zd.dat"));
    let json = path_str(&dir.path().join("zd.json"));
    let probe = std::process::Command::new("strace").arg("-V").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: strace is not installed (apt-get install strace): the offsets cannot be seen");
        return;
    }
    // Laid out first, so that the traced run's only 4 KiB calls are its own.
    run_ok(&[&f, "--engine", "sync", "--file-size", "64m", "--ops", "1", "--quiet"]);
    let trace = dir.path().join("trace");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=pread64,pwrite64", "-e", "signal=none", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iopulse"));
    cmd.args([&f, "--engine", "sync", "--file-size", "64m", "--random", "--write-percent", "50"]);
    cmd.args(["--distribution", "zoned", "--zones", "80/10:20/90,20/50:80/50", "--ops", "100000"]);
    cmd.args(["--json", &json, "--quiet"]);
    let (code, _, err) = run_command(&mut cmd);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&trace).unwrap();
    let offsets = |call: &str| -> Vec<u64> {
        text.lines()
            .filter(|l| l.contains(&format!("{call}(")) && l.trim_end().ends_with("= 4096"))
            .map(|l| {
                let args_end = l.rfind(')').unwrap();
                l[l[..args_end].rfind(", ").unwrap() + 2..args_end].parse::<u64>().unwrap()
            })
            .collect()
    };
    let (reads, writes) = (offsets("pread64"), offsets("pwrite64"));
    assert_eq!(reads.len() + writes.len(), 100_000, "one call per I/O");
    // The zones' bounds: a tenth and a half of the file's blocks, rounded to whole blocks.
    let blocks = (64u64 << 20) / 4096;
    let (tenth, half) = ((blocks as f64 * 0.1).round() as u64 * 4096, blocks / 2 * 4096);
    let share_below = |v: &[u64], bound: u64| v.iter().filter(|&&o| o < bound).count() as f64 * 100.0 / v.len() as f64;
    // Reads: 80 % in the first tenth; writes: 20 % in the first half.
    let reads_low = share_below(&reads, tenth);
    let writes_low = share_below(&writes, half);
    assert!((reads_low - 80.0).abs() < 2.0, "{reads_low:.2} % of the reads in the first tenth");
    assert!((writes_low - 20.0).abs() < 2.0, "{writes_low:.2} % of the writes in the first half");
    let r = read_json(&json);
    let zones = r["zones"].as_array().unwrap();
    let of =
        |direction: &str| -> Vec<&serde_json::Value> { zones.iter().filter(|z| z["direction"] == direction).collect() };
    let (zr, zw) = (of("read"), of("write"));
    assert_eq!((zr.len(), zw.len()), (2, 2), "{zones:?}");
    // The result's counts are what strace saw, direction by direction.
    assert_eq!(zr[0]["ios"], reads.iter().filter(|&&o| o < tenth).count() as u64);
    assert_eq!(zr[0]["ios"].as_u64().unwrap() + zr[1]["ios"].as_u64().unwrap(), reads.len() as u64);
    assert_eq!(zw[0]["ios"], writes.iter().filter(|&&o| o < half).count() as u64);
    assert_eq!((zr[0]["io_percent_asked"].as_f64(), zw[0]["io_percent_asked"].as_f64()), (Some(80.0), Some(20.0)));
    assert!((zw[0]["io_percent_achieved"].as_f64().unwrap() - writes_low).abs() < 1e-9, "{zones:?}");
}

#[test]
fn zoned_distributions_are_refused_naming_the_flag_and_the_fix() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("z.dat"));
    for (extra, says) in [
        (&["--distribution", "zoned"][..], "--distribution zoned needs --zones: add e.g. --zones 60/10:30/20:10/70"),
        (
            &["--distribution", "zoned", "--zones", "60/10:30/20"][..],
            "--zones: `60/10:30/20`: the shares of I/Os add up to 90 %",
        ),
        (&["--zones", "50/50:50/50"][..], "--zones applies to --distribution zoned, not uniform"),
        (&["--distribution", "zoned-abs", "--zones", "50/1m:50/2g", "--file-size", "1g"][..], "more than --file-size"),
        (
            &["--distribution", "zoned", "--zones", "50/50:50/50,100/100,100/100,100/100"][..],
            "4 comma-separated sets of zones",
        ),
        (&["--distribution", "zoned", "--zones", "50/50:50/50,60/100"][..], "the writes' zones `60/100`"),
    ] {
        let mut args = vec![f.as_str(), "--engine", "sync", "--random", "--ops", "10"];
        args.extend_from_slice(extra);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!dir.path().join("z.dat").exists(), "{extra:?}: nothing is created on a refusal");
    }
}

#[test]
fn merge_adds_the_ios_of_each_zone() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("m.dat"));
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for out in [&a, &b] {
        let args = [
            f.as_str(),
            "--engine",
            "null",
            "--random",
            "--distribution",
            "zoned",
            "--zones",
            "90/50:10/50",
            "--ops",
            "5000",
        ];
        let (code, _, err) = run(&[&args[..], &["--json", &path_str(out), "--quiet"]].concat());
        assert_eq!(code, 0, "{err}");
    }
    let (code, merged, err) = run(&["merge", &path_str(&a), &path_str(&b), "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let rm: serde_json::Value = serde_json::from_str(&merged).unwrap();
    let (ra, rb) = (read_json(&a), read_json(&b));
    for i in 0..2 {
        let sum = ra["zones"][i]["ios"].as_u64().unwrap() + rb["zones"][i]["ios"].as_u64().unwrap();
        assert_eq!(rm["zones"][i]["ios"], sum, "zone {i}");
    }
    assert_eq!(rm["zones"][0]["ios"].as_u64().unwrap() + rm["zones"][1]["ios"].as_u64().unwrap(), 10_000);
}
