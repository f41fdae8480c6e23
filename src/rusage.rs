//! CPU time of the calling thread or of the whole process (getrusage).

use crate::stats::CpuTimes;

fn read(who: libc::c_int) -> CpuTimes {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct we own.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(who, &mut usage) != 0 {
            return CpuTimes::default();
        }
        usage
    };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
    CpuTimes { user_ns: ns(usage.ru_utime), sys_ns: ns(usage.ru_stime) }
}

/// CPU time of the calling thread so far.
pub fn thread_cpu() -> CpuTimes {
    read(libc::RUSAGE_THREAD)
}

/// CPU time of the whole process so far.
pub fn process_cpu() -> CpuTimes {
    read(libc::RUSAGE_SELF)
}
