//! The plan of a sweep: each point of its grid (`sweep::grid`) is the benchmark's flags
//! with one value per list, filled into the same typed groups a command line fills
//! (`cli::table`) and checked into a `Spec`, every point before the first run.

use crate::base::diagnostics::error::UsageError;
use crate::figures::sweep::grid::{self, Axis, Grid, Point};
use crate::front::cli::lists::Given;
use crate::front::cli::table::{FlagTable, FlagValue};
use crate::front::cli::{WorkloadArgs, command_of};
use std::path::PathBuf;

/// The grid of `flags` (each a switch, one value, or a list) on `targets`, every point
/// checked as the benchmark's command line would be.
pub fn grid(targets: &[PathBuf], flags: &[(String, Given)]) -> Result<Grid, UsageError> {
    let mut base = FlagTable::new();
    let mut axes = Vec::new();
    for (flag, given) in flags {
        match given {
            Given::Switch => base.set(flag, FlagValue::Switch(true)),
            Given::Values(v) if v.len() == 1 => base.set(flag, FlagValue::Text(v[0].clone())),
            Given::Values(v) => axes.push(Axis { flag: flag.clone(), values: v.clone() }),
        }
    }
    let command = command_of::<WorkloadArgs>();
    let mut points = Vec::new();
    for params in grid::combinations(&axes)? {
        let mut table = base.clone();
        for (flag, value) in &params {
            table.set(flag, FlagValue::Text(value.clone()));
        }
        let at = |message: String| match grid::label(&params) {
            Some(label) => UsageError::new(format!("point {label}: {message}")),
            None => UsageError::new(message),
        };
        let workload: WorkloadArgs =
            table.fill(&command).map_err(|(flag, e)| at(format!("--{flag}: {}", e.describe(&flag))))?;
        let spec = workload.into_spec(targets.to_vec(), false).map_err(|e| at(e.message))?;
        points.push(Point { key: key(targets, &table), params, spec });
    }
    Ok(Grid { axes, points })
}

/// A point's identity: its targets, then each flag and value in name order.
fn key(targets: &[PathBuf], table: &FlagTable) -> String {
    let mut parts: Vec<String> = targets.iter().map(|t| t.display().to_string()).collect();
    parts.extend(table.entries().map(|(flag, value)| match value {
        FlagValue::Switch(true) => format!("--{flag}"),
        FlagValue::Switch(false) => String::new(),
        FlagValue::Text(v) => format!("--{flag}={v}"),
    }));
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &[&str]) -> Given {
        Given::Values(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn lists_span_a_grid_and_every_point_is_checked() {
        let flags = vec![
            ("engine".to_string(), values(&["null"])),
            ("queue-depth".to_string(), values(&["1", "4"])),
            ("block-size".to_string(), values(&["512", "4k"])),
            ("threads".to_string(), values(&["2"])),
        ];
        let g = grid(&[], &flags).unwrap();
        let specs: Vec<(u32, u64, u32)> = g
            .points
            .iter()
            .map(|p| (p.spec.shape.queue_depth, p.spec.shape.block_size_bytes, p.spec.shape.threads))
            .collect();
        assert_eq!(specs, vec![(1, 512, 2), (1, 4096, 2), (4, 512, 2), (4, 4096, 2)]);
        assert_eq!(g.points[1].label(), "queue-depth=1 block-size=4k");
        assert_ne!(g.points[0].key, g.points[1].key);
        let bad = vec![("engine".to_string(), values(&["null"])), ("queue-depth".to_string(), values(&["1", "0"]))];
        let e = grid(&[], &bad).unwrap_err().message;
        assert!(e.contains("point queue-depth=0") && e.contains("--queue-depth"), "{e}");
    }
}
