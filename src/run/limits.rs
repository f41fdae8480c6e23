//! Limits checked before anything is touched: what the kernel allows (native AIO
//! requests) and the memory the run will allocate (`memory`).

use super::region::RegionLayout;
use super::worker_plan::tracks_sequences;
use crate::error::UsageError;
use crate::memory::{self, MemoryEstimate};
use crate::spec::{EngineKind, Spec};
use crate::stats::coverage::CoverageTracker;
use crate::target;

/// Limits the kernel sets on what the spec asks for, checked before anything is touched.
pub(super) fn check_kernel_limits(spec: &Spec, effective_depth: u32) -> Result<(), UsageError> {
    if spec.engine == EngineKind::Libaio {
        let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
        if let (Some(max), Some(used)) = (read("/proc/sys/fs/aio-max-nr"), read("/proc/sys/fs/aio-nr")) {
            let free = max.saturating_sub(used);
            let needed = u64::from(spec.threads) * u64::from(effective_depth);
            if needed > free {
                let per_worker = free / u64::from(spec.threads);
                let hint = if per_worker > 0 {
                    format!("at most --queue-depth {per_worker} with --threads {}", spec.threads)
                } else {
                    "no libaio worker can start now".to_string()
                };
                return Err(UsageError::new(format!(
                    "--queue-depth {effective_depth} with --threads {} needs {needed} native AIO requests, but the kernel allows {free} more (fs.aio-max-nr = {max}, {used} in use): {hint}, or raise the limit (sysctl -w fs.aio-max-nr={})",
                    spec.threads,
                    (used + needed).next_power_of_two()
                )));
            }
        }
    }
    Ok(())
}

/// The memory the run will allocate (`memory`), from the planned targets and regions.
pub(super) fn memory_estimate(
    spec: &Spec,
    plans: &[target::TargetPlan],
    layout: &RegionLayout,
    effective_depth: u32,
    interval_snapshots: bool,
) -> MemoryEstimate {
    let tracks = spec.verify.is_some() && tracks_sequences(spec, layout);
    let workers: Vec<memory::WorkerShape> = (0..spec.threads)
        .map(|w| {
            let region = layout.worker(w);
            memory::WorkerShape {
                region_blocks: region.blocks,
                files: region.files.len() as u64,
                bitmap: CoverageTracker::bitmap_fits(region.blocks, spec.threads),
                tracks_sequences: tracks,
            }
        })
        .collect();
    let verifying = spec.verify.is_some();
    let draws = crate::worker::draws_ahead(
        spec.engine.caps().completes_inline,
        spec.read_percent,
        verifying,
        spec.write_pattern,
    ) && spec.flush.is_none(); // a flushing worker does not draw ahead (worker::Worker::new)
    let slots_per_worker = crate::worker::slot_count(effective_depth, draws);
    let largest = spec.largest_block_bytes();
    let area = crate::worker::AreaShape::of(
        spec.write_pattern,
        spec.read_percent < 100,
        verifying,
        spec.engine.caps().completes_inline,
        slots_per_worker,
        largest,
        spec.block_sizes.is_some(),
    );
    let shape = memory::RunShape {
        queue_depth: effective_depth,
        slots_per_worker,
        slot_bytes: crate::worker::private_slot_bytes(area, spec.read_percent, largest),
        area_bytes: area.map_or(0, |a| a.len_bytes),
        random_pool: spec.read_percent < 100 && !verifying && spec.write_pattern == crate::data::Pattern::Random,
        block_size_bytes: spec.largest_block_bytes(),
        buffer_align_bytes: plans.iter().map(|p| p.dio_align_bytes).max().unwrap_or(1).max(4096),
        targets: plans.len() as u64,
        verify_max_reports: spec.verify.map(|v| v.max_reports),
        interval_snapshots,
        flushing: spec.flush.is_some(),
    };
    memory::estimate(&shape, &workers)
}
