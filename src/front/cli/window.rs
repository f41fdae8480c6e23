//! The flags that say when the measured window opens and ends: its length, an I/O or byte
//! budget, a ramp before it, a steady-state stop, and its interval (help heading "Window
//! and phases"), and the interval of its time series.

use crate::base::diagnostics::error::UsageError;
use crate::base::units::display::seconds_ns;
use crate::base::units::values::{Count, IoAmount, Period};
use crate::io::stats::steady_state::Criterion;
use crate::workload::spec::{RunLength, SteadyStateSpec};
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Window and phases")]
#[serde(default)]
pub struct WindowArgs {
    /// How long to measure [default: 5s]
    ///
    /// How long to measure: 10s, 500ms, 2m, or a bare number of seconds. `0` runs until every
    /// block of the target has been accessed exactly once. [default: 10s; 5s with no TARGET]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub duration: Option<Period>,

    /// Stop after this many I/Os.
    ///
    /// Stop after this many I/Os in total (instead of --duration, or whichever comes first);
    /// --ramp's I/Os are not counted. E.g. `--ops 1000000`
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub ops: Option<Count<u64>>,

    /// Stop after this many bytes, or this share of the target.
    ///
    /// Stop after this many bytes of I/O in total (instead of --duration, or whichever comes
    /// first); --ramp's I/Os are not counted. A percentage is a share of the region each
    /// worker addresses, taken when the run opens its targets: `100%` moves as many bytes
    /// per worker as its file or device holds (fio's job without size or runtime). E.g.
    /// `--io-limit 22m`, or `--random --threads 4 --io-limit 100%` on a device
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE|N%")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub io_limit: Option<IoAmount>,

    /// Run before the window, counting nothing.
    ///
    /// Run the workload for DURATION before the window opens, and count none of it (as fio's
    /// ramp_time): --duration stays the length of the measured window, so the run lasts
    /// both; --ops and --io-limit count from the window's start. The time series keeps the
    /// ramp's rows, marked `ramp`. E.g. `--ramp 30s`, or `--ramp 500ms --ops 100000`
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub ramp: Option<Period>,

    /// Stop once the run is steady.
    ///
    /// Stop once the run is steady (fio's steadystate, SNIA PTS): METRIC is iops, bw or lat
    /// (mean latency), with _slope for the slope of a least-squares line instead of the
    /// largest deviation from the mean; LIMIT is a share of the window's mean (2%) or in
    /// the metric's unit (per second for a slope). --duration is the upper bound; the
    /// window's figures become the result. Example: --steady-state iops:2% --duration 10m
    #[arg(long, value_name = "METRIC:LIMIT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub steady_state: Option<Criterion>,

    /// The rolling window --steady-state judges.
    ///
    /// The rolling window --steady-state judges: a whole number of --interval (at least 2).
    /// E.g. `--steady-state iops:2% --steady-state-window 10s` [default: 10 intervals]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub steady_state_window: Option<Period>,

    /// Length of one interval [default: 1s]
    ///
    /// Length of one interval of the live line and the time series (e.g. 1s, 250ms).
    /// Given explicitly, the JSON result carries a time_series array. [default: 1s]
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub interval: Option<Period>,
}

/// `--duration` with no TARGET (the embedded default target).
pub const EMBEDDED_DURATION_NS: u64 = crate::workload::spec::EMBEDDED_DURATION_NS;
const DEFAULT_DURATION_NS: u64 = 10_000_000_000;

impl WindowArgs {
    /// `--ops` or `--io-limit` in I/Os of `block_size_bytes` (`mixed`: a block-size mix, whose
    /// I/Os have no one size).
    pub fn ops_limit(&self, block_size_bytes: u64, mixed: bool) -> Result<Option<u64>, UsageError> {
        if mixed && matches!(self.io_limit, Some(IoAmount::Bytes(_))) {
            return Err(UsageError::new(
                "--io-limit with --bssplit or --block-align: a byte limit is not a whole number of I/Os of mixed sizes; give --ops instead",
            ));
        }
        match (self.ops, self.io_limit) {
            (Some(_), Some(_)) => Err(UsageError::new("--ops and --io-limit both given: give one of them")),
            (Some(n), None) => Ok(Some(n.0)),
            (None, Some(IoAmount::Bytes(bytes))) => Ok(Some(bytes / block_size_bytes.max(1))),
            // Known when the run opens its targets (`io_share_percent`).
            (None, Some(IoAmount::Share(_))) | (None, None) => Ok(None),
        }
    }

    /// `--io-limit N%`: the share of each worker's region the run moves, resolved into an
    /// I/O count once the targets' sizes are known (`run::checked`).
    pub fn io_share_percent(&self) -> Option<u32> {
        match self.io_limit {
            Some(IoAmount::Share(p)) => Some(p),
            _ => None,
        }
    }

    /// How long the run lasts (`embedded`: no TARGET, a temporary file).
    pub fn run_length(&self, ops_limit: Option<u64>, embedded: bool) -> Result<RunLength, UsageError> {
        Ok(match self.duration.map(|p| p.0) {
            Some(d) if d.is_zero() => RunLength::UntilCovered,
            None if ops_limit.is_some() || self.io_share_percent().is_some() => RunLength::UntilLimit,
            Some(d) => RunLength::Duration {
                ns: u64::try_from(d.as_nanos())
                    .map_err(|_| UsageError::new("--duration is too long: at most 584 years"))?,
            },
            None if embedded => RunLength::Duration { ns: EMBEDDED_DURATION_NS },
            None => RunLength::Duration { ns: DEFAULT_DURATION_NS },
        })
    }

    pub fn interval_ns(&self) -> Result<u64, UsageError> {
        match self.interval.map(|p| p.0) {
            Some(d) if d.as_millis() < 10 => {
                Err(UsageError::new(format!("--interval {d:?} is too short: give at least 10ms (e.g. 250ms, 1s)")))
            }
            Some(d) => Ok(d.as_nanos().min(u128::from(u64::MAX)) as u64),
            None => Ok(1_000_000_000),
        }
    }

    /// `--ramp`: refused with a run that has neither a duration nor an I/O budget (until
    /// covered: its window would have no length).
    pub fn ramp_ns(&self, run_length: RunLength) -> Result<u64, UsageError> {
        let Some(Period(ramp)) = self.ramp else { return Ok(0) };
        let ramp_ns =
            u64::try_from(ramp.as_nanos()).map_err(|_| UsageError::new("--ramp is too long: at most 584 years"))?;
        if ramp_ns > 0 && run_length == RunLength::UntilCovered {
            return Err(UsageError::new(format!(
                "--ramp {ramp:?} needs a window that follows it: give e.g. --duration 30s or --ops 100000, not --duration 0"
            )));
        }
        Ok(ramp_ns)
    }

    /// `--steady-state` and `--steady-state-window`, checked against the interval and the
    /// run's length.
    pub fn steady_state(&self, run_length: RunLength, interval_ns: u64) -> Result<Option<SteadyStateSpec>, UsageError> {
        let Some(criterion) = self.steady_state else {
            if let Some(Period(w)) = self.steady_state_window {
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
            Some(Period(w)) => {
                let w_ns = w.as_nanos();
                let n = w_ns / u128::from(interval_ns);
                if n < 2 || n * u128::from(interval_ns) != w_ns || n > 100_000 {
                    return Err(UsageError::new(format!(
                        "--steady-state-window {w:?}: give a whole number (2 to 100000) of --interval {} (e.g. {})",
                        seconds_ns(interval_ns),
                        seconds_ns(interval_ns * 10)
                    )));
                }
                n as u32
            }
        };
        let window_ns = u64::from(window_intervals) * interval_ns;
        if window_ns > duration_ns {
            return Err(UsageError::new(format!(
                "--steady-state-window {} is longer than --duration {}: the window could never fill; give a longer --duration or a shorter window",
                seconds_ns(window_ns),
                seconds_ns(duration_ns)
            )));
        }
        Ok(Some(SteadyStateSpec { criterion, window_intervals }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn duration_zero_means_until_covered_and_a_budget_alone_until_the_limit() {
        let w = WindowArgs { duration: Some(Period(Duration::ZERO)), ..Default::default() };
        assert_eq!(w.run_length(None, false), Ok(RunLength::UntilCovered));
        let w = WindowArgs::default();
        assert_eq!(w.run_length(Some(5), false), Ok(RunLength::UntilLimit));
        assert_eq!(w.run_length(None, true), Ok(RunLength::Duration { ns: EMBEDDED_DURATION_NS }));
        let w = WindowArgs { io_limit: Some(IoAmount::Bytes(1 << 20)), ..Default::default() };
        assert_eq!(w.ops_limit(4096, false), Ok(Some(256)));
        assert!(w.ops_limit(4096, true).unwrap_err().message.contains("give --ops instead"));
    }
}
