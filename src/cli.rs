//! The command line: clap definitions, and their translation into a `Spec`
//! (what the run does) and `OutputOptions` (where its results go).
//!
//! Flag names are fixed: users already type them. This module parses and
//! converts; it does not open files (see `target::plan`).

use crate::engine::EngineOptions;
use crate::engine::uring::UringOptions;
use crate::error::UsageError;
use crate::spec::{AccessOrder, EngineKind, RunLength, Spec};
use crate::units::{parse_duration, parse_size};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  iopulse
      5 s of 4 KiB sequential reads on a temporary 256 MiB file, removed afterwards
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

Exit codes: 0 success, 1 the run failed, 2 usage error (nothing was touched),
3 verification mismatches, 130 interrupted (the partial report is printed).
Full documentation: README.md and docs/ (docs/usage.md lists every flag).";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// a report for people
    Text,
    /// the JSON result (docs/json.md) on stdout
    Json,
}

/// Where the results of a run go. Not part of the `Spec`: it does not change
/// what is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    pub format: OutputFormat,
    pub json_file: Option<PathBuf>,
    pub quiet: bool,
}

#[derive(Debug, Parser)]
#[command(
    name = "iopulse",
    version,
    about = "A Linux storage benchmark: true O_DIRECT, exact HDR latency percentiles, honest coverage.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// Regular files or block devices to run on. A missing file is created and laid out
    /// with real data. With no TARGET, a temporary 256 MiB file in $TMPDIR is used for 5 s
    /// and removed afterwards.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,

    /// Size of each file (k/m/g/t are powers of two, decimals allowed: 4k, 1.5G). A shorter
    /// file is extended with written data; default: an existing file's size, or 1G for a new one.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub file_size: Option<u64>,

    /// Bytes per I/O, e.g. 512, 4k, 1M. With --direct a multiple of the target's DIO alignment.
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = parse_size)]
    pub block_size: u64,

    /// How long to measure: 10s, 500ms, 2m, or a bare number of seconds. `0` runs until every
    /// block of the target has been accessed exactly once. [default: 10s; 5s with no TARGET]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Share of I/Os that are reads, 0-100 [default: 100]. Give this or --write-percent.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub read_percent: Option<u8>,

    /// Share of I/Os that are writes, 0-100. Read and write percentages must sum to 100.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub write_percent: Option<u8>,

    /// Random offsets (uniform over the target); otherwise sequential.
    #[arg(long)]
    pub random: bool,

    /// Number of worker threads. Each worker has its own queue of I/Os.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: u32,

    /// I/Os in flight per worker (async engines; sync completes one at a time).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub queue_depth: u32,

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

    /// Seed of every random choice (offsets, read/write mix, data). Same seed, same run.
    /// Default: drawn at start and recorded in the JSON result.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Also write the JSON result to FILE (docs/json.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// No progress or notes on stderr; warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    /// Allow writes to a block device (destroys its contents).
    #[arg(long)]
    pub force: bool,
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
        let embedded = self.targets.is_empty();
        let run_length = match self.duration {
            Some(d) if d.is_zero() => RunLength::UntilCovered,
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
        let spec = Spec {
            targets: self.targets,
            file_size_bytes,
            block_size_bytes: self.block_size,
            run_length,
            read_percent,
            order: if self.random { AccessOrder::Random } else { AccessOrder::Sequential },
            threads: self.threads,
            queue_depth: self.queue_depth,
            engine: self.engine,
            direct: self.direct || self.strict_direct,
            strict_direct: self.strict_direct,
            seed: self.seed.unwrap_or_else(fresh_seed),
            force: self.force,
            engine_options: EngineOptions {
                io_uring: UringOptions {
                    register: !self.no_register,
                    sqpoll: self.sqpoll || self.sqpoll_cpu.is_some(),
                    sqpoll_cpu: self.sqpoll_cpu,
                    iopoll: self.iopoll,
                },
            },
        };
        spec.validate()?;
        let output = OutputOptions { format: self.output_format, json_file: self.json, quiet: self.quiet };
        Ok((spec, output))
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
    fn strict_direct_implies_direct() {
        let s = spec_of(&["x", "--strict-direct"]).unwrap();
        assert!(s.direct && s.strict_direct);
    }
}
