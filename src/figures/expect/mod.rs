//! `--expect 'read.p99<=2ms,iops>=40k,cpu.per_io<=10us'`: bounds on a run's figures,
//! parsed when the flags are checked (a bad one is refused naming the flag) and evaluated
//! once the run's result is assembled (`evaluate`), each outcome recorded in the result.
//!
//! Figures are named as `result::named` names them. Times take a unit (`2ms`, `10us`),
//! rates a bare number with an optional SI suffix (`40k` = 40,000 IOPS), bandwidths a size
//! per second in binary units (`500M`, `500MiB/s`).
//!
//! It parses and judges; it formats nothing (the reports do).

use crate::figures::result::named::{self, Unit};
use crate::figures::result::{ExpectationOutcome, RunResult};

/// One parsed expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// As written, spaces removed.
    pub text: String,
    pub figure: named::Name,
    pub figure_text: String,
    pub comparison: Comparison,
    /// In the figure's unit (IOPS, bytes per second, ns).
    pub bound: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    AtMost,
    AtLeast,
    Below,
    Above,
}

impl Comparison {
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::AtMost => "<=",
            Comparison::AtLeast => ">=",
            Comparison::Below => "<",
            Comparison::Above => ">",
        }
    }

    fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Comparison::AtMost => value <= bound,
            Comparison::AtLeast => value >= bound,
            Comparison::Below => value < bound,
            Comparison::Above => value > bound,
        }
    }
}

/// A comma list of expectations (`read.p99<=2ms,iops>=40k`).
pub fn parse_list(text: &str) -> Result<Vec<Expectation>, String> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(format!(
            "`{text}` has an empty expectation: give FIGURE<=VALUE items separated by commas, e.g. 'read.p99<=2ms,iops>=40k'"
        ));
    }
    items.into_iter().map(parse_one).collect()
}

fn parse_one(text: &str) -> Result<Expectation, String> {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let hint = "write FIGURE<=VALUE or FIGURE>=VALUE (also < and >), e.g. read.p99<=2ms, iops>=40k, cpu.per_io<=10us";
    let at = text.find(['<', '>']).ok_or_else(|| format!("`{text}` has no comparison: {hint}"))?;
    let (figure_text, rest) = text.split_at(at);
    if figure_text.ends_with(['=', '!']) {
        return Err(format!("`{text}`: write the comparison as <=, >=, < or >: {hint}"));
    }
    let (comparison, value) = if let Some(v) = rest.strip_prefix("<=") {
        (Comparison::AtMost, v)
    } else if let Some(v) = rest.strip_prefix(">=") {
        (Comparison::AtLeast, v)
    } else if let Some(v) = rest.strip_prefix('<') {
        (Comparison::Below, v)
    } else {
        (Comparison::Above, &rest[1..])
    };
    let figure = named::parse(figure_text)
        .ok_or_else(|| format!("`{text}`: `{figure_text}` is not a figure: give one of {}", named::all_names()))?;
    let bound = match figure.unit {
        Unit::Ns => {
            if value.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return Err(format!("`{text}`: give the time with a unit (ns, us, ms, s), e.g. {figure_text}<=2ms"));
            }
            crate::base::units::parse_duration(value).map_err(|e| format!("`{text}`: {e}"))?.as_nanos() as f64
        }
        Unit::Iops | Unit::OpsPerSec => parse_si(value).ok_or_else(|| {
            format!("`{text}`: `{value}` is not a rate: give a number with an optional k, M or G (40k = 40,000 IOPS)")
        })?,
        Unit::BytesPerSec => {
            let size = value.trim_end_matches("/s");
            crate::base::units::parse_size(size).map_err(|e| format!("`{text}`: {e}"))? as f64
        }
    };
    // A bound beyond any figure a run has is a typo, not an expectation: judged against
    // the ceilings a result's figures are judged against.
    let ceiling = match figure.unit {
        Unit::Iops | Unit::OpsPerSec => Some((crate::figures::result::figures::MAX_RATE, "1e12 per second")),
        Unit::BytesPerSec => Some((crate::figures::result::figures::MAX_BANDWIDTH, "1e16 bytes per second")),
        Unit::Ns => None,
    };
    if let Some((most, said)) = ceiling
        && bound > most
    {
        return Err(format!(
            "`{text}`: `{value}` is more than any run reaches (above {said}): give a bound a run can meet"
        ));
    }
    Ok(Expectation { text: text.clone(), figure, figure_text: figure_text.to_string(), comparison, bound })
}

/// Refuses an expectation of `spec` whose figure the run cannot have: one of a direction
/// (`read`, `write`, `trim`, `flush`) the run never issues (it could only fail).
pub fn refuse_figures_the_run_lacks(
    spec: &crate::workload::spec::Spec,
) -> Result<(), crate::base::diagnostics::error::UsageError> {
    if spec.metadata.is_some() {
        return Ok(());
    }
    let lacking = spec.output.expect.iter().flat_map(|t| t.split(',')).find_map(|t| {
        let op = parse_one(t).ok()?.figure.op;
        (op != "total" && !spec.issues(op)).then(|| (t.trim(), op))
    });
    match lacking {
        Some((expectation, op)) => Err(crate::base::diagnostics::error::UsageError::new(format!(
            "--expect {expectation}: this run issues no {op}s, so the figure does not exist and the expectation could only fail; drop it, or give the run {op}s"
        ))),
        None => Ok(()),
    }
}

/// `40k` → 40,000; `1.5M` → 1,500,000; `800` → 800.
fn parse_si(text: &str) -> Option<f64> {
    let (number, scale) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1e3),
        'm' | 'M' => (&text[..text.len() - 1], 1e6),
        'g' | 'G' => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    number.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).map(|v| v * scale)
}

/// Each expectation of `texts` (checked when the spec was made) judged against `r`. A
/// figure the run does not have (a read latency of a run without reads) fails: the
/// expectation cannot be shown to hold.
pub fn evaluate(texts: &[String], r: &RunResult) -> Vec<ExpectationOutcome> {
    texts
        .iter()
        .filter_map(|t| parse_one(t).ok())
        .map(|e| {
            let value = named::value(r, &e.figure);
            ExpectationOutcome {
                expectation: e.text.clone(),
                figure: e.figure_text.clone(),
                comparison: e.comparison.symbol().to_string(),
                bound: e.bound,
                unit: e.figure.unit,
                value,
                passed: value.is_some_and(|v| e.comparison.holds(v, e.bound)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_parse_with_their_units() {
        let l = parse_list("read.p99<=2ms, iops>=40k,cpu.per_io<10us,write.bw>500MiB/s").unwrap();
        assert_eq!(l.len(), 4);
        assert_eq!((l[0].comparison, l[0].bound), (Comparison::AtMost, 2e6));
        assert_eq!((l[1].comparison, l[1].bound), (Comparison::AtLeast, 40_000.0));
        assert_eq!((l[2].comparison, l[2].bound), (Comparison::Below, 10_000.0));
        assert_eq!((l[3].comparison, l[3].bound), (Comparison::Above, 500.0 * 1048576.0));
        assert_eq!(l[0].text, "read.p99<=2ms");
    }

    #[test]
    fn bad_expectations_are_named() {
        assert!(parse_list("read.p99=2ms").unwrap_err().contains("no comparison"));
        assert!(parse_list("iops=>2").unwrap_err().contains("<=, >=, < or >"));
        assert!(parse_list("read.p98<=2ms").unwrap_err().contains("not a figure"));
        assert!(parse_list("read.p99<=2").unwrap_err().contains("with a unit"));
        assert!(parse_list("iops>=lots").unwrap_err().contains("not a rate"));
        assert!(parse_list("iops>=1,").unwrap_err().contains("empty expectation"));
    }
}
