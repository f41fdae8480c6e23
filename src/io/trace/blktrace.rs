//! blktrace's binary records (`blktrace -d DEV -o NAME` writes `NAME.blktrace.CPU`, one
//! file per CPU; `blkparse -d FILE` writes the same records merged into one file).
//!
//! A record is 48 bytes in the byte order of the machine that traced (`struct
//! blk_io_trace` of the kernel's `blktrace_api.h`: magic and version, sequence, time in
//! ns, sector, bytes, action, pid, device, cpu, error, payload length), followed by its
//! payload. The I/Os replayed are the queue events (`__BLK_TA_QUEUE`, the moment the
//! I/O entered the block layer), as fio replays them: reads and writes by their
//! category bits; a discard is a trim of its range; a flush without data
//! (`BLK_TC_FLUSH`, 0 bytes) is a flush, a write with PREFLUSH (`BLK_TC_FLUSH` and data)
//! a flush then the write, a FUA write (`BLK_TC_FUA`) the write then a flush (the
//! kernel's own order: the cache is flushed before the write, the write is stable
//! before it completes); notes (`BLK_TC_NOTIFY`) and passthrough requests (`BLK_TC_PC`)
//! are not I/O. A flush is `TraceOp::Datasync` (a device's cache flush makes the data
//! written so far stable, as fdatasync does on a file). The files of every CPU are merged
//! by time (the entries of one record keep their order at its time).
//!
//! Must not: read a payload without its bound, or trust a length it has not checked.

use super::{MAX_TRACE_BYTES, MAX_TRACE_IOS, Trace, TraceError, TraceFormat, TraceIo, TraceOp};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// `BLK_IO_TRACE_MAGIC`: the top 24 bits of a record's first word (the low 8: its version).
pub const MAGIC: u32 = 0x6561_7400;
/// The versions of the record read (6 and 7 share the layout).
const VERSIONS: [u32; 2] = [6, 7];
/// Bytes of a record before its payload.
pub const RECORD_BYTES: usize = 48;
/// The largest payload read (a `u16`'s range).
const MAX_PDU_BYTES: usize = u16::MAX as usize;

/// The action's low 16 bits: what happened (`__BLK_TA_QUEUE` is 1).
const TA_QUEUE: u32 = 1;
/// The action's categories (`BLK_TC_*`, shifted up by 16).
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TC_FUA: u32 = 1 << 15;

/// Whether `first4` is a record's magic, in either byte order.
pub fn is_record(first4: &[u8]) -> bool {
    let Ok(bytes) = <[u8; 4]>::try_from(first4) else { return false };
    order(bytes).is_some()
}

/// The byte order of a record whose first word is `bytes` (true: little-endian).
fn order(bytes: [u8; 4]) -> Option<bool> {
    let ok = |word: u32| word & 0xffff_ff00 == MAGIC && VERSIONS.contains(&(word & 0xff));
    if ok(u32::from_le_bytes(bytes)) {
        Some(true)
    } else if ok(u32::from_be_bytes(bytes)) {
        Some(false)
    } else {
        None
    }
}

/// The per-CPU files of the blktrace `path` names: `NAME.blktrace.N` (every N beside it),
/// or `NAME` when no such file exists but `NAME.blktrace.0` does. `None`: not that form.
pub fn cpu_files(path: &Path) -> Option<Vec<PathBuf>> {
    let name = path.file_name()?.to_str()?;
    let base = match name.rsplit_once(".blktrace.") {
        Some((base, cpu)) if !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()) => base.to_string(),
        _ if !path.exists() && path.with_file_name(format!("{name}.blktrace.0")).exists() => name.to_string(),
        _ => return None,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let prefix = format!("{base}.blktrace.");
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_prefix(&prefix)?.parse::<u64>().ok()?;
            Some((n, dir.join(e.file_name())))
        })
        .collect();
    files.sort();
    (!files.is_empty()).then(|| files.into_iter().map(|(_, p)| p).collect())
}

/// Reads every file of a blktrace and merges their I/Os by time.
pub fn load(files: &[PathBuf], open: super::Opener<'_>) -> Result<Trace, TraceError> {
    let mut trace = Trace {
        format: TraceFormat::Blktrace,
        files: files.to_vec(),
        ios: Vec::new(),
        skipped: Default::default(),
        names: Vec::new(),
    };
    for path in files {
        let file = open(path, MAX_TRACE_BYTES)
            .map_err(|message| TraceError::File { path: path.display().to_string(), message })?;
        read_records(BufReader::new(file), path, &mut trace)?;
    }
    trace.settle();
    Ok(trace)
}

/// Reads the records of one file into `trace`.
pub fn read_records(mut reader: impl Read, path: &Path, trace: &mut Trace) -> Result<(), TraceError> {
    let mut head = [0u8; RECORD_BYTES];
    let mut pdu = vec![0u8; MAX_PDU_BYTES];
    let mut byte = 0u64;
    let mut record = 0u64;
    let at = |record: u64, byte: u64, message: String| TraceError::Record {
        path: path.display().to_string(),
        record,
        byte,
        message,
    };
    loop {
        let got = read_full(&mut reader, &mut head).map_err(|e| at(record + 1, byte, format!("cannot read: {e}")))?;
        if got == 0 {
            break;
        }
        record += 1;
        if got < RECORD_BYTES {
            return Err(at(record, byte, format!("cut short: {got} of a record's {RECORD_BYTES} bytes")));
        }
        let Some(little) = order([head[0], head[1], head[2], head[3]]) else {
            return Err(at(record, byte, "not a blktrace record (its magic is not blktrace's, version 6 or 7)".into()));
        };
        let u32_at = |i: usize| {
            let b = [head[i], head[i + 1], head[i + 2], head[i + 3]];
            if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) }
        };
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&head[i..i + 8]);
            if little { u64::from_le_bytes(b) } else { u64::from_be_bytes(b) }
        };
        let pdu_len = {
            let b = [head[46], head[47]];
            usize::from(if little { u16::from_le_bytes(b) } else { u16::from_be_bytes(b) })
        };
        let (time_ns, sector, bytes, action, device) = (u64_at(8), u64_at(16), u32_at(24), u32_at(28), u32_at(36));
        // Times count from the trace's start: one past what any trace spans is damage, and a
        // replay scheduled by it would never end.
        if time_ns / 1000 > super::iolog::MAX_TIME_US {
            return Err(at(
                record,
                byte,
                format!(
                    "time {time_ns} ns is past {} µs from the trace's start, the most a trace may span: the trace is damaged",
                    super::iolog::MAX_TIME_US
                ),
            ));
        }
        let got =
            read_full(&mut reader, &mut pdu[..pdu_len]).map_err(|e| at(record, byte, format!("cannot read: {e}")))?;
        if got < pdu_len {
            return Err(at(record, byte, format!("cut short: {got} of its payload's {pdu_len} bytes")));
        }
        byte += (RECORD_BYTES + pdu_len) as u64;
        let category = action >> 16;
        if action & 0xffff != TA_QUEUE || category & (TC_NOTIFY | TC_PC) != 0 {
            continue;
        }
        let name = format!("{}:{}", device >> 20, device & 0xf_ffff);
        if !trace.names.contains(&name) {
            trace.names.push(name);
        }
        let flush = category & TC_FLUSH != 0;
        let discard = category & TC_DISCARD != 0;
        if bytes == 0 {
            if flush && !discard {
                push(trace, TraceIo { time_ns, offset_bytes: 0, len_bytes: 0, op: TraceOp::Datasync })
                    .map_err(|m| at(record, byte, m))?;
            } else {
                trace.skipped.empty += 1;
            }
            continue;
        }
        let offset_bytes = sector
            .checked_mul(512)
            .filter(|o| o.checked_add(u64::from(bytes)).is_some_and(|end| end <= i64::MAX as u64))
            .ok_or_else(|| at(record, byte, format!("sector {sector} is past any device's end")))?;
        let op = if discard {
            TraceOp::Trim
        } else if category & TC_WRITE != 0 {
            TraceOp::Write
        } else {
            TraceOp::Read
        };
        let flush_io = TraceIo { time_ns, offset_bytes: 0, len_bytes: 0, op: TraceOp::Datasync };
        // PREFLUSH: the cache is flushed before the write goes (a discard carries none).
        if flush && op == TraceOp::Write {
            push(trace, flush_io).map_err(|m| at(record, byte, m))?;
        }
        push(trace, TraceIo { time_ns, offset_bytes, len_bytes: bytes, op }).map_err(|m| at(record, byte, m))?;
        // FUA: the write is stable before it completes; a flush after it is the same.
        if category & TC_FUA != 0 && op == TraceOp::Write {
            push(trace, flush_io).map_err(|m| at(record, byte, m))?;
        }
    }
    Ok(())
}

/// Adds an entry, within the bound on a trace's entries.
fn push(trace: &mut Trace, io: TraceIo) -> Result<(), String> {
    if trace.ios.len() >= MAX_TRACE_IOS {
        return Err(format!("more than {MAX_TRACE_IOS} entries: split the trace"));
    }
    trace.ios.push(io);
    Ok(())
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(time_ns: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&(MAGIC | 7).to_le_bytes());
        r.extend_from_slice(&1u32.to_le_bytes());
        r.extend_from_slice(&time_ns.to_le_bytes());
        r.extend_from_slice(&sector.to_le_bytes());
        r.extend_from_slice(&bytes.to_le_bytes());
        r.extend_from_slice(&action.to_le_bytes());
        r.extend_from_slice(&[0u8; 12]);
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
        r.extend_from_slice(pdu);
        r
    }

    fn empty_trace() -> Trace {
        Trace { format: TraceFormat::Blktrace, files: vec![], ios: vec![], skipped: Default::default(), names: vec![] }
    }

    #[test]
    fn queue_events_are_the_ios_and_the_rest_is_skipped_or_ignored() {
        let queue = |cat: u32| (cat << 16) | TA_QUEUE;
        let mut bytes = record(1000, 8, 4096, queue(TC_WRITE), &[]);
        bytes.extend(record(2000, 8, 4096, (TC_WRITE << 16) | 7, &[])); // an issue: not replayed
        bytes.extend(record(3000, 16, 8192, queue(1), &[1, 2, 3])); // a read, with a payload
        bytes.extend(record(4000, 0, 0, queue(TC_FLUSH | TC_WRITE), &[]));
        bytes.extend(record(5000, 0, 0, TC_NOTIFY << 16, b"name"));
        let mut t = empty_trace();
        read_records(&bytes[..], Path::new("t.blktrace.0"), &mut t).unwrap();
        assert_eq!(t.ios.len(), 3);
        assert_eq!(t.ios[0], TraceIo { time_ns: 1000, offset_bytes: 4096, len_bytes: 4096, op: TraceOp::Write });
        assert_eq!(t.ios[1], TraceIo { time_ns: 3000, offset_bytes: 8192, len_bytes: 8192, op: TraceOp::Read });
        assert_eq!(t.ios[2], TraceIo { time_ns: 4000, offset_bytes: 0, len_bytes: 0, op: TraceOp::Datasync });
        assert_eq!(t.skipped.empty, 0);
    }

    #[test]
    fn discards_are_trims_and_preflush_and_fua_put_flushes_around_their_write() {
        let queue = |cat: u32| (cat << 16) | TA_QUEUE;
        let mut bytes = record(1000, 8, 1 << 20, queue(TC_DISCARD | TC_WRITE), &[]);
        bytes.extend(record(2000, 16, 4096, queue(TC_WRITE | TC_FLUSH), &[])); // PREFLUSH
        bytes.extend(record(3000, 24, 4096, queue(TC_WRITE | TC_FUA), &[])); // FUA
        bytes.extend(record(4000, 32, 4096, queue(TC_WRITE | TC_FLUSH | TC_FUA), &[])); // both
        bytes.extend(record(5000, 40, 0, queue(TC_DISCARD | TC_WRITE), &[])); // empty
        let mut t = empty_trace();
        read_records(&bytes[..], Path::new("t.blktrace.0"), &mut t).unwrap();
        let seen: Vec<(u64, TraceOp, u64, u32)> =
            t.ios.iter().map(|io| (io.time_ns, io.op, io.offset_bytes, io.len_bytes)).collect();
        use TraceOp::{Datasync as F, Trim, Write};
        assert_eq!(
            seen,
            vec![
                (1000, Trim, 4096, 1 << 20),
                (2000, F, 0, 0),
                (2000, Write, 8192, 4096),
                (3000, Write, 12288, 4096),
                (3000, F, 0, 0),
                (4000, F, 0, 0),
                (4000, Write, 16384, 4096),
                (4000, F, 0, 0),
            ]
        );
        assert_eq!((t.flushes(), t.count(Trim), t.skipped.empty), (4, 1, 1));
        assert_eq!(t.largest_bytes(), 4096, "a trim needs no buffer");
    }

    #[test]
    fn a_cut_record_and_a_bad_magic_name_the_record_and_byte() {
        let mut bytes = record(1000, 8, 4096, (TC_WRITE << 16) | TA_QUEUE, &[]);
        bytes.extend_from_slice(&[0u8; 20]);
        let e = read_records(&bytes[..], Path::new("t"), &mut empty_trace()).unwrap_err().to_string();
        assert!(e.contains("record 2 (byte 48)") && e.contains("cut short"), "{e}");
        let e = read_records(&[7u8; 48][..], Path::new("t"), &mut empty_trace()).unwrap_err().to_string();
        assert!(e.contains("record 1 (byte 0)") && e.contains("magic"), "{e}");
    }
}
