//! The wording of what went wrong, as the report and stderr say it: a failed I/O names
//! the operation, the file and the offset; a stuck I/O also says for how long.

use crate::figures::result::StuckIo;
use crate::io::engine::Op;
use crate::io::worker::{IoFailure, IoFailureKind};
use crate::storage::targets::PreparedTarget;

/// What a run stopped by a signal before its window opened says (files it created are
/// removed as it returns).
pub(super) const INTERRUPTED_IN_SET_UP: &str = "interrupted during set-up, before the window opened: no I/O was measured; files this run created have been removed";

/// --fsync-on-close with an engine that moves no bytes: there is nothing to make durable.
pub(super) fn nothing_to_sync(engine: &str) -> String {
    format!("--fsync-on-close: engine {engine} moves no bytes, so no target was opened and nothing was synced")
}

/// "1 I/O", "2 I/Os".
pub(super) fn ios(n: u64) -> String {
    if n == 1 { "1 I/O".to_string() } else { format!("{n} I/Os") }
}

/// "read /dev/sdb at offset 4096 in flight for 31.0 s (32 I/Os in flight)".
pub(super) fn describe_stuck(s: &StuckIo) -> String {
    let age = crate::base::units::display::seconds_ns(s.in_flight_ns);
    let others = match s.in_flight_ios {
        0 | 1 => String::new(),
        n => format!(" ({n} I/Os in flight)"),
    };
    match (&s.op, &s.target, s.offset_bytes) {
        (Some(op), Some(target), Some(offset)) => {
            format!("{op} {target} at offset {offset} did not complete in {age}{others}")
        }
        _ if s.in_flight_ns > 0 => format!("waiting for the kernel for {age}{others}"),
        _ => "not waiting for I/O".to_string(),
    }
}

/// "read /data/x at offset 4096: Input/output error (os error 5)". A full filesystem
/// also says how much the run had written.
pub(super) fn describe_failure(f: &IoFailure, targets: &[PreparedTarget], written_bytes: u64) -> String {
    let path = targets
        .get(f.target as usize)
        .map_or_else(|| format!("target #{}", f.target), |t| t.plan.path.display().to_string());
    let what = match f.kind {
        IoFailureKind::Errno(errno) if errno == libc::ENOSPC || errno == libc::EDQUOT => format!(
            "{}: the filesystem is full ({written_bytes} bytes written by this run before it)",
            std::io::Error::from_raw_os_error(errno)
        ),
        IoFailureKind::Errno(errno) => std::io::Error::from_raw_os_error(errno).to_string(),
        IoFailureKind::Record(errno) => {
            return format!(
                "{} {path} completed, but the --verify-state record of it could not be written: {}",
                f.op.name(),
                std::io::Error::from_raw_os_error(errno)
            );
        }
        IoFailureKind::Short { done_bytes, len_bytes } => {
            let verb = if f.op == Op::Read { "read" } else { "wrote" };
            format!(
                "{verb} only {done_bytes} of {len_bytes} bytes (end of file: was the file truncated during the run?)"
            )
        }
    };
    format!("{} {path} at offset {}: {what}", f.op.name(), f.offset_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_filesystem_says_so_and_how_much_was_written() {
        let f = IoFailure { op: Op::Write, target: 3, offset_bytes: 8192, kind: IoFailureKind::Errno(libc::ENOSPC) };
        let m = describe_failure(&f, &[], 4096);
        assert!(m.starts_with("write target #3 at offset 8192: "), "{m}");
        assert!(m.contains("the filesystem is full (4096 bytes written by this run before it)"), "{m}");
    }

    #[test]
    fn a_record_that_cannot_be_written_is_not_taken_for_a_failed_flush() {
        let f = IoFailure { op: Op::Fdatasync, target: 0, offset_bytes: 0, kind: IoFailureKind::Record(libc::ENOSPC) };
        let m = describe_failure(&f, &[], 4096);
        assert!(
            m.starts_with("fdatasync target #0 completed, but the --verify-state record of it could not be written: "),
            "{m}"
        );
    }

    #[test]
    fn a_short_read_names_the_end_of_file() {
        let f = IoFailure {
            op: Op::Read,
            target: 0,
            offset_bytes: 0,
            kind: IoFailureKind::Short { done_bytes: 512, len_bytes: 4096 },
        };
        let m = describe_failure(&f, &[], 0);
        assert!(m.contains("read only 512 of 4096 bytes (end of file"), "{m}");
    }

    #[test]
    fn a_stuck_io_names_its_file_offset_and_age() {
        let s = StuckIo {
            worker: 0,
            cause: "io_timeout".into(),
            op: Some("read".into()),
            target: Some("/dev/sdb".into()),
            offset_bytes: Some(4096),
            in_flight_ns: 31_000_000_000,
            in_flight_ios: 32,
        };
        assert_eq!(describe_stuck(&s), "read /dev/sdb at offset 4096 did not complete in 31.00 s (32 I/Os in flight)");
        assert_eq!(ios(1), "1 I/O");
        assert_eq!(ios(2), "2 I/Os");
    }
}
