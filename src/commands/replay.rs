//! `iopulse replay TRACE [TARGET]`: a trace (fio iolog v2/v3, blktrace) replayed on a
//! file or device through the benchmark's own run: the same checks, engines, report and
//! outputs, with the trace's I/Os at the trace's times (`io/trace/` reads it,
//! `io/worker/replay.rs` issues it) and each I/O's lag beside the latencies.
//!
//! It reads the trace, plans and hands the run to `benchmark::run`; it computes nothing.

use crate::base::diagnostics::error::exit_code;
use crate::coordination::cluster::Cluster;
use crate::front::cli::replay::ReplayFlags;
use crate::front::cli::{IologArgs, OutputArgs, TimeseriesArgs};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  iopulse replay app.iolog /data/t.dat
      a fio iolog (v2 or v3, as fio --write_iolog writes it) at its own times
  iopulse replay sda.blktrace.0 /dev/loop0 --engine io_uring --direct --force
      a blktrace (every CPU's file sda.blktrace.*), with its I/Os' concurrency
  iopulse replay app.iolog t.dat --speed 2 --json replay.json
      twice as fast; the JSON has the lag histogram beside the latencies
  iopulse replay app.iolog small.dat --file-size 1G --remap scaled
      a trace larger than the target: offsets scaled onto its 1 GiB (default: modulo)
  iopulse replay app.iolog t.dat --as-fast-as-possible
      the trace's order and sizes, no waits
  iopulse t.dat --random --duration 10s --write-iolog run.iolog
      record any run as a fio iolog v3 (fio --read_iolog=run.iolog replays it too)

Without TARGET, an iolog naming one file replays on that file. A trace's trims are
issued as trims (a punched hole in a file, BLKDISCARD on a device) and its flushes as
fsync/fdatasync, each after the I/Os before it. docs/replay.md says how timing, lag,
remapping, trims and flushes work.
Exit codes: 0 replayed, 1 an I/O or the run failed, 2 a bad trace or flag (nothing touched).";

/// Replay a trace (fio iolog v2/v3, blktrace) on a file or device at the trace's times.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ReplayArgs {
    /// The trace: a fio iolog or a blktrace.
    ///
    /// The trace: a fio iolog (first line `fio version 2 iolog` or `fio version 3 iolog`),
    /// blktrace's per-CPU files (NAME.blktrace.0 or NAME: every NAME.blktrace.N is read),
    /// or one file of blktrace records (`blkparse -d`).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// The file or device to replay on.
    ///
    /// The file or block device to replay on. [default: the one file an iolog names]
    #[arg(value_name = "TARGET")]
    pub target: Option<PathBuf>,

    #[command(flatten)]
    pub replay: ReplayFlags,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub timeseries: TimeseriesArgs,

    #[command(flatten)]
    pub iolog: IologArgs,
}

/// The shared groups' flags whose examples name flags `replay` does not take, with
/// examples of its own.
pub fn help_of_shared_flags(c: clap::Command) -> clap::Command {
    const DIRECT: &str = "Open the target with O_DIRECT (bypass the page cache); refused for a trace with an I/O that is not whole sectors. E.g. `--direct --engine io_uring`";
    const TIMESERIES: &str = "Write one CSV row per interval (1 s) to FILE: IOPS, bandwidth and latency percentiles of that interval alone (and a time_series array in the JSON). E.g. `--timeseries ts.csv`";
    c.mut_arg("direct", |a| a.help("Open the target with O_DIRECT").long_help(DIRECT))
        .mut_arg("timeseries", |a| a.help("Write one CSV row per interval to FILE").long_help(TIMESERIES))
}

pub fn replay(args: ReplayArgs) -> i32 {
    match plan(args) {
        Ok((spec, output)) => super::benchmark::run(&Cluster::alone(), &spec, output, None),
        Err(message) => {
            crate::stderr_line!("iopulse replay: error: {message}");
            exit_code::USAGE
        }
    }
}

/// The replay's run and outputs, every check passed and nothing touched: the trace read
/// (bounded), the target chosen, the Spec made, the outputs guarded.
pub fn plan(args: ReplayArgs) -> Result<(crate::workload::spec::Spec, crate::output::report::OutputOptions), String> {
    // The trace's files are inputs: regular files, bounded, never a kernel interface.
    let open = |path: &std::path::Path, max_bytes: u64| {
        crate::storage::targets::input_file::open(path, max_bytes)
            .map(|f| Box::new(f) as Box<dyn std::io::Read>)
            .map_err(|e| e.to_string())
    };
    let mut trace = crate::io::trace::load(&args.trace, &open).map_err(|e| e.to_string())?;
    let target = match args.target {
        Some(t) => t,
        None => match (trace.format, trace.names.as_slice()) {
            (crate::io::trace::TraceFormat::Blktrace, names) => {
                return Err(format!(
                    "a blktrace names its device by number ({}): give the TARGET to replay on",
                    names.join(", ")
                ));
            }
            (_, [one]) => PathBuf::from(one),
            (_, names) => {
                return Err(format!(
                    "{}: the iolog names {} files: give the TARGET to replay them all on",
                    args.trace.display(),
                    names.len()
                ));
            }
        },
    };
    let mut output = args.output.options(&args.timeseries);
    output.iolog_file = args.iolog.write_iolog;
    let target_exists = target.exists();
    let mut spec = args
        .replay
        .into_spec(&mut trace, target, target_exists, output.timeseries_file.is_some())
        .map_err(|e| e.to_string())?;
    spec.output.record_iolog = output.iolog_file.is_some();
    // The whole ledger: no output, and not the target either, may land on the trace's files
    // (the Spec's replay names them).
    let mut ledger = crate::storage::ledger::Ledger::new();
    ledger.add_run(&spec, &spec.targets, spec.data.verify_state.as_deref(), "");
    crate::output::report::check_planned(&output, crate::output::report::Writes::Run, ledger)
        .map_err(|e| e.to_string())?;
    Ok((spec, output))
}
