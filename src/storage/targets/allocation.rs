//! How much of a file's region holds written data. Reads of a hole, or of an
//! unwritten (preallocated, `fallocate` without writing) extent, never reach the
//! device: the filesystem answers them with zeros from memory. A read run over
//! such a file measures memory, not storage, however fast the numbers look.
//!
//! Where the filesystem has FIEMAP (ext4, XFS, btrfs, ...), its extent map says
//! which bytes are written, which are in unwritten extents and which are holes.
//! Elsewhere (tmpfs, ZFS, NFS) holes are found with lseek(SEEK_DATA/SEEK_HOLE)
//! and unwritten extents cannot be told from data: the written share is then
//! unknown (null), never guessed, unless lseek finds no data at all.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::ops::Range;

/// The written share of the region a run addresses on a regular file (`targets[].allocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Allocation {
    /// Bytes checked: the target's first `blocks` × block size bytes, the region the run addresses.
    pub region_bytes: u64,
    /// Bytes of the region that are holes (null: unknown).
    pub hole_bytes: Option<u64>,
    /// Bytes of the region in unwritten (preallocated) extents (null: unknown, no FIEMAP).
    pub unwritten_bytes: Option<u64>,
    /// Bytes of the region that hold written data (null: unknown).
    pub allocated_bytes: Option<u64>,
    /// `allocated_bytes` / `region_bytes` when the run started (null: unknown).
    pub allocated_fraction: Option<f64>,
    /// How the figures were found: `fiemap`, or `seek_hole` (no FIEMAP: unwritten extents unknown).
    pub method: String,
    /// Why a figure is unknown, when one is.
    pub unknown_reason: Option<String>,
    /// Bytes of holes and unwritten extents this run laid out (wrote) before the window.
    pub filled_bytes: u64,
    /// The run reads holes or unwritten extents it did not lay out: why not, and the fix.
    pub not_laid_out: Option<String>,
}

impl Allocation {
    /// Bytes known to hold no written data (holes, and unwritten extents where known).
    pub fn unallocated_bytes(&self) -> u64 {
        self.hole_bytes.unwrap_or(0).saturating_add(self.unwritten_bytes.unwrap_or(0))
    }

    /// The unallocated share of the region as people read it: "100%", "37.5%", "<0.1%".
    pub fn unallocated_percent(&self) -> String {
        let share = if self.region_bytes == 0 {
            0.0
        } else {
            100.0 * self.unallocated_bytes() as f64 / self.region_bytes as f64
        };
        let unallocated = self.unallocated_bytes();
        if unallocated >= self.region_bytes {
            "100%".into()
        } else if share < 0.1 {
            "<0.1%".into()
        } else if share > 99.9 {
            ">99.9%".into()
        } else {
            let text = format!("{share:.1}");
            format!("{}%", text.strip_suffix(".0").unwrap_or(&text))
        }
    }
}

/// An allocation measured, with the ranges that hold no written data.
pub struct Measured {
    pub allocation: Allocation,
    /// Holes and unwritten extents (holes only without FIEMAP), ascending, merged.
    pub unallocated: Vec<Range<u64>>,
}

/// Measures the first `region_bytes` of `file`. `sync` has the filesystem write the
/// file's dirty pages first (FIEMAP_FLAG_SYNC: no content changes), so that data
/// written but not yet flushed into a preallocated extent counts as written.
pub fn measure(file: &File, region_bytes: u64, sync: bool) -> Measured {
    let mut allocation = Allocation { region_bytes, ..Allocation::default() };
    match fiemap_written(file, region_bytes, sync) {
        Ok((written, unwritten)) => {
            let written_bytes: u64 = written.iter().map(|r| r.end - r.start).sum();
            let unwritten_bytes: u64 = unwritten.iter().map(|r| r.end - r.start).sum();
            allocation.method = "fiemap".into();
            allocation.allocated_bytes = Some(written_bytes);
            allocation.unwritten_bytes = Some(unwritten_bytes);
            allocation.hole_bytes = Some(region_bytes.saturating_sub(written_bytes + unwritten_bytes));
            allocation.allocated_fraction = Some(fraction(written_bytes, region_bytes));
            Measured { allocation, unallocated: complement(&written, region_bytes) }
        }
        Err(fiemap) => {
            allocation.method = "seek_hole".into();
            match seek_data(file, region_bytes) {
                Ok(data) => {
                    let data_bytes: u64 = data.iter().map(|r| r.end - r.start).sum();
                    allocation.hole_bytes = Some(region_bytes - data_bytes);
                    if data_bytes == 0 {
                        // No data at all: nothing can be written, whatever the extents are.
                        allocation.allocated_bytes = Some(0);
                        allocation.allocated_fraction = Some(fraction(0, region_bytes));
                    }
                    allocation.unknown_reason =
                        Some(format!("unwritten extents cannot be told from data: FIEMAP failed ({fiemap})"));
                    Measured { allocation, unallocated: complement(&data, region_bytes) }
                }
                Err(seek) => {
                    allocation.unknown_reason =
                        Some(format!("FIEMAP failed ({fiemap}) and lseek(SEEK_DATA) failed ({seek})"));
                    Measured { allocation, unallocated: Vec::new() }
                }
            }
        }
    }
}

fn fraction(part: u64, whole: u64) -> f64 {
    if whole == 0 { 1.0 } else { part as f64 / whole as f64 }
}

/// The parts of `[0, end)` not in `ranges` (ascending, disjoint).
fn complement(ranges: &[Range<u64>], end: u64) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    let mut at = 0;
    for r in ranges {
        if r.start > at {
            out.push(at..r.start);
        }
        at = at.max(r.end);
    }
    if at < end {
        out.push(at..end);
    }
    out
}

/// Appends `r` to ascending `ranges`, merging it with the last one when they touch.
fn push_merged(ranges: &mut Vec<Range<u64>>, r: Range<u64>) {
    if r.is_empty() {
        return;
    }
    match ranges.last_mut() {
        Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
        _ => ranges.push(r),
    }
}

/// The data ranges of `[0, end)` by lseek(SEEK_DATA) and lseek(SEEK_HOLE).
fn seek_data(file: &File, end: u64) -> io::Result<Vec<Range<u64>>> {
    use nix::unistd::{Whence, lseek};
    let mut data = Vec::new();
    let mut at: u64 = 0;
    while at < end {
        let start = match lseek(file, at as i64, Whence::SeekData) {
            Ok(o) => o as u64,
            // No data at or after `at`.
            Err(nix::errno::Errno::ENXIO) => break,
            Err(e) => return Err(e.into()),
        };
        if start >= end {
            break;
        }
        let hole = lseek(file, start as i64, Whence::SeekHole).map_err(io::Error::from)? as u64;
        if hole <= start {
            return Err(io::Error::other(format!("lseek(SEEK_HOLE) from {start} went back to {hole}")));
        }
        push_merged(&mut data, start..hole.min(end));
        at = hole;
    }
    Ok(data)
}

/// Ascending, disjoint byte ranges.
type Ranges = Vec<Range<u64>>;

/// The written ranges and the unwritten ranges of `[0, end)`, from the extent map.
fn fiemap_written(file: &File, end: u64, sync: bool) -> io::Result<(Ranges, Ranges)> {
    use crate::base::sys::fiemap::{Batch, EXTENT_LAST, EXTENT_UNWRITTEN};
    let mut written = Vec::new();
    let mut unwritten = Vec::new();
    let mut batch = Batch::new();
    let mut at: u64 = 0;
    let mut first = true;
    while at < end {
        let extents = crate::base::sys::fiemap::extents(file, at, end - at, sync && first, &mut batch)?;
        first = false;
        if extents.is_empty() {
            break;
        }
        let mut last = false;
        let mut next = at;
        for e in extents {
            let start = e.fe_logical.max(at);
            let stop = e.fe_logical.saturating_add(e.fe_length).min(end);
            if start < stop {
                if e.fe_flags & EXTENT_UNWRITTEN != 0 {
                    push_merged(&mut unwritten, start..stop);
                } else {
                    push_merged(&mut written, start..stop);
                }
            }
            next = next.max(e.fe_logical.saturating_add(e.fe_length));
            last |= e.fe_flags & EXTENT_LAST != 0;
        }
        if last || next <= at {
            break;
        }
        at = next;
    }
    Ok((written, unwritten))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn complement_and_merge() {
        let mut r = Vec::new();
        push_merged(&mut r, 0..4);
        push_merged(&mut r, 4..8);
        push_merged(&mut r, 10..12);
        assert_eq!(r, vec![0..8, 10..12]);
        assert_eq!(complement(&r, 16), vec![8..10, 12..16]);
        assert_eq!(complement(&[], 16), vec![0..16]);
        let whole: Ranges = std::iter::once(0..16).collect();
        assert_eq!(complement(&whole, 16), Ranges::new());
    }

    #[test]
    fn percent_never_rounds_to_none_or_all() {
        let a = |region, holes| Allocation { region_bytes: region, hole_bytes: Some(holes), ..Default::default() };
        assert_eq!(a(100, 100).unallocated_percent(), "100%");
        assert_eq!(a(10_000, 9_999).unallocated_percent(), ">99.9%");
        assert_eq!(a(10_000, 1).unallocated_percent(), "<0.1%");
        assert_eq!(a(8, 3).unallocated_percent(), "37.5%");
        assert_eq!(a(4, 2).unallocated_percent(), "50%");
    }

    #[test]
    fn a_half_written_file_is_half_allocated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("half.dat");
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        file.set_len(2 << 20).unwrap();
        file.write_all_at(&vec![0x5a; 1 << 20], 1 << 20).unwrap();
        let m = measure(&file, 2 << 20, true);
        let a = &m.allocation;
        assert_eq!(a.region_bytes, 2 << 20);
        assert_eq!(a.hole_bytes, Some(1 << 20), "{a:?}");
        if a.method == "fiemap" {
            assert_eq!(
                (a.allocated_bytes, a.unwritten_bytes, a.allocated_fraction),
                (Some(1 << 20), Some(0), Some(0.5))
            );
        }
        assert_eq!(m.unallocated, std::iter::once(0..(1 << 20)).collect::<Ranges>());
        // Only the first half checked: all holes.
        let m = measure(&file, 1 << 20, true);
        assert_eq!((m.allocation.allocated_bytes, m.allocation.allocated_fraction), (Some(0), Some(0.0)));
    }
}
