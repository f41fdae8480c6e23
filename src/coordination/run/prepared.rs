//! A run's second stage, `Prepared`: its targets created, laid out and opened, its
//! `--verify-state` record locked, the block devices under the targets found. What was
//! created here is removed again if the run fails before its window (`CreatedFiles`).
//! Must not: start a worker or issue a benchmark's I/O.

use super::checked::Checked;
use super::durable_record;
use super::messages;
use crate::base::diagnostics::error::{Error, RunError};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::storage::durable_record::LockedRecord;
use crate::storage::targets::device_witness::Devices;
use crate::storage::targets::{self, CreatedFiles, PreparedTarget};
use crate::workload::spec::Spec;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A run ready for its workers.
pub(super) struct Prepared<'a> {
    pub(super) checked: Checked<'a>,
    pub(super) targets: Vec<PreparedTarget>,
    /// Files this run created: removed on failure, kept after a real run.
    pub(super) created: CreatedFiles,
    /// The embedded default's temporary file (removed with the run).
    pub(super) temp: Option<tempfile::NamedTempFile>,
    /// `--verify-state`: this rank's record path and its file, locked for the run.
    pub(super) record: Option<(PathBuf, LockedRecord)>,
    /// The block devices under the targets (none when nothing is touched).
    pub(super) devices: Devices,
}

impl<'a> Prepared<'a> {
    /// Locks the record (a second run given the same one is refused here, having touched
    /// nothing), then creates, lays out and opens the targets.
    pub(super) fn new(
        mut checked: Checked<'a>,
        temp: Option<tempfile::NamedTempFile>,
        record_path: Option<PathBuf>,
        diag: &Diagnostics,
        stop: &AtomicUsize,
    ) -> Result<Self, Error> {
        let record_file =
            if checked.record_durability.is_some() { durable_record::lock(record_path.as_ref())? } else { None };
        let plans = std::mem::take(&mut checked.plans);
        let spec: &Spec = &checked.spec;
        // With an engine that moves no bytes, nothing is created, laid out or opened
        // (storage/targets/prepare.rs).
        let (targets, created) = targets::prepare_targets(spec, plans, diag, stop)?;
        if stop.load(Ordering::Relaxed) != 0 {
            return Err(RunError::Other(messages::INTERRUPTED_IN_SET_UP.into()).into());
        }
        set_up_notes(spec, checked.distribution != spec.access.file_distribution, &targets, diag);
        // The block devices under the targets, found before the window: their counters
        // are read at its edges.
        let devices = if spec.io.engine.caps().touches_storage {
            Devices::find(targets.iter().map(|t| &t.file))
        } else {
            Devices::none()
        };
        let record = record_path.zip(record_file);
        Ok(Prepared { checked, targets, created, temp, record, devices })
    }

    pub(super) fn spec(&self) -> &Spec {
        &self.checked.spec
    }
}

/// What the set-up says before the window: workers given disjoint slices for `--verify`,
/// a depth the engine cannot have, buffered I/O where O_DIRECT was not had.
fn set_up_notes(spec: &Spec, partitioned_for_verify: bool, targets: &[PreparedTarget], diag: &Diagnostics) {
    let caps = spec.io.engine.caps();
    if partitioned_for_verify {
        diag.note(format!(
            "--verify with {} workers on shared targets: each worker owns a disjoint slice of the region (as --file-distribution partitioned), so no block is written by two workers at once",
            spec.shape.threads
        ));
    }
    if caps.completes_inline && spec.shape.queue_depth > 1 {
        diag.note(format!(
            "engine {} completes one I/O at a time per worker: --queue-depth {} runs at depth 1 (use --threads for parallel I/O)",
            spec.io.engine.name(),
            spec.shape.queue_depth
        ));
    }
    if let Some(note) = spec.io.engine.buffered_note()
        && !targets.iter().all(|t| t.direct.effective)
    {
        diag.note(note);
    }
}
