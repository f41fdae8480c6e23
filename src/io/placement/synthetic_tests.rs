//! The planner on synthetic machines, read from fake sysfs trees (and, with
//! `--features hwloc`, from hwloc synthetic topologies, which must give the
//! same topology and so the same placement).

use super::topology::Node;
use super::*;
use std::fs;
use std::path::Path;

/// How CPU numbers are given to (package, core, thread).
#[derive(Clone, Copy)]
pub enum Numbering {
    /// As Linux usually numbers x86: every core's first thread, then every core's second
    /// (CPU = thread * cores_total + package * cores + core).
    ThreadsLast,
    /// A core's threads next to each other (CPU = (package * cores + core) * threads + thread).
    Sequential,
}

/// A synthetic machine, written as a fake sysfs tree.
#[derive(Clone)]
pub struct FakeMachine {
    pub packages: u32,
    pub cores: u32,
    pub threads: u32,
    pub numbering: Numbering,
    /// CPUs of each node, node i at index i (empty: memory only); `None`: a kernel without NUMA.
    pub nodes: Option<Vec<Vec<u32>>>,
    pub offline: Vec<u32>,
    pub allowed: Option<Vec<u32>>,
    pub mems_allowed: Option<Vec<u32>>,
    /// Nodes that are possible but offline (listed in `possible` only).
    pub offline_nodes: Vec<u32>,
}

impl FakeMachine {
    pub fn new(packages: u32, cores: u32, threads: u32, numbering: Numbering) -> Self {
        FakeMachine {
            packages,
            cores,
            threads,
            numbering,
            nodes: None,
            offline: Vec::new(),
            allowed: None,
            mems_allowed: None,
            offline_nodes: Vec::new(),
        }
    }

    pub fn cpu(&self, package: u32, core: u32, thread: u32) -> u32 {
        match self.numbering {
            Numbering::ThreadsLast => thread * self.packages * self.cores + package * self.cores + core,
            Numbering::Sequential => (package * self.cores + core) * self.threads + thread,
        }
    }

    pub fn total(&self) -> u32 {
        self.packages * self.cores * self.threads
    }

    /// One node per package.
    fn node_per_package(mut self) -> Self {
        let nodes = (0..self.packages)
            .map(|p| {
                let mut cpus: Vec<u32> = (0..self.cores)
                    .flat_map(|c| (0..self.threads).map(move |t| (c, t)))
                    .map(|(c, t)| self.cpu(p, c, t))
                    .collect();
                cpus.sort_unstable();
                cpus
            })
            .collect();
        self.nodes = Some(nodes);
        self
    }

    pub fn write(&self, root: &Path) {
        let cpu_dir = root.join("sys/devices/system/cpu");
        fs::create_dir_all(&cpu_dir).unwrap();
        let all: Vec<u32> = (0..self.total()).collect();
        let online: Vec<u32> = all.iter().copied().filter(|c| !self.offline.contains(c)).collect();
        fs::write(cpu_dir.join("present"), format!("{}\n", format_list(&all))).unwrap();
        fs::write(cpu_dir.join("possible"), format!("{}\n", format_list(&all))).unwrap();
        fs::write(cpu_dir.join("online"), format!("{}\n", format_list(&online))).unwrap();
        for p in 0..self.packages {
            for c in 0..self.cores {
                let siblings: Vec<u32> = {
                    let mut s: Vec<u32> = (0..self.threads).map(|t| self.cpu(p, c, t)).collect();
                    s.sort_unstable();
                    s
                };
                for t in 0..self.threads {
                    let cpu = self.cpu(p, c, t);
                    let dir = cpu_dir.join(format!("cpu{cpu}"));
                    fs::create_dir_all(&dir).unwrap();
                    if self.offline.contains(&cpu) {
                        fs::write(dir.join("online"), "0\n").unwrap();
                        continue;
                    }
                    let topo = dir.join("topology");
                    fs::create_dir_all(&topo).unwrap();
                    fs::write(topo.join("physical_package_id"), format!("{p}\n")).unwrap();
                    fs::write(topo.join("core_id"), format!("{c}\n")).unwrap();
                    let online_siblings: Vec<u32> =
                        siblings.iter().copied().filter(|s| !self.offline.contains(s)).collect();
                    fs::write(topo.join("thread_siblings_list"), format!("{}\n", format_list(&online_siblings)))
                        .unwrap();
                }
            }
        }
        let mut status = String::from("Name:\tiopulse\n");
        if let Some(allowed) = &self.allowed {
            status.push_str(&format!("Cpus_allowed_list:\t{}\n", format_list(allowed)));
        }
        if let Some(nodes) = &self.nodes {
            let node_dir = root.join("sys/devices/system/node");
            fs::create_dir_all(&node_dir).unwrap();
            let ids: Vec<u32> = (0..nodes.len() as u32).collect();
            let online: Vec<u32> = ids.iter().copied().filter(|n| !self.offline_nodes.contains(n)).collect();
            fs::write(node_dir.join("possible"), format!("{}\n", format_list(&ids))).unwrap();
            fs::write(node_dir.join("online"), format!("{}\n", format_list(&online))).unwrap();
            for &id in &online {
                let dir = node_dir.join(format!("node{id}"));
                fs::create_dir_all(&dir).unwrap();
                let cpus: Vec<u32> = nodes[id as usize].iter().copied().filter(|c| !self.offline.contains(c)).collect();
                let text = if cpus.is_empty() { "\n".to_string() } else { format!("{}\n", format_list(&cpus)) };
                fs::write(dir.join("cpulist"), text).unwrap();
            }
            let mems = self.mems_allowed.clone().unwrap_or(online);
            status.push_str(&format!("Mems_allowed_list:\t{}\n", format_list(&mems)));
        }
        fs::create_dir_all(root.join("proc/self")).unwrap();
        fs::write(root.join("proc/self/status"), status).unwrap();
    }

    pub fn topology(&self) -> Topology {
        let dir = tempfile::tempdir().unwrap();
        self.write(dir.path());
        sysfs::load(dir.path(), None).unwrap()
    }
}

fn spec(cpu_cores: Option<&str>, policy: Option<CpuPolicy>, zones: Option<&str>) -> PlacementSpec {
    PlacementSpec {
        cpu_cores: cpu_cores.map(|c| crate::base::units::parse_cpu_list(c).unwrap().0),
        cpu_policy: policy,
        numa_zones: zones.map(|z| parse_numa_zones(z).unwrap()),
        cpu_dma_latency_us: None,
    }
}

/// Each worker's single CPU.
fn single_cpus(plan: &PlacementPlan) -> Vec<u32> {
    plan.workers
        .iter()
        .map(|w| {
            let cpus = w.cpus.as_ref().expect("pinned");
            assert_eq!(cpus.len(), 1, "{w:?}");
            cpus[0]
        })
        .collect()
}

fn nodes_of(plan: &PlacementPlan) -> Vec<Option<u32>> {
    plan.workers.iter().map(|w| w.node).collect()
}

fn plan_ok(t: &Topology, s: &PlacementSpec, workers: u32) -> PlacementPlan {
    plan(t, s, workers, &[]).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn plan_err(t: &Topology, s: &PlacementSpec) -> String {
    plan(t, s, 4, &[]).expect_err("a usage error").message
}

/// 2 packages × 4 cores × 2 threads, Linux numbering (CPU c and c+8 are siblings), a node per package.
fn two_by_four_by_two() -> FakeMachine {
    FakeMachine::new(2, 4, 2, Numbering::ThreadsLast).node_per_package()
}

#[test]
fn sysfs_reads_the_fake_tree() {
    let t = two_by_four_by_two().topology();
    assert_eq!(t.summary(), TopologySummary { packages: 2, cores: 8, pus: 16, nodes: 2 });
    assert_eq!(t.online, (0..16).collect::<Vec<_>>());
    assert_eq!(t.allowed, t.online);
    assert_eq!(t.node(0).unwrap().cpus, vec![0, 1, 2, 3, 8, 9, 10, 11]);
    assert_eq!(t.node(1).unwrap().cpus, vec![4, 5, 6, 7, 12, 13, 14, 15]);
    let p8 = t.pu(8).unwrap();
    assert_eq!((p8.package, p8.core, p8.node), (0, 0, Some(0)));
    assert_eq!(t.pu(0).unwrap().core, 0);
    assert_eq!(t.pu(12).unwrap().core, t.pu(4).unwrap().core);
    assert!(t.numa_kernel);
}

#[test]
fn no_flag_pins_nothing() {
    let t = two_by_four_by_two().topology();
    let p = plan_ok(&t, &PlacementSpec::default(), 3);
    assert_eq!(p.workers, vec![WorkerPlacement::default(); 3]);
    assert_eq!(p.policy, None);
}

#[test]
fn two_packages_scatter_one_worker_per_core_alternating_packages_then_siblings() {
    let t = two_by_four_by_two().topology();
    let p = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), None), 17);
    assert_eq!(single_cpus(&p), vec![0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0]);
    assert_eq!(nodes_of(&p)[..4], [Some(0), Some(1), Some(0), Some(1)]);
    assert!(p.workers.iter().all(|w| !w.bind_memory));
    // Scatter is the default policy when --cpu-cores is given.
    let listed = plan_ok(&t, &spec(Some("0-15"), None, None), 17);
    assert_eq!(single_cpus(&listed), single_cpus(&p));
    assert_eq!(listed.policy, Some(CpuPolicy::Scatter));
}

#[test]
fn two_packages_compact_fills_siblings_then_cores_then_packages() {
    let t = two_by_four_by_two().topology();
    let p = plan_ok(&t, &spec(None, Some(CpuPolicy::Compact), None), 16);
    assert_eq!(single_cpus(&p), vec![0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]);
}

#[test]
fn cpu_cores_restrict_and_round_robin() {
    let t = two_by_four_by_two().topology();
    let scatter = plan_ok(&t, &spec(Some("0-3,8-11"), None, None), 10);
    assert_eq!(single_cpus(&scatter), vec![0, 1, 2, 3, 8, 9, 10, 11, 0, 1]);
    let compact = plan_ok(&t, &spec(Some("0-3,8-11"), Some(CpuPolicy::Compact), None), 8);
    assert_eq!(single_cpus(&compact), vec![0, 8, 1, 9, 2, 10, 3, 11]);
    let odd = plan_ok(&t, &spec(Some("0,2,4-7"), None, None), 6);
    assert_eq!(single_cpus(&odd), vec![0, 4, 2, 5, 6, 7]);
}

#[test]
fn numa_zones_alone_pin_to_the_node_and_bind_memory() {
    let t = two_by_four_by_two().topology();
    let p = plan_ok(&t, &spec(None, None, Some("0,1")), 3);
    let node0 = Some(vec![0, 1, 2, 3, 8, 9, 10, 11]);
    let node1 = Some(vec![4, 5, 6, 7, 12, 13, 14, 15]);
    assert_eq!(
        p.workers,
        vec![
            WorkerPlacement { cpus: node0.clone(), node: Some(0), bind_memory: true },
            WorkerPlacement { cpus: node1, node: Some(1), bind_memory: true },
            WorkerPlacement { cpus: node0, node: Some(0), bind_memory: true },
        ]
    );
    assert_eq!(p.policy, None);
    // Nodes are taken in increasing order, whatever order they were listed in.
    assert_eq!(nodes_of(&plan_ok(&t, &spec(None, None, Some("1,0")), 2)), vec![Some(0), Some(1)]);
}

#[test]
fn numa_zones_with_a_policy_pin_each_worker_to_one_cpu_of_its_node() {
    let t = two_by_four_by_two().topology();
    let scatter = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), Some("0,1")), 10);
    assert_eq!(single_cpus(&scatter), vec![0, 4, 1, 5, 2, 6, 3, 7, 8, 12]);
    assert_eq!(nodes_of(&scatter), [0, 1].repeat(5).into_iter().map(Some).collect::<Vec<_>>());
    assert!(scatter.workers.iter().all(|w| w.bind_memory));
    let compact = plan_ok(&t, &spec(None, Some(CpuPolicy::Compact), Some("0,1")), 4);
    assert_eq!(single_cpus(&compact), vec![0, 4, 8, 12]);
}

#[test]
fn numa_zones_with_cpu_cores_use_the_intersection() {
    let t = two_by_four_by_two().topology();
    let p = plan_ok(&t, &spec(Some("0,5"), None, Some("0,1")), 4);
    assert_eq!(single_cpus(&p), vec![0, 5, 0, 5]);
    assert_eq!(nodes_of(&p), vec![Some(0), Some(1), Some(0), Some(1)]);
    let err = plan_err(&t, &spec(Some("0-3"), None, Some("1")));
    assert!(err.starts_with("--numa-zones 1: node 1 has CPUs 4-7,12-15 but none of the --cpu-cores 0-3"), "{err}");
}

/// 2 packages × 4 cores × 2 threads in 4 nodes (two per package, as with sub-NUMA clustering).
fn four_nodes() -> FakeMachine {
    let mut m = FakeMachine::new(2, 4, 2, Numbering::ThreadsLast);
    m.nodes = Some(vec![vec![0, 1, 8, 9], vec![2, 3, 10, 11], vec![4, 5, 12, 13], vec![6, 7, 14, 15]]);
    m
}

#[test]
fn four_nodes_round_robin_under_each_policy() {
    let t = four_nodes().topology();
    assert_eq!(t.summary(), TopologySummary { packages: 2, cores: 8, pus: 16, nodes: 4 });
    let nodes = spec(None, None, Some("0-3"));
    let p = plan_ok(&t, &nodes, 5);
    assert_eq!(nodes_of(&p), vec![Some(0), Some(1), Some(2), Some(3), Some(0)]);
    assert_eq!(p.workers[1].cpus, Some(vec![2, 3, 10, 11]));
    let scatter = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), Some("0-3")), 12);
    assert_eq!(single_cpus(&scatter), vec![0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14]);
    let compact = plan_ok(&t, &spec(None, Some(CpuPolicy::Compact), Some("0-3")), 12);
    assert_eq!(single_cpus(&compact), vec![0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7]);
    let two = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), Some("3,1")), 4);
    assert_eq!(single_cpus(&two), vec![2, 6, 3, 7]);
    assert_eq!(nodes_of(&two), vec![Some(1), Some(3), Some(1), Some(3)]);
}

/// 1 package × 4 cores × 2 threads; node 0 has every CPU, node 1 is memory only.
fn memory_only_node() -> FakeMachine {
    let mut m = FakeMachine::new(1, 4, 2, Numbering::ThreadsLast);
    m.nodes = Some(vec![(0..8).collect(), vec![]]);
    m
}

#[test]
fn a_node_without_cpus_takes_the_memory_and_leaves_the_cpus_free() {
    let t = memory_only_node().topology();
    assert_eq!(t.summary(), TopologySummary { packages: 1, cores: 4, pus: 8, nodes: 2 });
    assert_eq!(t.node(1).unwrap().cpus, Vec::<u32>::new());
    let all = Some((0..8).collect::<Vec<u32>>());
    let p = plan_ok(&t, &spec(None, None, Some("0,1")), 2);
    assert_eq!(
        p.workers,
        vec![
            WorkerPlacement { cpus: all.clone(), node: Some(0), bind_memory: true },
            WorkerPlacement { cpus: all.clone(), node: Some(1), bind_memory: true },
        ]
    );
    let scatter = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), Some("0,1")), 4);
    assert_eq!(scatter.workers[0].cpus, Some(vec![0]));
    assert_eq!(scatter.workers[1].cpus, all);
    assert_eq!(scatter.workers[2].cpus, Some(vec![1]));
    assert_eq!(nodes_of(&scatter), vec![Some(0), Some(1), Some(0), Some(1)]);
    // With --cpu-cores, a memory-only node's workers stay on the listed CPUs.
    let listed = plan_ok(&t, &spec(Some("2-3"), None, Some("1")), 1);
    assert_eq!(listed.workers[0].cpus, Some(vec![2, 3]));
}

/// SMT turned off: every core's second thread (CPUs 8-15) is offline.
fn smt_off() -> FakeMachine {
    let mut m = two_by_four_by_two();
    m.offline = (8..16).collect();
    m
}

#[test]
fn smt_off_one_cpu_per_core_under_each_policy() {
    let t = smt_off().topology();
    assert_eq!(t.summary(), TopologySummary { packages: 2, cores: 8, pus: 8, nodes: 2 });
    assert_eq!(t.present, (0..16).collect::<Vec<_>>());
    assert_eq!(t.node(0).unwrap().cpus, vec![0, 1, 2, 3]);
    let scatter = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), None), 9);
    assert_eq!(single_cpus(&scatter), vec![0, 4, 1, 5, 2, 6, 3, 7, 0]);
    let compact = plan_ok(&t, &spec(None, Some(CpuPolicy::Compact), None), 8);
    assert_eq!(single_cpus(&compact), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    let nodes = plan_ok(&t, &spec(None, Some(CpuPolicy::Compact), Some("0,1")), 4);
    assert_eq!(single_cpus(&nodes), vec![0, 4, 1, 5]);
    let err = plan_err(&t, &spec(Some("7-9"), None, None));
    assert_eq!(err, "--cpu-cores 7-9: CPUs 8-9 are offline; CPUs available: 0-7");
}

#[test]
fn bad_cpus_and_nodes_are_usage_errors_listing_what_is_available() {
    let t = two_by_four_by_two().topology();
    assert_eq!(
        plan_err(&t, &spec(Some("99"), None, None)),
        "--cpu-cores 99: CPU 99 does not exist; CPUs available: 0-15"
    );
    assert_eq!(
        plan_err(&t, &spec(Some("14-17"), None, None)),
        "--cpu-cores 14-17: CPUs 16-17 do not exist; CPUs available: 0-15"
    );
    assert_eq!(
        plan_err(&t, &spec(None, None, Some("2"))),
        "--numa-zones 2: node 2 does not exist; nodes available: 0 (CPUs 0-3,8-11), 1 (CPUs 4-7,12-15)"
    );

    // A process confined to CPUs 0-3 (taskset, cgroup) and to node 0's memory.
    let mut confined = two_by_four_by_two();
    confined.allowed = Some(vec![0, 1, 2, 3]);
    confined.mems_allowed = Some(vec![0]);
    let t = confined.topology();
    assert_eq!(t.allowed, vec![0, 1, 2, 3]);
    assert_eq!(
        plan_err(&t, &spec(Some("3-4"), None, None)),
        "--cpu-cores 3-4: CPU 4 is outside the CPUs this process may use (cgroup cpuset or taskset); CPUs available: 0-3"
    );
    assert_eq!(
        plan_err(&t, &spec(None, None, Some("1"))),
        "--numa-zones 1: node 1 is outside the memory nodes this process may use (cgroup cpuset.mems); nodes available: 0 (CPUs 0-3)"
    );
    // Unpinned policy runs stay inside the allowed set.
    assert_eq!(single_cpus(&plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), None), 5)), vec![0, 1, 2, 3, 0]);
    // A node whose CPUs are all forbidden cannot run a worker.
    let mut no_node1_cpus = two_by_four_by_two();
    no_node1_cpus.allowed = Some(vec![0, 1]);
    let err = plan_err(&no_node1_cpus.topology(), &spec(None, None, Some("0,1")));
    assert_eq!(
        err,
        "--numa-zones 0-1: node 1 has CPUs 4-7,12-15 but none of them is allowed to this process (allowed: 0-1)"
    );

    // A possible node that is offline.
    let mut offline_node = four_nodes();
    offline_node.offline_nodes = vec![3];
    let err = plan_err(&offline_node.topology(), &spec(None, None, Some("3")));
    assert!(err.starts_with("--numa-zones 3: node 3 is offline; nodes available: 0 (CPUs 0-1,8-9)"), "{err}");
}

#[test]
fn a_kernel_without_numa_has_one_node_and_binds_no_memory() {
    let t = FakeMachine::new(1, 2, 2, Numbering::Sequential).topology();
    assert!(!t.numa_kernel);
    assert_eq!(t.nodes, vec![Node { id: 0, cpus: vec![0, 1, 2, 3] }]);
    let p = plan_ok(&t, &spec(None, None, Some("0")), 1);
    assert_eq!(p.workers[0], WorkerPlacement { cpus: Some(vec![0, 1, 2, 3]), node: Some(0), bind_memory: false });
    assert!(p.notes[0].contains("no NUMA support"), "{:?}", p.notes);
}

/// A fake block layer: nvme0n1 on a PCI device of node 1, a partition of it,
/// a device-mapper volume on the partition, and a virtio disk that reports -1.
fn write_block_devices(root: &Path) {
    let pci = root.join("sys/devices/pci0000:00/0000:00:01.0");
    let disk = pci.join("nvme/nvme0/nvme0n1");
    fs::create_dir_all(disk.join("nvme0n1p1")).unwrap();
    fs::write(disk.join("nvme0n1p1/partition"), "1\n").unwrap();
    fs::write(pci.join("numa_node"), "1\n").unwrap();
    let virtio = root.join("sys/devices/pci0000:00/0000:00:02.0");
    fs::create_dir_all(virtio.join("virtio1/block/vda")).unwrap();
    fs::write(virtio.join("numa_node"), "-1\n").unwrap();
    let dm = root.join("sys/devices/virtual/block/dm-0");
    fs::create_dir_all(dm.join("slaves")).unwrap();
    let dev = root.join("sys/dev/block");
    fs::create_dir_all(&dev).unwrap();
    let link = |target: &str, at: &Path| std::os::unix::fs::symlink(target, at).unwrap();
    link("../../devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1", &dev.join("259:0"));
    link("../../devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1/nvme0n1p1", &dev.join("259:1"));
    link("../../devices/virtual/block/dm-0", &dev.join("253:0"));
    link("../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda", &dev.join("254:0"));
    link("../../../../pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1/nvme0n1p1", &dm.join("slaves/nvme0n1p1"));
}

#[test]
fn block_devices_report_their_node() {
    let dir = tempfile::tempdir().unwrap();
    let machine = two_by_four_by_two();
    machine.write(dir.path());
    write_block_devices(dir.path());
    let t = sysfs::load(dir.path(), None).unwrap();
    let at = |major, minor| sysfs::device_locality(dir.path(), &t, major, minor);
    assert_eq!(at(259, 0), Some(sysfs::DeviceLocality { name: "nvme0n1".into(), node: Some(1) }));
    assert_eq!(at(259, 1), Some(sysfs::DeviceLocality { name: "nvme0n1".into(), node: Some(1) }));
    assert_eq!(at(253, 0), Some(sysfs::DeviceLocality { name: "dm-0".into(), node: Some(1) }));
    assert_eq!(at(254, 0), Some(sysfs::DeviceLocality { name: "vda".into(), node: None }));
    assert_eq!(at(8, 0), None);

    // --numa-zones auto: every worker on the device's node, pinned to its CPUs, memory bound.
    let auto = spec(None, None, Some("auto"));
    let p = plan(&t, &auto, 2, &[("nvme0n1".into(), Some(1))]).unwrap();
    assert_eq!(nodes_of(&p), vec![Some(1), Some(1)]);
    assert_eq!(p.workers[0].cpus, Some(vec![4, 5, 6, 7, 12, 13, 14, 15]));
    assert!(p.workers[0].bind_memory);
    // Two devices on two nodes: round robin over them.
    let p = plan(&t, &auto, 3, &[("a".into(), Some(1)), ("b".into(), Some(0)), ("c".into(), Some(1))]).unwrap();
    assert_eq!(nodes_of(&p), vec![Some(1), Some(0), Some(1)]);
    // A device that reports no node: not bound, and said so.
    let p = plan(&t, &auto, 2, &[("vda".into(), None)]).unwrap();
    assert_eq!(p.workers, vec![WorkerPlacement::default(); 2]);
    assert!(p.notes.iter().any(|n| n.contains("vda reports no NUMA node")), "{:?}", p.notes);

    // On a machine with one node, every device is on it.
    let one = tempfile::tempdir().unwrap();
    FakeMachine::new(1, 2, 1, Numbering::Sequential).node_per_package().write(one.path());
    write_block_devices(one.path());
    let t1 = sysfs::load(one.path(), None).unwrap();
    assert_eq!(sysfs::device_locality(one.path(), &t1, 254, 0).unwrap().node, Some(0));
}

#[cfg(feature = "hwloc")]
mod hwloc_backend {
    use super::*;

    /// The topology hwloc builds from `description` equals the one sysfs reads from `machine`'s
    /// tree, and so does every plan.
    fn same_as_sysfs(description: &str, machine: &FakeMachine) -> Topology {
        let from_hwloc = hwloc::from_synthetic(description).unwrap_or_else(|e| panic!("{description}: {e}"));
        let from_sysfs = machine.topology();
        assert_eq!(from_hwloc.present, from_sysfs.present, "{description}");
        assert_eq!(from_hwloc.pus, from_sysfs.pus, "{description}");
        assert_eq!(from_hwloc.nodes, from_sysfs.nodes, "{description}");
        assert_eq!(from_hwloc.summary(), from_sysfs.summary(), "{description}");
        let nodes: Vec<u32> = from_sysfs.nodes.iter().map(|n| n.id).collect();
        let zones = crate::io::placement::format_list(&nodes);
        for s in [
            spec(None, Some(CpuPolicy::Scatter), None),
            spec(None, Some(CpuPolicy::Compact), None),
            spec(None, None, Some(&zones)),
            spec(None, Some(CpuPolicy::Scatter), Some(&zones)),
            spec(None, Some(CpuPolicy::Compact), Some(&zones)),
        ] {
            for workers in [1, 3, from_sysfs.pus.len() as u32 + 1] {
                assert_eq!(
                    plan(&from_hwloc, &s, workers, &[]),
                    plan(&from_sysfs, &s, workers, &[]),
                    "{description} {s:?} {workers}"
                );
            }
        }
        from_hwloc
    }

    fn indexes(m: &FakeMachine) -> String {
        let mut order = Vec::new();
        for p in 0..m.packages {
            for c in 0..m.cores {
                for t in 0..m.threads {
                    order.push(m.cpu(p, c, t).to_string());
                }
            }
        }
        order.join(",")
    }

    #[test]
    fn two_packages_by_four_cores_by_two_threads() {
        let m = two_by_four_by_two();
        let t = same_as_sysfs(&format!("pack:2 [numa] core:4 pu:2(indexes={})", indexes(&m)), &m);
        assert_eq!(t.summary(), TopologySummary { packages: 2, cores: 8, pus: 16, nodes: 2 });
        let p = plan_ok(&t, &spec(None, Some(CpuPolicy::Scatter), None), 16);
        assert_eq!(single_cpus(&p), vec![0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]);
        let m = FakeMachine::new(2, 4, 2, Numbering::Sequential).node_per_package();
        same_as_sysfs("pack:2 [numa] core:4 pu:2", &m);
    }

    #[test]
    fn four_nodes() {
        let m = super::four_nodes();
        let t = same_as_sysfs(&format!("pack:2 group:2 [numa] core:2 pu:2(indexes={})", indexes(&m)), &m);
        assert_eq!(t.summary().nodes, 4);
    }

    #[test]
    fn a_node_without_cpus() {
        let m = memory_only_node();
        let t = same_as_sysfs(&format!("[numa] [numa] pack:1 core:4 pu:2(indexes={})", indexes(&m)), &m);
        assert_eq!(t.node(1).unwrap().cpus, Vec::<u32>::new());
    }

    #[test]
    fn smt_off() {
        // hwloc synthetic topologies have no offline CPUs: one thread per core instead.
        let m = FakeMachine::new(2, 4, 1, Numbering::Sequential).node_per_package();
        same_as_sysfs("pack:2 [numa] core:4 pu:1", &m);
    }

    /// On this machine, both backends read the same topology, give every plan alike,
    /// and find the same node for the root filesystem's device.
    #[test]
    fn both_backends_agree_on_this_machine() {
        let from_sysfs = sysfs::load_this_machine().unwrap();
        let from_hwloc = hwloc::load(false).unwrap();
        assert_eq!(from_hwloc, from_sysfs);
        let nodes: Vec<u32> = from_sysfs.nodes.iter().map(|n| n.id).collect();
        let zones = crate::io::placement::format_list(&nodes);
        for s in [
            PlacementSpec::default(),
            spec(None, Some(CpuPolicy::Scatter), None),
            spec(None, Some(CpuPolicy::Compact), None),
            spec(None, None, Some(&zones)),
            spec(None, Some(CpuPolicy::Compact), Some(&zones)),
        ] {
            for workers in [1, 2, 5] {
                assert_eq!(plan(&from_hwloc, &s, workers, &[]), plan(&from_sysfs, &s, workers, &[]));
            }
        }
        for path in ["/", "/tmp", env!("CARGO_MANIFEST_DIR")] {
            assert_eq!(
                device_of_path(&from_hwloc, "hwloc", Path::new(path)),
                device_of_path(&from_sysfs, "sysfs", Path::new(path)),
                "{path}"
            );
        }
    }
}
