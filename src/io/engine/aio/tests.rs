use super::*;
use crate::base::sys::buffer::{BufferAt, SlotBuffers};
use crate::io::engine::EngineOptions;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

fn temp_file(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
    let f = tempfile::NamedTempFile::new().unwrap();
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
    f.as_file().write_all_at(&data, 0).unwrap();
    (f, data)
}

fn engine(fd: RawFd, buffers: &SlotBuffers, depth: u32, context: u32) -> AioEngine {
    engine_with(fd, buffers, depth, context, false)
}

fn engine_with(fd: RawFd, buffers: &SlotBuffers, depth: u32, context: u32, direct: bool) -> AioEngine {
    engine_with_options(fd, buffers, depth, context, direct, EngineOptions::default())
}

fn engine_with_options(
    fd: RawFd,
    buffers: &SlotBuffers,
    depth: u32,
    context: u32,
    direct: bool,
    options: EngineOptions,
) -> AioEngine {
    let fds = [fd];
    let setup = EngineSetup { fds: &fds, buffers: buffers.region(), queue_depth: depth, direct, options: &options };
    AioEngine::open_with_context(&setup, context).expect("io_setup")
}

fn read(slot: u32, offset: u64, len: u32) -> Request {
    Request { slot, op: Op::Read, file: 0, offset_bytes: offset, len_bytes: len, buffer: BufferAt::Slot }
}

#[test]
fn layouts_match_the_kernel_abi() {
    assert_eq!(size_of::<Iocb>(), 64);
    assert_eq!(size_of::<IoEvent>(), 32);
}

#[test]
fn an_o_direct_batch_goes_two_per_io_submit_or_whole_on_request_and_lands_in_its_slots() {
    use std::os::unix::fs::OpenOptionsExt;
    let (f, data) = temp_file(64 * 4096);
    let Ok(file) = OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(f.path()) else {
        crate::stderr_line!("SKIP: O_DIRECT is not available in {}", std::env::temp_dir().display());
        return;
    };
    let mut buffers = SlotBuffers::new(16, 4096, 4096).unwrap();
    // (--submit-batch, io_submit calls for 16 queued requests)
    for (batch, calls) in [(None, 8), (Some(16), 1)] {
        let options = EngineOptions { submit_batch: batch, ..EngineOptions::default() };
        let mut e = engine_with_options(file.as_raw_fd(), &buffers, 16, 16, true, options);
        for slot in 0..16u32 {
            // Slot s reads block 63 - s.
            // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
            assert_eq!(unsafe { e.queue(read(slot, u64::from(63 - slot) * 4096, 4096)) }, Queued::InFlight);
        }
        e.submit().unwrap();
        assert_eq!(e.counters.io_submit_calls, calls, "16 queued requests, --submit-batch {batch:?}");
        let mut out = [Completion::default(); 16];
        let mut got = 0;
        while got < 16 {
            got += e.reap(16 - got, &mut out[got..]).unwrap();
        }
        for c in &out {
            assert_eq!(c.result, 4096);
        }
        drop(e);
        for slot in 0..16u32 {
            let block = (63 - slot) as usize;
            assert_eq!(buffers.slot_mut(slot), &data[block * 4096..(block + 1) * 4096], "slot {slot}");
            buffers.slot_mut(slot).fill(0);
        }
    }
}

#[test]
fn buffered_requests_go_in_pairs_below_the_plug_threshold() {
    let (f, data) = temp_file(16 * 4096);
    let mut buffers = SlotBuffers::new(16, 4096, 4096).unwrap();
    let mut e = engine(f.as_file().as_raw_fd(), &buffers, 16, 16);
    for slot in 0..16u32 {
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        unsafe { e.queue(read(slot, u64::from(slot) * 4096, 4096)) };
    }
    e.submit().unwrap();
    assert_eq!(e.counters.io_submit_calls, 8);
    let mut out = [Completion::default(); 16];
    assert_eq!(e.reap(16, &mut out).unwrap(), 16, "all completed inside io_submit");
    assert_eq!(e.counters.io_getevents_calls, 0, "taken from the ring without a system call");
    drop(e);
    assert_eq!(buffers.slot_mut(15), &data[15 * 4096..]);
}

#[test]
fn eagain_from_io_submit_is_handled_by_reaping_first() {
    // A context of 1 event (the kernel rounds it up to one page of ring, ~127 events)
    // and 512 buffered reads, which complete inside io_submit but hold their ring
    // entry until reaped: io_submit runs out of room and answers EAGAIN.
    const N: usize = 512;
    let (f, data) = temp_file(N * 512);
    let mut buffers = SlotBuffers::new(N, 512, 4096).unwrap();
    let mut e = engine(f.as_file().as_raw_fd(), &buffers, N as u32, 1);
    for slot in 0..N as u32 {
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        assert_eq!(unsafe { e.queue(read(slot, u64::from(slot) * 512, 512)) }, Queued::InFlight);
    }
    e.submit().unwrap();
    assert!(e.counters.submit_eagain > 0, "expected EAGAIN with a tiny context: {:?}", e.counters);
    let mut out = vec![Completion::default(); N];
    let mut got = 0;
    while got < N {
        got += e.reap(1, &mut out[got..]).unwrap();
    }
    assert_eq!(e.in_flight(), 0);
    let mut seen = [false; N];
    for c in &out {
        assert_eq!(c.result, 512);
        assert!(!seen[c.slot as usize], "slot {} completed twice", c.slot);
        seen[c.slot as usize] = true;
    }
    drop(e);
    for slot in 0..N {
        assert_eq!(buffers.slot_mut(slot as u32), &data[slot * 512..(slot + 1) * 512]);
    }
}

#[test]
fn a_short_transfer_is_resubmitted_and_end_of_file_reports_what_moved() {
    let (f, data) = temp_file(6000);
    let mut buffers = SlotBuffers::new(1, 8192, 4096).unwrap();
    let mut e = engine(f.as_file().as_raw_fd(), &buffers, 1, 1);
    // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
    unsafe { e.queue(read(0, 0, 8192)) };
    e.submit().unwrap();
    let mut out = [Completion::default()];
    assert_eq!(e.reap(1, &mut out).unwrap(), 1);
    assert_eq!(out[0], Completion { slot: 0, result: 6000 });
    assert_eq!(e.counters.short_resubmits, 1, "the remainder was asked for once more");
    drop(e);
    assert_eq!(&buffers.slot_mut(0)[..6000], &data[..]);
}

#[test]
fn a_short_transfer_among_others_in_flight_completes_with_them() {
    let (f, data) = temp_file(6000);
    let mut buffers = SlotBuffers::new(4, 8192, 4096).unwrap();
    let mut e = engine(f.as_file().as_raw_fd(), &buffers, 4, 4);
    // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
    unsafe { e.queue(read(0, 0, 8192)) };
    for slot in 1..4u32 {
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        unsafe { e.queue(read(slot, u64::from(slot) * 1024, 1024)) };
    }
    e.submit().unwrap();
    let mut out = [Completion::default(); 4];
    let mut got = 0;
    while got < 4 {
        got += e.reap(4 - got, &mut out[got..]).unwrap();
    }
    out.sort_by_key(|c| c.slot);
    assert_eq!(out.map(|c| c.result), [6000, 1024, 1024, 1024]);
    assert_eq!(e.in_flight(), 0);
    drop(e);
    assert_eq!(&buffers.slot_mut(0)[..6000], &data[..]);
    assert_eq!(&buffers.slot_mut(3)[..1024], &data[3072..4096]);
}

#[test]
fn writes_land_at_their_offsets() {
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().set_len(8 * 4096).unwrap();
    let file = OpenOptions::new().read(true).write(true).open(f.path()).unwrap();
    let mut buffers = SlotBuffers::new(8, 4096, 4096).unwrap();
    for slot in 0..8u32 {
        buffers.slot_mut(slot).fill(slot as u8 + 1);
    }
    let mut e = engine(file.as_raw_fd(), &buffers, 8, 8);
    for slot in 0..8u32 {
        let req = Request {
            slot,
            op: Op::Write,
            file: 0,
            offset_bytes: u64::from(7 - slot) * 4096,
            len_bytes: 4096,
            buffer: BufferAt::Slot,
        };
        // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
        unsafe { e.queue(req) };
    }
    e.submit().unwrap();
    let mut out = [Completion::default(); 8];
    let mut got = 0;
    while got < 8 {
        got += e.reap(8 - got, &mut out[got..]).unwrap();
    }
    drop(e);
    let written = std::fs::read(f.path()).unwrap();
    for block in 0..8usize {
        assert!(written[block * 4096..(block + 1) * 4096].iter().all(|&b| b == (7 - block) as u8 + 1));
    }
}

#[test]
fn a_refused_request_completes_with_its_error() {
    let (f, _) = temp_file(4096);
    let buffers = SlotBuffers::new(2, 4096, 4096).unwrap();
    let file = std::fs::File::open(f.path()).unwrap();
    let mut e = engine(file.as_raw_fd(), &buffers, 2, 2);
    // A write on a read-only descriptor: io_submit refuses it with EBADF.
    let req = Request { slot: 0, op: Op::Write, file: 0, offset_bytes: 0, len_bytes: 4096, buffer: BufferAt::Slot };
    // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
    unsafe { e.queue(req) };
    // SAFETY: the request's slot buffer is owned by this test and not touched until its completion is reaped.
    unsafe { e.queue(read(1, 0, 4096)) };
    e.submit().unwrap();
    let mut out = [Completion::default(); 2];
    let mut got = 0;
    while got < 2 {
        got += e.reap(2 - got, &mut out[got..]).unwrap();
    }
    out.sort_by_key(|c| c.slot);
    assert_eq!(out[0], Completion { slot: 0, result: -i64::from(libc::EBADF) });
    assert_eq!(out[1], Completion { slot: 1, result: 4096 });
}

#[test]
fn the_aio_max_nr_error_names_the_sysctl() {
    let e = setup_error(32, io::Error::from_raw_os_error(libc::EAGAIN));
    let text = e.to_string();
    assert!(text.contains("fs.aio-max-nr"), "{text}");
    assert!(text.contains("--queue-depth"), "{text}");
}
