//! How much one worker allocates: its slots, each slot's buffer, the `unique` data's area,
//! a pool of random blocks, and whether it draws its requests ahead. Decided once, by the coordinator, from the
//! run's plan (`coordination/run/worker_plan.rs`), and handed to the worker in its plan: the memory
//! check before the run (`coordination/run/limits.rs`) counts the very sizes the worker allocates.
//! Must not: allocate or touch memory (the worker does, in `setup.rs`).

use super::AreaShape;
use crate::io::data::Pattern;

/// What a worker's sizes follow from.
#[derive(Clone, Copy, Debug)]
pub struct SizingInputs {
    /// The engine performs each I/O in its call (sync, mmap, null): one slot in flight.
    pub completes_inline: bool,
    pub queue_depth: u32,
    pub read_percent: u8,
    pub verifying: bool,
    pub pattern: Pattern,
    /// The worker issues flushes through its barrier (counted ones, or a replayed trace's).
    pub flushes: bool,
    /// The largest I/O that moves data: the block size, a mix's largest, or a trace's.
    pub largest_io_bytes: u64,
    /// The I/Os have no one size (a block-size mix, or a replayed trace).
    pub mixed_sizes: bool,
}

/// What one worker allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerSizing {
    /// It draws its requests ahead (`Ahead`), into spare slots.
    pub draws_ahead: bool,
    /// Slots, each with its I/O buffer.
    pub slot_count: u32,
    /// The largest I/O a slot carries.
    pub buffer_len_bytes: u64,
    /// Bytes of each slot's own buffer (`private_slot_bytes`).
    pub private_slot_bytes: u64,
    /// The `unique` data's area, when writes take their data from one.
    pub area: Option<AreaShape>,
    /// Unverified writes of random data draw from a pool of random blocks.
    pub random_pool: bool,
}

impl WorkerSizing {
    pub fn of(i: &SizingInputs) -> Self {
        // A flushing worker does not draw ahead: its writes are counted as they are
        // issued, and a flush must come between the Nth and the next.
        let draws_ahead = draws_ahead(i.completes_inline, i.read_percent, i.verifying, i.pattern) && !i.flushes;
        let slot_count = slot_count(i.queue_depth, draws_ahead);
        let area = AreaShape::of(
            i.pattern,
            i.read_percent < 100,
            i.verifying,
            i.completes_inline,
            slot_count,
            i.largest_io_bytes,
            i.mixed_sizes,
        );
        WorkerSizing {
            draws_ahead,
            slot_count,
            buffer_len_bytes: i.largest_io_bytes,
            private_slot_bytes: private_slot_bytes(area, i.read_percent, i.largest_io_bytes),
            area,
            random_pool: i.read_percent < 100 && !i.verifying && i.pattern == Pattern::Random,
        }
    }
}

/// Bytes of each slot's own buffer: the largest I/O, or a page when every write of the
/// worker is certain to find a window of its area and it reads nothing (the buffers would
/// never be used; with 16 MiB blocks they would double the memory).
fn private_slot_bytes(area: Option<AreaShape>, read_percent: u8, largest_bytes: u64) -> u64 {
    match area {
        Some(a) if a.guaranteed && read_percent == 0 => largest_bytes.min(4096),
        _ => largest_bytes,
    }
}

/// Whether a worker draws its requests ahead (`Ahead`): a queued engine whose writes
/// each need data of their own (a varying pattern, or verification's stamped blocks).
fn draws_ahead(completes_inline: bool, read_percent: u8, verifying: bool, pattern: Pattern) -> bool {
    !completes_inline && read_percent < 100 && (verifying || pattern.varies_per_write())
}

/// Slots (each with its I/O buffer) of a worker of `queue_depth`: twice that when it
/// draws ahead (the spares hold the prepared requests); the engine's depth stays the same.
fn slot_count(queue_depth: u32, draws_ahead: bool) -> u32 {
    if draws_ahead { 2 * queue_depth.max(1) } else { queue_depth.max(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> SizingInputs {
        SizingInputs {
            completes_inline: false,
            queue_depth: 8,
            read_percent: 0,
            verifying: false,
            pattern: Pattern::Random,
            flushes: false,
            largest_io_bytes: 1 << 20,
            mixed_sizes: false,
        }
    }

    #[test]
    fn a_queued_writer_of_varying_data_draws_ahead_into_twice_its_depth() {
        let s = WorkerSizing::of(&inputs());
        assert!(s.draws_ahead);
        assert_eq!((s.slot_count, s.buffer_len_bytes, s.private_slot_bytes), (16, 1 << 20, 1 << 20));
        assert!(s.random_pool);
        let reader = WorkerSizing::of(&SizingInputs { read_percent: 100, ..inputs() });
        assert!(!reader.draws_ahead && !reader.random_pool);
        assert!(
            !WorkerSizing::of(&SizingInputs { verifying: true, ..inputs() }).random_pool,
            "verified writes are stamped"
        );
        assert_eq!(reader.slot_count, 8);
        let flusher = WorkerSizing::of(&SizingInputs { flushes: true, ..inputs() });
        assert!(!flusher.draws_ahead, "a flush comes between the Nth write and the next");
        let inline = WorkerSizing::of(&SizingInputs { completes_inline: true, queue_depth: 1, ..inputs() });
        assert_eq!((inline.draws_ahead, inline.slot_count), (false, 1));
    }

    #[test]
    fn unique_writes_that_always_find_a_window_keep_a_page_per_slot() {
        let s = WorkerSizing::of(&SizingInputs {
            pattern: Pattern::Unique,
            completes_inline: true,
            queue_depth: 1,
            ..inputs()
        });
        let area = s.area.expect("unique writes take their data from an area");
        assert!(area.guaranteed);
        assert_eq!(s.private_slot_bytes, 4096, "the slot's own buffer is never used");
        let mixed = WorkerSizing::of(&SizingInputs { pattern: Pattern::Unique, read_percent: 50, ..inputs() });
        assert_eq!(mixed.private_slot_bytes, 1 << 20, "reads need the whole buffer");
    }
}
