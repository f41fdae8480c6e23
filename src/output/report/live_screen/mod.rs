//! `--live`: a full-screen view of the command's runs while they go, on stdout's
//! terminal, redrawn as their intervals end: the run in focus (progress, headline figures,
//! sparklines), the devices' own counters and the CPU, every run (jobs, a sweep's points,
//! a profile's steps), each worker's part, and what was said on stderr meanwhile.
//!
//! `start` takes the terminal (raw mode, the alternate screen) and stderr (its lines are
//! kept for the messages tab and said again when the view closes, so nothing scribbles
//! over the screen and nothing is lost); the command installs its views for its runs
//! (`Screen::views`, `stats::live::install`). Dropping the `Screen` gives both back, as does a panic. Keys are
//! read on the screen's own thread: `q` or Ctrl-C sends this process SIGINT once, so the
//! run stops exactly as on SIGINT, every output written.
//!
//! It formats what runs hand it (`stats::live`); it never touches a run or its figures.

mod draw;
mod keys;
mod state;
mod stderr_capture;

use crate::io::stats::live::{LiveFrame, LiveRun, LiveView, LiveViews};
use ratatui::crossterm::terminal;
use state::{Message, State, Tab};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the screen is redrawn without news (the header's clock), and how long a key
/// is waited for between looks at the runs' messages.
const REDRAW: Duration = Duration::from_millis(250);
const KEY_WAIT: Duration = Duration::from_millis(50);
/// What the runs say while the display is paused is held up to this many messages.
const HELD_MAX: usize = 4096;

/// The views of this process's runs while a screen is up.
struct ScreenViews {
    to_screen: Mutex<Option<Sender<Message>>>,
    next_id: AtomicU64,
}

static VIEWS: ScreenViews = ScreenViews { to_screen: Mutex::new(None), next_id: AtomicU64::new(0) };

/// The terminal is the screen's: a panic gives it back first.
static ACTIVE: AtomicBool = AtomicBool::new(false);

impl LiveViews for ScreenViews {
    fn view(&self, run: LiveRun) -> LiveView {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let tx = self.to_screen.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(tx) = &tx {
            let _ = tx.send(Message::Started(id, Box::new(run)));
        }
        Box::new(move |frame: Option<&LiveFrame>| {
            if let Some(tx) = &tx {
                let _ = tx.send(match frame {
                    Some(f) => Message::Interval(id, Box::new(f.clone())),
                    None => Message::Ended(id),
                });
            }
        })
    }

    fn every_run(&self) -> bool {
        true
    }
}

/// The screen while it is up; dropping it gives the terminal and stderr back and says
/// again what was said on stderr meanwhile.
pub struct Screen {
    to_screen: Sender<Message>,
    thread: Option<JoinHandle<()>>,
    capture: Option<stderr_capture::Capture>,
}

/// Why the view is not drawn (the live line shows the run instead).
#[derive(Debug, thiserror::Error)]
pub enum NotShown {
    #[error("--live: stdout is not a terminal: the live line is shown instead (on stderr, when it is a terminal)")]
    NotATerminal,
    #[error("--live: the terminal is {0}×{1}, smaller than the {min_w}×{min_h} the view needs: the live line is shown instead", min_w = draw::MIN_SIZE.0, min_h = draw::MIN_SIZE.1)]
    TooSmall(u16, u16),
    #[error("--live: the terminal cannot be taken ({0}): the live line is shown instead")]
    Terminal(std::io::Error),
}

/// Takes the terminal for the command's runs, titled `title` (the command line).
pub fn start(title: String) -> Result<Screen, NotShown> {
    if !std::io::stdout().is_terminal() {
        return Err(NotShown::NotATerminal);
    }
    let (w, h) = terminal::size().map_err(NotShown::Terminal)?;
    if w < draw::MIN_SIZE.0 || h < draw::MIN_SIZE.1 {
        return Err(NotShown::TooSmall(w, h));
    }
    install_panic_hook();
    let mut term = take_terminal().map_err(|e| {
        restore_terminal();
        NotShown::Terminal(e)
    })?;
    // stderr's lines from now on are the messages tab's (and said again at the end).
    let capture = stderr_capture::Capture::start().ok();
    let (tx, rx) = mpsc::channel();
    *VIEWS.to_screen.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx.clone());
    let lines = capture.as_ref().map(stderr_capture::Capture::lines);
    let thread = std::thread::Builder::new()
        .name("iopulse-live".into())
        .spawn(move || {
            let mut state = State::new(title);
            screen_loop(&mut term, &mut state, &rx, lines.as_ref());
            restore_terminal();
        })
        .map_err(NotShown::Terminal);
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            restore_terminal();
            return Err(e);
        }
    };
    Ok(Screen { to_screen: tx, thread: Some(thread), capture })
}

impl Screen {
    /// The views that draw runs on this screen (`stats::live::install` takes them).
    pub fn views(&self) -> &'static dyn LiveViews {
        &VIEWS
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        *VIEWS.to_screen.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let _ = self.to_screen.send(Message::Quit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        restore_terminal();
        if let Some(capture) = self.capture.take() {
            capture.finish();
        }
    }
}

/// Draws and reads keys until told to quit.
fn screen_loop(term: &mut Term, state: &mut State, rx: &Receiver<Message>, lines: Option<&stderr_capture::Lines>) {
    let mut drawn = Instant::now() - REDRAW;
    let mut news = true;
    // While the display is paused, what the runs say waits here (the run goes on).
    let mut held: Vec<Message> = Vec::new();
    let mut keys = keys::Keys::open();
    let mut last_size = terminal::size().unwrap_or_default();
    loop {
        for k in keys.read(KEY_WAIT) {
            key(state, k);
            news = true;
        }
        // A resized terminal is drawn again at its new size.
        if let Ok(size) = terminal::size()
            && size != last_size
        {
            last_size = size;
            news = true;
        }
        if !state.paused {
            for m in held.drain(..) {
                state.take(m);
            }
        }
        loop {
            match rx.try_recv() {
                Ok(Message::Quit) | Err(mpsc::TryRecvError::Disconnected) => return,
                Ok(m) if state.paused => {
                    // A long pause keeps at most so much: the oldest is taken (and drawn
                    // only once the display goes on, or for a key).
                    if held.len() == HELD_MAX {
                        state.take(held.remove(0));
                    }
                    held.push(m);
                }
                Ok(m) => {
                    state.take(m);
                    news = true;
                }
                Err(mpsc::TryRecvError::Empty) => break,
            }
        }
        if let Some(lines) = lines
            && !state.paused
        {
            for line in lines.take_new() {
                state.said(line);
                news = true;
            }
        }
        // A paused display is redrawn only for a key (a view, the help); else the clock.
        if news || (!state.paused && drawn.elapsed() >= REDRAW) {
            let _ = term.draw(|f| draw::draw(f, state));
            drawn = Instant::now();
            news = false;
        }
    }
}

/// A key pressed.
fn key(state: &mut State, key: keys::Key) {
    use keys::Key;
    if state.help {
        state.help = false;
        return;
    }
    match key {
        Key::Char('q') | Key::Esc | Key::CtrlC => stop(state),
        Key::Char('p' | ' ') => state.paused = !state.paused,
        Key::Char('1') => state.tab = Tab::Overview,
        Key::Char('2') => state.tab = Tab::Workers,
        Key::Char('3') => state.tab = Tab::Messages,
        Key::Tab => state.next_tab(),
        Key::Up | Key::Char('k') => state.move_focus(-1),
        Key::Down | Key::Char('j') => state.move_focus(1),
        Key::Char('?' | 'h') => state.help = true,
        _ => {}
    }
}

/// Stops the run as SIGINT does, once: a second SIGINT would end the process at once,
/// with no result written.
fn stop(state: &mut State) {
    if state.stopping {
        return;
    }
    state.stopping = true;
    state.paused = false;
    let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGINT);
}

type Term = ratatui::Terminal<ratatui::backend::CrosstermBackend<std::io::Stdout>>;

/// Raw mode (keys come one by one, Ctrl-C among them) and the alternate screen (the
/// shell's screen comes back as it was).
fn take_terminal() -> std::io::Result<Term> {
    // A second signal ends the process at once: its handler gives the terminal back.
    crate::base::sys::terminal::arm();
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    ratatui::crossterm::execute!(std::io::stdout(), terminal::EnterAlternateScreen, ratatui::crossterm::cursor::Hide)?;
    let mut term = ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))?;
    term.clear()?;
    Ok(term)
}

/// Leaves the alternate screen and raw mode, the cursor shown (once per taking).
fn restore_terminal() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        crate::base::sys::terminal::disarm();
        let _ = ratatui::crossterm::execute!(
            std::io::stdout(),
            terminal::LeaveAlternateScreen,
            ratatui::crossterm::cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// A panic gives the terminal and stderr back before its message is printed.
fn install_panic_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            stderr_capture::give_back();
            previous(info);
        }));
    });
}
