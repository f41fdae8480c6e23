//! Counters and latency histograms, per worker and op type, and the figures
//! computed from them (IOPS, bandwidth, percentiles): every number of a run
//! lives in this folder. Recording and the one summary of a histogram
//! (`LatencySummary::from_histogram`) are here; `interval` cuts the run into
//! intervals (time series), `io_errors` counts failed I/Os, `coverage` tracks the
//! blocks touched, and `merge` combines whole results (hosts, runs).
//!
//! Latency is recorded per I/O in nanoseconds into an HDR histogram (1 ns to
//! 1 h, 3 significant digits); samples above an hour are clamped and counted.
//! Exact min, max and sum are kept beside it so that the reported min, max and
//! mean are exact and percentiles can be held inside [min, max]. Histograms
//! are merged, never averaged. This folder computes; it never formats text.

pub mod coverage;
pub mod depth_counts;
pub mod distribution;
mod histogram_blob;
pub mod interval;
pub mod io_errors;
pub mod live;
pub mod steady_state;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Highest latency the histograms hold: one hour.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits of every latency histogram.
const LATENCY_DIGITS: u8 = 3;

pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, LATENCY_DIGITS).expect("valid histogram bounds")
}

/// Counters and latency of one op type (read or write) in one worker.
#[derive(Clone, Debug)]
pub struct OpStats {
    pub ops: u64,
    pub bytes: u64,
    pub lat_sum_ns: u128,
    pub lat_min_ns: u64,
    pub lat_max_ns: u64,
    /// Samples above `MAX_LATENCY_NS`, recorded as `MAX_LATENCY_NS`.
    pub clamped: u64,
    pub latency: Histogram<u64>,
}

impl Default for OpStats {
    fn default() -> Self {
        Self::new()
    }
}

impl OpStats {
    pub fn new() -> Self {
        Self::with_histogram(new_latency_histogram())
    }

    /// For an op kind the run never issues (flushes of a run without `--fsync-every` or
    /// `--fdatasync-every`): empty figures whose histogram takes a few bytes, not the
    /// full range's. Never recorded into; merging it (empty) into any `OpStats` is exact.
    pub fn unused() -> Self {
        Self::with_histogram(Histogram::new_with_bounds(1, 2, 0).expect("valid histogram bounds"))
    }

    fn with_histogram(latency: Histogram<u64>) -> Self {
        Self { ops: 0, bytes: 0, lat_sum_ns: 0, lat_min_ns: u64::MAX, lat_max_ns: 0, clamped: 0, latency }
    }

    /// Records one completed I/O. No allocation, no lock.
    #[inline(always)]
    pub fn record(&mut self, bytes: u64, lat_ns: u64) {
        self.ops += 1;
        self.bytes += bytes;
        self.lat_sum_ns += u128::from(lat_ns);
        self.lat_min_ns = self.lat_min_ns.min(lat_ns);
        self.lat_max_ns = self.lat_max_ns.max(lat_ns);
        if lat_ns > MAX_LATENCY_NS {
            self.clamped += 1;
        }
        self.latency.saturating_record(lat_ns);
    }

    /// Back to no I/O, in place (the histogram keeps its buckets: no allocation). The
    /// ramp's end (`--ramp`) calls it once per worker.
    pub fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.lat_sum_ns = 0;
        self.lat_min_ns = u64::MAX;
        self.lat_max_ns = 0;
        self.clamped = 0;
        self.latency.reset();
    }

    /// Adds another worker's figures: exact, since histograms add bucket by bucket.
    pub fn merge(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.lat_sum_ns += other.lat_sum_ns;
        self.lat_min_ns = self.lat_min_ns.min(other.lat_min_ns);
        self.lat_max_ns = self.lat_max_ns.max(other.lat_max_ns);
        self.clamped += other.clamped;
        self.latency.add(&other.latency).expect("histograms of equal bounds add");
    }

    /// The headline figures over a window of `window_ns`.
    pub fn summarize(&self, window_ns: u64) -> OpSummary {
        let seconds = window_ns as f64 / 1e9;
        let per_second = |x: u64| {
            if seconds > 0.0 { x as f64 / seconds } else { 0.0 }
        };
        OpSummary {
            ops: self.ops,
            bytes: self.bytes,
            iops: per_second(self.ops),
            bw_bytes_per_sec: per_second(self.bytes),
            latency_ns: self.latency_summary(),
            clamped_samples: self.clamped,
        }
    }

    pub fn latency_summary(&self) -> LatencySummary {
        if self.ops == 0 {
            return LatencySummary::default();
        }
        let mean = (self.lat_sum_ns / u128::from(self.ops)) as u64;
        LatencySummary::from_histogram(&self.latency, self.lat_min_ns, self.lat_max_ns, mean)
    }

    /// Mean number of this op type's I/Os in flight over `window_ns` (Little's law:
    /// IOPS × mean latency = time spent in I/O / window).
    pub fn in_flight(&self, window_ns: u64) -> f64 {
        achieved_queue_depth(self.lat_sum_ns, window_ns)
    }
}

/// Adds `other` into `into` bucket by bucket: exact for histograms of
/// `new_latency_histogram`'s bounds; a foreign histogram of other bounds (a result read
/// back) is added value by value. Here, not at its callers, so that the layers above, built
/// unoptimised, add a run's histograms with the I/O crate's optimised code.
pub fn add_histogram(into: &mut Histogram<u64>, other: &Histogram<u64>) {
    if into.add(other).is_err() {
        for v in other.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// The queue depth a run really achieved, by Little's law: the mean number of I/Os in
/// flight is IOPS × mean latency, i.e. the summed latency of the I/Os divided by the window.
pub fn achieved_queue_depth(lat_sum_ns: u128, window_ns: u64) -> f64 {
    if window_ns == 0 { 0.0 } else { lat_sum_ns as f64 / window_ns as f64 }
}

/// The latency at quantile `q` (0..=1) of `hist`, held inside the exact `[min, max]`:
/// a bucket's edge can otherwise lie beyond the true extremes.
pub fn clamped_quantile(hist: &Histogram<u64>, q: f64, min: u64, max: u64) -> u64 {
    if hist.is_empty() {
        return 0;
    }
    hist.value_at_quantile(q).clamp(min, max.max(min))
}

/// The percentile curve of a histogram for plotting: (percentile 0-100, latency ns) at
/// evenly spaced steps of log10(1 / (1 - q)) up to the last sample, then the max.
/// Every point lies inside `[min, max]`.
pub fn percentile_curve(hist: &Histogram<u64>, min: u64, max: u64) -> Vec<(f64, u64)> {
    if hist.is_empty() {
        return Vec::new();
    }
    // 1 / (1 - q) beyond the sample count tells nothing more: the tail is the max.
    let nines = (hist.len() as f64).log10().clamp(1.0, 7.0);
    const STEPS_PER_NINE: u32 = 40;
    let steps = (nines * f64::from(STEPS_PER_NINE)).ceil() as u32;
    let mut curve: Vec<(f64, u64)> = (0..=steps)
        .map(|i| {
            let x = f64::from(i) / f64::from(STEPS_PER_NINE);
            let q = 1.0 - 10f64.powf(-x);
            (q * 100.0, clamped_quantile(hist, q, min, max))
        })
        .collect();
    curve.push((100.0, max.max(min)));
    curve
}

impl LatencySummary {
    /// No latency (no I/O).
    pub const ZERO: Self = Self { min: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0, p99_9: 0, p99_99: 0, max: 0 };

    /// Percentiles and standard deviation from `hist`, with the exact min, max and mean
    /// kept beside it. Percentiles are held inside [min, max].
    pub fn from_histogram(hist: &Histogram<u64>, min: u64, max: u64, mean: u64) -> LatencySummary {
        if hist.is_empty() {
            return LatencySummary::default();
        }
        let at = |q: f64| clamped_quantile(hist, q, min, max);
        LatencySummary {
            min,
            mean,
            stddev: hist.stdev().round() as u64,
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            p99_9: at(0.999),
            p99_99: at(0.9999),
            max,
        }
    }
}

/// Latency figures of one op type, all in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub min: u64,
    pub mean: u64,
    pub stddev: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
}

/// Headline figures of one op type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_per_sec: f64,
    pub latency_ns: LatencySummary,
    pub clamped_samples: u64,
}

/// CPU time spent, in nanoseconds, and getrusage's other counters over the same span:
/// context switches (voluntary and not), major and minor page faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Absent in results of older versions.
    #[serde(default)]
    pub context_switches: u64,
    #[serde(default)]
    pub major_faults: u64,
    #[serde(default)]
    pub minor_faults: u64,
}

impl CpuTimes {
    pub fn total_ns(&self) -> u64 {
        self.user_ns + self.sys_ns
    }

    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            context_switches: self.context_switches.saturating_sub(earlier.context_switches),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
        }
    }

    pub fn add(&mut self, other: &CpuTimes) {
        self.user_ns += other.user_ns;
        self.sys_ns += other.sys_ns;
        self.context_switches += other.context_switches;
        self.major_faults += other.major_faults;
        self.minor_faults += other.minor_faults;
    }
}

/// Error from decoding a serialized histogram.
#[derive(Debug, thiserror::Error)]
pub enum HistogramCodecError {
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("histogram cannot be decoded: {0}")]
    Decode(String),
}

/// Serializes a histogram as HdrHistogram V2 + DEFLATE, base64 (standard alphabet):
/// the format other HdrHistogram implementations read.
pub fn encode_histogram(hist: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(hist, &mut bytes).expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Reads back what `encode_histogram` wrote. The blob comes from a file: its header is
/// checked, and its stream inflated only as far as the header allows, before anything is
/// allocated for its counters (`histogram_blob`).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, HistogramCodecError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let plain = histogram_blob::checked_plain_v2(&bytes)?;
    drop(bytes);
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(plain))
        .map_err(|e| HistogramCodecError::Decode(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_forgets_everything_recorded() {
        let mut a = OpStats::new();
        a.record(4096, 5_000_000);
        a.record(4096, 10);
        a.reset();
        a.record(512, 300);
        assert_eq!((a.ops, a.bytes, a.lat_sum_ns, a.lat_min_ns, a.lat_max_ns), (1, 512, 300, 300, 300));
        assert_eq!(a.latency.len(), 1);
        assert!(a.latency.max() < 400);
    }

    #[test]
    fn record_and_merge_are_exact() {
        let mut a = OpStats::new();
        let mut b = OpStats::new();
        for v in 1..=1000u64 {
            a.record(4096, v * 1000);
        }
        b.record(4096, 7);
        b.record(4096, MAX_LATENCY_NS * 2);
        a.merge(&b);
        assert_eq!(a.ops, 1002);
        assert_eq!(a.bytes, 1002 * 4096);
        assert_eq!(a.lat_min_ns, 7);
        assert_eq!(a.lat_max_ns, MAX_LATENCY_NS * 2);
        assert_eq!(a.clamped, 1);
        assert_eq!(a.latency.len(), 1002);
    }

    #[test]
    fn percentiles_stay_inside_min_and_max() {
        let mut s = OpStats::new();
        for _ in 0..100 {
            s.record(1, 1_234_567);
        }
        let l = s.latency_summary();
        assert_eq!((l.min, l.max, l.mean), (1_234_567, 1_234_567, 1_234_567));
        assert_eq!((l.p50, l.p99_99), (1_234_567, 1_234_567));
    }

    #[test]
    fn percentiles_and_curve_stay_inside_min_and_max() {
        // 3 significant digits: 1_234_567 sits in a bucket whose edges are not 1_234_567.
        let mut s = OpStats::new();
        for v in [1_234_567u64, 1_234_568, 9_876_543] {
            s.record(1, v);
        }
        let l = s.latency_summary();
        for p in [l.p50, l.p90, l.p99, l.p99_9, l.p99_99] {
            assert!((l.min..=l.max).contains(&p), "{p} outside [{}, {}]", l.min, l.max);
        }
        let curve = percentile_curve(&s.latency, l.min, l.max);
        assert!(curve.iter().all(|&(_, v)| (l.min..=l.max).contains(&v)));
        assert!(curve.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1), "monotone");
        assert_eq!(curve.last(), Some(&(100.0, l.max)));
        assert!(percentile_curve(&OpStats::new().latency, 0, 0).is_empty());
    }

    #[test]
    fn achieved_queue_depth_is_littles_law() {
        let mut s = OpStats::new();
        // 1000 I/Os of 2 ms each in a 1 s window: 1000 IOPS x 2 ms = 2 in flight.
        for _ in 0..1000 {
            s.record(4096, 2_000_000);
        }
        assert!((s.in_flight(1_000_000_000) - 2.0).abs() < 1e-9);
        assert_eq!(achieved_queue_depth(5, 0), 0.0);
    }

    #[test]
    fn summary_rates() {
        let mut s = OpStats::new();
        for _ in 0..500 {
            s.record(4096, 10);
        }
        let sum = s.summarize(500_000_000);
        assert_eq!(sum.iops, 1000.0);
        assert_eq!(sum.bw_bytes_per_sec, 4096.0 * 1000.0);
    }

    #[test]
    fn histogram_round_trips() {
        let mut s = OpStats::new();
        for v in [5u64, 50, 500, 5_000, 5_000_000, 5_000_000_000] {
            s.record(1, v);
        }
        let back = decode_histogram(&encode_histogram(&s.latency)).unwrap();
        assert_eq!(back, s.latency);
        assert!(decode_histogram("not base64!").is_err());
    }
}
