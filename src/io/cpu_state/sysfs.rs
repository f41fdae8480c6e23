//! The CPU's power state from sysfs, under any root directory (`/` for this
//! machine, a fake tree in tests), as the placement reader does for the topology:
//!
//! - `sys/devices/system/cpu/online`;
//! - per CPU, `cpuN/cpufreq/{scaling_governor,scaling_cur_freq,cpuinfo_max_freq}`
//!   (absent in most VMs and without a cpufreq driver);
//! - boost: `cpufreq/boost` (acpi-cpufreq, amd-pstate), else `intel_pstate/no_turbo`;
//! - SMT: `smt/active` and `smt/control`.
//!
//! A file that is missing or unreadable is `None`: unknown, never guessed.
//!
//! Must not: decide what is worth a warning (`mod.rs` does).

use crate::base::units::parse_id_list;
use std::fs;
use std::path::{Path, PathBuf};

pub(super) fn cpu_dir(root: &Path) -> PathBuf {
    root.join("sys/devices/system/cpu")
}

pub(super) fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

pub(super) fn read_number(path: &Path) -> Option<u64> {
    read_trimmed(path)?.parse().ok()
}

/// The online CPUs; `None` when the list cannot be read.
pub fn online_cpus(root: &Path) -> Option<Vec<u32>> {
    parse_id_list(&read_trimmed(&cpu_dir(root).join("online"))?).ok()
}

/// The cpufreq governor of `cpu` ("performance", "powersave", "schedutil", ...).
pub fn governor(root: &Path, cpu: u32) -> Option<String> {
    read_trimmed(&cpu_dir(root).join(format!("cpu{cpu}/cpufreq/scaling_governor")))
}

/// The current frequency of `cpu` as cpufreq reports it, kHz.
pub fn current_khz(root: &Path, cpu: u32) -> Option<u64> {
    read_number(&cpu_dir(root).join(format!("cpu{cpu}/cpufreq/scaling_cur_freq")))
}

/// The highest frequency `cpu` can run at (with boost, where the driver says so), kHz.
pub fn max_khz(root: &Path, cpu: u32) -> Option<u64> {
    read_number(&cpu_dir(root).join(format!("cpu{cpu}/cpufreq/cpuinfo_max_freq")))
}

/// Whether frequency boost (turbo) is enabled.
pub fn boost(root: &Path) -> Option<bool> {
    let dir = cpu_dir(root);
    if let Some(v) = read_number(&dir.join("cpufreq/boost")) {
        return Some(v != 0);
    }
    read_number(&dir.join("intel_pstate/no_turbo")).map(|no_turbo| no_turbo == 0)
}

/// Whether SMT (hyper-threading) is active, and the kernel's control state ("on", "off",
/// "forceoff", "notsupported", "notimplemented").
pub fn smt(root: &Path) -> (Option<bool>, Option<String>) {
    let dir = cpu_dir(root);
    (read_number(&dir.join("smt/active")).map(|v| v != 0), read_trimmed(&dir.join("smt/control")))
}

#[cfg(test)]
pub(super) mod fake {
    //! A fake sysfs tree for tests.
    use std::fs;
    use std::path::Path;

    pub fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// `cpus` online CPUs with cpufreq: governor, current and max kHz.
    pub fn cpus_with_cpufreq(root: &Path, cpus: &[(u32, &str, u64, u64)]) {
        let list: Vec<String> = cpus.iter().map(|c| c.0.to_string()).collect();
        write(root, "sys/devices/system/cpu/online", &format!("{}\n", list.join(",")));
        for &(cpu, governor, cur, max) in cpus {
            let d = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
            write(root, &format!("{d}/scaling_governor"), &format!("{governor}\n"));
            write(root, &format!("{d}/scaling_cur_freq"), &format!("{cur}\n"));
            write(root, &format!("{d}/cpuinfo_max_freq"), &format!("{max}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::*;
    use super::*;

    #[test]
    fn reads_governor_frequencies_boost_and_smt() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        cpus_with_cpufreq(root, &[(0, "performance", 3_000_000, 4_200_000), (1, "powersave", 800_000, 4_200_000)]);
        write(root, "sys/devices/system/cpu/cpufreq/boost", "1\n");
        write(root, "sys/devices/system/cpu/smt/active", "1\n");
        write(root, "sys/devices/system/cpu/smt/control", "on\n");
        assert_eq!(online_cpus(root), Some(vec![0, 1]));
        assert_eq!(governor(root, 1).as_deref(), Some("powersave"));
        assert_eq!(current_khz(root, 0), Some(3_000_000));
        assert_eq!(max_khz(root, 1), Some(4_200_000));
        assert_eq!(boost(root), Some(true));
        assert_eq!(smt(root), (Some(true), Some("on".to_string())));
    }

    #[test]
    fn intel_pstate_no_turbo_is_boost_off() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
        assert_eq!(boost(dir.path()), Some(false));
        write(dir.path(), "sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
        assert_eq!(boost(dir.path()), Some(true));
    }

    #[test]
    fn missing_files_are_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/devices/system/cpu/online", "0-3\n");
        write(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "\n");
        assert_eq!(online_cpus(root), Some(vec![0, 1, 2, 3]));
        assert_eq!(governor(root, 0), None, "an empty file is unknown");
        assert_eq!(governor(root, 2), None);
        assert_eq!(current_khz(root, 0), None);
        assert_eq!(boost(root), None);
        assert_eq!(smt(root), (None, None));
        assert_eq!(online_cpus(Path::new("/nonexistent-root")), None);
    }
}
