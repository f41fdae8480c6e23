//! The power-cut rig: a FUSE filesystem (one flat directory, in memory) that keeps what is
//! written in volatile memory until fsync/fdatasync of the file (fsyncdir for names), and on
//! a `cut` drops whatever was not flushed, keeping the 4 KiB pages a closure picks (a random
//! subset tears writes at 4 KiB). A write to a file opened O_DSYNC/O_SYNC is durable once
//! answered. `Mode::Lying` acknowledges every flush (and O_DSYNC write) and keeps nothing.
//! A flush of a chosen file can be held (never answered until the cut), to cut in the
//! middle of its update. Pages are served with direct I/O: the kernel caches nothing.
//!
//! For users: it is a test fixture, mounted with `Rig::mount` (root and /dev/fuse needed).

use fuser::{
    FileAttr, FileType, Filesystem, MountOption, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

pub const PAGE_BYTES: usize = 4096;
const ROOT: u64 = fuser::FUSE_ROOT_ID;
const TTL: Duration = Duration::ZERO;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A flush makes the file's data durable.
    Honest,
    /// A flush is acknowledged, and nothing becomes durable.
    Lying,
}

#[derive(Default)]
struct Inode {
    name: OsString,
    data: Vec<u8>,
    durable: Vec<u8>,
    dirty: BTreeSet<usize>,
}

struct State {
    mode: Mode,
    inodes: BTreeMap<u64, Inode>,
    names: BTreeMap<OsString, u64>,
    durable_names: BTreeMap<OsString, u64>,
    next_ino: u64,
    /// Hold the flush of the file of this name once it has been flushed this many times.
    hold: Option<(OsString, u32)>,
    flushes_of_held: u32,
    /// A flush is being held; set to false by `cut` to answer it (with EIO).
    holding: bool,
    /// Flushes answered, all files.
    pub flushes: u64,
}

struct Fs(Arc<Mutex<State>>);

/// A mounted rig; unmounted when dropped.
pub struct Rig {
    state: Arc<Mutex<State>>,
    session: Option<fuser::BackgroundSession>,
    pub dir: PathBuf,
    _mountpoint: tempfile::TempDir,
}

impl Rig {
    /// Mounts a rig holding `files` (name, length: zeros, durable). `None` when FUSE is
    /// not available here (the reason printed).
    pub fn mount(mode: Mode, files: &[(&str, usize)]) -> Option<Rig> {
        if !Path::new("/dev/fuse").exists() || !nix::unistd::geteuid().is_root() {
            eprintln!("SKIP power-cut rig: needs /dev/fuse and root");
            return None;
        }
        let mut state = State {
            mode,
            inodes: BTreeMap::new(),
            names: BTreeMap::new(),
            durable_names: BTreeMap::new(),
            next_ino: ROOT + 1,
            hold: None,
            flushes_of_held: 0,
            holding: false,
            flushes: 0,
        };
        for (name, len) in files {
            let ino = state.next_ino;
            state.next_ino += 1;
            let name = OsString::from(name);
            state.inodes.insert(
                ino,
                Inode { name: name.clone(), data: vec![0; *len], durable: vec![0; *len], dirty: BTreeSet::new() },
            );
            state.names.insert(name.clone(), ino);
            state.durable_names.insert(name, ino);
        }
        let state = Arc::new(Mutex::new(state));
        let mountpoint = tempfile::tempdir().ok()?;
        let options = [MountOption::FSName("powercut-rig".into()), MountOption::DefaultPermissions];
        match fuser::spawn_mount2(Fs(Arc::clone(&state)), mountpoint.path(), &options) {
            Ok(session) => Some(Rig {
                state,
                session: Some(session),
                dir: mountpoint.path().to_path_buf(),
                _mountpoint: mountpoint,
            }),
            Err(e) => {
                eprintln!("SKIP power-cut rig: cannot mount a FUSE filesystem here: {e}");
                None
            }
        }
    }

    /// Holds the flush of file `name` after `after` flushes of it were answered: it is never
    /// answered until the next `cut`.
    pub fn hold_flush(&self, name: &str, after: u32) {
        let mut s = self.state.lock().unwrap();
        s.hold = Some((name.into(), after));
        s.flushes_of_held = 0;
    }

    /// Whether a flush is being held now.
    pub fn holding(&self) -> bool {
        self.state.lock().unwrap().holding
    }

    /// Answers a held flush with EIO (the writer was killed meanwhile), and stops holding.
    pub fn release(&self) {
        let mut s = self.state.lock().unwrap();
        s.holding = false;
        s.hold = None;
    }

    /// The power cut: every file goes back to its durable data, but for the unflushed 4 KiB
    /// pages `keep(name, page)` keeps; names go back to the last fsyncdir. Returns the
    /// unflushed pages of each file, kept and dropped.
    pub fn cut(&self, mut keep: impl FnMut(&OsStr, usize) -> bool) -> BTreeMap<OsString, (Vec<usize>, Vec<usize>)> {
        let mut s = self.state.lock().unwrap();
        s.holding = false;
        s.hold = None;
        let mut pages = BTreeMap::new();
        for inode in s.inodes.values_mut() {
            let (mut kept, mut dropped) = (Vec::new(), Vec::new());
            for &page in &inode.dirty {
                let from = page * PAGE_BYTES;
                let to = (from + PAGE_BYTES).min(inode.data.len()).min(inode.durable.len());
                if from < to && keep(&inode.name, page) {
                    inode.durable[from..to].copy_from_slice(&inode.data[from..to]);
                    kept.push(page);
                } else {
                    dropped.push(page);
                }
            }
            inode.dirty.clear();
            inode.data = inode.durable.clone();
            pages.insert(inode.name.clone(), (kept, dropped));
        }
        s.names = s.durable_names.clone();
        pages
    }

    /// Flushes answered so far, of every file.
    pub fn flushes(&self) -> u64 {
        self.state.lock().unwrap().flushes
    }
}

impl Drop for Rig {
    /// Unmounts the rig however the test ends (passing, failing or panicking). The session's
    /// own unmount gives up when the mount is busy, and a child killed with SIGKILL may hold
    /// it a moment longer (its io_uring requests are torn down after it is reaped): the
    /// mounts of passing tests used to stay behind, "Transport endpoint is not connected".
    /// So the rig unmounts first, retrying while busy for a bounded time, and then detaches
    /// it (MNT_DETACH: gone from the namespace at once, released when its last user is); the
    /// session then finds it unmounted and ends.
    fn drop(&mut self) {
        self.release();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match nix::mount::umount2(&self.dir, nix::mount::MntFlags::empty()) {
                Ok(()) => break,
                Err(nix::errno::Errno::EBUSY) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => {
                    let _ = nix::mount::umount2(&self.dir, nix::mount::MntFlags::MNT_DETACH);
                    break;
                }
            }
        }
        drop(self.session.take());
    }
}

fn attr(ino: u64, inode: Option<&Inode>) -> FileAttr {
    let now = SystemTime::now();
    let (kind, perm, size) = match inode {
        Some(i) => (FileType::RegularFile, 0o644, i.data.len() as u64),
        None => (FileType::Directory, 0o755, 0),
    };
    FileAttr {
        ino,
        size,
        blocks: size.div_ceil(512),
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind,
        perm,
        nlink: 1,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: PAGE_BYTES as u32,
        flags: 0,
    }
}

/// The handle of a file opened O_DSYNC or O_SYNC (the kernel may not pass the open flags
/// with each write).
const SYNC_HANDLE: u64 = 1;

fn handle_of(open_flags: i32) -> u64 {
    if open_flags & libc::O_DSYNC != 0 { SYNC_HANDLE } else { 0 }
}

fn resize(inode: &mut Inode, len: usize) {
    inode.data.resize(len, 0);
    // The length is metadata the rig keeps at once; the bytes stay volatile.
    inode.durable.resize(len, 0);
}

impl Filesystem for Fs {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let s = self.0.lock().unwrap();
        match s.names.get(name).filter(|_| parent == ROOT) {
            Some(&ino) => reply.entry(&TTL, &attr(ino, s.inodes.get(&ino)), 0),
            None => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        let s = self.0.lock().unwrap();
        if ino == ROOT {
            return reply.attr(&TTL, &attr(ROOT, None));
        }
        match s.inodes.get(&ino) {
            Some(i) => reply.attr(&TTL, &attr(ino, Some(i))),
            None => reply.error(libc::ENOENT),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let mut s = self.0.lock().unwrap();
        if ino == ROOT {
            return reply.attr(&TTL, &attr(ROOT, None));
        }
        let Some(inode) = s.inodes.get_mut(&ino) else { return reply.error(libc::ENOENT) };
        if let Some(len) = size {
            resize(inode, len as usize);
        }
        reply.attr(&TTL, &attr(ino, Some(inode)));
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, flags: i32, reply: ReplyOpen) {
        let s = self.0.lock().unwrap();
        if s.inodes.contains_key(&ino) {
            reply.opened(handle_of(flags), fuser::consts::FOPEN_DIRECT_IO);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn create(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut s = self.0.lock().unwrap();
        if parent != ROOT {
            return reply.error(libc::ENOENT);
        }
        let ino = s.next_ino;
        s.next_ino += 1;
        s.inodes.insert(ino, Inode { name: name.to_os_string(), ..Default::default() });
        s.names.insert(name.to_os_string(), ino);
        reply.created(&TTL, &attr(ino, s.inodes.get(&ino)), 0, handle_of(flags), fuser::consts::FOPEN_DIRECT_IO);
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyData,
    ) {
        let s = self.0.lock().unwrap();
        let Some(inode) = s.inodes.get(&ino) else { return reply.error(libc::ENOENT) };
        let from = (offset as usize).min(inode.data.len());
        let to = (from + size as usize).min(inode.data.len());
        reply.data(&inode.data[from..to]);
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        flags: i32,
        _lock: Option<u64>,
        reply: ReplyWrite,
    ) {
        let mut s = self.0.lock().unwrap();
        let honest = s.mode == Mode::Honest;
        let Some(inode) = s.inodes.get_mut(&ino) else { return reply.error(libc::ENOENT) };
        let from = offset as usize;
        let to = from + data.len();
        if to > inode.data.len() {
            resize(inode, to);
        }
        inode.data[from..to].copy_from_slice(data);
        // A write of a file opened O_DSYNC/O_SYNC is durable once answered (the honest rig).
        if honest && (fh == SYNC_HANDLE || flags & libc::O_DSYNC != 0) && to <= inode.durable.len() {
            inode.durable[from..to].copy_from_slice(data);
        }
        for page in from / PAGE_BYTES..to.div_ceil(PAGE_BYTES) {
            inode.dirty.insert(page);
        }
        reply.written(data.len() as u32);
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let held = {
            let mut s = self.0.lock().unwrap();
            let name = s.inodes.get(&ino).map(|i| i.name.clone()).unwrap_or_default();
            let held = match s.hold.clone() {
                Some((n, after)) if n == name => {
                    s.flushes_of_held += 1;
                    s.flushes_of_held > after
                }
                _ => false,
            };
            s.holding |= held;
            held
        };
        // A held flush waits for the cut (the session answers nothing else meanwhile), and
        // then fails: the data it was to flush is gone.
        while held && self.0.lock().unwrap().holding {
            std::thread::sleep(Duration::from_millis(5));
        }
        if held {
            return reply.error(libc::EIO);
        }
        let mut s = self.0.lock().unwrap();
        s.flushes += 1;
        let mode = s.mode;
        let Some(inode) = s.inodes.get_mut(&ino) else { return reply.error(libc::ENOENT) };
        if mode == Mode::Honest {
            inode.durable = inode.data.clone();
            inode.dirty.clear();
        }
        reply.ok();
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let mut s = self.0.lock().unwrap();
        if s.mode == Mode::Honest {
            s.durable_names = s.names.clone();
        }
        reply.ok();
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        _parent: u64,
        name: &OsStr,
        _newparent: u64,
        newname: &OsStr,
        _flags: u32,
        reply: ReplyEmpty,
    ) {
        let mut s = self.0.lock().unwrap();
        let Some(ino) = s.names.remove(name) else { return reply.error(libc::ENOENT) };
        s.names.insert(newname.to_os_string(), ino);
        if let Some(i) = s.inodes.get_mut(&ino) {
            i.name = newname.to_os_string();
        }
        reply.ok();
    }

    fn unlink(&mut self, _req: &Request<'_>, _parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.0.lock().unwrap();
        match s.names.remove(name) {
            Some(_) => reply.ok(),
            None => reply.error(libc::ENOENT),
        }
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        if ino != ROOT {
            return reply.error(libc::ENOTDIR);
        }
        let s = self.0.lock().unwrap();
        let mut entries =
            vec![(ROOT, FileType::Directory, OsString::from(".")), (ROOT, FileType::Directory, "..".into())];
        entries.extend(s.names.iter().map(|(n, &i)| (i, FileType::RegularFile, n.clone())));
        for (k, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, (k + 1) as i64, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
