//! Laying a file out to its size with real written data. Holes and unwritten
//! extents are never read from the device (the filesystem answers with zeros
//! from memory), so a benchmark over them would measure nothing; fallocate
//! alone is therefore not enough.
//!
//! `unique` data (the default) is laid out as the run's writes make it: large O_DIRECT
//! writes straight from windows of a data area (`data::unique`), only the keys rewritten,
//! so that neither the data nor the page cache costs a copy (buffered where the filesystem
//! refuses O_DIRECT, for the unaligned head and tail, and with `--cache keep`, whose
//! buffered run expects the layout's pages cached as fio leaves them). Other patterns, and verified
//! blocks, are generated into a buffer and written through the page cache.

use crate::base::diagnostics::error::RunError;
use crate::base::sys::buffer::SlotBuffers;
use crate::io::data::verify;
use crate::io::data::{self, Pattern};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::{File, OpenOptions};
use std::ops::Range;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

const CHUNK_BYTES: u64 = 1 << 20;
/// Bytes of one O_DIRECT write of `unique` layout: long enough that the device gets
/// several requests at once from one call, a few huge pages of area.
const DIRECT_WRITE_BYTES: u64 = 8 << 20;
/// The alignment of O_DIRECT layout writes (offsets, lengths and memory): a page, which
/// every device's logical block divides.
const DIRECT_ALIGN_BYTES: u64 = 4096;
/// Layouts at least this large show a progress bar on a terminal.
const PROGRESS_FROM_BYTES: u64 = 64 << 20;

/// What layout writes.
#[derive(Clone, Copy, Debug)]
pub struct LayoutContent {
    pub block_size_bytes: u64,
    pub seed: u64,
    pub pattern: Pattern,
    /// Blocks carry the verify header (sequence 0: laid out, not written by a run).
    pub verify: bool,
    /// Verified blocks reduced as the run's writes are (`--dedupe-ratio`, `--compress-ratio`).
    pub reduction: data::Reduction,
    /// The period of `unique` data (`data::unique::period_bytes` of the run's largest block).
    pub period_bytes: u64,
    /// The layout's pages must stay in the page cache (`--cache keep` with buffered I/O,
    /// fio's `--invalidate=0` after its buffered layout): no O_DIRECT writes.
    pub keep_cached: bool,
}

/// The length of one layout write: whole blocks (so that every block starts at a
/// multiple of the block size), about `CHUNK_BYTES`, never more than the layout needs
/// rounded up to a block, and never 0. Checked: a total near u64::MAX used to wrap the
/// rounding to 0, and the layout loop then never ended.
fn chunk_len_bytes(total_bytes: u64, block_size_bytes: u64) -> u64 {
    let bs = block_size_bytes.max(1);
    let whole_blocks = |n: u64| n.checked_next_multiple_of(bs).unwrap_or(u64::MAX / bs * bs);
    whole_blocks(CHUNK_BYTES.max(bs)).min(whole_blocks(total_bytes.max(1)))
}

/// Why a layout stopped early.
pub enum LayoutStop {
    Failed(RunError),
    Interrupted { laid_out_bytes: u64 },
}

/// Writes the run's pattern from `from_bytes` to `to_bytes` (random by default: fresh
/// for every block), then syncs it so that write-back does not run into the
/// measurement. With verification, layout starts at the block holding `from_bytes`,
/// so that every block the run can read carries a valid header.
pub fn extend(
    file: &File,
    path: &Path,
    from_bytes: u64,
    to_bytes: u64,
    content: LayoutContent,
    show_progress: bool,
    stop: &AtomicUsize,
) -> Result<u64, LayoutStop> {
    let bs = content.block_size_bytes.max(1);
    let from_bytes = if content.verify { from_bytes / bs * bs } else { from_bytes };
    let total = to_bytes.saturating_sub(from_bytes);
    let bar = progress_bar(show_progress, total, path.display().to_string());
    if content.pattern == Pattern::Unique && !content.verify {
        return extend_unique(file, path, from_bytes, to_bytes, content, &bar, stop);
    }
    let mut chunk = vec![0u8; chunk_len_bytes(total, bs) as usize];
    let mut offset = from_bytes;
    while offset < to_bytes {
        if stop.load(Ordering::Relaxed) != 0 {
            bar.abandon();
            return Err(LayoutStop::Interrupted { laid_out_bytes: offset - from_bytes });
        }
        let len = (to_bytes - offset).min(chunk.len() as u64) as usize;
        for (i, block) in chunk[..len].chunks_mut(bs as usize).enumerate() {
            let block_offset = offset + i as u64 * bs;
            if content.verify && block.len() as u64 == bs {
                verify::stamp_reduced(block, content.pattern, content.seed, block_offset, 0, &content.reduction);
            } else {
                data::fill(block, content.pattern, content.seed, block_offset, 0, content.period_bytes);
            }
        }
        if let Err(source) = file.write_all_at(&chunk[..len], offset) {
            bar.abandon();
            let laid = offset - from_bytes;
            return Err(LayoutStop::Failed(RunError::Other(format!(
                "lay out {} at offset {offset}: {source} ({laid} of {total} bytes laid out{})",
                path.display(),
                if source.raw_os_error() == Some(libc::ENOSPC) { "; the filesystem is full" } else { "" }
            ))));
        }
        offset = offset.saturating_add(len as u64);
        bar.set_position(offset - from_bytes);
    }
    if let Err(source) = file.sync_data() {
        return Err(LayoutStop::Failed(RunError::Target { op: "sync layout of", path: path.to_path_buf(), source }));
    }
    bar.finish_and_clear();
    Ok(total)
}

/// `extend` with `unique` data: the bytes up to the first page boundary and after the last
/// one through `file` (buffered), the pages between in O_DIRECT writes of up to
/// `DIRECT_WRITE_BYTES` from windows of an area (each window's keys rewritten, nothing
/// copied), through `file` too where the filesystem refuses O_DIRECT or the pages must
/// stay cached (`keep_cached`). Each byte is what `data::fill` makes of it (sequence 0,
/// as every layout).
fn extend_unique(
    file: &File,
    path: &Path,
    from_bytes: u64,
    to_bytes: u64,
    content: LayoutContent,
    bar: &ProgressBar,
    stop: &AtomicUsize,
) -> Result<u64, LayoutStop> {
    let total = to_bytes.saturating_sub(from_bytes);
    // The area below takes a few MiB to fill, whatever the file's size: thousands of jobs
    // laying out small files at once look at a signal before it, not only between chunks.
    if stop.load(Ordering::Relaxed) != 0 {
        bar.abandon();
        return Err(LayoutStop::Interrupted { laid_out_bytes: 0 });
    }
    let period = content.period_bytes;
    let area_len = (period + DIRECT_WRITE_BYTES) as usize;
    let mut buffers =
        SlotBuffers::with_area(1, DIRECT_ALIGN_BYTES as usize, DIRECT_ALIGN_BYTES as usize, area_len, true)
            .map_err(|e| LayoutStop::Failed(RunError::Other(format!("lay out {}: {e}", path.display()))))?;
    data::unique::fill_area(buffers.area_mut(), content.seed, period);
    let direct = if content.keep_cached {
        None
    } else {
        OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(path).ok()
    };
    let mut direct = direct.as_ref();
    let fail = |offset: u64, source: std::io::Error| {
        bar.abandon();
        let laid = offset - from_bytes;
        LayoutStop::Failed(RunError::Other(format!(
            "lay out {} at offset {offset}: {source} ({laid} of {total} bytes laid out{})",
            path.display(),
            if source.raw_os_error() == Some(libc::ENOSPC) { "; the filesystem is full" } else { "" }
        )))
    };
    let body_from = from_bytes.next_multiple_of(DIRECT_ALIGN_BYTES).min(to_bytes);
    let body_to = (to_bytes / DIRECT_ALIGN_BYTES * DIRECT_ALIGN_BYTES).max(body_from);
    // The unaligned head and tail, a part of a page each, from the small slot: the head
    // first and the tail last, so that the file grows from its end as the layout goes.
    let edge = |buffers: &mut SlotBuffers, at: u64, end: u64| {
        if at < end {
            let piece = &mut buffers.slot_mut(0)[..(end - at) as usize];
            data::fill(piece, Pattern::Unique, content.seed, at, 0, period);
            file.write_all_at(piece, at).map_err(|e| fail(at, e))?;
        }
        Ok(())
    };
    edge(&mut buffers, from_bytes, body_from)?;
    let mut offset = body_from;
    while offset < body_to {
        if stop.load(Ordering::Relaxed) != 0 {
            bar.abandon();
            return Err(LayoutStop::Interrupted { laid_out_bytes: offset - from_bytes });
        }
        let len = (body_to - offset).min(DIRECT_WRITE_BYTES) as usize;
        let at = (offset % period) as usize;
        let window = &mut buffers.area_mut()[at..at + len];
        data::unique::key_sectors(window, content.seed, offset, 0);
        let written = match direct {
            Some(d) => match d.write_all_at(window, offset) {
                // A filesystem that opened O_DIRECT but refuses this write: buffered from here.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    direct = None;
                    file.write_all_at(window, offset)
                }
                other => other,
            },
            None => file.write_all_at(window, offset),
        };
        written.map_err(|e| fail(offset, e))?;
        offset += len as u64;
        bar.set_position(offset - from_bytes);
    }
    edge(&mut buffers, body_to, to_bytes)?;
    if let Err(source) = file.sync_data() {
        return Err(LayoutStop::Failed(RunError::Target { op: "sync layout of", path: path.to_path_buf(), source }));
    }
    bar.finish_and_clear();
    Ok(total)
}

/// A progress bar on stderr for layouts of at least `PROGRESS_FROM_BYTES` (hidden otherwise).
fn progress_bar(show_progress: bool, total: u64, what: String) -> ProgressBar {
    if show_progress && total >= PROGRESS_FROM_BYTES {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "laying out {msg} {bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template"),
        );
        bar.set_message(what);
        bar
    } else {
        ProgressBar::hidden()
    }
}

/// Lays out the holes and unwritten extents of a file at its size: writes the run's
/// pattern over each of `ranges` (each byte as the block it lies in would get it, without
/// a verify header), nothing else, then syncs. Returns the bytes written.
pub fn fill_ranges(
    file: &File,
    path: &Path,
    ranges: &[Range<u64>],
    content: LayoutContent,
    show_progress: bool,
    stop: &AtomicUsize,
) -> Result<u64, LayoutStop> {
    let bs = content.block_size_bytes.max(1);
    let total: u64 = ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
    let bar = progress_bar(show_progress, total, format!("the holes of {}", path.display()));
    let mut chunk = vec![0u8; chunk_len_bytes(total, bs) as usize];
    let mut done: u64 = 0;
    for r in ranges {
        let mut offset = r.start;
        while offset < r.end {
            if stop.load(Ordering::Relaxed) != 0 {
                bar.abandon();
                return Err(LayoutStop::Interrupted { laid_out_bytes: done });
            }
            let len = (r.end - offset).min(chunk.len() as u64) as usize;
            let mut i = 0;
            while i < len {
                let at = offset + i as u64;
                let piece = ((at / bs * bs + bs - at) as usize).min(len - i);
                data::fill(&mut chunk[i..i + piece], content.pattern, content.seed, at, 0, content.period_bytes);
                i += piece;
            }
            if let Err(source) = file.write_all_at(&chunk[..len], offset) {
                bar.abandon();
                return Err(LayoutStop::Failed(RunError::Other(format!(
                    "lay out the holes of {} at offset {offset}: {source} ({done} of {total} bytes laid out{})",
                    path.display(),
                    if source.raw_os_error() == Some(libc::ENOSPC) { "; the filesystem is full" } else { "" }
                ))));
            }
            offset += len as u64;
            done += len as u64;
            bar.set_position(done);
        }
    }
    if let Err(source) = file.sync_data() {
        return Err(LayoutStop::Failed(RunError::Target { op: "sync layout of", path: path.to_path_buf(), source }));
    }
    bar.finish_and_clear();
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn chunks_are_whole_blocks_never_empty(total in any::<u64>(), bs_shift in 0u32..31, odd in 0u64..3) {
            // Block sizes iopulse accepts are powers of two and multiples of 512; also try others.
            let bs = (1u64 << bs_shift) + odd * 512;
            let chunk = chunk_len_bytes(total, bs);
            prop_assert!(chunk > 0);
            prop_assert!(chunk.is_multiple_of(bs));
            prop_assert!(chunk <= CHUNK_BYTES.max(bs).next_multiple_of(bs));
        }
    }

    #[test]
    fn the_largest_size_gives_a_full_chunk() {
        assert_eq!(chunk_len_bytes(u64::MAX, 4096), CHUNK_BYTES);
        assert_eq!(chunk_len_bytes(u64::MAX - 1, 1 << 30), 1 << 30);
        assert_eq!(chunk_len_bytes(100, 4096), 4096);
    }
}
