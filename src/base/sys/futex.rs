//! A one-shot broadcast for the start line: waiters sleep in the kernel on a
//! 32-bit word until it leaves 0, and one system call wakes them all.
//!
//! A condition variable wakes waiters that must then take its mutex one after
//! the other; with hundreds of workers on a few busy CPUs, that queue made the
//! last ones start long after the window opened. Woken here, every waiter is
//! runnable at once and leaves as soon as it gets a CPU.

use std::sync::atomic::{AtomicU32, Ordering};

/// Sleeps until `word` is no longer 0 (returns at once if it already is not).
pub fn wait_while_zero(word: &AtomicU32) {
    while word.load(Ordering::Acquire) == 0 {
        // SAFETY: FUTEX_WAIT reads the aligned 32-bit word, which lives as long as `word`
        // is borrowed, and sleeps only while it still holds 0; a null timeout waits without
        // limit. Spurious wake-ups and EINTR are covered by the loop.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                0u32,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }
}

/// Sets `word` to `value` (not 0) and wakes every thread sleeping on it.
pub fn set_and_wake_all(word: &AtomicU32, value: u32) {
    word.store(value, Ordering::Release);
    // SAFETY: FUTEX_WAKE only uses the word's address as a key; no memory is written.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn all_waiters_leave_once_the_word_is_set() {
        let word = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let w = Arc::clone(&word);
                std::thread::spawn(move || {
                    wait_while_zero(&w);
                    w.load(Ordering::Acquire)
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        set_and_wake_all(&word, 7);
        for t in threads {
            assert_eq!(t.join().unwrap(), 7);
        }
        wait_while_zero(&word); // returns at once
    }
}
