//! Verification inside the worker (`--verify`): stamping written blocks, checking read
//! ones, and keeping which sequence each block last received to catch lost writes.
//!
//! Off (no `Verifier`), none of this runs: the loop tests one `Option` per completion.

use super::{SlotState, VerifyCost, VerifyPlan, Worker, WorkerPlan};
use crate::io::data::verify::{self, Expect, Mismatch, VerifyCounts};
use crate::io::engine::{Engine, Op};

/// Verification state of a worker (with `--verify`).
pub(super) struct Verifier {
    pub(super) plan: VerifyPlan,
    /// Region block in flight on each slot (`u64::MAX` when free): a block is never in
    /// flight twice, so no read races a write to it.
    pub(super) in_flight: Box<[u64]>,
    /// Low 32 bits of the sequence this run last wrote to each region block (0: none).
    pub(super) last_written: Vec<u32>,
    /// One block, to regenerate expected contents when a check fails.
    pub(super) scratch: Vec<u8>,
    /// How written blocks are reduced (`--dedupe-ratio`, `--compress-ratio`).
    pub(super) reduction: crate::io::data::Reduction,
    pub(super) counts: VerifyCounts,
    pub(super) mismatches: Vec<Mismatch>,
    /// `--verify-state`: the durable record, updated at each completed flush.
    pub(super) durable_record: Option<crate::io::durable_format::RecordWriter>,
}

impl Verifier {
    /// The verifier of a worker with `slot_count` slots, its tables allocated here, before
    /// the start line.
    pub(super) fn new(
        v: VerifyPlan,
        plan: &WorkerPlan,
        slot_count: u32,
        durable_record: Option<crate::io::durable_format::RecordWriter>,
    ) -> Self {
        Verifier {
            plan: v,
            in_flight: vec![u64::MAX; slot_count as usize].into_boxed_slice(),
            last_written: if v.track_sequences {
                vec![0u32; plan.region.source.region_blocks() as usize]
            } else {
                Vec::new()
            },
            scratch: vec![0u8; plan.io.block_size_bytes as usize],
            reduction: crate::io::data::Reduction::new(plan.data.reducibility),
            counts: VerifyCounts::default(),
            mismatches: Vec::with_capacity(v.max_reports as usize),
            durable_record,
        }
    }
}

/// Times stamping (a write) and checking (a read) one verified block, before the
/// start line, so the report can say what verification costs without reading the
/// clock per I/O. Returns (stamp ns, check ns).
pub(super) fn measure_verify_cost(plan: &WorkerPlan) -> VerifyCost {
    let Some(v) = plan.data.verify else { return VerifyCost::default() };
    let bs = plan.io.block_size_bytes as usize;
    let mut blocks = vec![vec![0u8; bs]; 8];
    let mut scratch = vec![0u8; bs];
    let rounds = (256 * 4096 / bs.max(1)).clamp(8, 256) as u64;
    let seed = plan.data.seed;
    let time = |f: &mut dyn FnMut(u64)| {
        for i in 0..4 {
            f(i); // warm up
        }
        let started = std::time::Instant::now();
        for i in 0..rounds {
            f(i);
        }
        (started.elapsed().as_nanos() as u64 / rounds).max(1)
    };
    let stamp_ns = time(&mut |i| verify::stamp(&mut blocks[(i % 8) as usize], v.pattern, seed, (i % 8) * bs as u64, 1));
    let check_ns = time(&mut |i| {
        let expect = Expect {
            seed,
            offset_bytes: (i % 8) * bs as u64,
            pattern: v.pattern,
            sequence: None,
            reduction: crate::io::data::Reduction::NONE,
        };
        let _ = std::hint::black_box(verify::check(&blocks[(i % 8) as usize], &expect, &mut scratch));
    });
    VerifyCost { stamp_ns, check_ns }
}

/// Stamps a verified write reduced by `--dedupe-ratio`/`--compress-ratio`; returns how
/// many of its 4 KiB chunks are duplicates (all of a duplicate block's, else none).
#[inline]
pub(super) fn stamp_reduced(buf: &mut [u8], v: &Verifier, seed: u64, offset_bytes: u64, sequence: u64) -> u32 {
    verify::stamp_reduced(buf, v.plan.pattern, seed, offset_bytes, sequence, &v.reduction);
    if v.reduction.duplicate_of(seed, offset_bytes).1.is_some() {
        buf.len().div_ceil(crate::io::data::CHUNK_BYTES) as u32
    } else {
        0
    }
}

/// The record of a completed flush or write could not be written (`IoFailureKind::Record`).
#[cold]
pub(super) fn record_failure(op: Op, target: u32, e: &std::io::Error) -> super::IoFailure {
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    super::IoFailure { op, target, offset_bytes: 0, kind: super::IoFailureKind::Record(errno) }
}

impl<E: Engine> Worker<E> {
    /// At the worker's end, with writes durable at completion: the writes completed since
    /// the record's last update are recorded.
    pub(super) fn close_record(&mut self) {
        let target = self.files.first().map_or(0, |f| f.target);
        let Some(v) = &mut self.writes.verifier else { return };
        let Some(record) = &mut v.durable_record else { return };
        if record.durable_at_completion()
            && let Err(e) = record.checkpoint(&v.last_written)
            && self.faults.failure.is_none()
        {
            self.faults.failure = Some(record_failure(Op::Write, target, &e));
        }
    }

    /// Checks a completed read, or records a completed write, of a verifying run.
    #[inline]
    pub(super) fn verify_completion(&mut self, slot: u32, state: &SlotState) {
        let target = self.files[state.file as usize].target;
        let seed = self.writes.data.seed;
        let base = self.writes.sequence_base;
        let Some(v) = &mut self.writes.verifier else { return };
        v.in_flight[slot as usize] = u64::MAX;
        let block = state.region_block as usize;
        match state.op {
            Op::Write => {
                if let Some(last) = v.last_written.get_mut(block) {
                    *last = state.sequence as u32;
                    // `--verify-state`: the block's page is noted; with writes durable at
                    // completion, every N of them the record is updated.
                    if let Some(record) = &mut v.durable_record
                        && record.note_write(state.file, block as u64)
                        && let Err(e) = record.checkpoint(&v.last_written)
                    {
                        self.faults.failure = Some(record_failure(Op::Write, target, &e));
                    }
                }
            }
            // Trims are refused with --verify (spec.rs); flushes touch no block.
            Op::Fsync | Op::Fdatasync | Op::Trim => {}
            Op::Read => {
                let sequence = match v.last_written.get(block) {
                    Some(&low) if low != 0 => Some(base | u64::from(low)),
                    _ => None,
                };
                let expect = Expect {
                    seed,
                    offset_bytes: state.offset_bytes,
                    pattern: v.plan.pattern,
                    sequence,
                    reduction: v.reduction,
                };
                v.counts.checked += 1;
                let bytes = self.io.buffers.slot(slot);
                if let Err(failure) = verify::check(bytes, &expect, &mut v.scratch) {
                    v.counts.failures_by_kind[failure.index()] += 1;
                    if v.mismatches.len() < v.plan.max_reports as usize {
                        v.mismatches.push(verify::describe(bytes, &expect, failure, target, &mut v.scratch));
                    }
                }
            }
        }
    }
}
