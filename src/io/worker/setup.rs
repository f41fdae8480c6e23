//! A worker's set-up: its plan turned into state (buffers, slots, engine, data pool or
//! area, verifier), all allocated here, before the start line and never again.

use super::*;

impl<E: Engine> Worker<E> {
    pub(super) fn new(mut plan: WorkerPlan) -> Result<Self, String> {
        let durable_record = plan.durability.durable_record.take();
        // Trims are counted when the mix has them, or the replayed trace does.
        let trimming =
            plan.io.trim_percent > 0 || plan.replay.as_ref().is_some_and(|r| r.ios.iter().any(|io| io.op == Op::Trim));
        let depth = plan.io.queue_depth.max(1);
        // What to allocate was decided by the coordinator (`WorkerSizing`), for this engine.
        let sizing = plan.sizing;
        debug_assert!(!(sizing.draws_ahead && E::CAPS.completes_inline), "sized for another engine");
        let ahead = sizing.draws_ahead.then(|| Ahead::new(depth as usize));
        let pool = sizing.random_pool.then(|| RandomPool::reducible(plan.data.seed, plan.data.reducibility));
        let slot_count = sizing.slot_count;
        let (buffers, buffer_node_seen) = Self::data_buffers(&plan, &sizing)?;
        let area = sizing.area.map(|a| DataArea::new(a, E::CAPS.completes_inline));
        let verifier = plan.data.verify.map(|v| Verifier::new(v, &plan, slot_count, durable_record));
        let sequence_base =
            (u64::from(plan.index) << 48) | (u64::from(plan.data.verify.map_or(0, |v| v.run_nonce)) << 32);
        let verify_cost = measure_verify_cost(&plan);
        let fds: Vec<RawFd> = plan.region.files.iter().map(|f| f.fd).collect();
        let setup = EngineSetup {
            fds: &fds,
            buffers: buffers.region(),
            queue_depth: depth,
            direct: plan.engine.direct,
            options: &plan.engine.options,
        };
        let engine = E::open(&setup).map_err(|e| e.to_string())?;
        let stats = target_stats(&plan, trimming);
        Ok(Self {
            engine,
            io: SlotTable {
                buffers,
                slots: idle_slots(slot_count, plan.io.block_size_bytes as u32),
                completions: vec![Completion::default(); depth as usize].into_boxed_slice(),
                free: (0..slot_count).rev().collect(),
                unstamped: vec![0; slot_count as usize].into_boxed_slice(),
                unstamped_len: 0,
                queued_since_submit: 0,
                ahead,
                cut_later: false,
            },
            draw: Draw {
                source: plan.region.source,
                region_first_block: plan.region.region_first_block,
                remaining_ops: if plan.window.ramp_ns > 0 {
                    u64::MAX
                } else {
                    plan.region.ops_limit.unwrap_or(u64::MAX)
                },
                window_ops_limit: if plan.window.ramp_ns > 0 { plan.region.ops_limit } else { None },
                coverage: plan.region.coverage,
                mix: OpMix::new(plan.io.read_percent, plan.io.trim_percent, plan.seed, plan.index),
                sizes: plan
                    .io
                    .block_sizes
                    .as_ref()
                    .map(|m| size_mix::SizeMix::new(m, plan.seed, plan.index, plan.io.trim_percent > 0)),
                replay_timed: plan.replay.as_ref().is_some_and(|r| r.timed),
                replay: plan.replay.map(|r| replay::ReplayCursor { ios: r.ios, next: 0 }),
            },
            files: plan.region.files.into_boxed_slice(),
            stats,
            block_size_bytes: plan.io.block_size_bytes,
            index: plan.index,
            window: WindowState {
                duration_ns: plan.window.duration_ns,
                ramp_ns: plan.window.ramp_ns,
                ramp_end_ns: None,
                ramp_ops: 0,
                window_cpu_start: None,
            },
            writes: WriteState {
                data: plan.data,
                sequence_base,
                write_sequence: 0,
                pool,
                area,
                duplicate_chunks_written: 0,
                verifier,
                verify_cost,
            },
            paced: PacingState {
                think: plan.pacing.think,
                rate: plan.pacing.rate,
                pacing: PacingCounts::default(),
                pacing_latency: None,
            },
            faults: Faults::new(plan.errors),
            durability: Durability {
                flush: plan.durability.flush.map(|plan| FlushState {
                    plan,
                    writes_since: 0,
                    due: false,
                    file: 0,
                    in_flight: false,
                }),
                end_fsync: plan.durability.end_fsync,
            },
            tallies: Tallies {
                interval: plan.interval,
                depths: DepthTally::default(),
                own_mark_ns: 0,
                own_ns: 0,
                iolog: plan.iolog_capacity.map(iolog::IoRecorder::with_capacity),
                buffer_node_seen,
                watch: WatchState::default(),
                trimming,
            },
        })
    }

    /// The slots' buffers and the `unique` data's area, as `sizing` says, bound to the
    /// worker's node and filled; and the node the buffers' first page is on.
    fn data_buffers(plan: &WorkerPlan, sizing: &WorkerSizing) -> Result<(SlotBuffers, Option<u32>), String> {
        // Bind first, then allocate and touch: the buffers' pages land on the worker's node.
        placement::apply_to_current_thread(&plan.placement)?;
        let mut buffers = SlotBuffers::with_area(
            sizing.slot_count as usize,
            sizing.private_slot_bytes as usize,
            plan.engine.buffers.align_bytes,
            sizing.area.map_or(0, |a| a.len_bytes as usize),
            plan.engine.buffers.huge_pages,
        )?;
        placement::bind_buffer(&plan.placement, buffers.region().base, buffers.len_bytes())?;
        if let Some(a) = sizing.area {
            placement::bind_buffer(&plan.placement, buffers.region().area, a.len_bytes as usize)?;
        }
        buffers.touch_pages();
        let buffer_node_seen = placement::bind::node_of_address(buffers.region().base);
        let period_bytes = data::unique::period_bytes(sizing.buffer_len_bytes);
        if let Some(a) = sizing.area {
            // The base, once: every `unique` write is a window of it with its keys rewritten.
            data::unique::fill_area(buffers.area_mut(), plan.data.seed, a.period_bytes);
        } else {
            for slot in 0..sizing.slot_count {
                let buf = buffers.slot_mut(slot);
                data::fill(buf, plan.data.pattern, plan.data.seed, 0, u64::from(slot), period_bytes);
            }
        }
        Ok((buffers, buffer_node_seen))
    }
}

/// `count` slots with no I/O in flight, their buffers holding the write pattern.
fn idle_slots(count: u32, len_bytes: u32) -> Box<[SlotState]> {
    vec![
        SlotState {
            op: Op::Read,
            file: 0,
            offset_bytes: 0,
            submit_ns: IDLE_NS,
            issued_ns: IDLE_NS,
            region_block: 0,
            sequence: 0,
            holds_pattern: true,
            duplicate_chunks: 0,
            len_bytes,
            size_index: 0,
            window: NO_WINDOW,
        };
        count as usize
    ]
    .into_boxed_slice()
}

/// Empty figures for each of the worker's files (flushes and trims kept only when the run
/// has them).
fn target_stats(plan: &WorkerPlan, trimming: bool) -> Box<[TargetStats]> {
    let flushing = plan.durability.flush.is_some() || plan.durability.end_fsync;
    plan.region
        .files
        .iter()
        .map(|f| TargetStats {
            target: f.target,
            read: OpStats::new(),
            write: OpStats::new(),
            flush: if flushing { OpStats::new() } else { OpStats::unused() },
            trim: if trimming { OpStats::new() } else { OpStats::unused() },
        })
        .collect()
}
