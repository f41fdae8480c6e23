//! `--verify-state FILE`: the durable record's file made for a run (sized, its header
//! durable) before the workers start, and each worker's writer of its slots.
//!
//! Must not: write a slot (the workers do, at their flush completions).

use super::region::RegionLayout;
use super::worker_plan::tracks_sequences;
use crate::diagnostics::error::{Error, RunError};
use crate::durable_record::format::{self, RecordHeader, RecordWriter};
use crate::spec::Spec;
use std::fs::File;
use std::sync::Arc;

/// The record's file, shared by the workers, and its header.
pub(super) struct DurableRecord {
    file: Arc<File>,
    header: RecordHeader,
}

impl DurableRecord {
    /// Creates the file of `spec.verify_state` (none without the flag).
    pub(super) fn create(spec: &Spec, layout: &RegionLayout) -> Result<Option<Self>, Error> {
        let Some(path) = &spec.verify_state else { return Ok(None) };
        let verify = spec.verify.expect("--verify-state is refused without --verify");
        if !tracks_sequences(spec, layout) || layout.threads > format::MAX_WORKERS {
            return Err(RunError::Other(format!(
                "--verify-state {}: the region is too large to keep each block's last write (at most 128 Mi blocks): use a larger --block-size or a smaller --file-size",
                path.display()
            ))
            .into());
        }
        let header = RecordHeader {
            block_size_bytes: spec.block_size_bytes as u32,
            pattern_id: verify.pattern.id(),
            seed: spec.data_seed,
            target_blocks: layout.total_blocks,
            slices: (0..layout.threads)
                .map(|w| {
                    let r = layout.worker(w);
                    (r.first_block, r.blocks)
                })
                .collect(),
        };
        let file = format::create(path, &header)
            .map_err(|e| RunError::Other(format!("create the --verify-state record {}: {e}", path.display())))?;
        Ok(Some(Self { file, header }))
    }

    /// Worker `w`'s writer; `sequence_base` is the high bits of its write sequences.
    pub(super) fn writer(&self, w: u32, sequence_base: u64) -> RecordWriter {
        let (at, slot_bytes) = format::worker_section(&self.header, w as usize);
        let blocks = self.header.slices[w as usize].1;
        RecordWriter::new(Arc::clone(&self.file), at, slot_bytes, blocks, sequence_base)
    }
}
