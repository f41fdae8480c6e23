//! `--write-iolog`: a run's I/Os as a fio iolog v3 (fio's `write_iolog` format since fio
//! 3.31): the first line `fio version 3 iolog`, then `USEC FILE ACTION [OFFSET LENGTH]`,
//! each target added and opened at 0 and closed at the run's end. fio's `read_iolog` and
//! `iopulse replay` read it.
//!
//! Must not: compute (the log is `result::io_log`'s, in order).

use crate::figures::result::io_log::IoLog;
use std::fmt::Write;

/// The iolog's text.
pub fn render(log: &IoLog) -> String {
    let mut out = String::with_capacity(32 + log.ios.len() * 48);
    out.push_str("fio version 3 iolog\n");
    for name in &log.targets {
        let _ = writeln!(out, "0 {name} add");
    }
    for name in &log.targets {
        let _ = writeln!(out, "0 {name} open");
    }
    for io in &log.ios {
        let name = log.targets.get(usize::from(io.target)).map_or("?", String::as_str);
        let _ = writeln!(out, "{} {name} {} {} {}", io.time_us, io.action.fio_name(), io.offset_bytes, io.len_bytes);
    }
    for name in &log.targets {
        let _ = writeln!(out, "{} {name} close", log.end_us);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::result::io_log::{IoAction, LoggedIo};

    #[test]
    fn a_log_is_fio_version_3_and_reads_back_as_the_same_ios() {
        let log = IoLog {
            targets: vec!["/d/t.dat".into()],
            ios: vec![
                LoggedIo { time_us: 5, target: 0, action: IoAction::Write, offset_bytes: 4096, len_bytes: 4096 },
                LoggedIo { time_us: 9, target: 0, action: IoAction::Sync, offset_bytes: 0, len_bytes: 0 },
                LoggedIo { time_us: 12, target: 0, action: IoAction::Read, offset_bytes: 0, len_bytes: 512 },
            ],
            end_us: 20,
        };
        let text = render(&log);
        assert_eq!(
            text,
            "fio version 3 iolog\n0 /d/t.dat add\n0 /d/t.dat open\n5 /d/t.dat write 4096 4096\n9 /d/t.dat sync 0 0\n12 /d/t.dat read 0 512\n20 /d/t.dat close\n"
        );
        let back = crate::io::trace::iolog::parse(text.as_bytes(), std::path::Path::new("x")).unwrap();
        assert_eq!(back.ios.len(), 3);
        assert_eq!((back.ios[1].time_ns, back.ios[1].op), (4_000, crate::io::trace::TraceOp::Sync));
        assert_eq!((back.ios[2].time_ns, back.ios[2].offset_bytes), (7_000, 0));
    }
}
