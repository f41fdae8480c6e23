//! The memory a run will use, computed before anything is touched, stated in
//! the report and the JSON, and checked against the memory available.
//!
//! Everything a run allocates grows with a flag, and all of it is allocated
//! before the start line: per worker, `--queue-depth` I/O buffers of
//! `--block-size` (rounded up to the buffer alignment) and the per-slot
//! bookkeeping of the worker and its engine; two latency histograms (read,
//! write) per target the worker addresses, plus its totals (and four more
//! for the time series or the live line: the interval snapshots); a coverage
//! tracker (a bitmap of its region when it fits, and a sample of hit
//! counters); with `--verify`, the last sequence written to each block. The
//! coordinator adds the merged histograms and a copy of the trackers. A replay adds
//! each worker's schedule (`worker::ReplayIo` per entry of the trace), and
//! `--write-iolog` each worker's table of records (`worker::iolog::IoRecord` per I/O it
//! may log): both grow with the trace or `--ops`, not with a flag of the shape, so a
//! refusal for them names the trace or `--write-iolog`.
//! Thread stacks are address space reserved on demand and are not counted.

use crate::base::diagnostics::error::UsageError;
use crate::base::units::display as units;
use crate::io::stats::coverage::{CoverageTracker, SAMPLE_SLOTS};
use serde::{Deserialize, Serialize};

/// Bookkeeping per slot: the worker's slot state and completion, and the engine's
/// own per-request state (libaio: iocb, event, queue entries), rounded up.
const SLOT_OVERHEAD_BYTES: u64 = 256;

/// The memory a run plans for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEstimate {
    /// All of the below.
    pub total_bytes: u64,
    /// I/O buffers: threads x queue depth x block size (rounded up to the buffer alignment).
    pub buffers_bytes: u64,
    /// Per-slot bookkeeping of workers and engines.
    pub queues_bytes: u64,
    /// Latency histograms: per worker, read and write per target plus its totals;
    /// the coordinator's merged ones.
    pub histograms_bytes: u64,
    /// Coverage trackers of every worker, and their copy when the run is summarized.
    pub coverage_bytes: u64,
    /// `--verify`: the last sequence written to each block, scratch blocks, reports.
    pub verify_bytes: u64,
    /// `iopulse replay`: every worker's schedule (its entries of the trace, due time,
    /// offset, length and op each). The trace as read is resident when the run is
    /// planned (in the memory in use the limits are checked against), so it is not here.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub schedule_bytes: u64,
    /// `--write-iolog`: every worker's table of the I/Os it records.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub iolog_bytes: u64,
    /// The trace and its entries (`schedule_bytes`), for the refusal's message.
    #[serde(skip)]
    pub schedule_of: Option<(String, u64)>,
    /// The largest share of one worker.
    pub per_worker_max_bytes: u64,
    /// Memory available when the run was planned (MemAvailable of /proc/meminfo).
    pub available_bytes: Option<u64>,
    /// Measured, not planned: the process's peak resident set at the end of the run
    /// (VmHWM of /proc/self/status; for a job file, of every job so far). What shows that
    /// memory did not grow over a long run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_resident_bytes: Option<u64>,
    /// Measured: the process's anonymous memory on transparent huge pages as the window
    /// opened (AnonHugePages), where the I/O buffers of 1 MiB or more should be
    /// (`buffer.rs`). Two runs that differ here moved their data through different pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_page_bytes: Option<u64>,
    /// The tightest memory cgroup limit over this process when the run was planned, and the
    /// room left under it: less than `available_bytes` inside a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupLimit>,
}

/// A memory cgroup's limit as the result records it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupLimit {
    /// The cgroup, as /proc/self/cgroup names it.
    pub path: String,
    pub max_bytes: u64,
    /// `max_bytes` less what the cgroup's processes used then.
    pub room_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MemoryEstimate {
    /// Adds a replay's schedules: `entries` of `trace`, `per_entry_bytes` each, held by
    /// each of `workers`.
    pub fn add_schedule(&mut self, trace: String, entries: u64, per_entry_bytes: u64, workers: u64) {
        let bytes = entries.saturating_mul(per_entry_bytes);
        self.schedule_bytes = bytes.saturating_mul(workers);
        self.schedule_of = Some((trace, entries));
        self.per_worker_max_bytes = self.per_worker_max_bytes.saturating_add(bytes);
        self.total_bytes = self.total_bytes.saturating_add(self.schedule_bytes);
    }

    /// Adds `--write-iolog`'s tables (all workers', and the largest one's).
    pub fn add_iolog(&mut self, bytes: u64, per_worker_max_bytes: u64) {
        self.iolog_bytes = bytes;
        self.per_worker_max_bytes = self.per_worker_max_bytes.saturating_add(per_worker_max_bytes);
        self.total_bytes = self.total_bytes.saturating_add(bytes);
    }
}

/// One worker's part of the run, as the estimate needs it.
#[derive(Clone, Copy, Debug)]
pub struct WorkerShape {
    /// Blocks of its region.
    pub region_blocks: u64,
    /// Targets it addresses.
    pub files: u64,
    /// Its coverage tracker keeps a bitmap.
    pub bitmap: bool,
    /// It keeps the last sequence written to each block (`--verify` with writes).
    pub tracks_sequences: bool,
}

/// What the estimate is computed from.
#[derive(Clone, Copy, Debug)]
pub struct RunShape {
    pub queue_depth: u32,
    /// Slots (I/O buffers) per worker: the depth, or twice it when drawing ahead
    /// (`worker::slot_count`).
    pub slots_per_worker: u32,
    /// Bytes of each slot's own buffer (`worker::private_slot_bytes`).
    pub slot_bytes: u64,
    /// Unverified `unique` writes: each worker's area (`worker::AreaShape`), else 0.
    pub area_bytes: u64,
    /// Unverified random writes: each worker's pool of random bytes (`data::RandomPool`).
    pub random_pool: bool,
    pub block_size_bytes: u64,
    /// Alignment of the I/O buffers (at least 4096).
    pub buffer_align_bytes: u64,
    /// The buffers go on huge pages (`--buffer-pages huge`): counted in whole ones.
    pub huge_pages: bool,
    pub targets: u64,
    /// `--verify`: its reports kept per worker, else `None`.
    pub verify_max_reports: Option<u32>,
    /// A time series or the live line: each worker's snapshot histograms (see `live`).
    pub interval_snapshots: bool,
    /// `--fsync-every`, `--fdatasync-every`: a flush histogram per file and per worker
    /// (and in each snapshot).
    pub flushing: bool,
}

/// Bytes of one latency histogram (1 ns to 1 h, 3 significant digits).
fn histogram_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let h = crate::io::stats::new_latency_histogram();
        (h.distinct_values() * size_of::<u64>()) as u64 + size_of::<crate::io::stats::OpStats>() as u64
    })
}

/// Bytes of a coverage tracker of `blocks` blocks (as `CoverageTracker::new` allocates).
fn tracker_bytes(blocks: u64, bitmap: bool) -> u64 {
    let bits = 64 - blocks.max(1).saturating_sub(1).leading_zeros();
    let domain = if bits == 64 { u64::MAX } else { 1u64 << bits };
    let samples = domain.min(SAMPLE_SLOTS) * 4;
    let map = if bitmap { blocks.div_ceil(64) * 8 } else { 0 };
    samples + map + size_of::<CoverageTracker>() as u64
}

/// The estimate for a run of `workers` over `shape`.
pub fn estimate(shape: &RunShape, workers: &[WorkerShape]) -> MemoryEstimate {
    let align = shape.buffer_align_bytes.max(4096).next_power_of_two();
    let stride = shape.slot_bytes.div_ceil(align).saturating_mul(align);
    let area = if shape.area_bytes > 0 {
        crate::base::sys::buffer::reserved_bytes(shape.area_bytes as usize, 4096, shape.huge_pages) as u64
    } else {
        0
    };
    let slots = u64::from(shape.slots_per_worker.max(shape.queue_depth).max(1));
    let pool = if shape.random_pool { crate::io::data::RandomPool::BYTES as u64 } else { 0 };
    let hist = histogram_bytes();
    let mut e = MemoryEstimate::default();
    for w in workers {
        let slots_bytes = stride.saturating_mul(slots);
        let buffers = crate::base::sys::buffer::reserved_bytes(slots_bytes as usize, align as usize, shape.huge_pages)
            as u64
            + pool
            + area;
        let queues = SLOT_OVERHEAD_BYTES * slots;
        let snapshots = if shape.interval_snapshots { crate::io::stats::interval::HISTOGRAMS_PER_WORKER } else { 0 };
        let kinds = if shape.flushing { 3 } else { 2 };
        let snapshots = snapshots * kinds / 2;
        let histograms = hist * (kinds * w.files + kinds + snapshots);
        let coverage = 2 * tracker_bytes(w.region_blocks, w.bitmap);
        let verify = match shape.verify_max_reports {
            Some(reports) => {
                let table = if w.tracks_sequences { w.region_blocks.saturating_mul(4) } else { 0 };
                // Scratch block, 9 blocks to time stamping and checking, in-flight table, reports.
                table + 10 * shape.block_size_bytes + 8 * slots + 128 * u64::from(reports)
            }
            None => 0,
        };
        let worker_total = buffers + queues + histograms + coverage + verify;
        e.buffers_bytes = e.buffers_bytes.saturating_add(buffers);
        e.queues_bytes = e.queues_bytes.saturating_add(queues);
        e.histograms_bytes = e.histograms_bytes.saturating_add(histograms);
        e.coverage_bytes = e.coverage_bytes.saturating_add(coverage);
        e.verify_bytes = e.verify_bytes.saturating_add(verify);
        e.per_worker_max_bytes = e.per_worker_max_bytes.max(worker_total);
    }
    // The coordinator's merged histograms: read, write and total, and read and write per target.
    e.histograms_bytes = e.histograms_bytes.saturating_add(hist * (3 + 2 * shape.targets));
    e.total_bytes = e
        .buffers_bytes
        .saturating_add(e.queues_bytes)
        .saturating_add(e.histograms_bytes)
        .saturating_add(e.coverage_bytes)
        .saturating_add(e.verify_bytes);
    e.available_bytes = mem_available_bytes();
    e.cgroup = cgroup_memory().map(|cg| CgroupLimit {
        room_bytes: cg.max_bytes.saturating_sub(cg.current_bytes),
        path: cg.path,
        max_bytes: cg.max_bytes,
    });
    e
}

/// Address space one worker thread reserves for its stack (Rust's default of 2 MiB, and
/// a guard page). Reserved, not used: it counts against `ulimit -v`, not against memory.
const WORKER_STACK_BYTES: u64 = (2 << 20) + 4096;
/// Address space beyond the plan: the coordinator, sampler and watchdog threads, engine
/// rings, libraries mapped later.
const ADDRESS_SPACE_MARGIN_BYTES: u64 = 64 << 20;

/// The limits a run's memory must fit, as read when it is planned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryLimits {
    /// MemAvailable of /proc/meminfo.
    pub available_bytes: Option<u64>,
    /// The tightest cgroup v2 `memory.max` of this process's cgroup and its ancestors.
    pub cgroup: Option<CgroupMemory>,
    /// RLIMIT_AS (`ulimit -v`) and the address space the process maps already.
    pub address_space: Option<AddressSpace>,
}

/// A memory cgroup's limit and what its processes use now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupMemory {
    /// The cgroup, as /proc/self/cgroup names it (e.g. `/user.slice/test`).
    pub path: String,
    /// The file that holds the limit (`memory.max`, or `memory.limit_in_bytes` in v1).
    pub limit_file: &'static str,
    pub max_bytes: u64,
    pub current_bytes: u64,
}

/// The soft RLIMIT_AS and the address space mapped now (VmSize).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressSpace {
    pub limit_bytes: u64,
    pub mapped_bytes: u64,
}

impl MemoryLimits {
    /// Reads the limits of this process now.
    fn of_this_process() -> Self {
        Self { available_bytes: mem_available_bytes(), cgroup: cgroup_memory(), address_space: address_space() }
    }
}

/// The memory the page cache can grow into now, and what sets it: MemAvailable, or the
/// room under this process's memory cgroup limit when that is less (the kernel reclaims a
/// cgroup's cached pages beyond it). `None` when neither can be read.
pub fn page_cache_room() -> Option<(u64, String)> {
    let available = mem_available_bytes().map(|b| (b, "MemAvailable of /proc/meminfo".to_string()));
    let cgroup = cgroup_memory().map(|cg| {
        (
            cg.max_bytes.saturating_sub(cg.current_bytes),
            format!("room under {} of memory cgroup {}", cg.limit_file, cg.path),
        )
    });
    match (available, cgroup) {
        (Some(a), Some(c)) => Some(if c.0 < a.0 { c } else { a }),
        (a, c) => a.or(c),
    }
}

/// Refuses a run whose estimate exceeds the memory available, the room left under its
/// memory cgroup's limit, or (with its thread stacks) the address space `ulimit -v`
/// leaves: a usage error, since nothing has been touched yet. A run over a cgroup limit
/// would be killed by the kernel's OOM killer mid-run, and one over RLIMIT_AS would
/// abort on an allocation, both leaving their new files behind.
pub fn check(e: &MemoryEstimate, threads: u32, queue_depth: u32, block_size_bytes: u64) -> Result<(), UsageError> {
    // MemAvailable as the estimate recorded it (the report shows that figure).
    let limits = MemoryLimits { available_bytes: e.available_bytes, ..MemoryLimits::of_this_process() };
    let buffers = format!("--threads {threads} x --queue-depth {queue_depth} x --block-size {block_size_bytes}");
    check_against(e, &limits, threads, "this run needs", &buffers)
}

/// `check` for runs that share one window (the jobs of a phase, `who`): their estimates
/// added, their workers' stacks too.
pub fn check_together(estimates: &[MemoryEstimate], workers: u32, who: &str) -> Result<(), UsageError> {
    let Some(first) = estimates.first() else { return Ok(()) };
    let mut sum = MemoryEstimate { available_bytes: first.available_bytes, ..MemoryEstimate::default() };
    for e in estimates {
        sum.total_bytes = sum.total_bytes.saturating_add(e.total_bytes);
        sum.buffers_bytes = sum.buffers_bytes.saturating_add(e.buffers_bytes);
        sum.queues_bytes = sum.queues_bytes.saturating_add(e.queues_bytes);
        sum.histograms_bytes = sum.histograms_bytes.saturating_add(e.histograms_bytes);
        sum.coverage_bytes = sum.coverage_bytes.saturating_add(e.coverage_bytes);
        sum.verify_bytes = sum.verify_bytes.saturating_add(e.verify_bytes);
        sum.schedule_bytes = sum.schedule_bytes.saturating_add(e.schedule_bytes);
        sum.iolog_bytes = sum.iolog_bytes.saturating_add(e.iolog_bytes);
        if sum.schedule_of.is_none() {
            sum.schedule_of.clone_from(&e.schedule_of);
        }
        sum.per_worker_max_bytes = sum.per_worker_max_bytes.max(e.per_worker_max_bytes);
    }
    let limits = MemoryLimits { available_bytes: sum.available_bytes, ..MemoryLimits::of_this_process() };
    check_against(&sum, &limits, workers, &format!("{who} need"), "of their workers together")
}

/// `check` against given limits; `needs` says whose memory it is ("this run needs"),
/// `buffers` how the buffers add up.
fn check_against(
    e: &MemoryEstimate,
    limits: &MemoryLimits,
    threads: u32,
    needs: &str,
    buffers: &str,
) -> Result<(), UsageError> {
    let mut parts = vec![format!("I/O buffers {} ({buffers})", units::bytes(e.buffers_bytes))];
    for (what, bytes) in [
        ("latency histograms", e.histograms_bytes),
        ("coverage trackers", e.coverage_bytes),
        ("verification tables", e.verify_bytes),
        ("queues", e.queues_bytes),
        ("--write-iolog tables", e.iolog_bytes),
    ] {
        if bytes > 0 {
            parts.push(format!("{what} {}", units::bytes(bytes)));
        }
    }
    if let Some((trace, entries)) = e.schedule_of.as_ref().filter(|_| e.schedule_bytes > 0) {
        parts.push(format!(
            "the replay's schedule of {trace} {} ({} entries)",
            units::bytes(e.schedule_bytes),
            units::count(*entries)
        ));
    }
    let needs = format!("{needs} about {} of memory ({})", units::bytes(e.total_bytes), parts.join(", "));
    // The fix is for what takes most: a long trace or log is not a matter of the shape.
    let largest = e.buffers_bytes.max(e.histograms_bytes).max(e.coverage_bytes).max(e.verify_bytes).max(e.queues_bytes);
    let fix = match &e.schedule_of {
        Some((trace, _)) if e.schedule_bytes >= largest.max(e.iolog_bytes) => {
            format!("split the trace {trace} into shorter ones and replay them one after the other")
        }
        _ if e.iolog_bytes >= largest => "drop --write-iolog, or record fewer I/Os (--ops, --io-limit)".to_string(),
        _ => "lower --threads, --queue-depth or --block-size".to_string(),
    };
    if let Some(available) = limits.available_bytes
        && e.total_bytes > available
    {
        return Err(UsageError::new(format!("{needs} but only {} is available: {fix}", units::bytes(available))));
    }
    if let Some(cg) = &limits.cgroup {
        let room = cg.max_bytes.saturating_sub(cg.current_bytes);
        if e.total_bytes > room {
            return Err(UsageError::new(format!(
                "{needs} but its memory cgroup {} allows {} ({}) with {} in use already, so the kernel would kill the run: {fix}, or raise {}",
                cg.path,
                units::bytes(cg.max_bytes),
                cg.limit_file,
                units::bytes(cg.current_bytes),
                cg.limit_file
            )));
        }
    }
    if let Some(space) = limits.address_space {
        let stacks = u64::from(threads).saturating_mul(WORKER_STACK_BYTES);
        let wanted = space
            .mapped_bytes
            .saturating_add(e.total_bytes)
            .saturating_add(stacks)
            .saturating_add(ADDRESS_SPACE_MARGIN_BYTES);
        if wanted > space.limit_bytes {
            return Err(UsageError::new(format!(
                "{needs}, and its {threads} worker threads reserve {} of stacks: about {} of address space with what is mapped now, but `ulimit -v` allows {}: {fix}, or raise ulimit -v",
                units::bytes(stacks),
                units::bytes(wanted),
                units::bytes(space.limit_bytes)
            )));
        }
    }
    Ok(())
}

/// The tightest memory cgroup limit over this process's cgroup and its ancestors, v2
/// (`memory.max`, `memory.current`) or v1 (`memory.limit_in_bytes`,
/// `memory.usage_in_bytes`). Page cache counts in a cgroup's usage but the kernel reclaims
/// it before it kills anything, so it is not counted as in use.
fn cgroup_memory() -> Option<CgroupMemory> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut tightest: Option<CgroupMemory> = None;
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let (root, max_file, current_file, cache_key) = match controllers {
            "" => ("/sys/fs/cgroup", "memory.max", "memory.current", "file"),
            c if c.split(',').any(|c| c == "memory") => {
                ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_cache")
            }
            _ => continue,
        };
        let root = std::path::Path::new(root);
        let mut dir = root.join(path.trim_start_matches('/'));
        loop {
            let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
            let number = |name: &str| read(name).and_then(|v| v.trim().parse::<u64>().ok());
            if let (Some(max_bytes), Some(current_bytes)) = (number(max_file), number(current_file)) {
                let cache_bytes = read("memory.stat")
                    .and_then(|stat| {
                        stat.lines()
                            .find_map(|l| l.strip_prefix(cache_key)?.strip_prefix(' ')?.trim().parse::<u64>().ok())
                    })
                    .unwrap_or(0);
                let current_bytes = current_bytes.saturating_sub(cache_bytes);
                let room = max_bytes.saturating_sub(current_bytes);
                if tightest.as_ref().is_none_or(|t| room < t.max_bytes.saturating_sub(t.current_bytes)) {
                    let shown = dir.strip_prefix(root).map(|p| format!("/{}", p.display())).unwrap_or_default();
                    tightest = Some(CgroupMemory { path: shown, limit_file: max_file, max_bytes, current_bytes });
                }
            }
            if dir == root || !dir.pop() || !dir.starts_with(root) {
                break;
            }
        }
    }
    tightest
}

/// RLIMIT_AS when it is set, and VmSize of /proc/self/status.
fn address_space() -> Option<AddressSpace> {
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, _) = getrlimit(Resource::RLIMIT_AS).ok()?;
    if soft == nix::sys::resource::RLIM_INFINITY {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status.lines().find_map(|l| l.strip_prefix("VmSize:"))?.split_whitespace().next()?.parse().ok()?;
    Some(AddressSpace { limit_bytes: soft, mapped_bytes: kib.saturating_mul(1024) })
}

/// MemAvailable of /proc/meminfo, in bytes.
fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(depth: u32, bs: u64) -> RunShape {
        RunShape {
            queue_depth: depth,
            slots_per_worker: depth,
            slot_bytes: bs,
            area_bytes: 0,
            random_pool: false,
            block_size_bytes: bs,
            buffer_align_bytes: 4096,
            huge_pages: true,
            targets: 1,
            verify_max_reports: None,
            interval_snapshots: false,
            flushing: false,
        }
    }

    fn worker(blocks: u64) -> WorkerShape {
        WorkerShape { region_blocks: blocks, files: 1, bitmap: true, tracks_sequences: false }
    }

    #[test]
    fn spare_slots_and_the_random_pool_are_counted() {
        let plain = estimate(&shape(8, 32 << 10), &[worker(1000); 2]);
        let ahead =
            estimate(&RunShape { slots_per_worker: 16, random_pool: true, ..shape(8, 32 << 10) }, &[worker(1000); 2]);
        assert_eq!(plain.buffers_bytes, 2 * 8 * (32 << 10));
        assert_eq!(ahead.buffers_bytes, 2 * (16 * (32 << 10) + crate::io::data::RandomPool::BYTES as u64));
        assert!(ahead.queues_bytes > plain.queues_bytes);
        // `unique` writes: the area (whole huge pages), and slots of a page when unused.
        let area = estimate(&RunShape { slot_bytes: 4096, area_bytes: 3 << 20, ..shape(1, 16 << 20) }, &[worker(64)]);
        assert_eq!(area.buffers_bytes, 4096 + (4 << 20));
    }

    /// A worker's buffers of 1 MiB or more are whole 2 MiB huge pages (`buffer.rs`): the
    /// plan counts what the worker holds.
    #[test]
    fn buffers_on_huge_pages_are_counted_whole() {
        let e = estimate(&shape(8, 128 << 10), &[worker(1000); 2]);
        assert_eq!(e.buffers_bytes, 2 * (2 << 20), "8 x 128 KiB = 1 MiB per worker holds one huge page");
        let e = estimate(&shape(3, 1 << 20), &[worker(1000)]);
        assert_eq!(e.buffers_bytes, 4 << 20, "3 MiB hold two huge pages");
        let e = estimate(&shape(4, 4 << 20), &[worker(1000)]);
        assert_eq!(e.buffers_bytes, 16 << 20, "a multiple of the huge page is exact");
    }

    #[test]
    fn buffers_are_threads_times_depth_times_aligned_block() {
        let e = estimate(&shape(32, 4096), &[worker(1000); 4]);
        assert_eq!(e.buffers_bytes, 4 * 32 * 4096);
        // 512-byte blocks still take a 4 KiB-aligned slot each.
        let e = estimate(&shape(8, 512), &[worker(1000)]);
        assert_eq!(e.buffers_bytes, 8 * 4096);
        assert_eq!(e.total_bytes, e.buffers_bytes + e.queues_bytes + e.histograms_bytes + e.coverage_bytes);
    }

    #[test]
    fn the_tracker_estimate_matches_what_a_tracker_holds() {
        for (blocks, bitmap) in [(1u64, true), (1000, true), (1 << 20, true), (1 << 30, false), (3, false)] {
            let t = CoverageTracker::new(blocks, 7, bitmap);
            assert_eq!(tracker_bytes(blocks, bitmap), t.memory_bytes() + size_of::<CoverageTracker>() as u64);
        }
    }

    #[test]
    fn histograms_are_counted_per_worker_and_target() {
        let one = estimate(&shape(1, 4096), &[worker(10)]);
        let two = estimate(&shape(1, 4096), &[worker(10), worker(10)]);
        assert_eq!(two.histograms_bytes - one.histograms_bytes, 4 * histogram_bytes());
        assert!(histogram_bytes() > 100_000, "1 ns to 1 h at 3 digits is a few hundred KiB");
    }

    #[test]
    fn a_run_larger_than_memory_is_refused_naming_the_flags() {
        let mut e = estimate(&shape(1024, 1 << 30), &[worker(10)]);
        e.available_bytes = Some(1 << 30);
        let err = check(&e, 1, 1024, 1 << 30).unwrap_err();
        assert!(err.message.contains("--queue-depth 1024") && err.message.contains("available"), "{err}");
        assert!(
            check_against(
                &e,
                &MemoryLimits::default(),
                1,
                "this run needs",
                "--threads 1 x --queue-depth 1024 x --block-size 1G"
            )
            .is_ok(),
            "unknown memory: no refusal"
        );
    }

    #[test]
    fn a_replay_s_schedule_and_the_iolog_tables_are_counted_and_the_refusal_names_them() {
        let limits = |available: u64| MemoryLimits { available_bytes: Some(available), ..MemoryLimits::default() };
        let refusal = |e: &MemoryEstimate, available: u64| {
            check_against(e, &limits(available), 1, "this run needs", "buffers").map_err(|e| e.message)
        };
        let base = estimate(&shape(1, 4096), &[worker(10)]);
        let mut e = base.clone();
        e.add_schedule("big.iolog".into(), 2 << 20, 24, 2);
        assert_eq!(e.schedule_bytes, 2 * (48 << 20), "each worker's schedule");
        assert_eq!(e.total_bytes, base.total_bytes + (96 << 20));
        assert_eq!(e.per_worker_max_bytes, base.per_worker_max_bytes + (48 << 20));
        assert!(refusal(&e, base.total_bytes + (96 << 20)).is_ok(), "it fits exactly");
        let err = refusal(&e, base.total_bytes + (95 << 20)).unwrap_err();
        assert!(err.contains("the replay's schedule of big.iolog 96 MiB (2,097,152 entries)"), "{err}");
        assert!(err.contains("split the trace big.iolog"), "{err}");
        let mut e = base.clone();
        e.add_iolog(4 << 20 << 5, 4 << 20 << 5);
        assert_eq!(e.total_bytes, base.total_bytes + (128 << 20));
        let err = refusal(&e, 64 << 20).unwrap_err();
        assert!(err.contains("--write-iolog tables 128 MiB") && err.contains("drop --write-iolog"), "{err}");
        // Small schedules leave the usual fix: the shape takes most.
        let mut e = estimate(&shape(1024, 1 << 20), &[worker(10)]);
        e.add_schedule("small.iolog".into(), 10, 24, 1);
        let err = refusal(&e, 1 << 20).unwrap_err();
        assert!(err.contains("lower --threads, --queue-depth or --block-size"), "{err}");
    }

    #[test]
    fn a_cgroup_limit_and_ulimit_v_are_limits_too() {
        let e = estimate(&shape(128, 1 << 20), &[worker(10), worker(10), worker(10), worker(10)]);
        let cgroup = CgroupMemory {
            path: "/test".into(),
            limit_file: "memory.max",
            max_bytes: 200 << 20,
            current_bytes: 1 << 20,
        };
        let limits = MemoryLimits { cgroup: Some(cgroup), ..Default::default() };
        let err = check_against(&e, &limits, 4, "this run needs", "--threads 4 x --queue-depth 128 x --block-size 1M")
            .unwrap_err();
        assert!(err.message.contains("cgroup /test") && err.message.contains("memory.max"), "{err}");
        let room = MemoryLimits {
            cgroup: Some(CgroupMemory { max_bytes: 1 << 40, ..limits.cgroup.clone().unwrap() }),
            ..Default::default()
        };
        assert!(
            check_against(&e, &room, 4, "this run needs", "--threads 4 x --queue-depth 128 x --block-size 1M").is_ok()
        );
        let small = estimate(&shape(1, 4096), &vec![worker(10); 200]);
        let space = AddressSpace { limit_bytes: 600 << 20, mapped_bytes: 50 << 20 };
        let limits = MemoryLimits { address_space: Some(space), ..Default::default() };
        let err = check_against(
            &small,
            &limits,
            200,
            "this run needs",
            "--threads 200 x --queue-depth 1 x --block-size 4096",
        )
        .unwrap_err();
        assert!(err.message.contains("ulimit -v") && err.message.contains("200 worker threads"), "{err}");
    }
}
