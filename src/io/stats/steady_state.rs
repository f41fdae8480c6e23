//! Steady state (fio's `steadystate`, the SNIA PTS criterion): is the last window of
//! interval figures flat enough to stop?
//!
//! A `Criterion` names a metric (IOPS, bandwidth or mean latency), a test (the largest
//! deviation of any interval from the window's mean, or the slope of the least-squares
//! line through the window) and a limit, either as a share of the window's mean
//! (`iops:2%`) or in the metric's own unit per interval or per second (`iops:500`,
//! `bw_slope:1%`). A `Detector` is fed one figure per interval and says, once its
//! window is full and the limit holds, that the run is steady, with the window's
//! figures.
//!
//! A `SteadyWatch` is what the sampler (`interval`) feeds: the row figure the criterion
//! names, one per interval after the ramp; it remembers when the run became steady and
//! which rows the window was.
//!
//! Must not: read clocks, touch workers or format; it only computes over the figures
//! it is given (the sampler thread feeds it; the run decides what to do).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

/// The figure a criterion watches, one value per interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Iops,
    /// Bytes per second.
    Bandwidth,
    /// Mean latency of the interval's I/Os, ns.
    MeanLatency,
}

/// How flatness is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// The largest |value - mean| over the window.
    Deviation,
    /// |slope| of the least-squares line through the window, per second.
    Slope,
}

/// The bound on the test's figure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// A share of the window's mean, in percent.
    Percent(f64),
    /// In the metric's unit (per second for a slope).
    Absolute(f64),
}

/// `--steady-state METRIC[_slope]:LIMIT[%]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub metric: Metric,
    pub test: Test,
    pub limit: Limit,
}

impl FromStr for Criterion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "give METRIC:LIMIT with METRIC one of iops, bw, lat (add _slope for the slope test) and LIMIT a number or a percentage, e.g. iops:2% or bw_slope:0.5%";
        let (name, limit) = s.split_once(':').ok_or_else(|| format!("{s:?}: {usage}"))?;
        let (metric, test) = match name.trim().to_ascii_lowercase().as_str() {
            "iops" => (Metric::Iops, Test::Deviation),
            "iops_slope" => (Metric::Iops, Test::Slope),
            "bw" => (Metric::Bandwidth, Test::Deviation),
            "bw_slope" => (Metric::Bandwidth, Test::Slope),
            "lat" => (Metric::MeanLatency, Test::Deviation),
            "lat_slope" => (Metric::MeanLatency, Test::Slope),
            other => return Err(format!("unknown metric {other:?}: {usage}")),
        };
        let limit = limit.trim();
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let value: f64 = number.trim().parse().map_err(|_| format!("limit {limit:?} is not a number: {usage}"))?;
        if !(value.is_finite() && value > 0.0) {
            return Err(format!("limit {limit:?} must be above 0: {usage}"));
        }
        // A spread of more than the mean itself, or beyond any figure a run has, is no
        // bound: every window would count as steady.
        if percent && value > 100.0 {
            return Err(format!("limit {limit:?} is above 100 % of the mean: every window would be steady; {usage}"));
        }
        if !percent && value > 1e16 {
            return Err(format!(
                "limit {limit:?} is beyond any figure a run has: every window would be steady; {usage}"
            ));
        }
        let limit = if percent { Limit::Percent(value) } else { Limit::Absolute(value) };
        Ok(Criterion { metric, test, limit })
    }
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let metric = match self.metric {
            Metric::Iops => "iops",
            Metric::Bandwidth => "bw",
            Metric::MeanLatency => "lat",
        };
        let slope = if self.test == Test::Slope { "_slope" } else { "" };
        match self.limit {
            Limit::Percent(p) => write!(f, "{metric}{slope}:{p}%"),
            Limit::Absolute(a) => write!(f, "{metric}{slope}:{a}"),
        }
    }
}

/// What a full window looked like.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowFigures {
    /// Mean of the metric over the window.
    pub mean: f64,
    /// The largest |value - mean|.
    pub max_deviation: f64,
    /// Slope of the least-squares line, in the metric's unit per second.
    pub slope_per_sec: f64,
    /// The test's figure and its bound, in the metric's unit (per second for a slope).
    pub figure: f64,
    pub bound: f64,
}

impl WindowFigures {
    pub fn steady(&self) -> bool {
        self.figure <= self.bound
    }
}

/// `--steady-state`'s rolling window after an interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyProgress {
    /// Rows in the window so far, of `window_len`.
    pub rows: u64,
    pub window_len: u64,
    /// The full window's figure and bound (the metric's unit), once it is full.
    pub figures: Option<WindowFigures>,
    /// The window was steady: the run stops.
    pub reached: bool,
}

/// Judges a rolling window of `window_len` interval figures against a criterion.
#[derive(Clone, Debug)]
pub struct Detector {
    criterion: Criterion,
    window_len: usize,
    interval_sec: f64,
    values: VecDeque<f64>,
}

impl Detector {
    /// `window_len` intervals of `interval_ns` each (at least 2, for a slope).
    pub fn new(criterion: Criterion, window_len: usize, interval_ns: u64) -> Self {
        let window_len = window_len.max(2);
        Self {
            criterion,
            window_len,
            interval_sec: interval_ns as f64 / 1e9,
            values: VecDeque::with_capacity(window_len),
        }
    }

    /// Adds the next interval's figure; returns the window's figures once it is full.
    pub fn push(&mut self, value: f64) -> Option<WindowFigures> {
        if self.values.len() == self.window_len {
            self.values.pop_front();
        }
        self.values.push_back(value);
        (self.values.len() == self.window_len).then(|| self.figures())
    }

    fn figures(&self) -> WindowFigures {
        let n = self.values.len() as f64;
        let mean = self.values.iter().sum::<f64>() / n;
        let max_deviation = self.values.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
        // Least squares over x = 0, 1, .., n-1 intervals: slope = Σ(x-x̄)(y-ȳ) / Σ(x-x̄)².
        let x_mean = (n - 1.0) / 2.0;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (i, v) in self.values.iter().enumerate() {
            let dx = i as f64 - x_mean;
            sxy += dx * (v - mean);
            sxx += dx * dx;
        }
        let slope_per_sec = if sxx > 0.0 { sxy / sxx / self.interval_sec } else { 0.0 };
        let figure = match self.criterion.test {
            Test::Deviation => max_deviation,
            Test::Slope => slope_per_sec.abs(),
        };
        let bound = match self.criterion.limit {
            Limit::Percent(p) => p / 100.0 * mean.abs(),
            Limit::Absolute(a) => a,
        };
        WindowFigures { mean, max_deviation, slope_per_sec, figure, bound }
    }
}

/// One finished interval, as the watch needs it: the sampler (`interval`) hands over
/// these plain figures, so the criterion knows nothing of the time series' rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WatchedInterval {
    /// End of the interval, from the release.
    pub end_ns: u64,
    /// I/Os completed in it (0 is a stall, never steady).
    pub ops: u64,
    pub iops: f64,
    pub bw_bytes_per_sec: f64,
    pub mean_latency_ns: u64,
}

/// The sampler's side of `--steady-state`: a detector over the rows after the ramp, and
/// what it saw.
#[derive(Clone, Debug)]
pub struct SteadyWatch {
    detector: Detector,
    window_len: u64,
    /// The epoch of the last row fed to the full window, and its figures: the steady
    /// window once `reached`, else the last full window seen.
    last: Option<(u64, WindowFigures)>,
    /// End of the steady window's last row, from the release.
    reached_at_ns: Option<u64>,
    /// Rows still to come before the last interval with no I/O has left the window: a
    /// stall (or a row whose figures had not all arrived) is never a steady state, also
    /// when every figure of the window is zero.
    rows_since_empty: u64,
}

impl SteadyWatch {
    pub fn new(criterion: Criterion, window_len: u32, interval_ns: u64) -> Self {
        let detector = Detector::new(criterion, window_len as usize, interval_ns);
        let window_len = detector.window_len as u64;
        Self { detector, window_len, last: None, reached_at_ns: None, rows_since_empty: 0 }
    }

    /// Feeds the row of epoch `epoch`; true the first time the window is steady. Once
    /// reached, later rows change nothing.
    pub fn observe(&mut self, epoch: u64, row: &WatchedInterval) -> bool {
        if self.reached_at_ns.is_some() {
            return false;
        }
        let value = self.value_of(row);
        self.rows_since_empty = if row.ops == 0 { 0 } else { self.rows_since_empty + 1 };
        let Some(figures) = self.detector.push(value) else { return false };
        self.last = Some((epoch, figures));
        if figures.steady() && self.rows_since_empty >= self.window_len {
            self.reached_at_ns = Some(row.end_ns);
            return true;
        }
        false
    }

    /// Recomputes the window's figures from its rows (`rows`, in order) as the result
    /// finally holds them, so that every figure said of it is one of those rows'.
    pub fn refigure(&mut self, rows: &[WatchedInterval]) {
        let Some((epoch, _)) = self.last else { return };
        let mut detector = self.detector.clone();
        detector.values.clear();
        let mut figures = None;
        for row in rows {
            figures = detector.push(self.value_of(row));
        }
        if let Some(f) = figures {
            self.last = Some((epoch, f));
        }
    }

    fn value_of(&self, row: &WatchedInterval) -> f64 {
        match self.detector.criterion.metric {
            Metric::Iops => row.iops,
            Metric::Bandwidth => row.bw_bytes_per_sec,
            Metric::MeanLatency => row.mean_latency_ns as f64,
        }
    }

    pub fn criterion(&self) -> Criterion {
        self.detector.criterion
    }

    /// Intervals in the window.
    pub fn window_len(&self) -> u64 {
        self.window_len
    }

    /// End of the steady window (from the release), when it was reached.
    pub fn reached_at_ns(&self) -> Option<u64> {
        self.reached_at_ns
    }

    /// The window's figures: the steady window's, else the last full window's.
    pub fn figures(&self) -> Option<WindowFigures> {
        self.last.map(|(_, f)| f)
    }

    /// How far the rolling window is: its rows so far (of `window_len`) and, once full, its
    /// figure against the bound (a live view's).
    pub fn progress(&self) -> SteadyProgress {
        SteadyProgress {
            rows: self.detector.values.len() as u64,
            window_len: self.window_len,
            figures: self.figures(),
            reached: self.reached_at_ns.is_some(),
        }
    }

    /// The epochs of the window's first and last rows (see `figures`).
    pub fn window_epochs(&self) -> Option<(u64, u64)> {
        self.last.map(|(e, _)| ((e + 1).saturating_sub(self.window_len), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Criterion {
        s.parse().unwrap()
    }

    #[test]
    fn parses_every_metric_and_test_and_refuses_nonsense() {
        assert_eq!(c("iops:2%"), Criterion { metric: Metric::Iops, test: Test::Deviation, limit: Limit::Percent(2.0) });
        assert_eq!(c("bw_slope:0.5%").test, Test::Slope);
        assert_eq!(c("lat:100").limit, Limit::Absolute(100.0));
        assert_eq!(c("LAT_SLOPE:1%").metric, Metric::MeanLatency);
        for bad in ["iops", "iops:", "iops:x%", "iops:-1%", "iops:0", "foo:1%", "iops:inf"] {
            assert!(bad.parse::<Criterion>().is_err(), "{bad}");
        }
        for s in ["iops:2%", "bw_slope:0.5%", "lat:100"] {
            assert_eq!(c(s).to_string(), s);
        }
    }

    #[test]
    fn a_flat_window_is_steady_only_once_full() {
        let mut d = Detector::new(c("iops:2%"), 5, 1_000_000_000);
        for v in [1000.0, 1010.0, 990.0, 1005.0] {
            assert_eq!(d.push(v), None);
        }
        let w = d.push(995.0).unwrap();
        assert!((w.mean - 1000.0).abs() < 1e-9);
        assert!((w.max_deviation - 10.0).abs() < 1e-9);
        assert!((w.bound - 20.0).abs() < 1e-9);
        assert!(w.steady());
    }

    #[test]
    fn deviation_outside_the_limit_is_not_steady_and_the_window_rolls() {
        let mut d = Detector::new(c("iops:2%"), 3, 1_000_000_000);
        d.push(500.0);
        d.push(1000.0);
        assert!(!d.push(1000.0).unwrap().steady()); // 500 is far below the mean
        assert!(d.push(1000.0).unwrap().steady()); // 500 has left the window
    }

    #[test]
    fn slope_is_per_second_whatever_the_interval() {
        // +10 per interval of 250 ms is +40 per second.
        let mut d = Detector::new(c("iops_slope:50"), 4, 250_000_000);
        let mut last = None;
        for i in 0..4 {
            last = d.push(1000.0 + 10.0 * f64::from(i));
        }
        let w = last.unwrap();
        assert!((w.slope_per_sec - 40.0).abs() < 1e-9, "{w:?}");
        assert!(w.steady());
        let mut d = Detector::new(c("iops_slope:30"), 4, 250_000_000);
        let w = (0..4).map(|i| d.push(1000.0 + 10.0 * f64::from(i))).last().flatten().unwrap();
        assert!(!w.steady());
        // A percentage of the mean: 40/s over a mean of 1015 is 3.9 %.
        let mut d = Detector::new(c("iops_slope:4%"), 4, 250_000_000);
        assert!((0..4).map(|i| d.push(1000.0 + 10.0 * f64::from(i))).last().flatten().unwrap().steady());
    }

    #[test]
    fn a_drift_inside_the_deviation_bound_can_still_fail_the_slope() {
        // A steady climb of 0.2 % per interval: every value within 1 % of the mean, but the
        // line rises 2 % per second at 100 ms intervals.
        let values: Vec<f64> = (0..9).map(|i| 1000.0 * (1.0 + 0.002 * f64::from(i))).collect();
        let mut dev = Detector::new(c("iops:1%"), 9, 100_000_000);
        let mut slope = Detector::new(c("iops_slope:1%"), 9, 100_000_000);
        let (mut a, mut b) = (None, None);
        for v in values {
            a = dev.push(v);
            b = slope.push(v);
        }
        assert!(a.unwrap().steady());
        assert!(!b.unwrap().steady());
    }

    fn row(end_ns: u64, iops: f64) -> WatchedInterval {
        WatchedInterval { end_ns, ops: iops as u64, iops, ..Default::default() }
    }

    #[test]
    fn a_window_with_an_interval_without_io_is_never_steady() {
        // All zeros: deviation 0 <= 0 % of 0, yet a stall is not a steady state.
        let mut w = SteadyWatch::new(c("iops:1%"), 3, 100_000_000);
        assert!(!(0..6).any(|e| w.observe(e, &row(e * 100, 0.0))));
        assert_eq!(w.reached_at_ns(), None);
        // One empty interval keeps the window from being steady until it has left it.
        let mut w = SteadyWatch::new(c("iops:100%"), 3, 100_000_000);
        let steady: Vec<bool> = [100.0, 0.0, 100.0, 100.0, 100.0]
            .iter()
            .enumerate()
            .map(|(e, v)| w.observe(e as u64, &row(0, *v)))
            .collect();
        assert_eq!(steady, [false, false, false, false, true]);
    }

    #[test]
    fn the_watch_remembers_when_and_which_rows_were_steady() {
        let mut w = SteadyWatch::new(c("iops:5%"), 3, 100_000_000);
        let values = [100.0, 400.0, 1000.0, 1010.0, 990.0, 1000.0];
        let steady_at: Vec<bool> =
            values.iter().enumerate().map(|(e, v)| w.observe(e as u64 + 2, &row((e as u64 + 1) * 100, *v))).collect();
        // Epochs 4, 5, 6 (values 1000, 1010, 990) are the first steady window.
        assert_eq!(steady_at, [false, false, false, false, true, false]);
        assert_eq!(w.reached_at_ns(), Some(500));
        assert_eq!(w.window_epochs(), Some((4, 6)));
        assert!(w.figures().unwrap().steady());
        // Never full: no window, no figures.
        let mut w = SteadyWatch::new(c("iops:5%"), 3, 100_000_000);
        w.observe(0, &row(100, 1.0));
        assert_eq!((w.window_epochs(), w.figures(), w.reached_at_ns()), (None, None, None));
    }

    #[test]
    fn the_watch_reads_the_metric_it_was_given() {
        let mut r = row(100, 1000.0);
        r.bw_bytes_per_sec = 5.0;
        r.mean_latency_ns = 7;
        for (crit, mean) in [("iops:1%", 1000.0), ("bw:1%", 5.0), ("lat:1", 7.0)] {
            let mut w = SteadyWatch::new(c(crit), 2, 100_000_000);
            w.observe(0, &r);
            w.observe(1, &r);
            assert_eq!(w.figures().unwrap().mean, mean, "{crit}");
        }
    }
}
