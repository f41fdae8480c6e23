//! The CPU's state in every result: the workers' CPUs, what the machine says of its
//! governor, boost and SMT, steal and other work, and nothing guessed. The parsing of
//! each sysfs and /proc file is tested on fake trees in src/io/cpu_state/.

use crate::common::*;

#[test]
fn every_result_records_the_cpu_state_of_the_workers_cpus() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("c.dat"));
    let r = run_json(&[&f, "--engine", "null", "--duration", "0.3"]);
    let s = &r["cpu_state"];
    let allowed = r["placement"]["allowed_cpus"].clone();
    assert_eq!(s["worker_cpus"], allowed, "unpinned workers may run on every allowed CPU");
    // /proc/stat is on every Linux: steal and other work are known; other work excludes
    // this process's own CPU time, so it cannot exceed the machine's CPUs.
    let steal = s["steal_fraction"].as_f64().expect("steal known");
    assert!((0.0..=1.0).contains(&steal), "{s}");
    let other = s["other_work_cpus"].as_f64().expect("other work known");
    let online = r["environment"]["cpus_online"].as_f64().unwrap();
    assert!((0.0..=online).contains(&other), "{s}");
    // What sysfs does not have is null, not a guess.
    let has_cpufreq = std::path::Path::new("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").exists();
    assert_eq!(s["governors"].as_object().unwrap().is_empty(), !has_cpufreq, "{s}");
    assert_eq!(s["frequency_mean_khz"].is_null(), !has_cpufreq, "{s}");
    let smt_known = std::path::Path::new("/sys/devices/system/cpu/smt/active").exists();
    assert_eq!(s["smt_active"].is_null(), !smt_known, "{s}");
    assert_valid(&schema_validator(), &r, "a result with cpu_state");

    // Pinned: only the CPUs the workers were pinned to.
    let cpu = r["placement"]["allowed_cpus"][0].as_u64().unwrap().to_string();
    let r = run_json(&[&f, "--engine", "null", "--duration", "0.1", "--cpu-cores", &cpu]);
    assert_eq!(r["cpu_state"]["worker_cpus"], serde_json::json!([cpu.parse::<u64>().unwrap()]));

    // The text report has the line, with "unknown" where the machine does not say.
    let (code, out, err) = run(&[&f, "--engine", "null", "--duration", "0.1"]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().find(|l| l.starts_with("CPU state")).expect("a CPU state line");
    assert!(line.contains("steal ") && line.contains("other work "), "{line}");
    if !has_cpufreq {
        assert!(line.contains("governor unknown") && line.contains("frequency unknown"), "{line}");
    }
}

/// The spinning processes of `on_a_busy_machine`, each killed (by its own pid) and reaped
/// when this is dropped: also when the run inside panics, which used to leave them
/// spinning, and loading the machine, for the rest of the suite.
struct Spinners(Vec<std::process::Child>);

impl Drop for Spinners {
    fn drop(&mut self) {
        for s in &mut self.0 {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

/// Runs `run` while two spinning processes per CPU keep every CPU busy; returns its
/// result and how many spinners there were.
fn on_a_busy_machine<T>(run: impl FnOnce() -> T) -> (T, usize) {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let spinners = Spinners(
        (0..online * 2)
            .map(|_| std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
            .collect(),
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = run();
    let count = spinners.0.len();
    drop(spinners);
    (out, count)
}

#[test]
fn a_busy_machine_is_said_to_be_loaded() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("b.dat"));
    let (r, spinners) =
        on_a_busy_machine(|| run_json(&[&f, "--engine", "null", "--duration", "1", "--cpu-cores", "0"]));
    let other = r["cpu_state"]["other_work_cpus"].as_f64().unwrap();
    assert!(other > 0.5, "other work {other} CPUs with {spinners} spinners");
    let warnings = r["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("busy with other work")), "{warnings:?}");
}

/// On a loop device, the loop driver's kernel workers do the run's own I/O, and their CPU
/// time is counted as other work: the loaded-machine warning names the loop device.
#[test]
fn a_loaded_machine_warning_on_a_loop_device_says_the_loop_workers_count_in_it() {
    let what = "the other-work warning on a loop device";
    let Some(dev) = crate::common::root::loop_device(16 << 20, crate::common::root::LoopOptions::default(), what)
    else {
        return;
    };
    let name = std::path::Path::new(&dev.path).file_name().unwrap().to_string_lossy().into_owned();
    let (r, spinners) = on_a_busy_machine(|| run_json(&[&dev.path, "--random", "--duration", "1", "--cpu-cores", "0"]));
    let warnings = r["warnings"].as_array().unwrap();
    let busy = warnings.iter().filter_map(|w| w.as_str()).find(|w| w.contains("busy with other work"));
    let busy = busy.unwrap_or_else(|| panic!("no other-work warning with {spinners} spinners: {warnings:?}"));
    assert!(busy.contains(&format!("the kernel's workers for {name}")), "{busy}");

    // A file on the ext4 root is not on a loop device: the warning does not say so.
    let dir = temp_dir();
    let f = path_str(&dir.path().join("b.dat"));
    let (r, _) = on_a_busy_machine(|| run_json(&[&f, "--duration", "1", "--cpu-cores", "0"]));
    let warnings = r["warnings"].as_array().unwrap();
    assert!(warnings.iter().filter_map(|w| w.as_str()).all(|w| !w.contains("kernel's workers")), "{warnings:?}");
}
