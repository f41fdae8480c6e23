//! fio job files: `iopulse from-fio` translates job files written in the style of fio's
//! examples (tests/fio_jobs/) into iopulse job files with the same meaning, key by key;
//! `iopulse run FILE.fio` runs them; options without an equivalent are refused by name and
//! line (tests/bad_job_files/*.fio, checked by job_files.rs) or, with
//! --ignore-unsupported, warned about and recorded in the result; and a translated job
//! and fio's own run of the original agree on IOPS (buffered warm-cache reads).

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn fio_jobs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_jobs")
}

/// `iopulse from-fio FILE` with ${IOPULSE_FIO_DIR} set to `dir`: the TOML it printed, parsed.
fn from_fio(file: &Path, dir: &Path, extra_env: &[(&str, &str)]) -> toml::Table {
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir).args(["from-fio", &path_str(file)]);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "from-fio {}: {stderr}", file.display());
    stdout.parse::<toml::Table>().unwrap_or_else(|e| panic!("not TOML ({e}):\n{stdout}"))
}

/// Job `name`'s value of `key`, itself or from [global].
fn key<'a>(t: &'a toml::Table, job: &str, key: &str) -> Option<&'a toml::Value> {
    let table = t.get(job).and_then(|j| j.as_table()).unwrap_or_else(|| panic!("no job [{job}] in {t:#?}"));
    table.get(key).or_else(|| t.get("global").and_then(|g| g.get(key)))
}

fn text(t: &toml::Table, job: &str, k: &str) -> String {
    match key(t, job, k) {
        Some(toml::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => panic!("[{job}] has no `{k}`: {t:#?}"),
    }
}

fn jobs(t: &toml::Table) -> Vec<&str> {
    t.keys().filter(|k| *k != "global").map(String::as_str).collect()
}

#[test]
fn a_random_read_job_translates_key_by_key() {
    let dir = temp_dir();
    let t = from_fio(&fio_jobs().join("rand-read.fio"), dir.path(), &[]);
    // `name=` in [global] names the job, as in fio.
    assert_eq!(jobs(&t), vec!["rand-read-test"]);
    let j = "rand-read-test";
    assert_eq!(text(&t, j, "targets"), format!("[\"{}/rand-read.dat\"]", path_str(dir.path())));
    assert_eq!(key(&t, j, "random").and_then(toml::Value::as_bool), Some(true));
    assert_eq!(text(&t, j, "block-size"), "4k");
    assert_eq!(text(&t, j, "file-size"), "16M");
    assert_eq!(text(&t, j, "engine"), "sync");
    assert_eq!(text(&t, j, "queue-depth"), "1");
    assert_eq!(text(&t, j, "duration"), "2s");
    assert!(key(&t, j, "direct").is_none(), "direct=0 is buffered: {t:#?}");
    assert!(key(&t, j, "write-percent").is_none() && key(&t, j, "io-limit").is_none());
}

#[test]
fn stonewalled_jobs_on_one_file_become_phases_and_run() {
    let dir = temp_dir();
    let fio = fio_jobs().join("ssd-test.fio");
    let t = from_fio(&fio, dir.path(), &[]);
    assert_eq!(jobs(&t), vec!["seq-read", "rand-read", "seq-write", "rand-write"]);
    let target = format!("[\"{}/ssd.test.file\"]", path_str(dir.path()));
    for j in jobs(&t) {
        assert_eq!(text(&t, j, "targets"), target, "directory + filename");
        assert_eq!(text(&t, j, "engine"), "libaio");
        assert_eq!(text(&t, j, "queue-depth"), "4");
        assert_eq!(key(&t, j, "direct").and_then(toml::Value::as_bool), Some(true));
        // runtime without time_based: the runtime or size bytes, whichever comes first.
        assert_eq!((text(&t, j, "duration"), text(&t, j, "io-limit")), ("1s".into(), "16M".into()));
        assert_eq!(key(&t, j, "stonewall").and_then(toml::Value::as_bool), Some(true));
    }
    assert_eq!(text(&t, "seq-write", "write-percent"), "100");
    assert_eq!(key(&t, "rand-write", "random").and_then(toml::Value::as_bool), Some(true));
    assert!(key(&t, "seq-read", "random").is_none() && key(&t, "seq-read", "write-percent").is_none());

    // The .fio file runs directly, as its translation would: four phases, in order.
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir.path()).args([
        "run",
        &path_str(&fio),
        "--duration",
        "200ms",
        "--output-format",
        "json",
        "--quiet",
    ]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let ran: Vec<(&str, u64)> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["job"].as_str().unwrap(), j["phase"].as_u64().unwrap()))
        .collect();
    assert_eq!(ran, vec![("seq-read", 1), ("rand-read", 2), ("seq-write", 3), ("rand-write", 4)]);
    for j in doc["jobs"].as_array().unwrap() {
        let (reads, writes) = (u64_at(j, &["read", "ops"]), u64_at(j, &["write", "ops"]));
        let writer = j["job"].as_str().unwrap().ends_with("write");
        assert!(
            if writer { writes > 0 && reads == 0 } else { reads > 0 && writes == 0 },
            "{}: {reads} reads, {writes} writes",
            j["job"]
        );
    }
    assert_eq!(std::fs::metadata(dir.path().join("ssd.test.file")).unwrap().len(), 16 << 20);
}

#[test]
fn concurrent_jobs_aliases_rates_think_time_and_a_verified_write_pass() {
    let dir = temp_dir();
    let t = from_fio(&fio_jobs().join("mixed-workers.fio"), dir.path(), &[]);
    assert_eq!(jobs(&t), vec!["hot-mix", "logger", "integrity", "integrity-verify"]);
    let d = path_str(dir.path());
    // numjobs without filename: a file per worker (fio's per-clone files).
    assert_eq!(text(&t, "hot-mix", "targets"), format!("[\"{d}/hot-mix\"]"));
    assert_eq!(text(&t, "hot-mix", "file-distribution"), "per-worker");
    assert_eq!(text(&t, "hot-mix", "threads"), "2");
    assert_eq!(text(&t, "hot-mix", "write-percent"), "30");
    assert_eq!(text(&t, "hot-mix", "distribution"), "zipf");
    assert_eq!(text(&t, "hot-mix", "zipf-theta"), "1.2");
    assert_eq!(text(&t, "hot-mix", "block-size"), "8k");
    assert_eq!(text(&t, "hot-mix", "rate-iops"), "200");
    assert_eq!(text(&t, "hot-mix", "seed"), "42");
    assert_eq!(text(&t, "hot-mix", "duration"), "1s");
    // One job, no filename: fio's NAME.0.0 in the directory.
    assert_eq!(text(&t, "logger", "targets"), format!("[\"{d}/logger.0.0\"]"));
    assert_eq!(text(&t, "logger", "think-time"), "100us", "fio's thinktime is in microseconds");
    assert_eq!(text(&t, "logger", "think-every"), "4");
    // end_fsync: the flush at the end of fio's job is inside its runtime, as --end-fsync's.
    assert_eq!(key(&t, "logger", "end-fsync").and_then(toml::Value::as_bool), Some(true));
    assert!(key(&t, "logger", "fsync-on-close").is_none());
    assert_eq!(text(&t, "logger", "fadvise-hint"), "off");
    assert!(key(&t, "hot-mix", "fadvise-hint").is_none(), "fio's default is iopulse's");
    // verify: the write covers every block once, then a read pass checks them, a phase later.
    assert_eq!(text(&t, "integrity", "duration"), "0");
    assert_eq!(key(&t, "integrity", "verify").and_then(toml::Value::as_bool), Some(true));
    assert_eq!(key(&t, "integrity", "stonewall").and_then(toml::Value::as_bool), Some(true));
    assert_eq!(key(&t, "integrity-verify", "verify").and_then(toml::Value::as_bool), Some(true));
    assert_eq!(key(&t, "integrity-verify", "stonewall").and_then(toml::Value::as_bool), Some(true));
    assert!(key(&t, "integrity-verify", "write-percent").is_none());
    assert_eq!(text(&t, "integrity-verify", "targets"), text(&t, "integrity", "targets"));

    // The printed job file runs with iopulse run; the verify pass checks every block.
    let toml_path = dir.path().join("mixed.toml");
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir.path()).args(["from-fio", &path_str(&fio_jobs().join("mixed-workers.fio"))]);
    let (_, printed, _) = run_command(&mut cmd);
    std::fs::write(&toml_path, printed).unwrap();
    let (code, stdout, stderr) = run(&["run", &path_str(&toml_path), "--output-format", "json", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let check = doc["jobs"].as_array().unwrap().iter().find(|j| j["job"] == "integrity-verify").unwrap();
    assert_eq!(u64_at(check, &["read", "ops"]), (8 << 20) / (64 << 10), "every block read back once");
    assert_eq!(u64_at(check, &["verification", "failures"]), 0);
    assert!(dir.path().join("hot-mix.0").exists() && dir.path().join("hot-mix.1").exists());
}

#[test]
fn include_and_environment_variables() {
    let dir = temp_dir();
    let t = from_fio(&fio_jobs().join("include-and-vars.fio"), dir.path(), &[("IOPULSE_BS", "16k")]);
    let d = path_str(dir.path());
    assert_eq!(text(&t, "seq-reader", "block-size"), "16k");
    assert_eq!(text(&t, "seq-reader", "engine"), "sync");
    assert_eq!(text(&t, "seq-reader", "targets"), format!("[\"{d}/seq-reader.0.0\", \"{d}/seq-reader.0.1\"]"));
    // size is the job's total over its files; without runtime every block is read once.
    assert_eq!(text(&t, "seq-reader", "file-size"), "4M");
    assert_eq!(text(&t, "seq-reader", "duration"), "0");
}

#[test]
fn ignore_unsupported_warns_per_option_and_records_it_in_the_result() {
    let dir = temp_dir();
    let fio = dir.path().join("legacy.fio");
    std::fs::write(
        &fio,
        format!(
            "[global]\nloops=2\n[a]\nfilename={}/a.dat\nsize=1m\nrw=randread\nruntime=200ms\ntime_based\nexitall\n",
            path_str(dir.path())
        ),
    )
    .unwrap();
    let f = path_str(&fio);
    let (code, _, stderr) = run(&["from-fio", &f]);
    assert_eq!(code, 2, "{stderr}");
    // Every option without an equivalent is named at once, each with its line.
    assert!(stderr.contains("[a]: 2 options with no iopulse equivalent: `loops` ("), "{stderr}");
    assert!(stderr.contains("legacy.fio:2), `exitall` (") && stderr.contains("legacy.fio:9)"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");

    let (code, stdout, stderr) = run(&["from-fio", &f, "--ignore-unsupported"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(":2: fio option `loops` has no iopulse equivalent: ignored"), "{stderr}");
    assert!(stderr.contains(":9: fio option `exitall` has no iopulse equivalent: ignored"), "{stderr}");
    assert!(stdout.contains("# warning: ") && stdout.contains("`loops`"), "{stdout}");

    let json = dir.path().join("r.json");
    let (code, _, stderr) =
        run(&["run", &f, "--ignore-unsupported", "--json", &path_str(&json), "--output-format", "json", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = read_json(&json);
    let warnings: Vec<&str> = doc["warnings"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(warnings.iter().any(|w| w.contains("`loops`")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("`exitall`")), "{warnings:?}");
    // A TOML job file has nothing to ignore: the flag is refused there.
    let toml = dir.path().join("j.toml");
    std::fs::write(&toml, "[a]\nduration = \"100ms\"\n").unwrap();
    let (code, _, stderr) = run(&["run", &path_str(&toml), "--ignore-unsupported"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--ignore-unsupported applies to fio job files"), "{stderr}");
}

/// fio's JSON output of `fio FILE`: read IOPS of its one job, and the CPU time (user and
/// system, from fio's own shares of the job's runtime) it spent per read, in ns.
fn fio_read_iops_and_cpu(file: &Path) -> Option<(f64, f64)> {
    let out = Command::new("fio").args(["--output-format=json", &path_str(file)]).output().ok()?;
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{')?;
    let doc: Value = serde_json::from_str(&text[start..]).ok()?;
    let job = &doc["jobs"][0];
    let cpu_share = (job["usr_cpu"].as_f64()? + job["sys_cpu"].as_f64()?) / 100.0;
    let cpu_ns = cpu_share * job["job_runtime"].as_f64()? * 1e6;
    Some((job["read"]["iops"].as_f64()?, cpu_ns / job["read"]["total_ios"].as_f64()?))
}

fn read_whole(path: &Path) {
    let _ = std::fs::read(path).unwrap();
}

#[test]
fn a_translated_job_and_fio_agree_on_buffered_warm_cache_read_cost() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIP: fio is not installed: the side-by-side run is not done");
        return;
    }
    let dir = temp_dir();
    let data = dir.path().join("shared.dat");
    // Real data (no holes), read once so that the cache is warm for both runs.
    let block: Vec<u8> = (0..1u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut bytes = Vec::with_capacity(32 << 20);
    for _ in 0..32 {
        bytes.extend_from_slice(&block);
    }
    std::fs::write(&data, &bytes).unwrap();
    let fio = dir.path().join("warm.fio");
    std::fs::write(
        &fio,
        format!(
            "; buffered random reads from the page cache\n[global]\nioengine=psync\nbs=256k\nsize=32m\ninvalidate=0\ntime_based\nruntime=2\n[warm]\nrw=randread\nfilename={}\n",
            path_str(&data)
        ),
    )
    .unwrap();
    // Each tool reads from the cache on one CPU, bound by that CPU: alone on a machine,
    // its IOPS are one over its CPU time per read (both within a few % of each other here).
    // On a shared machine the IOPS measure the share of a CPU each run was given: with the
    // suite and two busy loops on two CPUs, the best of three alternating runs of each came
    // out 0.41 apart, and single runs of fio 7,600 to 24,000 IOPS while its CPU time per
    // read stayed within 5 % (17.6 to 18.5 µs). So the tools are compared by what each
    // spent per read: CPU time, user and system (the copy from the cache is system time),
    // which waiting for a CPU does not inflate. The bound stays 30 %, on the best of three
    // rounds, alternating, and up to eight while the bests are still apart (caches and
    // memory bandwidth are shared with the load too).
    let within = |fio: f64, iopulse: f64| (0.7..=1.0 / 0.7).contains(&(fio / iopulse));
    let (mut fio_ns, mut iopulse_ns) = (f64::MAX, f64::MAX);
    for round in 0..8 {
        if round >= 3 && within(fio_ns, iopulse_ns) {
            break;
        }
        read_whole(&data);
        let Some((fio_iops, ns)) = fio_read_iops_and_cpu(&fio) else {
            eprintln!("SKIP: fio gave no JSON result here");
            return;
        };
        fio_ns = fio_ns.min(ns);
        read_whole(&data);
        let (code, stdout, stderr) = run(&["run", &path_str(&fio), "--output-format", "json", "--quiet"]);
        assert_eq!(code, 0, "{stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["jobs"][0]["spec"]["cache"], "keep", "invalidate=0 is --cache keep");
        let iops = doc["read"]["iops"].as_f64().unwrap();
        assert!(iops > 0.0, "{}", doc["read"]);
        // The whole process's CPU time in the window, per I/O.
        let per_io = doc["cpu"]["per_io_ns"].as_f64().unwrap_or_else(|| panic!("no cpu.per_io_ns: {}", doc["cpu"]));
        iopulse_ns = iopulse_ns.min(per_io);
        eprintln!(
            "round {round}: fio {fio_iops:.0} IOPS, {ns:.0} ns of CPU per read; iopulse {iops:.0} IOPS, {per_io:.0} ns"
        );
    }
    // 256 KiB reads: the copy from the cache, not the tool's own cost per I/O, sets the
    // pace, so that a debug build of iopulse (cargo test) compares fairly with fio too.
    eprintln!(
        "warm buffered 256k random reads, CPU per read: fio {fio_ns:.0} ns, iopulse {iopulse_ns:.0} ns (iopulse \
         {:.2}x fio's rate per CPU second)",
        fio_ns / iopulse_ns
    );
    assert!(
        within(fio_ns, iopulse_ns),
        "CPU per read: fio {fio_ns:.0} ns, iopulse {iopulse_ns:.0} ns: more than 30 % apart"
    );
    assert_eq!(std::fs::read(&data).unwrap(), bytes, "a read run changed the file");
}

#[test]
fn fsync_fdatasync_and_sync_become_flushes_and_open_flags() {
    let dir = temp_dir();
    let t = from_fio(&fio_jobs().join("wal.fio"), dir.path(), &[]);
    assert_eq!(text(&t, "wal", "fdatasync-every"), "8", "fio's fdatasync=8");
    assert_eq!(text(&t, "wal", "sync-writes"), "dsync", "fio's sync=dsync");
    assert!(key(&t, "checkpoint", "fsync-every").is_none(), "fsync=0 is no flush");
    assert!(key(&t, "checkpoint", "sync-writes").is_none());
}

#[test]
fn a_bssplit_job_translates_to_the_same_split_and_runs_with_per_size_figures() {
    let dir = temp_dir();
    let file = fio_jobs().join("bssplit.fio");
    let t = from_fio(&file, dir.path(), &[]);
    assert_eq!(text(&t, "mix", "bssplit"), "4k/80:64k/20,1m/100");
    assert_eq!(text(&t, "mix", "block-align"), "4k");
    assert!(key(&t, "mix", "block-size").is_none(), "a split overrides bs, as in fio: {t:#?}");
    let json = dir.path().join("r.json");
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir.path()).args(["run", &path_str(&file), "--json", &path_str(&json), "--quiet"]);
    let (code, _, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let job = &r["jobs"][0];
    let sizes: Vec<u64> = job["block_sizes"].as_array().unwrap().iter().map(|b| u64_at(b, &["size_bytes"])).collect();
    assert_eq!(sizes, [4096, 65536, 1 << 20], "{job}");
    assert_eq!(u64_at(&job["block_sizes"][2], &["read", "ops"]), 0, "1 MiB is the writes' size only");
    assert_eq!(u64_at(&job["block_sizes"][0], &["write", "ops"]), 0, "4 KiB is the reads' size only");
}

#[test]
fn zoned_random_distributions_translate_and_run_with_their_zones() {
    let dir = temp_dir();
    let fio = dir.path().join("zoned.fio");
    let target = path_str(&dir.path().join("zoned.dat"));
    std::fs::write(
        &fio,
        format!(
            "[hot]\nfilename={target}\nrw=randread\nsize=8m\nio_size=16000k\nrandom_distribution=zoned:80/10:20/90\n\
             [abs]\nstonewall\nfilename={target}\nrw=randread\nsize=8m\nio_size=16000k\nrandom_distribution=zoned_abs:50/1m:50/2m\n"
        ),
    )
    .unwrap();
    let t = from_fio(&fio, dir.path(), &[]);
    assert_eq!(text(&t, "hot", "distribution"), "zoned");
    assert_eq!(text(&t, "hot", "zones"), "80/10:20/90");
    assert_eq!(text(&t, "abs", "distribution"), "zoned-abs");
    assert_eq!(text(&t, "abs", "zones"), "50/1m:50/2m");
    // Run as it is: each job's result has its zones, with every I/O counted in one.
    let json = path_str(&dir.path().join("zoned.json"));
    let (code, _, err) = run(&["run", &path_str(&fio), "--json", &json, "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let r = read_json(&json);
    let jobs = r["jobs"].as_array().unwrap_or_else(|| panic!("no jobs: {r}"));
    for job in jobs {
        let zones = job["zones"].as_array().unwrap_or_else(|| panic!("no zones in {job}"));
        let ios: u64 = zones.iter().map(|z| z["ios"].as_u64().unwrap()).sum();
        assert_eq!(ios, 4000, "{job}");
    }
    // Zones per direction (reads, writes), each set's last zone taking the rest of the region.
    std::fs::write(
        &fio,
        format!("[j]\nfilename={target}\nrw=randrw\nsize=8m\nrandom_distribution=zoned:50/50:50/,90/10:10/\n"),
    )
    .unwrap();
    let t = from_fio(&fio, dir.path(), &[]);
    assert_eq!(text(&t, "j", "zones"), "50/50:50/50,90/10:10/90");
    // A set that does not add up is named with the option and line.
    std::fs::write(
        &fio,
        format!("[j]\nfilename={target}\nrw=randrw\nsize=8m\nrandom_distribution=zoned:50/50:50/50,90/100\n"),
    )
    .unwrap();
    let (code, _, err) = run(&["from-fio", &path_str(&fio)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("random_distribution") && err.contains("the writes' zones"), "{err}");
}

#[test]
fn harmless_options_are_notes_and_skips_and_mixes_get_precise_refusals() {
    let dir = temp_dir();
    let fio = dir.path().join("h.fio");
    let target = path_str(&dir.path().join("h.dat"));
    std::fs::write(
        &fio,
        format!(
            "[global]\ngtod_reduce=1\nrandrepeat=0\nrandom_generator=tausworthe64\n\
             [j]\nfilename={target}\nrw=randread\nrwmixread=70\nsize=1m\nio_size=64k\n"
        ),
    )
    .unwrap();
    // Harmless options translate, each said as a note with its reason; so does a mix given to a
    // job that does not mix.
    let json = path_str(&dir.path().join("h.json"));
    let (code, _, err) = run(&["run", &path_str(&fio), "--json", &json, "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let notes = read_json(&json)["notes"].to_string();
    for said in [
        "`gtod_reduce` has no effect in iopulse",
        "`randrepeat` has no effect in iopulse",
        "`random_generator` has no effect in iopulse",
        "rwmixread=70 applies to jobs that mix reads and writes",
    ] {
        assert!(notes.contains(said), "{said}: {notes}");
    }
    for (rw, says) in [
        ("rw=read:-8k", "a backward skip (rw=read:-8k: fio steps back 8k after each I/O) has no iopulse equivalent"),
        ("rw=randread\nrwmixread=101", "rwmixread=101: give a percentage from 0 to 100"),
        ("rw=read\nfilename=::", "filename=:: names no file: give a path"),
    ] {
        std::fs::write(&fio, format!("[j]\nfilename={target}\n{rw}\nsize=1m\n")).unwrap();
        let (code, _, err) = run(&["from-fio", &path_str(&fio)]);
        assert_eq!(code, 2, "{rw}: {err}");
        assert!(err.contains(says), "{rw}: {err}");
    }
}

#[test]
fn steadystate_and_logs_translate_to_steady_state_and_the_time_series() {
    let dir = temp_dir();
    let fio = dir.path().join("ss.fio");
    let target = path_str(&dir.path().join("ss.dat"));
    std::fs::write(
        &fio,
        format!(
            "[ss]\nfilename={target}\nioengine=null\nrw=randread\nsize=1m\ntime_based\nruntime=3s\n\
             steadystate=iops:50%\nss_dur=1s\nwrite_bw_log=ss\nwrite_lat_log=ss\nlog_avg_msec=250\n"
        ),
    )
    .unwrap();
    let t = from_fio(&fio, dir.path(), &[]);
    assert_eq!(text(&t, "ss", "steady-state"), "iops:50%");
    assert_eq!(text(&t, "ss", "steady-state-window"), "1s");
    assert_eq!(text(&t, "ss", "interval"), "250ms");
    let json = path_str(&dir.path().join("ss.json"));
    let (code, _, err) = run(&["run", &path_str(&fio), "--json", &json, "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let r = read_json(&json);
    let job = &r["jobs"][0];
    assert_eq!(job["spec"]["interval_ns"], 250_000_000u64, "{job}");
    assert!(job["time_series"].as_array().is_some_and(|rows| !rows.is_empty()), "rows of 250 ms: {job}");
    assert!(job["steady_state"].is_object(), "the steady state was judged: {job}");
    assert!(r["notes"].to_string().contains("fio's logs become iopulse's time series"), "{}", r["notes"]);
    // Every I/O logged (log_avg_msec=0, fio's default) has no equivalent, said precisely.
    std::fs::write(&fio, format!("[ss]\nfilename={target}\nrw=randread\nsize=1m\nwrite_lat_log=x\nlog_avg_msec=0\n"))
        .unwrap();
    let (code, _, err) = run(&["from-fio", &path_str(&fio)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("log_avg_msec") && err.contains("log of every I/O has no iopulse equivalent"), "{err}");
}

#[test]
fn a_job_files_targets_and_directory_are_overridden_after_the_file() {
    let dir = temp_dir();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let fio = dir.path().join("o.fio");
    std::fs::write(&fio, "[j]\ndirectory=/nonexistent/dir\nfilename=o.dat\nrw=read\nsize=1m\n").unwrap();
    // --directory: the relative file lands in DIR instead of the file's directory.
    let json = path_str(&dir.path().join("o.json"));
    let (code, _, err) = run(&["run", &path_str(&fio), "--directory", &path_str(&other), "--json", &json, "--quiet"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::metadata(other.join("o.dat")).unwrap().len(), 1 << 20, "laid out in --directory");
    assert_eq!(read_json(&json)["jobs"][0]["spec"]["targets"][0], path_str(&other.join("o.dat")));
    // --target: every job on that path, whatever the file says.
    let target = dir.path().join("t.dat");
    let (code, _, err) = run(&["run", &path_str(&fio), "--target", &path_str(&target), "--quiet"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 1 << 20);
    // A path after the job file is not taken for a target: the refusal names --target.
    let (code, _, err) = run(&["run", &path_str(&fio), &path_str(&target)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("give --target {} to run every job on it", path_str(&target))), "{err}");
    // --directory is for fio files; a TOML job file is told to use --target.
    let toml = dir.path().join("j.toml");
    std::fs::write(&toml, "[a]\nduration = \"10ms\"\n").unwrap();
    let (code, _, err) = run(&["run", &path_str(&toml), "--directory", &path_str(&other)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--directory applies to fio job files") && err.contains("--target PATH"), "{err}");
}

/// `iopulse run FILE.fio` with ${IOPULSE_FIO_DIR} set to `dir`: the JSON result.
fn run_fio_file(file: &Path, dir: &Path, extra: &[&str]) -> Value {
    let json = dir.join("result.json");
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir).args(["run", &path_str(file), "--json", &path_str(&json), "--quiet"]).args(extra);
    let (code, _, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "run {}: {stderr}", file.display());
    read_json(&json)
}

/// Each job's writes in a result, by job name.
fn writes_by_job(r: &Value) -> Vec<(String, u64)> {
    r["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("no jobs: {r}"))
        .iter()
        .map(|j| (j["job"].as_str().unwrap().to_string(), u64_at(j, &["write", "ops"])))
        .collect()
}

/// fio's own run of `file` (${IOPULSE_FIO_DIR} = `dir`): each job's writes, its clones summed.
fn fio_writes_by_job(file: &Path, dir: &Path) -> Option<Vec<(String, u64)>> {
    let out = Command::new("fio")
        .env("IOPULSE_FIO_DIR", dir)
        .args(["--output-format=json", &path_str(file)])
        .output()
        .ok()?;
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: Value = serde_json::from_str(&text[text.find('{')?..]).ok()?;
    let mut jobs: Vec<(String, u64)> = Vec::new();
    for j in doc["jobs"].as_array()? {
        let (name, ios) = (j["jobname"].as_str()?.to_string(), j["write"]["total_ios"].as_u64()?);
        match jobs.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += ios,
            None => jobs.push((name, ios)),
        }
    }
    Some(jobs)
}

#[test]
fn number_ios_and_filesize_end_each_clone_as_fio_does_on_files_of_filesize() {
    let dir = temp_dir();
    let file = fio_jobs().join("number-ios.fio");
    let t = from_fio(&file, dir.path(), &[]);
    // Two clones: number_ios counts per clone, iopulse's --ops for the whole job.
    assert_eq!(text(&t, "counted", "ops"), "200", "min(100, 1m / 4k) × 2: {t:#?}");
    assert_eq!(text(&t, "sized", "ops"), "512", "min(1000, 1m / 4k) × 2: {t:#?}");
    for j in ["counted", "sized"] {
        assert_eq!(text(&t, j, "file-size"), "2M", "filesize, not size: {t:#?}");
        assert_eq!(text(&t, j, "duration"), "0", "each block at most once, as fio's random map");
        assert!(key(&t, j, "io-limit").is_none(), "one limit, the smaller: {t:#?}");
    }
    let r = run_fio_file(&file, dir.path(), &[]);
    let expected = vec![("counted".to_string(), 200), ("sized".to_string(), 512)];
    assert_eq!(writes_by_job(&r), expected);
    for job in r["jobs"].as_array().unwrap() {
        let per_worker: Vec<u64> =
            job["workers"].as_array().unwrap().iter().map(|w| u64_at(w, &["write", "ops"])).collect();
        let each = if job["job"] == "counted" { 100 } else { 256 };
        assert_eq!(per_worker, [each, each], "each clone's count, as fio's: {job}");
    }
    // Each clone's file is filesize on disk, though only size bytes of it were done.
    for name in ["counted.0", "counted.1", "sized.0", "sized.1"] {
        assert_eq!(std::fs::metadata(dir.path().join(name)).unwrap().len(), 2 << 20, "{name}");
    }
    // fio's own run of the file agrees, job by job.
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIP: fio is not installed: its counts are not compared");
        return;
    }
    let fio_dir = temp_dir();
    if let Some(fio) = fio_writes_by_job(&file, fio_dir.path()) {
        assert_eq!(fio, expected, "fio's counts");
        assert_eq!(std::fs::metadata(fio_dir.path().join("counted.0.0")).unwrap().len(), 2 << 20);
    }
}

/// The 4 KiB chunks of `data`: how many, and how many distinct.
fn chunks_and_distinct(data: &[u8]) -> (usize, usize) {
    let chunks: Vec<&[u8]> = data.chunks(4096).collect();
    let distinct: std::collections::HashSet<&[u8]> = chunks.iter().copied().collect();
    (chunks.len(), distinct.len())
}

#[test]
fn dedupe_and_compress_percentages_shape_the_written_bytes() {
    let dir = temp_dir();
    let file = fio_jobs().join("reducible.fio");
    let t = from_fio(&file, dir.path(), &[]);
    assert_eq!(text(&t, "dedupe", "dedupe-ratio"), "2", "100 / (100 - 50)");
    assert_eq!(text(&t, "compress", "compress-ratio"), "4", "100 / (100 - 75)");
    assert_eq!(text(&t, "zeros", "write-pattern"), "zeros", "buffer_compress_percentage=100");
    // The zeros job's file holds other bytes first: only its writes can make it zeros.
    let zeros = dir.path().join("zeros.0.0");
    std::fs::write(&zeros, vec![0xa5u8; 8 << 20]).unwrap();
    let r = run_fio_file(&file, dir.path(), &[]);
    let ios = 8 << 20 >> 16;
    assert_eq!(writes_by_job(&r), [("dedupe".into(), ios), ("compress".into(), ios), ("zeros".into(), ios)]);

    let dedupe = std::fs::read(dir.path().join("dedupe.0.0")).unwrap();
    assert_eq!(dedupe.len(), 8 << 20);
    let (chunks, distinct) = chunks_and_distinct(&dedupe);
    let ratio = chunks as f64 / distinct as f64;
    assert!((ratio - 2.0).abs() <= 0.1, "dedupe_percentage=50: {chunks} chunks, {distinct} distinct ({ratio:.3})");

    // Each 4 KiB chunk: 1 KiB of random bytes, then zeros.
    let compress = std::fs::read(dir.path().join("compress.0.0")).unwrap();
    assert_eq!(compress.len(), 8 << 20);
    for (i, chunk) in compress.chunks(4096).enumerate() {
        assert!(chunk[1024..].iter().all(|&b| b == 0), "chunk {i}: not zeros after its first KiB");
        let zero_bytes = chunk[..1024].iter().filter(|&&b| b == 0).count();
        assert!(zero_bytes < 32, "chunk {i}: {zero_bytes} zero bytes in its random KiB");
    }
    let (_, distinct) = chunks_and_distinct(&compress);
    assert_eq!(distinct, 2048, "compression alone: every chunk unique");
    let packed = zstd::bulk::compress(&compress, 3).unwrap();
    let ratio = compress.len() as f64 / packed.len() as f64;
    assert!((3.6..=4.0).contains(&ratio), "buffer_compress_percentage=75: zstd ratio {ratio:.3}");

    let zeros = std::fs::read(&zeros).unwrap();
    assert!(zeros.len() == 8 << 20 && zeros.iter().all(|&b| b == 0), "buffer_compress_percentage=100: zeros");
}

#[test]
fn sqthread_poll_sets_up_the_ring_with_sqpoll_bound_to_its_cpu() {
    let dir = temp_dir();
    let file = fio_jobs().join("sqpoll.fio");
    let t = from_fio(&file, dir.path(), &[]);
    assert_eq!(key(&t, "poll", "sqpoll").and_then(toml::Value::as_bool), Some(true), "{t:#?}");
    assert_eq!(text(&t, "poll", "sqpoll-cpu"), "0");
    if !engine_available("io_uring") {
        return;
    }
    let json = dir.path().join("r.json");
    let mut cmd = iopulse();
    cmd.env("IOPULSE_FIO_DIR", dir.path()).args(["run", &path_str(&file), "--json", &path_str(&json), "--quiet"]);
    let (code, _, stderr) = run_command(&mut cmd);
    if code != 0 && stderr.contains("SQPOLL") {
        eprintln!("SKIP: io_uring's SQPOLL is not available here: {stderr}");
        return;
    }
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let flags = r["jobs"][0]["engine"]["setup"]["setup_flags"]
        .as_str()
        .or_else(|| r["engine"]["setup"]["setup_flags"].as_str())
        .unwrap_or_else(|| panic!("no setup_flags: {}", r["engine"]));
    let flags: Vec<&str> = flags.split('|').collect();
    assert!(flags.contains(&"SQPOLL") && flags.contains(&"SQ_AFF"), "the ring's flags: {flags:?}");
    assert!(u64_at(&r, &["read", "ops"]) > 0);
    // Without sqthread_poll, sqthread_poll_cpu does nothing, as in fio: said in a note.
    let fio = dir.path().join("cpu-only.fio");
    std::fs::write(&fio, std::fs::read_to_string(&file).unwrap().replace("sqthread_poll=1\n", "")).unwrap();
    let r = run_fio_file(&fio, dir.path(), &[]);
    let flags = r["engine"]["setup"]["setup_flags"].as_str().unwrap_or_default().to_string();
    assert!(!flags.contains("SQPOLL"), "{flags}");
    assert!(r["notes"].to_string().contains("sqthread_poll_cpu=0 binds the polling thread"), "{}", r["notes"]);
}

#[test]
fn a_total_dedupe_and_fios_other_dedupe_controls_are_refused_by_file_and_line() {
    let dir = temp_dir();
    let fio = dir.path().join("d.fio");
    let target = dir.path().join("d.dat");
    let refuse = |text: String| {
        std::fs::write(&fio, text).unwrap();
        let (code, _, stderr) = run(&["run", &path_str(&fio), "--quiet"]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(!target.exists(), "nothing is touched: {stderr}");
        stderr
    };
    let head = format!("[global]\nfilename={}\nrw=write\nsize=1m\n[j]\n", path_str(&target));
    let err = refuse(format!("{head}dedupe_percentage=100\n"));
    assert!(
        err.contains("d.fio:6: option `dedupe_percentage` of [j]: dedupe_percentage=100")
            && err.contains("give at most 99"),
        "{err}"
    );
    let err = refuse(format!("{head}filesize=1m-4m\n"));
    assert!(err.contains("d.fio:6: option `filesize` of [j]: filesize=1m-4m: a range of file sizes"), "{err}");
    let err = refuse(format!("{head}buffer_compress_percentage=100\ndedupe_percentage=50\n"));
    assert!(err.contains("d.fio:7: option `dedupe_percentage`") && err.contains("every block is zeros"), "{err}");
    // fio's other dedupe and compression controls have no equivalent: each named.
    let err = refuse(format!(
        "{head}dedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=50\ndedupe_global=1\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4k\n"
    ));
    for (option, line) in
        [("dedupe_mode", 7), ("dedupe_working_set_percentage", 8), ("dedupe_global", 9), ("buffer_compress_chunk", 11)]
    {
        assert!(err.contains(&format!("`{option}` ({}:{line})", path_str(&fio))), "{option}: {err}");
    }
    assert!(err.contains("4 options with no iopulse equivalent"), "{err}");
    assert!(!err.contains("`dedupe_percentage`") && !err.contains("`buffer_compress_percentage`"), "{err}");
    // sqthread_poll with another engine: iopulse's own check, naming the fio option.
    let err = refuse(format!("{head}ioengine=libaio\nsqthread_poll=1\n"));
    assert!(err.contains("d.fio:7: option `sqthread_poll` (iopulse key `sqpoll`)"), "{err}");
}

/// fio's `rw=trim` and `rw=randtrim` are every I/O a trim: `--trim-percent 100`, in order or
/// at random; a job of 16 trims runs 16 trims (fio's trimwrite stays refused).
#[test]
fn rw_trim_becomes_trim_percent_100_and_runs_its_trims() {
    let dir = temp_dir();
    for (rw, random) in [("trim", false), ("randtrim", true)] {
        let fio = dir.path().join(format!("{rw}.fio"));
        std::fs::write(&fio, format!("[t]\nfilename={rw}.dat\nsize=1m\nrw={rw}\nbs=4k\nio_size=64k\n")).unwrap();
        let t = from_fio(&fio, dir.path(), &[]);
        assert_eq!(text(&t, "t", "trim-percent"), "100", "{t:#?}");
        assert_eq!(key(&t, "t", "random").and_then(toml::Value::as_bool), random.then_some(true), "{t:#?}");
        let (code, stdout, stderr) = run_command(
            iopulse().args(["run", &path_str(&fio), "--output-format", "json", "--quiet"]).current_dir(dir.path()),
        );
        assert_eq!(code, 0, "{stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["jobs"][0]["trim"]["ops"].as_u64(), Some(16), "{rw}: 64 KiB of 4 KiB trims");
        assert_eq!(doc["jobs"][0]["read"]["ops"].as_u64(), Some(0), "{rw}");
    }
    let fio = dir.path().join("tw.fio");
    std::fs::write(&fio, "[t]\nfilename=tw.dat\nsize=1m\nrw=trimwrite\n").unwrap();
    let (code, _, stderr) = run(&["from-fio", &path_str(&fio)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("tw.fio:4") && stderr.contains("trimwrite") || stderr.contains("a trim followed by a write"),
        "{stderr}"
    );
}

/// fio's random job of 4 clones on one file with neither size nor runtime: each clone moves
/// as many bytes as the file holds (fio: 4 × its size), a size iopulse takes when the run
/// opens the file (`io-limit = "100%"`); fio's own run of the file agrees. On a device that
/// is not there at translation, it still translates. Before, both were refused ("neither
/// size nor runtime ... whose size is not known before the run").
#[test]
fn a_job_without_size_or_runtime_moves_its_file_s_size_per_clone() {
    let dir = temp_dir();
    let target = dir.path().join("t.dat");
    // A file of data (not holes: iopulse refuses to time reads of holes).
    let data: Vec<u8> = (0..2u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&target, &data).unwrap();
    let file = dir.path().join("whole.fio");
    std::fs::write(
        &file,
        "[whole]\nfilename=${IOPULSE_FIO_DIR}/t.dat\nrw=randread\nbs=4k\nnumjobs=4\nioengine=psync\n",
    )
    .unwrap();
    let t = from_fio(&file, dir.path(), &[]);
    assert_eq!(text(&t, "whole", "io-limit"), "100%", "{t:#?}");
    let r = run_fio_file(&file, dir.path(), &[]);
    let job = &r["jobs"][0];
    assert_eq!(u64_at(job, &["read", "bytes"]), 4 * (2 << 20), "4 clones × the file's 2 MiB: {job}");
    assert_eq!(job["spec"]["io_limit_percent"], 100);
    assert_eq!(u64_at(job, &["spec", "ops_limit"]), 4 * 512);
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIP: fio is not installed: its bytes are not compared");
    } else {
        let out = Command::new("fio")
            .env("IOPULSE_FIO_DIR", dir.path())
            .args(["--output-format=json", &path_str(&file)])
            .output()
            .unwrap();
        assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let fio_bytes: u64 = doc["jobs"].as_array().unwrap().iter().map(|j| u64_at(j, &["read", "io_bytes"])).sum();
        assert_eq!(fio_bytes, 4 * (2 << 20), "fio's own run moves the same");
    }
    // A device absent when translating: its size is the run's to find.
    let device = dir.path().join("device.fio");
    std::fs::write(
        &device,
        "[dev]\nfilename=/dev/iopulse-absent-device\nrw=randwrite\nbs=4k\nnumjobs=4\nnorandommap\n",
    )
    .unwrap();
    let t = from_fio(&device, dir.path(), &[]);
    assert_eq!(text(&t, "dev", "io-limit"), "100%", "{t:#?}");
}

/// A fio option iopulse has as a flag, not a job-file key (`hipri`: `--iopoll`), is
/// refused as one without an equivalent but names the flag to give, from the same table
/// the command line answers `--hipri` with; with --ignore-unsupported it is a warning
/// saying the same. `fixedbufs` has no effect (iopulse registers io_uring's buffers).
#[test]
fn an_option_iopulse_has_as_a_flag_is_refused_naming_the_flag() {
    let dir = temp_dir();
    let file = dir.path().join("hipri.fio");
    std::fs::write(&file, "[fast]\nfilename=/tmp/x.dat\nsize=1m\nioengine=io_uring\nhipri=1\nfixedbufs=1\n").unwrap();
    let (code, _, stderr) = run(&["from-fio", &path_str(&file)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("`hipri` (") && stderr.contains("iopulse: --iopoll"), "{stderr}");
    assert!(!stderr.contains("fixedbufs"), "fixedbufs is harmless: {stderr}");
    let (code, _, stderr) = run(&["from-fio", &path_str(&file), "--ignore-unsupported"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("`hipri`") && stderr.contains("--iopoll") && stderr.contains("ignored"), "{stderr}");
    let (_, line) =
        run(&["--hipri"]).2.split_once("iopulse calls this ").map(|(a, b)| (a.to_string(), b.to_string())).unwrap();
    assert!(line.starts_with("--iopoll"), "the command line's answer is the same: {line}");
}
