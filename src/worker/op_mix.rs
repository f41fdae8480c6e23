//! How a worker chooses between a read and a write: fixed, or by a seeded draw per I/O.

use crate::engine::Op;
use crate::rng::Rng;

/// How reads and writes are chosen.
pub(super) enum OpMix {
    AllReads,
    AllWrites,
    /// Read when a random draw is below `read_below`.
    Mixed {
        rng: Rng,
        read_below: u64,
    },
}

impl OpMix {
    pub(super) fn new(read_percent: u8, seed: u64, worker: u32) -> Self {
        match read_percent {
            100 => OpMix::AllReads,
            0 => OpMix::AllWrites,
            p => OpMix::Mixed {
                rng: Rng::new(seed, 0x6d69_7800 + u64::from(worker)),
                read_below: ((u128::from(p) << 64) / 100) as u64,
            },
        }
    }

    #[inline(always)]
    pub(super) fn next(&mut self) -> Op {
        match self {
            OpMix::AllReads => Op::Read,
            OpMix::AllWrites => Op::Write,
            OpMix::Mixed { rng, read_below } => {
                if rng.next_u64() < *read_below {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }
}
