//! I/O errors counted per op type and errno (`--continue-on-error`,
//! `--max-errors`), and their summary for the result.
//!
//! A worker counts into a fixed table (no allocation: with a device that
//! fails every I/O, the error path is the hot path); the coordinator merges
//! the tables and names the files. By default the first error stops the run
//! (an error limit of 1); the limit is checked against a run-wide counter,
//! incremented only when an I/O fails.

use crate::io::engine::Op;
use serde::{Deserialize, Serialize};

/// Distinct (op, errno) pairs a worker tells apart; any more are counted in `other`.
const MAX_KINDS: usize = 16;
/// Offsets remembered per (op, errno), the first ones seen.
const FIRST_OFFSETS: usize = 4;
/// The "errno" of a transfer that moved fewer bytes than asked and could go no further.
pub const SHORT_TRANSFER: i32 = 0;

/// One (op, errno) pair of one worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorEntry {
    pub op: Op,
    /// errno, or `SHORT_TRANSFER`.
    pub errno: i32,
    pub count: u64,
    /// (target index, offset) of the first errors of this kind.
    pub first: [(u32, u64); FIRST_OFFSETS],
    pub first_len: u8,
}

/// A worker's error counts: a fixed table, filled in the order kinds appear.
#[derive(Clone, Debug)]
pub struct ErrorCounts {
    entries: [ErrorEntry; MAX_KINDS],
    len: usize,
    total: u64,
    /// Errors of kinds beyond the first `MAX_KINDS`.
    other: u64,
}

impl Default for ErrorCounts {
    fn default() -> Self {
        let empty = ErrorEntry { op: Op::Read, errno: 0, count: 0, first: [(0, 0); FIRST_OFFSETS], first_len: 0 };
        Self { entries: [empty; MAX_KINDS], len: 0, total: 0, other: 0 }
    }
}

impl ErrorCounts {
    /// Counts one failed I/O. No allocation.
    pub fn record(&mut self, op: Op, errno: i32, target: u32, offset_bytes: u64) {
        self.total += 1;
        let entry = match self.entries[..self.len].iter().position(|e| e.op == op && e.errno == errno) {
            Some(i) => &mut self.entries[i],
            None if self.len < MAX_KINDS => {
                self.entries[self.len] = ErrorEntry { op, errno, ..self.entries[self.len] };
                self.len += 1;
                &mut self.entries[self.len - 1]
            }
            None => {
                self.other += 1;
                return;
            }
        };
        entry.count += 1;
        if (entry.first_len as usize) < FIRST_OFFSETS {
            entry.first[entry.first_len as usize] = (target, offset_bytes);
            entry.first_len += 1;
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn entries(&self) -> &[ErrorEntry] {
        &self.entries[..self.len]
    }

    pub fn other(&self) -> u64 {
        self.other
    }
}

/// The I/O errors of a run, for the result (JSON `io_errors`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Failed I/Os in all (not counted in the figures).
    pub total: u64,
    /// How many failed I/Os stop the run: 1 by default, N with `--max-errors N`,
    /// null with `--continue-on-error` alone (no limit).
    pub limit: Option<u64>,
    /// Per op type and errno, most frequent first.
    pub kinds: Vec<ErrorKindSummary>,
    /// Errors of kinds beyond the ones a worker tells apart (16 per worker).
    pub other: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorKindSummary {
    /// `read` or `write`.
    pub op: String,
    /// Symbolic errno (`EIO`, `ENOSPC`, ...), or `short_transfer` (end of file reached).
    pub errno: String,
    /// Numeric errno (0 for a short transfer).
    pub code: i32,
    /// The system's text for it.
    pub message: String,
    pub count: u64,
    /// Where the first ones happened (at most 4 per worker, 8 in all).
    pub first: Vec<ErrorAt>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorAt {
    pub target: String,
    pub offset_bytes: u64,
}

/// Offsets shown per kind in the summary.
const SUMMARY_OFFSETS: usize = 8;

/// Merges the workers' tables; `target_name` names a target index.
pub fn summarize<'a>(
    counts: impl IntoIterator<Item = &'a ErrorCounts>,
    limit: Option<u64>,
    target_name: impl Fn(u32) -> String,
) -> ErrorSummary {
    let mut summary = ErrorSummary { limit, ..ErrorSummary::default() };
    for c in counts {
        summary.total += c.total;
        summary.other += c.other;
        for e in c.entries() {
            let i = match summary.kinds.iter().position(|k| k.op == e.op.name() && k.code == e.errno) {
                Some(i) => i,
                None => {
                    summary.kinds.push(ErrorKindSummary {
                        op: e.op.name().to_string(),
                        errno: errno_name(e.errno),
                        code: e.errno,
                        message: errno_message(e.errno),
                        count: 0,
                        first: Vec::new(),
                    });
                    summary.kinds.len() - 1
                }
            };
            let k = &mut summary.kinds[i];
            k.count += e.count;
            for &(target, offset_bytes) in &e.first[..e.first_len as usize] {
                if k.first.len() < SUMMARY_OFFSETS {
                    k.first.push(ErrorAt { target: target_name(target), offset_bytes });
                }
            }
        }
    }
    summary.kinds.sort_by(|a, b| b.count.cmp(&a.count).then(a.op.cmp(&b.op)).then(a.code.cmp(&b.code)));
    summary
}

/// `EIO`, `ENOSPC`, ...; `short_transfer` for `SHORT_TRANSFER`; `errno N` for the rare rest.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        SHORT_TRANSFER => "short_transfer",
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::ENODATA => "ENODATA",
        libc::ETIME => "ETIME",
        libc::ENOLINK => "ENOLINK",
        libc::EBADMSG => "EBADMSG",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EILSEQ => "EILSEQ",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ESTALE => "ESTALE",
        libc::EREMOTEIO => "EREMOTEIO",
        libc::EDQUOT => "EDQUOT",
        libc::ECANCELED => "ECANCELED",
        libc::EUCLEAN => "EUCLEAN",
        libc::ENOLCK => "ENOLCK",
        _ => return format!("errno {errno}"),
    };
    name.to_string()
}

/// The system's text for an errno ("No space left on device").
fn errno_message(errno: i32) -> String {
    if errno == SHORT_TRANSFER {
        return "fewer bytes than asked could be moved (end of file: was the file truncated during the run?)".into();
    }
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    // "No space left on device (os error 28)" → "No space left on device".
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_op_and_errno_with_first_offsets() {
        let mut c = ErrorCounts::default();
        for i in 0..10u64 {
            c.record(Op::Read, libc::EIO, 0, i * 4096);
        }
        c.record(Op::Write, libc::ENOSPC, 1, 8192);
        c.record(Op::Read, libc::ENOSPC, 1, 0);
        assert_eq!(c.total(), 12);
        assert_eq!(c.entries().len(), 3);
        let eio = c.entries()[0];
        assert_eq!((eio.op, eio.errno, eio.count, eio.first_len), (Op::Read, libc::EIO, 10, 4));
        assert_eq!(eio.first, [(0, 0), (0, 4096), (0, 8192), (0, 12288)]);
    }

    #[test]
    fn kinds_beyond_the_table_are_counted_as_other() {
        let mut c = ErrorCounts::default();
        for errno in 1..=(MAX_KINDS as i32 + 3) {
            c.record(Op::Write, errno, 0, 0);
        }
        assert_eq!(c.entries().len(), MAX_KINDS);
        assert_eq!(c.other(), 3);
        assert_eq!(c.total(), MAX_KINDS as u64 + 3);
    }

    #[test]
    fn summary_merges_workers_most_frequent_first() {
        let mut a = ErrorCounts::default();
        let mut b = ErrorCounts::default();
        a.record(Op::Write, libc::ENOSPC, 0, 4096);
        b.record(Op::Read, libc::EIO, 0, 0);
        b.record(Op::Read, libc::EIO, 1, 512);
        b.record(Op::Write, libc::ENOSPC, 0, 8192);
        b.record(Op::Write, libc::ENOSPC, 0, 12288);
        let s = summarize([&a, &b], Some(10), |t| format!("/t{t}"));
        assert_eq!(s.total, 5);
        assert_eq!(s.limit, Some(10));
        assert_eq!(s.kinds.len(), 2);
        assert_eq!((s.kinds[0].op.as_str(), s.kinds[0].errno.as_str(), s.kinds[0].count), ("write", "ENOSPC", 3));
        assert_eq!(s.kinds[0].message, "No space left on device");
        assert_eq!(s.kinds[0].first.len(), 3);
        assert_eq!(s.kinds[1].first[1], ErrorAt { target: "/t1".into(), offset_bytes: 512 });
    }

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(libc::EIO), "EIO");
        assert_eq!(errno_name(libc::ENOSPC), "ENOSPC");
        assert_eq!(errno_name(SHORT_TRANSFER), "short_transfer");
        assert_eq!(errno_name(4000), "errno 4000");
        assert_eq!(errno_message(libc::EIO), "Input/output error");
    }
}
