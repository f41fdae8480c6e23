//! `mmap`: each worker maps every target shared (read-only, or read-write when
//! the run writes); a read copies from the mapping into the slot buffer, a
//! write copies the slot buffer into the mapping, so every I/O moves its bytes.
//! One I/O at a time per worker, completed inside `queue`.
//!
//! Page faults are part of what is measured: the mapping is not prefaulted
//! unless `--mmap-populate` (MAP_POPULATE) is given. `--madvise` passes advice
//! for the whole mapping. Files are laid out to size before the run, so the
//! mapping never has to grow a file; O_DIRECT does not apply (refused at
//! validation). Writes are made durable at the end with msync, timed outside
//! the I/O window (`sync_writes`).
//!
//! A page of a file truncated by someone else during the run raises SIGBUS
//! when touched. A process-wide handler, armed per copy through thread-local
//! state, maps an anonymous page over the missing one so that the copy can
//! finish, and records the address; the engine then completes the request
//! with the bytes moved before the missing page (a short transfer, which the
//! worker reports with the file and offset) or, if the file still covers that
//! page, with EIO. A SIGBUS outside an armed copy goes to the handler that was
//! there before (or kills the process as usual).

mod guard;
pub mod options;
mod sys;

use super::{Completion, Engine, EngineCaps, EngineError, EngineSetup, Madvise, Op, Queued, Request};
use crate::base::sys::buffer::BufferRegion;
use std::io;
use std::os::fd::{BorrowedFd, RawFd};
use std::ptr;

/// One target's mapping.
struct Mapping {
    base: *mut u8,
    len: usize,
    fd: RawFd,
    writable: bool,
}

pub struct MmapEngine {
    maps: Box<[Mapping]>,
    buffers: BufferRegion,
    populate: bool,
    advice: Option<Madvise>,
    /// A write was copied into a mapping since the last msync.
    wrote: bool,
}

impl Engine for MmapEngine {
    const NAME: &'static str = "mmap";
    const CAPS: EngineCaps = EngineCaps {
        completes_inline: true,
        touches_storage: true,
        supports_direct: false,
        batches_submissions: false,
        writes_through_descriptor: false,
    };

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        guard::install().map_err(|e| EngineError::new("install the SIGBUS handler for mapped files", e))?;
        let populate = setup.options.mmap_populate;
        let advice = setup.options.madvise;
        let mut maps = Vec::with_capacity(setup.fds.len());
        for (i, &fd) in setup.fds.iter().enumerate() {
            let which = || format!("target #{} of {}", i + 1, setup.fds.len());
            let len = sys::mappable_len(fd).map_err(|e| EngineError::new(format!("size of {}", which()), e))?;
            if len == 0 {
                return Err(EngineError::new(
                    format!("mmap {}", which()),
                    io::Error::other("the file is empty: nothing to map"),
                ));
            }
            let len = usize::try_from(len).map_err(|_| {
                EngineError::new(format!("mmap {}", which()), io::Error::other("larger than the address space"))
            })?;
            let writable =
                sys::opened_for_writing(fd).map_err(|e| EngineError::new(format!("fcntl {}", which()), e))?;
            let base = sys::map_shared(fd, len, writable, populate)
                .map_err(|e| EngineError::new(format!("mmap {} ({len} bytes)", which()), e))?;
            maps.push(Mapping { base, len, fd, writable });
            if let Some(advice) = advice {
                // SAFETY: advice over exactly the mapping made above.
                if let Err(e) = unsafe { sys::advise(base, len, advice) } {
                    // `maps` is dropped on return without the engine: unmap by hand.
                    for m in &maps {
                        // SAFETY: each was mapped above with this length and is not used again.
                        unsafe { sys::unmap(m.base, m.len) };
                    }
                    return Err(EngineError::new(
                        format!("madvise({}) on {}: the kernel refused the advice", advice.name(), which()),
                        e,
                    ));
                }
            }
        }
        Ok(Self { maps: maps.into_boxed_slice(), buffers: setup.buffers, populate, advice, wrote: false })
    }

    #[inline]
    unsafe fn queue(&mut self, req: Request) -> Queued {
        let m = &self.maps[req.file as usize];
        if req.op.is_flush() {
            // A flush of a mapping is msync(MS_SYNC) over it (on Linux the same
            // write-back and device flush as fdatasync of the file).
            // SAFETY: msync over exactly one of our mappings; no memory is read or written.
            let r = unsafe { sys::sync(m.base, m.len) };
            return Queued::Done(r.map_or_else(|e| -i64::from(e.raw_os_error().unwrap_or(libc::EIO)), |()| 0));
        }
        if req.op == Op::Trim {
            // A punched hole in the file: the shared mapping reads zeros there after it.
            return Queued::Done(super::discard::discard(m.fd, false, req.offset_bytes, req.len_bytes.into()));
        }
        let offset = req.offset_bytes as usize;
        if offset >= m.len {
            return Queued::Done(0);
        }
        let len = (req.len_bytes as usize).min(m.len - offset);
        let mapped = m.base.wrapping_add(offset);
        let slot = self.buffers.data_ptr(req.slot, req.buffer);
        guard::arm(mapped as usize, len);
        match req.op {
            // SAFETY: `mapped..mapped+len` lies inside the mapping (checked above) and the
            // slot holds at least `len` bytes (queue's contract); the two never overlap (the
            // slot is heap memory). A page of the mapping missing from the file raises SIGBUS,
            // which the armed guard turns into an anonymous page and a recorded fault.
            Op::Read => unsafe { ptr::copy_nonoverlapping(mapped, slot, len) },
            Op::Write => {
                if !m.writable {
                    guard::disarm();
                    return Queued::Done(-i64::from(libc::EBADF));
                }
                self.wrote = true;
                // SAFETY: as for reads, in the other direction; the mapping is writable.
                unsafe { ptr::copy_nonoverlapping(slot, mapped, len) }
            }
            Op::Fsync | Op::Fdatasync | Op::Trim => unreachable!("flushes and trims return above"),
        }
        let fault = guard::disarm();
        if fault != 0 {
            return Queued::Done(self.after_fault(req.file, req.op, mapped as usize, len, fault));
        }
        Queued::Done(len as i64)
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(&mut self, _min: usize, _out: &mut [Completion]) -> Result<usize, EngineError> {
        Ok(0)
    }

    fn setup_facts(&self) -> Vec<(String, String)> {
        let writable = self.maps.iter().any(|m| m.writable);
        vec![
            ("mapping".into(), if writable { "MAP_SHARED, read-write" } else { "MAP_SHARED, read-only" }.into()),
            ("mapped_bytes".into(), self.maps.iter().map(|m| m.len as u64).sum::<u64>().to_string()),
            ("populate".into(), if self.populate { "MAP_POPULATE" } else { "no (faults are measured)" }.into()),
            ("madvise".into(), self.advice.map_or("none", Madvise::name).into()),
        ]
    }

    fn sync_writes(&mut self) -> Result<bool, EngineError> {
        if !self.wrote {
            return Ok(false);
        }
        self.wrote = false;
        for (i, m) in self.maps.iter().enumerate().filter(|(_, m)| m.writable) {
            // SAFETY: msync over exactly one of our mappings.
            if let Err(e) = unsafe { sys::sync(m.base, m.len) } {
                return Err(EngineError::new(format!("msync of target #{} of {}", i + 1, self.maps.len()), e));
            }
        }
        Ok(true)
    }
}

impl MmapEngine {
    /// A copy hit a page missing from the file (SIGBUS). Puts the file back under the pages
    /// the guard replaced, and returns the request's result: the bytes moved before the first
    /// missing page when the file now ends before it (truncated during the run), ENOSPC (or
    /// EDQUOT) for a write the filesystem had no room for, EIO otherwise.
    #[cold]
    #[inline(never)]
    fn after_fault(&mut self, file: u32, op: Op, copy_start: usize, len: usize, fault_page: usize) -> i64 {
        let m = &self.maps[file as usize];
        let moved = fault_page.saturating_sub(copy_start).min(len);
        let fault_offset = (fault_page - m.base as usize) as u64;
        // SAFETY: the target's descriptor stays open while the engine exists (the mapping
        // and msync rely on it too); the borrow ends with this function.
        let fd = unsafe { BorrowedFd::borrow_raw(m.fd) };
        let result = match nix::sys::stat::fstat(fd) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFREG && fault_offset >= st.st_size as u64 => moved as i64,
            Ok(_) if op == Op::Write => -i64::from(write_fault_errno(fd, fault_offset)),
            _ => -i64::from(libc::EIO),
        };
        self.remap_file_pages(file, copy_start, len);
        result
    }

    /// The guard mapped anonymous pages over the missing ones so that the copy could end;
    /// left there, later I/Os on those pages would "succeed" without reaching the file.
    /// Maps the file back over every page of the copy (a page that is still missing faults
    /// again next time). If that fails (the kernel is out of mappings), the whole mapping
    /// is dropped and every later I/O on it completes short, reported with its offset.
    fn remap_file_pages(&mut self, file: u32, copy_start: usize, len: usize) {
        let page = guard::page_bytes();
        let m = &mut self.maps[file as usize];
        let base = m.base as usize;
        let lo = copy_start & !(page - 1);
        let hi = (copy_start + len).next_multiple_of(page).min(base + m.len.next_multiple_of(page));
        // SAFETY: `lo..hi` lies inside our own mapping of this file (page-aligned, the
        // mapping's base is page-aligned), and no copy is running on this thread; MAP_FIXED
        // replaces exactly those pages with the file's, at their offsets.
        let back = unsafe { sys::remap_file(lo as *mut u8, hi - lo, m.writable, m.fd, (lo - base) as u64) };
        if back.is_err() {
            // SAFETY: unmaps our own mapping, which nothing refers to any more (len 0 below
            // sends every later request to the short-transfer path before it is touched).
            unsafe { sys::unmap(m.base, m.len) };
            m.len = 0;
        }
    }
}

/// Why a store into a page inside the file failed: the filesystem is asked to allocate
/// that page (fallocate, keeping the size: the run writes there anyway). ENOSPC or EDQUOT
/// is the answer write(2) would have given; where fallocate is not supported, a filesystem
/// with no room left (statvfs) means ENOSPC; else the page could not be had (EIO).
fn write_fault_errno(fd: BorrowedFd<'_>, fault_offset: u64) -> i32 {
    use nix::errno::Errno;
    use nix::fcntl::{FallocateFlags, fallocate};
    let page = guard::page_bytes() as libc::off_t;
    match fallocate(fd, FallocateFlags::FALLOC_FL_KEEP_SIZE, fault_offset as libc::off_t, page) {
        Err(e @ (Errno::ENOSPC | Errno::EDQUOT)) => e as i32,
        Err(Errno::EOPNOTSUPP) => {
            let full = nix::sys::statvfs::fstatvfs(fd)
                .is_ok_and(|v| v.blocks_available().saturating_mul(v.fragment_size()) < page as u64);
            if full { libc::ENOSPC } else { libc::EIO }
        }
        _ => libc::EIO,
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in self.maps.iter() {
            // SAFETY: each mapping was made in `open` with this length and is not used
            // after the engine is gone.
            unsafe { sys::unmap(m.base, m.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sys::buffer::{BufferAt, SlotBuffers};
    use crate::io::engine::EngineOptions;
    use std::fs::OpenOptions;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    fn open_engine(fd: RawFd, buffers: &SlotBuffers, options: &EngineOptions) -> Result<MmapEngine, EngineError> {
        let fds = [fd];
        MmapEngine::open(&EngineSetup { fds: &fds, buffers: buffers.region(), queue_depth: 1, direct: false, options })
    }

    #[test]
    fn reads_and_writes_move_bytes_at_their_offsets_and_msync_reports_work() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..16 * 4096).map(|i: usize| (i / 4096) as u8).collect();
        f.as_file().write_all_at(&data, 0).unwrap();
        let file = OpenOptions::new().read(true).write(true).open(f.path()).unwrap();
        let mut buffers = SlotBuffers::new(1, 4096, 4096).unwrap();
        let mut e = open_engine(file.as_raw_fd(), &buffers, &EngineOptions::default()).unwrap();
        let read =
            Request { slot: 0, op: Op::Read, file: 0, offset_bytes: 5 * 4096, len_bytes: 4096, buffer: BufferAt::Slot };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(read) }, Queued::Done(4096));
        assert!(buffers.slot_mut(0).iter().all(|&b| b == 5));
        assert!(!e.sync_writes().unwrap(), "nothing written, nothing to msync");
        buffers.slot_mut(0).fill(0xab);
        let write = Request {
            slot: 0,
            op: Op::Write,
            file: 0,
            offset_bytes: 9 * 4096,
            len_bytes: 4096,
            buffer: BufferAt::Slot,
        };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(write) }, Queued::Done(4096));
        assert!(e.sync_writes().unwrap());
        drop(e);
        let back = std::fs::read(f.path()).unwrap();
        assert!(back[9 * 4096..10 * 4096].iter().all(|&b| b == 0xab));
        assert!(back[8 * 4096..9 * 4096].iter().all(|&b| b == 8));
    }

    #[test]
    fn every_advice_and_populate_are_accepted() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().write_all_at(&[1u8; 65536], 0).unwrap();
        let buffers = SlotBuffers::new(1, 4096, 4096).unwrap();
        for advice in [None, Some(Madvise::Random), Some(Madvise::Sequential), Some(Madvise::Willneed)] {
            for populate in [false, true] {
                let options = EngineOptions { mmap_populate: populate, madvise: advice, ..EngineOptions::default() };
                let e = open_engine(f.as_file().as_raw_fd(), &buffers, &options).unwrap();
                let facts = e.setup_facts();
                assert!(facts.iter().any(|(k, v)| k == "madvise" && v == advice.map_or("none", Madvise::name)));
            }
        }
    }

    #[test]
    fn a_truncated_file_gives_a_short_transfer_not_a_crash() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().write_all_at(&[7u8; 8 * 4096], 0).unwrap();
        let mut buffers = SlotBuffers::new(1, 8192, 4096).unwrap();
        let mut e = open_engine(f.as_file().as_raw_fd(), &buffers, &EngineOptions::default()).unwrap();
        f.as_file().set_len(3 * 4096).unwrap();
        // Block 2..4: the first page is still in the file, the second is gone.
        let read =
            Request { slot: 0, op: Op::Read, file: 0, offset_bytes: 2 * 4096, len_bytes: 8192, buffer: BufferAt::Slot };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(read) }, Queued::Done(4096));
        assert!(buffers.slot_mut(0)[..4096].iter().all(|&b| b == 7));
        let gone =
            Request { slot: 0, op: Op::Read, file: 0, offset_bytes: 6 * 4096, len_bytes: 4096, buffer: BufferAt::Slot };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(gone) }, Queued::Done(0));
        let fine = Request { slot: 0, op: Op::Read, file: 0, offset_bytes: 0, len_bytes: 4096, buffer: BufferAt::Slot };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(fine) }, Queued::Done(4096), "the guard is disarmed after a fault");
    }

    #[test]
    fn a_page_lost_to_a_fault_is_the_file_again_afterwards() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().write_all_at(&[7u8; 8 * 4096], 0).unwrap();
        let mut buffers = SlotBuffers::new(1, 4096, 4096).unwrap();
        let mut e = open_engine(f.as_file().as_raw_fd(), &buffers, &EngineOptions::default()).unwrap();
        f.as_file().set_len(3 * 4096).unwrap();
        let page6 =
            Request { slot: 0, op: Op::Read, file: 0, offset_bytes: 6 * 4096, len_bytes: 4096, buffer: BufferAt::Slot };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(page6) }, Queued::Done(0));
        // The file grows back and page 6 gets new bytes: the mapping shows them, not the
        // stand-in page the guard used to leave there.
        f.as_file().write_all_at(&[9u8; 5 * 4096], 3 * 4096).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { e.queue(page6) }, Queued::Done(4096));
        assert!(buffers.slot_mut(0).iter().all(|&b| b == 9), "read the file, not a stand-in page");
    }
}
