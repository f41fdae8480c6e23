//! Aligned I/O buffers: one allocation per worker, cut into `queue_depth`
//! slots of one block each, allocated once before the run starts.
//!
//! O_DIRECT needs memory aligned to the device (statx `dio_mem_align`); the
//! slots are page aligned, which satisfies every device. The slot index is the
//! kernel cookie; a slot's bytes are never touched while its I/O is in flight
//! (the worker keeps that invariant, the engines rely on it).
//!
//! A worker's buffers of 1 MiB or more are mapped directly, in whole 2 MiB huge pages
//! (`reserved_bytes`, which the memory plan counts too), and asked for transparent huge
//! pages (MADV_HUGEPAGE) before their first touch: an O_DIRECT request then pins a few
//! large folios instead of one 4 KiB page at a time (the kernel's page pinning was two
//! thirds of a 16 MiB write's CPU time), and its physically contiguous pages make
//! fewer, larger segments for the device (128 KiB reads at QD 8 went from 11K to 26K
//! per second on this VM's disk). Where the kernel gives no huge pages, the buffers are
//! plain pages, as before. `--buffer-pages base` asks for base pages instead (advised
//! MADV_NOHUGEPAGE, so that a system whose transparent huge pages are `always` does not
//! give them anyway): the buffers of a program that allocates 4 KiB pages, as fio does
//! unless `--iomem=shmhuge`, whose large requests the device's segment limit splits.
//!
//! Beside the slots a worker writing `unique` data has its *area* (`data::unique`): the
//! random base repeated, which writes are submitted from, a window at a time, without a
//! copy. It is mapped the same way, and a request says which memory it uses (`BufferAt`).

use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, munmap};
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::num::NonZeroUsize;
use std::ptr::NonNull;

/// A transparent huge page (x86-64 and arm64 with 4 KiB pages).
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The bytes a worker's buffers of `total` bytes (slots × aligned block) really hold:
/// from half a huge page on, whole huge pages (alignment up to a page; `huge`: not asked
/// for base pages); below it, the slots alone. The one rule, for the allocation and for
/// the memory plan.
pub fn reserved_bytes(total: usize, align: usize, huge: bool) -> usize {
    if on_huge_pages(total, align, huge) { total.next_multiple_of(HUGE_PAGE_BYTES) } else { total }
}

/// Whether buffers of `total` bytes are mapped in whole huge pages (`reserved_bytes`).
fn on_huge_pages(total: usize, align: usize, huge: bool) -> bool {
    huge && total >= HUGE_PAGE_BYTES / 2 && align.max(4096).next_power_of_two() <= 4096
}

/// Where a request's bytes are: its slot's own buffer, or a window of the worker's area
/// starting this many bytes into it (writes of `unique` data).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferAt {
    #[default]
    Slot,
    Area(u64),
}

/// The raw description of a worker's slots that engines receive: where slot
/// `i` starts and how long it is, and where the area is. Plain data; it does not own the
/// memory.
#[derive(Clone, Copy, Debug)]
pub struct BufferRegion {
    pub base: *mut u8,
    pub slot_stride_bytes: usize,
    pub slot_len_bytes: usize,
    pub slots: usize,
    /// The area (`BufferAt::Area`), or null with a length of 0.
    pub area: *mut u8,
    pub area_len_bytes: usize,
}

impl BufferRegion {
    /// Start of slot `slot`. Pointer arithmetic only; dereferencing is the engine's business.
    #[inline(always)]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        self.base.wrapping_add(slot as usize * self.slot_stride_bytes)
    }

    /// Start of the bytes of a request on `slot` whose data is `at`. Pointer arithmetic
    /// only, as `slot_ptr`.
    #[inline(always)]
    pub fn data_ptr(&self, slot: u32, at: BufferAt) -> *mut u8 {
        match at {
            BufferAt::Slot => self.slot_ptr(slot),
            BufferAt::Area(offset) => {
                debug_assert!((offset as usize) < self.area_len_bytes);
                self.area.wrapping_add(offset as usize)
            }
        }
    }
}

/// Owns the worker's slot memory (and its area, if any).
pub struct SlotBuffers {
    ptr: NonNull<u8>,
    backing: Backing,
    /// The area's mapping and its length (rounded as `reserved_bytes`), if there is one.
    area: Option<(NonNull<u8>, usize)>,
    region: BufferRegion,
}

/// Where the slots' memory comes from (and how it is given back).
enum Backing {
    /// The allocator, with this layout (small buffers).
    Heap(Layout),
    /// An anonymous mapping of this many bytes, advised for huge pages.
    Mapped(usize),
}

// SAFETY: SlotBuffers owns its allocation exclusively; moving it to another
// thread moves that ownership (it is built by the coordinator's plan, used by
// one worker thread).
unsafe impl Send for SlotBuffers {}

/// A new private anonymous mapping of `len` bytes, asked for huge pages before any touch
/// (`huge`), or kept on base pages even where the system gives every mapping huge pages
/// (transparent huge pages `always`), as a program's own 4 KiB pages are.
fn map_pages(len: usize, huge: bool, cannot: impl Fn() -> String) -> Result<NonNull<u8>, String> {
    let len_nz = NonZeroUsize::new(len).ok_or_else(&cannot)?;
    let prot = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
    // SAFETY: a new private anonymous mapping, which no other memory overlaps; its owner
    // unmaps it once, in Drop.
    let mapped = unsafe { mmap_anonymous(None, len_nz, prot, MapFlags::MAP_PRIVATE) }
        .map_err(|e| format!("{}: {e}", cannot()))?;
    let advice = if huge { MmapAdvise::MADV_HUGEPAGE } else { MmapAdvise::MADV_NOHUGEPAGE };
    // SAFETY: advice on the whole of the mapping just made, before any page of it is
    // touched; it changes no content. A kernel without transparent huge pages refuses it,
    // and the memory keeps plain pages.
    let _ = unsafe { madvise(mapped, len, advice) };
    Ok(mapped.cast::<u8>())
}

impl SlotBuffers {
    /// `slots` buffers of `slot_len_bytes`, each starting on an `align`-byte boundary.
    pub fn new(slots: usize, slot_len_bytes: usize, align: usize) -> Result<Self, String> {
        Self::with_area(slots, slot_len_bytes, align, 0, true)
    }

    /// `new`, and an area of `area_len_bytes` (none if 0), page aligned, mapped apart;
    /// `huge`: buffers of 1 MiB or more on huge pages (else base pages, `--buffer-pages`).
    pub fn with_area(
        slots: usize,
        slot_len_bytes: usize,
        align: usize,
        area_len_bytes: usize,
        huge: bool,
    ) -> Result<Self, String> {
        let align = align.max(4096).next_power_of_two();
        let stride =
            slot_len_bytes.checked_next_multiple_of(align).ok_or_else(|| "buffer size overflows".to_string())?;
        let total = stride
            .checked_mul(slots.max(1))
            .ok_or_else(|| format!("{slots} buffers of {slot_len_bytes} bytes overflow memory"))?;
        let cannot = || format!("cannot allocate {total} bytes of I/O buffers ({slots} x {slot_len_bytes} bytes)");
        // A mapping is page aligned: it serves every alignment up to a page.
        let (ptr, backing) = if on_huge_pages(total, align, huge) {
            let total = reserved_bytes(total, align, huge);
            (map_pages(total, true, cannot)?, Backing::Mapped(total))
        } else if !huge && total >= HUGE_PAGE_BYTES / 2 && align <= 4096 {
            // Base pages asked for: mapped apart and advised so, as large as it is.
            let total = total.next_multiple_of(4096);
            (map_pages(total, false, cannot)?, Backing::Mapped(total))
        } else {
            let layout = Layout::from_size_align(total, align).map_err(|e| e.to_string())?;
            // SAFETY: `layout` has a non-zero size (stride >= align >= 4096).
            let raw = unsafe { alloc_zeroed(layout) };
            (NonNull::new(raw).ok_or_else(cannot)?, Backing::Heap(layout))
        };
        let mut buffers = Self {
            ptr,
            backing,
            area: None,
            region: BufferRegion {
                base: ptr.as_ptr(),
                slot_stride_bytes: stride,
                slot_len_bytes,
                slots,
                area: std::ptr::null_mut(),
                area_len_bytes: 0,
            },
        };
        if area_len_bytes > 0 {
            // Page aligned whatever its size: a window has the alignment of its file offset.
            let reserved = reserved_bytes(area_len_bytes, 4096, huge).next_multiple_of(4096);
            let area =
                map_pages(reserved, huge, || format!("cannot allocate {area_len_bytes} bytes of write data area"))?;
            buffers.area = Some((area, reserved));
            buffers.region.area = area.as_ptr();
            buffers.region.area_len_bytes = area_len_bytes;
        }
        Ok(buffers)
    }

    pub fn region(&self) -> BufferRegion {
        self.region
    }

    pub fn slots(&self) -> usize {
        self.region.slots
    }

    /// Length of the slots' allocation (every slot, padding and huge-page rounding included).
    pub fn len_bytes(&self) -> usize {
        match self.backing {
            Backing::Heap(layout) => layout.size(),
            Backing::Mapped(len) => len,
        }
    }

    /// The area (empty if there is none). The caller must not hold it across an I/O whose
    /// data lies in it: `&mut self` makes that hold for safe code.
    #[inline(always)]
    pub fn area_mut(&mut self) -> &mut [u8] {
        match self.area {
            // SAFETY: the area is `area_len_bytes` (within its mapping) owned by `self`;
            // `&mut self` guarantees no other reference from safe code exists.
            Some((ptr, _)) => unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), self.region.area_len_bytes) },
            None => &mut [],
        }
    }

    /// A slot's own buffer and the area at once (the fallback copy of a window).
    #[inline(always)]
    pub fn slot_and_area_mut(&mut self, slot: u32) -> (&mut [u8], &[u8]) {
        assert!((slot as usize) < self.region.slots);
        // SAFETY: the slot and the area are disjoint allocations owned by `self` (see
        // `slot_mut` and `area_mut`); `&mut self` guarantees no other reference exists.
        unsafe {
            let slot = std::slice::from_raw_parts_mut(self.region.slot_ptr(slot), self.region.slot_len_bytes);
            let area: &[u8] = match self.area {
                Some((ptr, _)) => std::slice::from_raw_parts(ptr.as_ptr(), self.region.area_len_bytes),
                None => &[],
            };
            (slot, area)
        }
    }

    /// Writes every page (keeping its bytes) so that each one is allocated now, on
    /// the node the thread's memory policy chooses, and not by a first I/O inside
    /// the measured window. Call at set-up, before any I/O uses the slots.
    pub fn touch_pages(&mut self) {
        const PAGE: usize = 4096;
        let area = self.area.map(|(ptr, len)| (ptr.as_ptr(), len));
        for (base, len) in [(self.ptr.as_ptr(), self.len_bytes())].into_iter().chain(area) {
            let mut offset = 0;
            while offset < len {
                // SAFETY: `offset` is inside one of our allocations; `&mut self` means no
                // other reference exists, and no I/O is in flight at set-up.
                unsafe {
                    let p = base.add(offset);
                    p.write_volatile(p.read_volatile());
                }
                offset += PAGE;
            }
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
        if let Some((ptr, len)) = self.area.take() {
            // SAFETY: mapped in `with_area` with this length, unmapped once; no reference to
            // it outlives `self`.
            let _ = unsafe { munmap(ptr.cast(), len) };
        }
        match self.backing {
            // SAFETY: allocated in `new` with this exact layout, freed once.
            Backing::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr(), layout) },
            Backing::Mapped(len) => {
                // SAFETY: mapped in `new` with this length, unmapped once; no reference to
                // it outlives `self`. An error here would leave the mapping, never corrupt.
                let _ = unsafe { munmap(self.ptr.cast(), len) };
            }
        }
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

    /// Buffers of 1 MiB and more are a mapping of whole huge pages asked for huge pages:
    /// aligned, zeroed, writable, each slot apart, and given back on drop.
    #[test]
    fn large_buffers_are_mapped_and_behave_like_small_ones() {
        assert_eq!(reserved_bytes(512 << 10, 4096, true), 512 << 10, "below half a huge page: the slots alone");
        assert_eq!(reserved_bytes(1 << 20, 4096, true), 2 << 20, "from half a huge page: whole ones");
        assert_eq!(reserved_bytes(5 << 20, 512, true), 6 << 20);
        assert_eq!(reserved_bytes(4 << 20, 1 << 16, true), 4 << 20, "an alignment above a page keeps the allocator");
        assert_eq!(reserved_bytes(1 << 20, 4096, false), 1 << 20, "base pages asked for: the slots alone");
        let small = SlotBuffers::new(8, 128 << 10, 4096).unwrap();
        assert!(matches!(small.backing, Backing::Mapped(len) if len == 2 << 20), "1 MiB of slots: one huge page");
        let mut b = SlotBuffers::new(4, 1 << 20, 4096).unwrap();
        assert!(matches!(b.backing, Backing::Mapped(len) if len == 4 << 20));
        assert_eq!(b.len_bytes(), 4 << 20);
        b.touch_pages();
        for s in 0..4 {
            assert_eq!(b.region().slot_ptr(s) as usize % 4096, 0);
            assert!(b.slot(s).iter().all(|&x| x == 0), "slot {s} starts zeroed");
        }
        b.slot_mut(3).fill(9);
        assert!(b.slot(2).iter().all(|&x| x == 0) && b.slot(3).iter().all(|&x| x == 9));
        // Where the kernel gives transparent huge pages on request, the mapping has some.
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if thp.contains("[always]") || thp.contains("[madvise]") {
            let huge_kib = anon_huge_kib(b.region().base as usize);
            assert!(huge_kib >= 2048, "no huge page backs the 4 MiB of buffers ({huge_kib} KiB)");
        } else {
            crate::stderr_line!(
                "SKIP: huge pages of the buffers: transparent huge pages are off here ({})",
                thp.trim()
            );
        }
        // A larger alignment than a page keeps the allocator.
        let c = SlotBuffers::new(4, 1 << 20, 1 << 16).unwrap();
        assert!(matches!(c.backing, Backing::Heap(_)));
        assert_eq!(c.region().slot_ptr(1) as usize % (1 << 16), 0);
    }

    /// `AnonHugePages` of the mapping that starts at `start` (/proc/self/smaps), in KiB.
    fn anon_huge_kib(start: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((from, _)) = range.split_once('-')
                && let Ok(from) = usize::from_str_radix(from, 16)
            {
                inside = from == start;
            } else if inside && let Some(kib) = line.strip_prefix("AnonHugePages:") {
                return kib.trim().trim_end_matches("kB").trim().parse().unwrap();
            }
        }
        0
    }
}
