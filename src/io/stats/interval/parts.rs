//! Each worker's part of an interval, and what the sampler hands the observer of a run's
//! rows (`RowObserver`: a live view, `stats::live`): the row, the parts, the steady window.
//! The sampler fills the parts only when an observer exists (`Sampler::per_worker`).
//!
//! Plain data: it must not read the machine or format.

use super::TimeSeriesRow;
use crate::io::stats::steady_state::SteadyProgress;

/// One worker's part of an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkerInterval {
    /// Reads and writes that completed in the interval.
    pub ops: u64,
    pub bytes: u64,
    /// The sum of their latencies: over the interval's length, the worker's achieved queue
    /// depth (Little's law: depth = arrival rate × time in the system).
    pub latency_sum_ns: u64,
    /// The worker thread's time on a CPU over about the interval, as a share of one CPU
    /// (`None` where it could not be read).
    pub cpu_share: Option<f64>,
    /// A paced run's I/Os issued in the interval and the sum of how late each was issued
    /// against its schedule (a replay's lag against the trace's times).
    pub late_ops: u64,
    pub late_sum_ns: u64,
}

impl WorkerInterval {
    /// The mean lateness of the interval's paced I/Os (none: nothing paced).
    pub fn mean_late_ns(&self) -> Option<u64> {
        self.late_sum_ns.checked_div(self.late_ops)
    }

    /// The mean number of I/Os in flight over an interval of `interval_ns`.
    pub fn achieved_depth(&self, interval_ns: u64) -> f64 {
        self.latency_sum_ns as f64 / interval_ns.max(1) as f64
    }
}

/// What the sampler hands a run's live view of each finished interval.
#[derive(Clone, Copy)]
pub struct SampledInterval<'a> {
    pub row: &'a TimeSeriesRow,
    /// Per worker, in worker order.
    pub workers: &'a [WorkerInterval],
    /// `--steady-state`: the window with this row in it.
    pub steady: Option<SteadyProgress>,
}
