//! io_uring's own flags (help heading "io_uring") and the checks of its options: what a
//! person asks of the ring, before anything is set up.

use super::UringOptions;
use crate::base::diagnostics::error::UsageError;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "io_uring")]
#[serde(default)]
pub struct UringArgs {
    /// Register no buffers or files with the ring.
    ///
    /// Register nothing with the ring (plain Read/Write on descriptors instead of
    /// ReadFixed/WriteFixed on registered buffers and files; no registered ring fd), to
    /// compare. E.g. `--engine io_uring --no-register`
    #[arg(long)]
    pub no_register: bool,

    /// A kernel thread polls the submission queue.
    ///
    /// A kernel thread polls the submission queue (SQPOLL), so submitting needs no
    /// system call; that thread keeps a CPU busy while the run lasts.
    /// E.g. `--engine io_uring --sqpoll`
    #[arg(long)]
    pub sqpoll: bool,

    /// Bind the SQPOLL thread to CPU N.
    ///
    /// Bind the SQPOLL thread to CPU N (implies --sqpoll). E.g. `--engine io_uring --sqpoll-cpu 1`
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub sqpoll_cpu: Option<crate::base::units::values::Count<u32>>,

    /// Poll the device for completions (IOPOLL).
    ///
    /// Polled completions (IOPOLL): the worker polls the device instead of waiting for
    /// an interrupt. Needs --direct and a device with poll queues (NVMe: the nvme module
    /// parameter poll_queues); elsewhere the run stops at start with an error.
    /// E.g. `--engine io_uring --direct --iopoll`
    #[arg(long)]
    pub iopoll: bool,
}

impl UringArgs {
    /// The first of these flags given, to refuse it with another engine.
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.no_register, "--no-register"),
            (self.sqpoll_cpu.is_some(), "--sqpoll-cpu"),
            (self.sqpoll, "--sqpoll"),
            (self.iopoll, "--iopoll"),
        ]
        .into_iter()
        .find_map(|(set, flag)| set.then_some(flag))
    }

    pub fn options(&self) -> UringOptions {
        let sqpoll_cpu = self.sqpoll_cpu.map(|c| c.0);
        UringOptions {
            register: !self.no_register,
            sqpoll: self.sqpoll || sqpoll_cpu.is_some(),
            sqpoll_cpu,
            iopoll: self.iopoll,
        }
    }
}

/// io_uring's refusals of its options (`Engine::check_options`).
pub(super) fn check(options: &UringOptions, direct: bool) -> Result<(), UsageError> {
    if options.iopoll && !direct {
        return Err(UsageError::new("--iopoll needs --direct: polled completions exist only for O_DIRECT I/O"));
    }
    if let Some(cpu) = options.sqpoll_cpu {
        // The same reading placement uses (masks of any size, not glibc's 1024 CPUs).
        if let Ok(available) = crate::io::placement::bind::allowed_cpus()
            && !available.contains(&cpu)
        {
            let list = available.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
            return Err(UsageError::new(format!(
                "--sqpoll-cpu {cpu}: CPU {cpu} does not exist or is not available to this process (available: {list}): give one of those"
            )));
        }
    }
    Ok(())
}
