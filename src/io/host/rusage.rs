//! CPU time, context switches and page faults of the calling thread or of the whole
//! process (getrusage), and the process's peak resident set.

use crate::io::stats::CpuTimes;
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;

fn read(who: UsageWho) -> CpuTimes {
    let Ok(usage) = getrusage(who) else { return CpuTimes::default() };
    let ns = |tv: nix::sys::time::TimeVal| u64::try_from(tv.num_nanoseconds()).unwrap_or(0);
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    CpuTimes {
        user_ns: ns(usage.user_time()),
        sys_ns: ns(usage.system_time()),
        context_switches: count(usage.voluntary_context_switches()) + count(usage.involuntary_context_switches()),
        major_faults: count(usage.major_page_faults()),
        minor_faults: count(usage.minor_page_faults()),
    }
}

/// CPU time of the calling thread so far.
pub fn thread_cpu() -> CpuTimes {
    read(UsageWho::RUSAGE_THREAD)
}

/// The process's peak resident set so far: VmHWM of /proc/self/status (in KiB). Not
/// getrusage's ru_maxrss, which Linux carries over an exec from the process that forked
/// us (a large parent would show as our peak).
pub fn peak_resident_bytes() -> Option<u64> {
    kib_field_bytes(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM:")
}

/// Anonymous memory of the process backed by transparent huge pages now (AnonHugePages
/// of /proc/self/smaps_rollup); `None` where the kernel does not say.
pub fn anon_huge_page_bytes() -> Option<u64> {
    kib_field_bytes(&std::fs::read_to_string("/proc/self/smaps_rollup").ok()?, "AnonHugePages:")
}

/// The bytes of a `KEY   N kB` line of a /proc file.
fn kib_field_bytes(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// CPU time of the whole process so far.
pub fn process_cpu() -> CpuTimes {
    read(UsageWho::RUSAGE_SELF)
}

#[cfg(test)]
mod tests {
    #[test]
    fn kib_fields_of_proc_files() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\n";
        assert_eq!(super::kib_field_bytes(status, "VmHWM:"), Some(1234 * 1024));
        assert_eq!(super::kib_field_bytes("AnonHugePages:      0 kB\n", "AnonHugePages:"), Some(0));
        assert_eq!(super::kib_field_bytes(status, "VmRSS:"), None);
        assert!(super::peak_resident_bytes().is_some_and(|b| b > 0));
    }
}
