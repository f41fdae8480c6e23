//! `iopulse compare`: the figures of two sets of results side by side, each with its
//! change, a confidence interval and a verdict (improved, regressed, no change,
//! inconclusive), and what differs between the two sides besides their figures.
//!
//! - `inputs.rs`: the sides, read from files and directories, grouped by scope (a run, a
//!   job of a job file, a point of a sweep);
//! - `comparable.rs`: what differs between the sides (spec, engine, device, kernel, ...);
//! - `rank.rs`: the statistics (rank test, Hodges-Lehmann interval, a percentile's interval);
//! - `metadata.rs`: metadata runs' results (`--files`) compared phase by phase, kind by kind.
//!
//! With several runs on each side a figure is judged by the spread of its runs (the rank
//! test); with one run on each side latency percentiles are judged from the histograms
//! (their order statistics), and rates not at all: one run says nothing of the next.
//!
//! It computes the comparison; it formats nothing (output/report/compare.rs does).

pub mod comparable;
pub mod inputs;
pub mod metadata;
mod rank;

use crate::figures::result::RunResult;
use crate::figures::result::named::{self, Unit};
use comparable::Difference;
use inputs::{Run, Side};
use serde::{Deserialize, Serialize};

/// How a comparison is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The smallest change that matters, as a fraction (0.05 for 5 %).
    pub threshold: f64,
    /// Of the confidence intervals and the rank test, as a fraction (0.99 for 99 %).
    pub confidence: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    NoChange,
    Inconclusive,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// How a figure was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Mann-Whitney rank test over the runs, Hodges-Lehmann interval of the ratio.
    RankTest,
    /// One run per side: the percentile's interval from each histogram.
    Histogram,
    /// Not judged (one run per side of a rate, a figure absent or zero).
    None,
}

/// One figure of one scope compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureComparison {
    pub scope: String,
    /// As `--expect` names it: `iops`, `read.p99`, `cpu.per_io`.
    pub figure: String,
    pub unit: Unit,
    pub higher_is_better: bool,
    pub method: Method,
    pub base_runs: usize,
    pub new_runs: usize,
    /// The median over the side's runs (the figure of its one run).
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// new / base − 1, in percent: the Hodges-Lehmann estimate with repetitions, the ratio
    /// of the two figures with one run each.
    pub change_percent: Option<f64>,
    /// The confidence interval of the change, in percent (null: not reached).
    pub interval_percent: Option<[f64; 2]>,
    /// The rank test's two-sided p-value (with repetitions).
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// Why the verdict is what it is, when not plain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One side as the comparison saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    pub files: Vec<String>,
    /// Runs read, all scopes together.
    pub runs: usize,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub improved: usize,
    pub regressed: usize,
    pub no_change: usize,
    pub inconclusive: usize,
}

/// `iopulse compare --output-format json` (docs/compare.schema.json).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always "compare".
    pub kind: String,
    pub iopulse_version: String,
    pub threshold_percent: f64,
    pub confidence_percent: f64,
    pub base: SideSummary,
    pub new: SideSummary,
    /// What differs between the sides besides their figures (compared anyway: --force).
    pub differences: Vec<Difference>,
    /// Scopes of one side only (not compared).
    pub only_in_base: Vec<String>,
    pub only_in_new: Vec<String>,
    pub figures: Vec<FigureComparison>,
    pub counts: Counts,
    /// Some figure regressed: the exit code is 5.
    pub regressed: bool,
}

/// Every difference between the two sides, and within each side, that makes the runs
/// not comparable: each scope's runs against the base's first run of that scope.
pub fn differences(base: &Side, new: &Side) -> Vec<Difference> {
    let mut out = Vec::new();
    for (scope, base_runs) in &base.scopes {
        let Some(first) = base_runs.first() else { continue };
        let others = base_runs[1..].iter().chain(new.runs(scope).unwrap_or_default());
        for other in others {
            for d in comparable::known(comparable::differences(scope, first, other)) {
                // Each field once per scope: five runs of one other kernel are one difference.
                if !out.iter().any(|o: &Difference| o.scope == d.scope && o.field == d.field) {
                    out.push(d);
                }
            }
        }
    }
    for (scope, runs) in &new.scopes {
        if base.runs(scope).is_some() {
            continue;
        }
        if let Some(first) = runs.first() {
            for other in &runs[1..] {
                out.extend(comparable::known(comparable::differences(scope, first, other)));
            }
        }
    }
    out
}

/// Compares `new` against `base`, scope by scope, figure by figure.
pub fn compare(base: &Side, new: &Side, differences: Vec<Difference>, options: Options) -> Comparison {
    let mut figures = Vec::new();
    for (scope, base_runs) in &base.scopes {
        let Some(new_runs) = new.runs(scope) else { continue };
        let mut names = named::compared(&base_runs[0].result);
        for n in named::compared(&new_runs[0].result) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        for name in names {
            figures.push(figure(scope, &name, base_runs, new_runs, options));
        }
    }
    let only = |a: &Side, b: &Side| -> Vec<String> {
        a.scopes.iter().filter(|(s, _)| b.runs(s).is_none()).map(|(s, _)| s.clone()).collect()
    };
    let summary = |s: &Side| SideSummary { files: s.files.clone(), runs: s.scopes.iter().map(|(_, r)| r.len()).sum() };
    let mut only_in = [only(base, new), only(new, base)];
    // A job file's jobs with `files`, beside its block jobs: their own figures, job by job.
    let (job_figures, [only_base, only_new]) = metadata::job_figures(base, new, options);
    figures.extend(job_figures);
    only_in[0].extend(only_base);
    only_in[1].extend(only_new);
    comparison([summary(base), summary(new)], differences, only_in, figures, options)
}

/// The comparison of `figures`, counted, with the two sides' summaries, their
/// differences and the scopes of one side only (base's, then new's).
pub(crate) fn comparison(
    [base, new]: [SideSummary; 2],
    differences: Vec<Difference>,
    [only_in_base, only_in_new]: [Vec<String>; 2],
    figures: Vec<FigureComparison>,
    options: Options,
) -> Comparison {
    let mut counts = Counts::default();
    for f in &figures {
        match f.verdict {
            Verdict::Improved => counts.improved += 1,
            Verdict::Regressed => counts.regressed += 1,
            Verdict::NoChange => counts.no_change += 1,
            Verdict::Inconclusive => counts.inconclusive += 1,
        }
    }
    Comparison {
        kind: "compare".into(),
        iopulse_version: env!("CARGO_PKG_VERSION").into(),
        threshold_percent: options.threshold * 100.0,
        confidence_percent: options.confidence * 100.0,
        base,
        new,
        differences,
        only_in_base,
        only_in_new,
        regressed: counts.regressed > 0,
        figures,
        counts,
    }
}

fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (n > 0).then(|| if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

fn figure(scope: &str, name: &str, base: &[Run], new: &[Run], options: Options) -> FigureComparison {
    let parsed = named::parse(name).expect("compared figures have names");
    let values = |runs: &[Run]| -> Vec<f64> { runs.iter().filter_map(|r| named::value(&r.result, &parsed)).collect() };
    let histogram = |r: &RunResult| crate::io::stats::decode_histogram(named::histogram(r, parsed.op)?).ok();
    let figure = Figure {
        scope,
        name,
        unit: parsed.unit,
        // `total` has no histogram of its own: its percentiles are judged only with repetitions.
        quantile: parsed.quantile.filter(|_| parsed.op != "total"),
    };
    judge(&figure, &values(base), &values(new), || (histogram(&base[0].result), histogram(&new[0].result)), options)
}

/// What a figure is, for `judge`.
pub(crate) struct Figure<'a> {
    pub scope: &'a str,
    pub name: &'a str,
    pub unit: Unit,
    /// The quantile of a percentile that a single run's histogram holds.
    pub quantile: Option<f64>,
}

/// Judges one figure from its values over the base's runs `bv` and the new side's `nv`:
/// with repetitions by the rank test, with one run each (a percentile only) from the two
/// histograms `histograms` gives.
pub(crate) fn judge(
    fig: &Figure,
    bv: &[f64],
    nv: &[f64],
    histograms: impl FnOnce() -> (Option<hdrhistogram::Histogram<u64>>, Option<hdrhistogram::Histogram<u64>>),
    options: Options,
) -> FigureComparison {
    let (scope, name) = (fig.scope, fig.name);
    let parsed = fig;
    let mut f = FigureComparison {
        scope: scope.to_string(),
        figure: name.to_string(),
        unit: parsed.unit,
        higher_is_better: parsed.unit.higher_is_better(),
        method: Method::None,
        base_runs: bv.len(),
        new_runs: nv.len(),
        base: median(bv),
        new: median(nv),
        change_percent: None,
        interval_percent: None,
        p_value: None,
        verdict: Verdict::Inconclusive,
        note: None,
    };
    if bv.is_empty() || nv.is_empty() {
        f.note = Some(format!("not in the {} side's runs", if bv.is_empty() { "base" } else { "new" }));
        return f;
    }
    if let (Some(b), Some(n)) = (f.base, f.new)
        && b > 0.0
    {
        f.change_percent = Some((n / b - 1.0) * 100.0);
    }
    let confidence_text = format!("{}%", options.confidence * 100.0);
    if bv.len() == 1 && nv.len() == 1 {
        let Some(q) = parsed.quantile else {
            let rates = if fig.unit == Unit::OpsPerSec { "operation rates" } else { "IOPS, bandwidth and CPU per I/O" };
            f.note = Some(format!(
                "one run per side: {rates} from single runs cannot be judged (their run-to-run spread is unknown); give five runs per side (a sweep with --repeat 5, or five --json files)"
            ));
            return f;
        };
        let interval = |h: Option<hdrhistogram::Histogram<u64>>| rank::percentile_interval(&h?, q, options.confidence);
        let (base_hist, new_hist) = histograms();
        let (Some((b, b_lo, b_hi)), Some((n, n_lo, n_hi))) = (interval(base_hist), interval(new_hist)) else {
            f.note = Some("a histogram is empty".into());
            return f;
        };
        if b <= 0.0 || b_lo <= 0.0 {
            f.note = Some("a figure of zero has no ratio".into());
            return f;
        }
        f.method = Method::Histogram;
        f.change_percent = Some((n / b - 1.0) * 100.0);
        let (lo, hi) = (n_lo / b_hi - 1.0, n_hi / b_lo - 1.0);
        f.interval_percent = Some([lo * 100.0, hi * 100.0]);
        f.verdict = verdict(n / b - 1.0, lo, hi, parsed.unit.higher_is_better(), options.threshold);
        f.note = Some(
            "one run per side: judged from the two histograms, which know nothing of the spread between runs".into(),
        );
        return f;
    }
    let Some(s) = rank::shift(bv, nv, options.confidence) else {
        f.note = Some("a figure of zero has no ratio".into());
        return f;
    };
    f.method = Method::RankTest;
    f.change_percent = Some((s.ratio - 1.0) * 100.0);
    f.p_value = Some(s.p_value);
    match s.interval {
        Some((lo, hi)) => {
            f.interval_percent = Some([(lo - 1.0) * 100.0, (hi - 1.0) * 100.0]);
            let alpha = 1.0 - options.confidence;
            f.verdict = if s.p_value >= alpha && (lo - 1.0 < -options.threshold || hi - 1.0 > options.threshold) {
                Verdict::Inconclusive
            } else {
                verdict(s.ratio - 1.0, lo - 1.0, hi - 1.0, parsed.unit.higher_is_better(), options.threshold)
            };
        }
        None => {
            f.note = Some(format!(
                "{} and {} runs cannot reach {confidence_text} confidence: give at least 5 runs per side (or a lower --confidence)",
                bv.len(),
                nv.len()
            ));
        }
    }
    f
}

/// The verdict of a change `c` with its interval [lo, hi] (fractions: −0.15 is 15 % less):
/// regressed or improved when the interval excludes no change and the change is at least
/// the threshold; no change when the interval lies within ±threshold or the change, though
/// real, is smaller than it; else inconclusive.
fn verdict(c: f64, lo: f64, hi: f64, higher_is_better: bool, threshold: f64) -> Verdict {
    let significant = lo > 0.0 || hi < 0.0;
    if significant && c.abs() >= threshold {
        if (c > 0.0) == higher_is_better { Verdict::Improved } else { Verdict::Regressed }
    } else if (lo >= -threshold && hi <= threshold) || significant {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_direction_threshold_and_interval() {
        // IOPS 15 % down, interval well below: regressed; the same for a latency: improved.
        assert_eq!(verdict(-0.15, -0.2, -0.1, true, 0.05), Verdict::Regressed);
        assert_eq!(verdict(-0.15, -0.2, -0.1, false, 0.05), Verdict::Improved);
        assert_eq!(verdict(0.15, 0.1, 0.2, false, 0.05), Verdict::Regressed);
        // Within the threshold: no change; a real change smaller than it: no change too.
        assert_eq!(verdict(0.01, -0.02, 0.03, true, 0.05), Verdict::NoChange);
        assert_eq!(verdict(-0.03, -0.06, -0.01, true, 0.05), Verdict::NoChange);
        // Wide interval across zero: inconclusive.
        assert_eq!(verdict(-0.1, -0.3, 0.1, true, 0.05), Verdict::Inconclusive);
    }
}
