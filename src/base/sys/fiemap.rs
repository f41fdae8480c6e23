//! FS_IOC_FIEMAP: a file's extent map (linux/fiemap.h), a batch of extents at a time.
//!
//! A kernel call behind a safe function; it imports nothing of the crate.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

const FLAG_SYNC: u32 = 0x1;
/// The extent is the file's last.
pub const EXTENT_LAST: u32 = 0x1;
/// The extent is allocated but unwritten (reads of it return zeros).
pub const EXTENT_UNWRITTEN: u32 = 0x800;
const EXTENTS_PER_CALL: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Header {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// One extent of the map (`struct fiemap_extent`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Extent {
    pub fe_logical: u64,
    pub fe_physical: u64,
    pub fe_length: u64,
    fe_reserved64: [u64; 2],
    pub fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct Request {
    header: Header,
    extents: [Extent; EXTENTS_PER_CALL],
}

/// The buffer one call fills, reused from call to call.
pub struct Batch(Box<Request>);

impl Batch {
    pub fn new() -> Batch {
        Batch(Box::new(Request { header: Header::default(), extents: [Extent::default(); EXTENTS_PER_CALL] }))
    }
}

impl Default for Batch {
    fn default() -> Self {
        Batch::new()
    }
}

// FS_IOC_FIEMAP = _IOWR('f', 11, struct fiemap): the size is the header's.
nix::ioctl_readwrite!(fs_ioc_fiemap, b'f', 11, Header);

/// The extents of `file` from `start` over `len` bytes, at most a batch of them (`sync`:
/// the file's dirty data is flushed first, FIEMAP_FLAG_SYNC).
pub fn extents<'b>(file: &File, start: u64, len: u64, sync: bool, batch: &'b mut Batch) -> io::Result<&'b [Extent]> {
    let request = &mut *batch.0;
    request.header = Header {
        fm_start: start,
        fm_length: len,
        fm_flags: if sync { FLAG_SYNC } else { 0 },
        fm_mapped_extents: 0,
        fm_extent_count: EXTENTS_PER_CALL as u32,
        fm_reserved: 0,
    };
    // SAFETY: `request` is a live, exclusively borrowed Request: a fiemap header followed by
    // `fm_extent_count` extent slots, as FS_IOC_FIEMAP expects; the kernel writes at most
    // that many extents into it, and nothing else touches it meanwhile.
    unsafe { fs_ioc_fiemap(file.as_raw_fd(), &mut request.header as *mut Header) }.map_err(io::Error::from)?;
    let mapped = (request.header.fm_mapped_extents as usize).min(EXTENTS_PER_CALL);
    Ok(&request.extents[..mapped])
}
