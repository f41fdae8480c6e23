//! io_uring's system calls the io-uring crate does not make for us, and their structures
//! from <linux/io_uring.h> (the crate keeps its bindings private): `io_uring_enter` with
//! a registered ring index and an optional timeout, and registering the ring's fd with
//! the thread. Raw calls only: what to submit and when is the engine's (`mod.rs`).

use std::io;
use std::os::fd::RawFd;

pub(super) const ENTER_GETEVENTS: u32 = 1 << 0;
pub(super) const ENTER_SQ_WAKEUP: u32 = 1 << 1;
const ENTER_EXT_ARG: u32 = 1 << 3;
const ENTER_REGISTERED_RING: u32 = 1 << 4;
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

/// `struct io_uring_getevents_arg`: what io_uring_enter reads with IORING_ENTER_EXT_ARG.
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// `struct __kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// How io_uring_enter names the ring.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ring {
    Fd(RawFd),
    /// Its index among the calling thread's registered rings (`register_ring_fd`).
    Registered(u32),
}

/// io_uring_enter(2): submits `to_submit` entries and waits for `min_complete`
/// completions, at most `timeout_ns` when given; returns how many entries were submitted.
///
/// # Safety
/// Every submitted entry points at memory that stays valid and untouched until its
/// completion is reaped.
#[inline]
pub(super) unsafe fn enter(
    ring: Ring,
    to_submit: u32,
    min_complete: u32,
    mut flags: u32,
    timeout_ns: Option<u64>,
) -> io::Result<u32> {
    let fd = match ring {
        Ring::Fd(fd) => fd as libc::c_long,
        Ring::Registered(index) => {
            flags |= ENTER_REGISTERED_RING;
            index as libc::c_long
        }
    };
    let ts = timeout_ns
        .map(|ns| KernelTimespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 });
    let arg = ts.as_ref().map(|ts| GeteventsArg {
        sigmask: 0,
        sigmask_sz: 0,
        min_wait_usec: 0,
        ts: ts as *const KernelTimespec as u64,
    });
    let (arg_ptr, arg_bytes) = match &arg {
        Some(arg) => {
            flags |= ENTER_EXT_ARG;
            (arg as *const GeteventsArg as *const libc::c_void, std::mem::size_of::<GeteventsArg>())
        }
        None => (std::ptr::null(), 0),
    };
    // SAFETY: the caller keeps every submitted entry's memory valid; the argument struct
    // and the timespec live on this frame for the whole call (the kernel copies them in
    // before waiting).
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            libc::c_long::from(to_submit),
            libc::c_long::from(min_complete),
            libc::c_long::from(flags),
            arg_ptr,
            arg_bytes as libc::c_long,
        )
    };
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r as u32) }
}

/// Registers the ring's fd with the calling thread (IORING_REGISTER_RING_FDS, 5.18), so
/// io_uring_enter skips the fd table: its index, or `None` if the kernel refuses.
pub(super) fn register_ring_fd(ring_fd: RawFd) -> Option<u32> {
    let mut update = RsrcUpdate { offset: u32::MAX, resv: 0, data: ring_fd as u64 };
    // SAFETY: IORING_REGISTER_RING_FDS reads and writes one io_uring_rsrc_update we own.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd as libc::c_long,
            libc::c_long::from(REGISTER_RING_FDS),
            &mut update as *mut RsrcUpdate,
            1 as libc::c_long,
        )
    };
    (r == 1).then_some(update.offset)
}

/// Gives back the thread's registration `index` of the ring `ring_fd`.
pub(super) fn unregister_ring_fd(ring_fd: RawFd, index: u32) {
    let update = RsrcUpdate { offset: index, resv: 0, data: 0 };
    // SAFETY: IORING_UNREGISTER_RING_FDS reads one io_uring_rsrc_update we own.
    unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd as libc::c_long,
            libc::c_long::from(UNREGISTER_RING_FDS),
            &update as *const RsrcUpdate,
            1 as libc::c_long,
        );
    }
}
