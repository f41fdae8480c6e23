//! `--write-iolog`: the I/Os a worker's figures count, each recorded as it completes (when
//! it was issued, which target, which op, where, how much) into a table allocated before
//! the start line: an I/O still in flight at the window's end, or completed in the ramp,
//! is in no figure and in no log. A full table stops recording (the run says how many
//! were left out); it never grows.
//!
//! Must not: allocate, format or write a file (the report writes the iolog after the run).

use crate::io::engine::Op;

/// The most I/Os one worker records (24 bytes each: 96 MiB).
pub const MAX_RECORDS_PER_WORKER: usize = 4 << 20;

/// One I/O the figures count, as it was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRecord {
    /// Clock time of its submission.
    pub issue_ns: u64,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    /// Which target of the run.
    pub target: u16,
    pub op: Op,
}

/// A worker's table of records and what did not fit in it.
#[derive(Debug, Default)]
pub struct IoRecorder {
    pub records: Vec<IoRecord>,
    /// I/Os issued once the table was full.
    pub left_out: u64,
}

impl IoRecorder {
    /// A table of `capacity` records, allocated now.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { records: Vec::with_capacity(capacity), left_out: 0 }
    }

    #[inline(always)]
    pub fn record(&mut self, io: IoRecord) {
        if self.records.len() < self.records.capacity() {
            self.records.push(io);
        } else {
            self.left_out += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_counts_what_it_leaves_out_and_never_grows() {
        let mut r = IoRecorder::with_capacity(2);
        let io = IoRecord { issue_ns: 1, offset_bytes: 0, len_bytes: 4096, target: 0, op: Op::Read };
        for _ in 0..5 {
            r.record(io);
        }
        assert_eq!((r.records.len(), r.records.capacity(), r.left_out), (2, 2, 3));
    }
}
