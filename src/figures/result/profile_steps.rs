//! A profile's jobs as the steps a reader compares: the passes of one job (`--loops N`:
//! the job run N times, its copies named `NAME.passK`) reduced to the median and the
//! spread of each figure, and, where a profile's jobs are named `TEST-read` and
//! `TEST-write` (the default profile's KDiskMark tests), the read and the write of a test
//! side by side in one row.
//!
//! It computes the figures of the profile's table; it formats nothing.

use crate::figures::result::RunResult;
use crate::figures::result::jobs::JobsResult;

/// The suffix of a job's pass after the first: `SEQ1M-Q8T1-read.pass2`.
pub const PASS_SUFFIX: &str = ".pass";

/// The job name of pass `pass` (1-based) of job `name`.
pub fn pass_name(name: &str, pass: u32) -> String {
    if pass <= 1 { name.to_string() } else { format!("{name}{PASS_SUFFIX}{pass}") }
}

/// How a step is named on its lines and its live line: `SEQ1M Q8T1 read`, `SEQ1M Q8T1
/// read, pass 2` (a KDiskMark test's words apart), or the job's own name.
pub fn step_label(job: &str) -> String {
    let base = base_name(job);
    let name = match direction(base) {
        Some((test, read)) => format!("{} {}", test.replace('-', " "), if read { "read" } else { "write" }),
        None => base.to_string(),
    };
    match job.len() > base.len() {
        true => format!("{name}, pass {}", &job[base.len() + PASS_SUFFIX.len()..]),
        false => name,
    }
}

/// A figure over the passes: their median and mean, and the least and the most of them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    pub median: f64,
    /// KDiskMark's Default shows the mean of its passes.
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        let mean = v.iter().sum::<f64>() / n as f64;
        Self { median, mean, min: v[0], max: v[n - 1] }
    }

    /// The spread as a share of the median: (max − min) / median; 0 for one pass.
    pub fn relative(&self) -> f64 {
        if self.median > 0.0 { (self.max - self.min) / self.median } else { 0.0 }
    }
}

/// One job of a profile over its passes.
#[derive(Clone, Debug)]
pub struct StepFigures {
    /// The job's name (its first pass's).
    pub job: String,
    pub passes: u32,
    pub bw_bytes_per_sec: Spread,
    pub iops: Spread,
    pub p50_ns: Spread,
    pub p99_ns: Spread,
    /// The first pass's result, for what does not change between passes (the I/O mode,
    /// the target, the flushes).
    pub first: RunResult,
}

/// A row of the table: a KDiskMark test's read and write (`name` "SEQ1M Q8T1"), or a
/// job of its own (`name` the job's, in `read`).
#[derive(Clone, Debug)]
pub struct Step {
    pub name: String,
    pub read: Option<StepFigures>,
    pub write: Option<StepFigures>,
}

/// The steps of `doc`: each job over its passes, in the order they first ran; paired into
/// tests when every job is named `TEST-read` or `TEST-write` (`paired` true).
pub fn steps(doc: &JobsResult) -> (Vec<Step>, bool) {
    let mut jobs: Vec<(String, Vec<&RunResult>)> = Vec::new();
    for j in &doc.jobs {
        let base = base_name(&j.job);
        match jobs.iter_mut().find(|(name, _)| name == base) {
            Some((_, passes)) => passes.push(&j.result),
            None => jobs.push((base.to_string(), vec![&j.result])),
        }
    }
    let figures: Vec<StepFigures> = jobs.into_iter().map(|(job, passes)| over_passes(job, &passes)).collect();
    let paired = !figures.is_empty() && figures.iter().all(|f| direction(&f.job).is_some());
    if !paired {
        let steps = figures.into_iter().map(|f| Step { name: f.job.clone(), read: Some(f), write: None }).collect();
        return (steps, false);
    }
    let mut steps: Vec<Step> = Vec::new();
    for f in figures {
        let (test, is_read) = direction(&f.job).expect("every job has a direction");
        let name = test.replace('-', " ");
        let at = match steps.iter().position(|s| s.name == name) {
            Some(at) => at,
            None => {
                steps.push(Step { name, read: None, write: None });
                steps.len() - 1
            }
        };
        if is_read {
            steps[at].read = Some(f);
        } else {
            steps[at].write = Some(f);
        }
    }
    (steps, true)
}

/// The step a job is a pass of: its name without the pass suffix.
pub fn step_of(job: &str) -> &str {
    base_name(job)
}

/// The job's name without its pass suffix.
fn base_name(job: &str) -> &str {
    match job.rsplit_once(PASS_SUFFIX) {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => job,
    }
}

/// `TEST-read` → (TEST, true), `TEST-write` → (TEST, false).
fn direction(job: &str) -> Option<(&str, bool)> {
    job.strip_suffix("-read").map(|t| (t, true)).or_else(|| job.strip_suffix("-write").map(|t| (t, false)))
}

fn over_passes(job: String, passes: &[&RunResult]) -> StepFigures {
    let of = |f: fn(&RunResult) -> f64| Spread::of(&passes.iter().map(|r| f(r)).collect::<Vec<_>>());
    StepFigures {
        job,
        passes: passes.len() as u32,
        bw_bytes_per_sec: of(|r| r.figures.total.bw_bytes_per_sec),
        iops: of(|r| r.figures.total.iops),
        p50_ns: of(|r| r.figures.total.latency_ns.p50 as f64),
        p99_ns: of(|r| r.figures.total.latency_ns.p99 as f64),
        first: passes[0].clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let s = Spread::of(&[5.0, 1.0, 3.0]);
        assert_eq!((s.median, s.mean, s.min, s.max), (3.0, 3.0, 1.0, 5.0));
        assert_eq!(Spread::of(&[1.0, 1.0, 7.0]).mean, 3.0);
        assert_eq!(Spread::of(&[4.0, 2.0]).median, 3.0);
        assert!((s.relative() - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(Spread::of(&[7.0]).relative(), 0.0);
    }

    #[test]
    fn passes_and_directions_by_name() {
        assert_eq!(base_name(&pass_name("SEQ1M-Q8T1-read", 3)), "SEQ1M-Q8T1-read");
        assert_eq!(pass_name("a", 1), "a");
        assert_eq!(base_name("a.passx"), "a.passx");
        assert_eq!(direction("RND4K-Q1T1-write"), Some(("RND4K-Q1T1", false)));
        assert_eq!(direction("oltp-mix"), None);
        assert_eq!(step_label("SEQ1M-Q8T1-read"), "SEQ1M Q8T1 read");
        assert_eq!(step_label("RND4K-Q1T1-write.pass2"), "RND4K Q1T1 write, pass 2");
        assert_eq!(step_label("mix.pass3"), "mix, pass 3");
        assert_eq!(step_of("RND4K-Q1T1-write.pass2"), "RND4K-Q1T1-write");
    }
}
