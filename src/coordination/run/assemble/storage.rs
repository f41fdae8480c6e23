//! The storage's side of a run's result: each target as it was, O_DIRECT as asked and as
//! the device's counters showed it, the device witness, holes read and the data written.

use crate::base::diagnostics::warnings::Diagnostics;
use crate::figures::result::{TargetInfo, TargetStorage};
use crate::io::stats::OpStats;
use crate::storage::targets::device_witness::{self, Devices};
use crate::storage::targets::{DeviceWitness, DirectOutcome, PreparedTarget};
use crate::workload::spec::Spec;

/// A run that reads a block device and does not write it: ranges never written or trimmed
/// may be answered without reaching the media (zram's empty slots, a thin pool's
/// unallocated blocks, an SSD's trimmed blocks), so the run warns and names the fix.
pub(super) fn warn_unwritten_device_ranges(spec: &Spec, targets: &[PreparedTarget], diag: &Diagnostics) {
    if !spec.reads() || spec.writes() || !spec.io.engine.caps().touches_storage {
        return;
    }
    for t in targets.iter().filter(|t| t.plan.kind == crate::storage::targets::TargetKind::BlockDevice) {
        let dev = t.plan.path.display();
        diag.warn(format!(
            "{dev} is read but this run does not write it: ranges never written or trimmed may be answered without reaching the media (zram's empty slots, thin provisioning, an SSD's trimmed blocks); precondition it by writing it first (`iopulse {dev} --write-percent 100 --force --duration 0` writes every block once)"
        ));
    }
}

/// Growth of an O_DIRECT run's region in the page cache over the window (a share of the
/// region) from which the filesystem is said to have served it through the cache.
const DIRECT_CACHED_GROWTH: f64 = 0.05;

/// The I/O mode checked against the end of the run: an O_DIRECT run whose region ended up
/// resident in the page cache was served through it by the filesystem (ext4's
/// `data=journal`, btrfs's compressed extents), whatever the probe at the start said; a
/// loop device with direct I/O off caches below the O_DIRECT it accepts; memory devices
/// are named. Each is warned about.
fn checked_at_the_end(
    mut direct: DirectOutcome,
    targets: &[PreparedTarget],
    witnesses: &[Option<DeviceWitness>],
    diag: &Diagnostics,
) -> DirectOutcome {
    use crate::storage::targets::page_cache::percent;
    direct.memory_device = witnesses.iter().flatten().find_map(|w| w.caveats.memory.clone());
    if !direct.effective {
        return direct;
    }
    direct.cached_below = witnesses.iter().flatten().find_map(|w| w.caveats.cached_below.clone());
    for t in targets {
        let Some(cache) = t.page_cache.facts() else { continue };
        let (start, end) = (cache.start_resident_fraction.unwrap_or(0.0), cache.end_resident_fraction);
        let mount = t.mount.as_ref();
        let fs = mount.map_or("the filesystem", |m| m.fs_type.as_str());
        let journal = mount.is_some_and(|m| m.fs_type.starts_with("ext") && m.option("data") == Some("journal"));
        let grew = end.is_some_and(|e| e - start >= DIRECT_CACHED_GROWTH);
        if !journal && !grew {
            continue;
        }
        let why = if journal {
            format!("{fs} is mounted data=journal, which turns O_DIRECT into buffered I/O")
        } else if mount.is_some_and(|m| m.fs_type == "btrfs" && m.super_options.contains("compress")) {
            "btrfs reads and writes compressed extents through the page cache".to_string()
        } else {
            format!("{fs} kept the data it read and wrote in the page cache")
        };
        let why = format!(
            "{why}: {} of the region of {} was resident at the end of the run ({} at the start)",
            end.map_or_else(|| "unknown".to_string(), percent),
            t.plan.path.display(),
            percent(start)
        );
        diag.warn(format!("O_DIRECT was accepted, but {why}; these figures are memory speed, not the device's"));
        direct.served_through_cache = Some(why);
        break;
    }
    direct
}

/// Each target's device witness, from the counters at the window's edges and what the run
/// did on each target; a share far from what the I/O mode promises is warned about once
/// per device.
pub(super) fn device_witnesses(
    spec: &Spec,
    devices: &Devices,
    (start, end): &(device_witness::Snapshot, device_witness::Snapshot),
    targets: &[PreparedTarget],
    per_target: &[(OpStats, OpStats)],
    diag: &Diagnostics,
) -> Vec<Option<DeviceWitness>> {
    let io: Vec<device_witness::TargetIo> = targets
        .iter()
        .zip(per_target)
        .map(|(t, (r, w))| device_witness::TargetIo {
            io: device_witness::IoCounts {
                read_ios: r.ops,
                read_bytes: r.bytes,
                write_ios: w.ops,
                write_bytes: w.bytes,
            },
            direct: t.direct.effective,
            cache_dropped: t.page_cache.facts().is_some_and(|c| c.invalidated),
            direct_possible: spec.io.engine.caps().supports_direct,
        })
        .collect();
    let witnesses = devices.witnesses(start, end, &io);
    let mut warned: Vec<&str> = Vec::new();
    for w in witnesses.iter().flatten() {
        if !warned.contains(&w.device.as_str()) {
            for warning in &w.caveats.warnings {
                diag.warn(warning.clone());
            }
            warned.push(&w.device);
        }
    }
    witnesses
}

/// The mark on every figure of a run that read holes or unwritten extents it did not lay
/// out (`--keep-holes`, `--verify`, a file it may not write): how much, and why.
pub(super) fn holes_read(spec: &Spec, targets: &[PreparedTarget]) -> Option<String> {
    if !spec.reads() {
        return None;
    }
    let kept: Vec<&crate::storage::targets::Allocation> =
        targets.iter().filter_map(|t| t.allocation.as_ref()).filter(|a| a.not_laid_out.is_some()).collect();
    let first = kept.first()?;
    let hole_bytes: u64 = kept.iter().map(|a| a.unallocated_bytes()).sum();
    let region_bytes: u64 = kept.iter().map(|a| a.region_bytes).sum();
    let at_least = if kept.iter().any(|a| a.allocated_bytes.is_none()) { "at least " } else { "" };
    let how = if spec.io.keep_holes { "--keep-holes" } else { "not laid out" };
    Some(format!(
        "{how}: the figures include reads of {at_least}{} of holes and unwritten extents (of a {} read region), which never reach the device; {}",
        crate::base::units::display::bytes(hole_bytes),
        crate::base::units::display::bytes(region_bytes),
        first.not_laid_out.as_deref().unwrap_or_default()
    ))
}

/// What the run wrote and laid out (`None` if nothing).
pub(super) fn write_data_info(
    spec: &Spec,
    targets: &[PreparedTarget],
) -> Option<crate::figures::result::WriteDataInfo> {
    if !spec.writes() && targets.iter().all(|t| t.laid_out_bytes == 0) {
        return None;
    }
    let pattern = spec.data.verify.map_or(spec.data.write_pattern, |v| v.pattern);
    Some(crate::figures::result::WriteDataInfo {
        pattern,
        verified: spec.data.verify.is_some(),
        reducibility: pattern.reducibility(!spec.data.reducibility.is_none()),
        period_bytes: (pattern == crate::io::data::Pattern::Unique)
            .then(|| crate::io::data::unique::period_bytes(spec.largest_block_bytes())),
    })
}

/// One target as the result describes it: what it is, what was done to it, its reads and
/// writes, and its device's own counters.
pub(super) fn target_info(
    t: &PreparedTarget,
    removed_after_run: bool,
    (read, write): &(OpStats, OpStats),
    device_witness: Option<DeviceWitness>,
    window_ns: u64,
) -> TargetInfo {
    TargetInfo {
        path: t.plan.path.display().to_string(),
        kind: t.plan.kind,
        size_bytes: t.plan.size_bytes,
        blocks: t.plan.blocks,
        storage: TargetStorage {
            filesystem: t.mount.as_ref().map(|m| m.fs_type.clone()),
            device: t.mount.as_ref().map(|m| m.source.clone()),
            mount_point: t.mount.as_ref().map(|m| m.mount_point.clone()),
            allocation: t.allocation.clone(),
            page_cache: t.page_cache.facts(),
            device_witness,
        },
        created: t.created,
        laid_out_bytes: t.laid_out_bytes,
        direct: t.direct.clone(),
        removed_after_run,
        read: read.summarize(window_ns),
        write: write.summarize(window_ns),
    }
}

/// O_DIRECT as asked, as the targets had it, and as the device's counters showed it.
pub(super) fn direct_outcome(
    spec: &Spec,
    targets: &[PreparedTarget],
    witnesses: &[Option<DeviceWitness>],
    diag: &Diagnostics,
) -> DirectOutcome {
    let direct = DirectOutcome {
        requested: spec.io.direct,
        effective: spec.io.direct && targets.iter().all(|t| t.direct.effective),
        reason: targets.iter().find_map(|t| t.direct.reason.clone()),
        memory_backed: targets.iter().any(|t| t.direct.memory_backed),
        ..DirectOutcome::default()
    };
    checked_at_the_end(direct, targets, witnesses, diag)
}
