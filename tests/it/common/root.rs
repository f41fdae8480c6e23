//! Root-only facilities for the fault and safety tests: small tmpfs mounts,
//! loop devices (optionally partitioned, optionally with a truncated backing
//! file that fails reads with EIO) and blkio throttling (cgroup v1) that
//! holds I/O in the block layer for as long as a test wants.
//!
//! Each constructor returns `None` after printing `SKIP: ...` when it is not
//! root or the facility is missing, so that a test never passes vacuously
//! without saying so; each guard undoes what it did on Drop, also when the
//! test fails.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn skip(what: &str, why: &str) {
    let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
    eprintln!("SKIP: {what}: {why}");
}

fn run_ok(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!("{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// A mounted filesystem on a fresh directory, unmounted on Drop.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // Lazy: a child still holding a file there cannot keep the mount alive.
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

/// A tmpfs of `size` (e.g. "8m") with mount `options` (e.g. "ro"); `what` says which test needs it.
pub fn mount_tmpfs(size: &str, options: &str, what: &str) -> Option<Mount> {
    if !is_root() {
        skip(what, "needs root to mount a tmpfs");
        return None;
    }
    let dir = super::temp_dir();
    let opts = if options.is_empty() { format!("size={size}") } else { format!("size={size},{options}") };
    match run_ok("mount", &["-t", "tmpfs", "-o", &opts, "tmpfs", &super::path_str(dir.path())]) {
        Ok(_) => Some(Mount { dir }),
        Err(e) => {
            skip(what, &format!("cannot mount a tmpfs: {e}"));
            None
        }
    }
}

/// A ramfs (no fallocate: no holes, no discard) on a fresh directory.
pub fn mount_ramfs(what: &str) -> Option<Mount> {
    if !is_root() {
        skip(what, "needs root to mount a ramfs");
        return None;
    }
    let dir = super::temp_dir();
    match run_ok("mount", &["-t", "ramfs", "ramfs", &super::path_str(dir.path())]) {
        Ok(_) => Some(Mount { dir }),
        Err(e) => {
            skip(what, &format!("cannot mount a ramfs: {e}"));
            None
        }
    }
}

/// Mounts `device` (a block device with a filesystem) on a fresh directory.
pub fn mount_device(device: &str, what: &str) -> Option<Mount> {
    let dir = super::temp_dir();
    match run_ok("mount", &[device, &super::path_str(dir.path())]) {
        Ok(_) => Some(Mount { dir }),
        Err(e) => {
            skip(what, &format!("cannot mount {device}: {e}"));
            None
        }
    }
}

/// A loop device over a file in a temporary directory, detached on Drop.
pub struct LoopDev {
    pub path: String,
    pub backing: PathBuf,
    _dir: tempfile::TempDir,
    /// The ramfs or tmpfs holding the backing file (`LoopOptions`), unmounted after the
    /// device is detached.
    _ramfs: Option<Mount>,
}

impl LoopDev {
    /// "major:minor" of the device.
    pub fn number(&self) -> String {
        let name = Path::new(&self.path).file_name().unwrap().to_string_lossy().into_owned();
        std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).unwrap().trim().to_string()
    }

    /// The device's bytes, read with a plain read (not through iopulse).
    pub fn contents(&self) -> Vec<u8> {
        std::fs::read(&self.path).expect("read the loop device")
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.path]).status();
    }
}

/// Options of `loop_device`.
#[derive(Clone, Copy, Default)]
pub struct LoopOptions {
    /// The loop driver does direct I/O on the backing file (a read past the end of a
    /// truncated backing file then fails with EIO).
    pub direct_io: bool,
    /// Write an MBR with one partition from 1 MiB to the end, and scan it (`loopNp1`).
    pub partitioned: bool,
    /// Fill the backing file with this byte (else zeros, sparse).
    pub fill: Option<u8>,
    /// Keep the backing file on a ramfs, which has no fallocate: the loop device then
    /// cannot discard (its `discard_max_hw_bytes` is 0).
    pub on_ramfs: bool,
    /// Keep the backing file on a tmpfs (which takes O_DIRECT since Linux 6.6): with
    /// `direct_io`, a device that serves a 4 KiB read in about 10 µs.
    pub on_tmpfs: bool,
}

/// A loop device of `size_bytes`.
pub fn loop_device(size_bytes: u64, options: LoopOptions, what: &str) -> Option<LoopDev> {
    if !is_root() {
        skip(what, "needs root for a loop device");
        return None;
    }
    let dir = super::temp_dir();
    let ramfs = if options.on_ramfs {
        Some(mount_ramfs(what)?)
    } else if options.on_tmpfs {
        Some(mount_tmpfs(&format!("{}k", size_bytes / 1024 + 1024), "", what)?)
    } else {
        None
    };
    let backing = ramfs.as_ref().map_or(dir.path(), |m| m.path()).join("backing.img");
    match options.fill {
        Some(b) => std::fs::write(&backing, vec![b; size_bytes as usize]).unwrap(),
        None => std::fs::File::create(&backing).unwrap().set_len(size_bytes).unwrap(),
    }
    if options.partitioned {
        write_mbr(&backing, size_bytes);
    }
    let mut args = vec!["-f", "--show"];
    if options.direct_io {
        args.push("--direct-io=on");
    }
    if options.partitioned {
        args.push("-P");
    }
    let backing_s = super::path_str(&backing);
    args.push(&backing_s);
    match run_ok("losetup", &args) {
        Ok(path) => {
            let dev = LoopDev { path, backing, _dir: dir, _ramfs: ramfs };
            if options.partitioned {
                // The partition node appears asynchronously (udev may be absent: mknod it).
                let part = format!("{}p1", dev.path);
                for _ in 0..50 {
                    if Path::new(&part).exists() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                if !Path::new(&part).exists() {
                    let name = Path::new(&part).file_name().unwrap().to_string_lossy().into_owned();
                    if let Ok(number) = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")) {
                        let (major, minor) = number.trim().split_once(':').unwrap();
                        let _ = run_ok("mknod", &[&part, "b", major, minor]);
                    }
                }
                if !Path::new(&part).exists() {
                    skip(what, "the loop device's partition did not appear (no MBR partition support in this kernel?)");
                    return None;
                }
            }
            Some(dev)
        }
        Err(e) => {
            skip(what, &format!("cannot set up a loop device: {e}"));
            None
        }
    }
}

/// An MBR with one Linux partition from sector 2048 to the end.
fn write_mbr(file: &Path, size_bytes: u64) {
    use std::os::unix::fs::FileExt;
    let mut mbr = [0u8; 512];
    let start: u32 = 2048;
    let sectors = (size_bytes / 512) as u32 - start;
    let e = &mut mbr[446..462];
    e[4] = 0x83;
    e[8..12].copy_from_slice(&start.to_le_bytes());
    e[12..16].copy_from_slice(&sectors.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(&mbr, 0).unwrap();
}

/// `mkfs.ext4` on `device`.
pub fn mkfs_ext4(device: &str, what: &str) -> bool {
    match run_ok("mkfs.ext4", &["-q", "-F", device]) {
        Ok(_) => true,
        Err(e) => {
            skip(what, &format!("mkfs.ext4: {e}"));
            false
        }
    }
}

/// A blkio cgroup (v1) whose read throttle holds the I/O of the processes in it.
/// On Drop the throttle is lifted (so that held I/O completes) and the group removed.
pub struct Throttle {
    dir: PathBuf,
    device: String,
}

/// A fresh blkio cgroup for `device` ("major:minor").
pub fn blkio_throttle(device: &str, what: &str) -> Option<Throttle> {
    if !is_root() {
        skip(what, "needs root for a blkio cgroup");
        return None;
    }
    let base = Path::new("/sys/fs/cgroup/blkio");
    if !base.join("blkio.throttle.read_bps_device").exists() {
        skip(what, "no cgroup v1 blkio controller with throttling at /sys/fs/cgroup/blkio");
        return None;
    }
    let dir = base.join(format!("iopulse-test-{}-{}", std::process::id(), device.replace(':', "-")));
    if let Err(e) = std::fs::create_dir(&dir) {
        skip(what, &format!("cannot create {}: {e}", dir.display()));
        return None;
    }
    Some(Throttle { dir, device: device.to_string() })
}

impl Throttle {
    /// Limits reads of the device by processes in the group to `bytes_per_sec` (0: no limit).
    pub fn limit_reads(&self, bytes_per_sec: u64) {
        std::fs::write(self.dir.join("blkio.throttle.read_bps_device"), format!("{} {bytes_per_sec}", self.device))
            .expect("set the blkio throttle");
    }

    /// Makes `cmd` start inside the group (before it does any I/O).
    pub fn confine(&self, cmd: &mut Command) {
        start_in_cgroup(cmd, &self.dir);
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("blkio.throttle.read_bps_device"), format!("{} 0", self.device));
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// A device-mapper device, removed on Drop.
pub struct DmDevice {
    pub name: String,
    pub path: String,
}

impl Drop for DmDevice {
    fn drop(&mut self) {
        let _ = Command::new("dmsetup").args(["remove", "--retry", &self.name]).output();
    }
}

/// `dmsetup create` with `table` (e.g. "0 16384 error"); `None` (with SKIP) when not root,
/// when dmsetup is missing or when the kernel has no device-mapper.
pub fn dm_device(table: &str, what: &str) -> Option<DmDevice> {
    if !is_root() {
        skip(what, "needs root for device-mapper");
        return None;
    }
    if let Err(e) = run_ok("dmsetup", &["version"]) {
        skip(what, &format!("device-mapper is not available: {e}"));
        return None;
    }
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!("iopulse-test-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    if let Err(e) = run_ok("dmsetup", &["create", &name, "--table", table]) {
        skip(what, &format!("dmsetup create: {e}"));
        return None;
    }
    let dev = DmDevice { path: format!("/dev/mapper/{name}"), name };
    // Without udev the node may be missing.
    if !Path::new(&dev.path).exists() {
        let _ = run_ok("dmsetup", &["mknodes", &dev.name]);
    }
    if !Path::new(&dev.path).exists() {
        skip(what, "the device-mapper node did not appear");
        return None;
    }
    Some(dev)
}

/// `e2fsck -n -f` on `device` finds the filesystem clean.
pub fn e2fsck_clean(device: &str) -> bool {
    let out = Command::new("e2fsck").args(["-n", "-f", device]).output().expect("run e2fsck");
    out.status.success()
}

/// A sparse 16 MiB file on an 8 MiB tmpfs: no layout is needed, and writes fail with
/// ENOSPC once the filesystem is full. Returns the mount (unmounted on Drop) and the path.
pub fn sparse_on_full_tmpfs(what: &str) -> Option<(Mount, String)> {
    let fs = mount_tmpfs("8m", "", what)?;
    let f = fs.path().join("sparse.dat");
    std::fs::File::create(&f).unwrap().set_len(16 << 20).unwrap();
    let f = super::path_str(&f);
    Some((fs, f))
}

/// A file made immutable (`chattr +i`) for as long as the guard lives.
pub struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).output();
    }
}

/// Makes `path` immutable; `None` (with SKIP) where chattr cannot (not root, no support).
pub fn immutable(path: &Path, what: &str) -> Option<Immutable> {
    match Command::new("chattr").arg("+i").arg(path).output() {
        Ok(o) if o.status.success() => Some(Immutable(path.to_path_buf())),
        _ => {
            skip(what, "chattr +i is not possible here");
            None
        }
    }
}

/// Makes `cmd` join the cgroup (v1 or v2) at `group` between fork and exec, so that
/// everything it does is counted in the group from its first instruction.
pub fn start_in_cgroup(cmd: &mut Command, group: &Path) {
    let procs = CString::new(group.join("cgroup.procs").to_str().unwrap()).unwrap();
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // async-signal-safe functions (open, write, close) on memory prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let ok = libc::write(fd, b"0\n".as_ptr().cast(), 2) == 2;
            libc::close(fd);
            if ok { Ok(()) } else { Err(std::io::Error::last_os_error()) }
        });
    }
}

/// A fresh memory cgroup (v2 where this machine runs it, else v1) limited to `limit_bytes`,
/// its processes' page cache included; removed on Drop (after its processes are gone).
pub struct MemoryCgroup {
    dir: PathBuf,
    limit_file: &'static str,
}

impl MemoryCgroup {
    pub fn new(limit_bytes: u64, what: &str) -> Option<Self> {
        if !is_root() {
            skip(what, "needs root for a memory cgroup");
            return None;
        }
        let (base, limit_file) = if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
            ("/sys/fs/cgroup", "memory.max")
        } else {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        };
        let dir = Path::new(base).join(format!("iopulse-test-{}-{}", std::process::id(), next_group_number()));
        if std::fs::create_dir(&dir).is_err() || std::fs::write(dir.join(limit_file), limit_bytes.to_string()).is_err()
        {
            let _ = std::fs::remove_dir(&dir);
            skip(what, &format!("no memory cgroup controller at {base}"));
            return None;
        }
        Some(Self { dir, limit_file })
    }

    /// The file that holds the limit (`memory.max` or `memory.limit_in_bytes`).
    pub fn limit_file(&self) -> &'static str {
        self.limit_file
    }

    /// Makes `cmd` start inside the group.
    pub fn confine(&self, cmd: &mut Command) {
        start_in_cgroup(cmd, &self.dir);
    }
}

/// Tests of one binary run in parallel: each group gets its own name.
fn next_group_number() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Its page cache moves to the parent when the group goes; wait for its processes.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// A btrfs on a loop device of `size_bytes` (a sparse file), mounted with `options` (e.g.
/// "compress-force=zstd"), unmounted and detached on Drop (the mount first: fields drop in
/// order). `None` (SKIP said) when not root or mkfs.btrfs or the kernel's btrfs is missing.
pub struct Btrfs {
    pub mount: Mount,
    _device: LoopDev,
}

pub fn btrfs(size_bytes: u64, options: &str, what: &str) -> Option<Btrfs> {
    if !is_root() {
        skip(what, "needs root to mount a btrfs on a loop device");
        return None;
    }
    if Command::new("mkfs.btrfs").arg("--version").output().is_err() {
        skip(what, "mkfs.btrfs is missing (Debian: apt-get install btrfs-progs)");
        return None;
    }
    let device = loop_device(size_bytes, LoopOptions::default(), what)?;
    if let Err(e) = run_ok("mkfs.btrfs", &["-q", "-f", &device.path]) {
        skip(what, &format!("mkfs.btrfs: {e}"));
        return None;
    }
    let dir = super::temp_dir();
    match run_ok("mount", &["-t", "btrfs", "-o", options, &device.path, &super::path_str(dir.path())]) {
        Ok(_) => Some(Btrfs { mount: Mount { dir }, _device: device }),
        Err(e) => {
            skip(what, &format!("cannot mount a btrfs (no btrfs in this kernel?): {e}"));
            None
        }
    }
}

/// What compsize says of `file` once it is on disk (synced first): (bytes on disk, bytes
/// uncompressed). `None` (SKIP said) when compsize is missing.
pub fn compsize(file: &Path, what: &str) -> Option<(u64, u64)> {
    let _ = Command::new("sync").arg("-f").arg(file).status();
    let out = match Command::new("compsize").arg("-b").arg(file).output() {
        Ok(out) => out,
        Err(_) => {
            skip(what, "compsize is missing (Debian: apt-get install btrfs-compsize)");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // "TOTAL      100%      16777216     16777216     16777216"
    let total = text.lines().find(|l| l.starts_with("TOTAL")).unwrap_or_else(|| panic!("compsize: {text}"));
    let fields: Vec<u64> = total.split_whitespace().skip(2).map(|f| f.parse().unwrap()).collect();
    Some((fields[0], fields[1]))
}
