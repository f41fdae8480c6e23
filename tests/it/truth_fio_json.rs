//! The fio-compatible JSON files iopulse's latency where fio files the same
//! measurement: submission to completion is fio's `clat_ns` and, with no separate
//! submission step, its `lat_ns` too; in a paced run `lat_ns` counts from the due time
//! and `clat_ns` is the service time. `slat_ns` is what fio writes for a latency it did
//! not record: zeros, `N` 0, no `percentile`. The sample statistics, latency buckets,
//! getrusage counters and `disk_util` are checked against the native JSON of the same
//! run; json+ against fio's own `fio_jsonplus_clat2csv`, fio-plot draws its charts from
//! the documents, and the keys are fio's own (a real `fio --output-format=json+` run).

use crate::common::*;
use serde_json::Value;

/// A run over every block of a fresh 2 MiB file once (512 I/Os of 4 KiB), fio JSON on
/// stdout and the native JSON in a file: (fio document, native result).
fn fio_and_native(extra: &[&str]) -> (Value, Value) {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let json = path_str(&dir.path().join("r.json"));
    let mut args =
        vec![f.as_str(), "--file-size", "2M", "--duration", "0", "--output-format", "fio-json", "--json", &json];
    args.extend_from_slice(extra);
    let (stdout, _) = run_ok(&args);
    let fio: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("fio-json is not JSON ({e}): {stdout}"));
    (fio, read_json(&json))
}

/// How fio writes a latency it did not record (stat.c, add_ddir_lat_json with no samples).
fn assert_unmeasured(stats: &Value, what: &str) {
    let obj = stats.as_object().unwrap_or_else(|| panic!("{what} is not an object: {stats}"));
    assert_eq!(stats["min"], 0, "{what}: {stats}");
    assert_eq!(stats["max"], 0, "{what}: {stats}");
    assert_eq!(stats["mean"].as_f64(), Some(0.0), "{what}: {stats}");
    assert_eq!(stats["stddev"].as_f64(), Some(0.0), "{what}: {stats}");
    assert_eq!(stats["N"], 0, "{what}: {stats}");
    assert!(!obj.contains_key("percentile"), "{what} has no percentiles: {stats}");
}

/// `lat_ns` holds the run's latency: the same count, extremes and percentiles as the native JSON.
fn assert_total_latency(fio_op: &Value, native_op: &Value, what: &str) {
    let lat = &fio_op["lat_ns"];
    let native = &native_op["latency_ns"];
    assert_eq!(lat["N"], native_op["ops"], "{what}: {lat}");
    assert!(lat["N"].as_u64().unwrap() > 0, "{what}: the run did I/O");
    assert_eq!(lat["min"], native["min"], "{what}");
    assert_eq!(lat["max"], native["max"], "{what}");
    assert_eq!(lat["mean"].as_f64().unwrap().round() as u64, native["mean"].as_u64().unwrap(), "{what}");
    let p = lat["percentile"].as_object().unwrap_or_else(|| panic!("{what}: lat_ns has no percentile: {lat}"));
    assert_eq!(p.len(), 17, "{what}: fio's default percentile list");
    assert_eq!(p["50.000000"], native["p50"], "{what}");
    assert_eq!(p["90.000000"], native["p90"], "{what}");
    assert_eq!(p["99.000000"], native["p99"], "{what}");
    assert_eq!(p["99.900000"], native["p99_9"], "{what}");
    assert_eq!(p["99.990000"], native["p99_99"], "{what}");
}

#[test]
fn latency_is_fios_clat_and_lat_and_slat_is_unmeasured() {
    let (fio, r) = fio_and_native(&["--random"]);
    let job = &fio["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 512);
    assert_total_latency(&job["read"], &r["read"], "read");
    assert_eq!(job["read"]["clat_ns"], job["read"]["lat_ns"], "unpaced, completion latency is the total");
    assert_unmeasured(&job["read"]["slat_ns"], "read slat_ns");
    // No writes: every latency object of the op type is fio's empty one.
    for key in ["lat_ns", "clat_ns", "slat_ns"] {
        assert_unmeasured(&job["write"][key], &format!("write {key}"));
        assert_unmeasured(&job["trim"][key], &format!("trim {key}"));
    }
}

#[test]
fn a_mixed_run_files_both_op_types_under_lat_ns() {
    let engine = if engine_available("io_uring") { "io_uring" } else { "sync" };
    let (fio, r) = fio_and_native(&["--random", "--write-percent", "50", "--engine", engine, "--queue-depth", "4"]);
    let job = &fio["jobs"][0];
    let ops = job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(ops, 512);
    for op in ["read", "write"] {
        if r[op]["ops"] == 0 {
            continue;
        }
        assert_total_latency(&job[op], &r[op], op);
        assert_eq!(job[op]["clat_ns"], job[op]["lat_ns"], "{op}");
        assert_unmeasured(&job[op]["slat_ns"], &format!("{op} slat_ns"));
    }
}

/// What fio has no key for sits under the top-level `iopulse` key: the same `--cache`,
/// allocation and page-cache record as the native result, and nothing of it in fio's keys.
#[test]
fn the_targets_state_is_under_an_iopulse_key() {
    let (fio, r) = fio_and_native(&["--cache", "keep", "--random"]);
    let extra = &fio["iopulse"];
    assert_eq!(extra["cache"], "keep");
    assert_eq!(extra["cache"], r["spec"]["cache"]);
    let targets = extra["targets"].as_array().unwrap_or_else(|| panic!("no iopulse.targets: {fio}"));
    assert_eq!(targets.len(), 1);
    let (t, native) = (&targets[0], &r["targets"][0]);
    assert_eq!(t["path"], native["path"]);
    assert_eq!(t["laid_out_bytes"], 2u64 << 20, "a fresh 2 MiB file laid out");
    assert_eq!(t["laid_out_bytes"], native["laid_out_bytes"]);
    assert_eq!(t["allocation"], native["allocation"]);
    assert_eq!(t["allocation"]["hole_bytes"], 0);
    assert_eq!(t["page_cache"], native["page_cache"]);
    assert_eq!(t["page_cache"]["mode"], "keep");
    assert!(t["page_cache"]["start_resident_fraction"].as_f64().unwrap() >= 0.9, "layout left it cached: {t}");
    let job = fio["jobs"][0].as_object().unwrap();
    assert!(!job.contains_key("iopulse") && !job.contains_key("page_cache"), "fio's job keys stay fio's");
}

/// A paced run: `lat_ns` counts from each I/O's due time (the native headline), `clat_ns`
/// is the service time (the native `pacing.rate.service`), each with its own figures.
#[test]
fn a_paced_run_files_the_service_time_under_clat_ns() {
    let (fio, r) = fio_and_native(&["--random", "--rate-iops", "2000"]);
    let read = &fio["jobs"][0]["read"];
    assert_total_latency(read, &r["read"], "read lat_ns");
    let service = &r["pacing"]["rate"]["service"];
    let clat = &read["clat_ns"];
    assert_eq!(clat["N"], 512);
    assert_eq!(service["ios"], 512);
    for (fio_key, native_key) in [("min", "min"), ("max", "max")] {
        assert_eq!(clat[fio_key], service["latency_ns"][native_key], "clat_ns.{fio_key}");
    }
    assert_eq!(clat["percentile"]["99.000000"], service["latency_ns"]["p99"]);
    assert!(
        read["lat_ns"]["max"].as_u64() >= clat["max"].as_u64(),
        "from the due time is never shorter than the service: {read}"
    );
}

/// The per-direction IOPS and bandwidth statistics are those of the run's interval rows
/// (the native `time_series`), bandwidth in KiB/s; the rows are kept for the fio form
/// without --timeseries.
#[test]
fn iops_and_bandwidth_samples_are_the_interval_rows() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("s.dat"));
    let json = path_str(&dir.path().join("r.json"));
    let args = [&f, "--file-size", "2M", "--duration", "1", "--interval", "100ms", "--random", "--write-percent", "30"];
    let (stdout, _) = run_ok(&[&args[..], &["--output-format", "fio-json", "--json", &json]].concat());
    let fio: Value = serde_json::from_str(&stdout).unwrap();
    let r = read_json(&json);
    let rows: Vec<&Value> = r["time_series"].as_array().expect("rows kept").iter().collect();
    // The last row is left out when shorter than half an interval.
    let rows: Vec<&Value> = rows
        .iter()
        .enumerate()
        .filter(|(i, row)| *i + 1 < rows.len() || row["interval_ns"].as_u64().unwrap() * 2 >= 100_000_000)
        .map(|(_, row)| *row)
        .collect();
    assert!(rows.len() >= 8, "a second in 100 ms rows: {}", rows.len());
    for op in ["read", "write"] {
        let o = &fio["jobs"][0][op];
        let iops: Vec<f64> = rows.iter().map(|row| row[op]["iops"].as_f64().unwrap()).collect();
        let kib: Vec<f64> = rows.iter().map(|row| row[op]["bw_bytes_per_sec"].as_f64().unwrap() / 1024.0).collect();
        for (key, values) in [("iops", &iops), ("bw", &kib)] {
            let n = values.len() as f64;
            let mean = values.iter().sum::<f64>() / n;
            let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(0.0, f64::max);
            let dev_key = if key == "iops" { "iops_stddev" } else { "bw_dev" };
            assert_eq!(o[format!("{key}_samples")], rows.len(), "{op} {key}");
            assert!((o[format!("{key}_mean")].as_f64().unwrap() - mean).abs() < 1e-6 * mean.max(1.0), "{op} {key}");
            assert!((o[dev_key].as_f64().unwrap() - sd).abs() < 1e-6 * sd.max(1.0), "{op} {dev_key}");
            assert_eq!(o[format!("{key}_min")], min.round() as u64, "{op} {key}_min");
            assert_eq!(o[format!("{key}_max")], max.round() as u64, "{op} {key}_max");
            assert!(sd > 0.0, "{op} {key}: a real run's samples vary");
        }
        assert_eq!(o["bw_agg"], 100.0, "one job is its whole group");
    }
    assert!(r["time_series"].as_array().is_some());
}

/// `latency_ns`/`latency_us`/`latency_ms` hold every I/O once (their shares add up to
/// 100 %), each share the histogram's I/Os in the bucket; ctx, majf, minf are the
/// workers' getrusage counters; the iodepth maps are fio's.
#[test]
fn latency_buckets_rusage_and_depths_are_fios() {
    let (fio, r) = fio_and_native(&["--random"]);
    let job = &fio["jobs"][0];
    let mut sum = 0.0;
    for (table, n) in [("latency_ns", 10), ("latency_us", 10), ("latency_ms", 12)] {
        let m = job[table].as_object().unwrap_or_else(|| panic!("no {table}: {job}"));
        assert_eq!(m.len(), n, "{table}: {m:?}");
        assert!(m.contains_key("2") && m.contains_key("1000"), "{table} keys: {m:?}");
        sum += m.values().map(|v| v.as_f64().unwrap()).sum::<f64>();
    }
    assert!((sum - 100.0).abs() < 1e-6, "every I/O in one bucket: {sum}");
    assert!(job["latency_ms"].as_object().unwrap().contains_key(">=2000"));
    // The native p50 falls in a bucket that holds at least 1 % of the I/Os.
    let p50 = r["read"]["latency_ns"]["p50"].as_u64().unwrap();
    let (table, bounds, scale) = match p50 {
        0..1000 => ("latency_ns", [2u64, 4, 10, 20, 50, 100, 250, 500, 750, 1000], 1),
        1000..1_000_000 => ("latency_us", [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000], 1000),
        _ => ("latency_ms", [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000], 1_000_000),
    };
    let bound = bounds.iter().find(|&&b| p50 < b * scale).unwrap();
    assert!(job[table][bound.to_string()].as_f64().unwrap() >= 1.0, "p50 {p50} ns in {table} {bound}: {job}");
    let workers = &r["cpu"]["workers"];
    assert_eq!(job["ctx"], workers["context_switches"]);
    assert_eq!(job["majf"], workers["major_faults"]);
    assert_eq!(job["minf"], workers["minor_faults"]);
    assert!(job["ctx"].as_u64().is_some(), "{job}");
    // A sync run: one I/O at a time, one per call.
    assert_eq!(job["iodepth_level"]["1"], 100.0);
    assert_eq!(job["iodepth_submit"]["4"], 100.0);
    assert_eq!(job["iodepth_complete"]["4"], 100.0);
    assert_eq!(job["iodepth_level"].as_object().unwrap().len(), 7);
}

/// `disk_util` is the device witness: the device under the target, its counters over the
/// window (direct reads the device saw, one each).
#[test]
fn disk_util_is_the_device_under_the_target() {
    let (fio, r) = fio_and_native(&["--random", "--direct"]);
    let Some(witness) = r["targets"][0]["device_witness"].as_object() else {
        eprintln!("SKIP: no block device under the temporary directory: disk_util not checked");
        return;
    };
    let util = fio["disk_util"].as_array().unwrap_or_else(|| panic!("no disk_util: {fio}"));
    let d = util.iter().find(|d| d["name"] == witness["device"]).unwrap_or_else(|| panic!("{util:?}"));
    assert_eq!(d["read_ios"], witness["delta"]["read_ios"]);
    assert_eq!(d["write_ios"], witness["delta"]["write_ios"]);
    assert_eq!(d["read_ticks"], witness["delta"]["read_ticks_ms"]);
    assert!(d["read_ios"].as_u64().unwrap() >= 512, "512 direct reads reached the device: {d}");
    let u = d["util"].as_f64().unwrap();
    assert!(u > 0.0 && u <= 100.0, "{d}");
}

/// json+: each op type's `clat_ns.bins` and `lat_ns.bins` hold every I/O once; fio's own
/// `fio_jsonplus_clat2csv` writes one row per bin, whose counts add up to the run's I/Os
/// and which its `--validate` finds equal to the document.
#[test]
fn json_plus_bins_feed_fios_clat2csv() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("p.dat"));
    let doc = dir.path().join("run.json");
    let args = [f.as_str(), "--file-size", "2M", "--duration", "0", "--random", "--write-percent", "25"];
    let (stdout, _) = run_ok(&[&args[..], &["--output-format", "fio-json+"]].concat());
    std::fs::write(&doc, &stdout).unwrap();
    let fio: Value = serde_json::from_str(&stdout).unwrap();
    let job = &fio["jobs"][0];
    let mut ios = 0;
    for op in ["read", "write"] {
        let n = job[op]["total_ios"].as_u64().unwrap();
        ios += n;
        for key in ["clat_ns", "lat_ns"] {
            let bins = job[op][key]["bins"].as_object().unwrap_or_else(|| panic!("{op} {key}: no bins"));
            assert_eq!(bins.values().map(|v| v.as_u64().unwrap()).sum::<u64>(), n, "{op} {key}");
            let min = job[op][key]["min"].as_u64().unwrap();
            let first: u64 = bins.keys().map(|k| k.parse::<u64>().unwrap()).min().unwrap();
            assert!(first >= min, "the first bin holds the minimum: {first} < {min}");
        }
    }
    assert_eq!(ios, 512);
    // fio-json (no plus) has no bins.
    let (plain, _) = run_ok(&[&args[..], &["--output-format", "fio-json"]].concat());
    assert!(!plain.contains("\"bins\""));

    let Some(tool) = fio_tool("fio_jsonplus_clat2csv") else {
        eprintln!("SKIP: fio_jsonplus_clat2csv (fio's package) not found: json+ not fed to it");
        return;
    };
    let csv = dir.path().join("clat.csv");
    for extra in [None, Some("--validate")] {
        let out = std::process::Command::new("python3")
            .arg(&tool)
            .arg(&doc)
            .arg(&csv)
            .args(extra)
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{tool:?} {extra:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = std::fs::read_to_string(dir.path().join("clat_job0.csv")).expect("clat2csv wrote job 0's CSV");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}: {header:?}"));
    let (read_col, write_col) = (col("read_clat_ns_count"), col("write_clat_ns_count"));
    let rows: Vec<Vec<&str>> =
        lines.filter(|l| !l.trim().is_empty()).map(|l| l.split(',').map(str::trim).collect()).collect();
    let count = |c: usize| rows.iter().filter_map(|r| r[c].parse::<u64>().ok()).sum::<u64>();
    assert!(!rows.is_empty(), "rows under the header");
    assert_eq!(count(read_col) + count(write_col), 512, "the CSV's counts are the run's I/Os");
    assert_eq!(count(read_col), job["read"]["total_ios"].as_u64().unwrap());
}

/// fio's tool scripts where fio's package put them: on $PATH, or listed by dpkg.
fn fio_tool(name: &str) -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|f| f.is_file()))
        .unwrap_or_default();
    on_path.or_else(|| {
        let out = std::process::Command::new("dpkg").args(["-L", "fio"]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).lines().find(|l| l.ends_with(&format!("/{name}"))).map(Into::into)
    })
}

/// Every key fio writes in its json+ (a real fio run on the same file) is in iopulse's
/// fio-json+, with the same kind of value; fio's job options and bins' keys (values) aside.
#[test]
fn json_plus_has_every_key_of_a_real_fio_run() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("k.dat"));
    let (stdout, _) =
        run_ok(&[&f, "--file-size", "2M", "--duration", "0.3", "--random", "--output-format", "fio-json+"]);
    let ours: Value = serde_json::from_str(&stdout).unwrap();
    let Ok(out) = std::process::Command::new("fio")
        .args(["--name=k", &format!("--filename={f}"), "--size=2m", "--bs=4k", "--rw=randread", "--runtime=0.3"])
        .args(["--time_based", "--output-format=json+"])
        .output()
    else {
        eprintln!("SKIP: fio is not installed: json+ keys not compared with fio's");
        return;
    };
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let real: Value = serde_json::from_slice(&out.stdout).expect("fio prints JSON");
    let (mut theirs, mut mine) = (Vec::new(), Vec::new());
    kinds(&real, "", &mut theirs);
    kinds(&ours, "", &mut mine);
    for (path, kind) in &theirs {
        let (_, our_kind) =
            mine.iter().find(|(p, _)| p == path).unwrap_or_else(|| panic!("iopulse writes no `{path}`"));
        let compatible = kind == our_kind || (*kind == "float" && *our_kind == "int");
        assert!(compatible, "`{path}`: fio writes {kind}, iopulse {our_kind}");
    }
    assert!(theirs.iter().any(|(p, _)| p == "jobs[]/read/clat_ns/bins"), "fio's json+ has bins");
}

/// Key paths and the kind of their values; arrays by their first item; the keys of
/// `job options`, `bins` and `percentile` are not walked (they are values).
fn kinds(v: &Value, at: &str, out: &mut Vec<(String, &'static str)>) {
    let kind = match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    };
    if !at.is_empty() {
        out.push((at.to_string(), kind));
    }
    let leaf = ["job options", "bins", "percentile"].iter().any(|k| at.ends_with(&format!("/{k}")));
    match v {
        Value::Object(m) if !leaf => {
            for (k, x) in m {
                kinds(x, &if at.is_empty() { k.clone() } else { format!("{at}/{k}") }, out);
            }
        }
        Value::Array(a) => {
            if let Some(x) = a.first() {
                kinds(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// fio-plot, the charting tool most used with fio, draws its IOPS/latency bar chart and
/// its latency histogram from a folder of iopulse's fio-json documents. It is installed
/// from the Python package index into a virtual environment under the build's temporary
/// directory (once); without network or python3's venv the test says so and skips.
#[test]
fn fio_plot_draws_charts_from_fio_json() {
    let Some(fio_plot) = fio_plot() else { return };
    let dir = temp_dir();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let f = path_str(&dir.path().join("fp.dat"));
    for depth in ["1", "4"] {
        let (stdout, _) = run_ok(&[
            &f,
            "--file-size",
            "2M",
            "--duration",
            "0.5",
            "--interval",
            "100ms",
            "--random",
            "--engine",
            "null",
            "--queue-depth",
            depth,
            "--output-format",
            "fio-json",
        ]);
        std::fs::write(results.join(format!("randread-{depth}.json")), stdout).unwrap();
    }
    for (chart, extra) in [("bars.png", &["-l"][..]), ("histogram.png", &["-H", "-d", "1", "-n", "1"][..])] {
        let out = std::process::Command::new(&fio_plot)
            .current_dir(dir.path())
            .args(["-i", "results", "-T", "iopulse", "-r", "randread", "-o", chart])
            .args(extra)
            .env("MPLBACKEND", "Agg")
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "fio-plot {extra:?}: {said}");
        assert!(!said.contains("Error") && !said.contains("Could not find"), "fio-plot {extra:?}: {said}");
        let png =
            std::fs::read(dir.path().join(chart)).unwrap_or_else(|e| panic!("fio-plot wrote no {chart} ({e}): {said}"));
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{chart}: {} bytes", png.len());
    }
}

/// fio-plot's command, installed once into `$CARGO_TARGET_TMPDIR/fio-plot-venv` with pip;
/// `None` (and a SKIP line) when that cannot be done.
fn fio_plot() -> Option<std::path::PathBuf> {
    let venv = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-plot-venv");
    let bin = venv.join("bin/fio-plot");
    if bin.is_file() {
        return Some(bin);
    }
    let step = |program: &std::path::Path, args: &[&str]| {
        std::process::Command::new(program).args(args).output().map_err(|e| e.to_string()).and_then(|o| {
            if o.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&o.stderr).into_owned()) }
        })
    };
    let installed = step("python3".as_ref(), &["-m", "venv", &path_str(&venv)])
        .and_then(|()| step(&venv.join("bin/pip"), &["install", "--quiet", "fio-plot"]));
    match installed {
        Ok(()) if bin.is_file() => Some(bin),
        Ok(()) => {
            eprintln!("SKIP: pip installed fio-plot without a fio-plot command: charts not drawn");
            None
        }
        Err(why) => {
            let why = why.lines().last().unwrap_or("").to_string();
            eprintln!("SKIP: fio-plot could not be installed from the Python package index ({why}): charts not drawn");
            let _ = std::fs::remove_dir_all(&venv);
            None
        }
    }
}

/// The iodepth maps are counted: libaio O_DIRECT at depth 24 handing its I/Os over in
/// batches of at most 6. The result's `io_depths.per_submit` is the io_submit calls strace sees,
/// value by value; every I/O is issued, submitted and reaped once; and fio-json's
/// `iodepth_submit` is their shares in fio's buckets (a call of 6 in "8").
#[test]
fn iodepth_maps_are_the_calls_strace_sees() {
    if !engine_available("libaio") {
        eprintln!("SKIP: libaio is not available here: its io_submit calls cannot be counted");
        return;
    }
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIP: strace is not installed (apt-get install strace): the system calls cannot be counted");
        return;
    }
    let dir = temp_dir();
    let f = path_str(&dir.path().join("d.dat"));
    let json = path_str(&dir.path().join("r.json"));
    let shape = ["--file-size", "16m", "--engine", "libaio", "--direct", "--random", "--queue-depth", "24"];
    // Laid out first, so that the traced run's only io_submit calls are its reads.
    run_ok(&[&[f.as_str(), "--ops", "10", "--quiet"][..], &shape[..]].concat());
    let trace = dir.path().join("strace.txt");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=io_submit", "-o"]).arg(&trace).arg(env!("CARGO_BIN_EXE_iopulse"));
    cmd.arg(&f).args(shape).args(["--submit-batch", "6", "--ops", "3000", "--output-format", "fio-json"]);
    cmd.args(["--json", &json]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let depths = &r["io_depths"];
    let pairs = |key: &str| -> Vec<(u64, u64)> {
        let list = depths[key].as_array().unwrap_or_else(|| panic!("no io_depths.{key}: {r}"));
        list.iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap())).collect()
    };
    // io_submit(ctx, nr, iocbs) = submitted: the calls by what each submitted.
    let mut seen = std::collections::BTreeMap::<u64, u64>::new();
    for line in std::fs::read_to_string(&trace).unwrap().lines().filter(|l| l.contains("io_submit(")) {
        let ret: u64 = line.rsplit("= ").next().unwrap().trim().parse().unwrap_or_else(|_| panic!("{line}"));
        *seen.entry(ret).or_default() += 1;
    }
    assert_eq!(pairs("per_submit"), seen.into_iter().collect::<Vec<_>>(), "{depths}");
    let ios = |key: &str| pairs(key).iter().map(|(n, c)| n * c).sum::<u64>();
    assert_eq!(ios("per_submit"), 3000, "{depths}");
    assert_eq!(ios("per_reap"), 3000, "{depths}");
    assert_eq!(pairs("at_issue").iter().map(|(_, c)| c).sum::<u64>(), 3000, "{depths}");
    assert!(pairs("at_issue").iter().all(|(d, _)| (1..=24).contains(d)), "{depths}");
    // Most I/Os went out with the queue full (a slot is refilled as soon as it frees).
    let full = pairs("at_issue").iter().filter(|(d, _)| *d >= 16).map(|(_, c)| c).sum::<u64>();
    assert!(full > 2000, "{depths}");
    let fio: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let job = &fio["jobs"][0];
    // fio's buckets of the calls strace saw: 1-4 under "4", 5-8 under "8".
    let calls: u64 = pairs("per_submit").iter().map(|(_, c)| c).sum();
    let share = |lo: u64, hi: u64| {
        pairs("per_submit").iter().filter(|(n, _)| (lo..=hi).contains(n)).map(|(_, c)| c).sum::<u64>() as f64 * 100.0
            / calls as f64
    };
    // `--submit-batch 6` caps a call at 6; how many calls carry a whole 6 depends on how many
    // completions each wait reaps, which a loaded machine spreads out, so only the cap and its
    // use are asserted here (strace's counts above are the exact check).
    assert!(pairs("per_submit").iter().all(|(n, _)| *n <= 6), "a call above the batch of 6: {depths}");
    assert!(pairs("per_submit").iter().any(|(n, _)| *n == 6), "no call carried a whole batch of 6: {depths}");
    for (key, lo, hi) in [("4", 1, 4), ("8", 5, 8)] {
        assert!((job["iodepth_submit"][key].as_f64().unwrap() - share(lo, hi)).abs() < 1e-9, "{key}: {job}");
    }
    let level_16 = job["iodepth_level"]["16"].as_f64().unwrap();
    assert!((level_16 - full as f64 * 100.0 / 3000.0).abs() < 1e-9, "{job}");
    let complete: f64 = job["iodepth_complete"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
    assert!((complete - 100.0).abs() < 1e-9, "{job}");
}
