//! stderr while the full-screen view is up: a line written to the terminal's stderr would
//! scribble over the screen, so file descriptor 2 becomes a pipe whose lines the view
//! shows (its messages tab), and when the view closes, the real stderr comes back and every
//! line is said on it, in order, so nothing is lost.
//!
//! It moves file descriptors and keeps lines; it must not interpret them.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The real stderr while the pipe stands in for it: a panic gives it back (`give_back`).
static SAVED: Mutex<Option<OwnedFd>> = Mutex::new(None);

/// How long the lines still in the pipe are waited for once stderr is given back (a
/// process this one started may hold the pipe's end).
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// The lines said so far, shared by the pipe's reader and the view.
#[derive(Clone, Default)]
pub(super) struct Lines(Arc<Mutex<LinesSaid>>);

#[derive(Default)]
struct LinesSaid {
    all: Vec<String>,
    shown: usize,
}

impl Lines {
    fn push(&self, line: String) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).all.push(line);
    }

    /// The lines said since the last call.
    pub(super) fn take_new(&self) -> Vec<String> {
        let mut said = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let new = said.all[said.shown..].to_vec();
        said.shown = said.all.len();
        new
    }

    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).all.clone()
    }
}

/// stderr taken.
pub(super) struct Capture {
    lines: Lines,
    drained: std::sync::mpsc::Receiver<()>,
}

impl Capture {
    /// Points file descriptor 2 at a pipe read line by line on a thread of its own.
    pub(super) fn start() -> std::io::Result<Capture> {
        let _ = std::io::stderr().flush();
        let saved = nix::unistd::dup(std::io::stderr())?;
        let (read_end, write_end) = nix::unistd::pipe()?;
        let lines = Lines::default();
        let (done, drained) = std::sync::mpsc::channel();
        let kept = lines.clone();
        std::thread::Builder::new().name("iopulse-stderr".into()).spawn(move || {
            for line in BufReader::new(std::fs::File::from(read_end)).lines() {
                match line {
                    Ok(line) => kept.push(line),
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        })?;
        nix::unistd::dup2_stderr(&write_end)?;
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some(saved);
        Ok(Capture { lines, drained })
    }

    pub(super) fn lines(&self) -> Lines {
        self.lines.clone()
    }

    /// Gives stderr back and says every line on it.
    pub(super) fn finish(self) {
        give_back();
        // The pipe's last writer is gone with file descriptor 2: its reader ends.
        let _ = self.drained.recv_timeout(DRAIN_WAIT);
        let mut stderr = std::io::stderr().lock();
        for line in self.lines.all() {
            let _ = writeln!(stderr, "{line}");
        }
    }
}

/// Points file descriptor 2 back at the real stderr (once; a panic's hook may come first).
pub(super) fn give_back() {
    let saved = match SAVED.try_lock() {
        Ok(mut s) => s.take(),
        Err(_) => None,
    };
    if let Some(fd) = saved {
        let _ = std::io::stderr().flush();
        let _ = nix::unistd::dup2_stderr(&fd);
    }
}
