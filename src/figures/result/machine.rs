//! The result's sections about the machine and the tool: CPU time, each worker with its
//! placement, the queue depth achieved, the tool's own time and depth counts. Plain data.

use super::{CpuState, Environment};
use crate::io::placement::TopologySummary;
use crate::io::stats::{CpuTimes, OpSummary};
use serde::{Deserialize, Serialize};

/// Mean I/Os in flight over the window by Little's law (IOPS × mean latency).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AchievedQueueDepth {
    /// Summed over all workers.
    pub total: f64,
    /// `total` / number of workers: compare with `engine.effective_queue_depth`.
    pub mean_per_worker: f64,
}

/// The tool's own time: each worker's wall time from the clock reading that ends one
/// I/O's latency (after the call that reaped it) to the one that starts the next's
/// (before the call that hands it to the kernel): its accounting, the next offset and the
/// data. Every latency excludes it; at queue depth 1 it is what the tool takes from the
/// IOPS. Measured on the clock readings every I/O has anyway (no extra reading).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolTime {
    /// Summed over the workers, ns.
    pub total_ns: u64,
    /// `total_ns` per completed I/O.
    pub per_io_ns: f64,
    /// `total_ns` over the workers' windows together (window × workers): the share of
    /// each worker's time that was the tool's own.
    pub share_of_window: f64,
}

/// How deep the queue ran, counted per event by exact value: each entry is a
/// `[value, count]` pair, ascending, zeros left out; the value 64 stands for 64 or more.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoDepths {
    /// I/Os by the number in flight once each was issued (itself included).
    pub at_issue: Vec<(u32, u64)>,
    /// Submitting system calls by the I/Os each carried, as the engine made them (a batch
    /// the worker handed over is split into calls of at most `engine.setup`'s
    /// `submit_batch_max`); an inline engine's every I/O is one call of 1.
    pub per_submit: Vec<(u32, u64)>,
    /// Reaps that returned completions, by how many each returned.
    pub per_reap: Vec<(u32, u64)>,
}

/// CPU time of the run (getrusage). The window's figures (`window`, `other_ns`, `per_io_ns`,
/// `cores_busy`) are the whole process's CPU time from the release of the start line to
/// the moment every worker has stopped: on Linux that counts every thread of the process,
/// io_uring's kernel threads (io-wq workers, the SQPOLL thread) included, and nothing of
/// set-up or layout.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CpuInfo {
    /// CPU time of the worker threads inside the window (each thread's own getrusage).
    pub workers: CpuTimes,
    /// CPU time of the whole process over its life, set-up and layout included.
    pub process: CpuTimes,
    /// CPU time of the whole process inside the window (zero in results of versions that
    /// did not record it).
    #[serde(default)]
    pub window: CpuTimes,
    /// `window` − `workers` (user + sys): the sampler, the watchdog and the coordinator,
    /// and the kernel's I/O threads (io_uring io-wq, SQPOLL). Only the total is given: the
    /// kernel splits user from sys separately for a thread and for the process.
    #[serde(default)]
    pub other_ns: u64,
    /// The whole process's CPU time in the window per completed I/O (`window` / ops).
    pub per_io_ns: f64,
    /// The worker threads' CPU time per completed I/O (`workers` / ops): the figure fio's
    /// per-job CPU compares with (it counts its job threads only).
    #[serde(default)]
    pub workers_per_io_ns: f64,
    /// The whole process's CPU time in the window as a share of the window, in cores
    /// (1.0 = one core busy).
    pub cores_busy: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub index: u32,
    pub read: OpSummary,
    pub write: OpSummary,
    /// This worker's flushes (absent when the run issued none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<OpSummary>,
    /// This worker's trims (absent when the run asked for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    pub cpu: CpuTimes,
    pub stop: String,
    /// Where this worker was placed and where it was seen running.
    #[serde(default)]
    pub placement: WorkerPlacementInfo,
    /// This worker's mean I/Os in flight (Little's law).
    #[serde(default)]
    pub achieved_queue_depth: f64,
}

/// The machine's topology and the placement flags' effect.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlacementInfo {
    /// Which reader produced the topology: "sysfs" or "hwloc" (empty if it could not be read).
    pub backend: String,
    pub topology: TopologySummary,
    /// Online CPUs this process may use (sched_getaffinity).
    pub allowed_cpus: Vec<u32>,
    /// Some worker is pinned to a CPU set.
    pub pinned: bool,
    /// "scatter" or "compact" when workers are pinned to single CPUs.
    pub policy: Option<String>,
}

/// One worker's placement: planned, then seen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerPlacementInfo {
    /// CPUs it was pinned to; null: not pinned.
    pub cpus: Option<Vec<u32>>,
    /// Its NUMA node (the node it was placed on, or its single CPU's node).
    pub node: Option<u32>,
    /// Its buffers were bound to `node` (set_mempolicy, mbind).
    pub memory_bound: bool,
    /// The CPU it was running on when it finished (sched_getcpu).
    pub cpu_seen: Option<u32>,
    /// The node its buffers' first page was on after set-up (get_mempolicy).
    pub buffer_node_seen: Option<u32>,
}

/// The machine the run saw: its environment, the CPU time spent, the CPU's state, where the
/// workers ran and the memory planned for.
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MachineFacts {
    pub environment: Environment,
    pub cpu: CpuInfo,
    /// The CPU's state over the window: governor, boost, SMT, frequencies of the workers'
    /// CPUs, steal and other work on the machine (null in results of versions before it).
    #[serde(default)]
    pub cpu_state: Option<CpuState>,
    /// The machine's topology and how workers were placed (per worker: `workers[].placement`).
    #[serde(default)]
    pub placement: PlacementInfo,
    /// Memory the run planned for (computed before it started) and the memory available.
    #[serde(default)]
    pub memory: Option<crate::io::host::memory::MemoryEstimate>,
}
