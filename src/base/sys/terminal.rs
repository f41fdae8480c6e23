//! The terminal given back from inside a signal handler: a second SIGINT, SIGTERM or
//! SIGHUP ends the process at once (`host::signals`), with no time to drop the full-screen
//! view, so the handler that runs before that exit leaves the alternate screen, shows the
//! cursor and puts back the terminal modes saved before raw mode, with async-signal-safe
//! calls only (write, tcsetattr).
//!
//! It calls the kernel and libc; it knows nothing of the view that armed it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// stdin's terminal modes before the first raw mode of the process.
static SAVED: OnceLock<libc::termios> = OnceLock::new();
/// A view holds the terminal: the handler gives it back.
static ARMED: AtomicBool = AtomicBool::new(false);

/// The alternate screen left, the cursor shown.
const LEAVE: &[u8] = b"\x1b[?1049l\x1b[?25h";

/// Saves stdin's modes (before raw mode) and arms the handler; false when stdin is not a
/// terminal (the handler then has nothing to put back but the screen).
pub fn arm() -> bool {
    if SAVED.get().is_none() {
        // SAFETY: termios is plain old data: all zeroes is a valid value to write into.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: tcgetattr writes into the termios we own; fd 0 may be anything, and a
        // failure is reported by the return value.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut t) } == 0 {
            let _ = SAVED.set(t);
        }
    }
    ARMED.store(true, Ordering::SeqCst);
    SAVED.get().is_some()
}

/// The view gave the terminal back itself.
pub fn disarm() {
    ARMED.store(false, Ordering::SeqCst);
}

/// Registers, for `signal`, an action that gives the terminal back when `exiting` is set
/// (the signal is the second, and the process is about to end) and a view holds it. To be
/// registered before the action that exits.
pub fn restore_before_exit(signal: libc::c_int, exiting: std::sync::Arc<AtomicBool>) -> std::io::Result<()> {
    let action = move || {
        if exiting.load(Ordering::SeqCst) && ARMED.swap(false, Ordering::SeqCst) {
            // SAFETY: write and tcsetattr are async-signal-safe; LEAVE and SAVED are
            // static and initialised before the action can see ARMED set.
            unsafe {
                let _ = libc::write(libc::STDOUT_FILENO, LEAVE.as_ptr().cast(), LEAVE.len());
                if let Some(t) = SAVED.get() {
                    let _ = libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t);
                }
            }
        }
    };
    // SAFETY: the action only loads and swaps atomics, reads a OnceLock already set, and
    // makes async-signal-safe calls: it allocates nothing and takes no lock.
    unsafe { signal_hook::low_level::register(signal, action) }.map(|_| ())
}
