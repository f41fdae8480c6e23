//! Limits checked before anything is touched: what the kernel allows (each engine's own,
//! e.g. native AIO requests) and the memory the run will allocate (`memory`).

use super::region::RegionLayout;
use super::worker_plan::tracks_sequences;
use crate::base::diagnostics::error::UsageError;
use crate::io::host::memory::{self, MemoryEstimate};
use crate::io::stats::coverage::CoverageTracker;
use crate::storage::targets;
use crate::workload::spec::Spec;

/// Limits the kernel sets on what the spec asks for, checked before anything is touched
/// (each engine knows its own: `Engine::check_limits`).
pub(super) fn check_kernel_limits(spec: &Spec, effective_depth: u32) -> Result<(), UsageError> {
    spec.io.engine.check_limits(spec.shape.threads, effective_depth)
}

/// Refuses a phase whose `threads` threads (its workers and the threads that run its jobs)
/// the kernel would not let this process start: the system's `kernel.threads-max`, the
/// `pids.max` of its cgroups, and `ulimit -u` for users other than root. Without it, a
/// phase of thousands of jobs failed at its thousandth spawn, after the others were set up.
pub fn check_thread_room(threads: u64) -> Result<(), UsageError> {
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
    let running = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count() as u64);
    let wanted = threads.saturating_add(running);
    if let Some(max) = read("/proc/sys/kernel/threads-max")
        && wanted > max
    {
        return Err(UsageError::new(format!(
            "{threads} threads are needed, but the system allows {max} (kernel.threads-max): run fewer jobs or workers at once"
        )));
    }
    if let Some((path, room)) = cgroup_pids_max()
        && threads > room
    {
        return Err(UsageError::new(format!(
            "{threads} threads are needed, but the cgroup {path} has room for {room} more tasks (pids.max): run fewer jobs or workers at once, or raise pids.max"
        )));
    }
    if let Ok((soft, _)) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NPROC)
        && !nix::unistd::Uid::effective().is_root()
        && soft != nix::sys::resource::RLIM_INFINITY
        && wanted > soft
    {
        return Err(UsageError::new(format!(
            "{threads} threads are needed, but `ulimit -u` allows {soft} processes and threads: run fewer jobs or workers at once, or raise ulimit -u"
        )));
    }
    Ok(())
}

/// The tightest `pids.max` over this process's cgroup (v2) and its ancestors, with the
/// cgroup's path; `None` when no limit is set or cgroups cannot be read.
fn cgroup_pids_max() -> Option<(String, u64)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let root = std::path::Path::new("/sys/fs/cgroup");
    let mut dir = root.join(path.trim_start_matches('/'));
    let mut tightest: Option<(String, u64)> = None;
    loop {
        let number = |name: &str| std::fs::read_to_string(dir.join(name)).ok()?.trim().parse::<u64>().ok();
        if let (Some(max), Some(current)) = (number("pids.max"), number("pids.current")) {
            // Tasks of other processes in the cgroup take room too.
            let room = max.saturating_sub(current);
            if tightest.as_ref().is_none_or(|(_, t)| room < *t) {
                let shown = dir.strip_prefix(root).map(|p| format!("/{}", p.display())).unwrap_or_default();
                tightest = Some((shown, room));
            }
        }
        if dir == root || !dir.pop() || !dir.starts_with(root) {
            break;
        }
    }
    tightest
}

/// The memory the run will allocate (`memory`), from the planned targets and regions.
pub(super) fn memory_estimate(
    spec: &Spec,
    plans: &[targets::TargetPlan],
    layout: &RegionLayout,
    effective_depth: u32,
    interval_snapshots: bool,
) -> MemoryEstimate {
    let tracks = spec.data.verify.is_some() && tracks_sequences(spec, layout);
    let workers: Vec<memory::WorkerShape> = (0..spec.shape.threads)
        .map(|w| {
            let region = layout.worker(w);
            memory::WorkerShape {
                region_blocks: region.blocks,
                files: region.files.len() as u64,
                bitmap: CoverageTracker::bitmap_fits(region.blocks, spec.shape.threads),
                tracks_sequences: tracks,
            }
        })
        .collect();
    // The sizes the workers will be handed (`worker_plan::worker_sizing`), not a copy of them.
    let sizing = super::worker_plan::worker_sizing(spec, effective_depth);
    let shape = memory::RunShape {
        queue_depth: effective_depth,
        slots_per_worker: sizing.slot_count,
        slot_bytes: sizing.private_slot_bytes,
        area_bytes: sizing.area.map_or(0, |a| a.len_bytes),
        random_pool: sizing.random_pool,
        block_size_bytes: spec.largest_block_bytes(),
        buffer_align_bytes: plans.iter().map(|p| p.dio_align_bytes).max().unwrap_or(1).max(4096),
        huge_pages: spec.io.buffer_pages.huge(),
        targets: plans.len() as u64,
        verify_max_reports: spec.data.verify.map(|v| v.max_reports),
        interval_snapshots,
        flushing: spec.issues_flushes(),
    };
    let mut estimate = memory::estimate(&shape, &workers);
    let threads = u64::from(spec.shape.threads);
    if let Some(r) = &spec.replay {
        // Each worker's schedule, made before the start line (`worker_plan::replay_plan`).
        let trace = r.trace_files.first().map_or_else(String::new, |p| p.display().to_string());
        let per_entry = size_of::<crate::io::worker::ReplayIo>() as u64;
        estimate.add_schedule(trace, r.ios.len() as u64, per_entry, threads);
    }
    if spec.output.record_iolog {
        let per_record = size_of::<crate::io::worker::iolog::IoRecord>() as u64;
        let tables: Vec<u64> = (0..spec.shape.threads)
            .map(|w| {
                let share = spec.window.ops_limit.map(|n| {
                    crate::io::access::share_boundary(n, w + 1, spec.shape.threads)
                        - crate::io::access::share_boundary(n, w, spec.shape.threads)
                });
                // A worker's files: at most every target.
                super::worker_plan::iolog_records(spec, share, spec.targets.len()) as u64 * per_record
            })
            .collect();
        estimate.add_iolog(tables.iter().sum(), tables.iter().copied().max().unwrap_or(0));
    }
    estimate
}
