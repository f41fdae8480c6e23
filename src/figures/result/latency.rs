//! The result's latency and its shape: the histograms it carries, the figures per size and
//! per zone, and a steady state's window and verdict. Plain data.

use crate::io::stats::OpSummary;
use serde::{Deserialize, Serialize};

/// `--steady-state`: the criterion, its window, and what the run did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SteadyStateInfo {
    /// As given: `iops:2%`, `bw_slope:0.5%`, `lat:100`.
    pub criterion: String,
    pub metric: crate::io::stats::steady_state::Metric,
    pub test: crate::io::stats::steady_state::Test,
    pub window_intervals: u32,
    pub window_ns: u64,
    pub reached: bool,
    /// End of the steady window, from the release (ramp included); the run stopped then.
    pub reached_at_ns: Option<u64>,
    /// The window judged: the steady one, else the last full one (absent: never full).
    pub window: Option<SteadyWindow>,
    /// The result's `read`, `write`, `total` and `window_ns` are the steady window's.
    pub figures_are_window: bool,
    /// The whole run's figures (after the ramp), when the result's are the window's.
    pub whole_run: Option<WholeRun>,
}

/// The window the steady-state test judged.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SteadyWindow {
    /// Its start and end, from the release.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The test's figures: mean, largest deviation, slope per second, figure and bound.
    pub test: crate::io::stats::steady_state::WindowFigures,
    /// From the merged interval histograms of its rows.
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
}

/// A run's figures over its whole window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WholeRun {
    pub window_ns: u64,
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
}

/// The merged latency histograms, serialized so results can be merged exactly later.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Histograms {
    /// Always "hdrhistogram-v2-deflate-base64".
    pub encoding: String,
    pub unit: String,
    pub read: String,
    pub write: String,
    /// The flushes' latencies (absent when the run issued none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<String>,
    /// The trims' latencies (absent when the run asked for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
    /// `--bssplit`, `--block-align`: each size's latencies (absent without a mix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_sizes: Vec<SizeHistograms>,
}

/// One size's latency histograms (encoded as the others).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeHistograms {
    pub size_bytes: u64,
    pub read: String,
    pub write: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
}

/// One zone of a zoned distribution: the share of the I/Os it was asked to get and got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneShare {
    /// Zones per direction: whose zone it is (`read`, `write`, `trim`; trims are drawn from
    /// the writes' zones when they have none of their own). Absent when one set of zones
    /// serves every I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    pub io_percent_asked: f64,
    /// I/Os drawn in the zone, by every worker.
    pub ios: u64,
    /// Of the I/Os drawn from its set of zones (its direction's).
    pub io_percent_achieved: f64,
}

impl ZoneShare {
    /// The shares of zones asked `asked` (percent) that received `ios` I/Os each, of
    /// `direction` (`None`: one set for every I/O).
    pub fn of(direction: Option<&str>, asked: &[f64], ios: &[u64]) -> Vec<ZoneShare> {
        let mut zones: Vec<ZoneShare> = asked
            .iter()
            .zip(ios)
            .map(|(&a, &n)| ZoneShare {
                direction: direction.map(str::to_string),
                io_percent_asked: a,
                ios: n,
                io_percent_achieved: 0.0,
            })
            .collect();
        ZoneShare::refigure(&mut zones);
        zones
    }

    /// Each zone's achieved share, of the I/Os of the zones of its direction.
    pub fn refigure(zones: &mut [ZoneShare]) {
        for zone in 0..zones.len() {
            let total: u64 = zones.iter().filter(|z| z.direction == zones[zone].direction).map(|z| z.ios).sum();
            let n = zones[zone].ios;
            zones[zone].io_percent_achieved = if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 };
        }
    }
}

/// `--bssplit`, `--block-align`: one size's figures, and its share of each op type's
/// I/Os: achieved, and what the split asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSizeFigures {
    pub size_bytes: u64,
    pub read: OpSummary,
    pub write: OpSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    /// Percent of the run's reads that had this size (0 when there were none).
    pub read_share_percent: f64,
    pub write_share_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_share_percent: Option<f64>,
    /// Percent of reads (writes, trims) the split asked to have this size.
    pub read_asked_percent: f64,
    pub write_asked_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_asked_percent: Option<f64>,
}
