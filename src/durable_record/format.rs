//! The durable record's file (`--verify-state FILE`): its layout, how a worker updates its
//! part crash-safely, and how the file is read back, bounded and checked.
//!
//! Layout: a header (magic, the run's data seed, block size, pattern, each worker's slice
//! of the target), then per worker two slots of the same size. A slot holds one record:
//! a generation, the wall-clock time of the flush, the worker's write-sequence base and
//! high-water mark, and a table of one 32-bit sequence per block of the worker's slice
//! (0: no flushed write), all under a crc32c. A worker writes the slot its last record is
//! not in and then fdatasyncs, so a cut during an update leaves the other slot whole: the
//! reader takes the valid slot of the highest generation. Each worker owns its slots (no
//! lock between workers), and the file is sized and its header made durable before the
//! first I/O (written beside, fsynced, renamed into place, the directory fsynced).
//!
//! Must not: allocate when a record is written (the buffer is the writer's own), or parse
//! anything beyond the fixed layout.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

const FILE_MAGIC: [u8; 8] = *b"IOPDREC\x01";
const SLOT_MAGIC: [u8; 8] = *b"IOPSLOT\x01";
const VERSION: u32 = 1;
/// Bytes of a slot before its table, and of the header before its slices.
const FIXED_BYTES: usize = 64;
/// Bytes of one worker's slice in the header (first block, blocks).
const SLICE_BYTES: usize = 16;
/// Slots and the header are whole pages, so that a slot's write never shares a page with another's.
const PAGE_BYTES: u64 = 4096;
/// Most workers a record holds (the header stays small).
pub const MAX_WORKERS: u32 = 4096;
/// Largest state file read: the tables of 512 MiB of sequences (the most a run keeps),
/// twice, and the header.
pub const MAX_FILE_BYTES: u64 = (1 << 30) + (1 << 20);
/// Crc field of header and slots.
const CRC_AT: usize = 56;

/// What the run was, for the checker to regenerate its blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub block_size_bytes: u32,
    pub pattern_id: u32,
    pub seed: u64,
    /// The target's blocks when the run started.
    pub target_blocks: u64,
    /// Each worker's slice: (first target block, blocks).
    pub slices: Vec<(u64, u64)>,
}

/// One worker's last durable record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    pub generation: u64,
    pub flush_unix_ns: u64,
    /// The high 32 bits of every sequence the worker wrote (worker index and run nonce).
    pub sequence_base: u64,
    /// The worker's last write sequence (low 32 bits) covered by the flush.
    pub high_water: u64,
    /// Per block of the slice: the low 32 bits of the write the flush made durable (0: none).
    pub table: Vec<u32>,
}

/// The record as read back: the header and, per worker, its newest valid slot (`None`: no
/// flush of that worker was recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub header: RecordHeader,
    pub slots: Vec<Option<Slot>>,
    /// Slots found damaged (a cut during their update); the other slot was used.
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

fn slot_bytes(blocks: u64) -> u64 {
    (FIXED_BYTES as u64 + 4 * blocks).div_ceil(PAGE_BYTES) * PAGE_BYTES
}

fn header_bytes(workers: usize) -> u64 {
    ((FIXED_BYTES + SLICE_BYTES * workers) as u64).div_ceil(PAGE_BYTES) * PAGE_BYTES
}

/// Where each worker's two slots start, and the file's length.
fn sections(slices: &[(u64, u64)]) -> (Vec<u64>, u64) {
    let mut at = header_bytes(slices.len());
    let mut starts = Vec::with_capacity(slices.len());
    for &(_, blocks) in slices {
        starts.push(at);
        at += 2 * slot_bytes(blocks);
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

fn encode_header(h: &RecordHeader) -> Vec<u8> {
    let mut b = vec![0u8; header_bytes(h.slices.len()) as usize];
    b[..8].copy_from_slice(&FILE_MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&(h.slices.len() as u32).to_le_bytes());
    b[16..20].copy_from_slice(&h.block_size_bytes.to_le_bytes());
    b[20..24].copy_from_slice(&h.pattern_id.to_le_bytes());
    b[24..32].copy_from_slice(&h.seed.to_le_bytes());
    b[32..40].copy_from_slice(&h.target_blocks.to_le_bytes());
    for (i, &(first, blocks)) in h.slices.iter().enumerate() {
        let at = FIXED_BYTES + SLICE_BYTES * i;
        b[at..at + 8].copy_from_slice(&first.to_le_bytes());
        b[at + 8..at + 16].copy_from_slice(&blocks.to_le_bytes());
    }
    let crc = crc_without_field(&b);
    b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Creates the state file for a run: sized, its header durable, no slot written yet.
/// Returns the open file each worker's `RecordWriter` shares.
pub fn create(path: &Path, header: &RecordHeader) -> io::Result<Arc<File>> {
    let (_, len_bytes) = sections(&header.slices);
    let mut beside = path.as_os_str().to_os_string();
    beside.push(".new");
    let beside = std::path::PathBuf::from(beside);
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&beside)?;
    file.set_len(len_bytes)?;
    file.write_all_at(&encode_header(header), 0)?;
    file.sync_all()?;
    std::fs::rename(&beside, path)?;
    sync_directory_of(path)?;
    Ok(Arc::new(file))
}

/// fsync of the directory holding `path`: a rename is durable once its directory is.
fn sync_directory_of(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// Where a worker's slots start and how long each is (for `RecordWriter::new`).
pub fn worker_section(header: &RecordHeader, worker: usize) -> (u64, u64) {
    let (starts, _) = sections(&header.slices);
    (starts[worker], slot_bytes(header.slices[worker].1))
}

/// One worker's writer of its slots: its buffer is made once, so a record allocates nothing.
pub struct RecordWriter {
    file: Arc<File>,
    section_at: u64,
    slot_bytes: u64,
    buf: Vec<u8>,
    generation: u64,
    sequence_base: u64,
}

impl RecordWriter {
    pub fn new(file: Arc<File>, section_at: u64, slot_bytes: u64, blocks: u64, sequence_base: u64) -> Self {
        let mut buf = vec![0u8; FIXED_BYTES + 4 * blocks as usize];
        buf[..8].copy_from_slice(&SLOT_MAGIC);
        buf[48..56].copy_from_slice(&blocks.to_le_bytes());
        Self { file, section_at, slot_bytes, buf, generation: 0, sequence_base }
    }

    /// Records that the flush that just completed made `table` (the low 32 bits of the last
    /// write to each block) durable, up to write `high_water`: into the slot the previous
    /// record is not in, then fdatasync.
    pub fn record(&mut self, table: &[u32], high_water: u64) -> io::Result<()> {
        self.generation += 1;
        let flush_unix_ns =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let b = &mut self.buf;
        b[8..16].copy_from_slice(&self.generation.to_le_bytes());
        b[16..24].copy_from_slice(&flush_unix_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.sequence_base.to_le_bytes());
        b[32..40].copy_from_slice(&high_water.to_le_bytes());
        for (dst, &s) in b[FIXED_BYTES..].chunks_exact_mut(4).zip(table) {
            dst.copy_from_slice(&s.to_le_bytes());
        }
        b[CRC_AT..CRC_AT + 4].fill(0);
        let crc = crc_without_field(b);
        b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
        let at = self.section_at + (self.generation % 2) * self.slot_bytes;
        self.file.write_all_at(b, at)?;
        self.file.sync_data()
    }
}

/// Reads the state file at `path` (a regular file of at most `MAX_FILE_BYTES`).
pub fn read(path: &Path) -> Result<Record, RecordError> {
    let mut bytes = Vec::new();
    crate::targets::input_file::open(path, MAX_FILE_BYTES)?
        .read_to_end(&mut bytes)
        .map_err(crate::targets::input_file::InputFileError::Io)?;
    decode(&bytes)
}

/// The record held in `bytes` (a whole state file).
pub fn decode(bytes: &[u8]) -> Result<Record, RecordError> {
    if bytes.len() < FIXED_BYTES || bytes[..8] != FILE_MAGIC {
        return Err(RecordError::NotARecord("no record magic at its start"));
    }
    if u32_at(bytes, 8) != VERSION {
        return Err(RecordError::NotARecord("a version this iopulse does not read"));
    }
    let workers = u32_at(bytes, 12);
    if workers == 0 || workers > MAX_WORKERS {
        return Err(RecordError::Damaged(format!("its header names {workers} workers")));
    }
    let head_len = header_bytes(workers as usize) as usize;
    if bytes.len() < head_len {
        return Err(RecordError::Damaged(format!("{} bytes, shorter than its header", bytes.len())));
    }
    let head = &bytes[..head_len];
    if u32_at(head, CRC_AT) != crc_without_field(head) {
        return Err(RecordError::Damaged("its header's checksum fails".into()));
    }
    let slices: Vec<(u64, u64)> = (0..workers as usize)
        .map(|i| (u64_at(head, FIXED_BYTES + SLICE_BYTES * i), u64_at(head, FIXED_BYTES + SLICE_BYTES * i + 8)))
        .collect();
    let header = RecordHeader {
        block_size_bytes: u32_at(head, 16),
        pattern_id: u32_at(head, 20),
        seed: u64_at(head, 24),
        target_blocks: u64_at(head, 32),
        slices,
    };
    if header.slices.iter().any(|&(first, blocks)| first.checked_add(blocks).is_none_or(|e| e > header.target_blocks)) {
        return Err(RecordError::Damaged("a worker's slice lies outside the target".into()));
    }
    let (starts, len_bytes) = sections(&header.slices);
    if bytes.len() as u64 != len_bytes {
        return Err(RecordError::Damaged(format!(
            "{} bytes where its header implies {len_bytes} (truncated or grown)",
            bytes.len()
        )));
    }
    let mut damaged_slots = 0;
    let mut slots = Vec::with_capacity(header.slices.len());
    for (w, &(_, blocks)) in header.slices.iter().enumerate() {
        let len = slot_bytes(blocks) as usize;
        let mut best: Option<Slot> = None;
        for k in 0..2 {
            let at = starts[w] as usize + k * len;
            let raw = &bytes[at..at + FIXED_BYTES + 4 * blocks as usize];
            match decode_slot(raw, blocks) {
                Some(s) if best.as_ref().is_none_or(|b| s.generation > b.generation) => best = Some(s),
                Some(_) => {}
                None if raw.iter().any(|&b| b != 0) => damaged_slots += 1,
                None => {}
            }
        }
        slots.push(best);
    }
    Ok(Record { header, slots, damaged_slots })
}

fn decode_slot(raw: &[u8], blocks: u64) -> Option<Slot> {
    if raw[..8] != SLOT_MAGIC || u64_at(raw, 48) != blocks || u32_at(raw, CRC_AT) != crc_without_field(raw) {
        return None;
    }
    Some(Slot {
        generation: u64_at(raw, 8),
        flush_unix_ns: u64_at(raw, 16),
        sequence_base: u64_at(raw, 24),
        high_water: u64_at(raw, 32),
        table: raw[FIXED_BYTES..].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> RecordHeader {
        RecordHeader { block_size_bytes: 4096, pattern_id: 1, seed: 7, target_blocks: 10, slices: vec![(0, 4), (4, 6)] }
    }

    #[test]
    fn the_newest_whole_slot_is_read_and_a_torn_update_leaves_the_previous() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let file = create(&path, &header()).unwrap();
        let (at, len) = worker_section(&header(), 1);
        let mut w = RecordWriter::new(Arc::clone(&file), at, len, 6, 5 << 32);
        w.record(&[1, 2, 3, 0, 0, 9], 9).unwrap();
        w.record(&[1, 2, 3, 10, 0, 9], 10).unwrap();
        let r = read(&path).unwrap();
        assert_eq!(r.slots[0], None);
        let s = r.slots[1].as_ref().unwrap();
        assert_eq!((s.generation, s.high_water, s.sequence_base), (2, 10, 5 << 32));
        assert_eq!(s.table, vec![1, 2, 3, 10, 0, 9]);
        // A cut in the middle of the third update (into generation 1's slot): generation 2 stays.
        let mut bytes = std::fs::read(&path).unwrap();
        let third = (at + len) as usize;
        bytes[third + FIXED_BYTES..third + FIXED_BYTES + 8].fill(0xee);
        bytes[third + 8] = 3;
        let r = decode(&bytes).unwrap();
        assert_eq!(r.slots[1].as_ref().unwrap().generation, 2);
        assert_eq!(r.damaged_slots, 1);
    }

    #[test]
    fn a_truncated_or_foreign_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        create(&path, &header()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let e = decode(&bytes[..bytes.len() - 1]).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = decode(b"hello world, this is not a record at all; nothing here is a record").unwrap_err();
        assert!(matches!(e, RecordError::NotARecord(_)), "{e}");
        let mut bad = bytes.clone();
        bad[20] ^= 1;
        assert!(decode(&bad).unwrap_err().to_string().contains("checksum"));
    }
}
