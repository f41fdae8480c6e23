//! Which figures of a result read from a file a run can have: a rate or a share is a
//! finite number, never negative, and below a ceiling no machine reaches (a trillion IOPS,
//! ten petabytes per second); CPU times add up without overflowing. A result that says
//! otherwise was altered or damaged, and `merge`, `plot` and a sweep's `--resume` refuse it,
//! naming the field: added or drawn, such a figure would wrap a sum or print as 300 digits.
//!
//! It judges the figures of a `RunResult`, and of a metadata run's `MetaResult`
//! (`check_metadata`: with its histograms' counts); it computes and formats none.

use super::RunResult;
use crate::figures::result::meta_document::MetaResult;
use crate::io::stats::{OpSummary, decode_histogram};

/// Most I/Os (or operations of any kind) per second a result may say: 10^12, a hundred
/// thousand of today's fastest devices side by side.
pub const MAX_RATE: f64 = 1e12;
/// Most bytes per second: 10^16, ten petabytes per second.
pub const MAX_BANDWIDTH: f64 = 1e16;
/// Most of anything else that is not a share (CPU time per I/O in ns, cores busy, I/Os in
/// flight, ratios): 10^15.
pub const MAX_OTHER: f64 = 1e15;

// Each bound with the words refusing a figure above it. A share computed from counts may
// come out a hair above 100.
const RATE: (f64, &str) = (MAX_RATE, "above 1e12 per second");
const BANDWIDTH: (f64, &str) = (MAX_BANDWIDTH, "above 1e16 bytes per second");
const SHARE: (f64, &str) = (100.0 + 1e-6, "above 100 %");
const OTHER: (f64, &str) = (MAX_OTHER, "above 1e15");

/// A figure no run has: its path in the JSON document, its value, and the rule it breaks.
#[derive(Debug, Clone, PartialEq)]
pub struct Absurd {
    pub field: String,
    pub value: String,
    pub why: &'static str,
}

/// The first figure of `r` that no run has, if any.
pub fn check(r: &RunResult) -> Result<(), Absurd> {
    let mut c = Checker::default();
    c.result("", r);
    c.first.map_or(Ok(()), Err)
}

/// What is wrong with a metadata run's result: a figure no run has, or a histogram blob
/// that does not decode (its path, and why).
#[derive(Debug, Clone, PartialEq)]
pub enum MetaFault {
    Figure(Absurd),
    Histogram { field: String, why: String },
}

// The words refusing a metadata result's figure.
const NOT_FINITE: &str = "not a finite number";
const NEGATIVE: &str = "negative";
const ABOVE_RATE: &str = "above 1e12 per second";
const ABOVE_BANDWIDTH: &str = "above 1e16 bytes per second";
const ABOVE_SHARE: &str = "above 100 %";

/// The first figure of a metadata run's result `r` that no metadata run has, if any: a rate
/// or share that is not finite, negative or beyond any machine; a histogram whose blob
/// does not decode or whose count is not its kind's `ops`; a kind twice in one phase; a
/// phase whose `ops` is not the sum of its kinds'. Each histogram is decoded once here
/// (its header checked before anything is allocated).
pub fn check_metadata(r: &MetaResult) -> Result<(), MetaFault> {
    let figure = |field: String, value: String, why: &'static str| MetaFault::Figure(Absurd { field, value, why });
    let bounded = |field: String, v: f64, max: f64, above: &'static str| {
        let why = if !v.is_finite() {
            NOT_FINITE
        } else if v < 0.0 {
            NEGATIVE
        } else if v > max {
            above
        } else {
            return Ok(());
        };
        Err(figure(field, v.to_string(), why))
    };
    let rate = MAX_RATE;
    let bandwidth = MAX_BANDWIDTH;
    bounded("coverage_percent".into(), r.coverage_percent, 100.0 + 1e-6, ABOVE_SHARE)?;
    for (i, p) in r.phases.iter().enumerate() {
        let at = |field: &str| format!("phases[{i}].{field}");
        bounded(at("ops_per_sec"), p.ops_per_sec, rate, ABOVE_RATE)?;
        bounded(at("files_per_sec"), p.files_per_sec, rate, ABOVE_RATE)?;
        bounded(at("bytes_per_sec"), p.bytes_per_sec, bandwidth, ABOVE_BANDWIDTH)?;
        let mut sum = 0u64;
        for (j, o) in p.per_op.iter().enumerate() {
            let at = |field: &str| format!("phases[{i}].per_op[{j}].{field}");
            if p.per_op[..j].iter().any(|earlier| earlier.op == o.op) {
                return Err(figure(at("op"), o.op.name().into(), "a kind given twice in one phase"));
            }
            bounded(at("ops_per_sec"), o.ops_per_sec, rate, ABOVE_RATE)?;
            bounded(at("files_per_sec"), o.files_per_sec, rate, ABOVE_RATE)?;
            bounded(at("bytes_per_sec"), o.bytes_per_sec, bandwidth, ABOVE_BANDWIDTH)?;
            for (name, share) in
                [("share_asked_percent", o.share_asked_percent), ("share_achieved_percent", o.share_achieved_percent)]
            {
                if let Some(v) = share {
                    bounded(at(name), v, 100.0 + 1e-6, ABOVE_SHARE)?;
                }
            }
            if o.files > o.ops {
                return Err(figure(at("files"), o.files.to_string(), "more than its operations"));
            }
            sum = sum
                .checked_add(o.ops)
                .ok_or_else(|| figure(at("ops"), o.ops.to_string(), "the phase's kinds add up beyond 64 bits"))?;
            let counted = if o.histogram.is_empty() {
                0
            } else {
                decode_histogram(&o.histogram)
                    .map_err(|e| MetaFault::Histogram { field: at("histogram"), why: e.to_string() })?
                    .len()
            };
            if counted != o.ops {
                return Err(figure(
                    at("ops"),
                    o.ops.to_string(),
                    "not the count of its histogram (each operation is one sample)",
                ));
            }
        }
        if sum != p.ops {
            return Err(figure(at("ops"), p.ops.to_string(), "not the sum of its kinds' operations"));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Checker {
    first: Option<Absurd>,
}

impl Checker {
    fn figure(&mut self, field: impl FnOnce() -> String, v: f64, (max, above): (f64, &'static str)) {
        if self.first.is_some() {
            return;
        }
        let why = if !v.is_finite() {
            "not a finite number"
        } else if v < 0.0 {
            "negative"
        } else if v > max {
            above
        } else {
            return;
        };
        self.first = Some(Absurd { field: field(), value: shown(v), why });
    }

    fn rate(&mut self, field: &str, v: f64) {
        self.figure(|| field.to_string(), v, RATE);
    }

    fn share(&mut self, field: &str, v: f64) {
        self.figure(|| field.to_string(), v, SHARE);
    }

    fn other(&mut self, field: &str, v: f64) {
        self.figure(|| field.to_string(), v, OTHER);
    }

    fn op(&mut self, field: &str, op: &OpSummary) {
        self.rate(&format!("{field}.iops"), op.iops);
        self.figure(|| format!("{field}.bw_bytes_per_sec"), op.bw_bytes_per_sec, BANDWIDTH);
    }

    fn cpu_times(&mut self, field: &str, t: &crate::io::stats::CpuTimes) {
        if self.first.is_none() && t.user_ns.checked_add(t.sys_ns).is_none() {
            self.first = Some(Absurd {
                field: format!("{field}.user_ns"),
                value: t.user_ns.to_string(),
                why: "user and sys CPU time together overflow 64 bits",
            });
        }
    }

    fn result(&mut self, at: &str, r: &RunResult) {
        let f = |name: &str| if at.is_empty() { name.to_string() } else { format!("{at}.{name}") };
        for (name, op) in [("read", &r.figures.read), ("write", &r.figures.write), ("total", &r.figures.total)] {
            self.op(&f(name), op);
        }
        if let Some(op) = &r.figures.flush {
            self.op(&f("flush"), op);
        }
        if let Some(op) = &r.figures.trim {
            self.op(&f("trim"), op);
        }
        for (i, b) in r.figures.block_sizes.iter().enumerate() {
            let at = f(&format!("block_sizes[{i}]"));
            self.op(&format!("{at}.read"), &b.read);
            self.op(&format!("{at}.write"), &b.write);
            if let Some(op) = &b.trim {
                self.op(&format!("{at}.trim"), op);
            }
            let shares = [
                ("read_share_percent", Some(b.read_share_percent)),
                ("write_share_percent", Some(b.write_share_percent)),
                ("trim_share_percent", b.trim_share_percent),
                ("read_asked_percent", Some(b.read_asked_percent)),
                ("write_asked_percent", Some(b.write_asked_percent)),
                ("trim_asked_percent", b.trim_asked_percent),
            ];
            for (name, v) in shares {
                if let Some(v) = v {
                    self.share(&format!("{at}.{name}"), v);
                }
            }
        }
        self.other(&f("cpu.per_io_ns"), r.machine.cpu.per_io_ns);
        self.other(&f("cpu.workers_per_io_ns"), r.machine.cpu.workers_per_io_ns);
        self.other(&f("cpu.cores_busy"), r.machine.cpu.cores_busy);
        for (name, t) in [
            ("cpu.workers", &r.machine.cpu.workers),
            ("cpu.process", &r.machine.cpu.process),
            ("cpu.window", &r.machine.cpu.window),
        ] {
            self.cpu_times(&f(name), t);
        }
        self.other(&f("achieved_queue_depth.total"), r.figures.achieved_queue_depth.total);
        self.other(&f("achieved_queue_depth.mean_per_worker"), r.figures.achieved_queue_depth.mean_per_worker);
        for (i, w) in r.workers.iter().enumerate() {
            let at = f(&format!("workers[{i}]"));
            self.op(&format!("{at}.read"), &w.read);
            self.op(&format!("{at}.write"), &w.write);
            for (name, op) in [("flush", &w.flush), ("trim", &w.trim)] {
                if let Some(op) = op {
                    self.op(&format!("{at}.{name}"), op);
                }
            }
            self.cpu_times(&format!("{at}.cpu"), &w.cpu);
            self.other(&format!("{at}.achieved_queue_depth"), w.achieved_queue_depth);
        }
        for (i, t) in r.targets.iter().enumerate() {
            self.op(&f(&format!("targets[{i}].read")), &t.read);
            self.op(&f(&format!("targets[{i}].write")), &t.write);
        }
        for (i, row) in r.time_series.iter().enumerate() {
            let at = f(&format!("time_series[{i}]"));
            for (name, figures) in [("read", &row.read), ("write", &row.write), ("total", &row.total)] {
                self.rate(&format!("{at}.{name}.iops"), figures.iops);
                self.figure(|| format!("{at}.{name}.bw_bytes_per_sec"), figures.bw_bytes_per_sec, BANDWIDTH);
            }
        }
        if let Some(s) = &r.window.steady_state {
            if let Some(w) = &s.window {
                for (name, op) in [("read", &w.read), ("write", &w.write), ("total", &w.total)] {
                    self.op(&f(&format!("steady_state.window.{name}")), op);
                }
            }
            if let Some(w) = &s.whole_run {
                for (name, op) in [("read", &w.read), ("write", &w.write), ("total", &w.total)] {
                    self.op(&f(&format!("steady_state.whole_run.{name}")), op);
                }
            }
        }
        if let Some(rate) = r.schedule.pacing.as_ref().and_then(|p| p.rate.as_ref()) {
            self.rate(&f("pacing.rate.target_iops"), rate.target_iops);
            self.rate(&f("pacing.rate.target_iops_per_worker"), rate.target_iops_per_worker);
            self.rate(&f("pacing.rate.achieved_iops"), rate.achieved_iops);
        }
        if let Some(v) = &r.data.verification {
            self.share(&f("verification.success_percent"), v.success_percent);
            self.other(&f("verification.estimated_slowdown_percent"), v.estimated_slowdown_percent);
        }
        for (i, m) in r.combined.merged_from.iter().flatten().enumerate() {
            self.rate(&f(&format!("merged_from[{i}].iops")), m.iops);
        }
        if let Some(cluster) = &r.combined.cluster {
            self.rate(&f("cluster.median_iops"), cluster.median_iops);
            for (i, rank) in cluster.ranks.iter().enumerate() {
                let at = f(&format!("cluster.ranks[{i}]"));
                self.rate(&format!("{at}.iops"), rank.iops);
                self.figure(|| format!("{at}.bw_bytes_per_sec"), rank.bw_bytes_per_sec, BANDWIDTH);
                if let Some(result) = &rank.result {
                    self.result(&format!("{at}.result"), result);
                }
            }
        }
    }
}

/// A figure as a person reads it: plain when short, else with an exponent (never 300 digits).
fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e15 { format!("{v}") } else { format!("{v:e}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_shown_short() {
        assert_eq!(shown(-5.0), "-5");
        assert_eq!(shown(1e308), "1e308");
        assert_eq!(shown(f64::NAN), "NaN");
    }

    #[test]
    fn rates_shares_and_others_have_their_bounds() {
        let mut c = Checker::default();
        c.rate("iops", 1e11);
        c.share("p", 100.0);
        c.other("x", 0.0);
        assert_eq!(c.first, None);
        c.rate("total.iops", 1e308);
        assert_eq!(
            c.first,
            Some(Absurd { field: "total.iops".into(), value: "1e308".into(), why: "above 1e12 per second" })
        );
        let mut c = Checker::default();
        c.share("s", 100.5);
        assert_eq!(c.first.unwrap().why, "above 100 %");
        let mut c = Checker::default();
        c.other("o", -0.5);
        c.rate("later", f64::INFINITY);
        let first = c.first.unwrap();
        assert_eq!((first.field.as_str(), first.why), ("o", "negative"), "the first one is kept");
    }
}
