//! Where each worker runs: the machine's topology and each worker's CPUs and NUMA node
//! (`placement::plan`), and the placement as the result records it.

use crate::base::diagnostics::error::{Error, RunError};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::figures::result::PlacementInfo;
use crate::io::placement::{self, NumaZones, PlacementPlan, Topology};
use crate::workload::spec::Spec;
use std::path::PathBuf;

/// The machine's topology (when it could be read, with its reader) and each worker's placement.
pub(super) struct Placed {
    pub(super) topology: Option<(Topology, &'static str)>,
    pub(super) plan: PlacementPlan,
}

/// Plans where each worker runs (`placement::plan`). A CPU or node that does not
/// exist, is offline or is not allowed is a usage error, found before any target
/// is touched.
pub(super) fn place(spec: &Spec, paths: &[PathBuf], diag: &Diagnostics) -> Result<Placed, Error> {
    let topology = match placement::load_topology() {
        Ok(t) => t,
        Err(_) if spec.placement.is_default() => {
            let workers = vec![placement::WorkerPlacement::default(); spec.shape.threads as usize];
            return Ok(Placed { topology: None, plan: PlacementPlan { workers, ..PlacementPlan::default() } });
        }
        Err(e) => {
            let message =
                format!("cannot read the CPU topology, which --cpu-cores/--cpu-policy/--numa-zones need: {e}");
            return Err(RunError::Other(message).into());
        }
    };
    let (machine, backend) = &topology;
    let devices: Vec<(String, Option<u32>)> = match spec.placement.numa_zones {
        Some(NumaZones::Auto) => paths.iter().map(|p| placement::device_of_path(machine, backend, p)).collect(),
        _ => Vec::new(),
    };
    let plan = placement::plan(machine, &spec.placement, spec.shape.threads, &devices)?;
    for note in &plan.notes {
        diag.note(note.clone());
    }
    Ok(Placed { topology: Some(topology), plan })
}

pub(super) fn placement_info(placed: &Placed) -> PlacementInfo {
    let (backend, topology, allowed_cpus) = match &placed.topology {
        Some((t, backend)) => (backend.to_string(), t.summary(), t.allowed.clone()),
        None => (String::new(), Default::default(), Vec::new()),
    };
    PlacementInfo {
        backend,
        topology,
        allowed_cpus,
        pinned: placed.plan.workers.iter().any(|w| w.cpus.is_some()),
        policy: placed.plan.policy.map(|p| p.name().to_string()),
    }
}
