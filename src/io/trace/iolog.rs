//! fio's iolog, versions 2 and 3 (fio's `read_iolog`, `write_iolog`), read line by line
//! through a bound.
//!
//! Version 2: `NAME ACTION [OFFSET LENGTH]`; `NAME wait USEC` spaces what follows (fio
//! ignores waits under 100 µs, and so does this). Version 3: `USEC NAME ACTION [OFFSET
//! LENGTH]`, a timestamp on every line and no `wait`. Actions `add`, `open`, `close` name
//! files; `read`, `write` and `trim` (OFFSET LENGTH) and `sync`, `datasync` (a flush: fio
//! writes `0 0` after it, which is read and not needed) are replayed. Every I/O of every
//! file named goes to the one target of the replay.
//!
//! Must not: read a line without its bound, or accept a line it does not understand.

use super::{MAX_LINE_BYTES, MAX_TRACE_BYTES, MAX_TRACE_IOS, Trace, TraceError, TraceFormat, TraceIo, TraceOp};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The most a trace may span, in microseconds (10 years): what a replay of it schedules,
/// so that no replay of a damaged trace runs for ever (or overflows its nanoseconds).
pub const MAX_TIME_US: u64 = 10 * 365 * 24 * 3600 * 1_000_000;

/// The largest I/O of a trace (as the benchmark's largest block).
const MAX_IO_BYTES: u64 = 1 << 30;

/// Reads the iolog at `path`.
pub fn load(path: &Path, open: super::Opener<'_>) -> Result<Trace, TraceError> {
    let file = open(path, MAX_TRACE_BYTES)
        .map_err(|message| TraceError::File { path: path.display().to_string(), message })?;
    parse(BufReader::new(file), path)
}

/// Reads an iolog from `reader`; `path` names it in errors.
pub fn parse(mut reader: impl BufRead, path: &Path) -> Result<Trace, TraceError> {
    let at = |line: u64, message: String| TraceError::Line { path: path.display().to_string(), line, message };
    let mut buf = Vec::with_capacity(256);
    let mut line_no = 0u64;
    let mut version = 0;
    let mut trace = Trace {
        format: TraceFormat::FioIologV2,
        files: vec![path.to_path_buf()],
        ios: Vec::new(),
        skipped: Default::default(),
        names: Vec::new(),
    };
    // Version 2: the time the waits so far add up to.
    let mut clock_us = 0u64;
    // Version 3: the timestamp of the line before (the log is in time order).
    let mut last_us: Option<(u64, u64)> = None;
    while let Some(text) = bounded_line(&mut reader, &mut buf).map_err(|m| at(line_no + 1, m))? {
        let text = text.trim();
        line_no += 1;
        if version == 0 {
            version = version_of(text).map_err(|m| at(line_no, m))?;
            if version == 3 {
                trace.format = TraceFormat::FioIologV3;
            }
            continue;
        }
        if text.is_empty() {
            continue;
        }
        let mut fields = text.split_ascii_whitespace();
        let time_us = if version == 3 {
            let ts = fields.next().unwrap_or_default();
            Some(ts.parse::<u64>().map_err(|_| {
                at(line_no, format!("`{}`: a version 3 line begins with its timestamp in microseconds", short(ts)))
            })?)
        } else {
            None
        };
        let (Some(name), Some(action)) = (fields.next(), fields.next()) else {
            return Err(at(line_no, format!("`{}`: expected FILE ACTION [OFFSET LENGTH]", short(text))));
        };
        // (A flush's `0 0` is optional: whether it is there, before `number` takes them.)
        let range_given = fields.clone().next().is_some();
        let mut number = |what: &str| -> Result<u64, TraceError> {
            let f = fields.next().ok_or_else(|| at(line_no, format!("`{action}` needs {what}")))?;
            f.parse::<u64>().map_err(|_| at(line_no, format!("`{}` is not {what} (a whole number)", short(f))))
        };
        let op = match action {
            "add" | "open" | "close" => {
                if action == "add" && !trace.names.iter().any(|n| n == name) {
                    trace.names.push(name.to_string());
                }
                continue;
            }
            "wait" if version == 3 => {
                return Err(at(
                    line_no,
                    "`wait` is not allowed in a version 3 iolog (its lines carry timestamps)".into(),
                ));
            }
            "wait" => {
                let us = number("a time in microseconds")?;
                clock_us = after_wait(clock_us, us).map_err(|m| at(line_no, m))?;
                continue;
            }
            "read" => TraceOp::Read,
            "write" => TraceOp::Write,
            "trim" => TraceOp::Trim,
            "sync" => TraceOp::Sync,
            "datasync" => TraceOp::Datasync,
            other => {
                return Err(at(
                    line_no,
                    format!(
                        "`{}` is not an iolog action (add, open, close, read, write, trim, sync, datasync{})",
                        short(other),
                        if version == 2 { ", wait" } else { "" }
                    ),
                ));
            }
        };
        let (offset_bytes, len_bytes) = if op.is_flush() {
            // A flush has no range: fio writes `0 0` (and needs them to read the line);
            // whatever is there is checked as numbers and dropped.
            if range_given {
                number("an offset in bytes")?;
                number("a length in bytes")?;
            }
            (0, 0)
        } else {
            (number("an offset in bytes")?, number("a length in bytes")?)
        };
        if len_bytes == 0 && !op.is_flush() {
            trace.skipped.empty += 1;
            continue;
        }
        check_range(offset_bytes, len_bytes).map_err(|m| at(line_no, m))?;
        if trace.ios.len() >= MAX_TRACE_IOS {
            return Err(at(line_no, format!("more than {MAX_TRACE_IOS} I/Os: split the trace")));
        }
        if let Some(us) = time_us {
            check_timestamp(us, last_us).map_err(|m| at(line_no, m))?;
            last_us = Some((us, line_no));
        }
        let time_us = time_us.unwrap_or(clock_us);
        trace.ios.push(TraceIo { time_ns: time_us * 1000, offset_bytes, len_bytes: len_bytes as u32, op });
    }
    if version == 0 {
        return Err(TraceError::File { path: path.display().to_string(), message: "is empty: not an iolog".into() });
    }
    trace.settle();
    Ok(trace)
}

/// The next line of `reader` in `buf`, read through the bound (None at the end).
fn bounded_line<'b>(reader: &mut impl BufRead, buf: &'b mut Vec<u8>) -> Result<Option<&'b str>, String> {
    buf.clear();
    let n = reader
        .by_ref()
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', buf)
        .map_err(|e| format!("cannot read: {e}"))?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
        return Err(format!("a line longer than {MAX_LINE_BYTES} bytes: not an iolog"));
    }
    std::str::from_utf8(buf).map(Some).map_err(|_| "is not UTF-8 text".to_string())
}

/// The iolog's version, from its first line.
fn version_of(first_line: &str) -> Result<u8, String> {
    match first_line {
        "fio version 2 iolog" => Ok(2),
        "fio version 3 iolog" => Ok(3),
        _ => Err(format!(
            "`{}`: the first line of an iolog is `fio version 2 iolog` or `fio version 3 iolog`",
            short(first_line)
        )),
    }
}

/// Version 2: the clock after a `wait` of `us` (fio ignores waits under 100 µs), bounded by
/// the most a trace may span.
fn after_wait(clock_us: u64, us: u64) -> Result<u64, String> {
    if us < 100 {
        return Ok(clock_us);
    }
    clock_us.checked_add(us).filter(|&t| t <= MAX_TIME_US).ok_or_else(|| {
        format!(
            "the waits so far add up to more than {MAX_TIME_US} µs (the most a trace may span): the trace is damaged or not a recorded one"
        )
    })
}

/// An I/O's range: at most 1 GiB, and inside any file's end.
fn check_range(offset_bytes: u64, len_bytes: u64) -> Result<(), String> {
    if len_bytes > MAX_IO_BYTES {
        return Err(format!("a length of {len_bytes} bytes: at most 1 GiB per I/O"));
    }
    if offset_bytes.checked_add(len_bytes).is_none_or(|end| end > i64::MAX as u64) {
        return Err(format!("offset {offset_bytes} + length {len_bytes} is past any file's end"));
    }
    Ok(())
}

/// Version 3: a line's timestamp within the most a trace may span, and not before the
/// line before it (`last`: its timestamp and line).
fn check_timestamp(us: u64, last: Option<(u64, u64)>) -> Result<(), String> {
    if us > MAX_TIME_US {
        return Err(format!(
            "timestamp {us} µs is past {MAX_TIME_US} µs, the most a trace may span: the trace is damaged"
        ));
    }
    if let Some((before, before_line)) = last
        && us < before
    {
        return Err(format!(
            "timestamp {us} µs goes back before line {before_line}'s ({before} µs): a version 3 iolog is in time order (fio writes it so); the trace is damaged or was edited"
        ));
    }
    Ok(())
}

/// A field quoted in an error: at most 40 characters of it.
fn short(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Trace, TraceError> {
        parse(text.as_bytes(), Path::new("t.log"))
    }

    #[test]
    fn a_version_3_log_keeps_its_times_from_the_first_io() {
        let t = parse_text(
            "fio version 3 iolog\n24 /f add\n188 /f open\n192 /f read 61440 4096\n100148 /f write 4096 8192\n200000 /f sync 0 0\n400445 /f close\n",
        )
        .unwrap();
        assert_eq!(t.format, TraceFormat::FioIologV3);
        assert_eq!(t.ios.len(), 3);
        assert_eq!(t.ios[0], TraceIo { time_ns: 0, offset_bytes: 61440, len_bytes: 4096, op: TraceOp::Read });
        assert_eq!(t.ios[1].time_ns, 99_956_000);
        assert_eq!(t.ios[2], TraceIo { time_ns: 199_808_000, offset_bytes: 0, len_bytes: 0, op: TraceOp::Sync });
        assert_eq!(t.skipped.empty, 0);
        assert_eq!(t.names, vec!["/f".to_string()]);
    }

    #[test]
    fn version_2_waits_space_the_ios_and_short_waits_are_ignored() {
        let t = parse_text("fio version 2 iolog\n/f add\n/f read 0 4096\n/f wait 50\n/f read 4096 4096\n/f wait 2000\n/f write 0 512\n").unwrap();
        let times: Vec<u64> = t.ios.iter().map(|io| io.time_ns).collect();
        assert_eq!(times, vec![0, 0, 2_000_000]);
    }

    #[test]
    fn trims_and_flushes_are_entries_in_the_trace_s_order_and_empty_ios_are_skipped() {
        let t = parse_text(
            "fio version 2 iolog\n/f add\n/f write 0 8192\n/f trim 4096 4096\n/f datasync\n/f sync 0 0\n/f read 0 0\n/f trim 0 0\n",
        )
        .unwrap();
        let ops: Vec<TraceOp> = t.ios.iter().map(|io| io.op).collect();
        assert_eq!(ops, vec![TraceOp::Write, TraceOp::Trim, TraceOp::Datasync, TraceOp::Sync]);
        assert_eq!((t.ios[1].offset_bytes, t.ios[1].len_bytes), (4096, 4096));
        assert_eq!((t.count(TraceOp::Trim), t.flushes(), t.skipped.empty), (1, 2, 2));
        assert_eq!(t.largest_bytes(), 8192);
        let e = parse_text("fio version 2 iolog\n/f trim 4096\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`trim` needs a length"), "{e}");
        let e = parse_text("fio version 2 iolog\n/f sync x 0\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`x` is not an offset"), "{e}");
    }

    #[test]
    fn bad_lines_are_named_with_their_number() {
        let e = parse_text("fio version 3 iolog\n0 /f add\nx /f read 0 1\n").unwrap_err().to_string();
        assert!(e.starts_with("t.log, line 3:"), "{e}");
        let e = parse_text("fio version 3 iolog\n0 /f fly 0 1\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`fly` is not an iolog action"), "{e}");
        let e = parse_text("fio version 3 iolog\n5 /f wait 100\n").unwrap_err().to_string();
        assert!(e.contains("not allowed in a version 3"), "{e}");
        let e = parse_text("fio version 9 iolog\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        let e = parse_text("fio version 2 iolog\n/f read 0\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("needs a length"), "{e}");
    }

    #[test]
    fn a_line_past_the_bound_is_refused_before_it_is_decoded() {
        let text = format!("fio version 2 iolog\n/f read 0 {}\n", "9".repeat(MAX_LINE_BYTES + 10));
        let e = parse_text(&text).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("longer than"), "{e}");
    }
}
