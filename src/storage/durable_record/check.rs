//! `iopulse verify [TARGET]... --state FILE`: each block of every target of the record judged
//! against it (what the last recorded update of its worker's record said was durable).
//!
//! With `d` the write the record says a block's flush made durable (0: none):
//! - intact: the block holds write `d` (d > 0);
//! - unflushed new: it holds a write of this run newer than `d` (written after the flush);
//! - unflushed old: no flush covered a write to it (d = 0) and it holds older data (zeros,
//!   the layout, another run's): allowed, as is new;
//! - lost though flushed: d > 0 but it holds an older write, zeros, the layout or another
//!   run's data: a broken promise;
//! - torn: its 512-byte sectors come from two or more writes (or zeros), each whole; the
//!   parts are reported. A torn block that lost part of write `d` is a broken promise too;
//! - corrupt: a header whose checksum fails and no such decomposition.
//!
//! It computes a report as plain data; formatting is the command's.

use crate::io::data::Pattern;
use crate::io::data::verify;
use crate::io::durable_format::Record;
use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Sector size a torn block is cut into.
const SECTOR_BYTES: usize = 512;
/// First offsets listed per class.
pub const FIRST_OFFSETS: usize = 10;
/// Blocks read from the target at once.
const READ_BLOCKS: u64 = 256;

/// What a block holds, relative to the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Intact,
    LostThoughFlushed,
    UnflushedOld,
    UnflushedNew,
    Torn,
    Corrupt,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::Intact,
        Class::LostThoughFlushed,
        Class::UnflushedOld,
        Class::UnflushedNew,
        Class::Torn,
        Class::Corrupt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Intact => "intact",
            Class::LostThoughFlushed => "lost_though_flushed",
            Class::UnflushedOld => "unflushed_old",
            Class::UnflushedNew => "unflushed_new",
            Class::Torn => "torn",
            Class::Corrupt => "corrupt",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Where one part of a torn block came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum PartSource {
    /// A write of this run (the low 32 bits of its sequence).
    Write {
        sequence: u32,
    },
    /// The layout's block (written before the run).
    Layout,
    Zeros,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TornPart {
    pub at_byte: u32,
    pub len_bytes: u32,
    #[serde(flatten)]
    pub source: PartSource,
}

/// Where a block is: its target (index in the record) and offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Place {
    pub target: u32,
    pub offset_bytes: u64,
}

/// A torn block: its parts in order, and whether it lost part of its flushed write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TornBlock {
    /// The target's index in the record (named by the command).
    #[serde(skip)]
    pub target: u32,
    pub offset_bytes: u64,
    /// The write the record says is durable there (0: none).
    pub durable_sequence: u32,
    pub broken_promise: bool,
    pub parts: Vec<TornPart>,
}

/// The verdict on the whole target.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    pub blocks: u64,
    pub block_size_bytes: u32,
    /// Counts per class, in `Class::ALL`'s order (named in the JSON by the command).
    pub counts: [u64; 6],
    /// Counts per class of each target, in the record's order.
    pub counts_by_target: Vec<[u64; 6]>,
    /// The first offsets of each class, up to `FIRST_OFFSETS`.
    pub first_offsets: [Vec<Place>; 6],
    /// The first torn blocks with their parts.
    pub torn: Vec<TornBlock>,
    /// Torn blocks that lost part of a flushed write (broken promises among `torn`).
    pub torn_broken_promises: u64,
    /// Wall-clock time (ns since the epoch) of the newest flush the record holds (0: none).
    pub last_flush_unix_ns: u64,
    /// Flushes (record updates) of the newest worker record; workers with none.
    pub workers: u32,
    pub workers_without_flush: u32,
    /// Workers whose last record update was cut short (their pages before it were used).
    pub damaged_slots: u32,
}

impl CheckReport {
    pub fn count(&self, c: Class) -> u64 {
        self.counts[c.index()]
    }

    /// Any promise broken: a block lost though flushed, a torn flushed write, corruption.
    pub fn violated(&self) -> bool {
        self.count(Class::LostThoughFlushed) > 0 || self.torn_broken_promises > 0 || self.count(Class::Corrupt) > 0
    }

    fn add(&mut self, c: Class, place: Place) {
        self.counts[c.index()] += 1;
        self.counts_by_target[place.target as usize][c.index()] += 1;
        let first = &mut self.first_offsets[c.index()];
        if first.len() < FIRST_OFFSETS {
            first.push(place);
        }
    }
}

/// Why the targets could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{path}: the record is of a target of {record} blocks of {block_size} bytes, but it holds {found} of them")]
    TooSmall { path: String, record: u64, block_size: u32, found: u64 },
    #[error("the record names pattern {0}, which this iopulse does not know")]
    UnknownPattern(u32),
    #[error("{path}: read at offset {offset_bytes}: {source}")]
    Read { path: String, offset_bytes: u64, source: std::io::Error },
}

/// One target opened for the check: the file, its length, and its name for messages.
pub struct OpenTarget {
    pub file: File,
    pub len_bytes: u64,
    pub name: String,
}

/// Judges every block of every worker's extents against `record`; `targets` in the
/// record's order.
pub fn check(targets: &[OpenTarget], record: &Record) -> Result<CheckReport, CheckError> {
    let h = &record.header;
    let bs = h.block_size_bytes as u64;
    let pattern = Pattern::from_id(h.pattern_id).ok_or(CheckError::UnknownPattern(h.pattern_id))?;
    for (t, rt) in targets.iter().zip(&h.targets) {
        let found = t.len_bytes / bs.max(1);
        if found < rt.blocks {
            return Err(CheckError::TooSmall {
                path: t.name.clone(),
                record: rt.blocks,
                block_size: h.block_size_bytes,
                found,
            });
        }
    }
    let mut report = CheckReport {
        block_size_bytes: h.block_size_bytes,
        workers: h.workers.len() as u32,
        damaged_slots: record.damaged_slots,
        counts_by_target: vec![[0; 6]; h.targets.len()],
        ..Default::default()
    };
    let mut buf = vec![0u8; (READ_BLOCKS * bs) as usize];
    let mut scratch = vec![0u8; bs as usize];
    for (w, extents) in h.workers.iter().enumerate() {
        let slot = record.slots[w].as_ref();
        match slot {
            Some(s) => report.last_flush_unix_ns = report.last_flush_unix_ns.max(s.flush_unix_ns),
            None => report.workers_without_flush += 1,
        }
        let base_high = slot.map_or(0, |s| s.sequence_base >> 32);
        let mut table_at = 0usize;
        for e in extents {
            let target = &targets[e.target as usize];
            let mut r = 0;
            while r < e.blocks {
                let n = (e.blocks - r).min(READ_BLOCKS);
                let offset_bytes = (e.first_block + r) * bs;
                let chunk = &mut buf[..(n * bs) as usize];
                target.file.read_exact_at(chunk, offset_bytes).map_err(|source| CheckError::Read {
                    path: target.name.clone(),
                    offset_bytes,
                    source,
                })?;
                for i in 0..n {
                    let block = &chunk[(i * bs) as usize..((i + 1) * bs) as usize];
                    let durable = slot.map_or(0, |s| s.table[table_at + (r + i) as usize]);
                    let at = offset_bytes + i * bs;
                    let judge = Judge { seed: h.seed, pattern, offset_bytes: at, durable, base_high };
                    let place = Place { target: e.target, offset_bytes: at };
                    match judge.classify(block, &mut scratch) {
                        Verdict::Class(c) => report.add(c, place),
                        Verdict::Torn(parts) => {
                            report.add(Class::Torn, place);
                            let broken = durable != 0
                                && parts.iter().any(|p| match p.source {
                                    PartSource::Write { sequence } => sequence < durable,
                                    _ => true,
                                });
                            report.torn_broken_promises += u64::from(broken);
                            if report.torn.len() < FIRST_OFFSETS {
                                report.torn.push(TornBlock {
                                    target: e.target,
                                    offset_bytes: at,
                                    durable_sequence: durable,
                                    broken_promise: broken,
                                    parts,
                                });
                            }
                        }
                    }
                }
                r += n;
            }
            table_at += e.blocks as usize;
            report.blocks += e.blocks;
        }
    }
    Ok(report)
}

enum Verdict {
    Class(Class),
    Torn(Vec<TornPart>),
}

/// What one block should be, per the record.
struct Judge {
    seed: u64,
    pattern: Pattern,
    offset_bytes: u64,
    /// Low 32 bits of the durable write (0: none).
    durable: u32,
    /// The high 32 bits of the worker's sequences (worker index, run nonce); 0 when unknown.
    base_high: u64,
}

impl Judge {
    fn classify(&self, block: &[u8], scratch: &mut [u8]) -> Verdict {
        let expect = verify::Expect {
            seed: self.seed,
            offset_bytes: self.offset_bytes,
            pattern: self.pattern,
            sequence: None,
            reduction: crate::io::data::Reduction::NONE,
        };
        let older = if self.durable == 0 { Class::UnflushedOld } else { Class::LostThoughFlushed };
        match verify::check(block, &expect, scratch) {
            Ok(()) => {
                let s = verify::header_sequence(block);
                let ours = self.base_high == 0 || s >> 32 == self.base_high;
                let low = s as u32;
                if s == 0 || !ours {
                    // The layout's block, or another run's with the same seed.
                    Verdict::Class(older)
                } else if low == self.durable {
                    Verdict::Class(Class::Intact)
                } else if low > self.durable {
                    Verdict::Class(Class::UnflushedNew)
                } else {
                    Verdict::Class(older)
                }
            }
            // Whole blocks, but not this offset's writes of this run: old data.
            Err(
                verify::Failure::OtherRun { .. }
                | verify::Failure::Misplaced { .. }
                | verify::Failure::NeverWrittenZeros,
            ) => Verdict::Class(older),
            Err(_) => match self.torn_parts(block) {
                Some(parts) => Verdict::Torn(parts),
                // No iopulse header at all: data from before (stale), not a broken checksum.
                None if !verify::has_magic(block) => Verdict::Class(older),
                None => Verdict::Class(Class::Corrupt),
            },
        }
    }

    /// The block cut into sectors each wholly from one candidate write (the header's, the
    /// durable one, the layout's) or zeros, when it takes two sources or more.
    fn torn_parts(&self, block: &[u8]) -> Option<Vec<TornPart>> {
        if !block.len().is_multiple_of(SECTOR_BYTES) {
            return None;
        }
        let base = self.base_high << 32;
        let mut candidates: Vec<(PartSource, Vec<u8>)> = Vec::with_capacity(3);
        let mut add = |source: PartSource, sequence: u64| {
            if !candidates.iter().any(|(s, _)| *s == source) {
                let mut b = vec![0u8; block.len()];
                verify::stamp(&mut b, self.pattern, self.seed, self.offset_bytes, sequence);
                candidates.push((source, b));
            }
        };
        if verify::has_magic(block) {
            let s = verify::header_sequence(block);
            if s == 0 {
                add(PartSource::Layout, 0);
            } else if self.base_high == 0 || s >> 32 == self.base_high {
                add(PartSource::Write { sequence: s as u32 }, s);
            }
        }
        if self.durable != 0 {
            add(PartSource::Write { sequence: self.durable }, base | u64::from(self.durable));
        }
        add(PartSource::Layout, 0);
        let mut parts: Vec<TornPart> = Vec::new();
        for (i, sector) in block.chunks_exact(SECTOR_BYTES).enumerate() {
            let range = i * SECTOR_BYTES..(i + 1) * SECTOR_BYTES;
            let source = if sector.iter().all(|&b| b == 0) {
                PartSource::Zeros
            } else {
                candidates.iter().find(|(_, c)| c[range.clone()] == *sector).map(|(s, _)| *s)?
            };
            match parts.last_mut() {
                Some(p) if p.source == source => p.len_bytes += SECTOR_BYTES as u32,
                _ => parts.push(TornPart { at_byte: range.start as u32, len_bytes: SECTOR_BYTES as u32, source }),
            }
        }
        (parts.len() > 1).then_some(parts)
    }
}
