//! Native AIO's system calls (io_setup, io_submit, io_getevents, io_destroy), made
//! directly (no C library), and the structures they share with the kernel: `iocb` and
//! `io_event` of `<linux/aio_abi.h>` and the head of the completion ring of fs/aio.c, their
//! layouts checked at compile time. Raw calls only: what to submit and when is the
//! engine's (`mod.rs`).

use std::io;
use std::ptr;

/// `IOCB_CMD_PREAD` of `<linux/aio_abi.h>`.
pub(super) const IOCB_CMD_PREAD: u16 = 0;
/// `IOCB_CMD_PWRITE`.
pub(super) const IOCB_CMD_PWRITE: u16 = 1;
/// `IOCB_CMD_FSYNC`: fsync the file (kernel 4.18+ for regular files).
pub(super) const IOCB_CMD_FSYNC: u16 = 2;
/// `IOCB_CMD_FDSYNC`: fdatasync the file.
pub(super) const IOCB_CMD_FDSYNC: u16 = 3;
/// `AIO_RING_MAGIC` of fs/aio.c: the ring layout user-space reaping relies on.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

/// `struct iocb` of `<linux/aio_abi.h>`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Iocb {
    pub(super) aio_data: u64,
    #[cfg(target_endian = "little")]
    pub(super) aio_key: u32,
    #[cfg(target_endian = "little")]
    pub(super) aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub(super) aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub(super) aio_key: u32,
    pub(super) aio_lio_opcode: u16,
    pub(super) aio_reqprio: i16,
    pub(super) aio_fildes: u32,
    pub(super) aio_buf: u64,
    pub(super) aio_nbytes: u64,
    pub(super) aio_offset: i64,
    pub(super) aio_reserved2: u64,
    pub(super) aio_flags: u32,
    pub(super) aio_resfd: u32,
}

/// `struct io_event` of `<linux/aio_abi.h>`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IoEvent {
    pub(super) data: u64,
    pub(super) obj: u64,
    pub(super) res: i64,
    pub(super) res2: i64,
}

/// The head of the completion ring the kernel maps at the context's address
/// (`struct aio_ring` of fs/aio.c); `io_event`s follow it.
#[repr(C)]
pub(super) struct AioRing {
    pub(super) id: u32,
    pub(super) nr: u32,
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) magic: u32,
    pub(super) compat_features: u32,
    pub(super) incompat_features: u32,
    pub(super) header_length: u32,
}

const _: () = assert!(size_of::<Iocb>() == 64, "struct iocb is 64 bytes in <linux/aio_abi.h>");
const _: () = assert!(size_of::<IoEvent>() == 32, "struct io_event is 32 bytes in <linux/aio_abi.h>");
const _: () = assert!(size_of::<AioRing>() == 32, "struct aio_ring is 32 bytes in fs/aio.c");
const _: () = assert!(std::mem::offset_of!(Iocb, aio_lio_opcode) == 16);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_fildes) == 20);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_buf) == 24);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_offset) == 40);
const _: () = assert!(std::mem::offset_of!(IoEvent, res) == 16);

/// io_setup(2): a context for `events` requests.
pub(super) fn io_setup(events: u32) -> io::Result<u64> {
    let mut ctx: u64 = 0;
    // SAFETY: io_setup writes one aio_context_t (u64) into `ctx`, which is zero as required.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, events as libc::c_long, &mut ctx as *mut u64) };
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(ctx) }
}

/// Whether the completion ring mapped at the context's address has the layout this
/// engine reads in user space (`AIO_RING_MAGIC`, no incompatible features).
///
/// # Safety
/// `ring` is the address of a live context (`io_setup`).
pub(super) unsafe fn ring_layout_is_known(ring: *const AioRing) -> bool {
    // SAFETY: the kernel maps the ring's 32-byte header at the context's address for as
    // long as the context lives (the caller's contract); it is only read.
    unsafe {
        (*ring).magic == AIO_RING_MAGIC
            && (*ring).incompat_features == 0
            && (*ring).header_length as usize == size_of::<AioRing>()
            && (*ring).nr > 0
    }
}

/// io_submit(2) of `iocbs`: how many the kernel took (0: none, no room).
///
/// # Safety
/// Each pointer is to an iocb whose buffer stays valid and untouched until its
/// completion is reaped.
#[inline]
pub(super) unsafe fn io_submit(ctx: u64, iocbs: &[*mut Iocb]) -> io::Result<usize> {
    // SAFETY: the kernel reads the array and the iocbs only during the call; their buffers
    // are the caller's to keep valid.
    let r = unsafe { libc::syscall(libc::SYS_io_submit, ctx, iocbs.len() as libc::c_long, iocbs.as_ptr()) };
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r as usize) }
}

/// io_getevents(2): waits for at least `min` events into `events` (no longer than
/// `timeout`, if given); how many arrived.
#[inline]
pub(super) fn io_getevents(
    ctx: u64,
    min: usize,
    events: &mut [IoEvent],
    timeout: Option<&mut libc::timespec>,
) -> io::Result<usize> {
    let timeout = timeout.map_or(ptr::null_mut(), |t| t as *mut libc::timespec);
    // SAFETY: `events` holds `events.len()` io_events the kernel may write; the timeout is
    // null (wait without limit) or borrowed for the whole call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min as libc::c_long,
            events.len() as libc::c_long,
            events.as_mut_ptr(),
            timeout,
        )
    };
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r as usize) }
}

/// io_destroy(2): ends the context, after waiting for what is still in flight.
pub(super) fn io_destroy(ctx: u64) {
    // SAFETY: io_destroy takes only the context id; an unknown one is refused (EINVAL).
    unsafe {
        libc::syscall(libc::SYS_io_destroy, ctx);
    }
}
