//! The flags that place workers on CPUs and NUMA nodes (help heading "Placement").

use crate::placement::{CpuPolicy, NumaZones, PlacementSpec};
use crate::units::IdList;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Placement")]
#[serde(default)]
pub struct PlacementArgs {
    /// Pin worker i to one CPU of LIST (e.g. 0-31 or 0,2,4-7), taken in --cpu-policy order, round
    /// robin when there are more workers than CPUs. Each CPU must exist, be online and be allowed
    /// (cgroup cpuset, taskset).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST")]
    #[serde(deserialize_with = "crate::units::values::text")]
    pub cpu_cores: Option<IdList>,

    /// Order in which pinned workers take CPUs: scatter = one worker per physical core (alternating
    /// packages) before any SMT sibling; compact = a core's SMT siblings first. Given alone, pins
    /// workers over every allowed CPU. E.g. `--threads 4 --cpu-policy compact` [default: scatter]
    #[arg(long, value_enum, value_name = "POLICY")]
    #[serde(deserialize_with = "crate::units::values::choice")]
    pub cpu_policy: Option<CpuPolicy>,

    /// Spread workers round robin over NUMA nodes LIST (e.g. 0,1): each runs on its node's CPUs
    /// (one of them with --cpu-cores or --cpu-policy) and its buffers are allocated on its node.
    /// `auto`: the node of the targets' block device, when it reports one.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST|auto")]
    #[serde(deserialize_with = "crate::units::values::text")]
    pub numa_zones: Option<NumaZones>,
}

impl PlacementArgs {
    pub fn spec(&self) -> PlacementSpec {
        PlacementSpec {
            cpu_cores: self.cpu_cores.clone().map(|l| l.0),
            cpu_policy: self.cpu_policy,
            numa_zones: self.numa_zones.clone(),
        }
    }
}
