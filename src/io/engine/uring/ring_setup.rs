//! The ring's set-up, once per worker before the start line: the flags the kernel takes
//! (dropped one at a time while it answers EINVAL), the files and buffers registered (or
//! the fallback said once), and the engine made from them. Not on the hot path.

use super::messages::{describe_errno, describe_io_error, unavailable_message};
use super::*;
use crate::base::primitives::spin_wait::{CompletionWait, SpinWait};
use crate::base::sys::buffer::{BufferAt, BufferRegion};
use crate::io::engine::{EngineError, EngineSetup, Op};
use io_uring::{IoUring, squeue};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// Optional set-up flags, in the order they are given up when the kernel refuses:
/// newest first (DEFER_TASKRUN 6.1, SINGLE_ISSUER 6.0, COOP_TASKRUN and TASKRUN_FLAG
/// 5.19), so an older kernel keeps every flag it knows. DEFER_TASKRUN needs
/// SINGLE_ISSUER and goes first; TASKRUN_FLAG needs one of the task-run modes and goes
/// last (alone, the kernel refuses it, and it is given up too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SetupFlag {
    DeferTaskrun,
    SingleIssuer,
    CoopTaskrun,
    TaskrunFlag,
}

impl SetupFlag {
    pub(super) fn name(self) -> &'static str {
        match self {
            SetupFlag::DeferTaskrun => "DEFER_TASKRUN",
            SetupFlag::SingleIssuer => "SINGLE_ISSUER",
            SetupFlag::CoopTaskrun => "COOP_TASKRUN",
            SetupFlag::TaskrunFlag => "TASKRUN_FLAG",
        }
    }
}

/// What `build_ring` settled on.
pub(super) struct Ring {
    ring: IoUring,
    flags: Vec<&'static str>,
    refused: Vec<SetupFlag>,
}

/// Creates the ring, giving up optional flags one at a time while the kernel says EINVAL.
pub(super) fn build_ring(entries: u32, options: &UringOptions, faults: &Faults) -> Result<Ring, EngineError> {
    let mut optional: Vec<SetupFlag> = if options.sqpoll {
        vec![SetupFlag::SingleIssuer]
    } else {
        vec![SetupFlag::DeferTaskrun, SetupFlag::SingleIssuer, SetupFlag::CoopTaskrun, SetupFlag::TaskrunFlag]
    };
    let mut refused = Vec::new();
    loop {
        let mut builder = IoUring::builder();
        let mut flags = Vec::new();
        if options.iopoll {
            builder.setup_iopoll();
            flags.push("IOPOLL");
        }
        if options.sqpoll {
            builder.setup_sqpoll(SQPOLL_IDLE_MS);
            flags.push("SQPOLL");
            if let Some(cpu) = options.sqpoll_cpu {
                builder.setup_sqpoll_cpu(cpu);
                flags.push("SQ_AFF");
            }
        }
        for flag in &optional {
            match flag {
                SetupFlag::DeferTaskrun => builder.setup_defer_taskrun(),
                SetupFlag::SingleIssuer => builder.setup_single_issuer(),
                SetupFlag::CoopTaskrun => builder.setup_coop_taskrun(),
                SetupFlag::TaskrunFlag => builder.setup_taskrun_flag(),
            };
            flags.push(flag.name());
        }
        let result = if let Some(errno) = faults.setup_errno {
            Err(io::Error::from_raw_os_error(errno))
        } else if optional.iter().any(|f| faults.refuse.contains(f)) {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            builder.build(entries)
        };
        match result {
            Ok(ring) => return Ok(Ring { ring, flags, refused }),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !optional.is_empty() => {
                refused.push(optional.remove(0));
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let message = if errno == libc::EINVAL {
                    let cpu = options
                        .sqpoll_cpu
                        .map(|c| format!(" (--sqpoll-cpu {c}: is CPU {c} online and allowed to this process?)"))
                        .unwrap_or_default();
                    format!(
                        "io_uring_setup refused a ring of {entries} entries with {} ({}){cpu}",
                        if flags.is_empty() { "no flags".to_string() } else { flags.join("|") },
                        describe_errno(errno)
                    )
                } else {
                    let disabled = faults.disabled.or_else(read_io_uring_disabled);
                    unavailable_message(errno, disabled)
                };
                return Err(fail(message));
            }
        }
    }
}

/// An engine error that is all message ("io_uring: <message>").
pub(super) fn fail(message: impl Into<String>) -> EngineError {
    EngineError::new("io_uring", io::Error::other(message.into()))
}

/// /proc/sys/kernel/io_uring_disabled (absent before 6.6).
pub(super) fn read_io_uring_disabled() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok()?.trim().parse().ok()
}

/// The path behind a descriptor, for messages.
pub(super) fn fd_path(fd: RawFd) -> String {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| format!("descriptor {fd}"))
}

/// How the slots map onto registered buffers: `slots_per_buffer` consecutive slots per iovec.
pub(super) fn buffer_layout(region: &BufferRegion) -> Option<usize> {
    let per_buffer = region.slots.div_ceil(MAX_REGISTERED_BUFFERS).max(1);
    (per_buffer * region.slot_stride_bytes <= MAX_REGISTERED_BUFFER_BYTES).then_some(per_buffer)
}

/// Records how a registration went; returns whether it is in use.
pub(super) fn registered(
    fact: &str,
    result: Result<(), String>,
    facts: &mut Vec<(String, String)>,
    notes: &mut Vec<String>,
    note: impl FnOnce(&str) -> String,
) -> bool {
    match result {
        Ok(()) => {
            facts.push((fact.into(), "true".into()));
            true
        }
        Err(why) => {
            facts.push((fact.into(), format!("false (refused: {why})")));
            notes.push(note(&why));
            false
        }
    }
}

/// Registers the slot buffers (one iovec per `buffer_layout` group of slots), then the
/// area in pieces of at most `MAX_REGISTERED_BUFFER_BYTES`, and records each slot's buffer
/// index; returns the area's first index (if there is an area). The error says why, for
/// people.
pub(super) fn register_slot_buffers(
    ring: &IoUring,
    region: &BufferRegion,
    slots: &mut [SlotIo],
    faults: &Faults,
) -> Result<Option<u16>, String> {
    let total_bytes = region.slots * region.slot_stride_bytes + region.area_len_bytes;
    let per_buffer = buffer_layout(region)
        .ok_or_else(|| format!("the {total_bytes} bytes of slot buffers exceed what one ring can register"))?;
    let mut iovecs: Vec<libc::iovec> = (0..region.slots.div_ceil(per_buffer))
        .map(|i| {
            let first = i * per_buffer;
            let count = per_buffer.min(region.slots - first);
            libc::iovec { iov_base: region.slot_ptr(first as u32).cast(), iov_len: count * region.slot_stride_bytes }
        })
        .collect();
    let area_index = (region.area_len_bytes > 0).then_some(iovecs.len() as u16);
    iovecs.extend((0..region.area_len_bytes.div_ceil(MAX_REGISTERED_BUFFER_BYTES)).map(|i| {
        let at = i * MAX_REGISTERED_BUFFER_BYTES;
        let len = (region.area_len_bytes - at).min(MAX_REGISTERED_BUFFER_BYTES);
        libc::iovec { iov_base: region.area.wrapping_add(at).cast(), iov_len: len }
    }));
    if iovecs.len() > MAX_REGISTERED_BUFFERS {
        return Err(format!("the {total_bytes} bytes of slot buffers and area exceed what one ring can register"));
    }
    let result = match faults.register_buffers_errno {
        Some(errno) => Err(io::Error::from_raw_os_error(errno)),
        // SAFETY: every iovec lies inside the worker's slot allocation, which outlives the
        // engine (EngineSetup contract); the registration goes away with the ring, which is
        // dropped with the engine.
        None => unsafe { ring.submitter().register_buffers(&iovecs) },
    };
    result.map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
            format!(": the locked-memory limit (ulimit -l) is below the {total_bytes} bytes of slot buffers")
        } else {
            String::new()
        };
        format!("{}{hint}", describe_io_error(&e))
    })?;
    for (i, s) in slots.iter_mut().enumerate() {
        s.buf_index = (i / per_buffer) as u16;
    }
    Ok(area_index)
}

impl UringEngine {
    /// `open` with the fault injection given explicitly (tests call this).
    pub(super) fn open_with(setup: &EngineSetup<'_>, faults: &Faults) -> Result<Self, EngineError> {
        let options = &setup.options.io_uring;
        if options.iopoll && !setup.direct {
            return Err(fail(
                "--iopoll needs O_DIRECT, but the filesystem refused O_DIRECT and the run fell back to buffered \
                 I/O: use a target that accepts O_DIRECT (--strict-direct makes the refusal an error), or drop --iopoll",
            ));
        }
        let depth = setup.queue_depth.max(1);
        let Ring { ring, flags, refused } = build_ring(depth, options, faults)?;
        let mut facts = vec![
            ("setup_flags".to_string(), if flags.is_empty() { "none".to_string() } else { flags.join("|") }),
            ("sq_entries".to_string(), ring.params().sq_entries().to_string()),
            ("cq_entries".to_string(), ring.params().cq_entries().to_string()),
        ];
        let mut notes = Vec::new();
        if !refused.is_empty() {
            let names: Vec<&str> = refused.iter().map(|f| f.name()).collect();
            facts.push(("refused_flags".to_string(), names.join("|")));
            notes.push(format!(
                "io_uring: the kernel refused IORING_SETUP_{} (EINVAL); the ring runs with {}",
                names.join(", IORING_SETUP_"),
                if flags.is_empty() { "no set-up flags".to_string() } else { flags.join("|") }
            ));
        }

        let region = setup.buffers;
        let mut slots = vec![
            SlotIo {
                offset_bytes: 0,
                file: 0,
                len_bytes: 0,
                done_bytes: 0,
                buf_index: 0,
                buffer: BufferAt::Slot,
                op: Op::Read
            };
            region.slots
        ]
        .into_boxed_slice();

        let mut area_index = None;
        let fixed_buffers = if options.register {
            let result = register_slot_buffers(&ring, &region, &mut slots, faults).map(|index| area_index = index);
            registered("registered_buffers", result, &mut facts, &mut notes, |why| {
                format!(
                    "io_uring: registering the slot buffers failed ({why}); using plain Read/Write instead \
                     (raise ulimit -l, or pass --no-register to compare without registration)"
                )
            })
        } else {
            facts.push(("registered_buffers".into(), "false (--no-register)".into()));
            false
        };
        let fixed_files = if options.register {
            let result = match faults.register_files_errno {
                Some(errno) => Err(describe_errno(errno)),
                None => ring.submitter().register_files(setup.fds).map_err(|e| describe_io_error(&e)),
            };
            registered("registered_files", result, &mut facts, &mut notes, |why| {
                format!("io_uring: registering the files failed ({why}); using plain descriptors instead")
            })
        } else {
            facts.push(("registered_files".into(), "false (--no-register)".into()));
            false
        };

        let ring_index = if options.register { sys::register_ring_fd(ring.as_raw_fd()) } else { None };
        facts.push(("registered_ring_fd".into(), ring_index.is_some().to_string()));
        let depth = setup.queue_depth.max(1);
        let max_submit = crate::io::engine::submit_batch(
            setup.options,
            if setup.direct { crate::io::engine::DEFAULT_SUBMIT_BATCH } else { depth },
            depth,
        );
        facts.push(("submit_batch_max".into(), max_submit.to_string()));

        let files: Box<[RawFd]> =
            if fixed_files { (0..setup.fds.len() as RawFd).collect() } else { setup.fds.to_vec().into_boxed_slice() };
        let sqe_flags = if fixed_files { squeue::Flags::FIXED_FILE } else { squeue::Flags::empty() };
        let timed_wait = ring.params().is_feature_ext_arg();
        let mut engine = Self {
            ring,
            maker: SqeMaker { files, sqe_flags, fixed_buffers, buffers: region, area_index },
            slots,
            fds: setup.fds.to_vec().into_boxed_slice(),
            block_devices: crate::io::engine::discard::block_devices(setup.fds),
            pending: 0,
            max_submit,
            in_flight: 0,
            ring_index,
            features: RingFeatures {
                sqpoll: options.sqpoll,
                iopoll: options.iopoll,
                timed_wait,
                taskrun_flag: flags.contains(&SetupFlag::TaskrunFlag.name()),
            },
            spin: SpinWait::new(if options.iopoll { CompletionWait::Sleep } else { setup.options.completion_wait }),
            flush_sqes: 0,
            said: EngineSays { facts, notes, poll_failed: false },
        };
        if options.iopoll {
            engine.probe_polling(setup)?;
        }
        Ok(engine)
    }
}
