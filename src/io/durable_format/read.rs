//! Reading the record back from its bytes (read from the file, bounded, by
//! `durable_record::read`): its header checked, each worker's pages taken copy by
//! copy (the valid copy of the highest generation), and an update cut short named.

use super::*;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// A bounded reader of the header's variable part.
pub(super) struct Cursor<'a> {
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

pub(super) fn decode_header(bytes: &[u8]) -> Result<(RecordHeader, usize), RecordError> {
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

pub(super) struct Summary {
    generation: u64,
    flush_unix_ns: u64,
    sequence_base: u64,
    high_water: u64,
    pages_written: u32,
}

pub(super) fn page_at(section: &[u8], index: u64) -> &[u8] {
    let at = (index * PAGE_BYTES) as usize;
    &section[at..at + PAGE_BYTES as usize]
}

pub(super) fn decode_worker(section: &[u8], worker: u32, extents: &[Extent]) -> Option<Slot> {
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
