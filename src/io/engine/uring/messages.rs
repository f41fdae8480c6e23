//! What the io_uring engine tells a person when the kernel refuses something: each
//! message names the cause it can tell (sysctl, seccomp, kernel version, memory
//! limits, missing poll queues) and the way out.

use std::io;

/// The errnos this engine names in messages and accepts in fault specs.
const ERRNOS: &[(&str, i32)] = &[
    ("ENOSYS", libc::ENOSYS),
    ("EPERM", libc::EPERM),
    ("EACCES", libc::EACCES),
    ("ENOMEM", libc::ENOMEM),
    ("EINVAL", libc::EINVAL),
    ("EMFILE", libc::EMFILE),
    ("EFAULT", libc::EFAULT),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("EBUSY", libc::EBUSY),
];

#[cfg(any(test, debug_assertions))]
pub(super) fn errno_by_name(name: &str) -> Option<i32> {
    ERRNOS.iter().find(|(n, _)| *n == name).map(|&(_, e)| e)
}

/// "ENOMEM", or "errno 5" for one without a name here.
pub(super) fn errno_name(errno: i32) -> String {
    ERRNOS.iter().find(|&&(_, e)| e == errno).map_or_else(|| format!("errno {errno}"), |(n, _)| n.to_string())
}

/// "ENOMEM: Cannot allocate memory".
pub(super) fn describe_errno(errno: i32) -> String {
    let text = io::Error::from_raw_os_error(errno).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    format!("{}: {text}", errno_name(errno))
}

pub(super) fn describe_io_error(e: &io::Error) -> String {
    describe_errno(e.raw_os_error().unwrap_or(libc::EIO))
}

/// The error for an io_uring_setup that failed with `errno` (not EINVAL), given
/// the value of /proc/sys/kernel/io_uring_disabled when it could be read.
pub(super) fn unavailable_message(errno: i32, disabled: Option<u32>) -> String {
    const ALTERNATIVES: &str = "use --engine libaio or --engine sync instead";
    let cause = match (errno, disabled) {
        (_, Some(2)) => "io_uring is disabled on this system (sysctl kernel.io_uring_disabled = 2)".to_string(),
        (libc::EPERM, Some(1)) => "io_uring is restricted to the group kernel.io_uring_group \
             (sysctl kernel.io_uring_disabled = 1) and this process is neither in it nor privileged"
            .to_string(),
        (libc::ENOSYS, _) => "the kernel does not provide io_uring (io_uring_setup: ENOSYS): a kernel older than \
             5.1 or built without CONFIG_IO_URING, or a seccomp filter that hides it"
            .to_string(),
        (libc::EPERM | libc::EACCES, _) => format!(
            "io_uring_setup was refused ({}): a seccomp filter (container runtimes such as Docker block \
             io_uring by default) or a security module forbids io_uring here",
            errno_name(errno)
        ),
        (libc::ENOMEM, _) => {
            return format!(
                "cannot create a ring ({}): lower --queue-depth, or raise the locked-memory limit \
                 (ulimit -l) on kernels before 5.12, or {ALTERNATIVES}",
                describe_errno(errno)
            );
        }
        _ => return format!("cannot create a ring: io_uring_setup failed ({})", describe_errno(errno)),
    };
    format!("unavailable here: {cause}: {ALTERNATIVES}")
}

/// The error for the first EOPNOTSUPP of a polled ring.
pub(super) fn no_poll_queues_message(path: &str) -> String {
    format!(
        "--iopoll: the device under {path} has no poll queues (the kernel answered EOPNOTSUPP to a polled \
         O_DIRECT I/O). Polled completions need a driver with poll queues: for NVMe, load the driver with \
         `modprobe nvme poll_queues=N` (or boot with nvme.poll_queues=N) and check that \
         /sys/block/<dev>/queue/io_poll reads 1; otherwise run without --iopoll"
    )
}
