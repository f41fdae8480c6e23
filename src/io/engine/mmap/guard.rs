//! The SIGBUS guard of the mmap engine: a process-wide handler, armed per copy through
//! thread-local state. A page of a mapped file truncated by someone else raises SIGBUS
//! when touched; inside an armed copy the handler maps an anonymous page over it so that
//! the copy can finish, and records the address. A SIGBUS outside an armed copy goes to
//! the handler that was there before (or kills the process as usual).

use std::io;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering, compiler_fence};

thread_local! {
    /// The mapped range the current copy touches; empty when no copy runs.
    static ARMED_LO: AtomicUsize = const { AtomicUsize::new(0) };
    static ARMED_HI: AtomicUsize = const { AtomicUsize::new(0) };
    /// Lowest missing page met by the current copy, 0 if none.
    static FAULT: AtomicUsize = const { AtomicUsize::new(0) };
}

static PAGE_BYTES: AtomicUsize = AtomicUsize::new(4096);
/// What SIGBUS did before the guard was installed.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static INSTALLED: OnceLock<Result<(), i32>> = OnceLock::new();

/// Installs the handler once per process.
pub fn install() -> io::Result<()> {
    let result = INSTALLED.get_or_init(|| {
        // SAFETY: sysconf reads a constant; sigaction with a null new action only reads
        // the current one into memory we own; the handler installed is async-signal-safe
        // (thread-local loads and stores, mmap, sigaction).
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE_BYTES.store(page as usize, Ordering::Relaxed);
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, ptr_null(), &mut old) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
            }
            let _ = PREVIOUS.set(old);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
            }
        }
        Ok(())
    });
    result.map_err(io::Error::from_raw_os_error)
}

/// The page size the handler works in.
pub(super) fn page_bytes() -> usize {
    PAGE_BYTES.load(Ordering::Relaxed)
}

fn ptr_null() -> *const libc::sigaction {
    std::ptr::null()
}

/// Marks `[lo, lo + len)` as the mapped range the next copy touches.
#[inline(always)]
pub(super) fn arm(lo: usize, len: usize) {
    ARMED_LO.with(|a| a.store(lo, Ordering::Relaxed));
    ARMED_HI.with(|a| a.store(lo + len, Ordering::Relaxed));
    compiler_fence(Ordering::SeqCst);
}

/// Ends the copy; returns the lowest missing page it met (0 if none).
#[inline(always)]
pub(super) fn disarm() -> usize {
    compiler_fence(Ordering::SeqCst);
    ARMED_HI.with(|a| a.store(0, Ordering::Relaxed));
    let fault = FAULT.with(|f| f.load(Ordering::Relaxed));
    if fault != 0 {
        FAULT.with(|f| f.store(0, Ordering::Relaxed));
    }
    fault
}

extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers; si_addr is the
    // faulting address for SIGBUS.
    let addr = unsafe { (*info).si_addr() } as usize;
    let lo = ARMED_LO.with(|a| a.load(Ordering::Relaxed));
    let hi = ARMED_HI.with(|a| a.load(Ordering::Relaxed));
    if addr >= lo && addr < hi {
        let page = PAGE_BYTES.load(Ordering::Relaxed);
        let start = addr & !(page - 1);
        // SAFETY: replaces one page of the armed file mapping (ours, being copied by
        // this thread) with a private zero page, so the interrupted copy can finish.
        let mapped = unsafe {
            libc::mmap(
                start as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped != libc::MAP_FAILED {
            FAULT.with(|f| {
                let seen = f.load(Ordering::Relaxed);
                if seen == 0 || start < seen {
                    f.store(start, Ordering::Relaxed);
                }
            });
            return;
        }
    }
    // Not ours: what SIGBUS did before, or the default (the fault repeats and kills).
    // SAFETY: calls the previous handler with the arguments the kernel gave us, or
    // restores the default action; both are async-signal-safe.
    unsafe {
        match PREVIOUS.get() {
            Some(old) if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN => {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(old.sa_sigaction);
                    handler(signal, info, context);
                } else {
                    let handler: extern "C" fn(libc::c_int) = std::mem::transmute(old.sa_sigaction);
                    handler(signal);
                }
            }
            _ => {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
            }
        }
    }
}
