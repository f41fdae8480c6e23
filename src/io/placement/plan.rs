//! The placement planner: a pure function of the topology, the placement
//! flags and the number of workers. It checks every CPU and node against the
//! machine (before anything is touched) and gives each worker its CPUs and
//! its node.
//!
//! - No flag: workers are not pinned.
//! - `--cpu-cores LIST` and/or `--cpu-policy P`: worker i is pinned to one
//!   CPU, the i-th of the usable CPUs (the list, else every allowed CPU) in
//!   the policy's order, round robin.
//! - `--numa-zones LIST`: worker i goes to node LIST[i % n] and its memory is
//!   bound there. Without `--cpu-cores`/`--cpu-policy` it may run on any of
//!   the node's usable CPUs; with them it is pinned to one of them, the
//!   node's j-th worker to the node's j-th CPU in the policy's order. A node
//!   without CPUs (memory only) takes the memory: its workers may run on any
//!   usable CPU of the machine (never pinned to a single one).
//! - `--numa-zones auto`: as a list of the nodes the targets' devices
//!   report (every worker drives every target); no node reported: no binding.
//!
//! Policy orders: compact fills a core's SMT siblings, then the next core,
//! then the next package; scatter takes one CPU of each core, alternating
//! packages, before any core's second SMT sibling.

use super::topology::Topology;
use super::{CpuPolicy, NumaZones, PlacementSpec, format_list};
use crate::base::diagnostics::error::UsageError;
use std::collections::BTreeMap;

/// Where one worker runs and where its memory lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerPlacement {
    /// CPUs the worker is pinned to; `None`: not pinned.
    pub cpus: Option<Vec<u32>>,
    /// Its NUMA node: the node it is placed on, or the node of its single CPU.
    pub node: Option<u32>,
    /// Its buffers (and other memory it allocates) are bound to `node`.
    pub bind_memory: bool,
}

/// The placement of every worker, with what the user should be told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacementPlan {
    pub workers: Vec<WorkerPlacement>,
    /// The policy used to pick CPUs, when workers are pinned to single CPUs.
    pub policy: Option<CpuPolicy>,
    /// Facts worth a note on stderr (auto found no node, a kernel without NUMA...).
    pub notes: Vec<String>,
}

/// Plans the placement of `workers` workers. `device_nodes`: for
/// `--numa-zones auto`, the node each target's device reports (`None` when it
/// reports none), with the device's name for messages.
pub fn plan(
    topology: &Topology,
    spec: &PlacementSpec,
    workers: u32,
    device_nodes: &[(String, Option<u32>)],
) -> Result<PlacementPlan, UsageError> {
    let mut notes = Vec::new();
    let single_cpu = spec.cpu_cores.is_some() || spec.cpu_policy.is_some();
    let policy = spec.cpu_policy.unwrap_or_default();

    let usable: Vec<u32> = match &spec.cpu_cores {
        Some(list) => {
            check_cpus(topology, list)?;
            list.clone()
        }
        None => topology.allowed.clone(),
    };
    if usable.is_empty() {
        return Err(UsageError::new("no CPU is available to this process (sched_getaffinity is empty)"));
    }

    let nodes: Option<Vec<u32>> = match &spec.numa_zones {
        None => None,
        Some(NumaZones::Nodes(list)) => {
            check_nodes(topology, list, "--numa-zones")?;
            Some(list.clone())
        }
        Some(NumaZones::Auto) => auto_nodes(topology, device_nodes, &mut notes),
    };

    let workers = workers as usize;
    let mut out = Vec::with_capacity(workers);
    match nodes {
        None if !single_cpu => {
            out.resize(workers, WorkerPlacement::default());
        }
        None => {
            let order = policy_order(topology, &usable, policy);
            for i in 0..workers {
                let cpu = order[i % order.len()];
                out.push(WorkerPlacement {
                    cpus: Some(vec![cpu]),
                    node: topology.pu(cpu).and_then(|p| p.node),
                    bind_memory: false,
                });
            }
        }
        Some(nodes) => {
            // Each node's usable CPUs, in the policy's order; a memory-only node uses all usable CPUs.
            let mut pools: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for &id in &nodes {
                let node = topology.node(id).expect("checked");
                let mine: Vec<u32> = node.cpus.iter().copied().filter(|c| usable.binary_search(c).is_ok()).collect();
                let pool = if node.cpus.is_empty() {
                    usable.clone()
                } else if mine.is_empty() {
                    let why = if spec.cpu_cores.is_some() {
                        format!("none of the --cpu-cores {} is on it", format_list(&usable))
                    } else {
                        format!("none of them is allowed to this process (allowed: {})", format_list(&usable))
                    };
                    return Err(UsageError::new(format!(
                        "--numa-zones {}: node {id} has CPUs {} but {why}",
                        zones_text(spec),
                        format_list(&node.cpus)
                    )));
                } else {
                    mine
                };
                pools.insert(id, policy_order(topology, &pool, policy));
            }
            let mut next: BTreeMap<u32, usize> = BTreeMap::new();
            for i in 0..workers {
                let id = nodes[i % nodes.len()];
                let pool = &pools[&id];
                let memory_only = topology.node(id).is_some_and(|n| n.cpus.is_empty());
                let cpus = if single_cpu && !memory_only {
                    let counter = next.entry(id).or_insert(0);
                    let cpu = pool[*counter % pool.len()];
                    *counter += 1;
                    vec![cpu]
                } else {
                    let mut all = pool.clone();
                    all.sort_unstable();
                    all
                };
                out.push(WorkerPlacement { cpus: Some(cpus), node: Some(id), bind_memory: topology.numa_kernel });
            }
            if !topology.numa_kernel {
                notes.push(
                    "--numa-zones: this kernel has no NUMA support: workers are pinned, memory is not bound".into(),
                );
            }
        }
    }
    Ok(PlacementPlan { workers: out, policy: single_cpu.then_some(policy), notes })
}

fn zones_text(spec: &PlacementSpec) -> String {
    match &spec.numa_zones {
        Some(NumaZones::Nodes(l)) => format_list(l),
        _ => "auto".into(),
    }
}

/// Every CPU of `--cpu-cores` must exist, be online and be allowed.
fn check_cpus(topology: &Topology, list: &[u32]) -> Result<(), UsageError> {
    let mut missing = Vec::new();
    let mut offline = Vec::new();
    let mut forbidden = Vec::new();
    for &cpu in list {
        if topology.present.binary_search(&cpu).is_err() {
            missing.push(cpu);
        } else if topology.online.binary_search(&cpu).is_err() {
            offline.push(cpu);
        } else if topology.allowed.binary_search(&cpu).is_err() {
            forbidden.push(cpu);
        }
    }
    if missing.is_empty() && offline.is_empty() && forbidden.is_empty() {
        return Ok(());
    }
    let mut problems = Vec::new();
    let plural = |l: &[u32], one: &str, many: &str| {
        if l.len() == 1 { format!("CPU {} {one}", l[0]) } else { format!("CPUs {} {many}", format_list(l)) }
    };
    if !missing.is_empty() {
        problems.push(plural(&missing, "does not exist", "do not exist"));
    }
    if !offline.is_empty() {
        problems.push(plural(&offline, "is offline", "are offline"));
    }
    if !forbidden.is_empty() {
        problems.push(plural(
            &forbidden,
            "is outside the CPUs this process may use (cgroup cpuset or taskset)",
            "are outside the CPUs this process may use (cgroup cpuset or taskset)",
        ));
    }
    Err(UsageError::new(format!(
        "--cpu-cores {}: {}; CPUs available: {}",
        format_list(list),
        problems.join(", "),
        format_list(&topology.allowed)
    )))
}

/// Every node must exist, be online and be allowed for memory.
fn check_nodes(topology: &Topology, list: &[u32], flag: &str) -> Result<(), UsageError> {
    for &id in list {
        let problem = if topology.node(id).is_some() {
            if topology.mems_allowed.binary_search(&id).is_ok() {
                continue;
            }
            "is outside the memory nodes this process may use (cgroup cpuset.mems)"
        } else if topology.nodes_possible.binary_search(&id).is_ok() {
            "is offline"
        } else {
            "does not exist"
        };
        return Err(UsageError::new(format!(
            "{flag} {}: node {id} {problem}; nodes available: {}",
            format_list(list),
            available_nodes(topology)
        )));
    }
    Ok(())
}

/// "0 (CPUs 0-7), 1 (CPUs 8-15), 2 (memory only)".
fn available_nodes(topology: &Topology) -> String {
    let nodes: Vec<String> = topology
        .nodes
        .iter()
        .filter(|n| topology.mems_allowed.binary_search(&n.id).is_ok())
        .map(|n| {
            let cpus: Vec<u32> = n.cpus.iter().copied().filter(|c| topology.allowed.binary_search(c).is_ok()).collect();
            if n.cpus.is_empty() {
                format!("{} (memory only)", n.id)
            } else {
                format!("{} (CPUs {})", n.id, format_list(&cpus))
            }
        })
        .collect();
    if nodes.is_empty() { "none".into() } else { nodes.join(", ") }
}

/// The nodes the targets' devices report, in target order, without repeats.
fn auto_nodes(topology: &Topology, devices: &[(String, Option<u32>)], notes: &mut Vec<String>) -> Option<Vec<u32>> {
    let mut nodes = Vec::new();
    for (name, node) in devices {
        match node {
            Some(id) if topology.node(*id).is_some() && topology.mems_allowed.binary_search(id).is_ok() => {
                notes.push(format!("--numa-zones auto: {name} is on node {id}"));
                if !nodes.contains(id) {
                    nodes.push(*id);
                }
            }
            Some(id) => {
                notes.push(format!("--numa-zones auto: {name} is on node {id}, which this process may not use"))
            }
            None => notes.push(format!("--numa-zones auto: {name} reports no NUMA node")),
        }
    }
    if nodes.is_empty() {
        notes.push(
            "--numa-zones auto: no target's device reports a usable NUMA node: workers are not bound to a node".into(),
        );
        None
    } else {
        Some(nodes)
    }
}

/// `cpus` (sorted) in the order the policy hands them out.
fn policy_order(topology: &Topology, cpus: &[u32], policy: CpuPolicy) -> Vec<u32> {
    // (package, core) -> its CPUs among `cpus`, by CPU number.
    let mut cores: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
    for &cpu in cpus {
        let (package, core) = topology.pu(cpu).map_or((u32::MAX, u32::MAX - cpu), |p| (p.package, p.core));
        cores.entry((package, core)).or_default().push(cpu);
    }
    match policy {
        CpuPolicy::Compact => cores.into_values().flatten().collect(),
        CpuPolicy::Scatter => {
            // Cores interleaved over packages: package 0's first core, package 1's first core, ...
            let mut by_package: BTreeMap<u32, Vec<Vec<u32>>> = BTreeMap::new();
            for ((package, _), list) in cores {
                by_package.entry(package).or_default().push(list);
            }
            let most_cores = by_package.values().map(Vec::len).max().unwrap_or(0);
            let mut interleaved = Vec::new();
            for k in 0..most_cores {
                for list in by_package.values() {
                    if let Some(core) = list.get(k) {
                        interleaved.push(core);
                    }
                }
            }
            let most_threads = interleaved.iter().map(|c| c.len()).max().unwrap_or(0);
            let mut order = Vec::with_capacity(cpus.len());
            for t in 0..most_threads {
                for core in &interleaved {
                    if let Some(&cpu) = core.get(t) {
                        order.push(cpu);
                    }
                }
            }
            order
        }
    }
}
