//! The durable record's file (`--verify-state FILE`): its layout, how a worker updates its
//! part crash-safely and incrementally, and how the file is read back, bounded and checked.
//!
//! Layout: a header (magic, the run's data seed, block size, pattern, how the record
//! follows durability, the targets with their paths and blocks, and each worker's extents:
//! which blocks of which target its table covers), then per worker a section of 4 KiB
//! pages: two copies of its summary (generation, wall-clock time of the update, the
//! write-sequence base, writes completed, pages written by the update), then two banks
//! of copies of the pages of its table (bank 0: every page's first copy, then bank 1). A table page holds the low 32 bits of the last durable
//! write of 1,008 blocks (0: none) of one extent (a page never spans two targets), its
//! generation and a crc32c.
//!
//! An update writes only the pages changed since the last one, each into the copy that
//! does not hold its newest version, and the summary into the copy of the generation's
//! parity, then fdatasyncs. A cut during the update leaves each page's previous copy
//! whole: the reader takes, page by page, the valid copy of the highest generation. Every
//! copy it can take states writes that a completed flush (or a write durable at
//! completion) made durable, so a record mixing pages of the cut update with older ones
//! still promises nothing that was not promised; the reader says the update was cut short
//! (a torn copy, or fewer pages of the newest generation than its summary names, or no
//! summary of it). Each worker owns its section (no lock between workers), and the file
//! is sized and its header made durable before the first I/O.
//!
//! The file is written in place, in a file this run holds locked
//! (`durable_record::open_locked`: opened
//! without following a link, a regular file or nothing, an exclusive flock for the run), not
//! written beside and renamed over: a rename would replace whatever the name is (a device
//! node, /dev/null), and a lock on a file that is then renamed over guards nothing, so two
//! runs sharing a record would both go on and one record would be lost. The old record is
//! of targets this run is about to overwrite: truncating it loses nothing a crash of this
//! run could need.
//!
//! The header holds each target's identity (its size, device and inode, or the device
//! number of a block device) and the run's data seed, so that `iopulse verify` can tell a
//! record given with the wrong targets (another order, another file, another run's record)
//! from a broken promise of the storage.
//!
//! Must not: allocate when a record is written or a write is noted (every buffer is the
//! writer's own, sized once), parse anything beyond the bounded layout, or open, lock or
//! judge a path (`durable_record` does, with the ledger's lock and the targets' identity).

use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

mod read;
mod write;

pub use read::decode;
pub use write::{RecordWriter, WriterFile, create, worker_geometry};

pub(super) const FILE_MAGIC: [u8; 8] = *b"IOPDREC\x02";

pub(super) const SUMMARY_MAGIC: [u8; 8] = *b"IOPSUMM\x02";

pub(super) const PAGE_MAGIC: [u8; 8] = *b"IOPPAGE\x02";

/// The version written; 2 (no target identity) is still read.
pub(super) const VERSION: u32 = 3;

/// Bytes of a page (and of the header's fixed part) before its entries.
pub(super) const FIXED_BYTES: usize = 64;

/// Every part of the file is whole pages, so that no write shares a page with another's.
pub const PAGE_BYTES: u64 = 4096;

/// Blocks one table page covers.
pub const ENTRIES_PER_PAGE: u64 = (PAGE_BYTES - FIXED_BYTES as u64) / 4;

/// Most workers and targets a record holds (the header stays small).
pub const MAX_WORKERS: u32 = 4096;

pub const MAX_TARGETS: u32 = 1 << 20;

/// Longest target path recorded.
pub(super) const MAX_PATH_BYTES: usize = 4096;

/// Largest state file read: the tables of 512 MiB of sequences (the most a run keeps),
/// twice, and their page headers, summaries and the header.
pub const MAX_FILE_BYTES: u64 = (5 << 28) + (64 << 20);

/// Crc field of the header, summaries and pages.
pub(super) const CRC_AT: usize = 56;

/// Most pages one write of an update carries.
pub(super) const RUN_PAGES: usize = 64;

/// `RecordWriter::copy` of a page never written.
pub(super) const NO_COPY: u8 = 2;

/// How the record follows what is durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// At each completed flush (`--fsync-every`, `--fdatasync-every`), the blocks of the
    /// file it flushed.
    Flushes,
    /// Every completed write is durable (`--sync-writes`: O_DSYNC/O_SYNC): the record is
    /// updated every N completed writes and at the end, and at flushes when there are some.
    SyncWrites,
    /// Every completed write is durable (O_DIRECT on block devices whose write cache is
    /// write through): as `SyncWrites`.
    DirectWriteThrough,
}

impl Durability {
    fn id(self) -> u32 {
        match self {
            Durability::Flushes => 1,
            Durability::SyncWrites => 2,
            Durability::DirectWriteThrough => 3,
        }
    }

    fn from_id(id: u32) -> Option<Self> {
        [Durability::Flushes, Durability::SyncWrites, Durability::DirectWriteThrough].into_iter().find(|d| d.id() == id)
    }

    /// What made the recorded writes durable, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            Durability::Flushes => "completed flushes",
            Durability::SyncWrites => "writes durable at completion (O_DSYNC/O_SYNC)",
            Durability::DirectWriteThrough => "writes durable at completion (O_DIRECT, write-through cache)",
        }
    }

    /// Every completed write is durable, whatever file a flush was of.
    pub fn at_completion(self) -> bool {
        self != Durability::Flushes
    }
}

/// One target of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordTarget {
    /// The path the run wrote (absolute).
    pub path: PathBuf,
    /// Its blocks when the run started.
    pub blocks: u64,
    /// What the target was (none in a record of version 2).
    pub identity: Option<TargetIdentity>,
}

/// Which file or device a target was when the run started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetIdentity {
    /// Its size: a file's length, a block device's capacity.
    pub size_bytes: u64,
    /// The device and inode of the file (of a block device: of its node).
    pub dev: u64,
    pub ino: u64,
    /// A block device's number (0 for a file).
    pub rdev: u64,
}

impl TargetIdentity {
    /// The identity of the open target `file` (fstat; a block device's size by seeking to
    /// its end, which is what its capacity is to a reader).
    pub fn of(file: &File) -> io::Result<TargetIdentity> {
        use std::io::Seek;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = file.metadata()?;
        let block = meta.file_type().is_block_device();
        let size_bytes = if block { (&*file).seek(io::SeekFrom::End(0))? } else { meta.len() };
        Ok(TargetIdentity { size_bytes, dev: meta.dev(), ino: meta.ino(), rdev: if block { meta.rdev() } else { 0 } })
    }

    /// Whether `other` is the same file or device: the same device number for a block
    /// device; for a file, the same inode on the same filesystem, or the same inode and size
    /// where the filesystem's device number changed (a filesystem mounted again after a
    /// reboot may get another one; a renamed file keeps its inode).
    pub fn same_as(&self, other: &TargetIdentity) -> bool {
        if self.rdev != 0 || other.rdev != 0 {
            return self.rdev == other.rdev;
        }
        self.ino == other.ino && (self.dev == other.dev || self.size_bytes == other.size_bytes)
    }
}

/// A run of blocks of one target that a worker's table covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub target: u32,
    /// First block in the target.
    pub first_block: u64,
    pub blocks: u64,
}

/// What the run was, for the checker to regenerate its blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub block_size_bytes: u32,
    pub pattern_id: u32,
    pub seed: u64,
    pub durability: Durability,
    pub targets: Vec<RecordTarget>,
    /// Each worker's extents, in the order of its table.
    pub workers: Vec<Vec<Extent>>,
}

/// One worker's record as read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    /// The newest update read whole (a cut one's pages are used too: see the module).
    pub generation: u64,
    pub flush_unix_ns: u64,
    /// The high 32 bits of every sequence the worker wrote (worker index and run nonce).
    pub sequence_base: u64,
    /// The worker's writes completed when that update was made.
    pub high_water: u64,
    /// Per block of the worker's extents, in order: the low 32 bits of the write made
    /// durable (0: none).
    pub table: Vec<u32>,
    /// The worker's last update was cut short (torn, or not all of its pages written).
    pub cut_short: bool,
}

/// The record as read back: the header and, per worker, its record (`None`: no update of
/// that worker was recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub header: RecordHeader,
    pub slots: Vec<Option<Slot>>,
    /// Workers whose last update was cut short (their previous pages were used).
    pub damaged_slots: u32,
}

/// Why a state file was not read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("is not an iopulse durable record (written by --verify-state): {0}")]
    NotARecord(&'static str),
    #[error("is damaged: {0}")]
    Damaged(String),
}

pub(super) fn pages_of(blocks: u64) -> u64 {
    blocks.div_ceil(ENTRIES_PER_PAGE)
}

/// Table pages of a worker (each extent starts a page).
pub(super) fn worker_pages(extents: &[Extent]) -> u64 {
    extents.iter().map(|e| pages_of(e.blocks)).sum()
}

/// A worker's section: two summary pages, two copies of each table page.
pub(super) fn section_bytes(extents: &[Extent]) -> u64 {
    (2 + 2 * worker_pages(extents)) * PAGE_BYTES
}

/// Where each worker's section starts, and the file's length.
pub(super) fn sections(header_len: u64, workers: &[Vec<Extent>]) -> (Vec<u64>, u64) {
    let mut at = header_len;
    let mut starts = Vec::with_capacity(workers.len());
    for extents in workers {
        starts.push(at);
        at += section_bytes(extents);
    }
    (starts, at)
}

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

pub(super) fn crc_without_field(b: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&b[..CRC_AT]), &b[CRC_AT + 4..])
}

pub(super) fn seal(b: &mut [u8]) {
    b[CRC_AT..CRC_AT + 4].fill(0);
    let crc = crc_without_field(b);
    b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

pub(super) fn sealed(b: &[u8]) -> bool {
    u32_at(b, CRC_AT) == crc_without_field(b)
}

pub(super) fn encode_header(h: &RecordHeader) -> Vec<u8> {
    let mut b = vec![0u8; FIXED_BYTES];
    b[..8].copy_from_slice(&FILE_MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&(h.workers.len() as u32).to_le_bytes());
    b[16..20].copy_from_slice(&h.block_size_bytes.to_le_bytes());
    b[20..24].copy_from_slice(&h.pattern_id.to_le_bytes());
    b[24..32].copy_from_slice(&h.seed.to_le_bytes());
    b[32..36].copy_from_slice(&(h.targets.len() as u32).to_le_bytes());
    b[36..40].copy_from_slice(&h.durability.id().to_le_bytes());
    for t in &h.targets {
        let path = t.path.as_os_str().as_bytes();
        b.extend_from_slice(&t.blocks.to_le_bytes());
        let id = t.identity.unwrap_or(TargetIdentity { size_bytes: 0, dev: 0, ino: 0, rdev: 0 });
        for v in [id.size_bytes, id.dev, id.ino, id.rdev] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&(path.len() as u32).to_le_bytes());
        b.extend_from_slice(path);
    }
    for extents in &h.workers {
        b.extend_from_slice(&(extents.len() as u32).to_le_bytes());
        for e in extents {
            b.extend_from_slice(&e.target.to_le_bytes());
            b.extend_from_slice(&e.first_block.to_le_bytes());
            b.extend_from_slice(&e.blocks.to_le_bytes());
        }
    }
    let len = (b.len() as u64).div_ceil(PAGE_BYTES) * PAGE_BYTES;
    b.resize(len as usize, 0);
    b[40..48].copy_from_slice(&len.to_le_bytes());
    seal(&mut b);
    b
}

#[cfg(test)]
mod tests;
