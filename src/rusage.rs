//! CPU time of the calling thread or of the whole process (getrusage).

use crate::stats::CpuTimes;
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;

fn read(who: UsageWho) -> CpuTimes {
    let Ok(usage) = getrusage(who) else { return CpuTimes::default() };
    let ns = |tv: nix::sys::time::TimeVal| u64::try_from(tv.num_nanoseconds()).unwrap_or(0);
    CpuTimes { user_ns: ns(usage.user_time()), sys_ns: ns(usage.system_time()) }
}

/// CPU time of the calling thread so far.
pub fn thread_cpu() -> CpuTimes {
    read(UsageWho::RUSAGE_THREAD)
}

/// The process's peak resident set so far (ru_maxrss, which Linux gives in KiB).
pub fn peak_resident_bytes() -> Option<u64> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    u64::try_from(usage.max_rss()).ok().map(|kib| kib * 1024)
}

/// CPU time of the whole process so far.
pub fn process_cpu() -> CpuTimes {
    read(UsageWho::RUSAGE_SELF)
}
