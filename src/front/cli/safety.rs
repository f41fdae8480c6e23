//! The flags that say what a run may destroy and how it meets failing I/O (help heading
//! "Safety and errors").

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::{Count, Period};
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Safety and errors")]
#[serde(default)]
pub struct SafetyArgs {
    /// Allow writes to a device; extend someone else's file.
    ///
    /// Allow writes to a block device (destroys its contents), and let a read run extend an
    /// existing file that iopulse did not lay out to --file-size (e.g. `iopulse notes.dat
    /// --file-size 1G --force`). Devices in use and files behind a loop device stay refused.
    #[arg(long)]
    pub force: bool,

    /// Keep going after an I/O error (counted).
    ///
    /// Keep going after an I/O error: failed I/Os are counted per op type and errno (with the
    /// first offsets) in the report and the JSON, and the run exits 1 at its end if any failed.
    /// Default: the first failed I/O stops the run.
    #[arg(long)]
    pub continue_on_error: bool,

    /// Stop once N I/Os have failed.
    ///
    /// Stop the run once N I/Os have failed in all (implies --continue-on-error until then).
    /// E.g. `--max-errors 100`
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub max_errors: Option<Count<u64>>,

    /// End the run when an I/O takes longer than DURATION.
    ///
    /// An I/O that has not completed after DURATION is reported with its file and offset and
    /// ends the run (exit 1) instead of hanging; `0` never gives up. E.g. `--io-timeout 10s`
    /// [default: 30s]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub io_timeout: Option<Period>,
}

impl SafetyArgs {
    pub fn io_timeout_ns(&self) -> Result<u64, UsageError> {
        match self.io_timeout {
            None => Ok(crate::workload::spec::DEFAULT_IO_TIMEOUT_NS),
            Some(Period(d)) => {
                u64::try_from(d.as_nanos()).map_err(|_| UsageError::new("--io-timeout is too long: at most 584 years"))
            }
        }
    }
}
