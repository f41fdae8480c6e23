//! Binding the calling thread and its memory: raw system calls through libc
//! (sched_setaffinity, sched_getaffinity, sched_getcpu, set_mempolicy, mbind,
//! get_mempolicy), so the default build needs no system library.
//!
//! Masks are sized to the largest CPU or node asked for, so machines with more
//! than 1024 CPUs (glibc's `cpu_set_t`) work too.

use std::io;

/// `MPOL_BIND` from <linux/mempolicy.h>: allocate only on the given nodes.
const MPOL_BIND: libc::c_int = 2;
/// `MPOL_MF_MOVE`: move the range's existing pages to the policy's nodes.
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;
/// `MPOL_F_NODE` | `MPOL_F_ADDR`: ask get_mempolicy for the node of the page at an address.
const MPOL_F_NODE: libc::c_ulong = 1 << 0;
const MPOL_F_ADDR: libc::c_ulong = 1 << 1;

/// A bit mask of `ids`, in 64-bit words, as the kernel reads CPU and node masks.
fn mask_of(ids: &[u32]) -> Vec<u64> {
    let words = ids.iter().max().map_or(1, |&m| m as usize / 64 + 1);
    let mut mask = vec![0u64; words];
    for &id in ids {
        mask[id as usize / 64] |= 1 << (id % 64);
    }
    mask
}

/// Pins the calling thread to `cpus`.
pub fn set_thread_affinity(cpus: &[u32]) -> io::Result<()> {
    let mask = mask_of(cpus);
    // SAFETY: the mask is a live buffer of exactly `mask.len() * 8` bytes that the
    // kernel only reads; pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setaffinity, 0 as libc::pid_t, mask.len() * 8, mask.as_ptr()) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// The CPUs the calling thread may run on (cgroup cpuset, taskset).
pub fn allowed_cpus() -> io::Result<Vec<u32>> {
    let mut words = 16; // 1024 CPUs, doubled while the kernel says the mask is too small
    loop {
        let mut mask = vec![0u64; words];
        // SAFETY: the kernel writes at most `words * 8` bytes into `mask`, which is
        // live and that long; pid 0 is the calling thread.
        let rc = unsafe { libc::syscall(libc::SYS_sched_getaffinity, 0 as libc::pid_t, words * 8, mask.as_mut_ptr()) };
        if rc >= 0 {
            let mut cpus = Vec::new();
            for (w, &bits) in mask.iter().enumerate() {
                for b in 0..64 {
                    if bits & (1 << b) != 0 {
                        cpus.push((w * 64 + b) as u32);
                    }
                }
            }
            return Ok(cpus);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINVAL) && words < 1 << 16 {
            words *= 2;
            continue;
        }
        return Err(err);
    }
}

/// The CPU the calling thread is running on now.
pub fn current_cpu() -> Option<u32> {
    nix::sched::sched_getcpu().ok().and_then(|cpu| u32::try_from(cpu).ok())
}

/// Binds every later allocation of the calling thread to `node` (MPOL_BIND).
pub fn bind_thread_memory(node: u32) -> io::Result<()> {
    let mask = mask_of(&[node]);
    let maxnode = mask.len() as libc::c_ulong * 64 + 1;
    // SAFETY: the kernel reads `maxnode - 1` bits from `mask`, which is live and
    // holds exactly that many bits.
    let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_BIND, mask.as_ptr(), maxnode) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Binds the pages of `[addr, addr + len)` to `node` and moves those already
/// there (best effort: a page that cannot move stays, and the worker's
/// `buffer_node_seen` shows it). `addr` must be page aligned.
pub fn bind_range(addr: *mut u8, len: usize, node: u32) -> io::Result<()> {
    let mask = mask_of(&[node]);
    let maxnode = mask.len() as libc::c_ulong * 64 + 1;
    // SAFETY: mbind changes only the memory policy of the range (and may move its
    // pages, which keeps their contents); the caller owns the range. The kernel
    // reads `maxnode - 1` bits from `mask`, which is live and that long.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr as libc::c_ulong,
            len as libc::c_ulong,
            MPOL_BIND as libc::c_ulong,
            mask.as_ptr(),
            maxnode,
            MPOL_MF_MOVE as libc::c_ulong,
        )
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// The NUMA node of the page at `addr` (faulting it in if it is not yet).
pub fn node_of_address(addr: *const u8) -> Option<u32> {
    let mut node: libc::c_int = -1;
    // SAFETY: the kernel writes one int into `node`; with no node mask (null, 0)
    // it writes nothing else. `addr` is only looked up, in the caller's mapping.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            addr as libc::c_ulong,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    if rc == 0 { u32::try_from(node).ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(mask_of(&[0, 2]), vec![0b101]);
        assert_eq!(mask_of(&[64]), vec![0, 1]);
        assert_eq!(mask_of(&[]), vec![0]);
    }

    /// On the real machine: a thread pinned to a CPU runs on it.
    #[test]
    fn a_pinned_thread_runs_on_its_cpu() {
        let allowed = allowed_cpus().expect("sched_getaffinity");
        assert!(!allowed.is_empty());
        for &cpu in &allowed {
            let seen = std::thread::spawn(move || {
                set_thread_affinity(&[cpu]).expect("sched_setaffinity");
                // Yield a few times: the scheduler may only move us at a switch.
                for _ in 0..3 {
                    std::thread::yield_now();
                }
                (current_cpu(), allowed_cpus().unwrap())
            })
            .join()
            .unwrap();
            assert_eq!(seen, (Some(cpu), vec![cpu]));
        }
    }
}
