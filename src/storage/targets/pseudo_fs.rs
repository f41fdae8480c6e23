//! Pseudo-filesystems: procfs, sysfs and the other kernel interfaces that look
//! like files. Writing a benchmark's bytes there changes the kernel's state (a
//! hostname, a sysctl, a cgroup limit), and reading them measures nothing, so
//! neither a target nor an output may live there. Only looks (statfs).

use nix::sys::statfs::{self, FsType};
use std::path::Path;

/// The kernel interfaces refused as a target or an output, with the name a user knows.
/// fs_type values the libc crate lacks are given as the kernel's magic numbers.
const PSEUDO: &[(FsType, &str)] = &[
    (statfs::PROC_SUPER_MAGIC, "procfs (/proc)"),
    (statfs::SYSFS_MAGIC, "sysfs (/sys)"),
    (statfs::DEBUGFS_MAGIC, "debugfs"),
    (statfs::TRACEFS_MAGIC, "tracefs"),
    (statfs::SECURITYFS_MAGIC, "securityfs"),
    (statfs::CGROUP_SUPER_MAGIC, "cgroupfs"),
    (statfs::CGROUP2_SUPER_MAGIC, "cgroup2fs"),
    (statfs::BPF_FS_MAGIC, "bpffs"),
    (statfs::DEVPTS_SUPER_MAGIC, "devpts"),
    (statfs::NSFS_MAGIC, "nsfs"),
    (statfs::SELINUX_MAGIC, "selinuxfs"),
    (statfs::SMACK_MAGIC, "smackfs"),
    (FsType(0x6265_7473), "configfs"),          // CONFIGFS_MAGIC
    (FsType(0x6165_676C), "pstore"),            // PSTOREFS_MAGIC
    (FsType(0xde5e_81e4_u32 as _), "efivarfs"), // EFIVARFS_MAGIC
    (FsType(0x1980_0202), "mqueue"),            // MQUEUE_MAGIC
];

/// The pseudo-filesystem `path` is on, if any. A path that does not exist yet is judged
/// by its nearest existing ancestor (where it would be created).
pub fn pseudo_filesystem(path: &Path) -> Option<&'static str> {
    let existing = path.ancestors().find(|p| !p.as_os_str().is_empty() && p.symlink_metadata().is_ok());
    let existing = existing.unwrap_or(Path::new("."));
    let fs_type = statfs::statfs(existing).ok()?.filesystem_type();
    PSEUDO.iter().find(|(t, _)| *t == fs_type).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_and_sys_are_pseudo_filesystems() {
        assert_eq!(pseudo_filesystem(Path::new("/proc/sys/kernel/hostname")), Some("procfs (/proc)"));
        assert_eq!(pseudo_filesystem(Path::new("/proc/self/no-such-file")), Some("procfs (/proc)"));
        if Path::new("/sys/kernel").exists() {
            assert_eq!(pseudo_filesystem(Path::new("/sys/kernel/no-such-file")), Some("sysfs (/sys)"));
        }
    }

    #[test]
    fn a_temp_file_is_on_a_real_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pseudo_filesystem(&dir.path().join("new.dat")), None);
        assert_eq!(pseudo_filesystem(dir.path()), None);
    }
}
