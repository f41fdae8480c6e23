//! `--expect`: bounds the run's figures must meet (help heading "Outputs"). A workload
//! flag, so that each job of a job file (`expect = ["read.p99<=2ms"]`), each point of a
//! sweep and each step of a search carries its own; each is judged against the run's result
//! and a failed one makes the exit code 6 once every report is written.

use serde::Deserialize;

/// The checked expectations, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectList(pub Vec<String>);

impl std::str::FromStr for ExpectList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let parsed = crate::figures::expect::parse_list(text)?;
        Ok(ExpectList(parsed.into_iter().map(|e| e.text).collect()))
    }
}

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Outputs")]
#[serde(default)]
pub struct ExpectArgs {
    /// Bounds the figures must meet (exit 6 when one fails).
    ///
    /// Bounds the run's figures must meet, comma-separated: each is printed with its figure
    /// and recorded in the JSON (`expectations`); a failed one makes the exit code 6 after
    /// every report is written. Figures: iops, bw, p50..p99.99, min, mean, max (all op types),
    /// the same after read., write., flush., trim., and cpu.per_io. In a job file:
    /// `expect = ["read.p99<=2ms", "iops>=40k"]`. E.g. `--expect 'read.p99<=2ms,iops>=40k,cpu.per_io<=10us'`
    #[arg(long, value_name = "FIGURE<=VALUE,...")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub expect: Option<ExpectList>,
}

impl ExpectArgs {
    pub fn texts(&self) -> Vec<String> {
        self.expect.as_ref().map(|l| l.0.clone()).unwrap_or_default()
    }
}
