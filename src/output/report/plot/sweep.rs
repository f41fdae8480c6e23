//! A sweep's chart: a figure against the swept flag, a line per other combination, the
//! axis in the flag's unit. Draws; computes nothing.

use super::draw::{Chart, Line, nice_top, render, write};
use super::draw::{axis_label, compact};
use super::{PlotError, TITLE_PX};
use crate::figures::sweep::Sweep;
use crate::output::report::units;
use std::path::Path;

/// Draws a sweep into `path`: a line through the medians of each series, the range of
/// the repetitions as a bar. The x axis is logarithmic (base 2) when x spans 8× or more.
pub fn sweep_chart(sweep: &Sweep, path: &Path) -> Result<(), PlotError> {
    write(path, &sweep_svg(sweep)?)
}

/// The chart `sweep_chart` draws, as an SVG document in memory.
pub fn sweep_svg(sweep: &Sweep) -> Result<String, PlotError> {
    let xs = || sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
    let (x_min, x_max) = (xs().fold(f64::MAX, f64::min), xs().fold(f64::MIN, f64::max));
    // A log axis only where its ticks, powers of two, are values the sweep can take (sizes,
    // queue depths); measured figures (IOPS of a search) stay linear with decimal ticks.
    let powers_of_two = xs().all(|x| x >= 1.0 && x.fract() == 0.0 && (x as u64).is_power_of_two());
    let log_x = x_min > 0.0 && x_max / x_min >= 8.0 && powers_of_two;
    let tx = |x: f64| if log_x { x.log2() } else { x };
    // A log y axis is drawn in decades: each value at its log10 (1 at the least).
    let log_y = sweep.log_y;
    // A bandwidth axis is drawn in the binary unit its largest value is shown in (MiB/s,
    // GiB/s), so that its ticks fall at round values of that unit, not at round bytes per
    // second (500 MB/s ticks were labelled 476.8 MiB/s).
    let y_unit = column_unit(&sweep.y);
    let largest = sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.max)).fold(0.0, f64::max);
    let (per_unit, unit_name) = match y_unit {
        ColumnUnit::BytesPerSec if !log_y => units::binary_rate_unit(largest),
        _ => (1.0, ""),
    };
    let ty = |y: f64| if log_y { y.max(1.0).log10() } else { y / per_unit };
    let lines: Vec<Line> = sweep
        .series
        .iter()
        .map(|s| Line {
            label: match &sweep.by {
                Some(by) => series_label(by, &s.label),
                None => column_label(&sweep.y),
            },
            points: s.points.iter().map(|p| (tx(p.x), ty(p.median))).collect(),
            ranges: s.points.iter().filter(|p| p.samples > 1).map(|p| (tx(p.x), ty(p.min), ty(p.max))).collect(),
        })
        .collect();
    let ys = || {
        sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.max)).chain(sweep.bound_y.as_ref().map(|(_, y)| *y))
    };
    let y_max = ys().fold(0.0, f64::max);
    // Linear: from 0; in decades: from the decade below the least value to the one above
    // the greatest.
    let y_range = if log_y {
        let least = sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.min)).fold(f64::MAX, f64::min);
        let lo = ty(least.min(y_max)).floor();
        lo..ty(y_max).ceil().max(lo + 1.0)
    } else {
        0.0..nice_top(ty(y_max))
    };
    let y_span = y_range.end - y_range.start;
    let (lo, hi) = (tx(x_min), tx(x_max));
    let pad = if hi > lo { (hi - lo) * 0.04 } else { 1.0 };
    let reps = sweep.series.iter().flat_map(|s| s.points.iter().map(|p| p.samples)).max().unwrap_or(1);
    let x_is_size = column_unit(&sweep.x) == ColumnUnit::Bytes;
    let (x_label, y_label) = (column_label(&sweep.x), column_label(&sweep.y));
    let mut lines = lines;
    if let Some((label, y)) = &sweep.bound_y {
        let y = ty(*y);
        lines.push(Line { label: label.clone(), points: vec![(lo - pad, y), (hi + pad, y)], ranges: Vec::new() });
    }
    if let Some((label, x)) = &sweep.answer_x {
        let x = tx(*x);
        let (bottom, top) = (y_range.start, y_range.end);
        lines.push(Line { label: label.clone(), points: vec![(x, bottom), (x, top)], ranges: Vec::new() });
    }
    render(
        "sweep chart",
        &Chart {
            title: format!(
                "{} vs {}{}{} · {} runs{}",
                y_label,
                column_label(&sweep.x),
                sweep.by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default(),
                if sweep.filters.is_empty() { String::new() } else { format!(" ({})", sweep.filters.join(", ")) },
                sweep.rows,
                if reps > 1 { " (line: median, band: min-max of the repetitions)" } else { "" }
            ),
            title_px: TITLE_PX,
            x_desc: if log_x { format!("{x_label} (log scale)") } else { x_label.clone() },
            y_desc: if log_y { format!("{y_label} (log scale)") } else { y_label.clone() },
            x_range: (lo - pad)..(hi + pad),
            y_range,
            x_format: &|x| {
                // A log axis is labelled at powers of two only.
                if log_x && (x - x.round()).abs() > 1e-6 {
                    return String::new();
                }
                let v = if log_x { 2f64.powf(x.round()) } else { *x };
                if x_is_size && v >= 1.0 && (v - v.round()).abs() < 1e-6 {
                    size_label(v.round() as u64)
                } else if v.abs() >= 1e3 {
                    compact(v)
                } else if (v - v.round()).abs() < 1e-6 {
                    format!("{}", v.round())
                } else {
                    format!("{v:.2}")
                }
            },
            y_format: &|y| {
                // A log axis is labelled at its decades only, in the column's unit.
                if log_y && (y - y.round()).abs() > 1e-6 {
                    return String::new();
                }
                let y = if log_y { 10f64.powf(y.round()) } else { *y };
                match y_unit {
                    ColumnUnit::Ns => units::latency_ns(y.round().max(0.0) as u64),
                    ColumnUnit::BytesPerSec if !unit_name.is_empty() => {
                        format!("{} {unit_name}", axis_label(y, y_span))
                    }
                    ColumnUnit::BytesPerSec => units::bandwidth_binary(y),
                    _ => compact(y),
                }
            },
            lines,
            bands: Vec::new(),
        },
    )
}

/// What a sweep column counts, by its name (`read_p99_ns`, `bw_bytes_per_sec`,
/// `block_size`, `queue-depth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ColumnUnit {
    Ns,
    BytesPerSec,
    Bytes,
    Plain,
}

pub(super) fn column_unit(column: &str) -> ColumnUnit {
    let c = column.replace('-', "_");
    if c.ends_with("_ns") {
        ColumnUnit::Ns
    } else if c.ends_with("bytes_per_sec") {
        ColumnUnit::BytesPerSec
    } else if c.ends_with("block_size") || c.ends_with("file_size") || c.ends_with("_bytes") {
        ColumnUnit::Bytes
    } else {
        ColumnUnit::Plain
    }
}

/// A column as an axis title, in words with its unit: `read_p99_ns` → "read p99 latency",
/// `bw_bytes_per_sec` → "bandwidth (per second)", `iops` → "IOPS", `queue-depth` →
/// "queue depth" (never a field name with `_ns` or `_bytes_per_sec`).
pub(super) fn column_label(column: &str) -> String {
    let c = column.replace('-', "_");
    let words = |s: &str| s.replace('_', " ");
    match column_unit(&c) {
        ColumnUnit::Ns => {
            let stem = c.trim_end_matches("_ns");
            match stem {
                "cpu_per_io" => "CPU time per I/O".into(),
                "latency" => "latency".into(),
                s => format!("{} latency", words(s)),
            }
        }
        ColumnUnit::BytesPerSec => {
            let stem =
                c.trim_end_matches("bytes_per_sec").trim_end_matches('_').trim_end_matches("bw").trim_end_matches('_');
            if stem.is_empty() { "bandwidth".into() } else { format!("{} bandwidth", words(stem)) }
        }
        _ => {
            let text = words(&c);
            text.replace("iops", "IOPS")
        }
    }
}

/// 4096 → "4k", 65536 → "64k", 1048576 → "1m", 512 → "512" (as sizes are typed).
/// The columns of a sweep's table (`output/report/csv.rs`) that record the flag of their name,
/// value as given: the others (`duration_s`, `direct`, `hostname`) are not flags as such.
const FLAG_COLUMNS: [&str; 8] =
    ["block_size", "queue_depth", "threads", "read_percent", "distribution", "file_distribution", "seed", "cache"];

/// A series' legend in the flag's words: `--block-size 4k` for a sweep table's column
/// `block_size` at 4096, `--block-size 4k --threads 2` for a sweep's two other axes
/// (`block-size / threads` at `4k / 2`); a search's percentiles by their names alone.
pub(super) fn series_label(by: &str, value: &str) -> String {
    if by == "percentile" {
        return value.to_string();
    }
    let (columns, values): (Vec<&str>, Vec<&str>) = (by.split(" / ").collect(), value.split(" / ").collect());
    if columns.len() != values.len() {
        return format!("{by} {value}");
    }
    let each = columns.iter().zip(&values).map(|(column, value)| {
        let column = column.trim().trim_start_matches("--");
        let shown = match (column_unit(column), value.trim().parse::<u64>()) {
            (ColumnUnit::Bytes, Ok(bytes)) => size_label(bytes),
            _ => value.trim().to_string(),
        };
        // A sweep's axis is a flag as given (`block-size`); a table's column is one only
        // where it records the flag of its name, else it is said in words.
        if column.contains('-') || FLAG_COLUMNS.contains(&column) {
            format!("--{} {shown}", column.replace('_', "-"))
        } else {
            format!("{} {shown}", column_label(column))
        }
    });
    each.collect::<Vec<_>>().join(" ")
}

pub(super) fn size_label(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    if bytes >= 1024 { format!("{:.1}k", bytes as f64 / 1024.0) } else { bytes.to_string() }
}
