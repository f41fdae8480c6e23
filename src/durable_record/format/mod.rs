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
//! The file is written in place, in a file this run holds locked (`open_locked`: opened
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
//! writer's own, sized once), or parse anything beyond the bounded layout.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FILE_MAGIC: [u8; 8] = *b"IOPDREC\x02";
const SUMMARY_MAGIC: [u8; 8] = *b"IOPSUMM\x02";
const PAGE_MAGIC: [u8; 8] = *b"IOPPAGE\x02";
/// The version written; 2 (no target identity) is still read.
const VERSION: u32 = 3;
/// Bytes of a page (and of the header's fixed part) before its entries.
const FIXED_BYTES: usize = 64;
/// Every part of the file is whole pages, so that no write shares a page with another's.
pub const PAGE_BYTES: u64 = 4096;
/// Blocks one table page covers.
pub const ENTRIES_PER_PAGE: u64 = (PAGE_BYTES - FIXED_BYTES as u64) / 4;
/// Most workers and targets a record holds (the header stays small).
pub const MAX_WORKERS: u32 = 4096;
pub const MAX_TARGETS: u32 = 1 << 20;
/// Longest target path recorded.
const MAX_PATH_BYTES: usize = 4096;
/// Largest state file read: the tables of 512 MiB of sequences (the most a run keeps),
/// twice, and their page headers, summaries and the header.
pub const MAX_FILE_BYTES: u64 = (5 << 28) + (64 << 20);
/// Crc field of the header, summaries and pages.
const CRC_AT: usize = 56;
/// Most pages one write of an update carries.
const RUN_PAGES: usize = 64;
/// `RecordWriter::copy` of a page never written.
const NO_COPY: u8 = 2;

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
    #[error("{0}")]
    Input(#[from] crate::targets::input_file::InputFileError),
    #[error("is not an iopulse durable record (written by --verify-state): {0}")]
    NotARecord(&'static str),
    #[error("is damaged: {0}")]
    Damaged(String),
}

fn pages_of(blocks: u64) -> u64 {
    blocks.div_ceil(ENTRIES_PER_PAGE)
}

/// Table pages of a worker (each extent starts a page).
fn worker_pages(extents: &[Extent]) -> u64 {
    extents.iter().map(|e| pages_of(e.blocks)).sum()
}

/// A worker's section: two summary pages, two copies of each table page.
fn section_bytes(extents: &[Extent]) -> u64 {
    (2 + 2 * worker_pages(extents)) * PAGE_BYTES
}

/// Where each worker's section starts, and the file's length.
fn sections(header_len: u64, workers: &[Vec<Extent>]) -> (Vec<u64>, u64) {
    let mut at = header_len;
    let mut starts = Vec::with_capacity(workers.len());
    for extents in workers {
        starts.push(at);
        at += section_bytes(extents);
    }
    (starts, at)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn crc_without_field(b: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&b[..CRC_AT]), &b[CRC_AT + 4..])
}

fn seal(b: &mut [u8]) {
    b[CRC_AT..CRC_AT + 4].fill(0);
    let crc = crc_without_field(b);
    b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

fn sealed(b: &[u8]) -> bool {
    u32_at(b, CRC_AT) == crc_without_field(b)
}

fn encode_header(h: &RecordHeader) -> Vec<u8> {
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

/// A record's file, open and locked for this run (the lock goes with the last handle).
pub struct LockedRecord {
    file: Arc<File>,
    _lock: crate::ledger::lock::Held,
}

/// Why a record's file was not opened for a run.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Another run holds it (`lock::LockError::Busy`, with its pid).
    #[error("{0}")]
    Busy(crate::ledger::lock::LockError),
    #[error("is {0}, not a regular file: the record is written in place; give a file path")]
    NotRegular(&'static str),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Opens (creating it if missing) the record's file at `path` for this run, without
/// following a final symbolic link (`path` is where the ledger's guard saw it land), and
/// takes an exclusive lock on it: a second run given the same record is refused. Touches
/// nothing of the file's bytes.
pub fn open_locked(path: &Path) -> Result<LockedRecord, OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |create_new: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create_new)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
    };
    let file = match open(true) {
        Ok(file) => {
            // The new name is durable once its directory is: a crash must not lose the
            // record of writes it promised.
            sync_directory_of(path)?;
            file
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open(false)?,
        Err(e) => return Err(e.into()),
    };
    if let Some(kind) = crate::targets::identity::special_kind(file.metadata()?.file_type()) {
        return Err(OpenError::NotRegular(kind));
    }
    let held = match crate::ledger::lock::exclusive(file.try_clone()?) {
        Ok(held) => held,
        Err(crate::ledger::lock::LockError::Io(e)) => return Err(e.into()),
        Err(busy) => return Err(OpenError::Busy(busy)),
    };
    Ok(LockedRecord { file: Arc::new(file), _lock: held })
}

/// fsync of the directory holding `path`: a new name is durable once its directory is.
fn sync_directory_of(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// Writes the record of a run into its locked file: emptied, sized, its header durable, no
/// update written yet. Returns the open file each worker's `RecordWriter` shares.
pub fn create(record: &LockedRecord, header: &RecordHeader) -> io::Result<Arc<File>> {
    let head = encode_header(header);
    let (_, len_bytes) = sections(head.len() as u64, &header.workers);
    let file = &record.file;
    file.set_len(0)?;
    file.set_len(len_bytes)?;
    file.write_all_at(&head, 0)?;
    file.sync_all()?;
    Ok(Arc::clone(file))
}

/// One of a worker's files, as its writer addresses it: where the file's blocks start in
/// the worker's table (`region_start`: a worker-region block), how many of them the table
/// covers (0: none of the worker's region lies in it), and its first page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterFile {
    pub region_start: u64,
    pub blocks: u64,
    pub page_base: u32,
}

/// One worker's writer of its section. Everything it uses is sized at its start: noting a
/// write and recording an update allocate nothing.
pub struct RecordWriter {
    file: Arc<File>,
    worker: u32,
    section_at: u64,
    /// The worker's files, by its file index.
    files: Vec<WriterFile>,
    /// Per page: the copy holding its newest version (`NO_COPY`: none yet).
    copy: Vec<u8>,
    /// Per page: written to since its last update.
    dirty: Vec<bool>,
    /// Per file: its dirty pages (capacity: the file's pages, so a push never grows it).
    dirty_pages: Vec<Vec<u32>>,
    /// Pages written at once (up to `RUN_PAGES`).
    buf: Vec<u8>,
    /// Table pages of the worker (a bank of copies).
    pages: u64,
    generation: u64,
    sequence_base: u64,
    /// Writes completed (noted).
    completed: u64,
    durability: Durability,
    /// With writes durable at completion: an update after every this many (0: at flushes only).
    every_writes: u64,
    since_update: u64,
}

impl RecordWriter {
    /// `every_writes`: with writes durable at completion, an update after every this many
    /// completed writes (0: only at flushes).
    pub fn new(
        file: Arc<File>,
        header: &RecordHeader,
        worker: u32,
        files: Vec<WriterFile>,
        sequence_base: u64,
        every_writes: u64,
    ) -> Self {
        let head_len = encode_header(header).len() as u64;
        let (starts, _) = sections(head_len, &header.workers);
        let pages = worker_pages(&header.workers[worker as usize]) as usize;
        let dirty_pages =
            files.iter().map(|f| Vec::with_capacity(pages_of(f.blocks) as usize)).collect::<Vec<Vec<u32>>>();
        Self {
            file,
            worker,
            section_at: starts[worker as usize],
            files,
            copy: vec![NO_COPY; pages],
            dirty: vec![false; pages],
            dirty_pages,
            buf: vec![0u8; RUN_PAGES.min(pages.max(1)) * PAGE_BYTES as usize],
            pages: pages as u64,
            generation: 0,
            sequence_base,
            completed: 0,
            durability: header.durability,
            every_writes,
            since_update: 0,
        }
    }

    /// A write to `region_block` of the worker's file `file` completed. Returns whether an
    /// update is due (writes durable at completion, every N of them).
    #[inline]
    pub fn note_write(&mut self, file: u32, region_block: u64) -> bool {
        self.completed += 1;
        let f = self.files[file as usize];
        let page = f.page_base + ((region_block - f.region_start) / ENTRIES_PER_PAGE) as u32;
        if !self.dirty[page as usize] {
            self.dirty[page as usize] = true;
            self.dirty_pages[file as usize].push(page);
        }
        self.since_update += 1;
        self.every_writes != 0 && self.since_update >= self.every_writes
    }

    /// A flush of the worker's file `file` completed, with every write before it: records
    /// what it made durable (`table`: the low 32 bits of each block's last completed
    /// write). With writes durable at completion, every file's changed pages are recorded.
    pub fn flushed(&mut self, file: u32, table: &[u32]) -> io::Result<()> {
        if self.durability.at_completion() { self.update(None, table) } else { self.update(Some(file), table) }
    }

    /// Every completed write is durable (the record is kept at the worker's end too).
    pub fn durable_at_completion(&self) -> bool {
        self.durability.at_completion()
    }

    /// Records every completed write (writes durable at completion): every N of them, and
    /// at the worker's end.
    pub fn checkpoint(&mut self, table: &[u32]) -> io::Result<()> {
        if self.dirty_pages.iter().all(Vec::is_empty) {
            return Ok(());
        }
        self.update(None, table)
    }

    /// Writes the changed pages of `only` (every file: `None`), then the summary, then
    /// fdatasync. Pages are written in order, those that land next to each other in one
    /// write (every page changed at each update alternates its copies in step: they all
    /// land in one bank).
    fn update(&mut self, only: Option<u32>, table: &[u32]) -> io::Result<()> {
        self.generation += 1;
        self.since_update = 0;
        let mut written = 0u32;
        let (mut run_at, mut run_pages) = (0u64, 0usize);
        for f in 0..self.files.len() {
            if only.is_some_and(|o| o as usize != f) {
                continue;
            }
            let wf = self.files[f];
            self.dirty_pages[f].sort_unstable();
            for i in 0..self.dirty_pages[f].len() {
                let page = self.dirty_pages[f][i];
                let copy = if self.copy[page as usize] == 0 { 1 } else { 0 };
                let at = self.section_at + (2 + u64::from(copy) * self.pages + u64::from(page)) * PAGE_BYTES;
                if run_pages == RUN_PAGES || (run_pages > 0 && at != run_at + run_pages as u64 * PAGE_BYTES) {
                    self.file.write_all_at(&self.buf[..run_pages * PAGE_BYTES as usize], run_at)?;
                    run_pages = 0;
                }
                if run_pages == 0 {
                    run_at = at;
                }
                let b = &mut self.buf[run_pages * PAGE_BYTES as usize..(run_pages + 1) * PAGE_BYTES as usize];
                encode_page(b, &wf, page, table, self.generation, self.sequence_base, self.worker);
                run_pages += 1;
                self.copy[page as usize] = copy;
                self.dirty[page as usize] = false;
                written += 1;
            }
            self.dirty_pages[f].clear();
        }
        if run_pages > 0 {
            self.file.write_all_at(&self.buf[..run_pages * PAGE_BYTES as usize], run_at)?;
        }
        let flush_unix_ns =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let b = &mut self.buf[..PAGE_BYTES as usize];
        b.fill(0);
        b[..8].copy_from_slice(&SUMMARY_MAGIC);
        b[8..16].copy_from_slice(&self.generation.to_le_bytes());
        b[16..24].copy_from_slice(&flush_unix_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.sequence_base.to_le_bytes());
        b[32..40].copy_from_slice(&self.completed.to_le_bytes());
        b[40..44].copy_from_slice(&written.to_le_bytes());
        b[44..48].copy_from_slice(&self.worker.to_le_bytes());
        seal(b);
        let at = self.section_at + (self.generation % 2) * PAGE_BYTES;
        self.file.write_all_at(b, at)?;
        self.file.sync_data()
    }
}

/// Page `page` (of file `wf`) of a worker's table, from `table`, into `b`.
fn encode_page(b: &mut [u8], wf: &WriterFile, page: u32, table: &[u32], generation: u64, base: u64, worker: u32) {
    let first = wf.region_start + u64::from(page - wf.page_base) * ENTRIES_PER_PAGE;
    let end = (first + ENTRIES_PER_PAGE).min(wf.region_start + wf.blocks);
    b.fill(0);
    b[..8].copy_from_slice(&PAGE_MAGIC);
    b[8..16].copy_from_slice(&generation.to_le_bytes());
    b[16..24].copy_from_slice(&base.to_le_bytes());
    b[24..28].copy_from_slice(&page.to_le_bytes());
    b[28..32].copy_from_slice(&worker.to_le_bytes());
    for (dst, &s) in b[FIXED_BYTES..].chunks_exact_mut(4).zip(&table[first as usize..end as usize]) {
        dst.copy_from_slice(&s.to_le_bytes());
    }
    seal(b);
}

/// A worker's extents and its writer's files: `files` are the worker's files as (target,
/// first block among the worker's files' blocks laid end to end, blocks), and its region
/// is `region_blocks` from `region_first_block` there.
pub fn worker_geometry(
    files: &[(u32, u64, u64)],
    region_first_block: u64,
    region_blocks: u64,
) -> (Vec<Extent>, Vec<WriterFile>) {
    let (mut extents, mut writer_files) = (Vec::new(), Vec::with_capacity(files.len()));
    let region_end = region_first_block + region_blocks;
    let mut page_base = 0u32;
    for &(target, first, blocks) in files {
        let (lo, hi) = (first.max(region_first_block), (first + blocks).min(region_end));
        if hi <= lo {
            writer_files.push(WriterFile { region_start: 0, blocks: 0, page_base });
            continue;
        }
        extents.push(Extent { target, first_block: lo - first, blocks: hi - lo });
        writer_files.push(WriterFile { region_start: lo - region_first_block, blocks: hi - lo, page_base });
        page_base += pages_of(hi - lo) as u32;
    }
    (extents, writer_files)
}

/// Reads the state file at `path` (a regular file of at most `MAX_FILE_BYTES`).
pub fn read(path: &Path) -> Result<Record, RecordError> {
    let mut bytes = Vec::new();
    crate::targets::input_file::open(path, MAX_FILE_BYTES)?
        .read_to_end(&mut bytes)
        .map_err(crate::targets::input_file::InputFileError::Io)?;
    decode(&bytes)
}

/// A bounded reader of the header's variable part.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], RecordError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| RecordError::Damaged("its header ends inside a field".into()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, RecordError> {
        Ok(u32_at(self.take(4)?, 0))
    }

    fn u64(&mut self) -> Result<u64, RecordError> {
        Ok(u64_at(self.take(8)?, 0))
    }
}

fn decode_header(bytes: &[u8]) -> Result<(RecordHeader, usize), RecordError> {
    if bytes.len() < FIXED_BYTES || bytes[..8] != FILE_MAGIC {
        return Err(RecordError::NotARecord("no record magic at its start"));
    }
    let version = u32_at(bytes, 8);
    if version != VERSION && version != 2 {
        return Err(RecordError::NotARecord("a version this iopulse does not read"));
    }
    let workers = u32_at(bytes, 12);
    if workers == 0 || workers > MAX_WORKERS {
        return Err(RecordError::Damaged(format!("its header names {workers} workers")));
    }
    let targets = u32_at(bytes, 32);
    if targets == 0 || targets > MAX_TARGETS {
        return Err(RecordError::Damaged(format!("its header names {targets} targets")));
    }
    let head_len = u64_at(bytes, 40);
    if head_len < PAGE_BYTES || !head_len.is_multiple_of(PAGE_BYTES) || head_len > bytes.len() as u64 {
        return Err(RecordError::Damaged(format!("its header claims {head_len} bytes of {}", bytes.len())));
    }
    let head = &bytes[..head_len as usize];
    if !sealed(head) {
        return Err(RecordError::Damaged("its header's checksum fails".into()));
    }
    let durability = Durability::from_id(u32_at(head, 36))
        .ok_or_else(|| RecordError::Damaged(format!("durability {} is unknown", u32_at(head, 36))))?;
    let mut c = Cursor { b: head, at: FIXED_BYTES };
    let mut list = Vec::new();
    for _ in 0..targets {
        let blocks = c.u64()?;
        let identity = if version >= 3 {
            let (size_bytes, dev, ino, rdev) = (c.u64()?, c.u64()?, c.u64()?, c.u64()?);
            Some(TargetIdentity { size_bytes, dev, ino, rdev })
        } else {
            None
        };
        let len = c.u32()? as usize;
        if len > MAX_PATH_BYTES {
            return Err(RecordError::Damaged(format!("a target path of {len} bytes")));
        }
        let path = PathBuf::from(std::ffi::OsString::from_vec(c.take(len)?.to_vec()));
        list.push(RecordTarget { path, blocks, identity });
    }
    let mut per_worker = Vec::with_capacity(workers as usize);
    for _ in 0..workers {
        let n = c.u32()?;
        let mut extents = Vec::new();
        for _ in 0..n {
            let e = Extent { target: c.u32()?, first_block: c.u64()?, blocks: c.u64()? };
            let inside = list
                .get(e.target as usize)
                .is_some_and(|t| e.first_block.checked_add(e.blocks).is_some_and(|end| end <= t.blocks));
            if !inside {
                return Err(RecordError::Damaged("a worker's extent lies outside its target".into()));
            }
            extents.push(e);
        }
        per_worker.push(extents);
    }
    let header = RecordHeader {
        block_size_bytes: u32_at(head, 16),
        pattern_id: u32_at(head, 20),
        seed: u64_at(head, 24),
        durability,
        targets: list,
        workers: per_worker,
    };
    Ok((header, head_len as usize))
}

/// The record held in `bytes` (a whole state file).
pub fn decode(bytes: &[u8]) -> Result<Record, RecordError> {
    let (header, head_len) = decode_header(bytes)?;
    let total_pages: u64 = header.workers.iter().map(|e| worker_pages(e)).sum();
    if total_pages.saturating_mul(2 * PAGE_BYTES) > MAX_FILE_BYTES {
        return Err(RecordError::Damaged("its header describes tables larger than any run keeps".into()));
    }
    let (starts, len_bytes) = sections(head_len as u64, &header.workers);
    if bytes.len() as u64 != len_bytes {
        return Err(RecordError::Damaged(format!(
            "{} bytes where its header implies {len_bytes} (truncated or grown)",
            bytes.len()
        )));
    }
    let mut damaged_slots = 0;
    let slots = header
        .workers
        .iter()
        .enumerate()
        .map(|(w, extents)| {
            let slot = decode_worker(&bytes[starts[w] as usize..], w as u32, extents);
            damaged_slots += u32::from(slot.as_ref().is_some_and(|s| s.cut_short));
            slot
        })
        .collect();
    Ok(Record { header, slots, damaged_slots })
}

struct Summary {
    generation: u64,
    flush_unix_ns: u64,
    sequence_base: u64,
    high_water: u64,
    pages_written: u32,
}

fn page_at(section: &[u8], index: u64) -> &[u8] {
    let at = (index * PAGE_BYTES) as usize;
    &section[at..at + PAGE_BYTES as usize]
}

fn decode_worker(section: &[u8], worker: u32, extents: &[Extent]) -> Option<Slot> {
    let mut torn = false;
    let summaries: Vec<Summary> = (0..2)
        .filter_map(|k| {
            let b = page_at(section, k);
            let ok = b[..8] == SUMMARY_MAGIC && u32_at(b, 44) == worker && sealed(b);
            torn |= !ok && b.iter().any(|&x| x != 0);
            ok.then(|| Summary {
                generation: u64_at(b, 8),
                flush_unix_ns: u64_at(b, 16),
                sequence_base: u64_at(b, 24),
                high_water: u64_at(b, 32),
                pages_written: u32_at(b, 40),
            })
        })
        .collect();
    let blocks: u64 = extents.iter().map(|e| e.blocks).sum();
    let total_pages = worker_pages(extents);
    let mut table = vec![0u32; blocks as usize];
    let (mut newest, mut of_newest, mut page_base) = (0u64, 0u32, 0u64);
    let mut sequence_base = None;
    let mut region = 0usize;
    for e in extents {
        for p in 0..pages_of(e.blocks) {
            let page = page_base + p;
            let mut best: Option<&[u8]> = None;
            for k in 0..2 {
                let b = page_at(section, 2 + k * total_pages + page);
                let ok =
                    b[..8] == PAGE_MAGIC && u64::from(u32_at(b, 24)) == page && u32_at(b, 28) == worker && sealed(b);
                torn |= !ok && b.iter().any(|&x| x != 0);
                if !ok {
                    continue;
                }
                let g = u64_at(b, 8);
                match g.cmp(&newest) {
                    std::cmp::Ordering::Greater => (newest, of_newest) = (g, 1),
                    std::cmp::Ordering::Equal => of_newest += 1,
                    std::cmp::Ordering::Less => {}
                }
                if best.is_none_or(|o| g > u64_at(o, 8)) {
                    best = Some(b);
                }
            }
            let first = (p * ENTRIES_PER_PAGE) as usize;
            let n = (e.blocks as usize - first).min(ENTRIES_PER_PAGE as usize);
            if let Some(b) = best {
                sequence_base = Some(u64_at(b, 16));
                for (dst, src) in
                    table[region + first..region + first + n].iter_mut().zip(b[FIXED_BYTES..].chunks_exact(4))
                {
                    *dst = u32::from_le_bytes(src.try_into().expect("4"));
                }
            }
        }
        page_base += pages_of(e.blocks);
        region += e.blocks as usize;
    }
    let summary = summaries.iter().max_by_key(|s| s.generation);
    if summary.is_none() && newest == 0 {
        return torn.then(|| Slot { table, cut_short: true, ..Slot::default() });
    }
    let summary_generation = summary.map_or(0, |s| s.generation);
    let g_max = newest.max(summary_generation);
    let pages_promised = summary.filter(|s| s.generation == g_max).map(|s| s.pages_written);
    let of_g_max = if newest == g_max { of_newest } else { 0 };
    let cut_short = torn || summary_generation < g_max || pages_promised.is_some_and(|n| of_g_max < n);
    let generation = if cut_short { g_max.saturating_sub(1) } else { g_max };
    // The summary of the newest whole update (or the newest there is).
    let described = summaries.iter().find(|s| s.generation == generation).or(summary);
    Some(Slot {
        generation,
        flush_unix_ns: described.map_or(0, |s| s.flush_unix_ns),
        sequence_base: described.map(|s| s.sequence_base).or(sequence_base).unwrap_or(0),
        high_water: described.map_or(0, |s| s.high_water),
        table,
        cut_short,
    })
}

#[cfg(test)]
mod tests;
