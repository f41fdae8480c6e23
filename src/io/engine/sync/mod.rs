//! `sync`: pread/pwrite, one I/O at a time per worker, completed inside
//! `queue`. A short transfer is continued from where it stopped; a transfer
//! that makes no progress (end of file) returns what was moved.

mod sys;

use super::{Completion, Engine, EngineCaps, EngineError, EngineSetup, Op, Queued, Request, neg_errno};
use crate::base::sys::buffer::BufferRegion;
use std::os::fd::RawFd;

pub struct SyncEngine {
    fds: Vec<RawFd>,
    /// Which descriptors are block devices (a trim is then BLKDISCARD).
    block_devices: Box<[bool]>,
    buffers: BufferRegion,
}

impl Engine for SyncEngine {
    const NAME: &'static str = "sync";
    const CAPS: EngineCaps = EngineCaps {
        completes_inline: true,
        touches_storage: true,
        supports_direct: true,
        batches_submissions: false,
        writes_through_descriptor: true,
    };

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        Ok(Self {
            fds: setup.fds.to_vec(),
            block_devices: super::discard::block_devices(setup.fds),
            buffers: setup.buffers,
        })
    }

    unsafe fn queue(&mut self, req: Request) -> Queued {
        let fd = self.fds[req.file as usize];
        if req.op.is_flush() {
            return Queued::Done(flush_fd(fd, req.op));
        }
        if req.op == Op::Trim {
            let block_device = self.block_devices[req.file as usize];
            return Queued::Done(super::discard::discard(fd, block_device, req.offset_bytes, req.len_bytes.into()));
        }
        let base = self.buffers.data_ptr(req.slot, req.buffer);
        let len = req.len_bytes as usize;
        let mut done = 0usize;
        while done < len {
            let offset = (req.offset_bytes + done as u64) as libc::off_t;
            // SAFETY: by `queue`'s contract the slot holds at least `len` bytes that
            // nothing else touches during this call; `done < len` keeps the pointer
            // and length inside it; `fd` is a descriptor the worker keeps open.
            let n = unsafe {
                let ptr = base.add(done);
                match req.op {
                    Op::Read => sys::pread(fd, ptr, len - done, offset),
                    Op::Write => sys::pwrite(fd, ptr, len - done, offset),
                    Op::Fsync | Op::Fdatasync | Op::Trim => unreachable!("flushes and trims return above"),
                }
            };
            if n < 0 {
                let err = neg_errno();
                if err == -i64::from(libc::EINTR) {
                    continue;
                }
                return Queued::Done(err);
            }
            if n == 0 {
                break; // end of file: report the short count
            }
            done += n as usize;
        }
        Queued::Done(done as i64)
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(&mut self, _min: usize, _out: &mut [Completion]) -> Result<usize, EngineError> {
        Ok(0)
    }
}

/// fsync(2) or fdatasync(2) on `fd` (`op` is a flush): 0, or a negated errno.
pub fn flush_fd(fd: RawFd, op: Op) -> i64 {
    loop {
        let r = if op == Op::Fsync { sys::fsync(fd) } else { sys::fdatasync(fd) };
        if r == 0 {
            return 0;
        }
        let err = neg_errno();
        if err != -i64::from(libc::EINTR) {
            return err;
        }
    }
}
