//! How the full-screen view looks: a header (what runs, the tabs and the keys), then the
//! tab: the overview (the run in focus: its progress, headline figures and sparklines; the
//! devices' own counters and the CPU beside them; every run in a table), each worker's
//! part, or the lines said on stderr. It formats what the state holds; it computes nothing
//! but ratios of figures the run measured.

use super::state::{HISTORY, RunView, State, Tab};
use crate::base::units::display as units;
use crate::io::stats::interval::IntervalFigures;
use crate::io::stats::live::LiveFrame;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Gauge, Paragraph, Row, Sparkline, Table, Tabs, Wrap};

/// The smallest screen the view is drawn on (columns, rows); below it, a line says so.
pub(super) const MIN_SIZE: (u16, u16) = (72, 20);

pub(super) fn draw(f: &mut Frame<'_>, s: &State) {
    let area = f.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let text = format!(
            "the terminal is {}×{}: the live view needs {}×{} (q stops the run)",
            area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
        );
        f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    let [header, body] = Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(area);
    draw_header(f, s, header);
    match s.tab {
        Tab::Overview => draw_overview(f, s, body),
        Tab::Workers => draw_workers(f, s, body),
        Tab::Messages => draw_messages(f, s, body),
    }
    if s.help {
        draw_help(f, area);
    }
}

fn draw_header(f: &mut Frame<'_>, s: &State, area: Rect) {
    let [top, tabs] = Layout::vertical([Constraint::Length(2), Constraint::Length(1)]).areas(area);
    let state = if s.stopping {
        Span::styled(" stopping (as on SIGINT) ", Style::default().fg(Color::Black).bg(Color::Yellow))
    } else if s.paused {
        Span::styled(" display paused (the run goes on) ", Style::default().fg(Color::Black).bg(Color::Cyan))
    } else {
        Span::raw("")
    };
    let elapsed = units::seconds_ns(s.started.elapsed().as_nanos() as u64);
    let first = Line::from(vec![
        // The clock first: the command line after it reads as what runs, not as a command
        // to type.
        Span::raw(format!("{elapsed} · ")),
        Span::styled("iopulse ", Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(s.title.clone()),
    ]);
    let keys = Line::from(vec![
        state,
        Span::styled(" q stop · p pause · 1 2 3 or Tab: views · ↑↓ run · ? help", Style::default().fg(Color::DarkGray)),
    ]);
    f.render_widget(Paragraph::new(vec![first, keys]), top);
    let selected = Tab::ALL.iter().position(|t| *t == s.tab).unwrap_or(0);
    f.render_widget(Tabs::new(Tab::ALL.iter().map(|t| t.title())).select(selected), tabs);
}

fn draw_overview(f: &mut Frame<'_>, s: &State, area: Rect) {
    let runs_rows = (s.runs.len() as u16 + 3).clamp(4, 10);
    let [focus, machine, runs] =
        Layout::vertical([Constraint::Min(12), Constraint::Length(5), Constraint::Length(runs_rows)]).areas(area);
    match s.focused() {
        Some((_, run)) => draw_focus(f, run, focus),
        None => f.render_widget(
            Paragraph::new("waiting for the first run's window to open…").block(Block::bordered()),
            focus,
        ),
    }
    draw_machine(f, s, machine);
    draw_runs(f, s, runs);
}

/// The run in focus: its progress, its figures of the last interval, and sparklines.
fn draw_focus(f: &mut Frame<'_>, run: &RunView, area: Rect) {
    let title = format!(
        " {} · {} QD {} × {} worker{} · {} ",
        run.run.label.as_deref().unwrap_or("the run"),
        run.run.engine,
        run.run.depth,
        run.run.workers,
        if run.run.workers == 1 { "" } else { "s" },
        run.run.targets.join(", ")
    );
    let block = Block::bordered().title(title);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [gauge, figures, sparks] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(5), Constraint::Min(4)]).areas(inner);
    f.render_widget(progress(run), gauge);
    let Some(last) = run.last() else {
        f.render_widget(Paragraph::new("no interval has ended yet"), figures);
        return;
    };
    f.render_widget(headline(last), figures);
    let [iops, bw] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(sparks);
    let width = iops.width.saturating_sub(2) as usize;
    let recent: Vec<&LiveFrame> = run.frames.iter().rev().take(width.min(HISTORY)).rev().collect();
    let iops_data: Vec<u64> = recent.iter().map(|fr| fr.row.total.iops as u64).collect();
    let bw_data: Vec<u64> = recent.iter().map(|fr| fr.row.total.bw_bytes_per_sec as u64).collect();
    let peak = |d: &[u64]| d.iter().copied().max().unwrap_or(0);
    f.render_widget(
        Sparkline::default()
            .block(Block::new().borders(Borders::TOP).title(format!(
                "IOPS, last {} intervals (peak {})",
                recent.len(),
                units::iops(peak(&iops_data) as f64)
            )))
            .data(&iops_data)
            .style(Style::default().fg(Color::Green)),
        iops,
    );
    f.render_widget(
        Sparkline::default()
            .block(
                Block::new()
                    .borders(Borders::TOP)
                    .title(format!("bandwidth (peak {})", units::bandwidth_binary(peak(&bw_data) as f64))),
            )
            .data(&bw_data)
            .style(Style::default().fg(Color::Blue)),
        bw,
    );
}

/// Elapsed over planned; the ramp and the steady-state rule said.
fn progress(run: &RunView) -> Gauge<'static> {
    let t_ns = run.last().map_or(0, |fr| fr.row.t_ns);
    let ramp = run.last().is_some_and(|fr| fr.row.ramp);
    let phase = run.last().and_then(|fr| fr.phase.as_deref()).map_or(String::new(), |p| format!("{p} phase · "));
    let mut label = phase
        + &match run.run.duration_ns {
            Some(d) => format!("{} / {}", units::seconds_ns(t_ns), units::seconds_ns(d)),
            None => format!("{} (until the count or the file's end)", units::seconds_ns(t_ns)),
        };
    if ramp {
        label.push_str(" · ramp, not counted");
    }
    if let (Some(name), Some(last)) = (run.run.paced, run.last()) {
        let (ops, sum_ns) = last.workers.iter().fold((0u64, 0u64), |(o, s), w| (o + w.late_ops, s + w.late_sum_ns));
        if let Some(mean_ns) = sum_ns.checked_div(ops) {
            label.push_str(&format!(" · {name} {} (mean of the interval)", units::latency_ns(mean_ns)));
        }
    }
    if let Some(rule) = &run.run.steady_state {
        label.push_str(&steady_words(rule, run.last().and_then(|fr| fr.steady)));
    }
    if run.ended {
        label.push_str(" · ended");
    }
    let ratio = run.run.duration_ns.map_or(0.0, |d| (t_ns as f64 / d.max(1) as f64).clamp(0.0, 1.0));
    Gauge::default()
        .ratio(if run.ended { 1.0 } else { ratio })
        .label(label)
        .gauge_style(Style::default().fg(Color::Cyan))
}

/// `--steady-state`'s window: filling, its figure against the bound, or reached.
fn steady_words(rule: &str, progress: Option<crate::io::stats::live::SteadyProgress>) -> String {
    match progress {
        Some(p) if p.reached => format!(" · steady ({rule}): stopping"),
        Some(crate::io::stats::live::SteadyProgress { figures: Some(f), .. }) => format!(
            " · steady ({rule}) when the window's figure is within its bound: now {:.0}% of it",
            f.figure / f.bound.max(f64::MIN_POSITIVE) * 100.0
        ),
        Some(p) => format!(" · steady ({rule}): window {} of {} intervals", p.rows, p.window_len),
        None => format!(" · stops when steady ({rule})"),
    }
}

/// The last interval's figures: read, write and both.
fn headline(last: &LiveFrame) -> Table<'static> {
    let row = |name: &'static str, fig: &IntervalFigures| {
        // A flush moves no bytes.
        let bw = if name == "flush" { "–".to_string() } else { units::bandwidth_binary(fig.bw_bytes_per_sec) };
        Row::new(vec![
            Cell::from(name),
            Cell::from(units::iops(fig.iops)),
            Cell::from(bw),
            Cell::from(units::latency_ns(fig.latency_ns.p50)),
            Cell::from(units::latency_ns(fig.latency_ns.p99)),
            Cell::from(units::latency_ns(fig.latency_ns.p99_9)),
            Cell::from(units::latency_ns(fig.latency_ns.max)),
        ])
    };
    let r = &last.row;
    let mut rows = Vec::new();
    // A metadata run: a row per kind of operation, then all of them.
    for k in &last.kinds {
        rows.push(row(k.name, &k.figures));
    }
    if !last.kinds.is_empty() {
        rows.push(row("all", &r.total));
    }
    for (name, fig) in [("read", &r.read), ("write", &r.write)] {
        if fig.ops > 0 {
            rows.push(row(name, fig));
        }
    }
    if r.read.ops > 0 && r.write.ops > 0 {
        rows.push(row("total", &r.total));
    }
    if let Some(flush) = r.flush.as_ref().filter(|fl| fl.ops > 0) {
        rows.push(row("flush", flush));
    }
    Table::new(
        rows,
        [Constraint::Length(7), Constraint::Length(11), Constraint::Length(12)]
            .into_iter()
            .chain([Constraint::Length(10); 4]),
    )
    .header(header_row(vec!["last", "IOPS", "bandwidth", "p50", "p99", "p99.9", "max"]))
}

/// The devices' own counters beside the runs' (every run going, as the device sees them
/// all), and the CPU.
fn draw_machine(f: &mut Frame<'_>, s: &State, area: Rect) {
    let [devices, cpu] = Layout::horizontal([Constraint::Percentage(65), Constraint::Percentage(35)]).areas(area);
    // The newest interval of any run: the devices and the CPU are the machine's.
    let last = s.runs.iter().filter_map(|r| r.last()).max_by_key(|fr| fr.row.t_ns);
    let mut lines = Vec::new();
    if let Some(last) = last {
        match last.devices.as_slice() {
            [] => lines.push(Line::from("no block device under the targets")),
            [d, more @ ..] => {
                let others = if more.is_empty() { String::new() } else { format!(" (and {} more)", more.len()) };
                lines.push(Line::from(format!(
                    "{}{others}: {} reads/s · {} writes/s · busy {:.0}%",
                    d.name,
                    units::iops(d.read_iops),
                    units::iops(d.write_iops),
                    d.busy_share * 100.0
                )));
                lines.push(Line::from(format!(
                    "  read {} · written {}",
                    units::bandwidth_binary(d.read_bytes_per_sec),
                    units::bandwidth_binary(d.write_bytes_per_sec)
                )));
                let going: Vec<&LiveFrame> = s.runs.iter().filter(|r| !r.ended).filter_map(RunView::last).collect();
                let (iops, bw) = going
                    .iter()
                    .fold((0.0, 0.0), |(i, b), fr| (i + fr.row.total.iops, b + fr.row.total.bw_bytes_per_sec));
                lines.push(Line::from(Span::styled(
                    format!(
                        "iopulse, {} run{} going: {} IOPS · {}",
                        going.len(),
                        if going.len() == 1 { "" } else { "s" },
                        units::iops(iops),
                        units::bandwidth_binary(bw)
                    ),
                    Style::default().fg(Color::DarkGray),
                )));
            }
        }
    }
    f.render_widget(Paragraph::new(lines).block(Block::bordered().title(" device (its own counters) ")), devices);
    let cpu_lines = match last.and_then(|l| l.cpu) {
        Some(c) => vec![
            Line::from(format!("busy {:.0}% of {} CPUs", c.busy * 100.0, c.cpus)),
            Line::from(format!(
                "iopulse {:.0}% · others {:.0}%",
                c.process * 100.0,
                ((c.busy - c.process).max(0.0)) * 100.0
            )),
            Line::from(format!("steal {:.1}%", c.steal * 100.0)),
        ],
        None => vec![Line::from("not read yet")],
    };
    f.render_widget(Paragraph::new(cpu_lines).block(Block::bordered().title(" CPU ")), cpu);
}

/// Every run: a job among others, a sweep's points, a profile's steps.
fn draw_runs(f: &mut Frame<'_>, s: &State, area: Rect) {
    let focus = s.focused().map(|(i, _)| i);
    let shown = area.height.saturating_sub(3) as usize;
    // The newest runs, unless the one in focus is older.
    let first = s.runs.len().saturating_sub(shown).min(focus.unwrap_or(usize::MAX));
    let rows = s.runs.iter().enumerate().skip(first).take(shown).map(|(i, r)| {
        let last = r.last();
        let figure = |get: fn(&LiveFrame) -> String| last.map_or_else(|| "–".to_string(), get);
        let state = if r.ended {
            "done"
        } else if last.is_some_and(|l| l.row.ramp) {
            "ramp"
        } else {
            "running"
        };
        let row = Row::new(vec![
            Cell::from(r.run.label.clone().unwrap_or_else(|| format!("run {}", i + 1))),
            Cell::from(state),
            Cell::from(figure(|l| units::seconds_ns(l.row.t_ns))),
            Cell::from(figure(|l| units::iops(l.row.total.iops))),
            Cell::from(figure(|l| units::bandwidth_binary(l.row.total.bw_bytes_per_sec))),
            Cell::from(figure(|l| units::latency_ns(l.row.total.latency_ns.p99))),
        ]);
        if Some(i) == focus { row.style(Style::default().add_modifier(Modifier::REVERSED)) } else { row }
    });
    let table = Table::new(
        rows,
        [
            Constraint::Min(20),
            Constraint::Length(8),
            Constraint::Length(9),
            Constraint::Length(11),
            Constraint::Length(12),
            Constraint::Length(10),
        ],
    )
    .header(header_row(vec!["run", "state", "at", "IOPS", "bandwidth", "p99"]))
    .block(Block::bordered().title(format!(" runs ({}) ", s.runs.len())));
    f.render_widget(table, area);
}

/// Each worker's part of the focused run's last interval.
fn draw_workers(f: &mut Frame<'_>, s: &State, area: Rect) {
    let Some((_, run)) = s.focused() else {
        f.render_widget(Paragraph::new("no run yet").block(Block::bordered()), area);
        return;
    };
    let Some(last) = run.last() else {
        f.render_widget(Paragraph::new("no interval has ended yet").block(Block::bordered()), area);
        return;
    };
    let seconds = last.row.interval_ns as f64 / 1e9;
    let late_title = match run.run.paced {
        Some("lag") => "lag (mean)",
        Some(_) => "late (mean)",
        None => "",
    };
    let total_ops: u64 = last.workers.iter().map(|w| w.ops).sum();
    let rows = last.workers.iter().enumerate().map(|(i, w)| {
        Row::new(vec![
            Cell::from(format!("{i}")),
            Cell::from(units::iops(w.ops as f64 / seconds)),
            Cell::from(units::bandwidth_binary(w.bytes as f64 / seconds)),
            Cell::from(format!("{:.1} of {}", w.achieved_depth(last.row.interval_ns), run.run.depth)),
            Cell::from(format!("{:.0}%", w.ops as f64 * 100.0 / total_ops.max(1) as f64)),
            Cell::from(w.cpu_share.map_or_else(|| "–".to_string(), |c| format!("{:.0}%", c * 100.0))),
            Cell::from(match run.run.paced {
                Some(_) => w.mean_late_ns().map_or_else(|| "–".to_string(), units::latency_ns),
                None => String::new(),
            }),
        ])
    });
    let title = format!(
        " {}: each worker's part of the last interval ({}) ",
        run.run.label.as_deref().unwrap_or("the run"),
        units::seconds_ns(last.row.interval_ns)
    );
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(11),
            Constraint::Length(12),
            Constraint::Length(16),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(16),
        ],
    )
    .header(header_row(vec!["worker", "IOPS", "bandwidth", "depth (Little)", "share", "CPU", late_title]))
    .block(Block::bordered().title(title));
    f.render_widget(table, area);
}

/// A table's header: its column names in bold.
fn header_row(names: Vec<&'static str>) -> Row<'static> {
    Row::new(names).style(Style::default().add_modifier(Modifier::BOLD))
}

fn draw_messages(f: &mut Frame<'_>, s: &State, area: Rect) {
    let shown = area.height.saturating_sub(2) as usize;
    let lines: Vec<Line<'_>> =
        s.messages.iter().skip(s.messages.len().saturating_sub(shown)).map(|m| Line::from(m.as_str())).collect();
    let title = format!(" said on stderr ({}; all said again when the view closes) ", s.messages.len());
    f.render_widget(Paragraph::new(lines).block(Block::bordered().title(title)), area);
}

fn draw_help(f: &mut Frame<'_>, area: Rect) {
    let text = vec![
        Line::from("q, Ctrl-C   stop the run as SIGINT does: every output is written"),
        Line::from("p           pause the display (the run goes on); p again resumes"),
        Line::from("1 2 3, Tab  overview · each worker's part · lines said on stderr"),
        Line::from("↑ ↓         the run in focus (jobs, a sweep's points, a profile's steps)"),
        Line::from("?           this help; any key closes it"),
    ];
    let w = 76.min(area.width);
    let popup = Rect { x: area.x + (area.width - w) / 2, y: area.y + area.height / 3, width: w, height: 7 };
    f.render_widget(Clear, popup);
    f.render_widget(Paragraph::new(text).block(Block::bordered().title(" keys ")), popup);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::stats::interval::TimeSeriesRow;
    use crate::io::stats::live::{LiveRun, WorkerInterval};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen_text(s: &State, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| draw(f, s)).unwrap();
        let buf = term.backend().buffer().clone();
        (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect::<String>() + "\n").collect()
    }

    #[test]
    fn a_run_shows_its_last_interval_and_each_workers_part() {
        let mut s = State::new("t.dat --live".into());
        let run = LiveRun {
            label: Some("oltp".into()),
            engine: "io_uring".into(),
            depth: 8,
            workers: 2,
            ..Default::default()
        };
        s.take(super::super::state::Message::Started(0, Box::new(run)));
        let read = IntervalFigures {
            ops: 2000,
            iops: 2000.0,
            bw_bytes_per_sec: 8_192_000.0,
            latency_ns: crate::io::stats::LatencySummary {
                p50: 812,
                p99: 7830,
                p99_9: 14_200,
                max: 1_500_000_000,
                ..Default::default()
            },
        };
        let row = TimeSeriesRow {
            t_ns: 2_000_000_000,
            interval_ns: 1_000_000_000,
            ramp: false,
            read,
            write: IntervalFigures::default(),
            total: read,
            flush: None,
        };
        let workers = vec![
            WorkerInterval {
                ops: 1500,
                bytes: 6_144_000,
                latency_sum_ns: 6_000_000_000,
                cpu_share: Some(0.42),
                ..Default::default()
            },
            WorkerInterval {
                ops: 500,
                bytes: 2_048_000,
                latency_sum_ns: 2_000_000_000,
                cpu_share: None,
                ..Default::default()
            },
        ];
        let frame =
            LiveFrame { row, workers, devices: Vec::new(), cpu: None, steady: None, kinds: Vec::new(), phase: None };
        s.take(super::super::state::Message::Interval(0, Box::new(frame)));
        let text = screen_text(&s, 100, 32);
        assert!(text.contains("oltp · io_uring QD 8 × 2 workers"), "{text}");
        assert!(text.contains("read    2.0K"), "{text}");
        for shown in ["812 ns", "7.83 µs", "14.2 µs", "1.50 s", "7.8 MiB/s", "no block device under the targets"] {
            assert!(text.contains(shown), "{shown}: {text}");
        }
        s.tab = Tab::Workers;
        let text = screen_text(&s, 100, 32);
        // 6 s of latency over a 1 s interval: 6 in flight on average; 75 % of the I/Os.
        assert!(text.contains("6.0 of 8"), "{text}");
        assert!(text.contains("75%"), "{text}");
        assert!(text.contains("42%"), "the worker's CPU: {text}");
        assert!(text.contains("1.5K"), "{text}");
    }

    #[test]
    fn a_screen_too_small_says_what_it_needs() {
        let s = State::new(String::new());
        let text = screen_text(&s, 50, 10);
        assert!(text.contains("the terminal is 50×10: the live view needs 72×20"), "{text}");
    }
}
