//! The keys of the full-screen view, read from the terminal in raw mode with a timeout:
//! poll(2) on the terminal, then what a read returned, parsed into the few keys the view
//! knows. Once the terminal is gone (a hangup: end of file or an error) it reads no more
//! and only waits, so the view still ends when its command does. (crossterm's reader
//! retries a hung-up terminal forever, with the view's thread at 100 % of a CPU.)
//!
//! It reads bytes and names keys; what a key does is `mod.rs`'s.

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::time::Duration;

/// A key the view acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    Char(char),
    CtrlC,
    Esc,
    Tab,
    Up,
    Down,
}

/// The terminal keys come from: stdin when it is one, else /dev/tty (none: no keys).
pub(super) struct Keys {
    tty: Option<std::fs::File>,
    stdin: bool,
    gone: bool,
}

impl Keys {
    pub(super) fn open() -> Keys {
        let stdin = std::io::stdin().is_terminal();
        let tty = if stdin { None } else { std::fs::File::open("/dev/tty").ok() };
        Keys { gone: !stdin && tty.is_none(), tty, stdin }
    }

    /// The keys pressed within `wait` (none when nothing was, or the terminal is gone:
    /// then it only sleeps).
    pub(super) fn read(&mut self, wait: Duration) -> Vec<Key> {
        if self.gone {
            std::thread::sleep(wait);
            return Vec::new();
        }
        let mut buf = [0u8; 64];
        let read = match &self.tty {
            Some(tty) => read_from(tty.as_fd(), wait, &mut buf),
            None if self.stdin => read_from(std::io::stdin().as_fd(), wait, &mut buf),
            None => None,
        };
        match read {
            Some(Ok(0)) | None => {
                self.gone = true;
                Vec::new()
            }
            Some(Ok(n)) => parse(&buf[..n]),
            Some(Err(())) => Vec::new(),
        }
    }
}

/// Waits for input on `fd` up to `wait`, then reads what is there (one system call, no
/// buffer of its own): `Some(Ok(0))` or `None` when the terminal is gone, `Some(Err(()))`
/// when nothing came.
fn read_from(fd: std::os::fd::BorrowedFd<'_>, wait: Duration, buf: &mut [u8]) -> Option<Result<usize, ()>> {
    let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::from(ms)) {
        Ok(0) | Err(nix::errno::Errno::EINTR) => Some(Err(())),
        Ok(_) => match nix::unistd::read(fd, buf) {
            Ok(n) => Some(Ok(n)),
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => Some(Err(())),
            Err(_) => None,
        },
        Err(_) => None,
    }
}

/// The keys in what one read returned: characters, Ctrl-C, Tab, and the arrows' escape
/// sequences (`ESC [ A`, `ESC O A`); an escape alone is Esc; anything else is skipped.
pub(super) fn parse(bytes: &[u8]) -> Vec<Key> {
    let mut keys = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            0x03 => keys.push(Key::CtrlC),
            b'\t' => keys.push(Key::Tab),
            0x1b => {
                match (bytes.get(i + 1), bytes.get(i + 2)) {
                    (Some(b'[' | b'O'), Some(b'A')) => keys.push(Key::Up),
                    (Some(b'[' | b'O'), Some(b'B')) => keys.push(Key::Down),
                    (None, _) => keys.push(Key::Esc),
                    _ => {}
                }
                // The rest of a sequence: up to its final letter (or `~`).
                if bytes.get(i + 1).is_some_and(|b| *b == b'[' || *b == b'O') {
                    i += 2;
                    while i < bytes.len() && !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'~') {
                        i += 1;
                    }
                }
            }
            b if b.is_ascii_graphic() || b == b' ' => keys.push(Key::Char(b as char)),
            _ => {}
        }
        i += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_escape_sequences_are_told_apart() {
        assert_eq!(parse(b"q"), [Key::Char('q')]);
        assert_eq!(parse(b"2p "), [Key::Char('2'), Key::Char('p'), Key::Char(' ')]);
        assert_eq!(parse(&[0x03]), [Key::CtrlC]);
        assert_eq!(parse(b"\t"), [Key::Tab]);
        assert_eq!(parse(b"\x1b"), [Key::Esc]);
        assert_eq!(parse(b"\x1b[A\x1b[B"), [Key::Up, Key::Down]);
        assert_eq!(parse(b"\x1bOAk"), [Key::Up, Key::Char('k')]);
        // A function key's sequence is skipped whole, not read as its letters.
        assert_eq!(parse(b"\x1b[15~q"), [Key::Char('q')]);
        assert_eq!(parse(b"\x1b[1;5Cx"), [Key::Char('x')]);
    }

    #[test]
    fn a_hung_up_terminal_ends_the_reading() {
        // A pipe whose writer is gone reads as end of file, as a hung-up terminal does.
        let (r, w) = nix::unistd::pipe().unwrap();
        drop(w);
        let got = read_from(r.as_fd(), Duration::from_millis(10), &mut [0u8; 8]);
        assert!(matches!(got, Some(Ok(0)) | None), "{got:?}");
        // Nothing written yet: the wait ends with nothing; then what was written.
        let (r, w) = nix::unistd::pipe().unwrap();
        assert_eq!(read_from(r.as_fd(), Duration::from_millis(10), &mut [0u8; 8]), Some(Err(())));
        nix::unistd::write(&w, b"q").unwrap();
        assert_eq!(read_from(r.as_fd(), Duration::from_millis(10), &mut [0u8; 8]), Some(Ok(1)));
    }
}
