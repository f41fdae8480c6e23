//! How every chart is drawn (plotters, SVG): lines and bands on one plot with its title,
//! legend and axes, labels at round values. Draws; computes nothing.

use super::{MARGIN_PX, PlotError, SIZE};
use crate::figures::result::RunResult;
use crate::output::report::units;
use plotters::prelude::*;
use std::ops::Range;
use std::path::Path;

/// A label of a linear axis `width` wide: as many decimals as its ticks need, trailing
/// zeros dropped (0, 0.25, 0.5, 1 on a 250 ms time axis; 0, 20, 40 on a long one). The
/// ticks are 1, 2 or 5 times a power of ten and at least a tenth of the axis apart, so
/// one decimal more than that tenth has keeps every label distinct and exact.
pub(in crate::output::report) fn axis_label(x: f64, width: f64) -> String {
    let decimals = if width > 0.0 && width.is_finite() {
        (1.0 - (width / 10.0).log10().floor()).clamp(0.0, 9.0) as usize
    } else {
        0
    };
    let text = format!("{x:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { text.as_str() };
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// 12500 → "12.5K", 3 → "3", 0.25 → "0.25".
pub(super) fn compact(v: f64) -> String {
    if v.abs() >= 1e3 || v == v.round() { units::iops(v) } else { format!("{v:.2}") }
}

/// The top of a linear axis: a little above the largest value (1 when all are 0).
pub(in crate::output::report) fn nice_top(max: f64) -> f64 {
    if max > 0.0 { max * 1.08 } else { 1.0 }
}

pub(in crate::output::report) struct Line {
    pub(in crate::output::report) label: String,
    pub(in crate::output::report) points: Vec<(f64, f64)>,
    /// (x, low, high): a band from the first to the last (a bar when only one).
    pub(in crate::output::report) ranges: Vec<(f64, f64, f64)>,
}

pub(in crate::output::report) struct Chart<'a> {
    pub(in crate::output::report) title: String,
    /// The title's font size in pixels (`TITLE_PX`, or `fitted_title_px` for a title that
    /// may be long).
    pub(in crate::output::report) title_px: u32,
    pub(in crate::output::report) x_desc: String,
    pub(in crate::output::report) y_desc: String,
    pub(in crate::output::report) x_range: Range<f64>,
    pub(in crate::output::report) y_range: Range<f64>,
    pub(in crate::output::report) x_format: &'a dyn Fn(&f64) -> String,
    pub(in crate::output::report) y_format: &'a dyn Fn(&f64) -> String,
    pub(in crate::output::report) lines: Vec<Line>,
    /// Shaded spans of x, drawn under the lines, each with its legend entry.
    pub(in crate::output::report) bands: Vec<Band>,
}

/// A shaded span of x: the ramp, the steady-state window.
pub(in crate::output::report) struct Band {
    from: f64,
    to: f64,
    label: String,
    color: RGBColor,
}

/// The ramp and the steady-state window of `r`, in seconds from the release.
pub(super) fn bands(r: &RunResult) -> Vec<Band> {
    let mut bands = Vec::new();
    if r.window.ramp_ns > 0 {
        let label = format!("ramp ({}, not counted)", units::seconds_ns(r.window.ramp_ns));
        bands.push(Band { from: 0.0, to: r.window.ramp_ns as f64 / 1e9, label, color: RGBColor(160, 160, 160) });
    }
    if let Some(s) = &r.window.steady_state
        && let Some(w) = &s.window
    {
        let (label, color) = if s.reached {
            (format!("steady window ({})", s.criterion), RGBColor(60, 170, 90))
        } else {
            (format!("last window, NOT steady ({})", s.criterion), RGBColor(210, 60, 60))
        };
        bands.push(Band { from: w.start_ns as f64 / 1e9, to: w.end_ns as f64 / 1e9, label, color });
    }
    bands
}

/// The plotting area's height in pixels, at most: the chart's less its margins, caption and
/// x label area.
pub(super) const PLOT_HEIGHT_PX: f64 = 480.0;

/// `y` raised at the top so that a legend of `entries` rows in the upper left sits above
/// every value of the old range: a legend covers no data.
pub(super) fn with_legend_room(y: Range<f64>, entries: usize) -> Range<f64> {
    if entries == 0 {
        return y;
    }
    // plotters' legend: 12 px text rows, 10 px margins, 5 px from the corner.
    let legend_px = entries as f64 * 16.0 + 40.0;
    let share = (legend_px / PLOT_HEIGHT_PX).min(0.6);
    y.start..y.start + (y.end - y.start) / (1.0 - share)
}

/// Draws `chart` (named `name` in errors) into memory: an SVG document.
pub(in crate::output::report) fn render(name: &str, chart: &Chart) -> Result<String, PlotError> {
    let mut svg = String::new();
    draw_into(&mut svg, Path::new(name), chart)?;
    Ok(svg)
}

/// Writes a chart whole (temporary file and rename), so an interrupted or failed write
/// never leaves half a chart. The write follows a symlink only to where the output guard
/// saw it land, never onto a target or an input (`ledger::output::write_whole`).
pub(in crate::output::report) fn write(path: &Path, svg: &str) -> Result<(), PlotError> {
    crate::storage::ledger::output::write_whole(path, svg.as_bytes())
        .map_err(|e| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() })
}

pub(super) fn draw_into(svg: &mut String, path: &Path, chart: &Chart) -> Result<(), PlotError> {
    let fail = |e: &dyn std::fmt::Display| PlotError::Draw { path: path.to_path_buf(), message: e.to_string() };
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let legend_entries = chart.lines.len() + chart.bands.len();
    let y_range = with_legend_room(chart.y_range.clone(), legend_entries);
    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", chart.title_px))
        .margin(MARGIN_PX)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(chart.x_range.clone(), y_range.clone())
        .map_err(|e| fail(&e))?;
    ctx.configure_mesh()
        .x_desc(chart.x_desc.as_str())
        .y_desc(chart.y_desc.as_str())
        .x_labels(10)
        .y_labels(10)
        .x_label_formatter(chart.x_format)
        .y_label_formatter(chart.y_format)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| fail(&e))?;
    for band in &chart.bands {
        let (lo, hi) = (y_range.start, y_range.end);
        let fill = band.color.mix(0.18).filled();
        let legend = band.color.mix(0.5).filled();
        ctx.draw_series(std::iter::once(Rectangle::new([(band.from, lo), (band.to, hi)], fill)))
            .map_err(|e| fail(&e))?
            .label(band.label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], legend));
    }
    for (i, line) in chart.lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        // The spread of the repetitions as a band under the line (a bar at a lone point).
        if line.ranges.len() >= 2 {
            let upper = line.ranges.iter().map(|&(x, _, hi)| (x, hi));
            let lower = line.ranges.iter().rev().map(|&(x, lo, _)| (x, lo));
            ctx.draw_series(std::iter::once(Polygon::new(upper.chain(lower).collect::<Vec<_>>(), color.mix(0.18))))
                .map_err(|e| fail(&e))?;
        }
        ctx.draw_series(LineSeries::new(line.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        if !line.ranges.is_empty() || line.points.len() < 40 {
            ctx.draw_series(line.points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| fail(&e))?;
        }
        ctx.draw_series(line.ranges.iter().map(|&(x, lo, hi)| PathElement::new(vec![(x, lo), (x, hi)], color)))
            .map_err(|e| fail(&e))?;
    }
    if !chart.lines.is_empty() || !chart.bands.is_empty() {
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
