//! The block devices under filesystems whose files carry an anonymous device number:
//! btrfs (its devices are listed under `/sys/fs/btrfs/UUID/devices`) and overlayfs (the
//! layer that holds the file, upper first, then the lower ones). Only reads mountinfo,
//! sysfs and the layers' metadata; never opens a device.

use super::sysfs::{self, DeviceNode};
use crate::storage::targets::fsinfo;
use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// How deep layers are followed (an overlay on btrfs is two).
const MAX_LAYERS: usize = 4;

/// The devices under a file whose device number `dev` has no block device in sysfs, and
/// how they were found (`btrfs ...`, `overlayfs upper layer ...`); `None` where neither
/// applies (tmpfs, NFS) or nothing is found.
pub fn devices_of_anonymous(sys: &Path, file: &File, dev: u64) -> Option<(Vec<DeviceNode>, String)> {
    let path = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    resolve(sys, &path, dev, 0)
}

fn resolve(sys: &Path, path: &Path, dev: u64, depth: usize) -> Option<(Vec<DeviceNode>, String)> {
    if depth >= MAX_LAYERS {
        return None;
    }
    if let Some(found) = block_device(sys, dev) {
        return Some((found, String::new()));
    }
    let mount = fsinfo::mount_of_dev(dev).or_else(|| fsinfo::mount_of_path(path))?;
    match mount.fs_type.as_str() {
        "btrfs" => btrfs(sys, &mount.source),
        "overlay" => overlay(sys, path, &mount, depth),
        _ => None,
    }
}

/// The device numbered `dev` and those under it, when sysfs has it.
fn block_device(sys: &Path, dev: u64) -> Option<Vec<DeviceNode>> {
    let found = sysfs::devices_under(sys, libc::major(dev), libc::minor(dev));
    (!found.is_empty()).then_some(found)
}

/// A btrfs filesystem's devices: the mount's source first, then the others of its UUID.
fn btrfs(sys: &Path, source: &str) -> Option<(Vec<DeviceNode>, String)> {
    let meta = fs::metadata(source).ok().filter(|m| m.file_type().is_block_device())?;
    let mut found = block_device(sys, meta.rdev())?;
    let top = found[0].name.clone();
    let Some((uuid, members)) = btrfs_members(sys, &top) else {
        return Some((found, "btrfs".to_string()));
    };
    for member in members {
        if let Ok(dir) = fs::canonicalize(&member)
            && !found.iter().any(|d| d.dir == dir)
        {
            found.push(sysfs::node(&dir, Some(format!("btrfs {uuid}"))));
        }
    }
    Some((found, format!("btrfs {uuid}")))
}

/// The btrfs filesystem (UUID) that has device `name`, and every device it lists.
fn btrfs_members(sys: &Path, name: &str) -> Option<(String, Vec<PathBuf>)> {
    for fsdir in fs::read_dir(sys.join("fs/btrfs")).ok()?.flatten() {
        let devices = fsdir.path().join("devices");
        if devices.join(name).exists() {
            let mut members: Vec<PathBuf> = fs::read_dir(&devices).ok()?.flatten().map(|e| e.path()).collect();
            members.sort();
            return Some((fsdir.file_name().to_string_lossy().into_owned(), members));
        }
    }
    None
}

/// The layer of an overlayfs mount that holds `path`: the upper layer when the file is
/// there (created or copied up), else the first lower layer that has it.
fn overlay(sys: &Path, path: &Path, mount: &fsinfo::MountFacts, depth: usize) -> Option<(Vec<DeviceNode>, String)> {
    let relative = path.strip_prefix(&mount.mount_point).ok()?;
    let upper = mount.option("upperdir").map(|u| ("upper", u.to_string()));
    let lowers = mount.option("lowerdir").map(|l| l.split(':').map(|d| ("lower", d.to_string())).collect::<Vec<_>>());
    for (kind, layer) in upper.into_iter().chain(lowers.unwrap_or_default()) {
        let candidate = Path::new(&layer).join(relative);
        let Ok(meta) = fs::symlink_metadata(&candidate) else { continue };
        let (found, via) = resolve(sys, &candidate, meta.dev(), depth + 1)?;
        let via = if via.is_empty() { String::new() } else { format!(", {via}") };
        return Some((found, format!("overlayfs {kind} layer {layer}{via}")));
    }
    None
}
