//! `iopulse search`: the highest load that meets a latency bound (`--p99-max 1ms`), or with
//! `--saturate` the smallest queue depth × threads that reaches 95 % of the maximum IOPS.
//! First a closed-loop run as given (the maximum); then runs the plan of figures/sweep/search.rs
//! asks for, each the benchmark's typed flags with the ones it sets (`--rate-iops N
//! --rate-total`: open-loop pacing, latency measured from when each I/O was due; or
//! `--queue-depth`, `--threads`), checked into a `Spec` as a command line would be.
//! Reports the curve (a point per run) and a one-line answer.
//!
//! Runs and writes; the plan is figures/sweep/search.rs's, the words output/report/sweep.rs's.

use super::json_text;
use super::sweep::{Session, Step, check_outputs};
use crate::base::diagnostics::error::exit_code;
use crate::base::units::parse_duration;
use crate::base::units::values::Count;
use crate::figures::result::RunResult;
use crate::figures::sweep::document::{Answer, CurvePoint, RunEntry, SearchDocument};
use crate::figures::sweep::search::{DEFAULT_STEPS, LatencySearch, Percentile, saturate_candidates};
use crate::front::cli::lists::ManyRunsArgs;
use crate::front::cli::{IologArgs, WorkloadArgs};
use crate::io::stats::LatencySummary;
use crate::output::report::{self, OutputFormat, units};
use std::sync::Arc;
use std::time::Duration;

const SEARCH_EXAMPLES: &str = "\
Examples:
  iopulse search /data/t.dat --direct --random --engine io_uring --queue-depth 32 --p99-max 1ms
      the maximum first (closed loop), then rates of 10, 50, 70, 80, 90 and 100 % of it
      (open loop: latency from when each I/O was due), then bisection between the last
      rate within 1 ms and the first over it, to 5 % of the maximum:
      `p99 ≤ 1 ms up to 41.2K IOPS (82 % of max 50.1K)`
  iopulse search /data/t.dat --random --queue-depth 32 --p999-max 5ms --steps 20,40,60,80,100 --precision 2
      bound p99.9 instead, other steps, bisection to 2 % of the maximum
  iopulse search /data/t.dat --direct --random --engine io_uring --queue-depth 64 --threads 4 --saturate
      the smallest queue depth × threads (1×1, 2×1, 1×2, 4×1, ... up to 64×4) reaching 95 %
      of the IOPS at 64×4
  iopulse search --engine null --think-time 100us --duration 500ms --p99-max 2ms --output-format json
      JSON: `curve` (a point per run: offered and achieved IOPS, p50 ... p99.99), `answer`, `runs`
  iopulse search /data/t.dat --random --queue-depth 32 --p99-max 1ms --write-iolog q.iolog
      each run's I/Os as a fio iolog of its own: q-run1.iolog (the maximum), q-run2.iolog,
      ... (run N is the JSON's runs[N-1] and curve[N-1])

The flags are the benchmark's (iopulse --help), without lists and without --rate-iops,
--rate-bw or --rate-total, which the search sets. Bounded latency is over all I/Os.
Exit codes: 0 the search ran (found or not: see the answer), 1 a run failed, 2 usage,
130/143/129 interrupted (the curve so far is still printed).";

/// Find the highest load within a latency bound, or the smallest load that saturates.
#[derive(Debug, clap::Args)]
#[command(after_help = SEARCH_EXAMPLES)]
pub struct SearchArgs {
    /// Bound the median latency.
    ///
    /// Bound the median latency (e.g. 200us).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Goal (one of)")]
    pub p50_max: Option<Duration>,
    /// Bound the p90 latency.
    ///
    /// Bound the 90th percentile latency.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Goal (one of)")]
    pub p90_max: Option<Duration>,
    /// Bound the p99 latency.
    ///
    /// Bound the 99th percentile latency (e.g. 1ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Goal (one of)")]
    pub p99_max: Option<Duration>,
    /// Bound the p99.9 latency.
    ///
    /// Bound the 99.9th percentile latency.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Goal (one of)")]
    pub p999_max: Option<Duration>,
    /// Bound the p99.99 latency.
    ///
    /// Bound the 99.99th percentile latency.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Goal (one of)")]
    pub p9999_max: Option<Duration>,
    /// Find the smallest load that saturates.
    ///
    /// The smallest queue depth × threads, up to the given --queue-depth and --threads,
    /// that reaches --saturate-percent of their IOPS.
    #[arg(long, help_heading = "Goal (one of)")]
    pub saturate: bool,

    /// Share of the maximum IOPS that counts as saturated.
    ///
    /// Share of the maximum IOPS --saturate must reach, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 95.0, value_parser = parse_percent)]
    pub saturate_percent: f64,

    /// Rates to try first, in percent of the maximum.
    ///
    /// Rates to try first, in percent of the measured maximum, ascending [default: 10,50,70,80,90,100]
    #[arg(long, value_name = "LIST", value_parser = parse_steps)]
    pub steps: Option<Steps>,

    /// When bisection stops, in percent of the maximum.
    ///
    /// Bisection stops when the passing and failing rates are this close, in percent of the
    /// maximum (5 or 5%).
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0, value_parser = parse_percent)]
    pub precision: f64,

    /// At most N runs in all.
    ///
    /// At most N runs in all, the maximum's included.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(2..))]
    pub max_runs: u32,

    #[command(flatten)]
    pub runs: ManyRunsArgs,

    /// `--write-iolog FILE`: a log per run, FILE-runN (`plan::iologs`).
    #[command(flatten)]
    pub iolog: IologArgs,
}

/// Percentages of the maximum, ascending.
#[derive(Clone, Debug)]
pub struct Steps(pub Vec<f64>);

fn parse_percent(text: &str) -> Result<f64, String> {
    let v: f64 =
        text.trim().trim_end_matches('%').trim().parse().map_err(|_| format!("`{text}`: give a percentage, e.g. 5"))?;
    if v > 0.0 && v <= 100.0 { Ok(v) } else { Err(format!("`{text}`: give a percentage above 0 and at most 100")) }
}

fn parse_steps(text: &str) -> Result<Steps, String> {
    let steps = text.split(',').map(parse_percent).collect::<Result<Vec<_>, _>>()?;
    if steps.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("`{text}`: give the percentages in increasing order, e.g. 10,50,90,100"));
    }
    Ok(Steps(steps))
}

fn usage(message: impl std::fmt::Display) -> i32 {
    crate::stderr_line!("iopulse search: error: {message}");
    exit_code::USAGE
}

/// Latency search or saturation.
enum Goal {
    Latency { percentile: Percentile, bound_ns: u64 },
    Saturate { percent: f64 },
}

/// `workload` paced at `rate` I/Os per second in all (a step of the latency search).
fn step(workload: &WorkloadArgs, rate: u64) -> WorkloadArgs {
    let mut w = workload.clone();
    w.pacing.rate_iops = Some(Count(rate));
    w.pacing.rate_total = true;
    w
}

/// `workload` at queue depth `depth` with `threads` workers (a step of --saturate).
fn at_depth(workload: &WorkloadArgs, depth: u32, threads: u32) -> WorkloadArgs {
    let mut w = workload.clone();
    w.shape.queue_depth = Some(Count(depth));
    w.shape.threads = Some(Count(threads));
    w
}

pub fn search(args: SearchArgs) -> i32 {
    let bounds: Vec<(Percentile, Duration)> = [
        (Percentile::P50, args.p50_max),
        (Percentile::P90, args.p90_max),
        (Percentile::P99, args.p99_max),
        (Percentile::P999, args.p999_max),
        (Percentile::P9999, args.p9999_max),
    ]
    .into_iter()
    .filter_map(|(p, d)| d.map(|d| (p, d)))
    .collect();
    let goal = match (bounds.as_slice(), args.saturate) {
        ([(p, d)], false) => Goal::Latency { percentile: *p, bound_ns: d.as_nanos().min(u128::from(u64::MAX)) as u64 },
        ([], true) => Goal::Saturate { percent: args.saturate_percent },
        ([], false) => {
            return usage(
                "give a goal: a latency bound (--p99-max 1ms; also --p50-max, --p90-max, --p999-max, --p9999-max) or --saturate",
            );
        }
        _ => return usage("give one goal: one latency bound (--p99-max 1ms, ...) or --saturate, not several"),
    };
    if let Some((flag, why)) = args.runs.refused {
        return usage(format!("{flag} with `iopulse search`: {why}"));
    }
    let workload = match args.runs.single("a search") {
        Ok(w) => w,
        Err(e) => return usage(e),
    };
    let pacing = &workload.pacing;
    for (given, flag) in [
        (pacing.rate_iops.is_some(), "--rate-iops"),
        (pacing.rate_bw.is_some(), "--rate-bw"),
        (pacing.rate_total, "--rate-total"),
    ] {
        if given {
            return usage(format!(
                "{flag}: the search sets the rate itself (--rate-iops N --rate-total per step): drop {flag}"
            ));
        }
    }
    // `--think-mode` without think time is for the paced steps only: the maximum is closed loop.
    let mut base = workload.clone();
    if matches!(goal, Goal::Latency { .. }) && pacing.think_time.is_none() && pacing.think_adaptive_percent.is_none() {
        base.pacing.think_mode = None;
    }
    let base_spec = match base.clone().into_spec(args.runs.targets.clone(), false) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    // The flags the search will add must suit the workload: checked before the first run.
    let probe = match goal {
        Goal::Latency { .. } => step(&workload, 1000),
        Goal::Saturate { .. } => at_depth(&workload, 1, 1),
    };
    if let Err(e) = probe.into_spec(args.runs.targets.clone(), false) {
        return usage(format!("this workload cannot be paced by the search: {e}"));
    }
    if let Err(e) = crate::coordination::run::check(&base_spec) {
        crate::stderr_line!("iopulse search: error: {e}");
        return e.exit_code();
    }
    let output = args.runs.output.options(&Default::default());
    // `--write-iolog`: a file per run, every one the search may make checked before the first.
    if let Some(path) = &args.iolog.write_iolog
        && let Err(e) = crate::front::plan::iologs::refuse_stream(path, "--write-iolog", "each run of a search")
    {
        return usage(e);
    }
    let logs: Vec<std::path::PathBuf> = (1..=args.max_runs as usize)
        .filter_map(|run| args.iolog.write_iolog.as_deref().map(|p| crate::front::plan::iologs::per_search_run(p, run)))
        .collect();
    if let Err(e) = check_outputs(&output, report::Writes::Search, &[&base_spec], &logs) {
        return usage(e);
    }
    if let Some(code) = super::dry_run_exit() {
        return code;
    }
    let Ok(stop) = crate::io::host::signals::install() else {
        crate::stderr_line!("iopulse search: error: cannot install signal handlers");
        return exit_code::RUN_FAILED;
    };
    let steps = args.steps.as_ref().map_or_else(|| DEFAULT_STEPS.to_vec(), |s| s.0.clone());
    let first_guess = match goal {
        Goal::Latency { .. } => 1 + steps.len(),
        Goal::Saturate { .. } => 1 + saturate_candidates(base_spec.shape.queue_depth, base_spec.shape.threads).len(),
    };
    let mut session = Session::new(&output, first_guess.min(args.max_runs as usize), Arc::clone(&stop));
    session.start(0);
    let mut searcher =
        Searcher { session, args: &args, workload: &workload, curve: Vec::new(), runs: Vec::new(), code: 0 };

    // The maximum: closed loop, as given.
    let max = match searcher.run(&base_spec, "max", None, None, |_| true) {
        Some(r) => r,
        None => return searcher.finish(&goal, None),
    };
    if max.figures.total.iops <= 0.0 {
        crate::stderr_line!("iopulse search: error: the maximum run completed no I/O: nothing to search");
        searcher.code = exit_code::RUN_FAILED;
        return searcher.finish(&goal, None);
    }
    let max_iops = max.figures.total.iops;
    let answer = match goal {
        Goal::Latency { percentile, bound_ns } => searcher
            .latency(max_iops, &steps, percentile, bound_ns)
            .map(|found| latency_answer(&searcher.curve, max_iops, percentile, bound_ns, found)),
        Goal::Saturate { percent } => searcher.saturate(&base_spec, max_iops, percent),
    };
    searcher.finish(&goal, answer)
}

struct Searcher<'a> {
    session: Session,
    args: &'a SearchArgs,
    /// The benchmark's flags as given, which each step changes.
    workload: &'a WorkloadArgs,
    curve: Vec<CurvePoint>,
    runs: Vec<RunEntry>,
    code: i32,
}

impl Searcher<'_> {
    /// One run; its curve point and result kept. None when the search must end (a signal,
    /// a failed run, the run budget).
    fn run(
        &mut self,
        spec: &crate::workload::spec::Spec,
        phase: &str,
        offered: Option<f64>,
        max_iops: Option<f64>,
        passed: impl Fn(&RunResult) -> bool,
    ) -> Option<RunResult> {
        if self.runs.len() >= self.args.max_runs as usize {
            return None;
        }
        let what = match offered {
            Some(rate) => format!("{phase} at {} IOPS offered", units::iops(rate)),
            None => format!("{phase} · queue depth {} × {} threads", spec.shape.queue_depth, spec.shape.threads),
        };
        // `--write-iolog`: this run's own file, and a spec that records.
        let iolog = self
            .args
            .iolog
            .write_iolog
            .as_deref()
            .map(|p| crate::front::plan::iologs::per_search_run(p, self.runs.len() + 1));
        let recording;
        let spec = if iolog.is_some() {
            let mut records = spec.clone();
            records.output.record_iolog = true;
            recording = records;
            &recording
        } else {
            spec
        };
        match self.session.run(spec, &what, None, iolog.as_deref()) {
            Step::Done(result, code) => {
                if code != exit_code::SUCCESS && self.code == exit_code::SUCCESS {
                    self.code = code;
                }
                let l = &result.figures.total.latency_ns;
                self.curve.push(CurvePoint {
                    phase: phase.into(),
                    offered_iops: offered,
                    offered_percent: offered.zip(max_iops).map(|(o, m)| 100.0 * o / m),
                    queue_depth: spec.shape.queue_depth,
                    threads: spec.shape.threads,
                    iops: result.figures.total.iops,
                    p50_ns: l.p50,
                    p90_ns: l.p90,
                    p99_ns: l.p99,
                    p99_9_ns: l.p99_9,
                    p99_99_ns: l.p99_99,
                    lateness_ns: result
                        .schedule
                        .pacing
                        .as_ref()
                        .and_then(|p| p.rate.as_ref())
                        .and_then(|r| r.lateness.as_ref())
                        .map(|l| l.latency_ns),
                    passed: passed(&result),
                });
                self.runs.push(RunEntry {
                    point: self.curve.len() - 1,
                    repetition: 1,
                    exit_code: code,
                    result: (*result).clone(),
                });
                Some(*result)
            }
            Step::Failed(message, code) => {
                crate::stderr_line!("iopulse search: error: {what}: {message}");
                self.code = code;
                None
            }
            Step::Interrupted(code) => {
                self.code = code;
                None
            }
        }
    }

    /// Steps, then bisection; the highest passing offered rate.
    fn latency(&mut self, max_iops: f64, steps: &[f64], percentile: Percentile, bound_ns: u64) -> Option<Option<f64>> {
        let mut plan = LatencySearch::new(max_iops, steps, self.args.precision);
        while let Some((rate, was_step)) = plan.next() {
            let spec = match step(self.workload, rate as u64).into_spec(self.args.runs.targets.clone(), false) {
                Ok(s) => s,
                Err(e) => {
                    crate::stderr_line!("iopulse search: error: the step at {rate} IOPS: {e}");
                    self.code = exit_code::USAGE;
                    return None;
                }
            };
            let planned = self.runs.len() + 2;
            self.session.set_planned(planned.max(1 + steps.len()).min(self.args.max_runs as usize));
            let phase = if was_step { "step" } else { "bisect" };
            let result = self.run(&spec, phase, Some(rate), Some(max_iops), |r| {
                percentile.of(&r.figures.total.latency_ns) <= bound_ns
            });
            let Some(result) = result else {
                // The budget ends the search with what it found; a signal or failure too.
                return (self.code == exit_code::SUCCESS).then(|| plan.answer());
            };
            plan.record(rate, percentile.of(&result.figures.total.latency_ns) <= bound_ns, was_step);
        }
        Some(plan.answer())
    }

    /// The smallest queue depth × threads reaching `percent` of `max_iops`.
    fn saturate(&mut self, base: &crate::workload::spec::Spec, max_iops: f64, percent: f64) -> Option<Answer> {
        let depth = if base.io.engine.caps().completes_inline { 1 } else { base.shape.queue_depth };
        let goal = max_iops * percent / 100.0;
        let found = |d: u32, t: u32, iops: f64| {
            let threads = if t == 1 { "1 thread".to_string() } else { format!("{t} threads") };
            Answer {
                text: format!(
                    "{percent:.0} % of max {} IOPS reached at queue depth {d} × {threads} ({} IOPS)",
                    units::iops(max_iops),
                    units::iops(iops)
                ),
                found: true,
                max_iops,
                iops: Some(iops),
                offered_iops: None,
                queue_depth: Some(d),
                threads: Some(t),
            }
        };
        for (d, t) in saturate_candidates(depth, base.shape.threads) {
            if (d, t) == (depth, base.shape.threads) {
                // The maximum's own configuration: reached by definition.
                return Some(found(base.shape.queue_depth, base.shape.threads, max_iops));
            }
            let spec = match at_depth(self.workload, d, t).into_spec(self.args.runs.targets.clone(), false) {
                Ok(s) => s,
                Err(e) => {
                    crate::stderr_line!("iopulse search: error: queue depth {d} × {t} threads: {e}");
                    self.code = exit_code::USAGE;
                    return None;
                }
            };
            let result = self.run(&spec, "saturate", None, Some(max_iops), |r| r.figures.total.iops >= goal)?;
            if result.figures.total.iops >= goal {
                return Some(found(d, t, result.figures.total.iops));
            }
        }
        None
    }

    /// The report, the outputs, the exit code.
    fn finish(mut self, goal: &Goal, answer: Option<Answer>) -> i32 {
        self.session.finish();
        let (goal_name, percentile, bound_ns, target_percent) = match goal {
            Goal::Latency { percentile, bound_ns } => {
                ("latency", Some(percentile.name().to_string()), Some(*bound_ns), None)
            }
            Goal::Saturate { percent } => ("saturate", None, None, Some(*percent)),
        };
        let doc = SearchDocument {
            kind: "search".into(),
            iopulse_version: env!("CARGO_PKG_VERSION").into(),
            goal: goal_name.into(),
            percentile,
            bound_ns,
            target_percent,
            curve: self.curve,
            answer,
            runs: self.runs,
            interrupted: self.session.interrupted(),
        };
        let text = match self.args.runs.output.format() {
            OutputFormat::Json => json_text(&doc),
            OutputFormat::Junit => {
                let scopes: Vec<(String, &crate::figures::result::RunResult)> =
                    doc.runs.iter().enumerate().map(|(i, r)| (format!("step {}", i + 1), &r.result)).collect();
                report::ci_render(&scopes, OutputFormat::Junit)
            }
            _ => report::sweep::search_text(&doc),
        };
        self.session.write_stdout(&text);
        if let Some(path) = &self.args.runs.output.json
            && let Err(e) = crate::storage::ledger::output::write_whole(path, json_text(&doc).as_bytes())
        {
            self.session.output_failure(format!("write --json {}: {e}", path.display()));
        }
        if let Some(dir) = &self.args.runs.output.plot {
            let drawn =
                std::fs::create_dir_all(dir).map_err(|e| format!("--plot {}: {e}", dir.display())).and_then(|()| {
                    let path = dir.join(report::plot::SEARCH_CHART);
                    report::plot::sweep_chart(&crate::figures::sweep::document::curve_chart(&doc), &path)
                        .map(|()| path)
                        .map_err(|e| e.to_string())
                });
            match drawn {
                Ok(path) if !self.args.runs.output.quiet => {
                    crate::stderr_line!("iopulse search: chart {}", path.display())
                }
                Ok(_) => {}
                Err(e) => self.session.output_failure(e),
            }
        }
        self.session.exit_code(self.code)
    }
}

/// "p99 ≤ 1 ms up to 41.2K IOPS (82 % of max 50.1K)", or why none was found.
fn latency_answer(curve: &[CurvePoint], max_iops: f64, p: Percentile, bound_ns: u64, found: Option<f64>) -> Answer {
    let bound = units::latency_ns(bound_ns);
    let at = |offered: f64| curve.iter().find(|c| c.offered_iops == Some(offered));
    match found.and_then(at) {
        Some(c) => Answer {
            text: format!(
                "{} ≤ {bound} up to {} IOPS ({:.0} % of max {})",
                p.name(),
                units::iops(c.iops),
                100.0 * c.iops / max_iops,
                units::iops(max_iops)
            ),
            found: true,
            max_iops,
            iops: Some(c.iops),
            offered_iops: c.offered_iops,
            queue_depth: None,
            threads: None,
        },
        None => {
            let lowest = curve.iter().filter(|c| c.offered_iops.is_some()).min_by(|a, b| a.iops.total_cmp(&b.iops));
            let text = match lowest {
                Some(c) => {
                    let of = |l: &LatencySummary| p.of(l);
                    let seen = of(&LatencySummary {
                        p50: c.p50_ns,
                        p90: c.p90_ns,
                        p99: c.p99_ns,
                        p99_9: c.p99_9_ns,
                        p99_99: c.p99_99_ns,
                        ..LatencySummary::default()
                    });
                    // How much of the miss was the tool's own lateness, not the storage's: it is
                    // part of every paced latency.
                    let lateness = c.lateness_ns.as_ref().map_or(String::new(), |l| {
                        format!(
                            "; the tool's own lateness (due → submitted), part of each latency, had {} {}",
                            p.name(),
                            units::latency_ns(of(l))
                        )
                    });
                    format!(
                        "{} ≤ {bound} not met even at {} IOPS ({:.1} % of max {}): {} was {}{lateness}",
                        p.name(),
                        units::iops(c.iops),
                        c.offered_percent.unwrap_or(0.0),
                        units::iops(max_iops),
                        p.name(),
                        units::latency_ns(seen)
                    )
                }
                None => format!("{} ≤ {bound}: no paced run was made", p.name()),
            };
            Answer { text, found: false, max_iops, iops: None, offered_iops: None, queue_depth: None, threads: None }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_and_steps_parse_and_refuse() {
        assert_eq!(parse_percent("5%").unwrap(), 5.0);
        assert_eq!(parse_percent(" 2.5 ").unwrap(), 2.5);
        assert!(parse_percent("0").is_err() && parse_percent("101").is_err() && parse_percent("x").is_err());
        assert_eq!(parse_steps("20,60,100").unwrap().0, vec![20.0, 60.0, 100.0]);
        assert!(parse_steps("50,50").unwrap_err().contains("increasing"));
    }
}
