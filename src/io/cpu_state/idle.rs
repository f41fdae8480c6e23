//! The CPUs' idle states over the window, from cpuidle's sysfs files under any root
//! directory (`/` for this machine, a fake tree in tests):
//!
//! - `sys/devices/system/cpu/cpuidle/{current_driver,current_governor_ro}`;
//! - per online CPU and state, `cpuN/cpuidle/stateK/{name,latency,usage,time}`: the
//!   state's exit latency (µs), how often it was entered and how long it was in it (µs).
//!
//! The polling state is the one cpuidle names `POLL` (its own busy loop), not a state whose
//! exit latency reads 0: ACPI's default C1 is a halt with an exit latency of 0. States are
//! summed by name, so CPUs of different kinds (hybrid parts) add up state by state.
//!
//! At low queue depth on a fast device, a CPU that sleeps between two I/Os (a halt, in a
//! virtual machine an exit to the hypervisor) must be woken for the next one, and the wake-up
//! is part of the latency measured. These counts say how often that happened; the time in
//! a polling state says what `--cpu-dma-latency` cost.
//!
//! Must not: decide what is worth a warning (`mod.rs` does) or format.

use super::sysfs::{cpu_dir, read_number, read_trimmed};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The idle states' use from the release to the workers' stop (a `--ramp` included: the
/// I/Os it counts per are the ramp's and the window's), summed over the online CPUs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuIdle {
    /// The cpuidle driver ("intel_idle", "acpi_idle", "haltpoll", ...); null: unknown.
    pub driver: Option<String>,
    /// The cpuidle governor ("menu", "teo", "ladder", "haltpoll"); null: unknown.
    pub governor: Option<String>,
    /// `--cpu-dma-latency`: the exit latency the run held idle CPUs to, µs (0: they poll);
    /// null: the run left the machine's idle states as they were.
    pub latency_limit_us: Option<u32>,
    /// Each idle state, shallowest first.
    pub states: Vec<IdleStateUse>,
    /// Entries into a state other than `POLL` (the CPU stopped and had to be woken), over
    /// every online CPU.
    pub sleeps: u64,
    /// `sleeps` per completed I/O; null when nothing completed.
    pub sleeps_per_io: Option<f64>,
    /// Time spent polling in idle (the `POLL` state), in CPUs' worth of the time counted:
    /// the CPU `--cpu-dma-latency 0` burns.
    pub poll_cpus: f64,
}

/// One idle state over the window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleStateUse {
    /// "POLL", "C1", "haltpoll idle", ...
    pub name: String,
    /// The time the CPU takes to leave it, as the driver says, µs.
    pub exit_latency_us: u64,
    /// Times entered, over every online CPU.
    pub entries: u64,
    /// Time spent in it, over every online CPU, µs.
    pub time_us: u64,
}

/// The name cpuidle gives its polling state.
pub const POLL_STATE: &str = "POLL";

/// The counters at one instant: per state (by name, in the order first seen), its exit
/// latency and sums.
#[derive(Clone, Debug)]
pub struct IdleSnapshot {
    states: Vec<IdleStateUse>,
    at: Instant,
}

fn cpuidle_dir(root: &Path) -> PathBuf {
    cpu_dir(root).join("cpuidle")
}

/// The cpuidle driver the machine under `root` runs ("none" when it has none loaded);
/// `None` when the file is missing (a kernel without cpuidle).
pub fn driver(root: &Path) -> Option<String> {
    read_trimmed(&cpuidle_dir(root).join("current_driver"))
}

/// The counters of `online` CPUs' idle states; `None` when the machine has no cpuidle
/// (no driver, or no state readable).
pub fn snapshot(root: &Path, online: &[u32]) -> Option<IdleSnapshot> {
    let mut states: Vec<IdleStateUse> = Vec::new();
    for &cpu in online {
        let dir = cpu_dir(root).join(format!("cpu{cpu}/cpuidle"));
        for index in 0.. {
            let state = dir.join(format!("state{index}"));
            let Some(name) = read_trimmed(&state.join("name")) else { break };
            let (Some(entries), Some(time_us)) = (read_number(&state.join("usage")), read_number(&state.join("time")))
            else {
                break;
            };
            let exit_latency_us = read_number(&state.join("latency")).unwrap_or(0);
            let at = match states.iter().position(|s| s.name == name) {
                Some(at) => at,
                None => {
                    states.push(IdleStateUse { name, exit_latency_us, entries: 0, time_us: 0 });
                    states.len() - 1
                }
            };
            let s = &mut states[at];
            s.entries += entries;
            s.time_us += time_us;
        }
    }
    (!states.is_empty()).then(|| IdleSnapshot { states, at: Instant::now() })
}

/// The use of each state between `start` and `end` on the machine under `root`.
pub fn between(root: &Path, start: &IdleSnapshot, end: &IdleSnapshot) -> CpuIdle {
    let states: Vec<IdleStateUse> = end
        .states
        .iter()
        .map(|e| {
            let before = start.states.iter().find(|s| s.name == e.name);
            IdleStateUse {
                name: e.name.clone(),
                exit_latency_us: e.exit_latency_us,
                entries: e.entries.saturating_sub(before.map_or(0, |s| s.entries)),
                time_us: e.time_us.saturating_sub(before.map_or(0, |s| s.time_us)),
            }
        })
        .collect();
    let sleeps = states.iter().filter(|s| s.name != POLL_STATE).map(|s| s.entries).sum();
    let poll_us: u64 = states.iter().filter(|s| s.name == POLL_STATE).map(|s| s.time_us).sum();
    let counted_ns = end.at.saturating_duration_since(start.at).as_nanos() as u64;
    CpuIdle {
        driver: driver(root),
        governor: read_trimmed(&cpuidle_dir(root).join("current_governor_ro"))
            .or_else(|| read_trimmed(&cpuidle_dir(root).join("current_governor"))),
        latency_limit_us: None,
        states,
        sleeps,
        sleeps_per_io: None,
        poll_cpus: poll_us as f64 * 1_000.0 / counted_ns.max(1) as f64,
    }
}

#[cfg(test)]
pub mod fake {
    use super::super::sysfs::fake::write;
    use std::path::Path;

    /// One idle state of `cpu` with these counters.
    pub fn state(root: &Path, cpu: u32, index: u32, name: &str, latency_us: u64, usage: u64, time_us: u64) {
        let dir = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{index}");
        write(root, &format!("{dir}/name"), &format!("{name}\n"));
        write(root, &format!("{dir}/latency"), &format!("{latency_us}\n"));
        write(root, &format!("{dir}/usage"), &format!("{usage}\n"));
        write(root, &format!("{dir}/time"), &format!("{time_us}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::super::sysfs::fake::write;
    use super::*;

    #[test]
    fn a_fake_machine_sums_each_state_over_its_cpus_and_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
        write(root, "sys/devices/system/cpu/cpuidle/current_governor_ro", "haltpoll\n");
        for cpu in 0..2 {
            fake::state(root, cpu, 0, "POLL", 0, 10, 1_000);
            fake::state(root, cpu, 1, "haltpoll idle", 1, 100, 50_000);
        }
        let start = snapshot(root, &[0, 1]).unwrap();
        // In one second: CPU 0 polls 0.5 s and halts 3,000 times, CPU 1 halts 1,000 times.
        fake::state(root, 0, 0, "POLL", 0, 30, 501_000);
        fake::state(root, 0, 1, "haltpoll idle", 1, 3_100, 60_000);
        fake::state(root, 1, 1, "haltpoll idle", 1, 1_100, 70_000);
        let mut end = snapshot(root, &[0, 1]).unwrap();
        // The time counted is the snapshots' own: one second, as if.
        end.at = start.at + std::time::Duration::from_secs(1);
        let idle = between(root, &start, &end);
        assert_eq!((idle.driver.as_deref(), idle.governor.as_deref()), (Some("haltpoll"), Some("haltpoll")));
        assert_eq!(
            idle.states[0],
            IdleStateUse { name: "POLL".into(), exit_latency_us: 0, entries: 20, time_us: 500_000 }
        );
        assert_eq!(
            idle.states[1],
            IdleStateUse { name: "haltpoll idle".into(), exit_latency_us: 1, entries: 4_000, time_us: 30_000 }
        );
        assert_eq!(idle.sleeps, 4_000, "the polling state's entries are not sleeps");
        assert!((idle.poll_cpus - 0.5).abs() < 1e-9, "{idle:?}");
        // States are matched by name: a CPU whose state 1 is another (a hybrid part's other
        // kind of core) adds to its own line, and a halt whose exit latency reads 0 (ACPI's
        // default C1) is a sleep all the same.
        fake::state(root, 1, 1, "C1 (ACPI HLT)", 0, 5, 100);
        let start = snapshot(root, &[0, 1]).unwrap();
        fake::state(root, 1, 1, "C1 (ACPI HLT)", 0, 12, 300);
        let idle = between(root, &start, &snapshot(root, &[0, 1]).unwrap());
        let names: Vec<&str> = idle.states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "haltpoll idle", "C1 (ACPI HLT)"]);
        assert_eq!((idle.states[2].entries, idle.states[2].time_us), (7, 200));
        assert_eq!(idle.sleeps, 7, "a halt with an exit latency of 0 is no poll");
    }

    #[test]
    fn a_machine_without_cpuidle_has_no_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "sys/devices/system/cpu/online", "0\n");
        assert!(snapshot(dir.path(), &[0]).is_none());
    }
}
