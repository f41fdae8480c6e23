//! The flags that say which block comes next: sequential or random, the offset distribution
//! and its parameters (help heading "Access pattern").

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::{Percent, Real};
use crate::io::access::zoned::{ZoneExtent, ZoneSets};
use crate::workload::spec::{AccessOrder, Distribution};
use clap::ValueEnum;
use serde::Deserialize;

/// `--distribution`'s names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DistributionKind {
    Uniform,
    Zipf,
    Pareto,
    Gaussian,
    /// fio's `zoned`: shares of the I/Os to zones given as shares of the region (--zones).
    Zoned,
    /// fio's `zoned_abs`: shares of the I/Os to zones given as sizes (--zones).
    ZonedAbs,
}

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Access pattern")]
#[serde(default)]
pub struct AccessArgs {
    /// Random offsets (default: sequential).
    ///
    /// Random offsets (drawn with replacement, see --distribution); otherwise sequential.
    #[arg(long)]
    pub random: bool,

    /// Share of --random I/Os that jump, 0-100.
    ///
    /// Share of --random I/Os that jump to a drawn offset, 0-100 (fio's percentage_random);
    /// the others continue sequentially from the previous I/O, so 50 gives half sequential
    /// runs, half random jumps. E.g. `--random --random-percent 20` [default: 100]
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub random_percent: Option<Percent>,

    /// Offset distribution of --random runs.
    ///
    /// Offset distribution of --random runs: uniform, zipf (hot set, --zipf-theta), pareto
    /// (fio's h rule, --pareto-h), gaussian (a bell, --gaussian-stddev/--gaussian-center), or
    /// zoned / zoned-abs (fio's: set shares of the I/Os to zones, --zones).
    /// E.g. `--random --distribution zipf --zipf-theta 1.2` [default: uniform]
    #[arg(long, value_enum, value_name = "KIND")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub distribution: Option<DistributionKind>,

    /// Zipf exponent θ [default: 1.2]
    ///
    /// Zipf exponent θ > 0 (1.0 allowed): P(rank k) ∝ k^-θ over every block of the region [default: 1.2]
    #[arg(long, allow_hyphen_values = true, value_name = "THETA")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub zipf_theta: Option<Real>,

    /// Pareto h, fio's meaning [default: 0.9]
    ///
    /// Pareto h in (0, 1), fio's meaning: a fraction h of the I/Os go to a fraction 1-h of
    /// the blocks (0.8 → 80/20, 0.9 → 90/10) [default: 0.9]
    #[arg(long, allow_hyphen_values = true, value_name = "H")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub pareto_h: Option<Real>,

    /// Gaussian spread, a fraction of the region [default: 0.1]
    ///
    /// Gaussian standard deviation, as a fraction of the region [default: 0.1]
    #[arg(long, allow_hyphen_values = true, value_name = "FRACTION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub gaussian_stddev: Option<Real>,

    /// Gaussian centre, a fraction of the region [default: 0.5]
    ///
    /// Gaussian centre, as a fraction of the region (0 = start, 1 = end) [default: 0.5]
    #[arg(long, allow_hyphen_values = true, value_name = "FRACTION")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub gaussian_center: Option<Real>,

    /// Zones of --distribution zoned/zoned-abs, fio's syntax.
    ///
    /// The zones of --distribution zoned or zoned-abs, in fio's syntax: IO%/REGION% pairs
    /// (zoned; both columns add up to 100) or IO%/SIZE pairs (zoned-abs; what lies after the
    /// last zone is not touched), from the start of the region, at most 16. Reads, writes and
    /// trims may each have their own set, comma-separated in that order (trims follow the
    /// writes' when not given). The report shows each zone's share achieved. E.g. `--random
    /// --distribution zoned --zones 60/10:30/20:10/70`, or per direction `--random
    /// --write-percent 30 --distribution zoned --zones 80/10:20/90,20/50:80/50`
    #[arg(long, value_name = "ZONES")]
    pub zones: Option<String>,

    /// Keep zipf/pareto hot blocks at the region's start.
    ///
    /// Keep zipf and pareto hot blocks at the start of the region instead of scattering
    /// them over it by a fixed bijection of block numbers.
    #[arg(long)]
    pub no_scramble: bool,
}

impl AccessArgs {
    pub fn order(&self) -> AccessOrder {
        if self.random { AccessOrder::Random } else { AccessOrder::Sequential }
    }

    /// The distribution and its parameters; a parameter of another distribution is an error.
    pub fn distribution(&self) -> Result<Distribution, UsageError> {
        let kind = self.distribution.unwrap_or(DistributionKind::Uniform);
        let misplaced = |flag: &str, wanted: &str| {
            UsageError::new(format!(
                "{flag} applies to --distribution {wanted}, not {}: add --distribution {wanted} or drop {flag}",
                kind.to_possible_value().map_or("uniform".into(), |v| v.get_name().to_string())
            ))
        };
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
        let zoned = matches!(kind, DistributionKind::Zoned | DistributionKind::ZonedAbs);
        if self.zones.is_some() && !zoned {
            return Err(misplaced("--zones", "zoned"));
        }
        let zones = |extent: ZoneExtent| {
            let text = self.zones.as_deref().ok_or_else(|| {
                UsageError::new(format!(
                    "--distribution {} needs --zones: add e.g. --zones {}",
                    if extent == ZoneExtent::Bytes { "zoned-abs" } else { "zoned" },
                    if extent == ZoneExtent::Bytes { "60/64M:40/1G" } else { "60/10:30/20:10/70" }
                ))
            })?;
            ZoneSets::parse(text, extent).map_err(|e| UsageError::new(format!("--zones: {e}")))
        };
        let real = |v: Option<Real>, default: f64| v.map_or(default, |r| r.0);
        Ok(match kind {
            DistributionKind::Uniform => Distribution::Uniform,
            DistributionKind::Zipf => Distribution::Zipf { theta: real(self.zipf_theta, 1.2) },
            DistributionKind::Pareto => Distribution::Pareto { h: real(self.pareto_h, 0.9) },
            DistributionKind::Gaussian => Distribution::Gaussian {
                stddev: real(self.gaussian_stddev, 0.1),
                center: real(self.gaussian_center, 0.5),
            },
            DistributionKind::Zoned => Distribution::Zoned { zones: zones(ZoneExtent::Percent)? },
            DistributionKind::ZonedAbs => Distribution::Zoned { zones: zones(ZoneExtent::Bytes)? },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_of_another_distribution_is_refused() {
        let args = AccessArgs { random: true, zipf_theta: Some(Real(1.1)), ..Default::default() };
        let e = args.distribution().unwrap_err().message;
        assert!(e.starts_with("--zipf-theta applies to --distribution zipf, not uniform"), "{e}");
        let args = AccessArgs { distribution: Some(DistributionKind::Zipf), ..args };
        assert_eq!(args.distribution(), Ok(Distribution::Zipf { theta: 1.1 }));
    }
}
