//! The flags that place workers on CPUs and NUMA nodes (help heading "Placement").

use crate::base::units::IdList;
use crate::base::units::values::Count;
use crate::io::placement::{CpuPolicy, NumaZones, PlacementSpec};
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Placement")]
#[serde(default)]
pub struct PlacementArgs {
    /// Pin workers to CPUs of LIST.
    ///
    /// Pin worker i to one CPU of LIST (e.g. 0-31 or 0,2,4-7), taken in --cpu-policy order, round
    /// robin when there are more workers than CPUs. Each CPU must exist, be online and be allowed
    /// (cgroup cpuset, taskset).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub cpu_cores: Option<IdList>,

    /// Order in which pinned workers take CPUs.
    ///
    /// Order in which pinned workers take CPUs: scatter = one worker per physical core (alternating
    /// packages) before any SMT sibling; compact = a core's SMT siblings first. Given alone, pins
    /// workers over every allowed CPU. E.g. `--threads 4 --cpu-policy compact` [default: scatter]
    #[arg(long, value_enum, value_name = "POLICY")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub cpu_policy: Option<CpuPolicy>,

    /// Spread workers over NUMA nodes LIST.
    ///
    /// Spread workers round robin over NUMA nodes LIST (e.g. 0,1): each runs on its node's CPUs
    /// (one of them with --cpu-cores or --cpu-policy) and its buffers are allocated on its node.
    /// `auto`: the node of the targets' block device, when it reports one.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST|auto")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub numa_zones: Option<NumaZones>,

    /// Keep idle CPUs out of deep idle states (root).
    ///
    /// Hold idle CPUs to idle states they leave within USEC µs for the run's window (a PM QoS
    /// request on /dev/cpu_dma_latency, dropped when the window closes; needs root). 0: idle
    /// CPUs poll instead of sleeping (where sleeping states have an exit latency, as on most
    /// machines; the result lists the states entered), so the CPU that takes the next completion or runs the
    /// device's kernel worker is awake: at queue depth 1 on a fast device a CPU's wake-up
    /// (in a VM, a halt) can be most of the latency. It burns the idle CPUs' time: the result
    /// says how much (cpu_state.idle.poll_cpus). E.g. `--engine io_uring --direct --random
    /// --queue-depth 1 --cpu-dma-latency 0`
    #[arg(long, allow_hyphen_values = true, value_name = "USEC")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub cpu_dma_latency: Option<Count<u32>>,
}

impl PlacementArgs {
    pub fn spec(&self) -> PlacementSpec {
        PlacementSpec {
            cpu_cores: self.cpu_cores.clone().map(|l| l.0),
            cpu_policy: self.cpu_policy,
            numa_zones: self.numa_zones.clone(),
            cpu_dma_latency_us: self.cpu_dma_latency.map(|c| c.0),
        }
    }
}
