//! The benchmark's own command line (`iopulse [TARGET...] [flags]`): its targets, a
//! profile to run instead, the start time shared with other hosts, and the groups of
//! flags every run takes.

use super::{IologArgs, OutputArgs, TimeseriesArgs, WorkloadArgs};
use crate::io::schedule::start_at::StartAt;
use std::path::PathBuf;

#[derive(Clone, Debug, Default, clap::Args)]
pub struct BenchArgs {
    /// Files or block devices to run on (none: the default profile).
    ///
    /// Regular files or block devices to run on. A missing file is created and laid out
    /// with real data. With no TARGET, the default profile runs (see --profile); with no
    /// TARGET and a flag that shapes the workload (not --duration, --file-size or --loops,
    /// which size the default profile), a temporary 256 MiB file in $TMPDIR is used for 5 s
    /// and removed afterwards. `{rank}` and `{host}` in a path (also of --json, --csv, --plot,
    /// --timeseries) are replaced by the MPI rank (0 without MPI) and the host name.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,

    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// Run a shipped profile (`iopulse profiles` lists them).
    ///
    /// Run a profile, a job file shipped in iopulse (`iopulse profiles` lists them: PROFILES),
    /// on the TARGET given or else on a temporary file; the other flags apply to each of its
    /// steps, and the report is one table. E.g. `iopulse --profile oltp /data/db.dat
    /// --duration 10s`. With no TARGET and no flag that shapes the workload, `iopulse` runs
    /// the default profile.
    #[arg(long, value_name = "NAME", help_heading = "Workload")]
    pub profile: Option<String>,

    /// Run each step of a profile N times (median and spread).
    ///
    /// Run each step of a profile N times, one pass after another, and show the median of
    /// the passes with their spread (KDiskMark's loops; 5 for the default profiles, 1 for
    /// the others). E.g. `iopulse --loops 3` or `iopulse --profile oltp --loops 3 /data/t.dat`
    #[arg(long, value_name = "N", help_heading = "Workload", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub loops: Option<u32>,

    /// Open the window at this wall-clock time.
    ///
    /// Open the measurement window at this wall-clock time, after layout and set-up: runs
    /// launched on several hosts by any means then measure together (`iopulse merge` says how
    /// far apart their windows were). HH:MM[:SS] (today, local time), RFC 3339
    /// (2025-06-01T14:30:00Z) or @UNIX_SECONDS. A time already past when the run is ready
    /// starts it at once, with a warning. E.g. `--start-at 14:30:00`
    #[arg(long, value_name = "TIME", help_heading = "Window and phases")]
    pub start_at: Option<StartAt>,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub timeseries: TimeseriesArgs,

    #[command(flatten)]
    pub iolog: IologArgs,
}
