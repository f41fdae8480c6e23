//! `null`: completes every request at once without touching storage or the
//! buffers. It measures the tool's own cost per I/O (the ceiling of the
//! pipeline) and lets tests drive the whole run deterministically.

use super::{Completion, Engine, EngineCaps, EngineError, EngineSetup, Op, Queued, Request};

pub struct NullEngine {
    ready: Box<[Completion]>,
    ready_len: usize,
}

impl Engine for NullEngine {
    const NAME: &'static str = "null";
    const CAPS: EngineCaps = EngineCaps {
        completes_inline: false,
        touches_storage: false,
        supports_direct: true,
        batches_submissions: false,
        writes_through_descriptor: false,
    };

    fn open(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        Ok(Self {
            ready: vec![Completion::default(); setup.queue_depth.max(1) as usize].into_boxed_slice(),
            ready_len: 0,
        })
    }

    unsafe fn queue(&mut self, req: Request) -> Queued {
        if self.ready_len == self.ready.len() {
            return Queued::Full;
        }
        // A trim, like a flush, completes with 0 (flushes have no length).
        let result = if req.op == Op::Trim { 0 } else { i64::from(req.len_bytes) };
        self.ready[self.ready_len] = Completion { slot: req.slot, result };
        self.ready_len += 1;
        Queued::InFlight
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        let n = self.ready_len.min(out.len());
        out[..n].copy_from_slice(&self.ready[..n]);
        // Keep any that did not fit, in order.
        self.ready.copy_within(n..self.ready_len, 0);
        self.ready_len -= n;
        Ok(n)
    }
}
