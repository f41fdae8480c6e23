//! The topology from Linux sysfs, under any root directory (`/` for this
//! machine, a fake tree in tests):
//!
//! - `sys/devices/system/cpu/{present,online}` and, per online CPU,
//!   `cpuN/topology/{physical_package_id,thread_siblings_list}`;
//! - `sys/devices/system/node/{possible,online}` and `nodeN/cpulist`
//!   (absent on a kernel without NUMA);
//! - `proc/self/status`: `Cpus_allowed_list` (for fake trees; this machine
//!   uses `sched_getaffinity`) and `Mems_allowed_list`;
//! - a block device's node: `sys/dev/block/MAJ:MIN`, the disk of a
//!   partition, then the first `numa_node` file up its device path.

use super::bind;
use super::topology::{Node, RawPu, Topology};
use crate::base::units::parse_id_list;
use std::fs;
use std::path::{Path, PathBuf};

/// This machine's topology, with the calling thread's allowed CPUs.
pub fn load_this_machine() -> Result<Topology, String> {
    let allowed = bind::allowed_cpus().map_err(|e| format!("sched_getaffinity: {e}"))?;
    load(Path::new("/"), Some(allowed))
}

/// The topology under `root`. `allowed`: the CPUs the process may use; `None`
/// reads `Cpus_allowed_list` from `root/proc/self/status` (all online CPUs if absent).
pub fn load(root: &Path, allowed: Option<Vec<u32>>) -> Result<Topology, String> {
    let cpu_dir = root.join("sys/devices/system/cpu");
    let listed = |dir: &Path, prefix: &str| -> Vec<u32> {
        let mut ids: Vec<u32> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    };
    let present = match read_list(&cpu_dir.join("present")).or_else(|| read_list(&cpu_dir.join("possible"))) {
        Some(l) => l,
        None => listed(&cpu_dir, "cpu"),
    };
    let online = read_list(&cpu_dir.join("online")).unwrap_or_else(|| present.clone());
    if online.is_empty() {
        return Err(format!("no online CPU found in {}", cpu_dir.display()));
    }
    let raw = online
        .iter()
        .map(|&cpu| {
            let topo = cpu_dir.join(format!("cpu{cpu}/topology"));
            let package = read_trimmed(&topo.join("physical_package_id"))
                .and_then(|t| t.parse::<i64>().ok())
                .filter(|&p| p >= 0)
                .map_or(0, |p| p as u32);
            let siblings = read_list(&topo.join("thread_siblings_list"))
                .or_else(|| read_list(&topo.join("core_cpus_list")))
                .unwrap_or_else(|| vec![cpu]);
            RawPu { cpu, package, siblings }
        })
        .collect();

    let node_dir = root.join("sys/devices/system/node");
    let (nodes_possible, nodes) = if node_dir.is_dir() {
        let possible = read_list(&node_dir.join("possible")).unwrap_or_else(|| listed(&node_dir, "node"));
        let online_nodes = read_list(&node_dir.join("online")).unwrap_or_else(|| listed(&node_dir, "node"));
        let nodes = online_nodes
            .into_iter()
            .map(|id| Node { id, cpus: read_list(&node_dir.join(format!("node{id}/cpulist"))).unwrap_or_default() })
            .collect();
        (possible, nodes)
    } else {
        (Vec::new(), Vec::new())
    };

    let status = fs::read_to_string(root.join("proc/self/status")).unwrap_or_default();
    let status_list = |key: &str| {
        status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| parse_id_list(v.trim_start_matches(':')).ok())
    };
    let allowed = allowed.or_else(|| status_list("Cpus_allowed_list")).unwrap_or_else(|| online.clone());
    let mems_allowed = status_list("Mems_allowed_list").unwrap_or_else(|| nodes.iter().map(|n: &Node| n.id).collect());
    Ok(Topology::from_raw(present, online, allowed, raw, nodes_possible, nodes, mems_allowed))
}

/// A block device and the NUMA node it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLocality {
    /// Its kernel name (`nvme0n1`, `sda`; the disk for a partition).
    pub name: String,
    pub node: Option<u32>,
}

/// The NUMA node of block device `major:minor` under `root`, with the device's name: the
/// first `numa_node` file (>= 0) up the disk's device path; for a device-mapper or md
/// device, the node its underlying devices (`slaves/`) agree on; on a machine with one
/// node, that node. `None` when `major:minor` is no block device.
pub fn device_locality(root: &Path, topology: &Topology, major: u32, minor: u32) -> Option<DeviceLocality> {
    let root = &fs::canonicalize(root).ok()?;
    let path = fs::canonicalize(root.join(format!("sys/dev/block/{major}:{minor}"))).ok()?;
    let disk = if path.join("partition").exists() { path.parent()?.to_path_buf() } else { path };
    let name = disk.file_name()?.to_str()?.to_string();
    let node = node_of_disk(root, &disk, 0)
        // On a machine with one node, every device is on it (as hwloc says too).
        .or_else(|| (topology.nodes.len() == 1).then(|| topology.nodes[0].id))
        .filter(|n| topology.node(*n).is_some());
    Some(DeviceLocality { name, node })
}

fn node_of_disk(root: &Path, disk: &Path, depth: u32) -> Option<u32> {
    let devices = root.join("sys/devices");
    let mut dir: Option<&Path> = Some(disk);
    while let Some(d) = dir {
        if !d.starts_with(&devices) || d == devices {
            break;
        }
        if let Some(value) = read_trimmed(&d.join("numa_node")) {
            // The first numa_node found is the device's answer; -1 means it does not know.
            return value.parse::<i64>().ok().filter(|&n| n >= 0).map(|n| n as u32);
        }
        dir = d.parent();
    }
    // Stacked devices (dm, md): the node their underlying devices agree on.
    if depth >= 4 {
        return None;
    }
    let slaves: Vec<PathBuf> = fs::read_dir(disk.join("slaves")).ok()?.flatten().map(|e| e.path()).collect();
    let mut agreed = None;
    for slave in slaves {
        let target = fs::canonicalize(&slave).ok()?;
        let slave_disk = if target.join("partition").exists() { target.parent()?.to_path_buf() } else { target };
        let node = node_of_disk(root, &slave_disk, depth + 1)?;
        match agreed {
            None => agreed = Some(node),
            Some(n) if n == node => {}
            Some(_) => return None,
        }
    }
    agreed
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn read_list(path: &Path) -> Option<Vec<u32>> {
    parse_id_list(&fs::read_to_string(path).ok()?).ok()
}
