//! Aligned I/O buffers: one allocation per worker, cut into `queue_depth`
//! slots of one block each, allocated once before the run starts.
//!
//! O_DIRECT needs memory aligned to the device (statx `dio_mem_align`); the
//! slots are page aligned, which satisfies every device. The slot index is the
//! kernel cookie; a slot's bytes are never touched while its I/O is in flight
//! (the worker keeps that invariant, the engines rely on it).

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// The raw description of a worker's slots that engines receive: where slot
/// `i` starts and how long it is. Plain data; it does not own the memory.
#[derive(Clone, Copy, Debug)]
pub struct BufferRegion {
    pub base: *mut u8,
    pub slot_stride_bytes: usize,
    pub slot_len_bytes: usize,
    pub slots: usize,
}

impl BufferRegion {
    /// Start of slot `slot`. Pointer arithmetic only; dereferencing is the engine's business.
    #[inline(always)]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        self.base.wrapping_add(slot as usize * self.slot_stride_bytes)
    }
}

/// Owns the worker's slot memory.
pub struct SlotBuffers {
    ptr: NonNull<u8>,
    layout: Layout,
    region: BufferRegion,
}

// SAFETY: SlotBuffers owns its allocation exclusively; moving it to another
// thread moves that ownership (it is built by the coordinator's plan, used by
// one worker thread).
unsafe impl Send for SlotBuffers {}

impl SlotBuffers {
    /// `slots` buffers of `slot_len_bytes`, each starting on an `align`-byte boundary.
    pub fn new(slots: usize, slot_len_bytes: usize, align: usize) -> Result<Self, String> {
        let align = align.max(4096).next_power_of_two();
        let stride =
            slot_len_bytes.checked_next_multiple_of(align).ok_or_else(|| "buffer size overflows".to_string())?;
        let total = stride
            .checked_mul(slots.max(1))
            .ok_or_else(|| format!("{slots} buffers of {slot_len_bytes} bytes overflow memory"))?;
        let layout = Layout::from_size_align(total, align).map_err(|e| e.to_string())?;
        // SAFETY: `layout` has a non-zero size (stride >= align >= 4096).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            format!("cannot allocate {total} bytes of I/O buffers ({slots} x {slot_len_bytes} bytes)")
        })?;
        let region = BufferRegion { base: ptr.as_ptr(), slot_stride_bytes: stride, slot_len_bytes, slots };
        Ok(Self { ptr, layout, region })
    }

    pub fn region(&self) -> BufferRegion {
        self.region
    }

    pub fn slots(&self) -> usize {
        self.region.slots
    }

    /// Length of the whole allocation (every slot, padding included).
    pub fn len_bytes(&self) -> usize {
        self.layout.size()
    }

    /// Writes every page (keeping its bytes) so that each one is allocated now, on
    /// the node the thread's memory policy chooses, and not by a first I/O inside
    /// the measured window. Call at set-up, before any I/O uses the slots.
    pub fn touch_pages(&mut self) {
        const PAGE: usize = 4096;
        let mut offset = 0;
        while offset < self.layout.size() {
            // SAFETY: `offset` is inside our allocation; `&mut self` means no other
            // reference exists, and no I/O is in flight at set-up.
            unsafe {
                let p = self.ptr.as_ptr().add(offset);
                p.write_volatile(p.read_volatile());
            }
            offset += PAGE;
        }
    }

    /// The bytes of one slot. The caller must not hold it across an I/O on that slot:
    /// `&mut self` makes that hold for safe code; engines see only the raw region.
    #[inline(always)]
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        assert!((slot as usize) < self.region.slots);
        // SAFETY: the slot lies inside our allocation (checked above), and `&mut self`
        // guarantees no other reference from safe code exists.
        unsafe { std::slice::from_raw_parts_mut(self.region.slot_ptr(slot), self.region.slot_len_bytes) }
    }

    /// The bytes of one slot, read-only.
    #[inline(always)]
    pub fn slot(&self, slot: u32) -> &[u8] {
        assert!((slot as usize) < self.region.slots);
        // SAFETY: as in `slot_mut`; shared access only.
        unsafe { std::slice::from_raw_parts(self.region.slot_ptr(slot), self.region.slot_len_bytes) }
    }
}

impl Drop for SlotBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this exact layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut b = SlotBuffers::new(3, 5000, 512).unwrap();
        let r = b.region();
        for s in 0..3 {
            assert_eq!(r.slot_ptr(s) as usize % 4096, 0);
        }
        assert!(r.slot_stride_bytes >= 5000);
        b.slot_mut(2).fill(7);
        assert!(b.slot(1).iter().all(|&x| x == 0));
        assert_eq!(b.slot(2).len(), 5000);
    }
}
