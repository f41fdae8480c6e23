//! SIGINT, SIGTERM and SIGHUP: the first one stores its exit code (130, 143 or
//! 129) in the run's stop word, which workers read once per batch, so the run
//! stops, files it created during layout are removed, and the partial report is
//! still printed. A second one exits at once. SIGHUP (a closed terminal or ssh
//! session) is handled like SIGTERM, so it never leaves a half-laid-out file
//! without a word.

use crate::base::diagnostics::error::exit_code;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Installs the handlers; returns the stop word they write to.
pub fn install() -> io::Result<Arc<AtomicUsize>> {
    let stop = Arc::new(AtomicUsize::new(0));
    let seen_one = Arc::new(AtomicBool::new(false));
    for (signal, code) in
        [(SIGINT, exit_code::INTERRUPTED), (SIGTERM, exit_code::TERMINATED), (SIGHUP, exit_code::HUNG_UP)]
    {
        // One action per signal: the first stops, a later one exits (`sys::terminal`, which
        // gives a full-screen view's terminal back first).
        crate::base::sys::terminal::on_signal_stop_then_exit(signal, code, Arc::clone(&stop), Arc::clone(&seen_one))?;
    }
    Ok(stop)
}

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread. Worker threads call it first, so
/// that a handler never runs on a worker's thread: a signal never interrupts a worker's
/// system call (which of two signals is the first is decided in the
/// handler itself, `sys::terminal::on_signal_stop_then_exit`, on whichever thread runs it).
pub fn block_in_this_thread() {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(signal);
    }
    // Only the calling thread's mask changes; it cannot fail with a valid set.
    let _ = set.thread_block();
}
