//! What a worker issues next: the request drawn for a slot (its op, size and block), its
//! data made (filled, cut from the pool, or drawn ahead while the device works). Hot path:
//! no allocation, no lock, no clock read.

use super::*;

impl<E: Engine> Worker<E> {
    /// Chooses the next I/O for `slot`, or `None` when the worker's share is done.
    #[inline(always)]
    pub(super) fn next_request<const MIX: bool>(&mut self, slot: u32) -> Option<Request> {
        if self.draw.remaining_ops == 0 {
            return None;
        }
        if MIX {
            return self.next_mixed_request(slot);
        }
        // The op first: zones per direction draw its block from its direction's zones.
        let op = self.draw.mix.next();
        let mut region_block = self.draw.source.next_block_for(|| direction(op))?;
        if let Some(v) = &self.writes.verifier {
            // Never two I/Os on one block at once: a read racing a write would see either.
            while v.in_flight.contains(&region_block) {
                region_block = self.draw.source.next_block_for(|| direction(op))?;
            }
        }
        self.draw.remaining_ops -= 1;
        if let Some(tracker) = &mut self.draw.coverage {
            tracker.touch(region_block);
        }
        let block = self.draw.region_first_block + region_block;
        let file = self.locate(block);
        let offset_bytes = (block - self.files[file as usize].first_block) * self.block_size_bytes;
        Some(self.fill_slot::<false>(slot, op, file, offset_bytes, region_block, self.block_size_bytes as u32))
    }

    /// With a block-size mix: the next I/O's size (drawn for its op) and the first of the
    /// blocks it covers (units of the alignment), inside the region and inside its file.
    /// Verification is refused with a mix (no in-flight check here).
    #[inline(always)]
    pub(super) fn next_mixed_request(&mut self, slot: u32) -> Option<Request> {
        if let Some(cursor) = &mut self.draw.replay {
            // A replay: the trace's next I/O, placed on file 0 before the start line. (Its
            // flushes never come here: `flush_gate` takes them first.)
            let io = cursor.take()?;
            self.draw.remaining_ops -= 1;
            let region_block = io.offset_bytes / self.block_size_bytes;
            if let Some(tracker) = &mut self.draw.coverage {
                tracker.touch_extent(region_block, u64::from(io.len_bytes).div_ceil(self.block_size_bytes));
            }
            let req = self.fill_slot::<true>(slot, io.op, 0, io.offset_bytes, region_block, io.len_bytes);
            let state = &mut self.io.slots[slot as usize];
            state.len_bytes = io.len_bytes;
            state.size_index = 0;
            return Some(req);
        }
        if self.draw.sizes.is_none() {
            // A run of one size compiled as `MIX` to record its log: the plain draw, its
            // length kept in the slot (which `MIX` reads).
            let req = self.next_request::<false>(slot)?;
            let state = &mut self.io.slots[slot as usize];
            state.len_bytes = req.len_bytes;
            state.size_index = 0;
            return Some(req);
        }
        let op = self.draw.mix.next();
        let (size_index, len_bytes, units) = self.draw.sizes.as_mut()?.pick(op);
        let mut region_block = self.draw.source.next_extent(units, || direction(op))?;
        self.draw.remaining_ops -= 1;
        let mut block = self.draw.region_first_block + region_block;
        let file = self.locate(block);
        let f = self.files[file as usize];
        if block + units > f.first_block + f.blocks {
            // An I/O of several blocks stays inside its file: it moves back to end with it.
            block = (f.first_block + f.blocks).saturating_sub(units).max(f.first_block);
            region_block = block.saturating_sub(self.draw.region_first_block);
        }
        if let Some(tracker) = &mut self.draw.coverage {
            tracker.touch_extent(region_block, units);
        }
        let offset_bytes = (block - f.first_block) * self.block_size_bytes;
        let req = self.fill_slot::<true>(slot, op, file, offset_bytes, region_block, len_bytes);
        let state = &mut self.io.slots[slot as usize];
        state.len_bytes = len_bytes;
        state.size_index = size_index;
        Some(req)
    }

    /// The request's data (a write's) and the slot's record of it. `MIX`: its length may
    /// be less than the slot's buffer (without a mix, a slot's length stays the block size
    /// it was made with).
    #[inline(always)]
    pub(super) fn fill_slot<const MIX: bool>(
        &mut self,
        slot: u32,
        op: Op,
        file: u32,
        offset_bytes: u64,
        region_block: u64,
        len_bytes: u32,
    ) -> Request {
        let mut sequence = 0;
        let mut duplicate_chunks = 0;
        let mut window = NO_WINDOW;
        if op == Op::Write {
            if let Some(f) = &mut self.durability.flush {
                f.writes_since += 1;
                if f.writes_since == f.plan.every_writes {
                    f.writes_since = 0;
                    f.due = true;
                    f.file = file;
                }
            }
            self.writes.write_sequence += 1;
            sequence = self.writes.sequence_base | (self.writes.write_sequence & 0xffff_ffff);
            let buf = self.io.buffers.slot_mut(slot);
            // (A slot is shorter than the I/O only when its writes all go to the area,
            // which does not use the slot's buffer: `private_slot_bytes`.)
            let mix_len = (len_bytes as usize).min(buf.len());
            let buf = if MIX { &mut buf[..mix_len] } else { buf };
            if let Some(v) = &self.writes.verifier {
                if v.reduction.is_none() {
                    verify::stamp(buf, v.plan.pattern, self.writes.data.seed, offset_bytes, sequence);
                } else {
                    duplicate_chunks = verifier::stamp_reduced(buf, v, self.writes.data.seed, offset_bytes, sequence);
                }
            } else if let Some(pool) = &self.writes.pool {
                if !self.io.cut_later {
                    duplicate_chunks = pool.fill(buf, offset_bytes, sequence);
                }
            } else if let Some(area) = &mut self.writes.area {
                if let Placement::Window(at) = area.place(offset_bytes, u64::from(len_bytes)) {
                    window = at;
                }
                if !self.io.cut_later {
                    let source = area.copy_source(offset_bytes);
                    let piece = UniquePiece { slot, window, source, offset_bytes, sequence };
                    piece.make(&mut self.io.buffers, self.writes.data.seed, 0, len_bytes as usize);
                }
            } else if self.writes.data.pattern == Pattern::Keyed && self.io.slots[slot as usize].holds_pattern {
                // The slot still holds the base: only the keys change.
                data::keyed::key_chunks(buf, self.writes.data.seed, offset_bytes, sequence);
            } else if self.writes.data.pattern.varies_per_write() || !self.io.slots[slot as usize].holds_pattern {
                // (`unique` data always has its area: the period does not matter here.)
                let period_bytes = data::unique::MIN_PERIOD_BYTES;
                data::fill(buf, self.writes.data.pattern, self.writes.data.seed, offset_bytes, sequence, period_bytes);
            }
        }
        if let Some(v) = &mut self.writes.verifier {
            v.in_flight[slot as usize] = region_block;
        }
        let state = &mut self.io.slots[slot as usize];
        state.op = op;
        state.file = file;
        state.offset_bytes = offset_bytes;
        state.region_block = region_block;
        state.sequence = sequence;
        state.holds_pattern = op == Op::Write;
        state.duplicate_chunks = duplicate_chunks;
        state.window = window;
        let buffer = if window == NO_WINDOW { BufferAt::Slot } else { BufferAt::Area(window) };
        Request { slot, op, file, offset_bytes, len_bytes, buffer }
    }

    /// The next request to issue (queued engines drawing ahead): the oldest prepared one,
    /// else one drawn now into a free slot (at the start, or when the source ran dry
    /// of prepared ones). `None` when the worker's share is done.
    #[inline(always)]
    pub(super) fn take_prepared<const MIX: bool>(&mut self) -> Option<Request> {
        if self.io.ahead.as_ref().is_some_and(|a| a.len == 0 && a.cutting.is_some()) {
            // The next request in the source's order is partly cut: finish it now.
            while self.io.ahead.as_ref().is_some_and(|a| a.cutting.is_some()) {
                self.cut_piece();
            }
        }
        let a = self.io.ahead.as_mut()?;
        if a.len > 0 {
            let req = a.ready[a.head];
            a.head = (a.head + 1) % a.depth;
            a.len -= 1;
            return Some(req);
        }
        if a.drawn_out {
            return None;
        }
        let slot = self.io.free.pop()?;
        let req = self.next_request::<MIX>(slot);
        if req.is_none() {
            self.io.free.push(slot);
            if let Some(a) = &mut self.io.ahead {
                a.drawn_out = true;
            }
        }
        req
    }

    /// Draws the next requests into free slots and generates their data, one at a time,
    /// until `depth` are prepared, the source is done, or a completion has arrived: after
    /// each (for pool data, after each piece of `CUT_PIECE_BYTES`), the completion queue
    /// is looked at without waiting (no system call for libaio's ring, nor for io_uring's
    /// unless the kernel says completions wait to be posted), so a completion never waits
    /// for a batch of generations and the device is never left idle by them. Called after
    /// a submission: the device works meanwhile. Returns the completions taken into
    /// `completions`.
    #[inline(always)]
    pub(super) fn prepare_ahead<const MIX: bool>(&mut self) -> Result<usize, crate::io::engine::EngineError> {
        loop {
            let Some(a) = &self.io.ahead else { return Ok(0) };
            if a.cutting.is_none() {
                if a.drawn_out || a.len == a.depth {
                    return Ok(0);
                }
                let Some(slot) = self.io.free.pop() else { return Ok(0) };
                let cut_later = self.writes.pool.is_some() || self.writes.area.is_some();
                self.io.cut_later = cut_later;
                let req = self.next_request::<MIX>(slot);
                self.io.cut_later = false;
                let Some(a) = &mut self.io.ahead else { return Ok(0) };
                match req {
                    Some(req) if cut_later => a.cutting = Some(Cutting { req, done_bytes: 0 }),
                    Some(req) => a.push(req),
                    None => {
                        a.drawn_out = true;
                        self.io.free.push(slot);
                        return Ok(0);
                    }
                }
            }
            self.cut_piece();
            let reaped = self.engine.reap(0, &mut self.io.completions)?;
            if reaped > 0 {
                return Ok(reaped);
            }
        }
    }

    /// Cuts the next piece of the data of the request being cut (`Ahead::cutting`) from
    /// the pool; once its data is whole, it joins the prepared requests.
    #[inline(always)]
    pub(super) fn cut_piece(&mut self) {
        let Some(a) = &mut self.io.ahead else { return };
        let Some(mut c) = a.cutting else { return };
        let end = c.done_bytes.saturating_add(CUT_PIECE_BYTES).min(c.req.len_bytes);
        let state = &mut self.io.slots[c.req.slot as usize];
        if let Some(pool) = &self.writes.pool {
            let piece = &mut self.io.buffers.slot_mut(c.req.slot)[c.done_bytes as usize..end as usize];
            state.duplicate_chunks += pool.fill(piece, c.req.offset_bytes + u64::from(c.done_bytes), state.sequence);
        } else if let Some(area) = &self.writes.area {
            let piece = UniquePiece {
                slot: c.req.slot,
                window: state.window,
                source: area.copy_source(c.req.offset_bytes),
                offset_bytes: c.req.offset_bytes,
                sequence: state.sequence,
            };
            piece.make(&mut self.io.buffers, self.writes.data.seed, c.done_bytes as usize, end as usize);
        }
        c.done_bytes = end;
        if end == c.req.len_bytes {
            a.cutting = None;
            a.push(c.req);
        } else {
            a.cutting = Some(c);
        }
    }

    /// Whether drawing ahead has slots to prepare (the loop then submits first).
    #[inline(always)]
    pub(super) fn wants_prepare(&self) -> bool {
        self.io
            .ahead
            .as_ref()
            .is_some_and(|a| a.cutting.is_some() || (!a.drawn_out && a.len < a.depth && !self.io.free.is_empty()))
    }

    /// At the stop: requests prepared (or being cut) but never issued reached nothing
    /// (coverage counted them when they were drawn).
    pub(super) fn discard_prepared(&mut self) {
        let Some(a) = &mut self.io.ahead else { return };
        let cutting = a.cutting.take().map(|c| c.req);
        for req in (0..a.len).map(|i| a.ready[(a.head + i) % a.depth]).chain(cutting) {
            self.io.free.push(req.slot);
            if let Some(v) = &mut self.writes.verifier {
                v.in_flight[req.slot as usize] = u64::MAX;
            }
            if let Some(tracker) = &mut self.draw.coverage {
                tracker.untouch(self.io.slots[req.slot as usize].region_block);
            }
        }
        a.len = 0;
    }

    /// Which file holds region block `block` (targets are few: a short scan).
    #[inline(always)]
    pub(super) fn locate(&self, block: u64) -> u32 {
        let mut file = 0;
        while file + 1 < self.files.len() && self.files[file + 1].first_block <= block {
            file += 1;
        }
        file as u32
    }
}
