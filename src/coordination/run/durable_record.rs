//! `--verify-state FILE`: what makes a run's completed writes durable (decided when the run
//! is planned, before anything is touched: a run with no such moment is refused), the
//! record's file locked for the run before any target is touched (`lock`: a second run
//! given the same record is refused, naming the first's pid), the record written into it
//! (sized, its header durable, each target's identity) before the workers start, and each
//! worker's writer of its section.
//!
//! Must not: write a record update (the workers do, at their flush completions or every N
//! writes durable at completion).

use super::region::RegionLayout;
use super::worker_plan::tracks_sequences;
use crate::base::diagnostics::error::{Error, RunError, UsageError};
use crate::io::durable_format::{
    self as format, Durability, RecordHeader, RecordTarget, RecordWriter, TargetIdentity, WriterFile,
};
use crate::storage::durable_record::{self, LockedRecord, OpenError};
use crate::storage::targets::{PreparedTarget, TargetKind, TargetPlan};
use crate::workload::spec::Spec;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;
use std::sync::Arc;

/// Completed writes between record updates when they are durable at completion and
/// `--verify-state-every` is not given.
pub(super) const DEFAULT_EVERY_WRITES: u64 = 64;

/// How the record of `spec` follows durability, given its targets (nothing touched yet):
/// `None` without `--verify-state`. A flush stream; `--sync-writes` (every completed write
/// durable); or `--direct` with no flush stream, only on block devices whose write cache
/// is write through (with a volatile cache an O_DIRECT write is durable only after a
/// flush; on a file, only once the filesystem's metadata is).
pub(super) fn durability(spec: &Spec, plans: &[TargetPlan]) -> Result<Option<Durability>, UsageError> {
    let Some(state) = &spec.data.verify_state else { return Ok(None) };
    if spec.durability.sync_writes.is_some() {
        return Ok(Some(Durability::SyncWrites));
    }
    if spec.durability.flush.is_some() {
        return Ok(Some(Durability::Flushes));
    }
    let fix = "add --fdatasync-every N (or --fsync-every N) or --sync-writes dsync";
    for plan in plans {
        let path = plan.path.display();
        if plan.kind != TargetKind::BlockDevice {
            return Err(UsageError::new(format!(
                "--verify-state {} with --direct and no flush stream: {path} is a file, and an O_DIRECT write to a file is durable only once the filesystem's metadata is flushed: {fix}",
                state.display()
            )));
        }
        let cache = std::fs::metadata(&plan.path)
            .ok()
            .filter(|m| m.file_type().is_block_device())
            .and_then(|m| crate::storage::targets::fsinfo::write_cache(m.rdev()));
        match cache.as_deref() {
            Some("write through") => {}
            Some(other) => {
                return Err(UsageError::new(format!(
                    "--verify-state {} with --direct and no flush stream: {path} has a volatile write cache (queue/write_cache reads \"{other}\"), so a completed write is durable only after a flush: {fix}",
                    state.display()
                )));
            }
            None => {
                return Err(UsageError::new(format!(
                    "--verify-state {} with --direct and no flush stream: the write cache of {path} cannot be read (queue/write_cache in sysfs), so no completed write is known durable: {fix}",
                    state.display()
                )));
            }
        }
    }
    Ok(Some(Durability::DirectWriteThrough))
}

/// The record's file at `path` (this rank's `--verify-state`), opened and locked for the
/// run before any target is touched: refused (exit 2, nothing touched) when another run
/// holds it or it is not a regular file. `None` without a record.
pub(super) fn lock(path: Option<&PathBuf>) -> Result<Option<LockedRecord>, Error> {
    let Some(path) = path else { return Ok(None) };
    // Where the ledger's guard saw it land: a link is followed there, and no further.
    let landed = crate::storage::targets::identity::landing(path);
    if !crate::storage::ledger::judged::is_output_landing(&landed) {
        return Err(RunError::Other(format!(
            "--verify-state {}: it lands at {}, where no output was judged before the run: nothing written",
            path.display(),
            landed.display()
        ))
        .into());
    }
    durable_record::open_locked(&landed).map(Some).map_err(|e| match e {
        OpenError::Busy(busy) => UsageError::new(format!(
            "--verify-state {} {busy}: two runs cannot keep one record; wait for it to end, or give each run its own record",
            path.display()
        ))
        .into(),
        OpenError::NotRegular(_) => UsageError::new(format!("--verify-state {} {e}", path.display())).into(),
        OpenError::Io(e) => {
            RunError::Other(format!("open the --verify-state record {}: {e}", path.display())).into()
        }
    })
}

/// The record's file, shared by the workers, and its header.
pub(super) struct DurableRecord {
    file: Arc<File>,
    header: RecordHeader,
    /// Per worker: its writer's files.
    files: Vec<Vec<WriterFile>>,
    every_writes: u64,
}

impl DurableRecord {
    /// Writes the record into `state` (the run's `--verify-state` file, per rank, locked)
    /// for a record that follows `durability`; none without one.
    pub(super) fn create(
        spec: &Spec,
        state: Option<(&PathBuf, &LockedRecord)>,
        durability: Option<Durability>,
        layout: &RegionLayout,
        targets: &[PreparedTarget],
    ) -> Result<Option<Self>, Error> {
        let (Some((path, locked)), Some(durability)) = (state, durability) else { return Ok(None) };
        let verify = spec.data.verify.expect("--verify-state is refused without --verify");
        if !tracks_sequences(spec, layout) || layout.threads > format::MAX_WORKERS {
            return Err(RunError::Other(format!(
                "--verify-state {}: the region is too large to keep each block's last write (at most 128 Mi blocks): use a larger --block-size or a smaller --file-size",
                path.display()
            ))
            .into());
        }
        let mut workers = Vec::with_capacity(layout.threads as usize);
        let mut files = Vec::with_capacity(layout.threads as usize);
        for w in 0..layout.threads {
            let region = layout.worker(w);
            let mut first = 0;
            let mut worker_files = Vec::with_capacity(region.files.len());
            for &(t, blocks) in &region.files {
                worker_files.push((t, first, blocks));
                first += blocks;
            }
            let (extents, writer_files) = format::worker_geometry(&worker_files, region.first_block, region.blocks);
            workers.push(extents);
            files.push(writer_files);
        }
        let header = RecordHeader {
            block_size_bytes: spec.shape.block_size_bytes as u32,
            pattern_id: verify.pattern.id(),
            seed: spec.data.data_seed,
            durability,
            targets: targets
                .iter()
                .zip(&layout.target_blocks)
                .map(|(t, &blocks)| {
                    let identity = TargetIdentity::of(&t.file).map_err(|e| RunError::Target {
                        op: "stat (for the --verify-state record)",
                        path: t.plan.path.clone(),
                        source: e,
                    })?;
                    Ok(RecordTarget {
                        path: std::path::absolute(&t.plan.path).unwrap_or_else(|_| t.plan.path.clone()),
                        blocks,
                        identity: Some(identity),
                    })
                })
                .collect::<Result<_, RunError>>()?,
            workers,
        };
        let file = format::create(locked.file(), &header)
            .map_err(|e| RunError::Other(format!("create the --verify-state record {}: {e}", path.display())))?;
        // With a flush stream the record follows the flushes; otherwise every N writes.
        let every_writes = if spec.durability.flush.is_some() {
            0
        } else {
            spec.data.verify_state_every.unwrap_or(DEFAULT_EVERY_WRITES)
        };
        Ok(Some(Self { file, header, files, every_writes }))
    }

    /// Worker `w`'s writer; `sequence_base` is the high bits of its write sequences.
    pub(super) fn writer(&self, w: u32, sequence_base: u64) -> RecordWriter {
        RecordWriter::new(
            Arc::clone(&self.file),
            &self.header,
            w,
            self.files[w as usize].clone(),
            sequence_base,
            self.every_writes,
        )
    }
}
