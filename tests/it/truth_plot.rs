//! Charts label their time axis with the times where the ticks are: with
//! `--interval 250ms` the labels used to be whole seconds rounded from fractional
//! ticks (0, 0, 1, 1, 2, ...). Checked on the label text of the SVG a real run
//! writes: distinct, ascending numbers in proportion to where they stand.

use crate::common::*;
use std::path::Path;

/// The x-axis tick labels of an SVG chart: the texts that share one baseline (the row
/// under the plot), with their x positions, left to right.
fn x_axis_labels(svg: &Path) -> Vec<(f64, String)> {
    let text = std::fs::read_to_string(svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not XML: {e}", svg.display()));
    let mut rows: Vec<(String, Vec<(f64, String)>)> = Vec::new();
    for node in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let (Some(x), Some(y)) = (node.attribute("x"), node.attribute("y")) else { continue };
        let label = node.text().unwrap_or("").trim().to_string();
        let x: f64 = x.parse().unwrap();
        match rows.iter_mut().find(|(row_y, _)| row_y == y) {
            Some((_, row)) => row.push((x, label)),
            None => rows.push((y.to_string(), vec![(x, label)])),
        }
    }
    let (_, mut row) = rows.into_iter().max_by_key(|(_, row)| row.len()).expect("the chart has texts");
    row.sort_by(|a, b| a.0.total_cmp(&b.0));
    row
}

#[test]
fn quarter_second_intervals_get_distinct_exact_time_labels() {
    let dir = temp_dir();
    let f = path_str(&dir.path().join("t.dat"));
    let plots = dir.path().join("plots");
    run_ok(&[
        &f,
        "--file-size",
        "1M",
        "--engine",
        "null",
        "--duration",
        "1",
        "--interval",
        "250ms",
        "--plot",
        &path_str(&plots),
        "--quiet",
    ]);
    for chart in ["iops-over-time.svg", "p99-over-time.svg"] {
        let labels = x_axis_labels(&plots.join(chart));
        let shown: Vec<&str> = labels.iter().map(|(_, l)| l.as_str()).collect();
        assert!(labels.len() >= 3, "{chart}: tick labels {shown:?}");
        let values: Vec<f64> = labels
            .iter()
            .map(|(_, l)| l.parse().unwrap_or_else(|_| panic!("{chart}: label {l:?} is not a number: {shown:?}")))
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{chart}: distinct and ascending: {shown:?}");
        assert_eq!(values[0], 0.0, "{chart}: {shown:?}");
        assert!(values.iter().any(|v| v.fract() != 0.0), "{chart}: a 1 s axis has fractional ticks: {shown:?}");
        // Each label is the time where it stands: value linear in the x position.
        let (x0, v0) = (labels[0].0, values[0]);
        let (x1, v1) = (labels[labels.len() - 1].0, values[values.len() - 1]);
        for ((x, label), v) in labels.iter().zip(&values) {
            let expected = v0 + (x - x0) * (v1 - v0) / (x1 - x0);
            let tolerance = (v1 - v0) / 100.0;
            assert!(
                (v - expected).abs() <= tolerance,
                "{chart}: label {label} stands where {expected:.3} is: {shown:?}"
            );
        }
    }
}
