//! The io_uring requests of the queued metadata worker (`io/metadata/uring_worker.rs`): one
//! ring, and per slot the memory its request points at (two paths, a statx buffer, a read
//! buffer), owned here so that no request can outlive what it names.
//!
//! The worker decides which request a slot makes next and what the answers mean; this
//! only queues, submits and hands completions back as (slot, result). It never times,
//! counts or allocates after `new`. A slot holds at most one request; a request is queued
//! only on an idle slot and the slot is idle again once its completion has been handed
//! back, which is what makes `push` safe: the memory of a slot in flight is neither moved
//! nor reused. Dropped with requests in flight, the ring waits for them (or, if the ring
//! itself has failed, leaks the slots' memory rather than free what the kernel may still
//! write).

use super::RelPath;
use io_uring::{IoUring, opcode, types};
use std::os::fd::RawFd;

/// Bytes a slot reads or writes per request.
pub const CHUNK_BYTES: usize = 64 << 10;

/// One request of a slot. Paths are the slot's own (`TreeRing::paths`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeRequest {
    /// openat(root, path, flags | O_CLOEXEC | O_NOFOLLOW, 0644): the result is the fd.
    Open {
        flags: i32,
    },
    /// Up to a chunk read at `offset_bytes` into the slot's buffer (the bytes are dropped).
    Read {
        fd: RawFd,
        offset_bytes: u64,
    },
    /// `len_bytes` (at most a chunk) of the ring's write data at `offset_bytes` (u64::MAX:
    /// at the file's end, for O_APPEND).
    Write {
        fd: RawFd,
        len_bytes: u32,
        offset_bytes: u64,
    },
    Fsync {
        fd: RawFd,
    },
    Close {
        fd: RawFd,
    },
    /// statx(root, path, AT_SYMLINK_NOFOLLOW, basic stats) into the slot's buffer.
    Stat,
    /// unlinkat(root, path, 0)
    Unlink,
    /// unlinkat(root, path, AT_REMOVEDIR)
    Rmdir,
    /// mkdirat(root, path, 0755)
    Mkdir,
    /// renameat(root, path, root, other)
    Rename,
}

/// The memory one slot's request may point at.
struct SlotMemory {
    path: RelPath,
    other: RelPath,
    statx: libc::statx,
    read_buf: Vec<u8>,
}

/// A ring of `depth` slots on a tree's root descriptor.
pub struct TreeRing {
    ring: IoUring,
    root: RawFd,
    slots: Vec<SlotMemory>,
    /// A request of the slot is queued or in flight.
    busy: Vec<bool>,
    in_flight: usize,
    /// What writes write: a chunk, copied once from the caller's data.
    write_data: Vec<u8>,
    /// The ring itself failed: what is in flight may never complete.
    broken: bool,
}

impl TreeRing {
    /// A ring of `depth` slots on `root`; writes write the start of `write_data` (up to a
    /// chunk, repeated by the caller's offsets).
    pub fn new(depth: u32, root: RawFd, write_data: &[u8]) -> std::io::Result<TreeRing> {
        let ring = IoUring::new(depth.next_power_of_two().max(2))?;
        let slots = (0..depth)
            .map(|_| SlotMemory {
                path: RelPath::default(),
                other: RelPath::default(),
                // SAFETY: statx is plain data; zeroes are a valid value for the kernel to fill.
                statx: unsafe { std::mem::zeroed() },
                read_buf: vec![0; CHUNK_BYTES],
            })
            .collect();
        let mut data = vec![0u8; CHUNK_BYTES];
        let n = write_data.len().min(CHUNK_BYTES);
        data[..n].copy_from_slice(&write_data[..n]);
        Ok(TreeRing {
            ring,
            root,
            slots,
            busy: vec![false; depth as usize],
            in_flight: 0,
            write_data: data,
            broken: false,
        })
    }

    /// Slot `i`'s two paths (a rename's second is `other`), to set before a request.
    ///
    /// # Panics
    /// If the slot has a request queued or in flight: its paths are the kernel's until then.
    pub fn paths(&mut self, i: usize) -> (&mut RelPath, &mut RelPath) {
        assert!(!self.busy[i], "slot {i}'s paths are in use by its request");
        let s = &mut self.slots[i];
        (&mut s.path, &mut s.other)
    }

    /// Requests queued or in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Queues `req` for slot `i` (sent by the next `submit` or `submit_and_wait`).
    ///
    /// # Panics
    /// If slot `i` already has a request: one request per slot, and the ring has a place
    /// for each.
    pub fn push(&mut self, i: usize, req: TreeRequest) {
        assert!(!self.busy[i], "slot {i} has a request in flight");
        let root = types::Fd(self.root);
        let s = &mut self.slots[i];
        let entry = match req {
            TreeRequest::Open { flags } => opcode::OpenAt::new(root, s.path.c_ptr())
                .flags(flags | libc::O_CLOEXEC | libc::O_NOFOLLOW)
                .mode(0o644)
                .build(),
            TreeRequest::Read { fd, offset_bytes } => {
                opcode::Read::new(types::Fd(fd), s.read_buf.as_mut_ptr(), CHUNK_BYTES as u32)
                    .offset(offset_bytes)
                    .build()
            }
            TreeRequest::Write { fd, len_bytes, offset_bytes } => {
                let len = len_bytes.min(CHUNK_BYTES as u32);
                opcode::Write::new(types::Fd(fd), self.write_data.as_ptr(), len).offset(offset_bytes).build()
            }
            TreeRequest::Fsync { fd } => opcode::Fsync::new(types::Fd(fd)).build(),
            TreeRequest::Close { fd } => opcode::Close::new(types::Fd(fd)).build(),
            TreeRequest::Stat => opcode::Statx::new(root, s.path.c_ptr(), (&raw mut s.statx).cast())
                .flags(libc::AT_SYMLINK_NOFOLLOW)
                .mask(libc::STATX_BASIC_STATS)
                .build(),
            TreeRequest::Unlink => opcode::UnlinkAt::new(root, s.path.c_ptr()).build(),
            TreeRequest::Rmdir => opcode::UnlinkAt::new(root, s.path.c_ptr()).flags(libc::AT_REMOVEDIR).build(),
            TreeRequest::Mkdir => opcode::MkDirAt::new(root, s.path.c_ptr()).mode(0o755).build(),
            TreeRequest::Rename => opcode::RenameAt::new(root, s.path.c_ptr(), root, s.other.c_ptr()).build(),
        }
        .user_data(i as u64);
        // SAFETY: every pointer in the entry (the slot's paths, statx and read buffer, the
        // ring's write data) is heap or struct memory of this ring, never moved or resized
        // after `new`; the slot is idle (checked above) and stays busy until its completion
        // is handed back, so nothing else writes that memory meanwhile; a ring dropped with
        // requests in flight waits for them or leaks the memory (Drop).
        let pushed = unsafe { self.ring.submission().push(&entry) };
        assert!(pushed.is_ok(), "the ring has a place per slot");
        self.busy[i] = true;
        self.in_flight += 1;
    }

    /// Submits what is queued and waits for at least one completion. An error other than
    /// EINTR means the ring failed: what is in flight is lost (the ring is then broken).
    pub fn submit_and_wait(&mut self) -> std::io::Result<()> {
        match self.ring.submit_and_wait(1) {
            Err(e) if e.raw_os_error() != Some(libc::EINTR) => {
                self.broken = true;
                Err(e)
            }
            _ => Ok(()),
        }
    }

    /// Submits what is queued, without waiting (nothing when nothing is queued). A refusal
    /// leaves the requests queued for the next `submit_and_wait`, which reports it.
    pub fn submit(&mut self) {
        if !self.ring.submission().is_empty() {
            let _ = self.ring.submit();
        }
    }

    /// Moves up to `out.len()` ready completions into `out` as (slot, result: the
    /// syscall's return, or -errno); their slots are idle again. Returns how many.
    pub fn completions(&mut self, out: &mut [(usize, i32)]) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion().take(out.len()) {
            let i = cqe.user_data() as usize;
            out[n] = (i, cqe.result());
            self.busy[i] = false;
            self.in_flight -= 1;
            n += 1;
        }
        n
    }
}

impl Drop for TreeRing {
    fn drop(&mut self) {
        let mut ready = [(0usize, 0i32); 64];
        while self.in_flight > 0 && !self.broken {
            if self.submit_and_wait().is_ok() {
                while self.completions(&mut ready) > 0 {}
            }
        }
        if self.in_flight > 0 {
            // The kernel may still write into a slot: its memory is never given back.
            std::mem::forget(std::mem::take(&mut self.slots));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn ring_or_skip(depth: u32, root: RawFd, data: &[u8]) -> Option<TreeRing> {
        match TreeRing::new(depth, root, data) {
            Ok(r) => Some(r),
            Err(e) => {
                crate::stderr_line!("SKIP: io_uring is not available here: {e}");
                None
            }
        }
    }

    /// Runs slot 0's request to its completion.
    fn complete(ring: &mut TreeRing, req: TreeRequest) -> i32 {
        ring.push(0, req);
        let mut out = [(0usize, 0i32); 4];
        loop {
            ring.submit_and_wait().unwrap();
            if ring.completions(&mut out) == 1 {
                assert_eq!(out[0].0, 0);
                return out[0].1;
            }
        }
    }

    #[test]
    fn a_chain_creates_writes_stats_renames_and_removes_a_file_relative_to_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::File::open(dir.path()).unwrap();
        let Some(mut ring) = ring_or_skip(2, root.as_raw_fd(), b"hello") else { return };
        let set = |ring: &mut TreeRing, a: &[u8], b: &[u8]| {
            let (p, o) = ring.paths(0);
            for (path, name) in [(p, a), (o, b)] {
                path.clear();
                name.iter().for_each(|&c| path.push_byte(c));
                path.terminate();
            }
        };
        set(&mut ring, b"f1", b"f2");
        let fd = complete(&mut ring, TreeRequest::Open { flags: libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL });
        assert!(fd >= 0, "open: {fd}");
        assert_eq!(complete(&mut ring, TreeRequest::Write { fd, len_bytes: 5, offset_bytes: 0 }), 5);
        assert_eq!(complete(&mut ring, TreeRequest::Close { fd }), 0);
        assert_eq!(std::fs::read(dir.path().join("f1")).unwrap(), b"hello");
        assert_eq!(complete(&mut ring, TreeRequest::Stat), 0);
        assert_eq!(complete(&mut ring, TreeRequest::Rename), 0);
        assert!(!dir.path().join("f1").exists() && dir.path().join("f2").exists());
        set(&mut ring, b"f2", b"");
        assert_eq!(complete(&mut ring, TreeRequest::Unlink), 0);
        assert_eq!(complete(&mut ring, TreeRequest::Stat), -libc::ENOENT);
        assert_eq!(ring.in_flight(), 0);
    }

    #[test]
    fn a_link_in_a_name_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("f1")).unwrap();
        let root = std::fs::File::open(dir.path()).unwrap();
        let Some(mut ring) = ring_or_skip(1, root.as_raw_fd(), b"x") else { return };
        let (p, _) = ring.paths(0);
        p.clear();
        b"f1".iter().for_each(|&c| p.push_byte(c));
        p.terminate();
        assert_eq!(complete(&mut ring, TreeRequest::Open { flags: libc::O_WRONLY }), -libc::ELOOP);
    }

    #[test]
    fn a_busy_slot_takes_no_second_request_and_lends_no_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::File::open(dir.path()).unwrap();
        let Some(mut ring) = ring_or_skip(2, root.as_raw_fd(), b"x") else { return };
        ring.push(0, TreeRequest::Stat);
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ring.push(0, TreeRequest::Stat)));
        assert!(again.is_err(), "a second request on a busy slot was queued");
        let path = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ring.paths(0);
        }));
        assert!(path.is_err(), "a busy slot's path was lent out");
        assert_eq!(ring.in_flight(), 1);
        ring.push(1, TreeRequest::Stat);
        assert_eq!(ring.in_flight(), 2, "another slot takes its own");
        // Dropped with both in flight: the ring waits for them.
    }
}
