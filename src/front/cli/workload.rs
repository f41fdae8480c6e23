//! Every flag that shapes what one run does, as one typed group of groups (each concern in
//! its own file and under its own help heading), and its conversion into the `Spec`.
//!
//! The command line fills it through clap; a job file, a profile, a sweep point and the
//! flags after a job file fill the very same struct through `table.rs`, so a key means
//! exactly what the flag of that name means, and every way in passes `into_spec`'s checks.

use super::access::AccessArgs;
use super::data::DataArgs;
use super::durability::DurabilityArgs;
use super::expect::ExpectArgs;
use super::metadata::MetadataArgs;
use super::pacing::PacingArgs;
use super::placement::PlacementArgs;
use super::safety::SafetyArgs;
use super::shape::ShapeArgs;
use super::targets::TargetArgs;
use super::window::WindowArgs;
use crate::base::diagnostics::error::UsageError;
use crate::io::engine::options::EngineArgs;
use crate::workload::spec::access::AccessSpec;
use crate::workload::spec::data::DataSpec;
use crate::workload::spec::durability::DurabilitySpec;
use crate::workload::spec::errors::ErrorSpec;
use crate::workload::spec::io_path::IoSpec;
use crate::workload::spec::output::OutputSpec;
use crate::workload::spec::pacing::PacingSpec;
use crate::workload::spec::shape::ShapeSpec;
use crate::workload::spec::window::WindowSpec;
use crate::workload::spec::{CacheMode, Spec};
use crate::workload::spec::{FadviseHint, FileDistribution};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[serde(default)]
pub struct WorkloadArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub shape: ShapeArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub window: WindowArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub targets: TargetArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub durability: DurabilityArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub pacing: PacingArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub placement: PlacementArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub safety: SafetyArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub expect: ExpectArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub metadata: MetadataArgs,
}

/// File size of the embedded default target (no TARGET given).
const EMBEDDED_FILE_SIZE_BYTES: u64 = crate::workload::spec::EMBEDDED_FILE_SIZE_BYTES;

impl WorkloadArgs {
    /// The validated `Spec` of a run on `targets` (none: the embedded default, a temporary
    /// file); `time_series_file`: a `--timeseries` file or a fio JSON form is written (the run
    /// keeps its rows).
    pub fn into_spec(self, targets: Vec<PathBuf>, time_series_file: bool) -> Result<Spec, UsageError> {
        let read_percent = self.shape.read_percent()?;
        let distribution = self.access.distribution()?;
        let cache = self.targets.cache_mode()?;
        let threads = self.shape.threads();
        let block_sizes = self.shape.block_sizes()?;
        if block_sizes.is_some() && self.pacing.rate_bw.is_some() {
            return Err(UsageError::new(
                "--rate-bw with --bssplit or --block-align: a bandwidth is not a fixed rate of I/Os of mixed sizes; give --rate-iops instead",
            ));
        }
        if self.targets.fadvise_hint == Some(FadviseHint::On) && (self.engine.direct || self.engine.strict_direct) {
            return Err(UsageError::new(
                "--fadvise-hint on with --direct: the advice is for the page cache, which --direct bypasses; drop --fadvise-hint (or --direct)",
            ));
        }
        let block_size = self.shape.block_size_bytes();
        let (think, rate) = self.pacing.pacing(block_size, threads)?;
        let verify = self.data.verify()?;
        let reducibility = self.data.reducibility()?;
        let engine = self.engine.kind();
        let write_pattern = self.data.write_pattern(&reducibility);
        let engine_options = self.engine.options()?;
        let ops_limit = self.window.ops_limit(block_size, block_sizes.is_some())?;
        let embedded = targets.is_empty();
        let run_length = self.window.run_length(ops_limit, embedded)?;
        let metadata = self.metadata.spec()?;
        // The embedded default target is a file of block I/O; a tree (`--files`, a
        // profile's tree given its root later) has no such file.
        let file_size_bytes = match self.shape.file_size {
            None if embedded && metadata.is_none() => Some(EMBEDDED_FILE_SIZE_BYTES),
            other => other.map(|b| b.0),
        };
        let interval_ns = self.window.interval_ns()?;
        let ramp_ns = self.window.ramp_ns(run_length)?;
        let steady_state = self.window.steady_state(run_length, interval_ns)?;
        let seed = self.data.seed.map(|c| c.0);
        let run_seed = seed.unwrap_or_else(fresh_seed);
        // Written data: from --seed; else, verified, from 0 (so that a later run can check
        // what an earlier one wrote), and not verified, from the run's own seed (so that two
        // runs never write the same bytes, which deduplicating storage would store once).
        let data_seed = seed.unwrap_or(if verify.is_some() { 0 } else { run_seed });
        let spec = Spec {
            replay: None,
            targets,
            seed: run_seed,
            force: self.safety.force,
            placement: self.placement.spec(),
            metadata,
            shape: ShapeSpec {
                file_size_bytes,
                block_size_bytes: block_sizes.as_ref().map_or(block_size, |m| m.align_bytes),
                block_sizes,
                threads,
                queue_depth: self.shape.queue_depth(),
            },
            access: AccessSpec {
                read_percent,
                order: self.access.order(),
                trim_percent: self.shape.trim_percent.map_or(0, |p| p.0),
                random_percent: self.access.random_percent.map(|p| p.0),
                distribution,
                scramble: !self.access.no_scramble,
                file_distribution: self.shape.file_distribution.unwrap_or(FileDistribution::Shared),
                sequential_overlap: self.shape.sequential_overlap,
            },
            window: WindowSpec {
                ramp_ns,
                steady_state,
                run_length,
                ops_limit,
                io_limit_percent: self.window.io_share_percent(),
            },
            io: IoSpec {
                engine,
                direct: self.engine.direct || self.engine.strict_direct,
                strict_direct: self.engine.strict_direct,
                cache,
                invalidate: cache == CacheMode::Drop,
                keep_holes: self.targets.keep_holes,
                engine_options,
                fadvise_hint: self.targets.fadvise_hint.unwrap_or_default(),
                buffer_pages: self.targets.buffer_pages.unwrap_or_default(),
            },
            data: DataSpec {
                write_pattern,
                reducibility,
                verify,
                verify_state: self.data.verify_state.clone(),
                verify_state_every: self.data.verify_state_every.map(|c| c.0),
                data_seed,
            },
            durability: DurabilitySpec {
                fsync_on_close: self.durability.fsync_on_close,
                end_fsync: self.durability.end_fsync,
                flush: self.durability.flush()?,
                sync_writes: self.durability.sync_writes,
            },
            pacing: PacingSpec { think, rate },
            errors: ErrorSpec {
                continue_on_error: self.safety.continue_on_error || self.safety.max_errors.is_some(),
                max_errors: self.safety.max_errors.map(|c| c.0),
                io_timeout_ns: self.safety.io_timeout_ns()?,
            },
            output: OutputSpec {
                expect: self.expect.texts(),
                record_iolog: false,
                interval_ns,
                // The steady-state detector reads the time series: it is collected, and in the JSON.
                time_series: self.window.interval.is_some() || time_series_file || steady_state.is_some(),
            },
        };
        spec.validate()?;
        crate::figures::expect::refuse_figures_the_run_lacks(&spec)?;
        Ok(spec)
    }
}

/// A seed for runs that did not give one: different every run, recorded in the result.
fn fresh_seed() -> u64 {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let mut state = nanos ^ (u64::from(std::process::id()) << 32);
    crate::base::primitives::rng::splitmix64(&mut state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::cli::command_of;
    use crate::front::cli::table::{FlagTable, FlagValue};
    use crate::io::engine::{EngineKind, Madvise};
    use crate::io::placement::{CpuPolicy, NumaZones};
    use crate::workload::spec::{AccessOrder, RunLength};

    fn spec_of(args: &[&str]) -> Result<Spec, String> {
        crate::testing::spec_of(args.iter().copied())
    }

    #[test]
    fn defaults() {
        let s = spec_of(&["/tmp/x"]).unwrap();
        assert_eq!(s.shape.block_size_bytes, 4096);
        assert_eq!(s.access.read_percent, 100);
        assert_eq!(s.window.run_length, RunLength::Duration { ns: 10_000_000_000 });
        assert_eq!(s.access.order, AccessOrder::Sequential);
        assert_eq!((s.shape.threads, s.shape.queue_depth), (1, 1));
        assert_eq!(s.shape.file_size_bytes, None);
        assert_eq!(s.errors.io_timeout_ns, crate::workload::spec::DEFAULT_IO_TIMEOUT_NS);
    }

    #[test]
    fn cache_drop_by_default_and_no_invalidate_is_keep() {
        let spec = spec_of(&["/tmp/x"]).unwrap();
        assert_eq!((spec.io.cache, spec.io.invalidate), (CacheMode::Drop, true));
        let spec = spec_of(&["/tmp/x", "--no-invalidate"]).unwrap();
        assert_eq!((spec.io.cache, spec.io.invalidate), (CacheMode::Keep, false));
        assert_eq!(spec_of(&["/tmp/x", "--cache", "warm"]).unwrap().io.cache, CacheMode::Warm);
        let e = spec_of(&["/tmp/x", "--no-invalidate", "--cache", "warm"]).unwrap_err();
        assert!(e.contains("--no-invalidate") && e.contains("--cache warm"), "{e}");
        let e = spec_of(&["/tmp/x", "--invalidate", "0"]).unwrap_err();
        assert!(e.contains("--invalidate 0 is fio's flag") && e.contains("--cache keep"), "{e}");
        let e = spec_of(&["/tmp/x", "--cache", "warm", "--direct"]).unwrap_err();
        assert!(e.contains("--cache warm") && e.contains("--direct"), "{e}");
        let e = spec_of(&["/tmp/x", "--verify", "--engine", "null"]).unwrap_err();
        assert!(e.contains("--verify") && e.contains("--engine null"), "{e}");
    }

    #[test]
    fn embedded_default_is_5s_on_256m() {
        let s = spec_of(&["--random"]).unwrap();
        assert_eq!(s.window.run_length, RunLength::Duration { ns: 5_000_000_000 });
        assert_eq!(s.shape.file_size_bytes, Some(256 << 20));
    }

    #[test]
    fn placement_flags() {
        assert!(spec_of(&["x"]).unwrap().placement.is_default());
        let s = spec_of(&["x", "--cpu-cores", "0,2,4-5", "--cpu-policy", "compact", "--numa-zones", "1"]).unwrap();
        assert_eq!(s.placement.cpu_cores, Some(vec![0, 2, 4, 5]));
        assert_eq!(s.placement.cpu_policy, Some(CpuPolicy::Compact));
        assert_eq!(s.placement.numa_zones, Some(NumaZones::Nodes(vec![1])));
        assert_eq!(spec_of(&["x", "--numa-zones", "auto"]).unwrap().placement.numa_zones, Some(NumaZones::Auto));
        for bad in [&["--cpu-cores", "3-1"][..], &["--cpu-cores", ""], &["--numa-zones", "a"], &["--cpu-cores", "-1"]] {
            let mut argv = vec!["x"];
            argv.extend_from_slice(bad);
            let err = spec_of(&argv).unwrap_err();
            assert!(err.contains(bad[0]), "{bad:?}: {err}");
        }
    }

    #[test]
    fn engine_flags_belong_to_their_engine() {
        let s = spec_of(&["x", "--engine", "io_uring", "--no-register", "--sqpoll-cpu", "0"]).unwrap();
        let u = &s.io.engine_options.io_uring;
        assert!(!u.register && u.sqpoll && u.sqpoll_cpu == Some(0) && !u.iopoll);
        assert!(
            spec_of(&["x", "--engine", "io_uring", "--iopoll", "--direct"]).unwrap().io.engine_options.io_uring.iopoll
        );
        let e = spec_of(&["x", "--engine", "io_uring", "--iopoll"]).unwrap_err();
        assert!(e.contains("--iopoll") && e.contains("--direct"), "{e}");
        for flag in ["--sqpoll", "--iopoll", "--no-register"] {
            let e = spec_of(&["x", flag, "--direct"]).unwrap_err();
            assert!(e.contains(flag) && e.contains("--engine io_uring"), "{e}");
        }
        let s = spec_of(&["x", "--engine", "mmap", "--mmap-populate", "--madvise", "hugepage", "--fsync-on-close"])
            .unwrap();
        assert_eq!((s.io.engine, s.io.engine_options.madvise), (EngineKind::Mmap, Some(Madvise::Hugepage)));
        let e = spec_of(&["x", "--engine", "sync", "--madvise", "random"]).unwrap_err();
        assert!(e.contains("--engine mmap"), "{e}");
        let e = spec_of(&["x", "--submit-batch", "4"]).unwrap_err();
        assert!(e.contains("--submit-batch") && e.contains("libaio, io_uring"), "{e}");
        let e = spec_of(&["x", "--engine", "mmap", "--direct"]).unwrap_err();
        assert!(e.contains("--direct") && e.contains("libaio"), "{e}");
    }

    #[test]
    fn strict_direct_implies_direct() {
        let s = spec_of(&["x", "--strict-direct"]).unwrap();
        assert!(s.io.direct && s.io.strict_direct);
    }

    #[test]
    fn fio_names_are_answered_with_ours() {
        let e = spec_of(&["x", "--bs", "4k"]).unwrap_err();
        assert_eq!(e, "--bs 4k is fio's flag: iopulse calls this --block-size (e.g. --block-size 4k)");
        let e = spec_of(&["x", "--rw", "randread"]).unwrap_err();
        assert!(e.starts_with("--rw randread is fio's flag: iopulse calls this --random"), "{e}");
        let e = spec_of(&["x", "--time_based"]).unwrap_err();
        assert!(e.starts_with("--time_based is fio's flag"), "{e}");
    }

    /// A value each flag takes, by the name of its value.
    fn example(arg: &clap::Arg) -> String {
        if let Some(v) = arg.get_possible_values().iter().rev().find(|v| !v.is_hide_set()) {
            return v.get_name().to_string();
        }
        let name = arg.get_value_names().and_then(|n| n.first()).map(|n| n.to_string()).unwrap_or_default();
        match (arg.get_long().unwrap_or(""), name.as_str()) {
            ("steady-state", _) => "iops:2%".into(),
            ("cpu-cores", _) => "0".into(),
            ("numa-zones", _) => "auto".into(),
            ("bssplit", _) => "4k/50:64k/50".into(),
            ("expect", _) => "read.p99<=2ms,iops>=40k".into(),
            ("meta-mix", _) => "create=30,stat=70".into(),
            ("meta-phases", _) => "create,stat".into(),
            ("meta-flow", _) => "open,read-whole,close".into(),
            ("file-size-dist", _) => "0:20,4k:80".into(),
            (_, "SIZE") => "64k".into(),
            (_, "DURATION") => "3s".into(),
            (_, "PERCENT") => "30".into(),
            (_, "THETA" | "H" | "FRACTION" | "R") => "0.5".into(),
            _ => "7".into(),
        }
    }

    /// Every flag read from a table (a job file's key) fills the same field, with the same
    /// value, as the flag given on the command line: one parser per flag, two ways in.
    #[test]
    fn every_flag_fills_the_same_field_from_a_table_as_from_the_command_line() {
        let command = command_of::<WorkloadArgs>();
        let mut checked = 0;
        for arg in command.get_arguments().filter(|a| a.get_long().is_some()) {
            let long = arg.get_long().unwrap();
            let (token, value) = if arg.get_action().takes_values() {
                let v = example(arg);
                (format!("--{long}={v}"), FlagValue::Text(v))
            } else {
                (format!("--{long}"), FlagValue::Switch(true))
            };
            use clap::FromArgMatches;
            let matches = command.clone().try_get_matches_from(["iopulse", &token]).expect(&token);
            let from_clap = WorkloadArgs::from_arg_matches(&matches).expect(&token);
            let mut table = FlagTable::new();
            table.set(long, value);
            let from_table: WorkloadArgs = table.fill(&command).unwrap_or_else(|e| panic!("{token}: {e:?}"));
            assert_eq!(from_table, from_clap, "{token}");
            assert_ne!(from_table, WorkloadArgs::default(), "{token} fills nothing");
            checked += 1;
        }
        assert!(checked > 50, "{checked} flags");
    }
}
