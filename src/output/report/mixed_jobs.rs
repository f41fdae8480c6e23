//! The files of the metadata jobs of a job file that mixes them with block jobs
//! (`metadata_jobs` beside `jobs` in one document): a metadata job's table has columns of
//! its own (per operation kind), so each job gets files of its own beside the block jobs'.
//! `--csv FILE` → `FILE-JOB.csv` (the metadata CSV, `report::metadata`), `--timeseries
//! FILE` → `FILE-JOB.csv` as a block job's, `--plot DIR` → `job-NAME-*.svg`
//! (`report::metadata_plot`). The names come from one list, [`MixedNames`], that the plan's
//! output guard checks and the writing uses, so nothing is written that was not checked.
//!
//! Formats and writes; computes nothing and runs nothing.

use super::{OutputOptions, jobs, metadata, metadata_plot, plot};
use crate::base::diagnostics::error::UsageError;
use crate::figures::result::jobs::JobsResult;
use std::path::{Path, PathBuf};

/// The job names of a mixed job file in the order every per-job file name is derived from:
/// the block jobs first (as `report::jobs` names theirs), then the metadata jobs, each
/// group in file order. A later name's file-safe form depends only on the names before
/// it, so the block jobs' files are named as in a job file of block jobs alone.
#[derive(Debug)]
pub struct MixedNames<'a> {
    pub all: Vec<&'a str>,
    /// How many of `all` are block jobs (the rest are metadata jobs).
    pub block_count: usize,
}

impl<'a> MixedNames<'a> {
    /// From the jobs in file order, each with whether it is a metadata job.
    pub fn new(jobs: &[(&'a str, bool)]) -> Self {
        let mut all: Vec<&str> = jobs.iter().filter(|(_, meta)| !meta).map(|(n, _)| *n).collect();
        let block_count = all.len();
        all.extend(jobs.iter().filter(|(_, meta)| *meta).map(|(n, _)| *n));
        Self { all, block_count }
    }

    fn metadata(&self) -> &[&'a str] {
        &self.all[self.block_count..]
    }

    /// Each metadata job's `--csv` file, in the order of `metadata()`.
    fn csv_paths(&self, path: &Path) -> Result<Vec<PathBuf>, UsageError> {
        Ok(jobs::per_job_paths("--csv", "r.csv", path, &self.all)?.split_off(self.block_count))
    }

    /// Each metadata job's `--timeseries` file, in the order of `metadata()`.
    fn timeseries_paths(&self, path: &Path) -> Result<Vec<PathBuf>, UsageError> {
        Ok(jobs::timeseries_paths(path, &self.all)?.split_off(self.block_count))
    }

    /// Each metadata job's chart prefix (`job-NAME-`), in the order of `metadata()`.
    fn chart_prefixes(&self) -> Vec<String> {
        plot::job_chart_prefixes(&self.all).split_off(self.block_count)
    }

    /// Every file the metadata jobs will write for `output`, each with its flag (for the
    /// output guard, `report::planned_outputs`).
    pub fn planned(&self, output: &OutputOptions) -> Result<Vec<(&'static str, PathBuf)>, UsageError> {
        let mut files = Vec::new();
        if let Some(path) = &output.csv_file {
            files.extend(self.csv_paths(path)?.into_iter().map(|p| ("--csv", p)));
        }
        if let Some(path) = &output.timeseries_file {
            files.extend(self.timeseries_paths(path)?.into_iter().map(|p| ("--timeseries", p)));
        }
        if let Some(dir) = &output.plot_dir {
            let prefixes = self.chart_prefixes();
            for prefix in &prefixes {
                files.extend(metadata_plot::CHARTS.iter().map(|c| ("--plot", dir.join(format!("{prefix}{c}")))));
            }
        }
        Ok(files)
    }
}

/// Writes the metadata jobs' own files of `doc` for `output`; the failures, one line each
/// naming the flag, the file and the job.
pub fn emit(doc: &JobsResult, output: &OutputOptions, names: &MixedNames) -> Vec<String> {
    let mut failures = Vec::new();
    let slot = |job: &str| names.metadata().iter().position(|n| *n == job);
    let paths = output.csv_file.as_deref().map(|p| names.csv_paths(p)).transpose().and_then(|csv| {
        let series = output.timeseries_file.as_deref().map(|p| names.timeseries_paths(p)).transpose()?;
        Ok((csv, series))
    });
    let (csv, series) = match paths {
        Ok(paths) => paths,
        Err(e) => return vec![e.to_string()],
    };
    let prefixes = names.chart_prefixes();
    for m in &doc.metadata_jobs {
        let Some(i) = slot(&m.job) else { continue };
        if let Some(path) = csv.as_ref().map(|paths| &paths[i]) {
            let rows = format!("{}{}", metadata::CSV_HEADER, metadata::csv_rows(&m.result));
            if let Err(e) = crate::storage::ledger::output::write_whole(path, rows.as_bytes()) {
                failures.push(format!("write --csv {} (job [{}]): {e}", path.display(), m.job));
            }
        }
        let series = series.as_ref().map(|paths| paths[i].as_path());
        let charts = output.plot_dir.as_deref().map(|dir| (dir, prefixes[i].as_str()));
        failures.extend(metadata::emit_files(&m.result, series, charts, output, Some(&m.job)));
    }
    failures
}
