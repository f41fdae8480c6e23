//! The device as witness: what the block devices under the targets counted over the
//! window, next to what iopulse itself read and wrote.
//!
//! Before the window, the block device under each target is found once (`Devices::find`: the
//! filesystem's device for a file, the device itself for a block-device target, and the
//! devices stacked below a dm or md device, from `sysfs`). Its counters (`/sys/.../stat`)
//! are read right before the start line's release and right after the stop (`snapshot`),
//! outside the window. The deltas, and the share of iopulse's own reads and writes the
//! device saw, are each target's `device_witness` (`witnesses`). Targets on one device share
//! one set of counters: the share is taken against all their I/O together.
//!
//! The device counts everything that reaches it, other processes' traffic, metadata and
//! journal writes, readahead and writeback included: the share is a witness, not an exact
//! account (docs/device-witness.md). Where it is far from what the I/O mode promises
//! (O_DIRECT I/O the device did not see, buffered reads served from the page cache) the
//! witness carries a warning. A target with no block device under it (tmpfs, an engine that
//! moves no bytes) has no witness. This module never formats a report and never runs in the
//! window.

pub mod layers;
pub mod sysfs;
pub mod throttle;

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use sysfs::{DeviceNode, DiskCounters, SECTOR_BYTES};

/// A share of iopulse's bytes below this, where the I/O mode says they reach the device,
/// is a warning.
pub const SEEN_FRACTION_WARN: f64 = 0.5;

/// A device that counted more than this many times iopulse's bytes was mostly doing
/// something else: its share is not shown as a percentage but as other traffic.
pub const OTHER_TRAFFIC_FACTOR: f64 = 5.0;

/// What one device counted over the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceDelta {
    /// Reads completed by the device (after merging).
    pub read_ios: u64,
    /// Reads merged into others before they reached the driver.
    pub read_merges: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_bytes: u64,
    /// Milliseconds the device spent on reads and on writes (summed over I/Os in flight),
    /// busy with any I/O, and the weighted time in queue: what fio's `disk_util` reports.
    /// Absent in results of older versions.
    #[serde(default)]
    pub read_ticks_ms: u64,
    #[serde(default)]
    pub write_ticks_ms: u64,
    #[serde(default)]
    pub io_ticks_ms: u64,
    #[serde(default)]
    pub in_queue_ms: u64,
}

/// A device stacked under the target's device (below a dm or md device).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackedDevice {
    /// Kernel name (`loop3`, `sda2`).
    pub name: String,
    /// The device it sits under.
    pub below: String,
    /// Its counters over the window; null when unknown.
    pub delta: Option<DeviceDelta>,
    pub unknown_reason: Option<String>,
}

/// What iopulse itself completed on the targets of one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounts {
    pub read_ios: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_bytes: u64,
}

/// One target's device witness (`targets[].device_witness`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceWitness {
    /// Kernel name of the block device under the target (a partition's own name).
    pub device: String,
    /// Its counters over the window; null when unknown (never guessed).
    pub delta: Option<DeviceDelta>,
    /// Why the counters are unknown, when they are.
    pub unknown_reason: Option<String>,
    /// The devices stacked below it, each with its own counters.
    pub stacked: Vec<StackedDevice>,
    /// Targets of this run on the device (this one included): the shares are taken against
    /// their I/O together.
    pub targets_on_device: u32,
    /// iopulse's own completed I/O on those targets.
    pub iopulse: IoCounts,
    #[serde(flatten)]
    pub shares: WitnessShares,
    #[serde(flatten)]
    pub caveats: WitnessCaveats,
}

/// What a target's run was, as far as the witness goes.
#[derive(Clone, Copy, Debug, Default)]
pub struct TargetIo {
    pub io: IoCounts,
    /// The target was opened with O_DIRECT.
    pub direct: bool,
    /// Its page cache was dropped before the window (a buffered run said to be cold).
    pub cache_dropped: bool,
    /// The engine can open it with O_DIRECT (`--direct` is a fix to name).
    pub direct_possible: bool,
}

/// The devices under the run's targets, found before the window.
#[derive(Debug, Default)]
pub struct Devices {
    /// One entry per distinct device: the device first, then those stacked below it.
    groups: Vec<Vec<DeviceNode>>,
    /// Per group, how it was found when the file's device number is anonymous.
    via: Vec<Option<String>>,
    /// Per target, its entry in `groups` (none: no block device under it).
    target_group: Vec<Option<usize>>,
}

/// The counters of every device of every group at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    counters: Vec<Vec<Result<DiskCounters, String>>>,
}

/// The device number whose counters witness I/O through `file`: a block device's own, a
/// regular file's filesystem's; none for anything else (the null engine's /dev/null).
pub fn device_number(file: &File) -> Option<(u32, u32)> {
    let meta = file.metadata().ok()?;
    let number = if meta.file_type().is_block_device() {
        meta.rdev()
    } else if meta.file_type().is_file() {
        meta.dev()
    } else {
        return None;
    };
    Some((libc::major(number), libc::minor(number)))
}

impl Devices {
    /// No device for any target: nothing is read at the window's edges.
    pub fn none() -> Self {
        Self::default()
    }

    /// The devices under targets whose descriptors are `files`, from /sys: through btrfs
    /// and overlayfs where a file's device number is anonymous.
    pub fn find<'a>(files: impl IntoIterator<Item = &'a File>) -> Self {
        let sys = Path::new("/sys");
        let files: Vec<&File> = files.into_iter().collect();
        let numbers: Vec<_> = files.iter().map(|f| device_number(f)).collect();
        let mut devices = Self::find_in(sys, &numbers);
        for (t, file) in files.iter().enumerate() {
            if devices.target_group[t].is_some() || numbers[t].is_none() {
                continue;
            }
            let Ok(meta) = file.metadata() else { continue };
            if let Some((nodes, via)) = layers::devices_of_anonymous(sys, file, meta.dev()) {
                let via = (!via.is_empty()).then_some(via);
                devices.target_group[t] = Some(devices.group_of(nodes, via));
            }
        }
        devices
    }

    /// The group of the device `nodes[0]`, added when new.
    fn group_of(&mut self, nodes: Vec<DeviceNode>, via: Option<String>) -> usize {
        match self.groups.iter().position(|g| g[0].dir == nodes[0].dir) {
            Some(i) => i,
            None => {
                self.groups.push(nodes);
                self.via.push(via);
                self.groups.len() - 1
            }
        }
    }

    /// The devices under targets of device numbers `numbers`, from the sysfs at `sys`.
    pub fn find_in(sys: &Path, numbers: &[Option<(u32, u32)>]) -> Self {
        let mut devices = Self::default();
        for number in numbers {
            let nodes = number.map(|(major, minor)| sysfs::devices_under(sys, major, minor)).unwrap_or_default();
            let group = (!nodes.is_empty()).then(|| devices.group_of(nodes, None));
            devices.target_group.push(group);
        }
        devices
    }

    /// The loop devices among the devices under the targets (stacked ones included), by
    /// kernel name: the kernel's loop workers do their I/O on this machine's CPUs.
    pub fn loop_devices(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .groups
            .iter()
            .flatten()
            .filter(|node| super::loop_backing::is_attached_loop(&node.name, &node.dir))
            .map(|node| node.name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Reads every device's counters (right before the release, right after the stop).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            counters: self.groups.iter().map(|g| g.iter().map(|d| sysfs::read_counters(&d.dir)).collect()).collect(),
        }
    }

    /// Each target's witness, from the counters at the window's `start` and `end` and what
    /// each target's run did (`targets`, in target order).
    pub fn witnesses(&self, start: &Snapshot, end: &Snapshot, targets: &[TargetIo]) -> Vec<Option<DeviceWitness>> {
        let group_witness: Vec<DeviceWitness> = self
            .groups
            .iter()
            .enumerate()
            .map(|(g, nodes)| {
                let on_device: Vec<&TargetIo> = targets
                    .iter()
                    .zip(&self.target_group)
                    .filter(|(_, group)| **group == Some(g))
                    .map(|(t, _)| t)
                    .collect();
                let deltas: Vec<Result<DeviceDelta, String>> =
                    (0..nodes.len()).map(|n| delta(counters(start, g, n), counters(end, g, n))).collect();
                let mut w = witness(nodes, &deltas, &on_device);
                w.caveats.via = self.via.get(g).cloned().flatten();
                w
            })
            .collect();
        (0..targets.len())
            .map(|t| self.target_group.get(t).copied().flatten().map(|g| group_witness[g].clone()))
            .collect()
    }
}

/// The devices' own counters read again and again while the run goes (a live view's): the
/// device each target sits on, not those stacked below it.
#[derive(Debug)]
pub struct DeviceProbe {
    heads: Vec<DeviceNode>,
    last: Vec<Option<DiskCounters>>,
}

impl Devices {
    /// A probe of the devices under the targets, read once now.
    pub fn probe(&self) -> DeviceProbe {
        let heads: Vec<DeviceNode> = self.groups.iter().map(|g| g[0].clone()).collect();
        let last = heads.iter().map(|d| sysfs::read_counters(&d.dir).ok()).collect();
        DeviceProbe { heads, last }
    }
}

impl DeviceProbe {
    /// Each device's name and what it counted since the last reading (none when a reading
    /// failed or the counters went back).
    pub fn read(&mut self) -> Vec<(String, Option<DeviceDelta>)> {
        self.heads
            .iter()
            .zip(&mut self.last)
            .map(|(node, last)| {
                let now = sysfs::read_counters(&node.dir).ok();
                let change = match (last.take(), now) {
                    (Some(before), Some(now)) => delta(Ok(before), Ok(now)).ok(),
                    _ => None,
                };
                *last = now;
                (node.name.clone(), change)
            })
            .collect()
    }
}

fn counters(s: &Snapshot, group: usize, node: usize) -> Result<DiskCounters, String> {
    s.counters
        .get(group)
        .and_then(|g| g.get(node))
        .cloned()
        .unwrap_or_else(|| Err("not read at the window's edge".to_string()))
}

/// What a device counted between two readings, or why that is unknown.
fn delta(start: Result<DiskCounters, String>, end: Result<DiskCounters, String>) -> Result<DeviceDelta, String> {
    let (s, e) = (start?, end?);
    let d =
        |a: u64, b: u64| b.checked_sub(a).ok_or_else(|| "the counters went backwards (device re-created?)".to_string());
    Ok(DeviceDelta {
        read_ios: d(s.read_ios, e.read_ios)?,
        read_merges: d(s.read_merges, e.read_merges)?,
        read_bytes: d(s.read_sectors, e.read_sectors)? * SECTOR_BYTES,
        write_ios: d(s.write_ios, e.write_ios)?,
        write_merges: d(s.write_merges, e.write_merges)?,
        write_bytes: d(s.write_sectors, e.write_sectors)? * SECTOR_BYTES,
        // Busy times are not promised to only grow (a queue's accounting may be reset):
        // a step back reads as none.
        read_ticks_ms: e.read_ticks_ms.saturating_sub(s.read_ticks_ms),
        write_ticks_ms: e.write_ticks_ms.saturating_sub(s.write_ticks_ms),
        io_ticks_ms: e.io_ticks_ms.saturating_sub(s.io_ticks_ms),
        in_queue_ms: e.in_queue_ms.saturating_sub(s.in_queue_ms),
    })
}

/// `seen` / `own`: none when iopulse did none of it.
fn share(seen: u64, own: u64) -> Option<f64> {
    (own > 0).then(|| seen as f64 / own as f64)
}

/// The witness of one device for the targets on it.
fn witness(nodes: &[DeviceNode], deltas: &[Result<DeviceDelta, String>], on_device: &[&TargetIo]) -> DeviceWitness {
    let mut io = IoCounts::default();
    for t in on_device {
        io.read_ios += t.io.read_ios;
        io.read_bytes += t.io.read_bytes;
        io.write_ios += t.io.write_ios;
        io.write_bytes += t.io.write_bytes;
    }
    let top = deltas[0].as_ref().ok().copied();
    let name = nodes[0].name.clone();
    let mut w = DeviceWitness {
        device: name.clone(),
        delta: top,
        unknown_reason: deltas[0].as_ref().err().cloned(),
        stacked: nodes[1..]
            .iter()
            .zip(&deltas[1..])
            .map(|(n, d)| StackedDevice {
                name: n.name.clone(),
                below: n.below.clone().unwrap_or_default(),
                delta: d.as_ref().ok().copied(),
                unknown_reason: d.as_ref().err().cloned(),
            })
            .collect(),
        targets_on_device: on_device.len() as u32,
        iopulse: io,
        shares: WitnessShares {
            read_ios_share: top.and_then(|d| share(d.read_ios, io.read_ios)),
            read_bytes_share: top.and_then(|d| share(d.read_bytes, io.read_bytes)),
            write_ios_share: top.and_then(|d| share(d.write_ios, io.write_ios)),
            write_bytes_share: top.and_then(|d| share(d.write_bytes, io.write_bytes)),
        },
        caveats: WitnessCaveats {
            warning: None,
            warnings: Vec::new(),
            via: None,
            memory: nodes.iter().find_map(|n| n.memory.clone()),
            cached_below: None,
            read_other_traffic: false,
            write_other_traffic: false,
            throttle: None,
        },
    };
    let limits: Vec<String> = nodes
        .iter()
        .flat_map(|n| {
            let number = std::fs::read_to_string(n.dir.join("dev")).unwrap_or_default();
            throttle::limits(Path::new("/sys/fs/cgroup"), number.trim())
                .into_iter()
                .map(|l| format!("{}: {l}", n.name))
                .collect::<Vec<_>>()
        })
        .collect();
    if !limits.is_empty() && (io.read_ios > 0 || io.write_ios > 0) {
        w.caveats.throttle = Some(limits.join("; "));
    }
    let far = |s: Option<f64>| s.is_some_and(|s| s > OTHER_TRAFFIC_FACTOR);
    w.caveats.read_other_traffic = far(w.shares.read_bytes_share);
    w.caveats.write_other_traffic = far(w.shares.write_bytes_share);
    let direct = !on_device.is_empty() && on_device.iter().all(|t| t.direct);
    let cache_dropped = !on_device.is_empty() && on_device.iter().all(|t| t.cache_dropped);
    let mut warnings: Vec<String> = Vec::new();
    warnings.extend(judge(&name, direct, cache_dropped, w.shares.read_bytes_share, w.shares.write_bytes_share));
    if !direct {
        let direct_possible = on_device.iter().all(|t| t.direct_possible);
        warnings.extend(judge_buffered_writes(&name, w.shares.write_bytes_share, direct_possible));
    }
    if let Some((text, lower_share)) = cached_below(nodes, deltas) {
        if let Some(s) = lower_share.filter(|s| *s < SEEN_FRACTION_WARN) {
            warnings.push(format!(
                "{text}: the backing file's page cache served the other {:.1} % of them; these figures are memory speed, not the device's",
                100.0 * (1.0 - s)
            ));
        }
        w.caveats.cached_below = Some(text);
    }
    if let Some(why) = &w.caveats.memory
        && (io.read_ios > 0 || io.write_ios > 0)
    {
        warnings.push(format!(
            "the storage under the target is memory ({why}): these figures are memory speed, not a storage device's"
        ));
    }
    if let Some(limit) = &w.caveats.throttle {
        warnings
            .push(format!("a cgroup limits this run's I/O ({limit}): these figures are the limit's, not the device's"));
    }
    w.caveats.warning = warnings.first().cloned();
    w.caveats.warnings = warnings;
    w
}

/// A loop device in the stack whose direct I/O is off reads and writes its backing file
/// through the page cache: what it is, and the share of its read bytes the device below
/// it read (`None` when unknown or it read nothing).
fn cached_below(nodes: &[DeviceNode], deltas: &[Result<DeviceDelta, String>]) -> Option<(String, Option<f64>)> {
    nodes.iter().enumerate().find_map(|(i, n)| {
        // A loop device over a file in RAM is named as memory instead.
        let facts = n.loop_dev.as_ref().filter(|l| l.direct_io == Some(false) && n.memory.is_none())?;
        let mut text = format!(
            "{}'s direct I/O is off: its backing file {} is read and written through the page cache",
            n.name, facts.backing_file
        );
        let below = nodes.iter().position(|m| m.below.as_deref() == Some(n.name.as_str()));
        let share = below.and_then(|j| {
            let (upper, lower) = (deltas[i].as_ref().ok()?, deltas[j].as_ref().ok()?);
            share(lower.read_bytes, upper.read_bytes)
        });
        if let (Some(j), Some(s)) = (below, share) {
            text.push_str(&format!(" ({} read {:.1} % of the bytes {} read)", nodes[j].name, 100.0 * s, n.name));
        }
        Some((text, share))
    })
}

/// Buffered writes the device did not see: they wait in the page cache (written back
/// after the window, or never), so the figures are memory speed. Names the fixes.
fn judge_buffered_writes(device: &str, write: Option<f64>, direct_possible: bool) -> Option<String> {
    let direct = if direct_possible { "add --direct, or " } else { "" };
    write.filter(|s| *s < SEEN_FRACTION_WARN).map(|s| {
        format!(
            "buffered writes: device {device} saw only {:.1} % of the bytes written in the window: the rest waits in the page cache, so these figures are memory speed, not the device's; {direct}flush in the window ({BUFFERED_WRITE_FLUSH_FIX})",
            100.0 * s
        )
    })
}

/// The flags that make buffered writes reach the device within the window.
pub const BUFFERED_WRITE_FLUSH_FIX: &str = "--end-fsync, --fsync-every N, or --sync-writes dsync";

/// The warning for shares far from what the I/O mode promises: O_DIRECT reads or writes the
/// device did not see, or buffered reads it did not see (served from the page cache, said
/// to be cold or not). Under `SEEN_FRACTION_WARN` of the bytes is far.
fn judge(device: &str, direct: bool, cache_dropped: bool, read: Option<f64>, write: Option<f64>) -> Option<String> {
    let low = |s: Option<f64>| s.filter(|s| *s < SEEN_FRACTION_WARN);
    let shown = |s: f64| format!("{:.1} %", 100.0 * s);
    if direct {
        if let Some(s) = low(read) {
            return Some(format!(
                "device {device} saw only {} of the bytes read with O_DIRECT: the reads were served without it (holes or unwritten extents, or a cache below the filesystem); these figures are not the device's",
                shown(s)
            ));
        }
        return low(write).map(|s| {
            format!(
                "device {device} saw only {} of the bytes written with O_DIRECT: the writes did not reach it in the window; these figures are not the device's",
                shown(s)
            )
        });
    }
    low(read).map(|s| {
        let said = if cache_dropped {
            "buffered reads said to be cold (the cache was dropped before the window), but"
        } else {
            "buffered reads (the page cache was not dropped before the window):"
        };
        format!(
            "{said} device {device} saw only {} of the bytes read: the rest came from the page cache; these figures are memory speed, not the device's",
            shown(s)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn stat(read_ios: u64, read_sectors: u64, write_ios: u64, write_sectors: u64) -> String {
        format!("{read_ios} 3 {read_sectors} 0 {write_ios} 1 {write_sectors} 0 0 0 0 0 0 0 0 0 0\n")
    }

    /// A fake sysfs with vda (253:0) and its partition vda1 (253:1); dm-0 (254:0) on loop0 (7:0).
    fn fake_sys() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let vda = r.join("devices/pci/block/vda");
        let block = r.join("devices/virtual/block");
        fs::create_dir_all(r.join("dev/block")).unwrap();
        for (dir, dev) in [
            (vda.clone(), "253:0"),
            (vda.join("vda1"), "253:1"),
            (block.join("dm-0"), "254:0"),
            (block.join("loop0"), "7:0"),
        ] {
            fs::create_dir_all(dir.join("slaves")).unwrap();
            fs::write(dir.join("stat"), stat(0, 0, 0, 0)).unwrap();
            std::os::unix::fs::symlink(&dir, r.join(format!("dev/block/{dev}"))).unwrap();
        }
        fs::write(vda.join("vda1/partition"), "1\n").unwrap();
        std::os::unix::fs::symlink(block.join("loop0"), block.join("dm-0/slaves/loop0")).unwrap();
        root
    }

    fn io(read_ios: u64, read_bytes: u64, write_ios: u64, write_bytes: u64, direct: bool) -> TargetIo {
        TargetIo {
            io: IoCounts { read_ios, read_bytes, write_ios, write_bytes },
            direct,
            cache_dropped: true,
            direct_possible: true,
        }
    }

    #[test]
    fn deltas_and_shares_of_a_partition() {
        let sys = fake_sys();
        let devices = Devices::find_in(sys.path(), &[Some((253, 1))]);
        let start = devices.snapshot();
        fs::write(sys.path().join("devices/pci/block/vda/vda1/stat"), stat(1000, 8000, 10, 80)).unwrap();
        let end = devices.snapshot();
        let w = devices.witnesses(&start, &end, &[io(1000, 4_096_000, 0, 0, true)]);
        let w = w[0].as_ref().expect("a partition is a device");
        assert_eq!(w.device, "vda1");
        let d = w.delta.unwrap();
        assert_eq!((d.read_ios, d.read_bytes, d.write_ios, d.write_bytes), (1000, 4_096_000, 10, 40_960));
        assert_eq!(w.shares.read_bytes_share, Some(1.0));
        assert_eq!(w.shares.read_ios_share, Some(1.0));
        assert_eq!(w.shares.write_bytes_share, None, "iopulse wrote nothing: no share, not infinity");
        assert_eq!(w.caveats.warning, None);
    }

    #[test]
    fn targets_on_one_device_share_one_witness() {
        let sys = fake_sys();
        let devices = Devices::find_in(sys.path(), &[Some((254, 0)), None, Some((254, 0))]);
        let start = devices.snapshot();
        fs::write(sys.path().join("devices/virtual/block/dm-0/stat"), stat(300, 2400, 0, 0)).unwrap();
        fs::write(sys.path().join("devices/virtual/block/loop0/stat"), stat(150, 2400, 0, 0)).unwrap();
        let end = devices.snapshot();
        let targets = [io(100, 409_600, 0, 0, true), io(5, 5, 0, 0, true), io(200, 819_200, 0, 0, true)];
        let w = devices.witnesses(&start, &end, &targets);
        assert!(w[1].is_none(), "a target with no device has no witness");
        let (a, b) = (w[0].as_ref().unwrap(), w[2].as_ref().unwrap());
        assert_eq!(a, b);
        assert_eq!(a.targets_on_device, 2);
        assert_eq!(a.iopulse.read_bytes, 1_228_800);
        assert_eq!(a.shares.read_bytes_share, Some(1.0));
        assert_eq!(a.stacked.len(), 1);
        let loop0 = &a.stacked[0];
        assert_eq!((loop0.name.as_str(), loop0.below.as_str()), ("loop0", "dm-0"));
        assert_eq!(loop0.delta.map(|d| (d.read_ios, d.read_bytes)), Some((150, 1_228_800)));
    }

    #[test]
    fn unknown_counters_are_null_never_guessed() {
        let sys = fake_sys();
        let devices = Devices::find_in(sys.path(), &[Some((254, 0))]);
        let start = devices.snapshot();
        fs::remove_file(sys.path().join("devices/virtual/block/loop0/stat")).unwrap();
        let end = devices.snapshot();
        let w = devices.witnesses(&start, &end, &[io(1, 4096, 0, 0, true)]).remove(0).unwrap();
        assert_eq!(w.shares.read_bytes_share, Some(0.0), "dm-0's counters are known: it saw nothing");
        assert!(w.caveats.warning.as_deref().is_some_and(|m| m.contains("O_DIRECT") && m.contains("0.0 %")), "{w:?}");
        assert_eq!(w.stacked[0].delta, None);
        assert!(w.stacked[0].unknown_reason.as_deref().is_some_and(|r| r.contains("loop0/stat")), "{w:?}");
        // Counters that went backwards are unknown too.
        fs::write(sys.path().join("devices/virtual/block/dm-0/stat"), stat(9, 9, 9, 9)).unwrap();
        let later = devices.snapshot();
        let w = devices.witnesses(&later, &end, &[io(1, 4096, 0, 0, true)]).remove(0).unwrap();
        assert_eq!((w.delta, w.shares.read_bytes_share), (None, None));
        assert!(w.unknown_reason.as_deref().is_some_and(|r| r.contains("backwards")), "{w:?}");
    }

    #[test]
    fn no_device_no_witness() {
        let sys = fake_sys();
        let devices = Devices::find_in(sys.path(), &[Some((0, 45)), None]);
        let w = devices.witnesses(&devices.snapshot(), &devices.snapshot(), &[io(1, 1, 1, 1, true); 2]);
        assert_eq!(w, vec![None, None]);
        assert!(Devices::none().snapshot().counters.is_empty(), "nothing is read");
    }

    #[test]
    fn the_warning_rule() {
        // O_DIRECT reads or writes the device did not see.
        assert!(judge("vda", true, true, Some(0.3), None).unwrap().contains("read with O_DIRECT"));
        assert!(judge("vda", true, true, None, Some(0.1)).unwrap().contains("written with O_DIRECT"));
        assert_eq!(judge("vda", true, true, Some(0.5), Some(1.0)), None);
        // Buffered reads: said to be cold, or kept warm; buffered writes are not judged
        // (writeback after the window is normal).
        let cold = judge("vda", false, true, Some(0.02), None).unwrap();
        assert!(cold.contains("said to be cold") && cold.contains("page cache"), "{cold}");
        let warm = judge("vda", false, false, Some(0.0), None).unwrap();
        assert!(warm.contains("not dropped") && warm.contains("0.0 %") && warm.contains("page cache"), "{warm}");
        assert_eq!(judge("vda", false, false, Some(1.3), Some(0.0)), None, "readahead: more than read is fine");
        // Buffered writes the device did not see: loud, with the fixes.
        let w = judge_buffered_writes("vda", Some(0.0), true).unwrap();
        assert!(w.contains("0.0 %") && w.contains("--direct") && w.contains("--fsync-every"), "{w}");
        assert_eq!(judge_buffered_writes("vda", Some(0.6), true), None);
        // mmap cannot take --direct: only the flushes are named.
        let w = judge_buffered_writes("vda", Some(0.0), false).unwrap();
        assert!(!w.contains("--direct") && w.contains("--fsync-every"), "{w}");
    }

    #[test]
    fn a_device_far_above_the_runs_bytes_is_other_traffic() {
        let sys = fake_sys();
        let devices = Devices::find_in(sys.path(), &[Some((253, 1))]);
        let start = devices.snapshot();
        // 30,000 times the run's bytes read, twice its bytes written.
        fs::write(sys.path().join("devices/pci/block/vda/vda1/stat"), stat(3000, 240_000, 20, 160)).unwrap();
        let end = devices.snapshot();
        let w = devices.witnesses(&start, &end, &[io(1, 4096, 10, 40_960, true)]).remove(0).unwrap();
        assert!(w.caveats.read_other_traffic && !w.caveats.write_other_traffic, "{w:?}");
        assert_eq!(w.shares.read_bytes_share, Some(30_000.0), "the share is still recorded: {w:?}");
        assert_eq!(w.shares.write_bytes_share, Some(2.0));
        // Just over the factor is other traffic; at it, not.
        let end = {
            fs::write(sys.path().join("devices/pci/block/vda/vda1/stat"), stat(5, 40, 0, 0)).unwrap();
            devices.snapshot()
        };
        let w = devices.witnesses(&start, &end, &[io(1, 4096, 0, 0, true)]).remove(0).unwrap();
        assert_eq!((w.shares.read_bytes_share, w.caveats.read_other_traffic), (Some(5.0), false));
    }
}

/// iopulse's I/Os and bytes as a share of what the device counted, per direction.
/// Flattened: its keys sit beside `DeviceWitness`'s own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessShares {
    /// The device's reads / iopulse's reads (null without reads, or unknown counters).
    pub read_ios_share: Option<f64>,
    pub read_bytes_share: Option<f64>,
    pub write_ios_share: Option<f64>,
    pub write_bytes_share: Option<f64>,
}

/// Why the device's counters may not be iopulse's alone: other traffic, a layer that
/// caches or throttles, the path the I/O took, and the warnings they give.
/// Flattened: its keys sit beside `DeviceWitness`'s own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessCaveats {
    /// The share is far from what the I/O mode promises, and why that matters (the first
    /// of `warnings`).
    pub warning: Option<String>,
    /// Every warning of this witness, the first being `warning`.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How the device was found where the file's own device number is anonymous (`btrfs
    /// UUID`, `overlayfs upper layer DIR`); null for a plain block device.
    #[serde(default)]
    pub via: Option<String>,
    /// Why the storage under the target is memory (zram, a RAM disk, a loop device over a
    /// file on tmpfs); null otherwise.
    #[serde(default)]
    pub memory: Option<String>,
    /// A loop device in the stack reads and writes its backing file through the page cache
    /// (its direct I/O is off), and what the device below it saw; null otherwise.
    #[serde(default)]
    pub cached_below: Option<String>,
    /// The device read (wrote) more than `OTHER_TRAFFIC_FACTOR` times iopulse's bytes:
    /// mostly other traffic, shown as bytes beside iopulse's, not as a share.
    #[serde(default)]
    pub read_other_traffic: bool,
    #[serde(default)]
    pub write_other_traffic: bool,
    /// A cgroup limits this process's I/O on the device or one below it (`io.max`, blkio
    /// throttle): the figures are the limit's; null otherwise.
    #[serde(default)]
    pub throttle: Option<String>,
}
