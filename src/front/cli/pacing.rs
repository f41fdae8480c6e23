//! The flags that pace a worker: think time between I/Os and rate limits (help heading
//! "Pacing").

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::{Bytes, Count, Period};
use crate::io::schedule::think::{RateGivenAs, RateSpec, ThinkMode, ThinkSpec};
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Pacing: think time and rate")]
#[serde(default)]
pub struct PacingArgs {
    /// Pause after I/Os, like an application working.
    ///
    /// Pause after I/Os, like an application that works between requests (e.g. 50us, 2ms).
    /// On async engines nothing new is issued while thinking; I/O in flight still completes.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub think_time: Option<Period>,

    /// How to wait: sleep or spin [default: sleep]
    ///
    /// How to wait for --think-time and rate limits: sleep, or spin (busy-wait, µs accuracy).
    /// E.g. `--rate-iops 2000 --think-mode spin` [default: sleep]
    #[arg(long, value_enum, value_name = "MODE")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub think_mode: Option<ThinkMode>,

    /// Think after every N completed I/Os [default: 1]
    ///
    /// Think after every N completed I/Os of a worker. E.g. `--think-time 1ms --think-every 8` [default: 1]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub think_every: Option<Count<u32>>,

    /// Think for P % of the latency seen.
    ///
    /// Think for P % of the latency the worker currently sees (a running mean of recent
    /// completions) instead of a fixed time, so think time scales with the storage.
    /// E.g. `--think-adaptive-percent 50`
    #[arg(long, allow_hyphen_values = true, value_name = "P")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub think_adaptive_percent: Option<Count<u32>>,

    /// At most N I/Os per second per worker.
    ///
    /// Issue at most N I/Os per second per worker (with --rate-total: for the whole run), on a
    /// fixed schedule; latency is measured from when each I/O was due (no coordinated omission).
    /// E.g. `--rate-iops 2000`
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub rate_iops: Option<Count<u64>>,

    /// At most SIZE per second per worker.
    ///
    /// Like --rate-iops, as bandwidth: SIZE per second per worker (e.g. 100M).
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub rate_bw: Option<Bytes>,

    /// Rate limits are for the whole run, not per worker.
    ///
    /// --rate-iops / --rate-bw are for the whole run, shared evenly by the workers.
    #[arg(long)]
    pub rate_total: bool,
}

impl PacingArgs {
    /// Think time and rate limit, checked; a rate in bandwidth is counted in I/Os of
    /// `block_size_bytes`, a total rate shared by `threads`.
    pub fn pacing(
        &self,
        block_size_bytes: u64,
        threads: u32,
    ) -> Result<(Option<ThinkSpec>, Option<RateSpec>), UsageError> {
        let mode = self.think_mode.unwrap_or(ThinkMode::Sleep);
        let adaptive = self.think_adaptive_percent.map(|c| c.0);
        let think = match (self.think_time, adaptive) {
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
                let every = self.think_every.map_or(1, |c| c.0);
                if every == 0 {
                    return Err(UsageError::new("--think-every 0: think after at least 1 I/O"));
                }
                let time_ns = time.map_or(0, |p| p.0.as_nanos().min(u128::from(u64::MAX)) as u64);
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
            (Some(Count(n)), _) => Some(self.rate(n as f64, RateGivenAs::Iops, "--rate-iops", threads, mode)?),
            (None, Some(Bytes(bytes))) => Some(self.rate(
                bytes as f64 / block_size_bytes.max(1) as f64,
                RateGivenAs::Bandwidth,
                "--rate-bw",
                threads,
                mode,
            )?),
        };
        if self.think_mode.is_some() && think.is_none() && rate.is_none() {
            return Err(UsageError::new(
                "--think-mode applies to --think-time, --think-adaptive-percent or a rate limit",
            ));
        }
        Ok((think, rate))
    }

    fn rate(
        &self,
        iops: f64,
        given_as: RateGivenAs,
        flag: &str,
        threads: u32,
        mode: ThinkMode,
    ) -> Result<RateSpec, UsageError> {
        if iops <= 0.0 {
            return Err(UsageError::new(format!(
                "{flag}: the rate must allow at least one I/O per second (--rate-bw at least one --block-size)"
            )));
        }
        let iops_per_worker = if self.rate_total { iops / f64::from(threads.max(1)) } else { iops };
        Ok(RateSpec { iops_per_worker, given_as, total: self.rate_total, mode })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_total_rate_is_shared_by_the_workers_and_a_bandwidth_counts_blocks() {
        let p = PacingArgs { rate_bw: Some(Bytes(8 << 20)), rate_total: true, ..Default::default() };
        let (_, rate) = p.pacing(4096, 4).unwrap();
        assert_eq!(rate.unwrap().iops_per_worker, 512.0);
        let p = PacingArgs { rate_total: true, ..Default::default() };
        assert!(p.pacing(4096, 1).unwrap_err().message.contains("--rate-total needs"));
    }
}
