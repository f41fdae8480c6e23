//! The topology from hwloc (`--features hwloc`, hwloc 2.8+ through the
//! hwlocality crate): the same `Topology` as the sysfs reader, so the same
//! placement, plus the NUMA node of block devices from hwloc's I/O tree.
//!
//! hwloc is loaded with disallowed CPUs kept (`INCLUDE_DISALLOWED`), so that
//! the topology is the machine's and the allowed set is separate, as with
//! sysfs; the allowed set is narrowed to the thread's affinity (taskset).
//! A memory-only node's own CPUs are none: a CPU belongs to the smallest node
//! (by CPU set) whose CPU set holds it, as the kernel's node cpulists say.

use super::topology::{Node, RawPu, Topology};
use super::{bind, sysfs};
use hwlocality::Topology as HwTopology;
use hwlocality::object::TopologyObject;
use hwlocality::object::types::ObjectType;
use hwlocality::topology::builder::{BuildFlags, TypeFilter};
use std::path::Path;

/// This machine's topology. `with_io`: also discover I/O devices (slower).
pub fn load(with_io: bool) -> Result<Topology, String> {
    let mut topology = convert(&load_hwloc(with_io)?, !Path::new("/sys/devices/system/node").is_dir());
    // hwloc's allowed set follows cgroups; the thread's affinity (taskset) narrows it, as with sysfs.
    let affinity = bind::allowed_cpus().map_err(|e| format!("sched_getaffinity: {e}"))?;
    topology.allowed.retain(|c| affinity.contains(c));
    Ok(topology)
}

fn load_hwloc(with_io: bool) -> Result<HwTopology, String> {
    let mut builder = HwTopology::builder().with_flags(BuildFlags::INCLUDE_DISALLOWED).map_err(|e| e.to_string())?;
    if with_io {
        builder = builder.with_io_type_filter(TypeFilter::KeepImportant).map_err(|e| e.to_string())?;
    }
    builder.build().map_err(|e| e.to_string())
}

/// A synthetic topology, e.g. `pack:2 core:4 pu:2` (hwloc's synthetic syntax).
#[cfg(test)]
pub fn from_synthetic(description: &str) -> Result<Topology, String> {
    let topology = HwTopology::builder()
        .from_synthetic(description)
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    Ok(convert(&topology, false))
}

fn ids(bits: impl Iterator<Item = hwlocality::bitmap::BitmapIndex>) -> Vec<u32> {
    bits.map(|i| usize::from(i) as u32).collect()
}

fn os_index(obj: &TopologyObject) -> Option<u32> {
    obj.os_index().map(|i| i as u32)
}

/// hwloc's view as a `Topology`. `no_numa_kernel`: report no nodes (as sysfs
/// does on a kernel without NUMA; hwloc always shows one).
pub fn convert(topology: &HwTopology, no_numa_kernel: bool) -> Topology {
    let present = ids(topology.complete_cpuset().iter_set());
    let online = ids(topology.cpuset().iter_set());
    let allowed = ids(topology.allowed_cpuset().iter_set());
    let raw: Vec<RawPu> = topology
        .objects_with_type(ObjectType::PU)
        .filter_map(|pu| {
            let cpu = os_index(pu)?;
            let package = pu.first_ancestor_with_type(ObjectType::Package).and_then(os_index).unwrap_or(0);
            let siblings = pu
                .first_ancestor_with_type(ObjectType::Core)
                .and_then(|core| core.cpuset())
                .map_or_else(|| vec![cpu], |set| ids(set.iter_set()));
            Some(RawPu { cpu, package, siblings })
        })
        .collect();

    let hw_nodes: Vec<(u32, Vec<u32>)> = topology
        .objects_with_type(ObjectType::NUMANode)
        .filter_map(|n| Some((os_index(n)?, n.cpuset().map(|s| ids(s.iter_set())).unwrap_or_default())))
        .collect();
    // Each CPU belongs to the smallest node holding it (memory-only nodes span their locality).
    let mut nodes: Vec<Node> = hw_nodes.iter().map(|(id, _)| Node { id: *id, cpus: Vec::new() }).collect();
    for p in &raw {
        let best = hw_nodes
            .iter()
            .enumerate()
            .filter(|(_, (_, cpus))| cpus.binary_search(&p.cpu).is_ok())
            .min_by_key(|(_, (id, cpus))| (cpus.len(), *id));
        if let Some((i, _)) = best {
            nodes[i].cpus.push(p.cpu);
        }
    }
    nodes.sort_by_key(|n| n.id);
    let nodes_possible = ids(topology.complete_nodeset().iter_set());
    let mems_allowed = ids(topology.allowed_nodeset().iter_set());
    if no_numa_kernel {
        return Topology::from_raw(present, online, allowed, raw, Vec::new(), Vec::new(), Vec::new());
    }
    Topology::from_raw(present, online, allowed, raw, nodes_possible, nodes, mems_allowed)
}

/// The NUMA node of block device `major:minor` from hwloc's I/O tree: the
/// node set of the device's first non-I/O ancestor, when it is one node.
/// Devices hwloc does not list (device-mapper, md) are looked up in sysfs.
pub fn device_node(topology: &Topology, major: u32, minor: u32) -> Option<u32> {
    let device = sysfs::device_locality(Path::new("/"), topology, major, minor)?;
    let from_hwloc = load_hwloc(true).ok().and_then(|hw| {
        let dev = hw.os_devices().find(|d| d.name().and_then(|n| n.to_str().ok()) == Some(device.name.as_str()))?;
        let nodes = dev.first_non_io_ancestor()?.nodeset()?;
        let nodes = ids(nodes.iter_set());
        // Several nodes (the whole machine's) mean hwloc does not know where the device is.
        if nodes.len() == 1 { nodes.first().copied() } else { None }
    });
    from_hwloc.or(device.node).filter(|n| topology.node(*n).is_some())
}
