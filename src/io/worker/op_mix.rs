//! How a worker chooses the operation of each I/O: read, write or trim (`--trim-percent`),
//! fixed, or by a seeded draw per I/O.

use crate::base::primitives::rng::Rng;
use crate::io::engine::Op;

/// How reads, writes and trims are chosen.
pub(super) enum OpMix {
    AllReads,
    AllWrites,
    AllTrims,
    /// Read when a random draw is below `read_below`.
    Mixed {
        rng: Rng,
        read_below: u64,
    },
    /// Trim when a random draw is below `trim_below`, else read below `read_below`, else
    /// write: `--trim-percent` of the I/Os are trims, the rest split by `--read-percent`.
    WithTrims {
        rng: Rng,
        trim_below: u64,
        read_below: u64,
    },
}

/// `parts` of `whole` of the u64 range, as a threshold for a uniform draw.
fn share(parts: u128, whole: u128) -> u64 {
    ((parts << 64) / whole).min(u128::from(u64::MAX)) as u64
}

impl OpMix {
    pub(super) fn new(read_percent: u8, trim_percent: u8, seed: u64, worker: u32) -> Self {
        let rng = || Rng::new(seed, 0x6d69_7800 + u64::from(worker));
        match (trim_percent, read_percent) {
            (100, _) => OpMix::AllTrims,
            (0, 100) => OpMix::AllReads,
            (0, 0) => OpMix::AllWrites,
            (0, p) => OpMix::Mixed { rng: rng(), read_below: share(p.into(), 100) },
            (t, r) => {
                // Reads take r % of the rest: in ten-thousandths, trims t * 100, then reads
                // (100 - t) * r.
                let (t, r) = (u128::from(t), u128::from(r));
                OpMix::WithTrims {
                    rng: rng(),
                    trim_below: share(t, 100),
                    read_below: share(t * 100 + (100 - t) * r, 10_000),
                }
            }
        }
    }

    #[inline(always)]
    pub(super) fn next(&mut self) -> Op {
        match self {
            OpMix::AllReads => Op::Read,
            OpMix::AllWrites => Op::Write,
            OpMix::AllTrims => Op::Trim,
            OpMix::Mixed { rng, read_below } => {
                if rng.next_u64() < *read_below {
                    Op::Read
                } else {
                    Op::Write
                }
            }
            OpMix::WithTrims { rng, trim_below, read_below } => {
                let x = rng.next_u64();
                if x < *trim_below {
                    Op::Trim
                } else if x < *read_below {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(read: u8, trim: u8) -> [u32; 3] {
        let mut mix = OpMix::new(read, trim, 1, 0);
        let mut c = [0u32; 3];
        for _ in 0..100_000 {
            match mix.next() {
                Op::Read => c[0] += 1,
                Op::Write => c[1] += 1,
                Op::Trim => c[2] += 1,
                op => panic!("{op:?}"),
            }
        }
        c
    }

    #[test]
    fn trims_take_their_share_and_reads_split_the_rest() {
        assert_eq!(counts(100, 0), [100_000, 0, 0]);
        assert_eq!(counts(0, 0), [0, 100_000, 0]);
        assert_eq!(counts(50, 100), [0, 0, 100_000]);
        // 20 % trims; of the other 80 %, half reads: 40 % reads, 40 % writes.
        let [r, w, t] = counts(50, 20);
        for (got, want) in [(r, 40_000), (w, 40_000), (t, 20_000)] {
            assert!(got.abs_diff(want) < 1_000, "{r} {w} {t}");
        }
        let [r, w, t] = counts(100, 30);
        assert_eq!(w, 0);
        assert!(t.abs_diff(30_000) < 1_000 && r.abs_diff(70_000) < 1_000, "{r} {t}");
        let [r, _, t] = counts(0, 50);
        assert_eq!(r, 0);
        assert!(t.abs_diff(50_000) < 1_000);
    }
}
