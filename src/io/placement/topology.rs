//! The machine as placement sees it: CPUs (present, online, allowed), the
//! physical core and package of each online CPU, and the NUMA nodes with the
//! CPUs and memory the process may use.
//!
//! Backends (sysfs, hwloc) read raw facts; `Topology::from_raw` numbers the
//! cores the same way for both, so that both give the same placement.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One online CPU (a processing unit: one hardware thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pu {
    /// The OS number of the CPU (as in `taskset`, `/proc/cpuinfo`).
    pub cpu: u32,
    /// Physical package (socket) id.
    pub package: u32,
    /// Index of its physical core, machine-wide, in topology order (by package,
    /// then by the core's first CPU).
    pub core: u32,
    /// The NUMA node whose CPU list holds it.
    pub node: Option<u32>,
}

/// One online NUMA node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub id: u32,
    /// Its online CPUs (empty for a memory-only node).
    pub cpus: Vec<u32>,
}

/// What a backend reads for one online CPU, before cores are numbered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawPu {
    pub cpu: u32,
    pub package: u32,
    /// The CPUs of its physical core (SMT siblings, itself included).
    pub siblings: Vec<u32>,
}

/// The machine's CPUs and NUMA nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// CPUs the kernel knows of (online or not).
    pub present: Vec<u32>,
    /// CPUs that are online.
    pub online: Vec<u32>,
    /// Online CPUs this process may run on (sched_getaffinity: cgroup cpuset, taskset).
    pub allowed: Vec<u32>,
    /// One per online CPU, by CPU number.
    pub pus: Vec<Pu>,
    /// NUMA nodes the kernel may have (online or not).
    pub nodes_possible: Vec<u32>,
    /// Online NUMA nodes, by id.
    pub nodes: Vec<Node>,
    /// Nodes this process may allocate memory on (cgroup cpuset.mems).
    pub mems_allowed: Vec<u32>,
    /// The kernel has NUMA support (memory policies can be set). Without it the
    /// topology has one node 0 holding every CPU.
    pub numa_kernel: bool,
}

/// The topology in four numbers, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologySummary {
    pub packages: u32,
    /// Physical cores.
    pub cores: u32,
    /// Processing units (hardware threads), online.
    pub pus: u32,
    /// NUMA nodes, online (memory-only nodes included).
    pub nodes: u32,
}

impl Topology {
    /// Builds a topology from what a backend read. `nodes` may be empty (a kernel
    /// without NUMA): one node 0 with every online CPU is assumed.
    #[allow(clippy::too_many_arguments)]
    pub fn from_raw(
        present: Vec<u32>,
        online: Vec<u32>,
        allowed: Vec<u32>,
        raw: Vec<RawPu>,
        nodes_possible: Vec<u32>,
        nodes: Vec<Node>,
        mems_allowed: Vec<u32>,
    ) -> Topology {
        let online_set: BTreeSet<u32> = online.iter().copied().collect();
        let numa_kernel = !nodes.is_empty();
        let (nodes, nodes_possible, mems_allowed) = if numa_kernel {
            let nodes: Vec<Node> = nodes
                .into_iter()
                .map(|n| Node { id: n.id, cpus: sorted(n.cpus.into_iter().filter(|c| online_set.contains(c))) })
                .collect();
            (nodes, nodes_possible, mems_allowed)
        } else {
            (vec![Node { id: 0, cpus: online.clone() }], vec![0], vec![0])
        };
        let mut node_of = BTreeMap::new();
        for n in &nodes {
            for &c in &n.cpus {
                node_of.entry(c).or_insert(n.id);
            }
        }
        // A core is its package and its set of online siblings.
        let mut raw: Vec<RawPu> = raw.into_iter().filter(|p| online_set.contains(&p.cpu)).collect();
        raw.sort_by_key(|p| p.cpu);
        raw.dedup_by_key(|p| p.cpu);
        let core_key = |p: &RawPu| {
            let mut s: Vec<u32> = p.siblings.iter().copied().filter(|c| online_set.contains(c)).collect();
            s.push(p.cpu);
            (p.package, sorted(s))
        };
        let keys: BTreeSet<(u32, Vec<u32>)> = raw.iter().map(core_key).collect();
        // BTreeSet orders by (package, first CPU of the core): topology order.
        let core_index: BTreeMap<(u32, Vec<u32>), u32> =
            keys.into_iter().enumerate().map(|(i, k)| (k, i as u32)).collect();
        let pus = raw
            .iter()
            .map(|p| Pu {
                cpu: p.cpu,
                package: p.package,
                core: core_index[&core_key(p)],
                node: node_of.get(&p.cpu).copied(),
            })
            .collect();
        let allowed = sorted(allowed.into_iter().filter(|c| online_set.contains(c)));
        Topology {
            present: sorted(present),
            online: sorted(online),
            allowed,
            pus,
            nodes_possible: sorted(nodes_possible),
            nodes,
            mems_allowed: sorted(mems_allowed),
            numa_kernel,
        }
    }

    pub fn pu(&self, cpu: u32) -> Option<&Pu> {
        self.pus.binary_search_by_key(&cpu, |p| p.cpu).ok().map(|i| &self.pus[i])
    }

    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn summary(&self) -> TopologySummary {
        let packages: BTreeSet<u32> = self.pus.iter().map(|p| p.package).collect();
        let cores: BTreeSet<u32> = self.pus.iter().map(|p| p.core).collect();
        TopologySummary {
            packages: packages.len() as u32,
            cores: cores.len() as u32,
            pus: self.pus.len() as u32,
            nodes: self.nodes.len() as u32,
        }
    }
}

fn sorted(ids: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let set: BTreeSet<u32> = ids.into_iter().collect();
    set.into_iter().collect()
}
