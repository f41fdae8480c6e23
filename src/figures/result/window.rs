//! The result's section about time: when the measurement window opened, its length, the
//! ramp before it, a steady state within it, and why the run stopped. Plain data.

use super::{StartAtInfo, SteadyStateInfo};
use serde::{Deserialize, Serialize};

/// When the run's measurement window opened, how long it was, the ramp before it, a steady
/// state within it, and why it ended.
/// Flattened into the result: its keys sit at the document's top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunWindow {
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// Wall-clock time the measurement window opened (the start line's release), ns since
    /// the Unix epoch; 0 in results of versions that did not record it. What `iopulse merge`
    /// and cluster runs compare to say how far apart the windows were.
    #[serde(default)]
    pub window_start_unix_ns: u64,
    /// `--start-at`: the wall-clock time asked for, and how late the window opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<StartAtInfo>,
    /// Length of the measurement window: from the start line (or the ramp's end) to the
    /// stop; with a steady state reached, the steady window's length (see `steady_state`).
    pub window_ns: u64,
    /// `--ramp`: how long I/O ran before the window without being counted (absent: no ramp).
    /// `window_start_unix_ns` is the ramp's end; time-series rows count from the release.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_ns: u64,
    /// `--ramp`: I/Os completed during the ramp, in no figure of the result.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_ops: u64,
    /// `--steady-state`: whether, when and over which window the run was steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateInfo>,
    pub stop_reason: StopReason,
    pub interrupted: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The duration ran out.
    Duration,
    /// Every worker finished its share (runs until covered).
    Complete,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// An I/O or the engine failed.
    Error,
    /// `--steady-state` was reached.
    SteadyState,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
