//! scripts/compare-fio.sh on a tiny configuration: it runs both tools and its
//! TSV table parses (fixed header, one row per workload, positive figures).
//! Skipped with a message where fio (or python3) is not installed.

use std::path::Path;
use std::process::Command;

const HEADER: &[&str] = &[
    "workload",
    "engine",
    "pattern",
    "bs",
    "depth",
    "threads",
    "direct",
    "reps",
    "iopulse_iops",
    "fio_iops",
    "iops_ratio",
    "iopulse_p50_ns",
    "fio_p50_ns",
    "iopulse_p99_ns",
    "fio_p99_ns",
    "iopulse_cpu_ns_per_io",
    "fio_cpu_ns_per_io",
    "iops_diff_pct",
    "p50_diff_pct",
    "agreement",
    "iopulse_in_flight",
    "fio_in_flight",
];

fn installed(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn comparison_script_table_parses() {
    for program in ["fio", "python3"] {
        if !installed(program) {
            eprintln!("SKIP compare-fio: {program} is not installed (apt-get install fio python3)");
            return;
        }
    }
    let dir = tempfile::Builder::new().prefix("iopulse-compare-").tempdir().expect("temp dir");
    let tsv = dir.path().join("table.tsv");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compare-fio.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["--quick", "--reps", "1", "--duration", "1s", "--size", "16M"])
        // An engine iopulse does not have is skipped with a message, and the run goes on.
        .args(["--workloads", "sync:randread:4k:1:1:0;nosuch:randread:4k:1:1:0;null:read:4k:8:1:0"])
        .arg("--iopulse")
        .arg(env!("CARGO_BIN_EXE_iopulse"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--tsv")
        .arg(&tsv)
        .env("IOPULSE_BENCH_DIR", dir.path())
        .output()
        .expect("run compare-fio.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "compare-fio.sh exited {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
    assert!(stderr.contains("fio --name=compare"), "the exact fio command is stated:\n{stderr}");
    assert!(stdout.contains("IOPS iopulse"), "readable table on stdout:\n{stdout}");
    assert!(stderr.contains("skip: iopulse has no engine 'nosuch'"), "unknown engines are skipped:\n{stderr}");

    let text = std::fs::read_to_string(&tsv).expect("TSV written");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    assert_eq!(header, HEADER);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "one row per workload:\n{text}");
    for row in &rows {
        assert_eq!(row.len(), HEADER.len(), "{row:?}");
        for (name, value) in HEADER.iter().zip(row) {
            if name.ends_with("_iops") || name.ends_with("_ns") || name.ends_with("_per_io") || *name == "iops_ratio" {
                let v: f64 = value.parse().unwrap_or_else(|_| panic!("{name} = {value:?} is not a number"));
                assert!(v > 0.0 && v.is_finite(), "{name} = {v} should be positive in {row:?}");
            }
            if name.ends_with("_pct") {
                let v: f64 = value.parse().unwrap_or_else(|_| panic!("{name} = {value:?} is not a number"));
                assert!(v.is_finite(), "{name} = {v}");
            }
        }
        for name in ["iopulse_in_flight", "fio_in_flight"] {
            let i = HEADER.iter().position(|h| *h == name).unwrap();
            let v: f64 = row[i].parse().unwrap_or_else(|_| panic!("{name} = {:?} is not a number", row[i]));
            // Little's law: at most the queue depth (column 4) in flight, and some I/O was.
            let depth: f64 = row[4].parse().unwrap();
            assert!(v > 0.0 && v <= depth * 1.05, "{name} = {v} with depth {depth} in {row:?}");
        }
        assert_eq!(row[7], "1", "reps");
        assert_eq!(row[19], "n/a", "buffered rows are not part of the agreement check");
    }
    assert_eq!((rows[0][1], rows[0][2]), ("sync", "randread"));
    assert_eq!((rows[1][1], rows[1][2], rows[1][4]), ("null", "read", "8"));
    // The file the script created was removed.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".dat"))
        .collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

/// What `--pareto-h` means is what fio's `random_distribution=pareto:h` does: fio's own
/// offsets (its I/O log, null engine) send 90 % of the I/Os to the hottest 10 % of the
/// blocks at h = 0.9, and so does iopulse (src/io/access/skew.rs tests the same shares
/// on iopulse's generator). 80/20 is h = 0.8.
#[test]
fn fio_pareto_h_is_the_share_of_io_to_the_hottest_one_minus_h_of_blocks() {
    if !installed("fio") {
        eprintln!("SKIP pareto semantics: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let blocks = 10_240u64;
    for (h, hottest_fraction, want) in [(0.9, 0.1, 0.90), (0.8, 0.2, 0.80)] {
        let log = dir.path().join(format!("pareto-{h}.log"));
        let status = Command::new("fio")
            .current_dir(dir.path())
            .args([
                "--name=p",
                "--ioengine=null",
                "--thread",
                "--size=40m",
                "--io_size=2000m",
                "--bs=4k",
                "--rw=randread",
                "--norandommap",
                "--randseed=7",
                &format!("--random_distribution=pareto:{h}"),
                &format!("--write_iolog={}", log.display()),
                "--output=/dev/null",
            ])
            .status()
            .unwrap();
        assert!(status.success(), "fio failed");
        let text = std::fs::read_to_string(&log).unwrap();
        let mut counts = vec![0u64; blocks as usize];
        // Version 3 I/O log lines: "<time> <file> read <offset> <length>".
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() == 5 && f[2] == "read" {
                counts[(f[3].parse::<u64>().unwrap() / 4096) as usize] += 1;
            }
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = counts.iter().sum();
        assert_eq!(total, 512_000, "every I/O of fio's log is counted");
        let top = (blocks as f64 * hottest_fraction) as usize;
        let share = counts[..top].iter().sum::<u64>() as f64 / total as f64;
        // fio hashes values into blocks, and colliding values make it a little hotter.
        assert!(
            share >= want - 0.02 && share <= want + 0.07,
            "fio pareto:{h}: {share:.3} of I/Os to the hottest {hottest_fraction} of blocks, want about {want}"
        );
    }
}
