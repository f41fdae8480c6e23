//! How deep the queue was when each I/O went out, and how many I/Os each submitting call
//! and each reap carried: what fio reports as `iodepth_level`, `iodepth_submit` and
//! `iodepth_complete`, counted by exact value rather than guessed from the achieved depth.
//!
//! The worker bumps three fixed arrays, indexed by the value clamped to `DEPTH_CAP` (so
//! the compiler drops the bounds test): no allocation, no lock, one add per count. What
//! becomes of them (the engine's split of a submission, fio's buckets) is decided once,
//! after the run (`coordination/run/assemble.rs`, `output/report/fio_json.rs`).
//!
//! Must not: allocate or branch on more than the clamp in the counting calls; format.

/// The last value counted apart: its entry holds it and everything above (65, so that
/// fio's last buckets, 33-64 and above 64, are told apart).
pub const DEPTH_CAP: usize = 65;

/// One worker's counts: index `n` holds the events that carried (or saw) `n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepthTally {
    /// I/Os by the number in flight once each was handed to the engine (itself included).
    pub at_issue: [u64; DEPTH_CAP + 1],
    /// The worker's submitting calls by the I/Os each handed to the kernel (before the
    /// engine splits them into system calls of at most its batch).
    pub per_submit: [u64; DEPTH_CAP + 1],
    /// Reaps by the completions each returned (reaps that returned none are not counted).
    pub per_reap: [u64; DEPTH_CAP + 1],
}

impl Default for DepthTally {
    fn default() -> Self {
        Self { at_issue: [0; DEPTH_CAP + 1], per_submit: [0; DEPTH_CAP + 1], per_reap: [0; DEPTH_CAP + 1] }
    }
}

impl DepthTally {
    /// An I/O went out with `depth` in flight, itself included.
    #[inline(always)]
    pub fn issued(&mut self, depth: usize) {
        self.at_issue[depth.min(DEPTH_CAP)] += 1;
    }

    /// A submitting call handed `ios` I/Os to the kernel.
    #[inline(always)]
    pub fn submitted(&mut self, ios: usize) {
        self.per_submit[ios.min(DEPTH_CAP)] += 1;
    }

    /// A reap returned `ios` completions.
    #[inline(always)]
    pub fn reaped(&mut self, ios: usize) {
        self.per_reap[ios.min(DEPTH_CAP)] += 1;
    }

    /// Adds another worker's counts.
    pub fn add(&mut self, other: &DepthTally) {
        for (a, b) in [
            (&mut self.at_issue, &other.at_issue),
            (&mut self.per_submit, &other.per_submit),
            (&mut self.per_reap, &other.per_reap),
        ] {
            for (x, y) in a.iter_mut().zip(b.iter()) {
                *x += y;
            }
        }
    }
}

/// `counts` (index = value) as the system calls of an engine that hands over at most
/// `batch` requests per call: a worker's call of `n` is `n / batch` calls of `batch` and
/// one of the rest. `batch` 0 is taken as no limit.
pub fn split_calls(counts: &[u64; DEPTH_CAP + 1], batch: usize) -> [u64; DEPTH_CAP + 1] {
    let mut out = [0; DEPTH_CAP + 1];
    for (n, &calls) in counts.iter().enumerate() {
        if calls == 0 {
            continue;
        }
        if batch == 0 || n <= batch {
            out[n] += calls;
            continue;
        }
        out[batch.min(DEPTH_CAP)] += calls * (n / batch) as u64;
        if n % batch > 0 {
            out[n % batch] += calls;
        }
    }
    out
}

/// The non-zero entries of `counts` as (value, count) pairs, ascending.
pub fn nonzero(counts: &[u64; DEPTH_CAP + 1]) -> Vec<(u32, u64)> {
    counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(n, c)| (n as u32, *c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_above_the_cap_land_in_its_entry() {
        let mut t = DepthTally::default();
        t.issued(1);
        t.issued(65);
        t.issued(64);
        t.issued(1000);
        t.submitted(3);
        t.reaped(0);
        assert_eq!(t.at_issue[1], 1);
        assert_eq!(t.at_issue[DEPTH_CAP], 2);
        assert_eq!(t.at_issue[64], 1);
        assert_eq!(t.per_submit[3], 1);
        assert_eq!(t.per_reap[0], 1);
        let mut sum = DepthTally::default();
        sum.add(&t);
        sum.add(&t);
        assert_eq!(sum.at_issue[DEPTH_CAP], 4);
    }

    #[test]
    fn a_call_larger_than_the_batch_is_split_as_the_engine_splits_it() {
        let mut calls = [0; DEPTH_CAP + 1];
        calls[7] = 10; // ten calls of 7 I/Os, batches of 2: 3 calls of 2 and one of 1 each
        calls[2] = 5;
        calls[1] = 1;
        let out = split_calls(&calls, 2);
        assert_eq!(out[2], 30 + 5);
        assert_eq!(out[1], 10 + 1);
        let ios_in: u64 = calls.iter().enumerate().map(|(n, c)| n as u64 * c).sum();
        let ios_out: u64 = out.iter().enumerate().map(|(n, c)| n as u64 * c).sum();
        assert_eq!(ios_in, ios_out);
        assert_eq!(split_calls(&calls, 0), calls);
        assert_eq!(nonzero(&out), vec![(1, 11), (2, 35)]);
    }
}
