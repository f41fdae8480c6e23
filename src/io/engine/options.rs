//! The engine's flags: which engine, O_DIRECT, the submission batch (help heading
//! "Engine"), and each engine's own group (`uring/options.rs`, `mmap/options.rs`). A flag
//! of one engine given with another is refused here, by the engine that owns it: nothing
//! outside `io/engine/` names an engine.

use super::mmap::options::MmapArgs;
use super::uring::options::UringArgs;
use super::{EngineKind, EngineOptions};
use crate::base::diagnostics::error::UsageError;
use crate::base::primitives::spin_wait::CompletionWait;
use crate::base::units::values::Count;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Engine")]
#[serde(default)]
pub struct EngineArgs {
    /// I/O engine [default: sync]
    ///
    /// I/O engine. E.g. `--engine io_uring` [default: sync]
    #[arg(long, value_enum, value_name = "ENGINE")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub engine: Option<EngineKind>,

    /// Bypass the page cache (O_DIRECT).
    ///
    /// Bypass the page cache (O_DIRECT). If the filesystem refuses it, iopulse says so loudly
    /// and falls back to buffered I/O (see --strict-direct). The end of the run is checked
    /// too: a filesystem that served it through the page cache (ext4 data=journal, btrfs
    /// compression), a loop device caching below it, or memory (zram, tmpfs) is said, in
    /// the I/O mode line and the JSON. E.g. `--direct --random`
    #[arg(long)]
    pub direct: bool,

    /// Fail rather than fall back when O_DIRECT is refused.
    ///
    /// With O_DIRECT, fail instead of falling back to buffered I/O. Implies --direct.
    #[arg(long)]
    pub strict_direct: bool,

    /// At most N requests per submission call.
    ///
    /// libaio and io_uring: at most N requests per submission call [default: 2 with
    /// --direct and for buffered libaio, the queue depth for buffered io_uring]. With 3 or
    /// more the kernel holds the batch back until it is built (block plugging); larger
    /// batches save system calls at some latency. fio's iodepth_batch_submit.
    /// E.g. `--engine io_uring --queue-depth 128 --submit-batch 32`
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub submit_batch: Option<Count<u32>>,

    /// How a worker waits for completions.
    ///
    /// libaio and io_uring: how the worker waits for a completion. `adaptive` watches its
    /// completion ring in user space up to 50 µs, with at most 4 I/Os in flight, while
    /// completions come that fast, and sleeps otherwise (a slow device costs a few watches
    /// in a thousand waits); `poll` spins until each completion
    /// comes (a CPU busy for the run: the lowest latency at queue depth 1); `sleep` always
    /// sleeps in the kernel, as fio does (taken with any engine: sync's system call is its
    /// wait). The result's engine facts count the spins.
    /// E.g. `--engine io_uring --queue-depth 1 --completion-wait sleep` [default: adaptive]
    #[arg(long, value_enum, value_name = "MODE")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub completion_wait: Option<CompletionWait>,

    /// Same as --completion-wait poll.
    ///
    /// Same as `--completion-wait poll`. E.g. `--engine libaio --direct --poll-completions`
    #[arg(long, conflicts_with = "completion_wait")]
    pub poll_completions: bool,

    #[command(flatten)]
    #[serde(flatten)]
    pub io_uring: UringArgs,

    #[command(flatten)]
    #[serde(flatten)]
    pub mmap: MmapArgs,
}

impl EngineArgs {
    pub fn kind(&self) -> EngineKind {
        self.engine.unwrap_or(EngineKind::Sync)
    }

    /// The engine's options, each engine's flags refused with another engine.
    pub fn options(&self) -> Result<EngineOptions, UsageError> {
        let kind = self.kind();
        for (owner, given) in [(EngineKind::IoUring, self.io_uring.given()), (EngineKind::Mmap, self.mmap.given())] {
            if let Some(flag) = given.filter(|_| owner != kind) {
                return Err(UsageError::new(format!(
                    "{flag} applies only to --engine {} (the engine is {})",
                    owner.name(),
                    kind.name()
                )));
            }
        }
        let submit_batch = self.submit_batch.map(|c| c.0);
        if submit_batch == Some(0) {
            return Err(UsageError::new("--submit-batch 0: give at least 1 request per submission call"));
        }
        if submit_batch.is_some() && !kind.caps().batches_submissions {
            return Err(UsageError::new(format!(
                "--submit-batch applies only to engines that submit batches ({}); the engine is {}: drop it",
                EngineKind::names_where(|c| c.batches_submissions),
                kind.name()
            )));
        }
        let completion_wait = if self.poll_completions { Some(CompletionWait::Poll) } else { self.completion_wait };
        // `sleep` is what an engine without a completion queue does anyway (its system call
        // blocks until the I/O is done): said with it, it changes nothing and is taken, so
        // that a job file asking fio's wait (the default profile) runs on any engine.
        if let Some(mode) = completion_wait
            && mode != CompletionWait::Sleep
            && !kind.caps().batches_submissions
        {
            let flag = if self.poll_completions {
                "--poll-completions".to_string()
            } else {
                format!("--completion-wait {}", mode.name())
            };
            return Err(UsageError::new(format!(
                "{flag} applies only to engines that wait for completions ({}); the engine is {}: drop it",
                EngineKind::names_where(|c| c.batches_submissions),
                kind.name()
            )));
        }
        Ok(EngineOptions {
            completion_wait: completion_wait.unwrap_or_default(),
            mmap_populate: self.mmap.mmap_populate,
            madvise: self.mmap.madvise,
            io_uring: self.io_uring.options(),
            submit_batch,
        })
    }
}
