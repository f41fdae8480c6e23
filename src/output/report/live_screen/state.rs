//! What the full-screen view holds between two drawings: every run it was told of, each
//! with its last intervals, the lines said on stderr meanwhile, and the person's choices
//! (the tab, the run in focus, a paused display). It keeps what it is handed; it computes
//! nothing but the history's bounds.

use crate::io::stats::live::{LiveFrame, LiveRun};
use std::collections::VecDeque;

/// Intervals kept per run: the sparklines' history (10 minutes at the default 1 s).
pub(super) const HISTORY: usize = 600;
/// Runs kept: the oldest finished ones go first (a sweep of hundreds of points).
const RUNS_KEPT: usize = 200;
/// Lines said on stderr kept for the messages tab (all are said again at the end).
const MESSAGES_KEPT: usize = 500;

/// What a run's view tells the screen's thread.
pub(super) enum Message {
    Started(u64, Box<LiveRun>),
    Interval(u64, Box<LiveFrame>),
    Ended(u64),
    /// The command is done with the screen: restore the terminal and end.
    Quit,
}

/// The tabs, in the order of their keys (1, 2, 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tab {
    Overview,
    Workers,
    Messages,
}

impl Tab {
    pub(super) const ALL: [Tab; 3] = [Tab::Overview, Tab::Workers, Tab::Messages];

    pub(super) fn title(self) -> &'static str {
        match self {
            Tab::Overview => "1 overview",
            Tab::Workers => "2 workers",
            Tab::Messages => "3 messages",
        }
    }

    fn next(self) -> Tab {
        let i = Tab::ALL.iter().position(|t| *t == self).unwrap_or(0);
        Tab::ALL[(i + 1) % Tab::ALL.len()]
    }
}

/// One run as the screen knows it.
pub(super) struct RunView {
    pub(super) id: u64,
    pub(super) run: LiveRun,
    pub(super) frames: VecDeque<LiveFrame>,
    pub(super) ended: bool,
}

impl RunView {
    pub(super) fn last(&self) -> Option<&LiveFrame> {
        self.frames.back()
    }
}

/// Everything drawn.
pub(super) struct State {
    pub(super) title: String,
    pub(super) runs: Vec<RunView>,
    /// The run the headline, sparklines and workers show (an index into `runs`); `None`:
    /// the newest running one.
    pub(super) focus: Option<usize>,
    pub(super) messages: Vec<String>,
    pub(super) tab: Tab,
    pub(super) help: bool,
    /// The display is frozen (the run goes on): what is drawn is `frozen`'s copy.
    pub(super) paused: bool,
    /// `q` was pressed: the run was asked to stop as on SIGINT.
    pub(super) stopping: bool,
    pub(super) started: std::time::Instant,
}

impl State {
    pub(super) fn new(title: String) -> Self {
        Self {
            title,
            runs: Vec::new(),
            focus: None,
            messages: Vec::new(),
            tab: Tab::Overview,
            help: false,
            paused: false,
            stopping: false,
            started: std::time::Instant::now(),
        }
    }

    /// Takes a message from a run; false for `Quit`.
    pub(super) fn take(&mut self, message: Message) -> bool {
        match message {
            Message::Started(id, run) => {
                if self.runs.len() >= RUNS_KEPT
                    && let Some(oldest_done) = self.runs.iter().position(|r| r.ended)
                {
                    self.runs.remove(oldest_done);
                    self.focus = None;
                }
                self.runs.push(RunView { id, run: *run, frames: VecDeque::new(), ended: false });
            }
            Message::Interval(id, frame) => {
                if let Some(r) = self.runs.iter_mut().find(|r| r.id == id) {
                    if r.frames.len() == HISTORY {
                        r.frames.pop_front();
                    }
                    r.frames.push_back(*frame);
                }
            }
            Message::Ended(id) => {
                if let Some(r) = self.runs.iter_mut().find(|r| r.id == id) {
                    r.ended = true;
                }
            }
            Message::Quit => return false,
        }
        true
    }

    pub(super) fn said(&mut self, line: String) {
        if self.messages.len() == MESSAGES_KEPT {
            self.messages.remove(0);
        }
        self.messages.push(line);
    }

    /// The run in focus: the chosen one, else the first still running (a job file's first
    /// job, a sweep's point under way), else the newest.
    pub(super) fn focused(&self) -> Option<(usize, &RunView)> {
        if let Some(i) = self.focus.filter(|&i| i < self.runs.len()) {
            return Some((i, &self.runs[i]));
        }
        let i = self.runs.iter().position(|r| !r.ended).or(self.runs.len().checked_sub(1))?;
        Some((i, &self.runs[i]))
    }

    pub(super) fn next_tab(&mut self) {
        self.tab = self.tab.next();
    }

    /// Moves the focus `by` runs (up: -1, down: 1), staying in the list.
    pub(super) fn move_focus(&mut self, by: isize) {
        let Some((i, _)) = self.focused() else { return };
        let last = self.runs.len() as isize - 1;
        self.focus = Some((i as isize + by).clamp(0, last) as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::stats::interval::{IntervalFigures, TimeSeriesRow};

    fn frame(t_ns: u64) -> Box<LiveFrame> {
        Box::new(LiveFrame {
            row: TimeSeriesRow {
                t_ns,
                interval_ns: 1,
                ramp: false,
                read: IntervalFigures::default(),
                write: IntervalFigures::default(),
                total: IntervalFigures::default(),
                flush: None,
            },
            workers: Vec::new(),
            devices: Vec::new(),
            cpu: None,
            steady: None,
            kinds: Vec::new(),
            phase: None,
        })
    }

    #[test]
    fn the_focus_follows_the_newest_running_run_until_one_is_chosen() {
        let mut s = State::new(String::new());
        assert!(s.focused().is_none());
        s.take(Message::Started(1, Box::default()));
        s.take(Message::Started(2, Box::default()));
        assert_eq!(s.focused().unwrap().1.id, 1, "the first running");
        s.take(Message::Ended(1));
        assert_eq!(s.focused().unwrap().1.id, 2, "the first still running");
        s.take(Message::Ended(2));
        s.take(Message::Started(3, Box::default()));
        assert_eq!(s.focused().unwrap().1.id, 3);
        s.take(Message::Ended(3));
        assert_eq!(s.focused().unwrap().1.id, 3, "all ended: the newest");
        s.move_focus(-1);
        assert_eq!(s.focused().unwrap().1.id, 2);
        s.move_focus(-5);
        assert_eq!(s.focused().unwrap().1.id, 1, "stays in the list");
        assert!(!s.take(Message::Quit));
    }

    #[test]
    fn history_and_runs_are_bounded_and_intervals_reach_their_run() {
        let mut s = State::new(String::new());
        s.take(Message::Started(7, Box::default()));
        for t in 0..(HISTORY as u64 + 5) {
            s.take(Message::Interval(7, frame(t)));
        }
        s.take(Message::Interval(8, frame(0)));
        let r = &s.runs[0];
        assert_eq!(r.frames.len(), HISTORY);
        assert_eq!(r.frames.front().unwrap().row.t_ns, 5, "the oldest went first");
        for id in 0..RUNS_KEPT as u64 + 3 {
            s.take(Message::Started(100 + id, Box::default()));
            s.take(Message::Ended(100 + id));
        }
        assert_eq!(s.runs.len(), RUNS_KEPT);
        assert_eq!(s.runs.last().unwrap().id, 100 + RUNS_KEPT as u64 + 2);
        for i in 0..MESSAGES_KEPT + 2 {
            s.said(format!("line {i}"));
        }
        assert_eq!(s.messages.len(), MESSAGES_KEPT);
        assert_eq!(s.messages[0], "line 2");
    }
}
