//! `iopulse replay`'s flags (help heading "Replay"): how a trace is timed (`--speed`,
//! `--as-fast-as-possible`), where its offsets land on a smaller target (`--remap`), the
//! depth and the new file's size, and the engine, target and safety groups every run
//! takes; and the `Spec` of a replay, made through the same `WorkloadArgs::into_spec`
//! (and so the same checks) as the benchmark's.
//!
//! Must not: open a file (the trace is read by the command, the target by `storage/targets/`).

use super::WorkloadArgs;
use super::safety::SafetyArgs;
use super::targets::TargetArgs;
use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::{Bytes, Count, Percent};
use crate::io::engine::options::EngineArgs;
use crate::io::trace::remap::Remap;
use crate::io::trace::{Trace, TraceOp};
use crate::workload::spec::{ReplaySpec, Spec};
use std::path::PathBuf;

/// The replay's I/Os in flight at most, unless `--queue-depth` says otherwise: enough for
/// the concurrency of most traces, so that an I/O does not wait for a slot past its time.
pub const DEFAULT_REPLAY_DEPTH: u32 = 32;

/// The fastest `--speed`.
const MAX_SPEED: f64 = 1_000_000.0;

#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Replay")]
pub struct ReplayFlags {
    /// Replay the trace's times divided by X [default: 1]
    ///
    /// Replay the trace's times divided by X: 2 runs twice as fast, 0.5 half as fast.
    /// E.g. `--speed 2` [default: 1, the trace's own times]
    #[arg(long, value_name = "X", conflicts_with = "as_fast_as_possible")]
    pub speed: Option<f64>,

    /// Ignore the trace's times, keep its order.
    ///
    /// Ignore the trace's times: each I/O goes as soon as a slot is free (the order kept).
    #[arg(long)]
    pub as_fast_as_possible: bool,

    /// Where offsets past the target's end go [default: modulo]
    ///
    /// Where offsets past the target's end go: modulo (offset mod the target's size: I/Os
    /// close together stay together) or scaled (offset × size / the trace's extent: the
    /// spread over the device is kept). A trace that fits keeps its offsets. [default: modulo]
    #[arg(long, value_enum, value_name = "HOW")]
    pub remap: Option<Remap>,

    /// I/Os in flight at most [default: the trace's]
    ///
    /// I/Os in flight at most (async engines; sync completes one at a time): an I/O due
    /// while every slot is busy goes late, and its lag says so. [default: 32 with an
    /// async engine]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    pub queue_depth: Option<Count<u32>>,

    /// Size of a new target file.
    ///
    /// Size of a new target file. [default: the trace's extent, rounded up to 1 MiB; an
    /// existing file or device keeps its size]
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE")]
    pub file_size: Option<Bytes>,

    #[command(flatten)]
    pub engine: EngineArgs,

    #[command(flatten)]
    pub targets: TargetArgs,

    #[command(flatten)]
    pub safety: SafetyArgs,
}

impl ReplayFlags {
    /// The run replaying `trace` on `target` (`target_exists`: a new file is laid out to
    /// the trace's extent unless --file-size says otherwise). The trace's entries move
    /// into the Spec (`trace.ios` is left empty).
    pub fn into_spec(
        self,
        trace: &mut Trace,
        target: PathBuf,
        target_exists: bool,
        time_series_file: bool,
    ) -> Result<Spec, UsageError> {
        let speed = match (self.as_fast_as_possible, self.speed) {
            (true, _) => None,
            (false, None) => Some(1.0),
            (false, Some(x)) if x.is_finite() && x > 0.0 && x <= MAX_SPEED => Some(x),
            (false, Some(x)) => {
                return Err(UsageError::new(format!(
                    "--speed {}: a factor above 0 and at most {MAX_SPEED} (2 replays twice as fast), or --as-fast-as-possible",
                    crate::base::units::display::number(x)
                )));
            }
        };
        // The trace's span at this speed is what the replay schedules: a speed so slow that
        // it passes what any trace may span (10 years) would never end.
        if let Some(x) = speed {
            let max_ns = crate::io::trace::iolog::MAX_TIME_US as f64 * 1000.0;
            let scheduled_ns = trace.span_ns() as f64 / x;
            if scheduled_ns.is_nan() || scheduled_ns > max_ns {
                return Err(UsageError::new(format!(
                    "--speed {}: the trace's {} would take {} s to replay, more than 10 years: give a larger --speed, or --as-fast-as-possible",
                    crate::base::units::display::number(x),
                    crate::base::units::display::seconds_ns(trace.span_ns()),
                    crate::base::units::display::number(scheduled_ns / 1e9)
                )));
            }
        }
        let ios = trace.ios.len() as u64;
        let (reads, writes) = (trace.count(TraceOp::Read), trace.count(TraceOp::Write));
        let (trims, flushes) = (trace.count(TraceOp::Trim), trace.flushes());
        if ios == 0 {
            return Err(UsageError::new(format!(
                "{}: nothing to replay (no read, write, trim or flush; {} empty I/Os skipped)",
                trace.files.first().map_or(String::new(), |p| p.display().to_string()),
                trace.skipped.empty
            )));
        }
        // (A trim has no buffer: O_DIRECT's alignment is for transfers.)
        if self.engine.direct
            && let Some(io) = trace.ios.iter().find(|io| io.op.is_transfer() && io.len_bytes % 512 != 0)
        {
            return Err(UsageError::new(format!(
                "--direct: the trace has an I/O of {} bytes at offset {}, not a multiple of 512 bytes (O_DIRECT needs whole sectors): replay without --direct",
                io.len_bytes, io.offset_bytes
            )));
        }
        let extent_bytes = trace.extent_bytes();
        let file_size = self.file_size.or((!target_exists).then(|| Bytes(extent_bytes.next_multiple_of(1 << 20))));
        // An engine that completes one I/O at a time has no depth to default to.
        let queue_depth = match self.queue_depth {
            Some(d) => Some(d),
            None if self.engine.kind().caps().completes_inline => None,
            None => Some(Count(DEFAULT_REPLAY_DEPTH)),
        };
        let mut workload =
            WorkloadArgs { engine: self.engine, targets: self.targets, safety: self.safety, ..Default::default() };
        workload.shape.queue_depth = queue_depth;
        workload.shape.file_size = file_size;
        // The unit the target is counted in (a sector); each I/O has the trace's own size.
        workload.shape.block_size = Some(Bytes(512));
        // Which data the run prepares: writes need it, reads need buffers. (Trims make the
        // run one that changes the target too: `Spec::writes`.)
        workload.shape.read_percent = Some(Percent(if writes == 0 {
            100
        } else if reads == 0 {
            0
        } else {
            50
        }));
        workload.window.ops = Some(Count(ios));
        let mut spec = workload.into_spec(vec![target], time_series_file)?;
        // (Measured before the entries move into the Spec.)
        let (largest_bytes, span_ns) = (u64::from(trace.largest_bytes()), trace.span_ns());
        spec.replay = Some(ReplaySpec {
            trace_files: trace.files.clone(),
            format: trace.format,
            ios: std::sync::Arc::new(std::mem::take(&mut trace.ios)),
            speed,
            remap: self.remap.unwrap_or_default(),
            extent_bytes,
            largest_bytes,
            span_ns,
            reads,
            writes,
            trims,
            flushes,
            skipped: trace.skipped,
            names: trace.names.clone(),
        });
        Ok(spec)
    }
}
