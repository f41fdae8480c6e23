//! Planning the targets: what each path is, how large the run will treat it,
//! and whether the spec can work on it. Only looks (stat, statx, sysfs, a
//! read-only open of block devices for their size); never creates or writes,
//! so a refused run leaves nothing behind.

use super::device::{self, Access};
use super::fsinfo;
use super::identity::{FileId, PathIdentity};
use super::pseudo_fs::pseudo_filesystem;
use super::{loop_backing, ownership};
use crate::base::diagnostics::error::UsageError;
use crate::workload::spec::{DEFAULT_NEW_FILE_SIZE_BYTES, Spec};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
}

/// What the run will do with one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetPlan {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// The path exists now.
    pub exists: bool,
    /// Its size now (0 if it does not exist).
    pub existing_size_bytes: u64,
    /// The size the run addresses (files shorter than this are laid out to it).
    pub size_bytes: u64,
    /// Whole blocks the run addresses.
    pub blocks: u64,
    /// O_DIRECT offset alignment planned with (1 when --direct is not asked).
    pub dio_align_bytes: u64,
    /// What becomes of holes and unwritten extents in the region (reads of them never
    /// reach the device).
    pub holes: Holes,
}

/// What a run does about holes and unwritten extents in a regular file's region
/// (docs/safety.md, "Holes and unwritten extents"). Reads of them are answered from
/// memory, so a run that reads lays them out when the file is its to write: a file
/// iopulse laid out (`user.iopulse.layout`) or created, or any file with --force.
/// Someone else's file is never written to without --force: it is read as it is, and
/// the run says loudly how much of it never reaches the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holes {
    /// A block device: nothing is measured.
    NotAFile,
    /// The run only writes: measured and recorded, never laid out (writes allocate).
    NotRead,
    /// The run reads: holes and unwritten extents in the region are laid out before the
    /// window; `estimate_bytes` of them were seen while planning (in the part that exists).
    LayOut { estimate_bytes: u64 },
    /// The run reads them as they are: why they are not laid out, and the fix.
    Leave { why: String },
}

/// Plans every target of `spec` (given as `paths`, which may differ from the spec's
/// own list for the embedded default).
pub fn plan_targets(spec: &Spec, paths: &[PathBuf]) -> Result<Vec<TargetPlan>, UsageError> {
    refuse_one_file_twice(paths)?;
    let plans = paths.iter().map(|p| plan_one(spec, p)).collect::<Result<Vec<_>, _>>()?;
    check_free_space(&plans)?;
    Ok(plans)
}

/// Two targets that are one file (a symlink, a hard link, `./a` beside `a`) would be
/// written by two workers as if they were two: verification then reports the other
/// worker's blocks as corruption. Refused.
fn refuse_one_file_twice(paths: &[PathBuf]) -> Result<(), UsageError> {
    let mut seen: Vec<(PathIdentity, &PathBuf)> = Vec::new();
    for path in paths {
        let Some(id) = PathIdentity::of(path) else { continue };
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
            return Err(UsageError::new(format!(
                "TARGET {} and TARGET {} are the same file (a link or another spelling of one path): give each file once",
                first.display(),
                path.display()
            )));
        }
        seen.push((id, path));
    }
    Ok(())
}

/// The bytes layout will write into a planned file: what it adds to reach its size, and
/// the holes and unwritten extents it lays out.
fn layout_bytes(plan: &TargetPlan) -> u64 {
    let fill = match plan.holes {
        Holes::LayOut { estimate_bytes } => estimate_bytes,
        _ => 0,
    };
    plan.size_bytes.saturating_sub(plan.existing_size_bytes).saturating_add(fill)
}

/// Layout must fit: the bytes to be added to files on one filesystem must not exceed
/// what it has free for this user (statvfs f_bavail), or the run would fill the disk
/// and fail half-way through layout.
fn check_free_space(plans: &[TargetPlan]) -> Result<(), UsageError> {
    // (fsid, free, needed, first, holes laid out)
    let mut per_fs: Vec<(u64, u64, u64, &TargetPlan, bool)> = Vec::new();
    for plan in plans.iter().filter(|p| p.kind == TargetKind::File && layout_bytes(p) > 0) {
        let place = if plan.exists { plan.path.clone() } else { parent_dir(&plan.path) };
        let Ok(vfs) = nix::sys::statvfs::statvfs(&place) else { continue };
        // ramfs and the like keep no block count: their free space is unknown, not zero.
        if vfs.blocks() == 0 {
            continue;
        }
        let free_bytes = vfs.blocks_available().saturating_mul(vfs.fragment_size());
        let needed_bytes = layout_bytes(plan);
        let fills = matches!(plan.holes, Holes::LayOut { estimate_bytes } if estimate_bytes > 0);
        let fsid = vfs.filesystem_id();
        match per_fs.iter_mut().find(|(id, ..)| *id == fsid) {
            Some(entry) => {
                entry.2 = entry.2.saturating_add(needed_bytes);
                entry.4 |= fills;
            }
            None => per_fs.push((fsid, free_bytes, needed_bytes, plan, fills)),
        }
    }
    for (_, free_bytes, needed_bytes, first, fills) in per_fs {
        if needed_bytes > free_bytes && fills {
            return Err(UsageError::new(format!(
                "TARGET {}: laying out its holes and unwritten extents (which reads would never take to the device), and any size it lacks, needs {needed_bytes} bytes but its filesystem has {free_bytes} bytes of free space left: free some space, give a smaller --file-size, or a target whose data is written",
                first.path.display()
            )));
        }
        if needed_bytes > free_bytes {
            return Err(UsageError::new(format!(
                "--file-size: laying out TARGET {} needs {needed_bytes} bytes but its filesystem has {free_bytes} bytes of free space left: give a smaller --file-size or a target on a filesystem with room",
                first.path.display()
            )));
        }
    }
    Ok(())
}

fn plan_one(spec: &Spec, path: &Path) -> Result<TargetPlan, UsageError> {
    let shown = path.display();
    let bs = spec.shape.block_size_bytes;
    if let Some(fs) = pseudo_filesystem(path) {
        return Err(UsageError::new(format!(
            "TARGET {shown} is on {fs}, a kernel interface, not storage: reading or laying it out would change the kernel's state; give a file on a real filesystem or a block device"
        )));
    }
    let (kind, exists, existing_size_bytes, size_bytes) = match fs::metadata(path) {
        Ok(meta) => {
            let ft = meta.file_type();
            if ft.is_dir() {
                return Err(UsageError::new(format!(
                    "TARGET {shown} is a directory: give a file path inside it (e.g. {shown}/iopulse.dat) or a block device"
                )));
            }
            if ft.is_block_device() {
                let (device_size, size) = plan_block_device(spec, path, &meta)?;
                (TargetKind::BlockDevice, true, device_size, size)
            } else if ft.is_file() {
                let existing = meta.len();
                let size = spec.shape.file_size_bytes.unwrap_or(if existing > 0 {
                    existing
                } else {
                    DEFAULT_NEW_FILE_SIZE_BYTES
                });
                // Whether it can be written at all is said first (a read-only mount).
                check_rights(spec, path, TargetKind::File, existing < size)?;
                check_file_may_change(spec, path, &meta, existing < size)?;
                (TargetKind::File, true, existing, size)
            } else {
                let what = super::identity::special_kind(ft).unwrap_or("a special file");
                return Err(UsageError::new(format!(
                    "TARGET {shown} is {what}: give a regular file or a block device"
                )));
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            check_creatable(path)?;
            (TargetKind::File, false, 0, spec.shape.file_size_bytes.unwrap_or(DEFAULT_NEW_FILE_SIZE_BYTES))
        }
        Err(e) => return Err(UsageError::new(format!("TARGET {shown}: {e}"))),
    };
    if exists {
        check_rights(spec, path, kind, existing_size_bytes < size_bytes)?;
    }
    check_sizes_fit(spec, path, size_bytes)?;
    let dio_align_bytes = if spec.io.direct { fsinfo::dio_align_for(path, exists, &parent_dir(path)) } else { 1 };
    check_direct_alignment(spec, path, dio_align_bytes)?;
    let blocks = size_bytes / bs;
    let holes = plan_holes(spec, path, kind, exists, existing_size_bytes.min(blocks.saturating_mul(bs)))?;
    Ok(TargetPlan {
        path: path.to_path_buf(),
        kind,
        exists,
        existing_size_bytes,
        size_bytes,
        blocks,
        dio_align_bytes,
        holes,
    })
}

/// A block device as a target: its size, and the refusals that protect it (in use, written
/// without --force, trimmed where it cannot discard, a --file-size past its end). Returns
/// the device's size and the region's.
fn plan_block_device(spec: &Spec, path: &Path, meta: &fs::Metadata) -> Result<(u64, u64), UsageError> {
    let shown = path.display();
    let device_size = block_device_size(path)
        .map_err(|e| UsageError::new(format!("TARGET {shown}: cannot read the block device's size: {e}")))?;
    if spec.writes() {
        let in_use = device::block_device_in_use(path).map_err(|e| {
            UsageError::new(format!("TARGET {shown}: cannot tell whether the block device is in use: {e}"))
        })?;
        if let Some(why) = in_use {
            return Err(UsageError::new(format!(
                "TARGET {shown} is in use ({why}): writing to it would destroy what uses it, so it is refused even with --force; unmount it (or free it) first, or run reads only"
            )));
        }
    }
    if spec.writes() && !spec.force {
        let how = if spec.access.trim_percent > 0 {
            format!("--trim-percent {}", spec.access.trim_percent)
        } else if let Some(r) = spec.replay.as_ref().filter(|r| r.writes == 0 && r.trims > 0) {
            format!("the trace's {} trims", r.trims)
        } else {
            format!("--write-percent {}", spec.write_percent())
        };
        return Err(UsageError::new(format!(
            "TARGET {shown} is a block device and this run writes to it ({how}): this destroys its contents; add --force if that is what you want"
        )));
    }
    if spec.trims() {
        use std::os::unix::fs::MetadataExt;
        if super::fsinfo::discard_max_bytes(meta.rdev()) == Some(0) {
            let (what, fix) = match &spec.replay {
                Some(r) => (format!("the trace's {} trims", r.trims), "replay on a device or file that can"),
                None => (
                    format!("--trim-percent {}", spec.access.trim_percent),
                    "drop --trim-percent, or give a device or file that can",
                ),
            };
            return Err(UsageError::new(format!(
                "{what}: TARGET {shown} cannot discard (its queue/discard_max_bytes is 0): {fix}"
            )));
        }
    }
    let size = match spec.shape.file_size_bytes {
        Some(s) if s > device_size => {
            return Err(UsageError::new(format!(
                "--file-size {s} is larger than block device {shown} ({device_size} bytes): give at most the device's size or drop --file-size"
            )));
        }
        Some(s) => s,
        None => device_size,
    };
    Ok((device_size, size))
}

/// A target that does not exist yet: its directory must exist and take a new file.
fn check_creatable(path: &Path) -> Result<(), UsageError> {
    let shown = path.display();
    let parent = parent_dir(path);
    match fs::metadata(&parent) {
        Ok(m) if m.is_dir() => {
            if let Err(e) = device::check_can_create_in(&parent) {
                return Err(UsageError::new(format!(
                    "TARGET {shown} does not exist and cannot be created in {} ({}): give a path in a writable directory",
                    parent.display(),
                    device::reason(&e)
                )));
            }
        }
        Ok(_) => {
            return Err(UsageError::new(format!("TARGET {shown}: {} is not a directory", parent.display())));
        }
        Err(_) => {
            return Err(UsageError::new(format!(
                "TARGET {shown}: directory {} does not exist; create it first (mkdir -p {})",
                parent.display(),
                parent.display()
            )));
        }
    }
    Ok(())
}

/// Every I/O of the run fits in the target: the block size, or a mix's largest size and
/// its alignment.
fn check_sizes_fit(spec: &Spec, path: &Path, size_bytes: u64) -> Result<(), UsageError> {
    let (shown, bs) = (path.display(), spec.shape.block_size_bytes);
    if let Some(mix) = &spec.shape.block_sizes {
        let largest = mix.largest_bytes().max(mix.align_bytes);
        if size_bytes < largest {
            let flags = mix.flags_at_fault();
            let (what, fix) = if flags.starts_with("--block-align") {
                ("its alignment", "a smaller --block-align")
            } else if flags.starts_with("--bssplit") {
                ("its largest I/O", "smaller sizes")
            } else {
                ("its I/O", "a smaller --block-size")
            };
            return Err(UsageError::new(format!(
                "{flags}: {what} ({largest} bytes) does not fit in TARGET {shown} ({size_bytes} bytes): use {fix} or a larger --file-size"
            )));
        }
    } else if size_bytes < bs {
        return Err(UsageError::new(format!(
            "--block-size {bs} is larger than TARGET {shown} ({size_bytes} bytes): use a smaller --block-size or a larger --file-size"
        )));
    }
    Ok(())
}

/// With --direct, every size and alignment of the run is a multiple of the target's
/// O_DIRECT alignment.
fn check_direct_alignment(spec: &Spec, path: &Path, dio_align_bytes: u64) -> Result<(), UsageError> {
    let (shown, bs) = (path.display(), spec.shape.block_size_bytes);
    if spec.io.direct
        && let Some(mix) = &spec.shape.block_sizes
    {
        let suggest = |b: u64| b.next_multiple_of(dio_align_bytes).max(4096);
        if let Some(size) = mix.sizes().into_iter().find(|s| !s.is_multiple_of(dio_align_bytes)) {
            return Err(UsageError::new(format!(
                "--bssplit {}: size {size} is not a multiple of the O_DIRECT alignment of {shown} ({dio_align_bytes} bytes): use a multiple such as {}, or drop --direct",
                mix.fio_syntax(),
                suggest(size)
            )));
        }
        if !mix.align_bytes.is_multiple_of(dio_align_bytes) {
            return Err(UsageError::new(format!(
                "--block-align {} is not a multiple of the O_DIRECT alignment of {shown} ({dio_align_bytes} bytes): use a multiple such as {}, or drop --direct",
                mix.align_bytes,
                suggest(mix.align_bytes)
            )));
        }
    }
    if spec.io.direct && !bs.is_multiple_of(dio_align_bytes) {
        return Err(UsageError::new(format!(
            "--block-size {bs} is not a multiple of the O_DIRECT alignment of {shown} ({dio_align_bytes} bytes): use a multiple such as {}, or drop --direct",
            bs.next_multiple_of(dio_align_bytes).max(4096)
        )));
    }
    Ok(())
}

/// Whether the holes and unwritten extents of a regular file's region may be laid out
/// before the run (`Holes`). `existing_region_bytes` is the part of the region that
/// exists now (the rest is laid out anyway). A run that reads holes or unwritten extents
/// of a file it may not lay out (someone else's file without --force, a file that backs a
/// loop device, a file it cannot write) is refused unless --keep-holes asks to measure the
/// file as it is: reads of them are answered with zeros from memory, so every figure would
/// be memory speed. Only looks: the extent map is read from a read-only descriptor.
fn plan_holes(
    spec: &Spec,
    path: &Path,
    kind: TargetKind,
    exists: bool,
    existing_region_bytes: u64,
) -> Result<Holes, UsageError> {
    use std::os::unix::fs::MetadataExt;
    if kind != TargetKind::File {
        return Ok(Holes::NotAFile);
    }
    if !spec.reads() {
        return Ok(Holes::NotRead);
    }
    let shown = path.display();
    if spec.data.verify.is_some() {
        return Ok(Holes::Leave {
            why: "--verify reads the file as it is: its holes and unwritten extents are reported as never-written blocks, not laid out".into(),
        });
    }
    if !exists || existing_region_bytes == 0 {
        // Created or laid out whole by this run: written data throughout.
        return Ok(Holes::LayOut { estimate_bytes: 0 });
    }
    if spec.io.keep_holes {
        return Ok(Holes::Leave {
            why: "--keep-holes: the file is read as it is, and every figure is marked so (drop --keep-holes to lay those parts out first)".into(),
        });
    }
    // Why this run may not lay the file out, and the fix besides --keep-holes.
    // A file that backs a loop device comes first: --force does not change it.
    let mut not_ours: Option<String> = None;
    if let Ok(meta) = fs::metadata(path) {
        let loops = loop_backing::loops_backed_by_file(FileId { dev: meta.dev(), ino: meta.ino() });
        if !loops.is_empty() {
            not_ours = Some(format!(
                "{shown} backs loop device {} and is never written: read the loop device instead",
                loops.join(", ")
            ));
        }
    }
    if not_ours.is_none() && !spec.force && !ownership::laid_out_by_iopulse(path) {
        not_ours = Some(format!(
            "{shown} was not laid out by iopulse: add --force to lay those parts out with benchmark data before the run (this writes into the file)"
        ));
    }
    if not_ours.is_none()
        && let Err(e) = device::check_access(path, Access::ReadWrite)
    {
        not_ours = Some(format!(
            "{shown} is not writable ({}), so it cannot be laid out: make it writable and add --force",
            device::reason(&e)
        ));
    }
    let measure = |sync: bool| {
        File::open(path).map(|f| super::allocation::measure(&f, existing_region_bytes, sync).allocation).ok()
    };
    let Some(why) = not_ours else {
        let estimate_bytes = measure(false).map_or(0, |a| a.unallocated_bytes());
        return Ok(Holes::LayOut { estimate_bytes });
    };
    // Data written but not yet flushed into a preallocated extent shows as unwritten until
    // the filesystem writes it: a region that looks unwritten is measured again after that
    // (FIEMAP_FLAG_SYNC writes dirty pages back; the file's content is unchanged).
    let found = measure(false).filter(|a| a.unallocated_bytes() > 0).and_then(|_| measure(true));
    match found.filter(|a| a.unallocated_bytes() > 0) {
        None => Ok(Holes::Leave { why }),
        Some(a) => {
            let at_least = if a.allocated_bytes.is_none() { "at least " } else { "" };
            Err(UsageError::new(format!(
                "TARGET {shown}: {at_least}{} of the read region ({} of {}) is holes or unwritten extents, which reads never take to the device (the filesystem answers them with zeros from memory): {why}, or add --keep-holes to measure the file as it is (every figure is then marked)",
                a.unallocated_percent(),
                crate::base::units::display::bytes(a.unallocated_bytes()),
                crate::base::units::display::bytes(a.region_bytes),
            )))
        }
    }
}

/// An existing regular file changes only when the user asked for it: a file that backs
/// a loop device is never written or extended (that rewrites what uses the loop device);
/// a non-empty file iopulse did not lay out is extended by a run that only reads only
/// with --force.
fn check_file_may_change(spec: &Spec, path: &Path, meta: &fs::Metadata, extends: bool) -> Result<(), UsageError> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    if !spec.writes() && !extends {
        return Ok(());
    }
    let loops = loop_backing::loops_backed_by_file(FileId { dev: meta.dev(), ino: meta.ino() });
    if !loops.is_empty() {
        return Err(UsageError::new(format!(
            "TARGET {shown} backs loop device {}: writing to it would corrupt what uses that device, so it is refused even with --force; detach it (losetup -d) first, or run reads only at its size",
            loops.join(", ")
        )));
    }
    if extends && !spec.writes() && !spec.force && meta.len() > 0 && !ownership::laid_out_by_iopulse(path) {
        return Err(UsageError::new(format!(
            "TARGET {shown} exists ({} bytes) and was not laid out by iopulse: this read-only run would extend it to --file-size {} with benchmark data; drop --file-size to read it at its size, or add --force to extend it",
            meta.len(),
            spec.shape.file_size_bytes.unwrap_or(0)
        )));
    }
    Ok(())
}

/// The run opens an existing target for reading, and for writing when it writes or
/// must lay the file out to a larger size: both must be allowed (access(2), so a
/// read-only mount or an immutable file is refused even for root).
fn check_rights(spec: &Spec, path: &Path, kind: TargetKind, extends: bool) -> Result<(), UsageError> {
    let shown = path.display();
    if let Err(e) = device::check_access(path, Access::Read) {
        return Err(UsageError::new(format!(
            "TARGET {shown} is not readable ({}): every run reads its targets; fix its permissions or give another target",
            device::reason(&e)
        )));
    }
    let extends = extends && kind == TargetKind::File;
    if (spec.writes() || extends)
        && let Err(e) = device::check_access(path, Access::ReadWrite)
    {
        let why = if spec.writes() {
            format!("this run writes to it (--write-percent {})", spec.write_percent())
        } else {
            "it is shorter than --file-size and would be laid out to it".to_string()
        };
        return Err(UsageError::new(format!(
            "TARGET {shown} is not writable ({}), but {why}: give a writable target, a read-only run (--read-percent 100){}",
            device::reason(&e),
            if extends { " or a --file-size of at most its size" } else { "" }
        )));
    }
    Ok(())
}

/// The directory a new file would be created in.
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A block device's size: the offset of its end.
fn block_device_size(path: &Path) -> io::Result<u64> {
    File::open(path)?.seek(SeekFrom::End(0))
}
