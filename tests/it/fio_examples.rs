//! fio's own example job files, as a fio user brings them: each one shipped on this machine
//! (Debian's fio-examples package: /usr/share/doc/fio/examples) either translates with
//! `iopulse from-fio` and runs (on a small file in a temporary folder), or is refused
//! naming the fio option it lacks, one that is in the file; of those refused, the ones that
//! translate with --ignore-unsupported run with it too. fio's examples are GPL: they are
//! read where they are installed, never copied into the project. docs/fio.md gives the
//! counts for fio 3.33's 86 files.
//!
//! Also: `from-fio` takes the run-length flags, which replace the file's run length.

use crate::common::*;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// fio 3.33's examples (Debian's fio-examples 3.33), as docs/fio.md counts them: how many
/// there are, how many translate as they are, and how many more with --ignore-unsupported.
const FIO_3_33: (usize, usize, usize) = (86, 15, 8);

/// The option names of a fio job file (`key=value` or a bare `key`, outside comments and
/// section headers).
fn option_names(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';', '[']))
        .map(|l| l.split('=').next().unwrap().trim().to_string())
        .collect()
}

/// The ${VAR}s of a file, each set to 1 (so that the translation goes on to the options).
fn variables(text: &str) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = text
        .split("${")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| (name.to_string(), "1".to_string())))
        .collect();
    vars.sort();
    vars.dedup();
    vars
}

/// `iopulse from-fio FILE [--ignore-unsupported]`: exit code, stdout, stderr.
fn from_fio(file: &Path, vars: &[(String, String)], ignore: bool) -> (i32, String, String) {
    let mut cmd = iopulse();
    cmd.envs(vars.iter().map(|(k, v)| (k, v))).arg("from-fio").arg(file);
    if ignore {
        cmd.arg("--ignore-unsupported");
    }
    run_command(&mut cmd)
}

/// Runs `file` (translated as `translation`) on an 8 MiB file in a folder of its own, its
/// run length shortened; asserts that it runs.
fn runs(file: &Path, vars: &[(String, String)], translation: &str, ignore: bool) {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let work = temp_dir();
    let target = path_str(&work.path().join("t.dat"));
    // One file for every job (a device, a shared file): on the target given; files of
    // their own in a folder: in the one given.
    let mut targets: Vec<&str> = translation.lines().filter(|l| l.starts_with("targets = ")).collect();
    targets.dedup();
    let place: [&str; 2] =
        if targets.len() == 1 { ["--target", &target] } else { ["--directory", work.path().to_str().unwrap()] };
    // Paced jobs (rate-iops, rate-bw) are cut short too: 8 MiB at fio's 1 MiB/s would take long.
    let timed = ["duration = \"", "io-limit", "ops = ", "rate-"].iter().any(|k| translation.contains(k));
    let mut run = iopulse();
    run.envs(vars.iter().map(|(k, v)| (k, v))).arg("run").arg(file).args(place).args(["--file-size", "8M", "--quiet"]);
    if timed {
        run.args(["--duration", "0.3"]);
    }
    if ignore {
        run.arg("--ignore-unsupported");
    }
    let (code, _, stderr) = run_command(&mut run);
    assert_eq!(code, 0, "{name} translates but does not run (--ignore-unsupported: {ignore}): {stderr}");
}

#[test]
fn each_fio_example_translates_and_runs_or_is_refused_naming_an_option() {
    let Ok(dir) = std::fs::read_dir(EXAMPLES) else {
        eprintln!(
            "SKIP: {EXAMPLES} is absent (install fio's examples, e.g. apt-get install fio-examples): fio's examples not walked"
        );
        return;
    };
    let mut files: Vec<PathBuf> =
        dir.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "fio")).collect();
    files.sort();
    let (mut translated, mut ignoring, mut refused) = (Vec::new(), Vec::new(), 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // A refusal names an option of the file, or the run-length option it needs.
        let mut options = option_names(&text);
        options.extend(["size", "runtime"].map(String::from));
        let vars = variables(&text);
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let (code, stdout, stderr) = from_fio(file, &vars, false);
        if code == 0 {
            stdout.parse::<toml::Table>().unwrap_or_else(|e| panic!("{name}: not TOML ({e}):\n{stdout}"));
            runs(file, &vars, &stdout, false);
            translated.push(name);
            continue;
        }
        assert_eq!(code, 2, "{name}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: one line: {stderr}");
        let named: Vec<&String> = options.iter().filter(|o| stderr.contains(&format!("`{o}`"))).collect();
        assert!(!named.is_empty(), "{name}: the refusal names none of the file's options: {stderr}");
        refused += 1;
        // Without the options iopulse lacks, it may translate: then it runs.
        let (code, stdout, stderr) = from_fio(file, &vars, true);
        if code == 0 {
            stdout.parse::<toml::Table>().unwrap_or_else(|e| panic!("{name}: not TOML ({e}):\n{stdout}"));
            runs(file, &vars, &stdout, true);
            ignoring.push(name);
        } else {
            assert_eq!(code, 2, "{name} with --ignore-unsupported: {stderr}");
        }
    }
    eprintln!(
        "fio's examples: {} files, {} translate and run: {translated:?}; {} more with --ignore-unsupported: {ignoring:?}; {refused} refused",
        files.len(),
        translated.len(),
        ignoring.len()
    );
    assert_eq!(translated.len() + refused, files.len());
    if files.len() == FIO_3_33.0 {
        assert_eq!(translated.len(), FIO_3_33.1, "docs/fio.md's count: {translated:?}");
        assert_eq!(ignoring.len(), FIO_3_33.2, "docs/fio.md's count with --ignore-unsupported: {ignoring:?}");
    }
}

/// `from-fio` takes `--duration` (and the other run-length flags): a `time_based` job
/// without `runtime`, refused alone, translates with it, and the given length replaces the
/// file's (size's io-limit, runtime's duration) in every job, marked as given.
#[test]
fn from_fio_takes_the_run_length_flags() {
    let dir = temp_dir();
    let fio = dir.path().join("j.fio");
    std::fs::write(
        &fio,
        format!(
            "[global]\nfilename={}\nsize=4m\n[a]\nrw=randread\ntime_based\n[b]\nstonewall\nrw=read\nruntime=30\n",
            path_str(&dir.path().join("t.dat"))
        ),
    )
    .unwrap();
    let f = path_str(&fio);
    let (code, _, stderr) = run(&["from-fio", &f]);
    assert_eq!(code, 2);
    assert!(stderr.contains("time_based without a runtime"), "{stderr}");
    let (stdout, _) = run_ok(&["from-fio", &f, "--duration", "2s"]);
    let t: toml::Table = stdout.parse().unwrap();
    // Both jobs alike: in [global].
    assert_eq!(t["global"]["duration"].as_str(), Some("2s"), "{stdout}");
    assert!(!stdout.contains("io-limit"), "the given length replaces the file's: {stdout}");
    for job in ["a", "b"] {
        assert!(t[job].get("duration").is_none(), "{job}: {stdout}");
    }
    assert_eq!(stdout.matches("duration = \"2s\"    # given to from-fio").count(), 1, "{stdout}");
    let (stdout, _) = run_ok(&["from-fio", &f, "--ops", "1000"]);
    let t: toml::Table = stdout.parse().unwrap();
    assert_eq!(t["global"]["ops"].as_integer(), Some(1000), "{stdout}");
    assert!(!stdout.contains("duration"), "runtime's duration replaced: {stdout}");
    // What it prints runs, with the given length.
    let toml_file = dir.path().join("j.toml");
    let (stdout, _) = run_ok(&["from-fio", &f, "--ops", "300"]);
    std::fs::write(&toml_file, stdout).unwrap();
    let r = run_json(&["run", &path_str(&toml_file)]);
    for job in r["jobs"].as_array().unwrap() {
        assert_eq!(u64_at(&job["total"], &["ops"]), 300, "{job}");
    }
    // And so does `iopulse run FILE.fio --duration`.
    let (code, _, stderr) = run(&["run", &f, "--duration", "0.2", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
}
