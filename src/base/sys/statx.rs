//! statx(2)'s O_DIRECT alignment of a file or block device (STATX_DIOALIGN).
//!
//! A kernel call behind a safe function; it imports nothing of the crate.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// O_DIRECT alignment of an existing file or block device (offset, memory), `None` when the
/// kernel or filesystem does not report it.
pub fn dio_align(path: &Path) -> Option<(u64, u64)> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx fills the zeroed struct we own; `c_path` is NUL-terminated and lives
    // across the call.
    let stx = unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        let rc = libc::statx(libc::AT_FDCWD, c_path.as_ptr(), 0, libc::STATX_DIOALIGN, &mut stx);
        if rc != 0 {
            return None;
        }
        stx
    };
    if stx.stx_mask & libc::STATX_DIOALIGN == 0 || stx.stx_dio_offset_align == 0 {
        return None;
    }
    Some((u64::from(stx.stx_dio_offset_align), u64::from(stx.stx_dio_mem_align)))
}
