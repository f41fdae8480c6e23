//! The cluster result: on rank 0, one document from what every rank of an MPI
//! job handed in at the end. The ranks' results are combined by the same
//! merge as `iopulse merge` (histograms added, IOPS and bandwidth summed,
//! window skew), then each rank gets a row with its own figures, and ranks
//! well below the median are flagged as stragglers.
//!
//! It computes; it neither moves bytes between ranks (`cluster`) nor formats
//! (`report`).

use crate::base::diagnostics::error::exit_code;
use crate::figures::result::merge::{self, Input};
use crate::figures::result::{ClusterInfo, RankInfo, RunResult, StopReason};
use serde::{Deserialize, Serialize};

/// A rank whose IOPS are below this fraction of the median rank's is a straggler.
const STRAGGLER_BELOW_MEDIAN: f64 = 0.8;

/// What one rank hands to rank 0 at the end of a cluster run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankOutcome {
    /// The exit code this rank's run alone would have had.
    pub exit_code: i32,
    /// Its result, as its own run would have written it.
    pub result: Option<RunResult>,
    /// Why it has no result.
    pub error: Option<String>,
}

impl RankOutcome {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a RankOutcome always serializes")
    }

    /// Decodes what a rank sent; bytes that are not an outcome become a failed rank.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        serde_json::from_slice(bytes).unwrap_or_else(|e| RankOutcome {
            exit_code: exit_code::RUN_FAILED,
            result: None,
            error: Some(format!("its result could not be read ({e})")),
        })
    }
}

/// The cluster document and the exit code of the whole job.
pub struct ClusterRun {
    /// `None` when no rank had a result.
    pub result: Option<RunResult>,
    pub exit_code: i32,
    /// "rank 1 (host h): what failed", for each rank that had no result.
    pub failures: Vec<String>,
    /// Warnings about the cluster as a whole (also in the document's `warnings`).
    pub warnings: Vec<String>,
}

/// The name of rank `rank` in messages and in `merged_from`: "rank 1 (host node7)".
pub fn rank_name(rank: usize, host: &str) -> String {
    format!("rank {rank} (host {host})")
}

/// Builds the cluster document from every rank's outcome, by rank. `hosts` are the
/// ranks' host names, `launcher` how they met ("mpi").
pub fn build(outcomes: Vec<RankOutcome>, hosts: &[String], launcher: &str) -> ClusterRun {
    let host = |r: usize| hosts.get(r).map_or("?", String::as_str);
    let exit_code = job_exit_code(outcomes.iter().map(|o| o.exit_code));
    let failures: Vec<String> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.result.is_none())
        .map(|(r, o)| format!("{}: {}", rank_name(r, host(r)), o.error.as_deref().unwrap_or("no result")))
        .collect();
    let inputs: Vec<Input> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(r, o)| o.result.clone().map(|result| Input { file: rank_name(r, host(r)), result, id: None }))
        .collect();
    // The ranks ran one command line: specs differ only if launched with different ones
    // (MPMD); they are merged anyway, and each difference is noted.
    let (mut merged, warnings) = match merge::merge(&inputs, true) {
        Ok(m) => (m.result, m.warnings),
        Err(e) => {
            let mut failures = failures;
            if !inputs.is_empty() {
                failures.push(format!("the ranks' results could not be combined: {e}"));
            }
            return ClusterRun { result: None, exit_code: exit_code::RUN_FAILED, failures, warnings: Vec::new() };
        }
    };
    let mut distinct_hosts: Vec<String> = Vec::new();
    for h in hosts {
        if !distinct_hosts.contains(h) {
            distinct_hosts.push(h.clone());
        }
    }
    if let Some(first) = merged.outcome.notes.first_mut()
        && first.starts_with("merged from")
    {
        *first = format!(
            "cluster of {} ranks on {} {}: latency from the ranks' added histograms, IOPS and bandwidth summed",
            outcomes.len(),
            distinct_hosts.len(),
            if distinct_hosts.len() == 1 { "host" } else { "hosts" }
        );
    }
    for note in &mut merged.outcome.notes {
        if note.starts_with("coverage is not merged") {
            *note = "coverage is not merged: each rank's own is in cluster.ranks[].result".into();
        }
    }
    if !failures.is_empty() {
        merged.window.stop_reason = StopReason::Error;
        merged.outcome.error = Some(match merged.outcome.error.take() {
            Some(e) => format!("{}; {e}", failures.join("; ")),
            None => failures.join("; "),
        });
    }

    let iops: Vec<f64> = outcomes.iter().filter_map(|o| o.result.as_ref().map(|r| r.figures.total.iops)).collect();
    let median_iops = median(&iops);
    let ranks = outcomes
        .into_iter()
        .enumerate()
        .map(|(r, o)| {
            let figures = o.result.as_ref().map(|res| &res.figures.total);
            let iops = figures.map_or(0.0, |t| t.iops);
            RankInfo {
                rank: r as u32,
                host: host(r).to_string(),
                exit_code: o.exit_code,
                ops: figures.map_or(0, |t| t.ops),
                iops,
                bw_bytes_per_sec: figures.map_or(0.0, |t| t.bw_bytes_per_sec),
                p50_ns: figures.map_or(0, |t| t.latency_ns.p50),
                p99_ns: figures.map_or(0, |t| t.latency_ns.p99),
                window_start_unix_ns: o.result.as_ref().map_or(0, |res| res.window.window_start_unix_ns),
                window_ns: o.result.as_ref().map_or(0, |res| res.window.window_ns),
                straggler: o.result.is_some() && median_iops > 0.0 && iops < STRAGGLER_BELOW_MEDIAN * median_iops,
                error: o.result.as_ref().and_then(|res| res.outcome.error.clone()).or(o.error),
                result: o.result.map(Box::new),
            }
        })
        .collect();
    merged.combined.cluster = Some(ClusterInfo {
        launcher: launcher.to_string(),
        size: hosts.len() as u32,
        hosts: distinct_hosts,
        straggler_below_median: STRAGGLER_BELOW_MEDIAN,
        median_iops,
        ranks,
    });
    ClusterRun { result: Some(merged), exit_code, failures, warnings }
}

/// The exit code of a job from its ranks': a failed run (1) first, then verification
/// mismatches (3), then a signal (143, 130), as a single run orders them.
fn job_exit_code(codes: impl Iterator<Item = i32> + Clone) -> i32 {
    let order = [
        exit_code::RUN_FAILED,
        exit_code::VERIFY_FAILED,
        exit_code::TERMINATED,
        exit_code::HUNG_UP,
        exit_code::INTERRUPTED,
    ];
    order
        .into_iter()
        .find(|c| codes.clone().any(|x| x == *c))
        .or_else(|| codes.clone().find(|&c| c != exit_code::SUCCESS))
        .unwrap_or(exit_code::SUCCESS)
}

/// The median (the mean of the middle two for an even count); 0 for none.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordination::cluster::Cluster;
    use crate::coordination::run::start_line::StartLine;
    use crate::io::stats::decode_histogram;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    /// A real result: a short null-engine run on a small file in `dir`.
    fn real_result(dir: &std::path::Path) -> RunResult {
        let target = dir.join("t.dat");
        let argv = [target.to_str().unwrap(), "--file-size", "64k", "--duration", "0.05", "--engine", "null"];
        let spec = crate::testing::spec_of(argv).unwrap();
        let cluster = Cluster::alone();
        let start = StartLine::new(&cluster, None);
        let diag = crate::base::diagnostics::warnings::Diagnostics::silent();
        crate::coordination::run::run(&spec, &diag, Arc::new(AtomicUsize::new(0)), &start).unwrap().result
    }

    #[test]
    fn ranks_are_summed_flagged_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut results: Vec<RunResult> = (0..3).map(|_| real_result(dir.path())).collect();
        // Rank 2 at half the others' rate: below 80 % of the median.
        results[0].figures.total.iops = 100.0;
        results[1].figures.total.iops = 100.0;
        results[2].figures.total.iops = 50.0;
        let hosts: Vec<String> = ["a", "b", "b", "c"].map(String::from).to_vec();
        let mut outcomes: Vec<RankOutcome> =
            results.iter().map(|r| RankOutcome { exit_code: 0, result: Some(r.clone()), error: None }).collect();
        outcomes.push(RankOutcome { exit_code: 1, result: None, error: Some("cannot open x".into()) });
        let run = build(outcomes, &hosts, "mpi");
        assert_eq!(run.exit_code, exit_code::RUN_FAILED);
        assert_eq!(run.failures, vec!["rank 3 (host c): cannot open x".to_string()]);
        let m = run.result.unwrap();
        let c = m.combined.cluster.as_ref().unwrap();
        assert_eq!((c.size, c.hosts.clone(), c.median_iops), (4, vec!["a".into(), "b".into(), "c".into()], 100.0));
        let flags: Vec<bool> = c.ranks.iter().map(|r| r.straggler).collect();
        assert_eq!(flags, [false, false, true, false], "only rank 2 is a straggler; a failed rank is not one");
        assert_eq!(c.ranks[3].error.as_deref(), Some("cannot open x"));
        assert_eq!(m.figures.total.ops, results.iter().map(|r| r.figures.total.ops).sum::<u64>());
        let mut expected = decode_histogram(&results[0].histograms.read).unwrap();
        for r in &results[1..] {
            expected.add(decode_histogram(&r.histograms.read).unwrap()).unwrap();
        }
        assert_eq!(decode_histogram(&m.histograms.read).unwrap(), expected);
        assert_eq!(m.combined.merged_from.as_ref().unwrap()[1].file, "rank 1 (host b)");
        assert!(m.outcome.notes[0].starts_with("cluster of 4 ranks on 3 hosts"), "{:?}", m.outcome.notes);
        assert_eq!(m.window.stop_reason, StopReason::Error);
        assert!(
            m.outcome.error.as_deref().unwrap().starts_with("rank 3 (host c): cannot open x"),
            "{:?}",
            m.outcome.error
        );
        assert!(m.combined.window_skew.is_some_and(|s| s.results == 3));
        assert_eq!(c.ranks[0].result.as_ref().unwrap().figures.total.ops, results[0].figures.total.ops);
    }

    #[test]
    fn the_job_ends_with_the_worst_code_in_a_single_runs_order() {
        assert_eq!(job_exit_code([0, 0].into_iter()), 0);
        assert_eq!(job_exit_code([0, 3, 130].into_iter()), 3);
        assert_eq!(job_exit_code([130, 1, 3].into_iter()), 1);
        assert_eq!(job_exit_code([0, 143, 130].into_iter()), 143);
        assert_eq!(job_exit_code([0, 7].into_iter()), 7);
    }

    #[test]
    fn median_of_odd_even_and_none() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn an_unreadable_outcome_is_a_failed_rank() {
        let o = RankOutcome::from_bytes(b"not json");
        assert_eq!(o.exit_code, exit_code::RUN_FAILED);
        assert!(o.result.is_none() && o.error.unwrap().contains("could not be read"));
        let run = build(vec![RankOutcome::from_bytes(b"{")], &["h".to_string()], "mpi");
        assert!(run.result.is_none());
        assert_eq!(run.exit_code, exit_code::RUN_FAILED);
        assert!(run.failures[0].starts_with("rank 0 (host h): its result could not be read"), "{:?}", run.failures);
    }
}
