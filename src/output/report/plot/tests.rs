use super::sweep::{ColumnUnit, column_label, column_unit, size_label};
use super::*;
use crate::figures::sweep::Sweep;

#[test]
fn percentile_axis() {
    assert_eq!(percentile_label(0.0), "0%");
    assert_eq!(percentile_label(1.0), "90%");
    assert_eq!(percentile_label(2.0), "99%");
    assert_eq!(percentile_label(3.0), "99.9%");
    assert_eq!(percentile_label(5.0), "99.999%");
    assert!((percentile_x(99.9) - 3.0).abs() < 1e-9);
}

#[test]
fn a_search_chart_draws_its_bound_and_its_answer() {
    let point = |x: f64, y: f64| crate::figures::sweep::SweepPoint { x, median: y, min: y, max: y, samples: 1 };
    let sweep = Sweep {
        x: "iops".into(),
        y: "latency_ns".into(),
        by: Some("percentile".into()),
        filters: Vec::new(),
        series: vec![crate::figures::sweep::SweepSeries {
            label: "p99".into(),
            points: vec![point(100.0, 1e6), point(500.0, 2e6), point(900.0, 9e7)],
        }],
        rows: 3,
        bound_y: Some(("p99 bound 50.0 ms".into(), 5e7)),
        answer_x: Some(("answer: 500 IOPS within the bound".into(), 500.0)),
        log_y: false,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.svg");
    let chart = crate::storage::ledger::Entry::new("--plot", &path, crate::storage::ledger::Action::Replace);
    crate::storage::ledger::judge_outputs(&[chart], &[], &[]).unwrap();
    sweep_chart(&sweep, &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("p99 bound 50.0 ms") && svg.contains("answer: 500 IOPS within the bound"), "{svg}");
    assert!(svg.contains("latency vs IOPS") && !svg.contains("latency_ns"), "{svg}");
}

/// The legend's box (x0, y0, x1, y1) and every vertex of the data lines drawn outside
/// it, in pixels, of an SVG chart.
fn legend_and_vertices(svg: &str) -> ([f64; 4], Vec<(f64, f64)>) {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let num = |n: roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
    let legend = doc
        .descendants()
        .find(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("none"))
        .map(|n| [num(n, "x"), num(n, "y"), num(n, "x") + num(n, "width"), num(n, "y") + num(n, "height")])
        .expect("a legend");
    let inside = |&(x, y): &(f64, f64)| x >= legend[0] && x <= legend[2] && y >= legend[1] && y <= legend[3];
    let mut vertices = Vec::new();
    for line in doc.descendants().filter(|n| n.has_tag_name("polyline") && n.attribute("stroke-width") == Some("2")) {
        let points: Vec<(f64, f64)> = line
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        // A legend's own sample line lies within it.
        if !points.iter().all(inside) {
            vertices.extend(points);
        }
    }
    (legend, vertices)
}

#[test]
fn legends_cover_no_data_and_measured_x_axes_have_decimal_ticks() {
    let point = |x: f64, y: f64| crate::figures::sweep::SweepPoint { x, median: y, min: y, max: y, samples: 1 };
    // Highest at the left, under the legend's corner: the case that covered data.
    let series = |label: &str, k: f64| crate::figures::sweep::SweepSeries {
        label: label.into(),
        points: vec![point(178_100.0, 3e7 * k), point(1_780_000.0, 2e5 * k)],
    };
    let sweep = Sweep {
        x: "iops".into(),
        y: "latency_ns".into(),
        by: Some("percentile".into()),
        filters: Vec::new(),
        series: vec![series("p50", 0.1), series("p99", 1.0), series("p99.9", 1.05), series("p99.99", 1.1)],
        rows: 2,
        bound_y: Some(("p99 bound 1.00 ms".into(), 1e6)),
        answer_x: None,
        log_y: false,
    };
    let svg = sweep_svg(&sweep).unwrap();
    let (legend, vertices) = legend_and_vertices(&svg);
    assert!(vertices.len() >= 8, "{vertices:?}");
    for (x, y) in &vertices {
        assert!(*y > legend[3], "a data vertex ({x}, {y}) at or above the legend's bottom {legend:?}");
    }
    // IOPS on x: linear, labelled in decimal steps (200K, 400K, ...), never 262144.
    assert!(!svg.contains("log scale") && !svg.contains("262144"), "{svg}");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    assert!(texts.contains(&"200.0K") && texts.contains(&"1.00M"), "{texts:?}");
}

#[test]
fn sweep_axes_are_titled_in_words_with_their_units_and_sizes_as_typed() {
    assert_eq!(column_label("p99_ns"), "p99 latency");
    assert_eq!(column_label("read_p99_ns"), "read p99 latency");
    assert_eq!(column_label("cpu_per_io_ns"), "CPU time per I/O");
    assert_eq!(column_label("bw_bytes_per_sec"), "bandwidth");
    assert_eq!(column_label("read_bw_bytes_per_sec"), "read bandwidth");
    assert_eq!(column_label("queue-depth"), "queue depth");
    assert_eq!(column_label("read_iops"), "read IOPS");
    for c in ["p99_ns", "bw_bytes_per_sec", "block_size", "latency_ns"] {
        assert!(!column_label(c).contains('_'), "{c}");
    }
    assert_eq!(
        (size_label(4096), size_label(65536), size_label(1 << 20), size_label(512)),
        ("4k".into(), "64k".into(), "1m".into(), "512".into())
    );
    assert_eq!(column_unit("block-size"), ColumnUnit::Bytes);
}

#[test]
fn axis_labels_are_distinct_and_exact() {
    let labels = |width: f64, step: f64| -> Vec<String> {
        (0..=((width / step).round() as u32)).map(|i| axis_label(f64::from(i) * step, width)).collect()
    };
    assert_eq!(labels(2.25, 0.2), ["0", "0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4", "1.6", "1.8", "2", "2.2"]);
    assert_eq!(labels(2.0, 0.25), ["0", "0.25", "0.5", "0.75", "1", "1.25", "1.5", "1.75", "2"]);
    assert_eq!(labels(60.0, 10.0), ["0", "10", "20", "30", "40", "50", "60"]);
    assert_eq!(labels(0.05, 0.005)[1], "0.005");
    assert_eq!(axis_label(0.6000000000000001, 2.25), "0.6");
    assert_eq!(axis_label(-0.0001, 2.25), "0");
}

#[test]
fn time_points_are_the_rows_figures() {
    let row: TimeSeriesRow = serde_json::from_value(serde_json::json!({
            "t_ns": 1_500_000_000u64, "interval_ns": 1_000_000_000u64,
            "read": {"ops": 10, "iops": 10.0, "bw_bytes_per_sec": 40960.0, "latency_ns": {"min": 1, "mean": 2, "stddev": 0, "p50": 2, "p90": 3, "p99": 500, "p99_9": 600, "p99_99": 600, "max": 700}},
            "write": {"ops": 0, "iops": 0.0, "bw_bytes_per_sec": 0.0, "latency_ns": {"min": 0, "mean": 0, "stddev": 0, "p50": 0, "p90": 0, "p99": 0, "p99_9": 0, "p99_99": 0, "max": 0}},
            "total": {"ops": 10, "iops": 10.0, "bw_bytes_per_sec": 40960.0, "latency_ns": {"min": 1, "mean": 2, "stddev": 0, "p50": 2, "p90": 3, "p99": 500, "p99_9": 600, "p99_99": 600, "max": 700}}
        }))
        .unwrap();
    let p = time_points(&[row]);
    assert_eq!(
        (p[0].t_s, p[0].read_iops, p[0].read_p99_ns, p[0].total_iops),
        (1.5, Some(10.0), Some(500.0), Some(10.0))
    );
}

#[test]
fn time_lines_leave_out_missing_and_all_zero_series() {
    let at = |t_s, read| TimePoint { t_s, read_iops: Some(read), write_iops: Some(0.0), ..Default::default() };
    let series: [(&str, Field); 3] =
        [("read", |p| p.read_iops), ("write", |p| p.write_iops), ("total", |p| p.total_iops)];
    let lines = time_lines(&[at(1.0, 5.0), at(2.0, 7.0)], &series);
    assert_eq!(lines.iter().map(|l| l.label.as_str()).collect::<Vec<_>>(), ["read"]);
    assert_eq!(lines[0].points, [(1.0, 5.0), (2.0, 7.0)]);
}

/// A search's curve spans decades of latency: its y axis is logarithmic, labelled at each
/// decade in the latency unit, so p50 and p99 do not lie flat on zero under p99.99; a
/// saturation search's answer is named as its saturation point, not as within a bound.
#[test]
fn a_search_chart_has_a_log_latency_axis_and_names_its_answer() {
    let point = |iops: f64, p99_99: u64| {
        serde_json::json!({"phase": "saturate", "offered_iops": null, "offered_percent": null,
            "queue_depth": 8, "threads": 1, "iops": iops, "p50_ns": 20_000, "p90_ns": 50_000,
            "p99_ns": 100_000, "p99_9_ns": p99_99 / 4, "p99_99_ns": p99_99, "passed": true})
    };
    let doc: crate::figures::sweep::document::SearchDocument = serde_json::from_value(serde_json::json!({
        "kind": "search", "iopulse_version": "0", "goal": "saturate", "target_percent": 90.0,
        "curve": [point(1e4, 300_000), point(5e4, 2_000_000), point(9e4, 40_000_000)],
        "answer": {"text": "90 % of max", "found": true, "max_iops": 1e5, "iops": 9e4,
            "queue_depth": 8, "threads": 1},
        "runs": [], "interrupted": false
    }))
    .unwrap();
    let sweep = crate::figures::sweep::document::curve_chart(&doc);
    assert!(sweep.log_y);
    let svg = sweep_svg(&sweep).unwrap();
    assert!(svg.contains("(log scale)"), "{svg}");
    assert!(svg.contains("saturation: 90.0K IOPS at QD 8 × 1 thread") && !svg.contains("within the bound"), "{svg}");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    let decades: Vec<String> = (3..=9).map(|k| units::latency_ns(10u64.pow(k))).collect();
    let shown: Vec<&&str> = texts.iter().filter(|t| decades.iter().any(|d| d == *t)).collect();
    assert!(shown.len() >= 3, "labels at the decades: {texts:?}");
    // No other latency label: a tick between decades is left blank.
    for t in &texts {
        if t.ends_with(" µs") || t.ends_with(" ms") || t.ends_with(" ns") {
            assert!(decades.iter().any(|d| d == t), "a label off the decades: {t}");
        }
    }
}

#[test]
fn sweep_legends_are_in_the_flags_words() {
    use super::sweep::series_label;
    assert_eq!(series_label("block_size", "4096"), "--block-size 4k");
    assert_eq!(series_label("queue_depth", "32"), "--queue-depth 32");
    assert_eq!(series_label("block-size / threads", "4k / 2"), "--block-size 4k --threads 2");
    assert_eq!(series_label("percentile", "p99"), "p99");
    // Columns that are no flag of their name are said in words, never as a made-up flag.
    assert_eq!(series_label("hostname", "node1"), "hostname node1");
    assert_eq!(series_label("duration_s", "10"), "duration s 10");
    assert_eq!(series_label("direct", "true"), "direct true");
}

/// A bandwidth axis is drawn in the unit it is shown in: ticks at round MiB/s (50, 100,
/// ...), not at round bytes per second labelled 47.7, 95.4, ... 476.8 MiB/s.
#[test]
fn bandwidth_ticks_fall_at_round_values_of_the_unit_shown() {
    let point = |x: f64, y: f64| crate::figures::sweep::SweepPoint { x, median: y, min: y, max: y, samples: 1 };
    let sweep = Sweep {
        x: "queue_depth".into(),
        y: "bw_bytes_per_sec".into(),
        by: None,
        filters: Vec::new(),
        series: vec![crate::figures::sweep::SweepSeries {
            label: "bandwidth".into(),
            points: vec![point(1.0, 1.2e8), point(2.0, 3.1e8), point(4.0, 5e8)],
        }],
        rows: 3,
        bound_y: None,
        answer_x: None,
        log_y: false,
    };
    let svg = sweep_svg(&sweep).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let ticks: Vec<f64> = doc
        .descendants()
        .filter_map(|n| n.text())
        .filter_map(|t| t.trim().strip_suffix(" MiB/s"))
        .map(|n| n.parse::<f64>().unwrap())
        .collect();
    assert!(ticks.len() >= 4, "{svg}");
    for t in &ticks {
        assert!((t / 10.0 - (t / 10.0).round()).abs() < 1e-9, "a tick at {t} MiB/s: {ticks:?}");
    }
}
