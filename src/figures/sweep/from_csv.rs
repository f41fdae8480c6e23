//! A sweep read back from a `--csv` file: the rows grouped into series (one per
//! value of a `by` column) of points (one per value of the `x` column), each
//! point the median of the repetitions' `y` with their range. What
//! `iopulse plot --sweep` draws; this module computes, the plot only draws.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One x of a series: the repetitions' y summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub x: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Rows (repetitions) behind this point.
    pub samples: usize,
}

/// The points of one value of the `by` column (or of all rows without `by`).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSeries {
    /// The `by` value ("4096"), empty without `by`.
    pub label: String,
    /// Sorted by x.
    pub points: Vec<SweepPoint>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    pub x: String,
    pub y: String,
    pub by: Option<String>,
    /// The `--where` filters applied, as "column=value".
    pub filters: Vec<String>,
    pub series: Vec<SweepSeries>,
    /// Rows used (rows with an empty y, e.g. write latency of a read run, are left out).
    pub rows: usize,
    /// A y drawn across the chart (a search's latency bound), with its legend.
    pub bound_y: Option<(String, f64)>,
    /// An x drawn up the chart (a search's answer), with its legend.
    pub answer_x: Option<(String, f64)>,
    /// The y axis in decades (a search's latency percentiles, which span several: on a
    /// linear axis p50 and p99 lay flat on zero under p99.99).
    pub log_y: bool,
}

/// The most read of a sweep's table: 400,000 rows of a few hundred bytes.
pub const MAX_TABLE_BYTES: u64 = 256 << 20;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("--sweep {path}: {source}; give the --csv file of a sweep")]
    Open {
        path: PathBuf,
        #[source]
        source: crate::storage::targets::input_file::InputFileError,
    },
    #[error("--sweep {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("--sweep {path}: no column `{column}` (given with {flag}); columns: {available}")]
    NoColumn { path: PathBuf, flag: &'static str, column: String, available: String },
    #[error("--sweep {path} line {line}: column `{column}` is `{value}`, not a finite number")]
    NotNumber { path: PathBuf, line: u64, column: String, value: String },
    #[error("--sweep {path}: no row{} has a value in column `{column}`", if *.filtered { " matching --where" } else { "" })]
    Empty { path: PathBuf, column: String, filtered: bool },
}

/// Reads `path` (a regular file of at most `MAX_TABLE_BYTES`) and groups it: series by
/// `by`, points by `x`, medians of `y`, over the rows whose columns equal every
/// `(column, value)` of `filters`. A value that is not a finite number is refused.
pub fn load(
    path: &Path,
    x: &str,
    y: &str,
    by: Option<&str>,
    filters: &[(String, String)],
) -> Result<Sweep, SweepError> {
    let read_error = |source| SweepError::Read { path: path.to_path_buf(), source };
    // A regular file, bounded (never a FIFO, /dev/zero or /proc: `input_file`).
    let file = crate::storage::targets::input_file::open(path, MAX_TABLE_BYTES)
        .map_err(|source| SweepError::Open { path: path.to_path_buf(), source })?;
    let mut reader = csv::Reader::from_reader(file);
    let headers = reader.headers().map_err(read_error)?.clone();
    let column = |flag: &'static str, name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| SweepError::NoColumn {
            path: path.to_path_buf(),
            flag,
            column: name.to_string(),
            available: headers.iter().collect::<Vec<_>>().join(", "),
        })
    };
    let xi = column("--x", x)?;
    let yi = column("--y", y)?;
    let bi = by.map(|b| column("--by", b)).transpose()?;
    let wanted = filters
        .iter()
        .map(|(name, value)| column("--where", name).map(|i| (i, value.as_str())))
        .collect::<Result<Vec<_>, _>>()?;

    // label → x (as bits, for exact grouping) → ys
    let mut groups: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.map_err(read_error)?;
        if wanted.iter().any(|&(i, value)| record.get(i).unwrap_or("").trim() != value) {
            continue;
        }
        let line = record.position().map_or(0, |p| p.line());
        let number = |i: usize, name: &str| -> Result<Option<f64>, SweepError> {
            let value = record.get(i).unwrap_or("").trim();
            if value.is_empty() {
                return Ok(None);
            }
            value.parse::<f64>().ok().filter(|v| v.is_finite()).map(Some).ok_or_else(|| SweepError::NotNumber {
                path: path.to_path_buf(),
                line,
                column: name.to_string(),
                value: value.to_string(),
            })
        };
        let (Some(xv), Some(yv)) = (number(xi, x)?, number(yi, y)?) else { continue };
        let label = bi.map(|i| record.get(i).unwrap_or("").to_string()).unwrap_or_default();
        groups.entry(label).or_default().entry(xv.to_bits()).or_default().push(yv);
        rows += 1;
    }
    if rows == 0 {
        return Err(SweepError::Empty {
            path: path.to_path_buf(),
            column: y.to_string(),
            filtered: !filters.is_empty(),
        });
    }
    let mut series: Vec<SweepSeries> = groups
        .into_iter()
        .map(|(label, by_x)| {
            let mut points: Vec<SweepPoint> = by_x
                .into_iter()
                .map(|(bits, mut ys)| {
                    ys.sort_by(f64::total_cmp);
                    let n = ys.len();
                    let median = if n % 2 == 1 { ys[n / 2] } else { (ys[n / 2 - 1] + ys[n / 2]) / 2.0 };
                    SweepPoint { x: f64::from_bits(bits), median, min: ys[0], max: ys[n - 1], samples: n }
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            SweepSeries { label, points }
        })
        .collect();
    // Numeric labels (block sizes, thread counts) in numeric order.
    if series.iter().all(|s| s.label.parse::<f64>().is_ok()) {
        series.sort_by(|a, b| a.label.parse::<f64>().unwrap().total_cmp(&b.label.parse::<f64>().unwrap()));
    }
    Ok(Sweep {
        x: x.to_string(),
        y: y.to_string(),
        by: by.map(str::to_string),
        filters: filters.iter().map(|(c, v)| format!("{c}={v}")).collect(),
        series,
        rows,
        bound_y: None,
        answer_x: None,
        log_y: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_takes_medians() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        std::fs::write(
            &p,
            "queue_depth,block_size,iops,write_p99_ns\n\
             1,65536,10,\n4,65536,40,\n1,4096,100,\n1,4096,300,\n1,4096,200,\n4,4096,400,\n",
        )
        .unwrap();
        let s = load(&p, "queue_depth", "iops", Some("block_size"), &[]).unwrap();
        assert_eq!(s.rows, 6);
        assert_eq!(s.series.len(), 2);
        assert_eq!(s.series[0].label, "4096");
        let p0 = &s.series[0].points[0];
        assert_eq!((p0.x, p0.median, p0.min, p0.max, p0.samples), (1.0, 200.0, 100.0, 300.0, 3));
        assert_eq!(s.series[1].points.iter().map(|p| p.median).collect::<Vec<_>>(), vec![10.0, 40.0]);

        let only = load(&p, "queue_depth", "iops", None, &[("block_size".into(), "65536".into())]).unwrap();
        assert_eq!((only.rows, only.series.len()), (2, 1));
        let err = load(&p, "queue_depth", "iops", None, &[("qd".into(), "1".into())]).unwrap_err().to_string();
        assert!(err.contains("no column `qd`") && err.contains("--where"), "{err}");
        let err = load(&p, "queue_depth", "nope", None, &[]).unwrap_err().to_string();
        assert!(err.contains("no column `nope`") && err.contains("--y") && err.contains("iops"), "{err}");
        let err = load(&p, "queue_depth", "write_p99_ns", None, &[]).unwrap_err().to_string();
        assert!(err.contains("no row has a value"), "{err}");
    }
}
