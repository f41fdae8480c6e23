//! A run's third stage, `Ran`: its workers released together, supervised to their stop
//! and joined (or left behind when stuck in the kernel), `--fsync-on-close` done; and the
//! last step, `finish`: what they handed back as one `RunResult` with the exit code it
//! calls for.
//! Must not: format output (the report does), or touch a target after an abandoned
//! worker (it may still be in the kernel).

use super::assemble;
use super::execute::{self, Execution};
use super::messages;
use super::prepared::Prepared;
use super::start_line::StartLine;
use super::{RunOutcome, exit_code_of};
use crate::base::diagnostics::error::Error;
use crate::base::diagnostics::warnings::Diagnostics;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

/// A run whose workers have stopped.
pub(super) struct Ran<'a> {
    prepared: Prepared<'a>,
    execution: Execution,
}

impl<'a> Ran<'a> {
    /// Runs the workers on the prepared targets, one monomorphised run per engine (the
    /// engine list is engine/'s).
    pub(super) fn new(
        mut prepared: Prepared<'a>,
        diag: &Diagnostics,
        stop: &Arc<AtomicUsize>,
        start: &StartLine,
    ) -> Result<Self, Error> {
        let spec = prepared.spec();
        let mut execution = execute::execute(execute::Execute {
            spec,
            targets: &prepared.targets,
            layout: &prepared.checked.layout,
            depth: prepared.checked.effective_depth,
            stop,
            placement: &prepared.checked.placed.plan,
            shows_progress: diag.show_progress(),
            label: diag.label().map(str::to_string),
            start_line: start,
            devices: &prepared.devices,
            record: prepared
                .record
                .as_ref()
                .zip(prepared.checked.record_durability)
                .map(|((path, file), durability)| (path, file, durability)),
        })?;
        // A worker left behind may still be in the kernel: nothing more is asked of its targets.
        let abandoned = !execution.abandoned.is_empty();
        if spec.durability.fsync_on_close && !abandoned {
            if spec.io.engine.caps().touches_storage {
                execution.fsync = Some(execute::fsync_targets(&prepared.targets));
            } else {
                diag.note(messages::nothing_to_sync(spec.io.engine.name()));
            }
        }
        if let Some(warning) = &execution.opened.late_warning {
            diag.warn(warning.clone());
        }
        // The targets of a real run stay; the embedded default's files go with the run.
        if prepared.temp.is_none() {
            prepared.created.keep();
        }
        Ok(Ran { prepared, execution })
    }

    /// The run's result, its memory and expectations judged, and the exit code it calls for.
    pub(super) fn finish(self, diag: &Diagnostics, stop: &AtomicUsize, started_at: String) -> RunOutcome {
        let Ran { prepared, execution } = self;
        let spec = prepared.spec();
        let abandoned = !execution.abandoned.is_empty();
        let (window_start_unix_ns, mut start_at) = (execution.start_unix_ns, execution.opened.start_at.clone());
        if let Some(s) = &mut start_at {
            s.late_ns = window_start_unix_ns.saturating_sub(s.requested_unix_ns);
        }
        let planned = assemble::Planned {
            spec,
            diag,
            started_at,
            targets: &prepared.targets,
            removed_after_run: prepared.temp.is_some(),
            layout: &prepared.checked.layout,
            effective_depth: prepared.checked.effective_depth,
            placed: &prepared.checked.placed,
            devices: &prepared.devices,
        };
        let huge_page_bytes = execution.huge_page_bytes;
        let mut result = assemble::assemble(&planned, execution, stop);
        result.machine.memory = Some(crate::io::host::memory::MemoryEstimate {
            peak_resident_bytes: crate::io::host::rusage::peak_resident_bytes(),
            huge_page_bytes,
            ..prepared.checked.memory.clone()
        });
        result.window.window_start_unix_ns = window_start_unix_ns;
        result.window.start_at = start_at;
        result.outcome.expectations = crate::figures::expect::evaluate(&spec.output.expect, &result);
        let exit_code = exit_code_of(&result, stop);
        if abandoned {
            // Their descriptors stay open until the process exits, so that a worker that
            // comes back from the kernel never touches a descriptor number reused for
            // another file.
            let Prepared { targets, .. } = prepared;
            for t in targets {
                std::mem::forget(t.file);
            }
        }
        RunOutcome { result, exit_code }
    }
}
