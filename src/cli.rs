//! The command line: clap definitions, and their translation into a `Spec`
//! (what the run does) and `OutputOptions` (where its results go).
//!
//! Flag names are fixed: users already type them. This module parses and
//! converts; it does not open files (see `target::plan`).

use crate::access::block_sizes::BlockSizeMix;
use crate::data::{Pattern, Reducibility};
use crate::durability::{FlushKind, FlushSpec};
use crate::engine::uring::UringOptions;
use crate::engine::{EngineOptions, Madvise};
use crate::error::UsageError;
use crate::placement::{CpuPolicy, NumaZones, PlacementSpec, parse_numa_zones};
use crate::spec::{AccessOrder, CacheMode, Distribution, EngineKind, FileDistribution, RunLength, Spec, VerifySpec};
use crate::think::{RateGivenAs, RateSpec, ThinkMode, ThinkSpec};
use crate::units::{IdList, parse_count, parse_cpu_list, parse_duration, parse_real, parse_size};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  iopulse
      the default profile on a temporary 256 MiB file in $TMPDIR, removed afterwards:
      sequential 1 MiB reads and writes at depth 8, random 4 KiB reads and writes at
      depth 32 and 1, 5 s each, O_DIRECT where allowed; one table of MB/s, IOPS, latency
  iopulse --random --duration 5s
      a flag that shapes the workload, no TARGET: one run on a temporary 256 MiB file
  iopulse --profile oltp /data/db.dat
      a shipped profile (iopulse profiles lists them) on your file
  iopulse /data/test.dat --file-size 10G --random --duration 30s
      4 KiB random reads for 30 s on a 10 GiB file (created and laid out if missing)
  iopulse /data/test.dat --direct --random --block-size 4k --queue-depth 32 --threads 4
      O_DIRECT random reads, 4 workers (sync completes one I/O at a time per worker)
  iopulse /data/test.dat --write-percent 30 --random --seed 42 --output-format json
      a 70/30 read/write mix, reproducible, JSON on stdout
  iopulse /data/test.dat --duration 0 --random --write-percent 100
      write every block exactly once, in a random order, then stop
  iopulse /data/test.dat --engine io_uring --direct --random --queue-depth 32
      io_uring, 32 I/Os in flight, registered buffers and files (--no-register to compare)
  iopulse /dev/nvme0n1 --engine io_uring --direct --random --queue-depth 8 --iopoll
      polled completions (NVMe with poll queues: modprobe nvme poll_queues=N)
  iopulse /data/test.dat --engine null --duration 5s
      the tool's own ceiling: the whole pipeline without touching storage
  iopulse /data/db.dat --random --distribution zipf --zipf-theta 1.2 --write-percent 20
      a database-like hot set: a few blocks take most I/Os (scattered over the file)
  iopulse /data/cache.dat --random --distribution pareto --pareto-h 0.8
      a cache: 80 % of the I/Os go to 20 % of the blocks
  iopulse /data/t.dat --duration 0 --write-percent 100 --random --verify
  iopulse /data/t.dat --duration 0 --read-percent 100 --random --verify
      write every block with a verifiable header, then check every block (exit 3 on mismatch)
  iopulse /data/db.dat --random --think-time 50us --queue-depth 1
      an application that spends 50 µs between requests
  iopulse /data/t.dat --random --rate-iops 2000 --duration 30s
      2000 I/Os per second, latency measured from when each was due
  iopulse /data/t.dat --random --bssplit 4k/50:64k/30:1m/20 --write-percent 30
      a block-size mix (fio's syntax: shares of I/Os; `4k/100,1m/100` splits reads and
      writes apart); the report adds a row per size and op with its latency and share
  iopulse /data/t.dat --random --write-percent 100 --ramp 30s --duration 60s
      30 s of writes not counted (caches filled, the device in its sustained state), then
      a 60 s window; the time series marks the ramp's rows
  iopulse /data/t.dat --random --steady-state iops:2% --steady-state-window 10s --duration 10m
      stop once the last 10 s of IOPS stay within 2 % of their mean (at most 10 min); the
      steady window's figures are the result, or STEADY STATE NOT REACHED is said loudly
  iopulse /data/t.dat --threads 4 --file-distribution per-worker --file-size 1G
      each worker on its own file: /data/t.dat.0 ... /data/t.dat.3
  iopulse /dev/nvme0n1 /dev/nvme1n1 --random --direct --threads 8 --ops 1000000
      one million I/Os spread over two devices, figures per device and in total
  iopulse /data/test.dat --direct --random --threads 8 --numa-zones 0,1 --cpu-cores 0-31
      8 workers alternating over NUMA nodes 0 and 1, each pinned to one CPU of 0-31 on its
      node (one per physical core first), its buffers allocated on that node
  iopulse /data/test.dat --engine libaio --direct --random --queue-depth 32
      Linux native AIO, 32 O_DIRECT reads in flight (without --direct, AIO is synchronous)
  iopulse /dev/nvme0n1 --engine io_uring --direct --random --queue-depth 128 --submit-batch 32
      hand the kernel up to 32 requests per system call (default 2: no block-layer plugging)
  iopulse /data/test.dat --engine mmap --random --madvise random --write-percent 30 --fsync-on-close
      copies to and from a shared mapping (page faults measured), made durable at the end
  iopulse /data/t.dat --random --queue-depth 8 --csv sweep.csv
      append one row (spec and headline figures) to sweep.csv; header written when new
  iopulse /data/t.dat --random --json r.json --plot plots/
      also write the JSON result and SVG charts (latency percentiles, ...) into plots/
  iopulse /data/t.dat --random --output-format fio-json
      the result in fio's JSON layout (jobs[].read.iops, lat_ns.percentile, ...)

  mpirun --hostfile hosts -np 8 iopulse /data/t.{rank}.dat --direct --random --duration 30s
      a cluster run (built with --features mpi): every rank on its own file, windows opened
      together after layout, one report on rank 0 with the totals and a row per rank
  pdsh -w node[1-4] iopulse /data/t.dat --start-at 14:30:00 --json /shared/r.{host}.json
  iopulse merge /shared/r.*.json
      without MPI: four hosts start their windows at 14:30:00 local time, then one report
      (the merge says how far apart the windows really were)

  iopulse /dev/sdb --direct --random --continue-on-error --max-errors 100 --io-timeout 10s
      read a failing disk: count I/O errors per op type and errno (stop after 100), and give
      up on an I/O that has not completed after 10 s (reported with its offset, exit 1)

Subcommands (the first argument; a target file named like one is written ./merge):
  iopulse sweep /data/t.dat --random --queue-depth 1,4,16 --block-size 4k,64k --repeat 3 --csv s.csv
      every combination, 3 times each (interleaved): a row per run, a summary per point
  iopulse search /data/t.dat --random --queue-depth 32 --p99-max 1ms
      the highest load whose p99 stays within 1 ms (or --saturate: the smallest queue depth)
  iopulse run db-host.toml [--duration 5s]
      a job file: several workloads in one window, or phases one after another
  iopulse run randread.fio [--ignore-unsupported]
  iopulse from-fio randread.fio > randread.toml
      a fio job file run as it is, or translated to an iopulse job file (docs/fio.md)
  iopulse profiles [NAME]
      the profiles shipped in iopulse (job files for --profile), or one of them to copy
  iopulse merge host1.json host2.json [--output-format json] [--force]
      one report from concurrent runs: histograms added, IOPS summed
  iopulse plot r.json --out plots/
      SVG charts of a JSON result (latency percentiles; IOPS and p99 over time)
  iopulse plot --sweep sweep.csv --x queue_depth --y iops --by block_size
      a chart of a --csv sweep: one line per block size
  iopulse completions bash > /etc/bash_completion.d/iopulse
      shell completions (bash, zsh, fish, elvish, powershell) on stdout
  iopulse man > iopulse.1
      the man page (roff) on stdout

Safety: outputs never go to devices, FIFOs, /proc or a target; targets on /proc or /sys,
one file given twice, and devices or files behind a loop device are refused; a read run
never extends a file iopulse did not lay out (add --force). See docs/safety.md.
Exit codes: 0 success, 1 the run failed, 2 usage error (nothing was touched),
3 verification mismatches, 4 the run succeeded but an output could not be written,
130 interrupted (the partial report is printed), 143 SIGTERM, 129 SIGHUP.
Full documentation: README.md and docs/ (docs/usage.md lists every flag).";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DistributionKind {
    Uniform,
    Zipf,
    Pareto,
    Gaussian,
}

pub use crate::report::{OutputFormat, OutputOptions};

#[derive(Debug, Parser)]
#[command(
    name = "iopulse",
    version,
    about = "A Linux storage benchmark: true O_DIRECT, exact HDR latency percentiles, honest coverage.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// Regular files or block devices to run on. A missing file is created and laid out
    /// with real data. With no TARGET, the default profile runs (see --profile); with no
    /// TARGET and a flag that shapes the workload, a temporary 256 MiB file in $TMPDIR is
    /// used for 5 s and removed afterwards. `{rank}` and `{host}` in a path (also of --json, --csv, --plot,
    /// --timeseries) are replaced by the MPI rank (0 without MPI) and the host name.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,

    /// Size of each file (k/m/g/t are powers of two, decimals allowed: 4k, 1.5G). A shorter
    /// file is extended with written data; default: an existing file's size, or 1G for a new one.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub file_size: Option<u64>,

    /// Bytes per I/O, e.g. 512, 4k, 1M. With --direct a multiple of the target's DIO alignment. [default: 4k]
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub block_size: Option<u64>,

    /// A mix of block sizes, fio's syntax: SIZE/PERCENT entries (shares of I/Os) joined by
    /// `:`; a percent left empty shares the rest equally; a comma separates the reads' split
    /// from the writes' (a third split is the trims'). Figures are reported per size too.
    /// E.g. `--bssplit 4k/50:64k/30:1m/20`, `--bssplit 4k/100,64k/50:1m/50`
    #[arg(long, value_name = "SPLIT", conflicts_with = "block_size")]
    pub bssplit: Option<String>,

    /// Offsets are multiples of this (fio's blockalign) [default: the smallest size of
    /// --bssplit, else --block-size]. E.g. `--block-size 64k --block-align 4k --random`
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub block_align: Option<u64>,

    /// How long to measure: 10s, 500ms, 2m, or a bare number of seconds. `0` runs until every
    /// block of the target has been accessed exactly once. [default: 10s; 5s with no TARGET]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Share of I/Os that are reads, 0-100 [default: 100]. Give this or --write-percent.
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub read_percent: Option<u8>,

    /// Share of I/Os that are writes, 0-100. Read and write percentages must sum to 100.
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub write_percent: Option<u8>,

    /// Share of I/Os that are trims (discards), 0-100: BLKDISCARD on block devices, a punched
    /// hole in files (fallocate). The rest split by --read-percent/--write-percent.
    /// E.g. `--write-percent 100 --trim-percent 10` [default: 0]
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub trim_percent: Option<u8>,

    /// Random offsets (drawn with replacement, see --distribution); otherwise sequential.
    #[arg(long)]
    pub random: bool,

    /// Share of --random I/Os that jump to a drawn offset, 0-100 (fio's percentage_random);
    /// the others continue sequentially from the previous I/O, so 50 gives half sequential
    /// runs, half random jumps. E.g. `--random --random-percent 20` [default: 100]
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub random_percent: Option<u8>,

    /// Offset distribution of --random runs: uniform, zipf (hot set, --zipf-theta), pareto
    /// (fio's h rule, --pareto-h) or gaussian (a bell, --gaussian-stddev/--gaussian-center).
    #[arg(long, value_enum, default_value_t = DistributionKind::Uniform)]
    pub distribution: DistributionKind,

    /// Zipf exponent θ > 0 (1.0 allowed): P(rank k) ∝ k^-θ over every block of the region [default: 1.2]
    #[arg(long, allow_hyphen_values = true, value_name = "THETA", value_parser = parse_real)]
    pub zipf_theta: Option<f64>,

    /// Pareto h in (0, 1), fio's meaning: a fraction h of the I/Os go to a fraction 1-h of
    /// the blocks (0.8 → 80/20, 0.9 → 90/10) [default: 0.9]
    #[arg(long, allow_hyphen_values = true, value_name = "H", value_parser = parse_real)]
    pub pareto_h: Option<f64>,

    /// Gaussian standard deviation, as a fraction of the region [default: 0.1]
    #[arg(long, allow_hyphen_values = true, value_name = "FRACTION", value_parser = parse_real)]
    pub gaussian_stddev: Option<f64>,

    /// Gaussian centre, as a fraction of the region (0 = start, 1 = end) [default: 0.5]
    #[arg(long, allow_hyphen_values = true, value_name = "FRACTION", value_parser = parse_real)]
    pub gaussian_center: Option<f64>,

    /// Keep zipf and pareto hot blocks at the start of the region instead of scattering
    /// them over it by a fixed bijection of block numbers.
    #[arg(long)]
    pub no_scramble: bool,

    /// How targets are shared between workers: shared (all workers address all targets),
    /// per-worker (each worker gets its own file NAME.0, NAME.1, ... laid out to --file-size),
    /// partitioned (each worker gets a disjoint slice).
    #[arg(long, value_enum, default_value_t = FileDistribution::Shared)]
    pub file_distribution: FileDistribution,

    /// Stop after this many bytes of I/O in total (instead of --duration, or whichever comes first).
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub io_limit: Option<u64>,

    /// Stop after this many I/Os in total (instead of --duration, or whichever comes first).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u64>)]
    pub ops: Option<u64>,

    /// Sequential workers on a shared target all start at its beginning (default: each
    /// starts at its own, evenly spaced offset).
    #[arg(long)]
    pub sequential_overlap: bool,

    /// Open the measurement window at this wall-clock time, after layout and set-up: runs
    /// launched on several hosts by any means then measure together (`iopulse merge` says how
    /// far apart their windows were). HH:MM[:SS] (today, local time), RFC 3339
    /// (2025-06-01T14:30:00Z) or @UNIX_SECONDS. A time already past when the run is ready
    /// starts it at once, with a warning.
    #[arg(long, value_name = "TIME", value_parser = crate::start_at::parse, help_heading = "Several hosts")]
    pub start_at: Option<crate::start_at::StartAt>,

    /// Run a profile, a job file shipped in iopulse (`iopulse profiles` lists them: default,
    /// oltp, streaming, cache-cdn, integrity), on the TARGET given or else on a temporary
    /// file; the other flags apply to each of its steps, and the report is one table.
    /// E.g. `iopulse --profile oltp /data/db.dat --duration 10s`. With no TARGET and no
    /// flag that shapes the workload, `iopulse` runs the default profile.
    #[arg(long, value_name = "NAME", help_heading = "Profiles")]
    pub profile: Option<String>,

    /// Number of worker threads. Each worker has its own queue of I/Os.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 1, value_parser = parse_count::<u32>)]
    pub threads: u32,

    /// I/Os in flight per worker (async engines; sync completes one at a time).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 1, value_parser = parse_count::<u32>)]
    pub queue_depth: u32,

    /// Contents of written blocks (and of layout): unique (every 512-byte sector unique, no
    /// record from 4 KiB to 1 MiB compresses; a random base indexed by offset with a fresh
    /// key per sector, at fio's cost), random (every byte fresh for every write: as
    /// irreducible, a copy's cost), keyed (a key per 4 KiB only: records of several writes
    /// compress, 23x in 128 KiB of 4 KiB writes), zeros, ones or sequential bytes.
    /// E.g. --write-pattern random [default: unique; random with --dedupe-ratio or
    /// --compress-ratio]
    #[arg(long, value_enum)]
    pub write_pattern: Option<Pattern>,

    /// Make random write data dedupe by R: 4 KiB chunks written to distinct ones (which are
    /// duplicates follows from seed and offset; with --verify whole blocks, checked too).
    /// E.g. --dedupe-ratio 3 [default: 1, all unique]
    #[arg(long, allow_hyphen_values = true, value_name = "R", value_parser = parse_real)]
    pub dedupe_ratio: Option<f64>,

    /// Make random write data compress by R with a standard compressor (gzip, zstd): each 4 KiB
    /// chunk is 1/R random bytes, then zeros. E.g. --compress-ratio 2 [default: 1, incompressible]
    #[arg(long, allow_hyphen_values = true, value_name = "R", value_parser = parse_real)]
    pub compress_ratio: Option<f64>,

    /// Write verifiable blocks (a header with offset, seed, write sequence and crc32c) and
    /// check every read: corrupted, misplaced, never-written, torn and lost blocks are
    /// reported, and the run exits 3. Layout writes the verify pattern too.
    #[arg(long)]
    pub verify: bool,

    /// Payload after the verify header [default: random]
    #[arg(long, value_enum, value_name = "PATTERN")]
    pub verify_pattern: Option<Pattern>,

    /// Failed blocks described in full (offset, expected and found bytes); the rest are counted.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 10, value_parser = parse_count::<u32>)]
    pub verify_max_reports: u32,

    /// Pause after I/Os, like an application that works between requests (e.g. 50us, 2ms).
    /// On async engines nothing new is issued while thinking; I/O in flight still completes.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse_duration, help_heading = "Think time and rate")]
    pub think_time: Option<Duration>,

    /// How to wait for --think-time and rate limits: sleep, or spin (busy-wait, µs accuracy). [default: sleep]
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Think time and rate")]
    pub think_mode: Option<ThinkMode>,

    /// Think after every N completed I/Os of a worker. [default: 1]
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u32>, help_heading = "Think time and rate")]
    pub think_every: Option<u32>,

    /// Think for P % of the latency the worker currently sees (a running mean of recent
    /// completions) instead of a fixed time, so think time scales with the storage.
    #[arg(long, allow_hyphen_values = true, value_name = "P", value_parser = parse_count::<u32>, help_heading = "Think time and rate")]
    pub think_adaptive_percent: Option<u32>,

    /// Issue at most N I/Os per second per worker (with --rate-total: for the whole run), on a
    /// fixed schedule; latency is measured from when each I/O was due (no coordinated omission).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u64>, help_heading = "Think time and rate")]
    pub rate_iops: Option<u64>,

    /// Like --rate-iops, as bandwidth: SIZE per second per worker (e.g. 100M).
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size, help_heading = "Think time and rate")]
    pub rate_bw: Option<u64>,

    /// --rate-iops / --rate-bw are for the whole run, shared evenly by the workers.
    #[arg(long, help_heading = "Think time and rate")]
    pub rate_total: bool,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineKind::Sync)]
    pub engine: EngineKind,

    /// Register nothing with the ring (plain Read/Write on descriptors instead of
    /// ReadFixed/WriteFixed on registered buffers and files; no registered ring fd), to compare.
    #[arg(long, help_heading = "io_uring")]
    pub no_register: bool,

    /// A kernel thread polls the submission queue (SQPOLL), so submitting needs no
    /// system call; that thread keeps a CPU busy while the run lasts.
    #[arg(long, help_heading = "io_uring")]
    pub sqpoll: bool,

    /// libaio and io_uring: at most N requests per submission call [default: 2 with
    /// --direct and for buffered libaio, the queue depth for buffered io_uring]. With 3 or
    /// more the kernel holds the batch back until it is built (block plugging); larger
    /// batches save system calls at some latency. fio's iodepth_batch_submit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "libaio and io_uring")]
    pub submit_batch: Option<u32>,

    /// Bind the SQPOLL thread to CPU N (implies --sqpoll).
    #[arg(long, value_name = "N", help_heading = "io_uring")]
    pub sqpoll_cpu: Option<u32>,

    /// Polled completions (IOPOLL): the worker polls the device instead of waiting for
    /// an interrupt. Needs --direct and a device with poll queues (NVMe: the nvme module
    /// parameter poll_queues); elsewhere the run stops at start with an error.
    #[arg(long, help_heading = "io_uring")]
    pub iopoll: bool,

    /// Bypass the page cache (O_DIRECT). If the filesystem refuses it, iopulse says so loudly
    /// and falls back to buffered I/O (see --strict-direct).
    #[arg(long)]
    pub direct: bool,

    /// With O_DIRECT, fail instead of falling back to buffered I/O. Implies --direct.
    #[arg(long)]
    pub strict_direct: bool,

    /// The page cache of the region a run addresses when the window opens: drop (flush,
    /// then drop its cached pages, so that buffered reads reach the device; fio's
    /// invalidate=1), warm (read the whole region into the cache first, warning when it
    /// does not fit; not with --direct) or keep (leave it as it is; fio's invalidate=0).
    /// Residency at the window's start and end is reported either way (docs/cache.md).
    /// E.g. `iopulse data.dat --random --cache warm` measures reads served from memory.
    #[arg(long, value_enum, value_name = "STATE", default_value_t = CacheMode::Drop)]
    pub cache: CacheMode,

    /// Former name of --cache keep.
    #[arg(long, hide = true)]
    pub no_invalidate: bool,

    /// fio's flag, refused with the iopulse equivalent (--cache).
    #[arg(long, hide = true, allow_hyphen_values = true, value_name = "N")]
    pub invalidate: Option<String>,

    /// Read the file as it is: holes and unwritten extents in the region a read run
    /// addresses are not laid out first (they are by default on files iopulse laid out,
    /// and with --force on others). The report and the JSON (`targets[].allocation`) give
    /// the share not backed by the device, with a warning (e.g. `iopulse thin.dat --random
    /// --keep-holes` to measure a sparse file on purpose).
    #[arg(long)]
    pub keep_holes: bool,

    /// Seed of every random choice (offsets, read/write mix, data). Same seed, same run.
    /// Default: drawn at start and recorded in the JSON result.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u64>)]
    pub seed: Option<u64>,

    /// Length of one interval of the live line and the time series (e.g. 1s, 250ms).
    /// Given explicitly, the JSON result carries a time_series array. [default: 1s]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse_duration)]
    pub interval: Option<Duration>,

    /// Run the workload for DURATION before the window opens, and count none of it (as fio's
    /// ramp_time): --duration stays the length of the measured window, so the run lasts
    /// both. The time series keeps the ramp's rows, marked `ramp`.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse_duration)]
    pub ramp: Option<Duration>,

    /// Stop once the run is steady (fio's steadystate, SNIA PTS): METRIC is iops, bw or lat
    /// (mean latency), with _slope for the slope of a least-squares line instead of the
    /// largest deviation from the mean; LIMIT is a share of the window's mean (2%) or in
    /// the metric's unit (per second for a slope). --duration is the upper bound; the
    /// window's figures become the result. Example: --steady-state iops:2% --duration 10m
    #[arg(long, value_name = "METRIC:LIMIT", value_parser = parse_steady_state)]
    pub steady_state: Option<crate::stats::steady_state::Criterion>,

    /// The rolling window --steady-state judges: a whole number of --interval (at least 2).
    /// [default: 10 intervals]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse_duration)]
    pub steady_state_window: Option<Duration>,

    /// Write one CSV row per interval to FILE: time, IOPS, bandwidth and the p50/p99/p99.9/max
    /// latency of that interval alone, per op type (and a time_series array in the JSON).
    #[arg(long, value_name = "FILE")]
    pub timeseries: Option<PathBuf>,

    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Also write the JSON result to FILE (docs/json.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Append one CSV row (the spec's sweep parameters and the headline figures) to FILE;
    /// the header is written when FILE is new (docs/usage.md lists the columns).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write SVG charts of the result into DIR (created if missing): latency percentiles,
    /// and IOPS and p99 over time when the result has a time series.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// No progress or notes on stderr; warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    /// Allow writes to a block device (destroys its contents), and let a read run extend an
    /// existing file that iopulse did not lay out to --file-size (e.g. `iopulse notes.dat
    /// --file-size 1G --force`). Devices in use and files behind a loop device stay refused.
    #[arg(long)]
    pub force: bool,

    /// Pin worker i to one CPU of LIST (e.g. 0-31 or 0,2,4-7), taken in --cpu-policy order, round
    /// robin when there are more workers than CPUs. Each CPU must exist, be online and be allowed
    /// (cgroup cpuset, taskset).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = parse_cpu_list, help_heading = "Placement")]
    pub cpu_cores: Option<IdList>,

    /// Order in which pinned workers take CPUs: scatter = one worker per physical core (alternating
    /// packages) before any SMT sibling; compact = a core's SMT siblings first. Given alone, pins
    /// workers over every allowed CPU. [default: scatter]
    #[arg(long, value_enum, value_name = "POLICY", help_heading = "Placement")]
    pub cpu_policy: Option<CpuPolicy>,

    /// Spread workers round robin over NUMA nodes LIST (e.g. 0,1): each runs on its node's CPUs
    /// (one of them with --cpu-cores or --cpu-policy) and its buffers are allocated on its node.
    /// `auto`: the node of the targets' block device, when it reports one.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST|auto", value_parser = parse_numa_zones, help_heading = "Placement")]
    pub numa_zones: Option<NumaZones>,
    /// At the end of the run, fsync every target (msync first for --engine mmap) and report
    /// the time it took apart from the I/O window, which it never counts in.
    #[arg(long)]
    pub fsync_on_close: bool,

    /// fsync(2) the file after every N writes of each worker, through the engine
    /// (IORING_OP_FSYNC, IOCB_CMD_FSYNC, msync for mmap); fio's fsync=N. The flush waits
    /// for the writes before it and is reported as its own operation (`flush`).
    /// E.g. `iopulse db.dat --write-percent 100 --fsync-every 8`.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u64>, help_heading = "Durability")]
    pub fsync_every: Option<u64>,

    /// fdatasync(2) the file after every N writes of each worker (fio's fdatasync=N); as
    /// --fsync-every otherwise. E.g. the etcd check: `iopulse wal.dat --write-percent 100
    /// --block-size 2300 --fdatasync-every 1 --io-limit 22m` (or `--profile etcd`).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u64>, help_heading = "Durability")]
    pub fdatasync_every: Option<u64>,

    /// Open the targets with O_DSYNC (dsync) or O_SYNC (sync): every write returns once
    /// durable. E.g. `iopulse log.dat --write-percent 100 --sync-writes dsync`.
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Durability")]
    pub sync_writes: Option<crate::durability::SyncWrites>,

    /// mmap engine: prefault the whole mapping before the start (MAP_POPULATE), so page faults
    /// are not measured. Default: faults happen during the run and are part of each I/O's latency.
    #[arg(long)]
    pub mmap_populate: bool,

    /// mmap engine: advice for the whole mapping (madvise).
    #[arg(long, value_enum, value_name = "ADVICE")]
    pub madvise: Option<Madvise>,

    /// Keep going after an I/O error: failed I/Os are counted per op type and errno (with the
    /// first offsets) in the report and the JSON, and the run exits 1 at its end if any failed.
    /// Default: the first failed I/O stops the run.
    #[arg(long, help_heading = "Faults")]
    pub continue_on_error: bool,

    /// Stop the run once N I/Os have failed in all (implies --continue-on-error until then).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count::<u64>, help_heading = "Faults")]
    pub max_errors: Option<u64>,

    /// An I/O that has not completed after DURATION is reported with its file and offset and
    /// ends the run (exit 1) instead of hanging; `0` never gives up.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", default_value = "30s", value_parser = parse_duration, help_heading = "Faults")]
    pub io_timeout: Duration,
}

impl Args {
    /// Turns parsed flags into a validated `Spec` and the output options.
    pub fn into_spec(self) -> Result<(Spec, OutputOptions), UsageError> {
        let read_percent = match (self.read_percent, self.write_percent) {
            (None, None) => 100,
            (Some(r), None) => r,
            (None, Some(w)) => 100 - w,
            (Some(r), Some(w)) if u16::from(r) + u16::from(w) == 100 => r,
            (Some(r), Some(w)) => {
                return Err(UsageError::new(format!(
                    "--read-percent {r} and --write-percent {w} sum to {}: they must sum to 100 (or give only one)",
                    u16::from(r) + u16::from(w)
                )));
            }
        };
        let distribution = self.distribution()?;
        let cache = self.cache_mode()?;
        let (think, rate) = self.pacing()?;
        if self.verify_pattern.is_some() && !self.verify {
            return Err(UsageError::new("--verify-pattern applies to --verify runs: add --verify"));
        }
        let reducibility = self.reducibility()?;
        let write_pattern = self.write_pattern(&reducibility);
        let block_sizes = self.block_sizes()?;
        let block_size = self.block_size.unwrap_or(4096);
        if block_sizes.is_some() && self.io_limit.is_some() {
            return Err(UsageError::new(
                "--io-limit with --bssplit or --block-align: a byte limit is not a whole number of I/Os of mixed sizes; give --ops instead",
            ));
        }
        let ops_limit = match (self.ops, self.io_limit) {
            (Some(_), Some(_)) => {
                return Err(UsageError::new("--ops and --io-limit both given: give one of them"));
            }
            (Some(n), None) => Some(n),
            (None, Some(bytes)) => Some(bytes / block_size.max(1)),
            (None, None) => None,
        };
        let embedded = self.targets.is_empty();
        let run_length = match self.duration {
            Some(d) if d.is_zero() => RunLength::UntilCovered,
            None if ops_limit.is_some() => RunLength::UntilLimit,
            Some(d) => RunLength::Duration {
                ns: u64::try_from(d.as_nanos())
                    .map_err(|_| UsageError::new("--duration is too long: at most 584 years"))?,
            },
            None if embedded => RunLength::Duration { ns: crate::spec::EMBEDDED_DURATION_NS },
            None => RunLength::Duration { ns: 10_000_000_000 },
        };
        let file_size_bytes = match self.file_size {
            None if embedded => Some(crate::spec::EMBEDDED_FILE_SIZE_BYTES),
            other => other,
        };
        let interval_ns = match self.interval {
            Some(d) if d.as_millis() < 10 => {
                return Err(UsageError::new(format!(
                    "--interval {d:?} is too short: give at least 10ms (e.g. 250ms, 1s)"
                )));
            }
            Some(d) => d.as_nanos().min(u128::from(u64::MAX)) as u64,
            None => 1_000_000_000,
        };
        let ramp_ns = self.ramp_ns(run_length)?;
        let flush = match (self.fsync_every, self.fdatasync_every) {
            (Some(_), Some(_)) => {
                return Err(UsageError::new(
                    "--fsync-every and --fdatasync-every both given: give one of them (fsync also flushes all metadata)",
                ));
            }
            (Some(n), None) => Some(FlushSpec { kind: FlushKind::Fsync, every_writes: n }),
            (None, Some(n)) => Some(FlushSpec { kind: FlushKind::Fdatasync, every_writes: n }),
            (None, None) => None,
        };
        let steady_state = self.steady_state(run_length, interval_ns)?;
        let spec = Spec {
            ramp_ns,
            steady_state,
            targets: self.targets,
            file_size_bytes,
            block_size_bytes: block_sizes.as_ref().map_or(block_size, |m| m.align_bytes),
            block_sizes,
            run_length,
            read_percent,
            order: if self.random { AccessOrder::Random } else { AccessOrder::Sequential },
            trim_percent: self.trim_percent.unwrap_or(0),
            random_percent: self.random_percent,
            distribution,
            scramble: !self.no_scramble,
            file_distribution: self.file_distribution,
            ops_limit,
            sequential_overlap: self.sequential_overlap,
            threads: self.threads,
            queue_depth: self.queue_depth,
            engine: self.engine,
            direct: self.direct || self.strict_direct,
            strict_direct: self.strict_direct,
            cache,
            invalidate: cache == CacheMode::Drop,
            keep_holes: self.keep_holes,
            seed: self.seed.unwrap_or_else(fresh_seed),
            force: self.force,
            engine_options: EngineOptions {
                mmap_populate: self.mmap_populate,
                madvise: self.madvise,
                io_uring: UringOptions {
                    register: !self.no_register,
                    sqpoll: self.sqpoll || self.sqpoll_cpu.is_some(),
                    sqpoll_cpu: self.sqpoll_cpu,
                    iopoll: self.iopoll,
                },
                submit_batch: self.submit_batch,
            },
            fsync_on_close: self.fsync_on_close,
            flush,
            sync_writes: self.sync_writes,
            interval_ns,
            // The steady-state detector reads the time series: it is collected, and in the JSON.
            time_series: self.interval.is_some() || self.timeseries.is_some() || steady_state.is_some(),
            think,
            rate,
            continue_on_error: self.continue_on_error || self.max_errors.is_some(),
            max_errors: self.max_errors,
            io_timeout_ns: u64::try_from(self.io_timeout.as_nanos())
                .map_err(|_| UsageError::new("--io-timeout is too long: at most 584 years"))?,
            write_pattern,
            reducibility,
            verify: self.verify.then_some(VerifySpec {
                pattern: self.verify_pattern.unwrap_or(Pattern::Random),
                max_reports: self.verify_max_reports,
            }),
            data_seed: self.seed.unwrap_or(0),
            placement: PlacementSpec {
                cpu_cores: self.cpu_cores.map(|l| l.0),
                cpu_policy: self.cpu_policy,
                numa_zones: self.numa_zones,
            },
        };
        spec.validate()?;
        let output = OutputOptions {
            format: self.output_format,
            json_file: self.json,
            quiet: self.quiet,
            csv_file: self.csv,
            plot_dir: self.plot,
            timeseries_file: self.timeseries,
        };
        Ok((spec, output))
    }
}

/// `--steady-state`'s value, with the flag named in the refusal.
fn parse_steady_state(s: &str) -> Result<crate::stats::steady_state::Criterion, String> {
    s.parse()
}

impl Args {
    /// `--ramp`: refused with a run that has no duration (its window would have no length).
    fn ramp_ns(&self, run_length: RunLength) -> Result<u64, UsageError> {
        let Some(ramp) = self.ramp else { return Ok(0) };
        let ramp_ns =
            u64::try_from(ramp.as_nanos()).map_err(|_| UsageError::new("--ramp is too long: at most 584 years"))?;
        if ramp_ns > 0 && !matches!(run_length, RunLength::Duration { .. }) {
            return Err(UsageError::new(format!(
                "--ramp {ramp:?} needs a --duration (the window that follows it): give e.g. --duration 30s, not --duration 0, --ops or --io-limit alone"
            )));
        }
        Ok(ramp_ns)
    }

    /// `--steady-state` and `--steady-state-window`, checked against the interval and the
    /// run's length.
    fn steady_state(
        &self,
        run_length: RunLength,
        interval_ns: u64,
    ) -> Result<Option<crate::spec::SteadyStateSpec>, UsageError> {
        let Some(criterion) = self.steady_state else {
            if let Some(w) = self.steady_state_window {
                return Err(UsageError::new(format!(
                    "--steady-state-window {w:?} applies to --steady-state: add e.g. --steady-state iops:2%"
                )));
            }
            return Ok(None);
        };
        let RunLength::Duration { ns: duration_ns } = run_length else {
            return Err(UsageError::new(format!(
                "--steady-state {criterion} needs a --duration as its upper bound: give e.g. --duration 10m, not --duration 0, --ops or --io-limit alone"
            )));
        };
        let window_intervals = match self.steady_state_window {
            None => 10,
            Some(w) => {
                let w_ns = w.as_nanos();
                let n = w_ns / u128::from(interval_ns);
                if n < 2 || n * u128::from(interval_ns) != w_ns || n > 100_000 {
                    return Err(UsageError::new(format!(
                        "--steady-state-window {w:?}: give a whole number (2 to 100000) of --interval {} (e.g. {})",
                        crate::units::display::seconds_ns(interval_ns),
                        crate::units::display::seconds_ns(interval_ns * 10)
                    )));
                }
                n as u32
            }
        };
        let window_ns = u64::from(window_intervals) * interval_ns;
        if window_ns > duration_ns {
            return Err(UsageError::new(format!(
                "--steady-state-window {} is longer than --duration {}: the window could never fill; give a longer --duration or a shorter window",
                crate::units::display::seconds_ns(window_ns),
                crate::units::display::seconds_ns(duration_ns)
            )));
        }
        Ok(Some(crate::spec::SteadyStateSpec { criterion, window_intervals }))
    }

    /// `--cache`, with `--no-invalidate` as a former name of `--cache keep` and fio's
    /// `--invalidate` refused with its equivalent.
    fn cache_mode(&self) -> Result<CacheMode, UsageError> {
        if let Some(value) = &self.invalidate {
            let equivalent = if value.trim() == "0" { "--cache keep" } else { "--cache drop (the default)" };
            return Err(UsageError::new(format!(
                "--invalidate {value} is fio's flag: iopulse's is --cache (--cache keep for fio's invalidate=0, --cache drop for invalidate=1, --cache warm to read the region into the cache first); give {equivalent}"
            )));
        }
        match (self.no_invalidate, self.cache) {
            (false, mode) => Ok(mode),
            (true, CacheMode::Drop | CacheMode::Keep) => Ok(CacheMode::Keep),
            (true, other) => Err(UsageError::new(format!(
                "--no-invalidate (the former name of --cache keep) contradicts --cache {}: give one --cache",
                other.name()
            ))),
        }
    }

    /// Think time and rate limit, checked.
    fn pacing(&self) -> Result<(Option<ThinkSpec>, Option<RateSpec>), UsageError> {
        let mode = self.think_mode.unwrap_or(ThinkMode::Sleep);
        let think = match (self.think_time, self.think_adaptive_percent) {
            (Some(_), Some(_)) => {
                return Err(UsageError::new(
                    "--think-time and --think-adaptive-percent both given: give a fixed time or a percentage of latency",
                ));
            }
            (None, None) => {
                if self.think_every.is_some() {
                    return Err(UsageError::new("--think-every needs --think-time or --think-adaptive-percent"));
                }
                None
            }
            (time, adaptive) => {
                if adaptive == Some(0) || adaptive.is_some_and(|p| p > 100_000) {
                    return Err(UsageError::new("--think-adaptive-percent: give a percentage from 1 to 100000"));
                }
                let every = self.think_every.unwrap_or(1);
                if every == 0 {
                    return Err(UsageError::new("--think-every 0: think after at least 1 I/O"));
                }
                let time_ns = time.map_or(0, |d| d.as_nanos().min(u128::from(u64::MAX)) as u64);
                Some(ThinkSpec { time_ns, mode, every, adaptive_percent: adaptive })
            }
        };
        let rate = match (self.rate_iops, self.rate_bw) {
            (Some(_), Some(_)) => return Err(UsageError::new("--rate-iops and --rate-bw both given: give one")),
            (None, None) => {
                if self.rate_total {
                    return Err(UsageError::new("--rate-total needs --rate-iops or --rate-bw"));
                }
                None
            }
            (iops, bw) => {
                let (target, given_as) = match (iops, bw) {
                    (Some(n), _) => (n as f64, RateGivenAs::Iops),
                    (_, Some(bytes)) => {
                        (bytes as f64 / self.block_size.unwrap_or(4096).max(1) as f64, RateGivenAs::Bandwidth)
                    }
                    _ => unreachable!(),
                };
                if target <= 0.0 {
                    let flag = if iops.is_some() { "--rate-iops" } else { "--rate-bw" };
                    return Err(UsageError::new(format!(
                        "{flag}: the rate must allow at least one I/O per second (--rate-bw at least one --block-size)"
                    )));
                }
                let per_worker = if self.rate_total { target / f64::from(self.threads.max(1)) } else { target };
                Some(RateSpec { iops_per_worker: per_worker, given_as, total: self.rate_total, mode })
            }
        };
        if self.think_mode.is_some() && think.is_none() && rate.is_none() {
            return Err(UsageError::new(
                "--think-mode applies to --think-time, --think-adaptive-percent or a rate limit",
            ));
        }
        Ok((think, rate))
    }

    /// `--bssplit`, `--block-align`: the mix of I/O sizes (`None`: every I/O is --block-size).
    fn block_sizes(&self) -> Result<Option<BlockSizeMix>, UsageError> {
        let mix = match (&self.bssplit, self.block_align) {
            (None, None) => return Ok(None),
            (Some(text), align) => {
                BlockSizeMix::parse(text, align).map_err(|e| UsageError::new(format!("--bssplit {text}: {e}")))?
            }
            (None, Some(align)) => BlockSizeMix::single(self.block_size.unwrap_or(4096), align)
                .map_err(|e| UsageError::new(format!("--block-align: {e}")))?,
        };
        if self.rate_bw.is_some() {
            return Err(UsageError::new(
                "--rate-bw with --bssplit or --block-align: a bandwidth is not a fixed rate of I/Os of mixed sizes; give --rate-iops instead",
            ));
        }
        Ok(Some(mix))
    }

    /// The distribution and its parameters; a parameter of another distribution is an error.
    /// `--dedupe-ratio`, `--compress-ratio`: each at least 1, for random unverified writes.
    /// `--write-pattern`, or the default: `unique` for every engine (no storage can shrink
    /// it, and it costs what fio's scrambling does), `random` when ratios shape the data.
    fn write_pattern(&self, reducibility: &Reducibility) -> Pattern {
        self.write_pattern.unwrap_or(if reducibility.is_none() { Pattern::Unique } else { Pattern::Random })
    }

    fn reducibility(&self) -> Result<Reducibility, UsageError> {
        for (flag, ratio, most) in
            [("--dedupe-ratio", self.dedupe_ratio, 1e9), ("--compress-ratio", self.compress_ratio, 4096.0)]
        {
            let Some(r) = ratio else { continue };
            if !(1.0..=most).contains(&r) {
                return Err(UsageError::new(format!(
                    "{flag} {r}: give a ratio from 1 (no reduction) to {most}, e.g. {flag} 2"
                )));
            }
            if let Some(p) = self.write_pattern.filter(|&p| p != Pattern::Random) {
                return Err(UsageError::new(format!(
                    "{flag} shapes random data, but --write-pattern is {}: drop --write-pattern or {flag}",
                    p.name()
                )));
            }
            if let Some(p) = self.verify_pattern.filter(|&p| p != Pattern::Random) {
                return Err(UsageError::new(format!(
                    "{flag} shapes random data, but --verify-pattern is {}: drop --verify-pattern or {flag}",
                    p.name()
                )));
            }
        }
        Ok(Reducibility { dedupe_ratio: self.dedupe_ratio, compress_ratio: self.compress_ratio })
    }

    fn distribution(&self) -> Result<Distribution, UsageError> {
        let misplaced = |flag: &str, wanted: &str| {
            UsageError::new(format!(
                "{flag} applies to --distribution {wanted}, not {}: add --distribution {wanted} or drop {flag}",
                self.distribution.to_possible_value().map_or("uniform".into(), |v| v.get_name().to_string())
            ))
        };
        let kind = self.distribution;
        if self.zipf_theta.is_some() && kind != DistributionKind::Zipf {
            return Err(misplaced("--zipf-theta", "zipf"));
        }
        if self.pareto_h.is_some() && kind != DistributionKind::Pareto {
            return Err(misplaced("--pareto-h", "pareto"));
        }
        if self.gaussian_stddev.is_some() && kind != DistributionKind::Gaussian {
            return Err(misplaced("--gaussian-stddev", "gaussian"));
        }
        if self.gaussian_center.is_some() && kind != DistributionKind::Gaussian {
            return Err(misplaced("--gaussian-center", "gaussian"));
        }
        Ok(match kind {
            DistributionKind::Uniform => Distribution::Uniform,
            DistributionKind::Zipf => Distribution::Zipf { theta: self.zipf_theta.unwrap_or(1.2) },
            DistributionKind::Pareto => Distribution::Pareto { h: self.pareto_h.unwrap_or(0.9) },
            DistributionKind::Gaussian => Distribution::Gaussian {
                stddev: self.gaussian_stddev.unwrap_or(0.1),
                center: self.gaussian_center.unwrap_or(0.5),
            },
        })
    }
}

/// A seed for runs that did not give one: different every run, recorded in the result.
fn fresh_seed() -> u64 {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let mut state = nanos ^ (u64::from(std::process::id()) << 32);
    crate::rng::splitmix64(&mut state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_of(args: &[&str]) -> Result<Spec, UsageError> {
        let mut argv = vec!["iopulse"];
        argv.extend_from_slice(args);
        Args::try_parse_from(argv).expect("clap").into_spec().map(|(s, _)| s)
    }

    #[test]
    fn defaults() {
        let s = spec_of(&["/tmp/x"]).unwrap();
        assert_eq!(s.block_size_bytes, 4096);
        assert_eq!(s.read_percent, 100);
        assert_eq!(s.run_length, RunLength::Duration { ns: 10_000_000_000 });
        assert_eq!(s.order, AccessOrder::Sequential);
        assert_eq!((s.threads, s.queue_depth), (1, 1));
        assert_eq!(s.file_size_bytes, None);
    }

    #[test]
    fn cache_drop_by_default_and_no_invalidate_is_keep() {
        let spec = spec_of(&["/tmp/x"]).unwrap();
        assert_eq!((spec.cache, spec.invalidate), (CacheMode::Drop, true));
        let spec = spec_of(&["/tmp/x", "--no-invalidate"]).unwrap();
        assert_eq!((spec.cache, spec.invalidate), (CacheMode::Keep, false));
        assert_eq!(spec_of(&["/tmp/x", "--cache", "warm"]).unwrap().cache, CacheMode::Warm);
        assert_eq!(spec_of(&["/tmp/x", "--cache", "keep"]).unwrap().cache, CacheMode::Keep);
        let e = spec_of(&["/tmp/x", "--no-invalidate", "--cache", "warm"]).unwrap_err().to_string();
        assert!(e.contains("--no-invalidate") && e.contains("--cache warm"), "{e}");
        let e = spec_of(&["/tmp/x", "--invalidate", "0"]).unwrap_err().to_string();
        assert!(e.contains("give --cache keep"), "{e}");
        let e = spec_of(&["/tmp/x", "--invalidate=1"]).unwrap_err().to_string();
        assert!(e.contains("give --cache drop"), "{e}");
        let e = spec_of(&["/tmp/x", "--cache", "warm", "--direct"]).unwrap_err().to_string();
        assert!(e.contains("--cache warm") && e.contains("--direct"), "{e}");
        let e = spec_of(&["/tmp/x", "--verify", "--engine", "null"]).unwrap_err().to_string();
        assert!(e.contains("--verify") && e.contains("--engine null"), "{e}");
    }

    #[test]
    fn embedded_default_is_5s_on_256m() {
        let s = spec_of(&[]).unwrap();
        assert_eq!(s.run_length, RunLength::Duration { ns: 5_000_000_000 });
        assert_eq!(s.file_size_bytes, Some(256 << 20));
    }

    #[test]
    fn read_write_percent_either_or_both() {
        assert_eq!(spec_of(&["x", "--write-percent", "30"]).unwrap().read_percent, 70);
        assert_eq!(spec_of(&["x", "--read-percent", "30"]).unwrap().read_percent, 30);
        assert_eq!(spec_of(&["x", "--read-percent", "30", "--write-percent", "70"]).unwrap().read_percent, 30);
        let err = spec_of(&["x", "--read-percent", "30", "--write-percent", "30"]).unwrap_err();
        assert!(err.message.contains("--read-percent") && err.message.contains("100"), "{err}");
    }

    #[test]
    fn duration_zero_means_until_covered() {
        assert_eq!(spec_of(&["x", "--duration", "0"]).unwrap().run_length, RunLength::UntilCovered);
    }

    #[test]
    fn placement_flags() {
        let s = spec_of(&["x"]).unwrap();
        assert!(s.placement.is_default());
        let s = spec_of(&["x", "--cpu-cores", "0,2,4-5", "--cpu-policy", "compact", "--numa-zones", "1"]).unwrap();
        assert_eq!(s.placement.cpu_cores, Some(vec![0, 2, 4, 5]));
        assert_eq!(s.placement.cpu_policy, Some(CpuPolicy::Compact));
        assert_eq!(s.placement.numa_zones, Some(NumaZones::Nodes(vec![1])));
        assert_eq!(spec_of(&["x", "--numa-zones", "auto"]).unwrap().placement.numa_zones, Some(NumaZones::Auto));
        for bad in [&["--cpu-cores", "3-1"][..], &["--cpu-cores", ""], &["--numa-zones", "a"], &["--cpu-cores", "-1"]] {
            let mut argv = vec!["iopulse", "x"];
            argv.extend_from_slice(bad);
            let err = Args::try_parse_from(argv).unwrap_err().to_string();
            assert!(err.contains(bad[0]), "{bad:?}: {err}");
        }
    }

    #[test]
    fn io_uring_flags() {
        let s = spec_of(&["x", "--engine", "io_uring"]).unwrap();
        assert_eq!(s.engine, EngineKind::IoUring);
        assert_eq!(s.engine_options.io_uring, UringOptions::default());
        assert!(s.engine_options.io_uring.register);
        let s = spec_of(&["x", "--engine", "io_uring", "--no-register", "--sqpoll-cpu", "1"]).unwrap();
        let u = &s.engine_options.io_uring;
        assert!(!u.register && u.sqpoll && u.sqpoll_cpu == Some(1) && !u.iopoll);
        let s = spec_of(&["x", "--engine", "io_uring", "--iopoll", "--direct"]).unwrap();
        assert!(s.engine_options.io_uring.iopoll);
    }

    #[test]
    fn iopoll_needs_direct() {
        let err = spec_of(&["x", "--engine", "io_uring", "--iopoll"]).unwrap_err();
        assert!(err.message.contains("--iopoll") && err.message.contains("--direct"), "{err}");
    }

    #[test]
    fn io_uring_flags_need_io_uring() {
        for flag in ["--sqpoll", "--iopoll", "--no-register"] {
            let err = spec_of(&["x", flag, "--direct"]).unwrap_err();
            assert!(err.message.contains(flag) && err.message.contains("--engine io_uring"), "{err}");
        }
    }

    #[test]
    fn libaio_and_mmap_engines_and_their_flags() {
        assert_eq!(spec_of(&["x", "--engine", "libaio"]).unwrap().engine, EngineKind::Libaio);
        let s = spec_of(&["x", "--engine", "mmap", "--mmap-populate", "--madvise", "hugepage", "--fsync-on-close"])
            .unwrap();
        assert_eq!(s.engine, EngineKind::Mmap);
        assert!(s.engine_options.mmap_populate && s.fsync_on_close);
        assert_eq!(s.engine_options.madvise, Some(Madvise::Hugepage));
        let err = spec_of(&["x", "--engine", "mmap", "--direct"]).unwrap_err();
        assert!(err.message.contains("--direct") && err.message.contains("libaio"), "{err}");
        let err = spec_of(&["x", "--engine", "sync", "--madvise", "random"]).unwrap_err();
        assert!(err.message.contains("--engine mmap"), "{err}");
    }

    #[test]
    fn strict_direct_implies_direct() {
        let s = spec_of(&["x", "--strict-direct"]).unwrap();
        assert!(s.direct && s.strict_direct);
    }
}
