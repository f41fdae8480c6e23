//! Preparing planned targets: create or open them, lay files out to size, and
//! open them for the run with O_DIRECT when asked, falling back loudly (or
//! failing, with --strict-direct) when the filesystem refuses it.
//!
//! Files this run created are removed if preparation or start-up fails. An engine that
//! moves no bytes (null) touches no target at all (`untouched`).

use super::allocation::{self, Allocation};
use super::fsinfo::{self, MountFacts};
use super::layout::{self, LayoutStop};
use super::ownership;
use super::page_cache::{self, PageCache, PageCacheProbe};
use super::plan::{Holes, TargetKind, TargetPlan};
use crate::base::diagnostics::error::{Error, RunError, UsageError};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::base::sys::buffer::SlotBuffers;
use crate::io::access::AccessOrder;
use crate::workload::spec::{CacheMode, FadviseHint, Spec};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;

/// Whether the run got O_DIRECT.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectOutcome {
    pub requested: bool,
    pub effective: bool,
    /// Why O_DIRECT was refused, when it was.
    pub reason: Option<String>,
    /// O_DIRECT was accepted by a filesystem that keeps data in memory (tmpfs):
    /// nothing reaches a storage device.
    #[serde(default)]
    pub memory_backed: bool,
    /// Checked at the end of the run: O_DIRECT was accepted, but the filesystem served
    /// the I/O through the page cache (the region ended up resident in it; ext4's
    /// `data=journal`, btrfs's compressed extents): why, with the residency. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_through_cache: Option<String>,
    /// O_DIRECT bypassed the page cache at a loop device only: the loop device reads its
    /// backing file through the page cache below it (its direct I/O is off). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_below: Option<String>,
    /// The device under the targets is memory (zram, a RAM disk, a loop device over a file
    /// on tmpfs): why. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_device: Option<String>,
}

/// A target ready for the run.
pub struct PreparedTarget {
    pub plan: TargetPlan,
    /// The descriptor the workers use (O_DIRECT when effective).
    pub file: File,
    pub direct: DirectOutcome,
    /// Regular files: the written share of the region when the run started (reads of
    /// holes and unwritten extents never reach the device); `None` for block devices.
    pub allocation: Option<Allocation>,
    pub mount: Option<MountFacts>,
    pub created: bool,
    pub laid_out_bytes: u64,
    /// The region's page-cache residency (measured when the window opens and closes) and
    /// whether its cache was dropped before the window.
    pub page_cache: PageCacheProbe,
}

impl page_cache::Probed for PreparedTarget {
    fn page_cache_file(&self) -> &File {
        &self.file
    }

    fn page_cache_probe(&self) -> &PageCacheProbe {
        &self.page_cache
    }
}

/// Removes the files a run created, unless told to keep them.
#[derive(Default)]
pub struct CreatedFiles {
    paths: Vec<PathBuf>,
}

impl CreatedFiles {
    /// Keeps the files: the run started, they are its targets now.
    pub fn keep(&mut self) {
        self.paths.clear();
    }
}

impl Drop for CreatedFiles {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = fs::remove_file(p);
        }
    }
}

/// Prepares every target. On error, files created here are removed (by the
/// returned guard being dropped) before the error is returned.
pub fn prepare_targets(
    spec: &Spec,
    plans: Vec<TargetPlan>,
    diag: &Diagnostics,
    stop: &AtomicUsize,
) -> Result<(Vec<PreparedTarget>, CreatedFiles), Error> {
    let mut created = CreatedFiles::default();
    let mut prepared = Vec::with_capacity(plans.len());
    if !spec.io.engine.caps().touches_storage {
        for plan in plans {
            prepared.push(untouched(spec, plan)?);
        }
        return Ok((prepared, created));
    }
    for (index, plan) in plans.into_iter().enumerate() {
        let seed = layout_seed(spec, index as u32);
        prepared.push(prepare_one(spec, plan, seed, diag, stop, &mut created)?);
    }
    Ok((prepared, created))
}

/// The seed of the data a target is laid out with: the run's data seed, told apart per
/// target when the data is not verified, so that files laid out together (per-worker files,
/// several targets) do not hold the same bytes, which a deduplicating array would store
/// once. Verified data keeps the run's seed: its headers name it and its checks need it.
fn layout_seed(spec: &Spec, target: u32) -> u64 {
    if spec.data.verify.is_some() {
        spec.data.data_seed
    } else {
        crate::io::data::unique::target_seed(spec.data.data_seed, target)
    }
}

/// A target of an engine that moves no bytes (`EngineCaps::touches_storage` false: null):
/// planned (its size and blocks, from --file-size or the size it has), never touched.
/// Nothing is created, laid out, measured or opened; the workers are given a descriptor
/// of /dev/null, which such an engine never uses.
fn untouched(spec: &Spec, plan: TargetPlan) -> Result<PreparedTarget, Error> {
    const STAND_IN: &str = "/dev/null";
    let file = OpenOptions::new().read(true).write(spec.writes()).open(STAND_IN).map_err(|e| {
        RunError::Other(format!(
            "open {STAND_IN} (the descriptor engine {}'s workers are given in place of TARGET {}): {e}",
            spec.io.engine.name(),
            plan.path.display()
        ))
    })?;
    let direct = DirectOutcome {
        requested: spec.io.direct,
        effective: false,
        reason: spec
            .io
            .direct
            .then(|| format!("engine {} moves no bytes: no target was opened with O_DIRECT", spec.io.engine.name())),
        memory_backed: false,
        ..DirectOutcome::default()
    };
    Ok(PreparedTarget {
        plan,
        file,
        direct,
        allocation: None,
        mount: None,
        created: false,
        laid_out_bytes: 0,
        page_cache: PageCacheProbe::untouched(),
    })
}

fn prepare_one(
    spec: &Spec,
    plan: TargetPlan,
    seed: u64,
    diag: &Diagnostics,
    stop: &AtomicUsize,
    created: &mut CreatedFiles,
) -> Result<PreparedTarget, Error> {
    let path = plan.path.clone();
    let needs_layout = plan.kind == TargetKind::File && plan.existing_size_bytes < plan.size_bytes;
    let mut laid_out_bytes = 0;
    let mut was_created = false;
    if needs_layout {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| RunError::Target { op: "create", path: path.clone(), source })?;
        if !plan.exists {
            was_created = true;
            created.paths.push(path.clone());
        }
        laid_out_bytes = match layout::extend(
            &file,
            &path,
            plan.existing_size_bytes,
            plan.size_bytes,
            layout::LayoutContent {
                block_size_bytes: spec.shape.block_size_bytes,
                seed,
                pattern: spec.data.verify.map_or(spec.data.write_pattern, |v| v.pattern),
                verify: spec.data.verify.is_some(),
                reduction: crate::io::data::Reduction::new(spec.data.reducibility),
                period_bytes: crate::io::data::unique::period_bytes(spec.largest_block_bytes()),
                keep_cached: spec.io.cache == crate::workload::spec::CacheMode::Keep && !spec.io.direct,
            },
            diag.show_progress(),
            stop,
        ) {
            Ok(n) => {
                // Ours now: a later run may lay it out further without --force.
                if was_created || ownership::laid_out_by_iopulse(&path) || plan.existing_size_bytes == 0 {
                    ownership::mark_laid_out(&file);
                }
                n
            }
            Err(LayoutStop::Failed(e)) if was_created => {
                return Err(
                    RunError::Other(format!("{e}; the file was created by this run and has been removed")).into()
                );
            }
            Err(LayoutStop::Failed(e)) => return Err(e.into()),
            Err(LayoutStop::Interrupted { laid_out_bytes }) => {
                let fate = if was_created {
                    "it was created by this run and has been removed".to_string()
                } else {
                    format!("{laid_out_bytes} bytes were appended to it")
                };
                return Err(RunError::Other(format!("interrupted while laying out {}: {fate}", path.display())).into());
            }
        };
    }
    let allocation = if plan.kind == TargetKind::File {
        let (allocation, filled_bytes) = settle_holes(spec, &plan, seed, diag, stop)?;
        laid_out_bytes += filled_bytes;
        Some(allocation)
    } else {
        None
    };
    let meta = fs::metadata(&path).map_err(|source| RunError::Target { op: "stat", path: path.clone(), source })?;
    let dev = if plan.kind == TargetKind::BlockDevice { meta.rdev() } else { meta.dev() };
    // A btrfs file carries its subvolume's device number, not the mount's: by path then.
    let mount = if plan.kind == TargetKind::File {
        fsinfo::mount_of_dev(dev).or_else(|| fs::canonicalize(&plan.path).ok().and_then(|p| fsinfo::mount_of_path(&p)))
    } else {
        None
    };

    let (file, mut direct) = open_for_run(spec, &plan)?;
    if let Some(reason) = &direct.reason {
        diag.warn_verbatim(
            format!("⚠ O_DIRECT FAILED ({reason}) → falling back to BUFFERED I/O"),
            format!("O_DIRECT refused on {}: {reason}; the run used buffered I/O", path.display()),
        );
    }
    if direct.effective && mount.as_ref().is_some_and(MountFacts::is_memory_backed) {
        direct.memory_backed = true;
        let fs_type = mount.as_ref().map(|m| m.fs_type.as_str()).unwrap_or("memory");
        diag.warn(format!(
            "{} is on {fs_type}, which accepts O_DIRECT but serves it from memory: the figures measure memory, not a storage device",
            path.display()
        ));
    }
    let memory_backed = mount.as_ref().is_some_and(MountFacts::is_memory_backed);
    let page_cache = settle_page_cache(spec, &plan, &file, &direct, memory_backed, diag, stop)?;
    // `--fadvise-hint` (fio's fadvise_hint): after the cache was settled, as the run opens.
    if spec.io.fadvise_hint == FadviseHint::On
        && !direct.effective
        && let Err(why) = page_cache::advise_order(&file, spec.access.order == AccessOrder::Random)
    {
        diag.note(format!("{}: {why}; the kernel reads ahead as it sees fit", path.display()));
    }
    Ok(PreparedTarget { plan, file, direct, allocation, mount, created: was_created, laid_out_bytes, page_cache })
}

/// Puts the region's page cache in the state `--cache` asks for: drops its cached pages
/// (`drop`, unless the file lives in memory) and measures what the drop left, reads it all
/// into the cache (`warm`) and measures what stayed, or leaves it (`keep`). Warns when a
/// drop left pages, a warmed region does not fit, or a kept one makes buffered reads
/// measure memory. Interrupted while warming: an error, as an interrupted layout.
fn settle_page_cache(
    spec: &Spec,
    plan: &TargetPlan,
    file: &File,
    direct: &DirectOutcome,
    memory_backed: bool,
    diag: &Diagnostics,
    stop: &AtomicUsize,
) -> Result<PageCacheProbe, Error> {
    let region_bytes = plan.blocks.saturating_mul(spec.shape.block_size_bytes);
    let mut facts =
        PageCache { mode: Some(spec.io.cache), region_bytes, direct: direct.effective, ..PageCache::default() };
    let situation = page_cache::Situation { mode: spec.io.cache, memory_backed };
    let path = plan.path.display();
    if spec.io.cache == CacheMode::Warm {
        facts.not_invalidated = Some("--cache warm".to_string());
        warm_region(file, plan, region_bytes, &mut facts, diag, stop)?;
        return Ok(PageCacheProbe::new(facts));
    }
    match page_cache::should_invalidate(situation) {
        Ok(()) => match page_cache::invalidate(file, region_bytes) {
            Ok(()) => {
                facts.invalidated = true;
                match page_cache::measure(file, region_bytes) {
                    Ok(r) => {
                        facts.method = Some(r.method.name().to_string());
                        facts.after_invalidate_resident_fraction = Some(r.fraction);
                        if r.fraction > page_cache::DROP_LEFT_FRACTION && !direct.effective {
                            diag.warn(format!(
                                "dropping the page cache of {path} left {} of its region resident (dirty pages, or pages another process maps): buffered reads of them never reach the device",
                                page_cache::percent(r.fraction)
                            ));
                        }
                    }
                    Err(why) => facts.unknown_reason = Some(why),
                }
            }
            Err(why) => {
                diag.warn(format!("could not drop the page cache of {path} before the run: {why}"));
                facts.not_invalidated = Some(why);
            }
        },
        Err(why) => {
            facts.not_invalidated = Some(why.to_string());
            if !direct.effective
                && spec.access.read_percent > 0
                && !memory_backed
                && let Ok(r) = page_cache::measure(file, region_bytes)
                && r.fraction >= page_cache::WARM_FRACTION
            {
                diag.warn(format!(
                    "{} of the region of {path} is in the page cache and {why} keeps it there: buffered reads of it measure memory, not the device",
                    page_cache::percent(r.fraction)
                ));
            }
        }
    }
    Ok(PageCacheProbe::new(facts))
}

/// `--cache warm`: reads the region through the page cache (with progress for a large
/// one), then measures how much of it is resident. Warns, before and after, when it cannot
/// all stay: larger than the memory free for the cache, or less than 90 % resident.
fn warm_region(
    file: &File,
    plan: &TargetPlan,
    region_bytes: u64,
    facts: &mut PageCache,
    diag: &Diagnostics,
    stop: &AtomicUsize,
) -> Result<(), Error> {
    let path = plan.path.display();
    let too_big = page_cache::does_not_fit(region_bytes, crate::io::host::memory::page_cache_room());
    if let Some(why) = &too_big {
        diag.warn(format!(
            "--cache warm: {path} cannot stay whole in the page cache: {why}; reads of the pages evicted while warming reach the device"
        ));
    }
    let bar = warm_progress(diag.show_progress(), region_bytes, &path.to_string());
    let read = page_cache::warm(file, region_bytes, stop, |n| bar.set_position(n));
    bar.finish_and_clear();
    let read_bytes = match read {
        Ok(n) => n,
        Err(e) => {
            return Err(RunError::Other(format!("--cache warm: reading {path} into the page cache: {e}")).into());
        }
    };
    if stop.load(std::sync::atomic::Ordering::Relaxed) != 0 {
        return Err(RunError::Other(format!(
            "interrupted while reading {path} into the page cache (--cache warm): {read_bytes} of {region_bytes} bytes read"
        ))
        .into());
    }
    let measured = page_cache::measure(file, region_bytes);
    let resident = match &measured {
        Ok(r) => {
            facts.method = Some(r.method.name().to_string());
            facts.after_warm_resident_fraction = Some(r.fraction);
            Some(r.fraction)
        }
        Err(why) => {
            facts.unknown_reason = Some(why.clone());
            None
        }
    };
    let short = resident
        .filter(|f| *f < page_cache::WARM_FULL_FRACTION)
        .map(|f| format!("only {} of the region stayed resident after warming", page_cache::percent(f)));
    if let Some(s) = &short {
        diag.warn(format!(
            "--cache warm: {s} {path}: the page cache cannot hold it all, so part of the run's reads reach the device"
        ));
    }
    facts.warm_shortfall = match (short, too_big) {
        (Some(s), Some(t)) => Some(format!("{s}: {t}")),
        (Some(s), None) => Some(s),
        (None, Some(t)) => Some(t),
        (None, None) => None,
    };
    Ok(())
}

/// A progress bar on stderr while a large region is read into the page cache.
fn warm_progress(show_progress: bool, total: u64, what: &str) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if show_progress && total >= WARM_PROGRESS_FROM_BYTES {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "reading {msg} into the page cache {bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(what.to_string());
        bar
    } else {
        ProgressBar::hidden()
    }
}

/// Regions at least this large show progress while warmed (as layout does).
const WARM_PROGRESS_FROM_BYTES: u64 = 64 << 20;

/// Measures how much of a regular file's region holds written data, lays out its holes
/// and unwritten extents when the plan says so (`Holes::LayOut`: a run that reads, on a
/// file that is iopulse's or with --force), and warns when the run reads any that remain.
/// Returns the allocation when the run starts and the bytes laid out here.
fn settle_holes(
    spec: &Spec,
    plan: &TargetPlan,
    seed: u64,
    diag: &Diagnostics,
    stop: &AtomicUsize,
) -> Result<(Allocation, u64), Error> {
    let path = &plan.path;
    let region_bytes = plan.blocks.saturating_mul(spec.shape.block_size_bytes);
    let reader = File::open(path).map_err(|source| RunError::Target { op: "open", path: path.clone(), source })?;
    let mut measured = allocation::measure(&reader, region_bytes, true);
    let mut filled_bytes = 0;
    if matches!(plan.holes, Holes::LayOut { .. }) && !measured.unallocated.is_empty() {
        let writer = OpenOptions::new().write(true).open(path).map_err(|source| RunError::Target {
            op: "open for layout",
            path: path.clone(),
            source,
        })?;
        let content = layout::LayoutContent {
            block_size_bytes: spec.shape.block_size_bytes,
            seed,
            pattern: spec.data.write_pattern,
            verify: false,
            reduction: crate::io::data::Reduction::NONE,
            period_bytes: crate::io::data::unique::period_bytes(spec.largest_block_bytes()),
            keep_cached: spec.io.cache == crate::workload::spec::CacheMode::Keep && !spec.io.direct,
        };
        filled_bytes = match layout::fill_ranges(
            &writer,
            path,
            &measured.unallocated,
            content,
            diag.show_progress(),
            stop,
        ) {
            Ok(n) => n,
            Err(LayoutStop::Failed(e)) => return Err(e.into()),
            Err(LayoutStop::Interrupted { laid_out_bytes }) => {
                return Err(RunError::Other(format!(
                    "interrupted while laying out the holes and unwritten extents of {}: {laid_out_bytes} bytes were written into them",
                    path.display()
                ))
                .into());
            }
        };
        measured = allocation::measure(&reader, region_bytes, true);
        diag.note(format!(
            "laid out {} of holes and unwritten extents in {} before the run: reads of them would never reach the device",
            crate::base::units::display::bytes(filled_bytes),
            path.display()
        ));
    }
    let mut a = measured.allocation;
    a.filled_bytes = filled_bytes;
    if spec.access.read_percent > 0 && a.unallocated_bytes() > 0 {
        let why = match &plan.holes {
            Holes::Leave { why } => why.clone(),
            _ => format!(
                "laying them out left them unallocated (the filesystem or the device drops the data written there, e.g. --write-pattern {}): give a target that keeps written data",
                spec.data.write_pattern.name()
            ),
        };
        let at_least = if a.allocated_bytes.is_none() { "at least " } else { "" };
        diag.warn(format!(
            "{at_least}{} of the read region of {} ({} of {}) is holes or unwritten extents: reads of them never reach the device, so the figures overstate it; {why}",
            a.unallocated_percent(),
            path.display(),
            crate::base::units::display::bytes(a.unallocated_bytes()),
            crate::base::units::display::bytes(a.region_bytes),
        ));
        a.not_laid_out = Some(why);
    }
    Ok((a, filled_bytes))
}

/// Opens the target for the run: read-only unless the run writes, with
/// O_DIRECT when asked and the filesystem accepts it (tested with a real read).
fn open_for_run(spec: &Spec, plan: &TargetPlan) -> Result<(File, DirectOutcome), Error> {
    let path = &plan.path;
    // A block device written to is opened exclusively: the kernel then refuses one
    // that is mounted or claimed by another device or program (EBUSY).
    let exclusive = plan.kind == TargetKind::BlockDevice && spec.writes();
    let open = |direct: bool| {
        let mut options = OpenOptions::new();
        options.read(true).write(spec.writes());
        let mut flags = if direct { libc::O_DIRECT } else { 0 };
        if exclusive {
            flags |= libc::O_EXCL;
        }
        // `--sync-writes`: every write returns once durable (O_DSYNC / O_SYNC).
        if let Some(sync) = spec.durability.sync_writes {
            flags |= sync.open_flag();
        }
        options.custom_flags(flags);
        options.open(path).map_err(|e| {
            if exclusive && e.raw_os_error() == Some(libc::EBUSY) {
                Error::Usage(UsageError::new(format!(
                    "TARGET {} is in use: the kernel refused to open it exclusively (EBUSY: mounted, used as swap, held by another device, or opened exclusively by another program); writing to it is refused even with --force",
                    path.display()
                )))
            } else {
                Error::Run(RunError::Target { op: if direct { "open (O_DIRECT)" } else { "open" }, path: path.clone(), source: e })
            }
        })
    };
    if !spec.io.direct {
        let file = open(false)?;
        return Ok((file, DirectOutcome::default()));
    }
    let refusal = match open(true) {
        Ok(file) => match probe_direct_read(&file, plan) {
            Ok(()) => {
                return Ok((file, DirectOutcome { requested: true, effective: true, ..DirectOutcome::default() }));
            }
            Err(reason) => reason,
        },
        Err(Error::Run(RunError::Target { source: e, .. }))
            if e.raw_os_error() == Some(libc::EINVAL) || e.raw_os_error() == Some(libc::EOPNOTSUPP) =>
        {
            format!("open with O_DIRECT: {e}")
        }
        Err(e) => return Err(e),
    };
    if spec.io.strict_direct {
        return Err(RunError::StrictDirect { path: path.clone(), reason: refusal }.into());
    }
    let file = open(false)?;
    Ok((file, DirectOutcome { requested: true, effective: false, reason: Some(refusal), ..DirectOutcome::default() }))
}

/// Some filesystems accept the O_DIRECT open but refuse the I/O: read one
/// aligned block to find out before the run starts.
fn probe_direct_read(file: &File, plan: &TargetPlan) -> Result<(), String> {
    let len = plan.dio_align_bytes.max(512) as usize;
    let mut buf = SlotBuffers::new(1, len, len).map_err(|e| format!("probe buffer: {e}"))?;
    match file.read_at(buf.slot_mut(0), 0) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("O_DIRECT read: {e}")),
    }
}
