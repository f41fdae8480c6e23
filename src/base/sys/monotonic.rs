//! The monotonic clock read for every timestamp of a run: `clock_gettime(CLOCK_MONOTONIC)`,
//! which glibc serves from the vDSO (no system call), as whole nanoseconds.
//!
//! Read here rather than through `std::time::Instant`: `Instant::elapsed` and the
//! subtraction of two timespecs are std's own functions, called (not inlined) from a crate
//! built without LTO, about 60 instructions per read more than this (docs/performance.md,
//! the build's profile). It calls the kernel; it decides nothing.

/// Nanoseconds on CLOCK_MONOTONIC (since boot, not counting suspend).
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the one we own; CLOCK_MONOTONIC is
    // always there on Linux, so it cannot fail (the zeroed value would stand if it did).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_moves_forward_with_std_s_monotonic_clock() {
        let a = now_ns();
        let i = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let elapsed_ns = i.elapsed().as_nanos() as u64;
        let b = now_ns();
        assert!(b - a >= elapsed_ns, "{} ns read, {elapsed_ns} ns by Instant", b - a);
        assert!(b - a < elapsed_ns + 5_000_000, "{} ns read, {elapsed_ns} ns by Instant", b - a);
    }
}
