use super::messages::unavailable_message;
use super::ring_setup::{SetupFlag, buffer_layout};
use super::*;
use crate::base::sys::buffer::SlotBuffers;
use crate::io::engine::EngineOptions;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

/// Whether this kernel lets us create a ring at all; prints why not.
fn uring_available() -> bool {
    match IoUring::new(2) {
        Ok(_) => true,
        Err(e) => {
            crate::stderr_line!("SKIP: io_uring is not available here: {e}");
            false
        }
    }
}

/// A file of `len` bytes where byte i is (i / 4096 + i) as u8, in a fresh temp dir under /tmp (ext4).
fn pattern_file(len: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::Builder::new().prefix("iopulse-uring-").tempdir_in("/tmp").unwrap();
    let path = dir.path().join("f.dat");
    let data: Vec<u8> = (0..len).map(|i| (i / 4096 + i) as u8).collect();
    File::create(&path).unwrap().write_all(&data).unwrap();
    (dir, path, data)
}

fn open_file(path: &std::path::Path, direct: bool) -> File {
    OpenOptions::new().read(true).write(true).custom_flags(if direct { libc::O_DIRECT } else { 0 }).open(path).unwrap()
}

fn options(register: bool) -> EngineOptions {
    EngineOptions { io_uring: UringOptions { register, ..UringOptions::default() }, ..EngineOptions::default() }
}

fn open(
    fds: &[RawFd],
    buffers: &SlotBuffers,
    direct: bool,
    options: &EngineOptions,
    faults: &Faults,
) -> Result<UringEngine, EngineError> {
    let setup = EngineSetup { fds, buffers: buffers.region(), queue_depth: buffers.slots() as u32, direct, options };
    UringEngine::open_with(&setup, faults)
}

fn fact<'a>(engine: &'a UringEngine, key: &str) -> &'a str {
    engine.said.facts.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str())
}

/// A read of 8 KiB that starts 4 KiB before the end of the file: the kernel moves
/// 4 KiB, the engine asks for the rest, gets end of file, and completes with 4096.
#[test]
fn read_across_end_of_file_completes_with_the_short_count() {
    if !uring_available() {
        return;
    }
    for direct in [false, true] {
        for register in [true, false] {
            let (_dir, path, data) = pattern_file(12 * 1024);
            let file = open_file(&path, direct);
            let mut buffers = SlotBuffers::new(2, 8192, 4096).unwrap();
            let opts = options(register);
            let mut engine =
                open(&[file.as_raw_fd()], &buffers, direct, &opts, &Faults::default()).expect("open io_uring");
            assert_eq!(fact(&engine, "registered_buffers"), if register { "true" } else { "false (--no-register)" });
            let req =
                Request { slot: 1, op: Op::Read, file: 0, offset_bytes: 8192, len_bytes: 8192, buffer: BufferAt::Slot };
            // SAFETY: slot 1 exists, holds 8192 bytes, and is not touched until reaped.
            assert_eq!(unsafe { engine.queue(req) }, Queued::InFlight);
            let mut out = [Completion::default(); 2];
            let n = engine.submit_and_reap(1, &mut out).unwrap();
            assert_eq!(n, 1);
            assert_eq!(out[0], Completion { slot: 1, result: 4096 }, "direct={direct} register={register}");
            drop(engine);
            assert_eq!(&buffers.slot_mut(1)[..4096], &data[8192..], "direct={direct} register={register}");
        }
    }
}

/// Reads and writes over a whole queue land at their offsets, in one batch.
#[test]
fn a_full_queue_of_writes_then_reads_round_trips() {
    if !uring_available() {
        return;
    }
    let depth = 64u32;
    let (_dir, path, _) = pattern_file(depth as usize * 4096);
    let file = open_file(&path, true);
    let mut buffers = SlotBuffers::new(depth as usize, 4096, 4096).unwrap();
    for slot in 0..depth {
        buffers.slot_mut(slot).fill(slot as u8 ^ 0x5a);
    }
    let opts = options(true);
    let mut engine = open(&[file.as_raw_fd()], &buffers, true, &opts, &Faults::default()).unwrap();
    let mut out = vec![Completion::default(); depth as usize];
    for op in [Op::Write, Op::Read] {
        for slot in 0..depth {
            // Slot s goes to block depth-1-s, so offsets and slots differ.
            let req = Request {
                slot,
                op,
                file: 0,
                offset_bytes: u64::from(depth - 1 - slot) * 4096,
                len_bytes: 4096,
                buffer: BufferAt::Slot,
            };
            // SAFETY: each slot is queued once and not touched until reaped.
            assert_eq!(unsafe { engine.queue(req) }, Queued::InFlight);
        }
        let mut done = 0;
        while done < depth as usize {
            let n = engine.submit_and_reap(depth as usize - done, &mut out).unwrap();
            assert!(out[..n].iter().all(|c| c.result == 4096), "{op:?}: {:?}", &out[..n]);
            done += n;
        }
    }
    drop(engine);
    let on_disk = std::fs::read(&path).unwrap();
    for slot in 0..depth {
        let block = (depth - 1 - slot) as usize;
        assert!(on_disk[block * 4096..(block + 1) * 4096].iter().all(|&b| b == slot as u8 ^ 0x5a));
        assert!(buffers.slot(slot).iter().all(|&b| b == slot as u8 ^ 0x5a));
    }
}

/// Dropping the engine with I/O in flight waits for it (no use of freed buffers).
#[test]
fn drop_waits_for_io_in_flight() {
    if !uring_available() {
        return;
    }
    let (_dir, path, _) = pattern_file(1 << 20);
    let file = open_file(&path, true);
    let buffers = SlotBuffers::new(32, 4096, 4096).unwrap();
    let opts = options(true);
    let mut engine = open(&[file.as_raw_fd()], &buffers, true, &opts, &Faults::default()).unwrap();
    for slot in 0..32 {
        let req = Request {
            slot,
            op: Op::Read,
            file: 0,
            offset_bytes: u64::from(slot) * 8192,
            len_bytes: 4096,
            buffer: BufferAt::Slot,
        };
        // SAFETY: each slot is queued once; the engine is dropped before the buffers.
        unsafe { engine.queue(req) };
    }
    engine.submit().unwrap();
    drop(engine); // must not return before the 32 reads are done
    drop(buffers);
}

/// A look without waiting (`reap(0, ..)`) sees an I/O that completed since the last
/// system call. Under DEFER_TASKRUN the completion of an O_DIRECT read waits as task
/// work until the ring is entered: without TASKRUN_FLAG the look found nothing, and a
/// writer drawing ahead generated all its spare slots before refilling the device.
#[test]
fn a_look_without_waiting_sees_a_completion_the_kernel_deferred() {
    if !uring_available() {
        return;
    }
    let (_dir, path, data) = pattern_file(1 << 20);
    let file = open_file(&path, true);
    let buffers = SlotBuffers::new(1, 4096, 4096).unwrap();
    let mut engine = open(&[file.as_raw_fd()], &buffers, true, &options(true), &Faults::default()).unwrap();
    let mut out = [Completion::default(); 1];
    for round in 0..3u32 {
        let offset_bytes = u64::from(round) * 65536;
        let req = Request { slot: 0, op: Op::Read, file: 0, offset_bytes, len_bytes: 4096, buffer: BufferAt::Slot };
        // SAFETY: slot 0 is free (its previous read was reaped); the engine is dropped first.
        unsafe { engine.queue(req) };
        engine.submit().unwrap();
        // Long enough for any device to complete one 4 KiB read; the look below makes
        // no wait of its own.
        let mut seen = 0;
        for _ in 0..200 {
            std::thread::sleep(std::time::Duration::from_millis(5));
            seen = engine.reap(0, &mut out).unwrap();
            if seen > 0 {
                break;
            }
        }
        assert_eq!(seen, 1, "round {round}: the completed read was not seen without waiting ({:?})", engine.said.facts);
        assert_eq!(out[0], Completion { slot: 0, result: 4096 });
        let at = offset_bytes as usize;
        assert!(buffers.slot(0) == &data[at..at + 4096], "round {round}: the bytes read");
    }
}

#[test]
fn refused_flags_fall_back_one_at_a_time_and_say_so_once() {
    if !uring_available() {
        return;
    }
    let (_dir, path, _) = pattern_file(8192);
    let file = open_file(&path, false);
    let buffers = SlotBuffers::new(4, 4096, 4096).unwrap();
    let opts = options(true);
    let faults = Faults::parse("refuse:DEFER_TASKRUN").unwrap();
    let engine = open(&[file.as_raw_fd()], &buffers, false, &opts, &faults).unwrap();
    assert_eq!(fact(&engine, "setup_flags"), "SINGLE_ISSUER|COOP_TASKRUN|TASKRUN_FLAG");
    assert_eq!(fact(&engine, "refused_flags"), "DEFER_TASKRUN");
    assert_eq!(engine.said.notes.len(), 1);
    assert!(engine.said.notes[0].contains("refused IORING_SETUP_DEFER_TASKRUN"), "{:?}", engine.said.notes);
    drop(engine);

    let faults = Faults::parse("refuse:COOP_TASKRUN").unwrap();
    let engine = open(&[file.as_raw_fd()], &buffers, false, &opts, &faults).unwrap();
    // Newest first: DEFER_TASKRUN and SINGLE_ISSUER are given up before COOP_TASKRUN;
    // TASKRUN_FLAG alone is refused by the kernel itself (it needs a task-run mode).
    assert_eq!(fact(&engine, "setup_flags"), "none");
    assert_eq!(fact(&engine, "refused_flags"), "DEFER_TASKRUN|SINGLE_ISSUER|COOP_TASKRUN|TASKRUN_FLAG");
    assert_eq!(engine.said.notes.len(), 1);
}

#[test]
fn refused_buffer_registration_falls_back_to_plain_reads() {
    if !uring_available() {
        return;
    }
    let (_dir, path, data) = pattern_file(16 * 1024);
    let file = open_file(&path, true);
    let buffers = SlotBuffers::new(4, 4096, 4096).unwrap();
    let opts = options(true);
    let faults = Faults::parse("register_buffers:ENOMEM,register_files:EMFILE").unwrap();
    let mut engine = open(&[file.as_raw_fd()], &buffers, true, &opts, &faults).unwrap();
    assert!(fact(&engine, "registered_buffers").starts_with("false (refused: ENOMEM"), "{:?}", engine.said.facts);
    assert!(fact(&engine, "registered_files").starts_with("false (refused: EMFILE"), "{:?}", engine.said.facts);
    assert_eq!(engine.said.notes.len(), 2, "{:?}", engine.said.notes);
    assert!(engine.said.notes[0].contains("ulimit -l") && engine.said.notes[0].contains("plain Read/Write"));
    let req = Request { slot: 3, op: Op::Read, file: 0, offset_bytes: 4096, len_bytes: 4096, buffer: BufferAt::Slot };
    // SAFETY: slot 3 is not touched until reaped.
    unsafe { engine.queue(req) };
    let mut out = [Completion::default(); 4];
    assert_eq!(engine.submit_and_reap(1, &mut out).unwrap(), 1);
    assert_eq!(out[0], Completion { slot: 3, result: 4096 });
    drop(engine);
    assert_eq!(buffers.slot(3), &data[4096..8192]);
}

#[test]
fn unavailable_io_uring_names_the_cause_and_the_alternatives() {
    let (_dir, path, _) = pattern_file(4096);
    let file = open_file(&path, false);
    let buffers = SlotBuffers::new(1, 4096, 4096).unwrap();
    let opts = options(true);
    for (faults, cause) in [
        ("setup:ENOSYS,disabled:0", "does not provide io_uring"),
        ("setup:EPERM,disabled:0", "seccomp"),
        ("setup:EPERM,disabled:2", "kernel.io_uring_disabled = 2"),
        ("setup:EPERM,disabled:1", "kernel.io_uring_group"),
    ] {
        let err = open(&[file.as_raw_fd()], &buffers, false, &opts, &Faults::parse(faults).unwrap())
            .err()
            .expect("open must fail");
        let text = err.to_string();
        assert!(text.contains(cause), "{faults}: {text}");
        assert!(text.contains("--engine libaio") && text.contains("--engine sync"), "{faults}: {text}");
    }
}

#[test]
fn unavailable_messages() {
    let m = unavailable_message(libc::ENOSYS, None);
    assert!(m.contains("ENOSYS") && m.contains("--engine libaio or --engine sync"), "{m}");
    let m = unavailable_message(libc::EPERM, Some(0));
    assert!(m.contains("EPERM") && m.contains("seccomp"), "{m}");
    assert!(unavailable_message(libc::EPERM, Some(2)).contains("io_uring_disabled = 2"));
    assert!(unavailable_message(libc::ENOSYS, Some(2)).contains("io_uring_disabled = 2"));
    assert!(unavailable_message(libc::EPERM, Some(1)).contains("io_uring_disabled = 1"));
    let m = unavailable_message(libc::ENOMEM, None);
    assert!(m.contains("--queue-depth") && m.contains("ENOMEM"), "{m}");
    let m = unavailable_message(libc::EMFILE, Some(0));
    assert!(m.starts_with("cannot create a ring") && m.contains("EMFILE"), "{m}");
    let m = no_poll_queues_message("/x");
    assert!(m.contains("/x") && m.contains("poll queues") && m.contains("poll_queues"), "{m}");
}

#[test]
fn fault_specs_parse_and_typos_are_refused() {
    let f = Faults::parse("setup:EPERM, disabled:1,refuse:SINGLE_ISSUER,register_buffers:ENOMEM").unwrap();
    assert_eq!(f.setup_errno, Some(libc::EPERM));
    assert_eq!(f.disabled, Some(1));
    assert_eq!(f.refuse, vec![SetupFlag::SingleIssuer]);
    assert_eq!(f.register_buffers_errno, Some(libc::ENOMEM));
    assert_eq!(Faults::parse("").unwrap(), Faults::default());
    assert!(Faults::parse("setup:EWHAT").is_err());
    assert!(Faults::parse("refuse:SQPOLL").is_err());
    assert!(Faults::parse("bogus:1").is_err());
    assert!(Faults::parse("setup").is_err());
}

#[test]
fn buffer_layout_stays_within_kernel_limits() {
    let region = |slots, stride| BufferRegion {
        base: std::ptr::null_mut(),
        slot_stride_bytes: stride,
        slot_len_bytes: stride,
        slots,
        area: std::ptr::null_mut(),
        area_len_bytes: 0,
    };
    assert_eq!(buffer_layout(&region(32, 4096)), Some(1));
    assert_eq!(buffer_layout(&region(16384, 4096)), Some(1));
    assert_eq!(buffer_layout(&region(32768, 4096)), Some(2));
    assert_eq!(buffer_layout(&region(4, 1 << 30)), Some(1));
    assert_eq!(buffer_layout(&region(32768, 1 << 20)), Some(2));
    assert_eq!(buffer_layout(&region(32768, 1 << 30)), None);
}
