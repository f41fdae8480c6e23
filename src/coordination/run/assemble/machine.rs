//! The machine's side of a run's result: CPU time and state over the window, the idle
//! states per I/O, the engine's notes, the CPUs the workers could run on.

use crate::base::diagnostics::warnings::Diagnostics;
use crate::coordination::run::place::Placed;
use crate::figures::result::CpuInfo;
use crate::io::host::rusage;
use crate::io::stats::{CpuTimes, OpStats};
use crate::io::worker::WorkerResult;
use crate::storage::targets::device_witness::Devices;
use crate::workload::spec::Spec;

/// The CPU figures: the whole process in the window (per I/O, in cores), the workers'
/// share and the rest, and the whole process over its life.
pub(super) fn cpu_info(workers: CpuTimes, window: CpuTimes, ops: u64, window_ns: u64) -> CpuInfo {
    let per_io = |cpu: &CpuTimes| if ops > 0 { cpu.total_ns() as f64 / ops as f64 } else { 0.0 };
    CpuInfo {
        workers,
        process: rusage::process_cpu(),
        window,
        other_ns: window.total_ns().saturating_sub(workers.total_ns()),
        per_io_ns: per_io(&window),
        workers_per_io_ns: per_io(&workers),
        cores_busy: window.total_ns() as f64 / window_ns.max(1) as f64,
    }
}

/// The CPUs the workers could run on: the union of their pinned CPUs when every worker is
/// pinned, else every CPU the process may use (empty when unknown: every online CPU).
pub(super) fn worker_cpus(placed: &Placed) -> Vec<u32> {
    let workers = &placed.plan.workers;
    if !workers.is_empty() && workers.iter().all(|w| w.cpus.is_some()) {
        let set: std::collections::BTreeSet<u32> =
            workers.iter().flat_map(|w| w.cpus.iter().flatten().copied()).collect();
        return set.into_iter().collect();
    }
    placed.topology.as_ref().map(|(t, _)| t.allowed.clone()).unwrap_or_default()
}

/// The median latency of one op type's histogram, ns (0 when nothing completed).
fn headline_p50_ns(stats: &OpStats) -> u64 {
    if stats.ops == 0 { 0 } else { stats.latency.value_at_quantile(0.5) }
}

/// The CPU's state over the window, for the CPUs the workers could run on, with the idle
/// latency the run asked of them; its warnings said.
pub(super) fn machine_state(
    mut cpu_state: crate::io::cpu_state::CpuState,
    latency_request_us: Option<&Result<u32, String>>,
    devices: &Devices,
    diag: &Diagnostics,
) -> crate::io::cpu_state::CpuState {
    match latency_request_us {
        Some(Ok(us)) => {
            if let Some(idle) = &mut cpu_state.idle {
                idle.latency_limit_us = Some(*us);
            }
        }
        Some(Err(e)) => diag.warn(format!("{e}: the idle CPUs were left as they were")),
        None => {}
    }
    for warning in crate::io::cpu_state::warnings(&cpu_state, &devices.loop_devices()) {
        diag.warn(warning);
    }
    cpu_state
}

/// Engine notes (fallbacks taken at set-up): each distinct one said once.
pub(super) fn say_engine_notes(workers: &[WorkerResult], diag: &Diagnostics) {
    let mut said: Vec<&String> = Vec::new();
    for note in workers.iter().flat_map(|w| &w.engine.engine_notes) {
        if !said.contains(&note) {
            diag.note(note.clone());
            said.push(note);
        }
    }
}

/// The idle states per I/O (counted from the release, a ramp included: so are the I/Os
/// `counted`), and a note when deep idle states may have cost the run latency.
pub(super) fn count_idle_states(
    cpu_state: &mut crate::io::cpu_state::CpuState,
    spec: &Spec,
    counted: u64,
    effective_depth: u32,
    (read, write): (&OpStats, &OpStats),
    diag: &Diagnostics,
) {
    if let Some(idle) = &mut cpu_state.idle {
        idle.sleeps_per_io = (counted > 0).then(|| idle.sleeps as f64 / counted as f64);
    }
    let p50_ns = if read.ops >= write.ops { headline_p50_ns(read) } else { headline_p50_ns(write) };
    if spec.io.engine.caps().touches_storage
        && let Some(note) =
            crate::io::cpu_state::idle_note(cpu_state, spec.shape.threads.saturating_mul(effective_depth), p50_ns)
    {
        diag.note(note);
    }
}
