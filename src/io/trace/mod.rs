//! Traces to replay: fio's iolog (versions 2 and 3, `iolog.rs`) and blktrace's binary
//! per-CPU files (`blktrace.rs`), read bounded into one schedule of I/Os in trace order
//! (`Trace`), and the rule that puts a trace's offsets onto a target smaller than the
//! trace's extent (`remap.rs`).
//!
//! Every input is bounded before it is decoded: a file larger than `MAX_TRACE_BYTES` is
//! refused, a text line is read through a bound of `MAX_LINE_BYTES`, a blktrace record's
//! payload through a bound of `MAX_PDU_BYTES`, and at most `MAX_TRACE_IOS` I/Os are kept.
//! A bad input is one error naming the file and its line (or record and byte).
//!
//! Must not: touch a target, know a flag, or run anything.

pub mod blktrace;
pub mod iolog;
pub mod remap;

use std::io::Read;
use std::path::{Path, PathBuf};

/// How a trace's file is opened: judged as an input and bounded to `max_bytes` (the
/// command passes `targets::input_file::open`; this module knows no filesystem rules).
pub type Opener<'a> = &'a dyn Fn(&Path, u64) -> Result<Box<dyn Read>, String>;

/// The largest trace file read (each file of a blktrace).
pub const MAX_TRACE_BYTES: u64 = 8 << 30;
/// The longest line of an iolog.
pub const MAX_LINE_BYTES: usize = 4096;
/// The most entries a trace may hold (`TraceIo`, 24 bytes each in memory; the run's
/// memory check counts the worker's schedule made of them: `host::memory`).
pub const MAX_TRACE_IOS: usize = 32 << 20;

/// What an entry of the trace does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceOp {
    Read,
    Write,
    /// A discard of its range (iolog `trim`, a blktrace discard).
    Trim,
    /// A flush of everything written (iolog `sync`): issued as fsync.
    Sync,
    /// A flush of the data written (iolog `datasync`, a blktrace flush, PREFLUSH or FUA):
    /// issued as fdatasync.
    Datasync,
}

impl TraceOp {
    /// A flush: no range, a barrier for the I/Os before it.
    pub fn is_flush(self) -> bool {
        matches!(self, TraceOp::Sync | TraceOp::Datasync)
    }

    /// A read or a write: moves data through a buffer.
    pub fn is_transfer(self) -> bool {
        matches!(self, TraceOp::Read | TraceOp::Write)
    }
}

/// One entry of a trace: when (from the trace's first entry), where and how much (a
/// flush: offset and length 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    pub time_ns: u64,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub op: TraceOp,
}

/// Which kind of file a trace was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `fio version 2 iolog`: no timestamps; `wait` lines space the I/Os.
    FioIologV2,
    /// `fio version 3 iolog`: a timestamp in microseconds on every line.
    FioIologV3,
    /// blktrace's binary records, one file per CPU, merged by time.
    Blktrace,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::FioIologV2 => "fio iolog v2",
            TraceFormat::FioIologV3 => "fio iolog v3",
            TraceFormat::Blktrace => "blktrace",
        }
    }
}

/// Entries of a trace that are not replayed, by kind (trims and flushes are replayed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    /// Reads, writes and trims of length 0 (nothing to issue).
    pub empty: u64,
}

/// A whole trace, in the order its I/Os are issued (by time; ties keep the trace's order).
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub format: TraceFormat,
    /// The files read (a blktrace: every CPU's).
    pub files: Vec<PathBuf>,
    pub ios: Vec<TraceIo>,
    pub skipped: Skipped,
    /// The iolog's file names (blktrace: the device numbers as MAJ:MIN).
    pub names: Vec<String>,
}

impl Trace {
    /// From the first I/O to the last one's issue.
    pub fn span_ns(&self) -> u64 {
        self.ios.last().map_or(0, |io| io.time_ns)
    }

    /// The end of the furthest I/O (trims included): the bytes a target needs to take
    /// every offset as it is.
    pub fn extent_bytes(&self) -> u64 {
        self.ios.iter().map(|io| io.offset_bytes + u64::from(io.len_bytes)).max().unwrap_or(0)
    }

    /// The largest read or write: the size of a slot's buffer (a trim needs none).
    pub fn largest_bytes(&self) -> u32 {
        self.ios.iter().filter(|io| io.op.is_transfer()).map(|io| io.len_bytes).max().unwrap_or(0)
    }

    pub fn count(&self, op: TraceOp) -> u64 {
        self.ios.iter().filter(|io| io.op == op).count() as u64
    }

    /// Flushes of either kind.
    pub fn flushes(&self) -> u64 {
        self.ios.iter().filter(|io| io.op.is_flush()).count() as u64
    }

    /// Times from the first I/O, in order (stable: equal times keep the trace's order).
    /// A trace already in order (every iolog v2, most v3 logs) is not sorted: a stable
    /// sort would take half the trace's memory again.
    fn settle(&mut self) {
        if !self.ios.is_sorted_by_key(|io| io.time_ns) {
            self.ios.sort_by_key(|io| io.time_ns);
        }
        let first_ns = self.ios.first().map_or(0, |io| io.time_ns);
        for io in &mut self.ios {
            io.time_ns -= first_ns;
        }
    }
}

/// A trace that could not be read, naming where.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum TraceError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{path}, line {line}: {message}")]
    Line { path: String, line: u64, message: String },
    #[error("{path}, record {record} (byte {byte}): {message}")]
    Record { path: String, record: u64, byte: u64, message: String },
}

impl TraceError {
    fn file(path: &Path, message: impl Into<String>) -> Self {
        TraceError::File { path: path.display().to_string(), message: message.into() }
    }
}

/// Reads the trace at `path`: an iolog (by its first line), or blktrace records (by their
/// magic). `NAME.blktrace.N` (or `NAME` with `NAME.blktrace.0` beside it) takes every
/// CPU's file `NAME.blktrace.*`.
pub fn load(path: &Path, open: Opener<'_>) -> Result<Trace, TraceError> {
    if let Some(files) = blktrace::cpu_files(path) {
        return blktrace::load(&files, open);
    }
    let mut head = [0u8; 24];
    let n = {
        let mut f = open(path, MAX_TRACE_BYTES).map_err(|e| TraceError::file(path, e))?;
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) => return Err(TraceError::file(path, e.to_string())),
            }
        }
        n
    };
    if n >= 4 && blktrace::is_record(&head[..4]) {
        return blktrace::load(&[path.to_path_buf()], open);
    }
    if head[..n].starts_with(b"fio version ") {
        return iolog::load(path, open);
    }
    Err(TraceError::file(
        path,
        "is neither a fio iolog (its first line `fio version 2 iolog` or `fio version 3 iolog`) nor blktrace's binary records (NAME.blktrace.CPU, as blktrace -o NAME writes them)",
    ))
}
