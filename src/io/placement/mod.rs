//! CPU and NUMA placement of workers (`--cpu-cores`, `--cpu-policy`,
//! `--numa-zones`).
//!
//! Three steps, kept apart so each can be tested on its own:
//!
//! 1. **Topology** (`topology`): which CPUs exist, are online and allowed,
//!    how they group into cores, packages and NUMA nodes. Read from Linux
//!    sysfs by default (`sysfs`, any root directory, so tests use fake trees);
//!    from hwloc with `--features hwloc` (`hwloc`). Both give the same
//!    `Topology`, so the same placement.
//! 2. **Plan** (`plan`): a pure function of the topology, the flags and the
//!    number of workers, giving each worker its CPU set and NUMA node. Every
//!    check against the machine happens here, before anything is touched: a
//!    bad CPU or node is a `UsageError` that lists what is available.
//! 3. **Binding** (`bind`): on the worker's own thread, before its buffers
//!    are allocated: `sched_setaffinity`, then `set_mempolicy` / `mbind`
//!    when the worker's memory is bound to a node; the buffers are then
//!    touched so every page is placed before the run starts.

/// Binding the calling thread and its memory: the kernel calls live in `sys::affinity`.
pub use crate::base::sys::affinity as bind;
#[cfg(feature = "hwloc")]
pub mod hwloc;
pub mod plan;
#[cfg(test)]
mod synthetic_tests;
pub mod sysfs;
pub mod topology;

pub use plan::{PlacementPlan, WorkerPlacement, plan};
pub use topology::{Topology, TopologySummary};

use serde::{Deserialize, Serialize};
use std::path::Path;

/// How workers are spread over the CPUs they may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CpuPolicy {
    /// fill a core's SMT siblings before the next core, a package before the next package
    Compact,
    /// one worker per physical core (spread over packages) before any SMT sibling
    #[default]
    Scatter,
}

impl CpuPolicy {
    pub fn name(self) -> &'static str {
        match self {
            CpuPolicy::Compact => "compact",
            CpuPolicy::Scatter => "scatter",
        }
    }
}

/// `--numa-zones`: the nodes to spread workers over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumaZones {
    /// The node of the device each worker drives, when the device reports one.
    Auto,
    /// These nodes, round robin.
    Nodes(Vec<u32>),
}

/// The placement flags, as given (part of the `Spec`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementSpec {
    /// `--cpu-cores`: each worker pinned to one CPU of this list.
    pub cpu_cores: Option<Vec<u32>>,
    /// `--cpu-policy`; `None` when not given (scatter is then used if pinning).
    pub cpu_policy: Option<CpuPolicy>,
    /// `--numa-zones`.
    pub numa_zones: Option<NumaZones>,
    /// `--cpu-dma-latency`: the CPU latency request held for the window, µs. Not a
    /// placement of workers (`is_default` leaves it out): what the idle CPUs may do.
    #[serde(default)]
    pub cpu_dma_latency_us: Option<u32>,
}

impl PlacementSpec {
    /// No placement flag was given: workers run where the scheduler puts them.
    pub fn is_default(&self) -> bool {
        self.cpu_cores.is_none() && self.cpu_policy.is_none() && self.numa_zones.is_none()
    }
}

impl std::str::FromStr for NumaZones {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_numa_zones(text)
    }
}

/// Parses `--numa-zones`: `auto`, or a node list such as `0,1` or `0-3`.
pub fn parse_numa_zones(text: &str) -> Result<NumaZones, String> {
    if text.trim() == "auto" {
        return Ok(NumaZones::Auto);
    }
    crate::base::units::parse_cpu_list(text)
        .map(|l| NumaZones::Nodes(l.0))
        .map_err(|e| format!("{e} (or 'auto': the node of each target's device)"))
}

/// Reads this machine's topology with the build's backend (hwloc with
/// `--features hwloc`, falling back to sysfs if hwloc cannot load it).
/// Returns the topology and the backend that produced it.
pub fn load_topology() -> Result<(Topology, &'static str), String> {
    #[cfg(feature = "hwloc")]
    {
        match hwloc::load(false) {
            Ok(t) => return Ok((t, "hwloc")),
            Err(hwloc_error) => {
                return sysfs::load_this_machine()
                    .map(|t| (t, "sysfs"))
                    .map_err(|e| format!("hwloc: {hwloc_error}; sysfs: {e}"));
            }
        }
    }
    #[allow(unreachable_code)]
    sysfs::load_this_machine().map(|t| (t, "sysfs"))
}

/// The block device under `path` (the device itself for a block device, the
/// filesystem's device for a file or, for a file that does not exist yet, its
/// directory's), and the NUMA node it reports. The name is the path when no
/// block device is found.
pub fn device_of_path(topology: &Topology, backend: &str, path: &Path) -> (String, Option<u32>) {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(path).or_else(|e| match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::metadata(dir),
        _ => std::fs::metadata(".").map_err(|_| e),
    });
    let unknown = || (path.display().to_string(), None);
    let Ok(meta) = meta else { return unknown() };
    let dev = if meta.file_type().is_block_device() { meta.rdev() } else { meta.dev() };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let Some(device) = sysfs::device_locality(Path::new("/"), topology, major, minor) else { return unknown() };
    #[cfg(feature = "hwloc")]
    if backend == "hwloc" {
        return (device.name, hwloc::device_node(topology, major, minor));
    }
    let _ = backend;
    (device.name, device.node)
}

/// Pins the calling thread as `placement` says and, when its memory is bound,
/// sets its memory policy: call on the worker's thread before it allocates.
pub fn apply_to_current_thread(placement: &WorkerPlacement) -> Result<(), String> {
    if let Some(cpus) = &placement.cpus {
        bind::set_thread_affinity(cpus)
            .map_err(|e| format!("cannot pin to CPUs {} (sched_setaffinity): {e}", format_list(cpus)))?;
    }
    if let (true, Some(node)) = (placement.bind_memory, placement.node) {
        bind::bind_thread_memory(node)
            .map_err(|e| format!("cannot bind memory to NUMA node {node} (set_mempolicy): {e}"))?;
    }
    Ok(())
}

/// Binds an allocation made before `apply_to_current_thread` took effect (the
/// allocator may reuse pages) to the worker's node, moving pages already there.
pub fn bind_buffer(placement: &WorkerPlacement, base: *mut u8, len: usize) -> Result<(), String> {
    if let (true, Some(node)) = (placement.bind_memory, placement.node) {
        bind::bind_range(base, len, node)
            .map_err(|e| format!("cannot bind the I/O buffers to NUMA node {node} (mbind): {e}"))?;
    }
    Ok(())
}

/// `0-3,8,10-11`: the shortest list text of sorted, distinct ids.
pub fn format_list(ids: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    if out.is_empty() { "none".to_string() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_format_as_ranges() {
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_list(&[5]), "5");
        assert_eq!(format_list(&[]), "none");
    }

    #[test]
    fn numa_zones_parse() {
        assert_eq!(parse_numa_zones("auto"), Ok(NumaZones::Auto));
        assert_eq!(parse_numa_zones("0,2-3"), Ok(NumaZones::Nodes(vec![0, 2, 3])));
        assert!(parse_numa_zones("").unwrap_err().contains("auto"));
        assert!(parse_numa_zones("3-1").unwrap_err().contains("backwards"));
    }
}
