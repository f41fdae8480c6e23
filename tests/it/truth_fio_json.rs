//! The fio-compatible JSON files iopulse's latency where fio files the same
//! measurement: submission to completion is fio's `lat_ns`. Completion and
//! submission latency are not measured apart, so `clat_ns` and `slat_ns` are what
//! fio writes for a latency it did not record: zeros, `N` 0, no `percentile`.
//! Checked on the JSON of real runs, against the native JSON of the same run.

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
fn latency_is_fios_lat_ns_and_clat_slat_are_unmeasured() {
    let (fio, r) = fio_and_native(&["--random"]);
    let job = &fio["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 512);
    assert_total_latency(&job["read"], &r["read"], "read");
    assert_unmeasured(&job["read"]["clat_ns"], "read clat_ns");
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
        assert_unmeasured(&job[op]["clat_ns"], &format!("{op} clat_ns"));
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
