//! An in-process checkpoint: the jobs of one phase of a job file (`iopulse run`) meet
//! here as the ranks of a cluster run meet at `Cluster::checkpoint`, with the same
//! meaning. Every member brings its status to each checkpoint, in the same order; a
//! checkpoint is passed when every member has arrived, and it fails for all of them when
//! one arrived failed, so that nobody waits for a job that will never come and no job
//! touches anything after another one was refused before the first checkpoint.
//!
//! The last member to arrive acts for all of them before any leaves (`checkpoint_then`):
//! the jobs of a phase are released there by one call, whatever order their threads wake
//! in afterwards.
//!
//! It knows nothing of runs, specs or results: it counts arrivals. It is reached twice
//! per job (planned, open), never on the I/O path.

use super::Status;
use std::sync::{Condvar, Mutex};

/// The members that failed at a checkpoint (by member index, with their messages).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} of {size} jobs failed before the window", failed.len())]
pub struct GroupFailure {
    pub failed: Vec<(usize, String)>,
    pub size: usize,
}

/// The checkpoint shared by `size` members.
pub struct Group {
    size: usize,
    state: Mutex<State>,
    passed: Condvar,
}

#[derive(Default)]
struct State {
    /// Checkpoints completed so far.
    round: u64,
    /// Members arrived at the current checkpoint.
    arrived: usize,
    /// Failures brought to the current checkpoint.
    failing: Vec<(usize, String)>,
    /// The outcome of each completed checkpoint (`None`: passed).
    outcomes: Vec<Option<GroupFailure>>,
}

impl Group {
    pub fn new(size: usize) -> Self {
        Self { size, state: Mutex::new(State::default()), passed: Condvar::new() }
    }

    /// Member `member` arrives with `status` and waits for the others; `Ok` when every
    /// member arrived ready.
    pub fn checkpoint(&self, member: usize, status: &Status) -> Result<(), GroupFailure> {
        self.checkpoint_then(member, status, |_| {})
    }

    /// Member `member` arrives failed with `message` and does not wait: for a member that
    /// will never take part (its thread was not started), so that the others learn it at
    /// their next checkpoint instead of waiting for it. It must not arrive again.
    pub fn leave(&self, member: usize, message: &str) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.failing.push((member, message.to_string()));
        state.arrived += 1;
        if state.arrived == self.size {
            let failing = std::mem::take(&mut state.failing);
            state.outcomes.push(Some(GroupFailure { failed: failing, size: self.size }));
            state.arrived = 0;
            state.round += 1;
            self.passed.notify_all();
        }
    }

    /// As `checkpoint`; the last member to arrive calls `complete` (with whether every
    /// member arrived ready) before any member leaves.
    pub fn checkpoint_then(
        &self,
        member: usize,
        status: &Status,
        complete: impl FnOnce(bool),
    ) -> Result<(), GroupFailure> {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Status::Failed { message, .. } = status {
            state.failing.push((member, message.clone()));
        }
        state.arrived += 1;
        let round = state.round;
        if state.arrived == self.size {
            let failing = std::mem::take(&mut state.failing);
            let outcome = (!failing.is_empty()).then_some(GroupFailure { failed: failing, size: self.size });
            complete(outcome.is_none());
            state.outcomes.push(outcome);
            state.arrived = 0;
            state.round += 1;
            self.passed.notify_all();
        } else {
            while state.round == round {
                state = self.passed.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
        match &state.outcomes[round as usize] {
            None => Ok(()),
            Some(f) => Err(f.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_passes_together_or_learns_who_failed() {
        let group = Group::new(3);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|m| {
                    let group = &group;
                    s.spawn(move || {
                        let first = group.checkpoint(m, &Status::Ready);
                        let status = if m == 1 {
                            Status::Failed { message: "no such file".into(), usage: true }
                        } else {
                            Status::Ready
                        };
                        (first, group.checkpoint(m, &status))
                    })
                })
                .collect();
            for h in handles {
                let (first, second) = h.join().unwrap();
                assert_eq!(first, Ok(()));
                assert_eq!(second, Err(GroupFailure { failed: vec![(1, "no such file".into())], size: 3 }));
            }
        });
    }

    #[test]
    fn a_member_that_leaves_fails_the_checkpoint_without_waiting() {
        let group = Group::new(3);
        group.leave(2, "not started");
        std::thread::scope(|s| {
            let waiting = s.spawn(|| group.checkpoint(0, &Status::Ready));
            group.leave(1, "not started");
            let f = waiting.join().unwrap().unwrap_err();
            assert_eq!(f.failed.iter().map(|(m, _)| *m).collect::<Vec<_>>(), vec![2, 1]);
        });
    }

    #[test]
    fn the_last_member_acts_for_all_before_any_leaves() {
        let group = Group::new(2);
        let acted = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            let other = s.spawn(|| {
                group.checkpoint_then(0, &Status::Ready, |ok| {
                    acted.fetch_add(if ok { 1 } else { 100 }, std::sync::atomic::Ordering::SeqCst);
                })
            });
            let mine = group.checkpoint_then(1, &Status::Ready, |ok| {
                acted.fetch_add(if ok { 1 } else { 100 }, std::sync::atomic::Ordering::SeqCst);
            });
            assert_eq!((mine, other.join().unwrap()), (Ok(()), Ok(())));
        });
        // One of the two acted, once, and saw every member ready.
        assert_eq!(acted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_group_of_one_reports_its_own_failure() {
        let group = Group::new(1);
        assert_eq!(group.checkpoint(0, &Status::Ready), Ok(()));
        let f = group.checkpoint(0, &Status::Failed { message: "m".into(), usage: false }).unwrap_err();
        assert_eq!(f.failed, vec![(0, "m".to_string())]);
    }
}
