//! A run's first stage, `Checked`: everything planned and judged on the targets given,
//! nothing touched (no file created, opened for writing or written). `plan::check` makes
//! this stage alone for every job, phase and point before the first run.
//! Must not: create, open for writing, lock or write anything.

use super::region::{self, RegionLayout};
use super::{durable_record, limits, place};
use crate::base::diagnostics::error::Error;
use crate::base::diagnostics::warnings::Diagnostics;
use crate::storage::targets;
use crate::workload::spec::Spec;
use std::borrow::Cow;
use std::path::PathBuf;

/// What a run's planning decided, every check passed.
pub(super) struct Checked<'a> {
    /// The spec the run goes on with: as given, or with `--io-limit N%` made an I/O count
    /// (`ops_limit`) of the targets' sizes.
    pub(super) spec: Cow<'a, Spec>,
    /// What each target will be; taken by `Prepared`, which makes the targets of them.
    pub(super) plans: Vec<targets::TargetPlan>,
    pub(super) distribution: crate::workload::spec::FileDistribution,
    pub(super) layout: RegionLayout,
    pub(super) effective_depth: u32,
    pub(super) memory: crate::io::host::memory::MemoryEstimate,
    pub(super) placed: place::Placed,
    /// How the `--verify-state` record follows durability (none without it).
    pub(super) record_durability: Option<crate::io::durable_format::Durability>,
}

impl<'a> Checked<'a> {
    /// The one planning sequence of a run on the targets `given`, for `run` and `check`:
    /// it looks and never touches.
    pub(super) fn plan(
        given_spec: &'a Spec,
        given: &[PathBuf],
        diag: &Diagnostics,
        interval_snapshots: bool,
    ) -> Result<Checked<'a>, Error> {
        check_latency_request(given_spec)?;
        let paths = region::target_paths(given_spec, given)?;
        let plans = targets::plan_targets(given_spec, &paths)?;
        let distribution = region::effective_file_distribution(given_spec);
        let layout = RegionLayout::new(given_spec, distribution, &plans.iter().map(|p| p.blocks).collect::<Vec<_>>())?;
        let spec = match given_spec.window.io_limit_percent {
            Some(percent) => Cow::Owned(with_io_share(given_spec, &layout, percent)),
            None => Cow::Borrowed(given_spec),
        };
        check_zones_fit(&spec, &layout)?;
        let effective_depth = effective_depth(&spec, &layout);
        limits::check_kernel_limits(&spec, effective_depth)?;
        let memory = limits::memory_estimate(&spec, &plans, &layout, effective_depth, interval_snapshots);
        crate::io::host::memory::check(&memory, spec.shape.threads, effective_depth, spec.largest_block_bytes())?;
        let placed = place::place(&spec, &paths, diag)?;
        let record_durability = durable_record::durability(&spec, &plans)?;
        Ok(Checked { spec, plans, distribution, layout, effective_depth, memory, placed, record_durability })
    }
}

/// `--cpu-dma-latency`: whether this process may make the request it will hold for the
/// window (the device is root's).
pub(super) fn check_latency_request(spec: &Spec) -> Result<(), Error> {
    if let Some(us) = spec.placement.cpu_dma_latency_us {
        crate::io::cpu_state::latency_request::check_allowed(us)
            .map_err(crate::base::diagnostics::error::UsageError::new)?;
    }
    Ok(())
}

/// `spec` with `--io-limit N%` made an I/O count: N % of the bytes each worker addresses
/// (the whole target when they share it, its part or its own file otherwise) in I/Os of
/// the block size, or of a `--bssplit` mix's mean size (its I/Os have no one size: the
/// bytes moved match the share on average), summed over the workers; at least one I/O.
fn with_io_share(spec: &Spec, layout: &RegionLayout, percent: u32) -> Spec {
    let unit_bytes = spec.shape.block_size_bytes as f64;
    let io_bytes = spec
        .shape
        .block_sizes
        .as_ref()
        .map_or(unit_bytes, |mix| mix.mean_bytes(spec.access.read_percent, spec.access.trim_percent));
    let ops: u64 = (0..spec.shape.threads)
        .map(|w| {
            let bytes = layout.worker(w).blocks as f64 * unit_bytes * f64::from(percent) / 100.0;
            // Whole I/Os of a block size; a mix's mean rounded to the nearest.
            if spec.shape.block_sizes.is_some() { (bytes / io_bytes).round() as u64 } else { (bytes / io_bytes) as u64 }
        })
        .fold(0u64, u64::saturating_add);
    let mut resolved = spec.clone();
    resolved.window.ops_limit = Some(ops.max(1));
    resolved
}

/// Absolute zones (`--distribution zoned-abs`) must end inside each worker's region, whose
/// size is known once the targets are: the I/Os of a zone past the end would all land on
/// the region's last block.
fn check_zones_fit(spec: &Spec, layout: &RegionLayout) -> Result<(), Error> {
    let crate::io::access::Distribution::Zoned { zones } = &spec.access.distribution else { return Ok(()) };
    let Some(covered) = zones.covered_bytes() else { return Ok(()) };
    let region_bytes = layout.smallest_worker_region().saturating_mul(spec.shape.block_size_bytes);
    if covered > region_bytes {
        return Err(crate::base::diagnostics::error::UsageError::new(format!(
            "--zones {}: the zones end at byte {covered}, past the end of the region a worker addresses ({region_bytes} bytes): shrink the zones, give a larger target or fewer workers per slice",
            zones.to_text()
        ))
        .into());
    }
    Ok(())
}

/// The depth each worker runs at: 1 for an engine that completes inline, and no deeper
/// than a verifying worker's blocks (it never has two I/Os on one block).
fn effective_depth(spec: &Spec, layout: &RegionLayout) -> u32 {
    let depth = if spec.io.engine.caps().completes_inline { 1 } else { spec.shape.queue_depth };
    match spec.data.verify {
        Some(_) => depth.min(layout.smallest_worker_region().min(u64::from(u32::MAX)) as u32).max(1),
        None => depth,
    }
}
