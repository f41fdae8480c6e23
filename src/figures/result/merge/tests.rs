use super::inputs::flatten;
use super::*;
use crate::io::stats::{LatencySummary, OpStats, decode_histogram, new_latency_histogram};
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn merged_op_is_the_added_histogram_inside_min_and_max() {
    let mut a = OpStats::new();
    let mut b = OpStats::new();
    for v in 0..1000u64 {
        a.record(4096, 1_000 + v);
    }
    for _ in 0..10 {
        b.record(4096, 1_234_567);
    }
    let (sa, sb) = (a.summarize(1_000_000_000), b.summarize(500_000_000));
    let mut hist = a.latency.clone();
    hist.add(&b.latency).unwrap();
    let m = merge_op("read", &[("a", &sa), ("b", &sb)], &hist).unwrap();
    assert_eq!(m.ops, 1010);
    assert_eq!(m.iops, sa.iops + sb.iops);
    assert_eq!((m.latency_ns.min, m.latency_ns.max), (1_000, 1_234_567));
    let mut all = a.clone();
    all.merge(&b);
    // The mean comes from the results' rounded means: within 1 ns of the exact one.
    let exact = all.latency_summary();
    assert!(m.latency_ns.mean.abs_diff(exact.mean) <= 1);
    assert_eq!(LatencySummary { mean: exact.mean, ..m.latency_ns }, exact, "merge equals the union's summary");
    assert!(m.latency_ns.p99_99 <= m.latency_ns.max && m.latency_ns.p50 >= m.latency_ns.min);
}

#[test]
fn window_skew_and_the_overlap_warning() {
    let skew = |start_ns, end_ns, overlap_ns| WindowSkew { start_ns, end_ns, overlap_ns, results: 2 };
    assert_eq!(overlap_warning(Some(&skew(1_000, 2_000, 999_000_000)), 1_000_000_000), None);
    let late = overlap_warning(Some(&skew(600_000_000, 600_000_000, 400_000_000)), 1_000_000_000).unwrap();
    assert!(late.contains("40%") && late.contains("started 600 ms apart"), "{late}");
    let early_end = overlap_warning(Some(&skew(1_000, 700_000_000, 300_000_000)), 1_000_000_000).unwrap();
    assert!(early_end.contains("ended 700 ms apart"), "{early_end}");
    assert_eq!(overlap_warning(None, 1), None);
    assert_eq!(min_max([5u64, 2, 9].into_iter()), (2, 9));
}

#[test]
fn a_sum_of_more_samples_than_a_histogram_can_be_written_with_is_refused() {
    let mut one = new_latency_histogram();
    one.record_n(1_000, i64::MAX as u64).unwrap();
    let mut sum = new_latency_histogram();
    add_within(&mut sum, &one, "a.json", "histograms.read").unwrap();
    // Still encodable: exactly i64::MAX samples.
    assert!(decode_histogram(&encode_histogram(&sum)).is_ok());
    let e = add_within(&mut sum, &one, "b.json", "histograms.read").unwrap_err().to_string();
    assert!(e.starts_with("b.json: its histograms.read (9223372036854775807)"), "{e}");
    assert_eq!(sum.len(), i64::MAX as u64, "nothing was added");
}

#[test]
fn flatten_names_leaves() {
    let mut out = BTreeMap::new();
    let v: Value = serde_json::from_str(r#"{"a": {"b": 1}, "t": ["x"], "e": [], "n": null}"#).unwrap();
    flatten("spec", &v, &mut out);
    assert_eq!(out.get("spec.a.b").unwrap(), "1");
    assert_eq!(out.get("spec.t.0").unwrap(), "\"x\"");
    assert_eq!(out.get("spec.e").unwrap(), "[]");
    assert_eq!(out.get("spec.n").unwrap(), "null");
}
