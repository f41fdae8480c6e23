//! An in-process checkpoint: the jobs of one phase of a job file (`iopulse run`) meet
//! here as the ranks of a cluster run meet at `Cluster::checkpoint`, with the same
//! meaning. Every member brings its status to each checkpoint, in the same order; a
//! checkpoint is passed when every member has arrived, and it fails for all of them when
//! one arrived failed, so that nobody waits for a job that will never come and no job
//! touches anything after another one was refused before the first checkpoint.
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
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Status::Failed { message, .. } = status {
            state.failing.push((member, message.clone()));
        }
        state.arrived += 1;
        let round = state.round;
        if state.arrived == self.size {
            let failing = std::mem::take(&mut state.failing);
            let outcome = (!failing.is_empty()).then_some(GroupFailure { failed: failing, size: self.size });
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
    fn a_group_of_one_reports_its_own_failure() {
        let group = Group::new(1);
        assert_eq!(group.checkpoint(0, &Status::Ready), Ok(()));
        let f = group.checkpoint(0, &Status::Failed { message: "m".into(), usage: false }).unwrap_err();
        assert_eq!(f.failed, vec![(0, "m".to_string())]);
    }
}
