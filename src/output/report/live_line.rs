//! The live line: one line on stderr, rewritten in place at each interval while the run
//! goes on (shown only on a terminal, never with `--quiet`). It formats the rows the
//! sampler hands it (`stats::interval`); it computes nothing.

use crate::base::units::display as units;
use crate::io::stats::interval::TimeSeriesRow;
use crate::io::stats::live::{LiveFrame, LiveRun, LiveView, LiveViews};
use std::io::Write;

/// The live line for every run of the process that shows progress (`stats::live::register`).
pub struct LiveLines;

impl LiveViews for LiveLines {
    fn view(&self, run: LiveRun) -> LiveView {
        let line = LiveLine::new(run.duration_ns, run.label);
        Box::new(move |frame| line.show_frame(frame))
    }
}

/// The live line of one run.
pub struct LiveLine {
    /// The run's planned length, shown as "elapsed / planned".
    duration_ns: Option<u64>,
    /// The profile step it is (named first on the line), if any.
    step: Option<String>,
}

impl LiveLine {
    pub fn new(duration_ns: Option<u64>, step: Option<String>) -> Self {
        Self { duration_ns, step }
    }

    /// Shows `frame` (an interval that just ended), or clears the line at the end (`None`).
    /// A closed or full stderr must not panic the sampler: the line is dropped.
    fn show_frame(&self, frame: Option<&LiveFrame>) {
        let text = frame.map_or_else(String::new, |f| {
            let mut text = self.format(&f.row);
            // A metadata run: each kind of operation's rate and p99.
            for k in &f.kinds {
                text.push_str(&format!(
                    " · {} {}/s p99 {}",
                    k.name,
                    units::iops(k.figures.iops),
                    units::latency_ns(k.figures.latency_ns.p99)
                ));
            }
            text
        });
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[2K{text}").and_then(|()| stderr.flush());
    }

    fn format(&self, row: &TimeSeriesRow) -> String {
        let elapsed = units::seconds_ns(row.t_ns);
        let of = match self.duration_ns {
            Some(d) => format!("{elapsed} / {}", units::seconds_ns(d)),
            None => elapsed,
        };
        // The ramp's rows (`--ramp`) are not counted: the line says so.
        let ramp = if row.ramp { " ramp, not counted" } else { "" };
        let step = self.step.as_deref().map_or(String::new(), |s| format!("{s} "));
        let mut parts = vec![format!("{step}[{of}{ramp}]")];
        for (name, f) in [("read", &row.read), ("write", &row.write)] {
            if f.ops > 0 {
                parts.push(format!(
                    "{name} {} IOPS {} p99 {}",
                    units::iops(f.iops),
                    units::bandwidth(f.bw_bytes_per_sec),
                    units::latency_ns(f.latency_ns.p99)
                ));
            }
        }
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::stats::interval::IntervalFigures;

    #[test]
    fn a_profile_step_is_named_first_on_the_line() {
        let figures = IntervalFigures { ops: 10, iops: 1000.0, ..Default::default() };
        let row = TimeSeriesRow {
            t_ns: 1_000_000_000,
            interval_ns: 1_000_000_000,
            ramp: false,
            read: figures,
            write: IntervalFigures::default(),
            total: figures,
            flush: None,
        };
        let line = LiveLine::new(Some(5_000_000_000), Some("SEQ1M Q8T1 read, pass 2".into())).format(&row);
        assert!(
            line.starts_with("SEQ1M Q8T1 read, pass 2 [1.00 s / 5.00 s]")
                || line.starts_with("SEQ1M Q8T1 read, pass 2 ["),
            "{line}"
        );
        assert!(line.contains("read 1"), "{line}");
        assert!(LiveLine::new(None, None).format(&row).starts_with('['));
    }
}
