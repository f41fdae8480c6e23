//! Placement on the real machine, through the real binary: pinned workers run
//! on their CPUs, `--numa-zones` binds buffers to the node, the report and the
//! JSON show it, and CPUs outside the allowed set are refused.

use crate::common::*;
use iopulse::testing::bind;
use serde_json::Value;
use std::os::unix::process::CommandExt;

fn workers(v: &Value) -> &Vec<Value> {
    v["workers"].as_array().expect("workers")
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}")).iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// A short null-engine run on a small temporary file, JSON parsed.
fn placed_run(extra: &[&str]) -> Value {
    let dir = temp_dir();
    let file = path_str(&dir.path().join("t.dat"));
    let mut args = vec![file.as_str(), "--file-size", "1M", "--engine", "null", "--duration", "0.2"];
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn a_worker_pinned_to_a_cpu_runs_on_it() {
    let allowed = bind::allowed_cpus().unwrap();
    for &cpu in &allowed {
        let v = placed_run(&["--threads", "2", "--cpu-cores", &cpu.to_string()]);
        assert_eq!(v["placement"]["pinned"], true);
        assert_eq!(v["placement"]["policy"], "scatter");
        for w in workers(&v) {
            assert_eq!(ids(&w["placement"]["cpus"]), vec![cpu], "{w}");
            assert_eq!(w["placement"]["cpu_seen"].as_u64(), Some(u64::from(cpu)), "{w}");
            assert_eq!(w["placement"]["memory_bound"], false);
        }
    }
}

#[test]
fn every_allowed_cpu_gets_its_own_worker_before_any_repeats() {
    let allowed = bind::allowed_cpus().unwrap();
    let n = allowed.len().to_string();
    let v = placed_run(&["--threads", &n, "--cpu-policy", "compact"]);
    let seen: Vec<u32> = workers(&v).iter().map(|w| w["placement"]["cpu_seen"].as_u64().unwrap() as u32).collect();
    let mut planned: Vec<u32> = workers(&v).iter().map(|w| ids(&w["placement"]["cpus"])[0]).collect();
    for (w, (&p, &s)) in workers(&v).iter().zip(planned.iter().zip(&seen)) {
        assert_eq!(p, s, "{w}");
    }
    planned.sort_unstable();
    assert_eq!(planned, allowed);
    assert_eq!(ids(&v["placement"]["allowed_cpus"]), allowed);
}

#[test]
fn numa_zones_bind_the_buffers_to_the_node() {
    let v = placed_run(&["--threads", "2", "--numa-zones", "0"]);
    let node0: Vec<u32> = {
        let text = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap_or_default();
        let allowed = bind::allowed_cpus().unwrap();
        let all = iopulse::testing::units::parse_id_list(&text).unwrap_or_else(|_| allowed.clone());
        if all.is_empty() { allowed } else { all.into_iter().filter(|c| allowed.contains(c)).collect() }
    };
    for w in workers(&v) {
        let p = &w["placement"];
        assert_eq!(p["node"], 0, "{w}");
        assert_eq!(ids(&p["cpus"]), node0, "{w}");
        assert!(node0.contains(&(p["cpu_seen"].as_u64().unwrap() as u32)), "{w}");
        if p["memory_bound"] == true {
            assert_eq!(p["buffer_node_seen"], 0, "{w}");
        }
    }
    assert_eq!(v["spec"]["placement"]["numa_zones"]["nodes"], serde_json::json!([0]));
}

#[test]
fn unpinned_runs_still_report_the_topology_and_where_workers_ran() {
    let v = placed_run(&["--threads", "2"]);
    let p = &v["placement"];
    assert!(["sysfs", "hwloc"].contains(&p["backend"].as_str().unwrap()), "{p}");
    let t = &p["topology"];
    assert!(t["pus"].as_u64().unwrap() >= 1 && t["cores"].as_u64().unwrap() >= 1, "{t}");
    assert!(t["packages"].as_u64().unwrap() >= 1 && t["nodes"].as_u64().unwrap() >= 1, "{t}");
    assert_eq!(p["pinned"], false);
    assert_eq!(p["policy"], Value::Null);
    for w in workers(&v) {
        assert_eq!(w["placement"]["cpus"], Value::Null);
        assert!(w["placement"]["cpu_seen"].as_u64().is_some(), "{w}");
    }
}

#[test]
fn the_text_report_shows_topology_and_placement() {
    let dir = temp_dir();
    let file = path_str(&dir.path().join("t.dat"));
    let cpu = bind::allowed_cpus().unwrap()[0].to_string();
    let args = [file.as_str(), "--file-size", "1M", "--engine", "null", "--duration", "0.1", "--threads", "2"];
    let (code, stdout, stderr) = run(&[&args[..], &["--cpu-cores", &cpu]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Topology: "), "{stdout}");
    assert!(stdout.contains(&format!("Placement: scatter · w0 CPU {cpu} node ")), "{stdout}");
    assert!(stdout.contains(&format!("· w1 CPU {cpu} node ")), "{stdout}");
    assert!(!stdout.contains('⚠'), "{stdout}");
    let (code, stdout, _) = run(&args);
    assert_eq!(code, 0);
    assert!(stdout.contains("Placement: not pinned"), "{stdout}");
}

#[test]
fn a_cpu_outside_the_allowed_set_is_a_usage_error_listing_the_allowed_ones() {
    let allowed = bind::allowed_cpus().unwrap();
    if allowed.len() < 2 {
        eprintln!("skipped: needs 2 allowed CPUs, this process has {allowed:?}");
        return;
    }
    let (first, last) = (allowed[0], *allowed.last().unwrap());
    let dir = temp_dir();
    let file = dir.path().join("new.dat");
    let mut cmd = iopulse();
    cmd.args([&path_str(&file), "--cpu-cores", &last.to_string()]);
    // As `taskset -c FIRST iopulse ...`: the child may only run on the first allowed CPU.
    // SAFETY: between fork and exec the closure only makes one system call, which is
    // async-signal-safe, and touches no lock or allocation.
    unsafe {
        cmd.pre_exec(move || {
            let mask: [u64; 16] = {
                let mut m = [0u64; 16];
                m[first as usize / 64] |= 1 << (first % 64);
                m
            };
            if libc::syscall(libc::SYS_sched_setaffinity, 0, std::mem::size_of_val(&mask), mask.as_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let expected = format!(
        "--cpu-cores {last}: CPU {last} is outside the CPUs this process may use (cgroup cpuset or taskset); CPUs available: {first}"
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(!file.exists(), "the target was created");
}

#[test]
fn help_explains_placement_with_an_example() {
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for text in ["--cpu-cores", "--cpu-policy", "--numa-zones", "scatter", "compact", "auto", "--numa-zones 0,1"] {
        assert!(stdout.contains(text), "--help does not mention {text}");
    }
}
