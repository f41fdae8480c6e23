//! The grid of a sweep: each flag given a comma list (`--queue-depth 1,4,16 --block-size
//! 512,4k`) is an axis; the points are every combination, the first axis varying slowest.
//! Their number is counted with checked arithmetic and bounded before any is made.
//!
//! It knows neither flags nor runs: it combines names and values (`plan::sweep` makes each
//! combination a checked `Spec`).

use crate::base::diagnostics::error::UsageError;
use crate::workload::spec::Spec;

/// Most points a grid may have.
pub const MOST_POINTS: usize = 100_000;

/// One list: the flag's long name (without `--`) and its values, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub flag: String,
    pub values: Vec<String>,
}

/// One combination of the axes' values, planned.
#[derive(Clone, Debug)]
pub struct Point {
    /// (flag, value) for each axis, in the axes' order.
    pub params: Vec<(String, String)>,
    /// What identifies the point across runs of the sweep (`--resume`): its targets and
    /// every flag with its value, in a fixed order.
    pub key: String,
    pub spec: Spec,
}

impl Point {
    /// "queue-depth=4 block-size=4k" (or "(one point)" for a grid without axes).
    pub fn label(&self) -> String {
        label(&self.params).unwrap_or_else(|| "(one point)".to_string())
    }
}

/// "queue-depth=4 block-size=4k", or `None` without axes.
pub fn label(params: &[(String, String)]) -> Option<String> {
    (!params.is_empty()).then(|| params.iter().map(|(f, v)| format!("{f}={v}")).collect::<Vec<_>>().join(" "))
}

#[derive(Clone, Debug)]
pub struct Grid {
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
}

/// Every combination of the axes' values, the first axis slowest: at most `MOST_POINTS`.
pub fn combinations(axes: &[Axis]) -> Result<Vec<Vec<(String, String)>>, UsageError> {
    let total = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()).filter(|&n| n <= MOST_POINTS));
    let Some(total) = total else {
        let sizes: Vec<String> = axes.iter().map(|a| format!("{} ({})", a.flag, a.values.len())).collect();
        return Err(UsageError::new(format!(
            "the lists make more than {MOST_POINTS} points ({}): give shorter lists",
            sizes.join(" x ")
        )));
    };
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        // Mixed radix, the last axis fastest.
        let mut rest = index;
        let mut chosen = vec![0; axes.len()];
        for (a, axis) in axes.iter().enumerate().rev() {
            chosen[a] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        points.push(axes.iter().zip(&chosen).map(|(a, &i)| (a.flag.clone(), a.values[i].clone())).collect());
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(flag: &str, n: usize) -> Axis {
        Axis { flag: flag.into(), values: (0..n).map(|i| i.to_string()).collect() }
    }

    #[test]
    fn combinations_first_axis_slowest() {
        let points = combinations(&[axis("queue-depth", 2), axis("block-size", 2)]).unwrap();
        let labels: Vec<String> = points.iter().map(|p| label(p).unwrap()).collect();
        assert_eq!(
            labels,
            [
                "queue-depth=0 block-size=0",
                "queue-depth=0 block-size=1",
                "queue-depth=1 block-size=0",
                "queue-depth=1 block-size=1"
            ]
        );
        assert_eq!(combinations(&[]).unwrap(), vec![Vec::<(String, String)>::new()]);
    }

    #[test]
    fn a_product_beyond_the_limit_is_refused_even_when_it_wraps() {
        // 2^16 values four times make 2^64 points: a product in usize wraps to 0.
        let axes: Vec<Axis> = (0..4).map(|i| axis(&format!("f{i}"), 1 << 16)).collect();
        let e = combinations(&axes).unwrap_err().message;
        assert!(e.contains("more than 100000 points"), "{e}");
        assert!(combinations(&[axis("a", 1000), axis("b", 101)]).is_err());
        assert_eq!(combinations(&[axis("a", 1000), axis("b", 100)]).unwrap().len(), 100_000);
    }
}
