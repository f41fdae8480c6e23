//! The stop signals' handler, and the terminal it gives back: the first SIGINT, SIGTERM or
//! SIGHUP stops the run (`host::signals`); a second ends the process at once, with no time
//! to drop the full-screen view, so the handler leaves the alternate screen, shows the
//! cursor and puts back the terminal modes saved before raw mode, with async-signal-safe
//! calls only (write, tcsetattr), then exits.
//!
//! It calls the kernel and libc; it knows nothing of the view that armed it nor of the run
//! it stops.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

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

/// Registers, for `signal`, the one action that handles it: the first of the signals
/// registered with the same `seen_one` stores `code` in `stop` (the run stops and
/// reports); any later one gives the terminal back (when a view holds it) and exits with
/// `code` at once. One atomic swap decides which: two signals handled at the same moment
/// on two threads (both pending while the process was stopped, then delivered together)
/// cannot both take themselves for the first, as a check then a set could.
pub fn on_signal_stop_then_exit(
    signal: libc::c_int,
    code: i32,
    stop: Arc<AtomicUsize>,
    seen_one: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let action = move || {
        if seen_one.swap(true, Ordering::SeqCst) {
            if ARMED.swap(false, Ordering::SeqCst) {
                // SAFETY: write and tcsetattr are async-signal-safe; LEAVE and SAVED are
                // static and initialised before the action can see ARMED set.
                unsafe {
                    let _ = libc::write(libc::STDOUT_FILENO, LEAVE.as_ptr().cast(), LEAVE.len());
                    if let Some(t) = SAVED.get() {
                        let _ = libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t);
                    }
                }
            }
            signal_hook::low_level::exit(code);
        }
        stop.store(code as usize, Ordering::SeqCst);
    };
    // SAFETY: the action only loads, stores and swaps atomics, reads a OnceLock already
    // set, and makes async-signal-safe calls (write, tcsetattr, _exit): it allocates
    // nothing and takes no lock.
    unsafe { signal_hook::low_level::register(signal, action) }.map(|_| ())
}
