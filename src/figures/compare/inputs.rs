//! The two sides of `iopulse compare`: each a set of results read from files (a run's
//! result, a job file's, a sweep's, a directory of them), bounded and judged as every
//! result read is (`result::load`), and grouped by what they measured: `run` for a single
//! run, `job NAME` for each job of a job file, `point block_size=4k ...` for each point of
//! a sweep (whose repetitions are that point's runs). A metadata run's result is kept
//! whole, for `compare::metadata`, and so is each metadata job of a job file (with its
//! job's name).
//!
//! It reads and groups; it compares nothing.

use crate::figures::result::RunResult;
use crate::figures::result::jobs::JobsResult;
use crate::figures::result::load::{self, LoadError};
use crate::figures::result::meta_document::MetaResult;
use crate::figures::sweep::document::SweepDocument;
use std::path::{Path, PathBuf};

/// One run of a side.
#[derive(Clone, Debug)]
pub struct Run {
    /// The file it came from (with `#runs[3]` for a sweep's run).
    pub file: String,
    pub result: RunResult,
}

/// What one side holds: its runs grouped by scope, scopes in the order first read.
#[derive(Clone, Debug, Default)]
pub struct Side {
    pub files: Vec<String>,
    /// Each file read with its device and inode (a file given twice, on one side or on
    /// both, is one result counted twice).
    pub file_ids: Vec<(String, Option<crate::storage::targets::identity::FileId>)>,
    pub scopes: Vec<(String, Vec<Run>)>,
    /// Metadata runs' results (`--files`), compared by `compare::metadata`; a side holds
    /// these or block results, never both (`iopulse compare` refuses a mix).
    pub metadata: Vec<MetaRun>,
}

/// One metadata run of a side.
#[derive(Clone, Debug)]
pub struct MetaRun {
    pub file: String,
    pub result: MetaResult,
    /// The job it was in, when it came from a job file beside block jobs
    /// (`metadata_jobs`); `None` for a metadata run's own result.
    pub job: Option<String>,
}

impl Side {
    fn add(&mut self, scope: String, run: Run) {
        match self.scopes.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, runs)) => runs.push(run),
            None => self.scopes.push((scope, vec![run])),
        }
    }

    pub fn runs(&self, scope: &str) -> Option<&[Run]> {
        self.scopes.iter().find(|(s, _)| s == scope).map(|(_, r)| r.as_slice())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{dir}: {source}; give a directory of JSON results, or the files themselves")]
    Directory {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{dir} holds no *.json file: give a directory of JSON results (iopulse --json FILE), or the files")]
    EmptyDirectory { dir: String },
    #[error(
        "{file} is a search's result: its runs offer different loads and are no set of repetitions; compare the results of runs at one fixed rate (iopulse --rate-iops N --json FILE)"
    )]
    Search { file: String },
    #[error("{file} is a sweep's result with no successful run: nothing to compare")]
    EmptySweep { file: String },
    #[error(
        "{file} is a comparison (iopulse compare --output-format json), not a result: give the results it compared"
    )]
    Comparison { file: String },
    #[error(
        "{first} and {other} are the same result ({how}): compared, it would count twice; give each result once, on one side"
    )]
    Duplicate { first: String, other: String, how: &'static str },
}

/// Refuses one result counted twice, on one side or across both, as `merge` refuses it:
/// the same file (by device and inode: a hard link, a symlink, the name twice, a directory
/// and a file in it), or two copies of one run (`result::merge::same_run`, and its
/// metadata twin).
pub fn refuse_duplicates(base: &Side, new: &Side) -> Result<(), InputError> {
    let dup = |first: &str, other: &str, how: &'static str| {
        Err(InputError::Duplicate { first: first.to_string(), other: other.to_string(), how })
    };
    let ids: Vec<&(String, Option<crate::storage::targets::identity::FileId>)> =
        base.file_ids.iter().chain(&new.file_ids).collect();
    for (i, (a, a_id)) in ids.iter().map(|x| (&x.0, x.1)).enumerate() {
        if let Some((b, _)) = ids[i + 1..].iter().map(|x| (&x.0, x.1)).find(|(_, b_id)| a_id.is_some() && *b_id == a_id)
        {
            return dup(a, b, "one file, by device and inode");
        }
    }
    let runs: Vec<&Run> = base.scopes.iter().chain(&new.scopes).flat_map(|(_, runs)| runs).collect();
    for (i, a) in runs.iter().enumerate() {
        if let Some(b) = runs[i + 1..]
            .iter()
            .find(|b| b.file != a.file && crate::figures::result::merge::same_run(&a.result, &b.result))
        {
            return dup(&a.file, &b.file, crate::figures::result::merge::SAME_RUN);
        }
    }
    let metas: Vec<&MetaRun> = base.metadata.iter().chain(&new.metadata).collect();
    for (i, a) in metas.iter().enumerate() {
        if let Some(b) = metas[i + 1..]
            .iter()
            .find(|b| b.file != a.file && crate::figures::result::metadata::same_run(&a.result, &b.result))
        {
            return dup(&a.file, &b.file, crate::figures::result::metadata::SAME_RUN);
        }
    }
    Ok(())
}

/// Reads every result of `paths` (files, or directories of `*.json` files) into one side.
pub fn load_side(paths: &[PathBuf]) -> Result<Side, InputError> {
    let mut side = Side::default();
    for path in paths {
        if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|source| InputError::Directory { dir: path.display().to_string(), source })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
                .collect();
            if files.is_empty() {
                return Err(InputError::EmptyDirectory { dir: path.display().to_string() });
            }
            files.sort();
            for file in files {
                read_file(&file, &mut side)?;
            }
        } else {
            read_file(path, &mut side)?;
        }
    }
    Ok(side)
}

fn read_file(path: &Path, side: &mut Side) -> Result<(), InputError> {
    let (file, value) = load::document_without_time_series(path)?;
    side.files.push(file.clone());
    side.file_ids.push((file.clone(), crate::storage::targets::identity::FileId::of(path)));
    match value.get("kind").and_then(|k| k.as_str()) {
        Some("search") => return Err(InputError::Search { file }),
        Some("compare") => return Err(InputError::Comparison { file }),
        Some(crate::figures::result::meta_document::KIND) => {
            let result: MetaResult = load::typed_document(&file, &value)?;
            drop(value);
            load::check_metadata(&file, &result)?;
            side.metadata.push(MetaRun { file, result, job: None });
            return Ok(());
        }
        Some("sweep") => {
            let doc: SweepDocument = load::typed_document(&file, &value)?;
            drop(value);
            let mut any = false;
            for (i, entry) in doc.runs.into_iter().enumerate() {
                // A run that failed measured nothing to compare; one whose --expect failed (6) did.
                if entry.exit_code != 0
                    && entry.exit_code != crate::base::diagnostics::error::exit_code::EXPECTATION_FAILED
                {
                    continue;
                }
                load::check_result(&file, &format!("runs[{i}].result"), &entry.result)?;
                let scope = doc
                    .points
                    .get(entry.point)
                    .filter(|p| !p.params.is_empty())
                    .map(|p| {
                        let params: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        format!("point {}", params.join(" "))
                    })
                    .unwrap_or_else(|| "run".to_string());
                side.add(scope, Run { file: format!("{file}#runs[{i}]"), result: entry.result });
                any = true;
            }
            if !any {
                return Err(InputError::EmptySweep { file });
            }
            return Ok(());
        }
        _ => {}
    }
    if value.get("jobs").is_some_and(|j| j.is_array()) {
        let doc: JobsResult = load::typed_document(&file, &value)?;
        drop(value);
        load::check_result(&file, "", &doc.combined)?;
        let phases = doc.jobs.iter().map(|j| j.phase).max().unwrap_or(1);
        if doc.jobs.len() > 1 {
            side.add("all jobs".to_string(), Run { file: file.clone(), result: doc.combined.clone() });
        }
        for (i, job) in doc.jobs.into_iter().enumerate() {
            load::check_result(&file, &format!("jobs[{i}]"), &job.result)?;
            let scope =
                if phases > 1 { format!("job {} (phase {})", job.job, job.phase) } else { format!("job {}", job.job) };
            side.add(scope, Run { file: file.clone(), result: job.result });
        }
        // The jobs with `files` beside them: compared job by job (`compare::metadata`).
        for (i, job) in doc.metadata_jobs.into_iter().enumerate() {
            load::check_metadata(&format!("{file} metadata_jobs[{i}]"), &job.result)?;
            side.metadata.push(MetaRun { file: file.clone(), result: job.result, job: Some(job.job) });
        }
        return Ok(());
    }
    let result: RunResult = load::typed_document(&file, &value)?;
    drop(value);
    load::check_result(&file, "", &result)?;
    side.add("run".to_string(), Run { file, result });
    Ok(())
}
