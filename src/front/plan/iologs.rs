//! `--write-iolog` in plans of many runs: where each run's iolog goes, and the refusals of
//! the paths that cannot be written. One path given for many runs (the flag, a job file's
//! `[global]`, a sweep, a search) is one file per run, named by inserting what tells the
//! runs apart before the extension (`run.iolog` → `run-JOB.iolog`,
//! `run-point0-rep1.iolog`, `run-run1.iolog`); a job's own `write-iolog` key is its file as
//! given. No two runs of a plan share a log: that is refused before anything runs.
//!
//! It names and checks paths; it must not write a log (the commands do, through
//! `report::iolog`) and must not touch the file system beyond looking (`stat`).

use super::{IologFile, Job};
use crate::base::diagnostics::error::UsageError;
use crate::storage::targets::identity::PathIdentity;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The job file key (and the flag's long name).
pub const KEY: &str = "write-iolog";

/// `path` with `-WHAT` inserted before its extension (`/x/run.iolog`, `db` →
/// `/x/run-db.iolog`; `log`, `db` → `log-db`).
pub fn beside(path: &Path, what: &str) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    path.with_file_name(format!("{stem}-{what}{extension}"))
}

/// Each job's log of one path given to every job, in the order of `names`: the job's name,
/// made file-safe (`ledger::output::file_safe_names`), inserted before the extension.
pub fn per_job(path: &Path, names: &[&str]) -> Vec<PathBuf> {
    crate::storage::ledger::output::file_safe_names(names).iter().map(|name| beside(path, name)).collect()
}

/// A sweep's log of the run of point `point` (its index in the document's `points`, from
/// 0) and repetition `repetition` (from 1), as the document's `runs` number them.
pub fn per_sweep_run(path: &Path, point: usize, repetition: u32) -> PathBuf {
    beside(path, &format!("point{point}-rep{repetition}"))
}

/// A search's log of its run `run` (from 1: the document's `runs[run - 1]`).
pub fn per_search_run(path: &Path, run: usize) -> PathBuf {
    beside(path, &format!("run{run}"))
}

/// One path for many runs must be a file: a stream (`/dev/stdout`) would mix their logs
/// into one (a file name is needed to name one per run). `said_as` names the flag or key
/// ("--write-iolog", "j.toml:3: key `write-iolog` of [a]").
pub fn refuse_stream(path: &Path, said_as: &str, what: &str) -> Result<(), UsageError> {
    if crate::storage::ledger::output::is_stream(path) {
        return Err(UsageError::new(format!(
            "{said_as}: {} is a stream, and {what} writes a log of its own: give a file, e.g. run.iolog (docs/usage.md names the files)",
            path.display()
        )));
    }
    if path.as_os_str().is_empty() || path.file_name().is_none() {
        return Err(UsageError::new(format!(
            "{said_as}: `{}` names no file: give a file name, e.g. run.iolog",
            path.display()
        )));
    }
    Ok(())
}

/// Two jobs of `jobs` whose logs are one file (the same path, a link to the other's, the
/// same place once created) are refused, naming both and what asked for each.
pub fn check_distinct(source: &str, jobs: &[&Job]) -> Result<(), UsageError> {
    let mut seen: HashMap<PathIdentity, (&Job, &IologFile)> = HashMap::new();
    for job in jobs {
        let Some(log) = &job.iolog else { continue };
        let Some(id) = PathIdentity::of(&log.path) else { continue };
        if let Some((other, first)) = seen.get(&id) {
            return Err(UsageError::new(format!(
                "{source}: jobs [{}] and [{}] would write one iolog, {} ({}; {}): give each job its own write-iolog path, or one in [global] (or --write-iolog after the file), which names a file per job",
                other.name,
                job.name,
                log.path.display(),
                first.asked_by,
                log.asked_by
            )));
        }
        seen.insert(id, (job, log));
    }
    Ok(())
}

/// The job whose log the guard's refusal `message` is about (the message names
/// `--write-iolog PATH`), the longest path first so that `a.iolog` is not taken for
/// `a.iolog2`.
pub fn about<'a>(jobs: &[&'a Job], message: &str) -> Option<&'a IologFile> {
    jobs.iter()
        .filter_map(|j| j.iolog.as_ref())
        .filter(|log| message.contains(&format!("--write-iolog {}", log.path.display())))
        .max_by_key(|log| log.path.as_os_str().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_for_many_runs_becomes_one_per_run_before_the_extension() {
        assert_eq!(beside(Path::new("/x/run.iolog"), "db"), Path::new("/x/run-db.iolog"));
        assert_eq!(beside(Path::new("log"), "db"), Path::new("log-db"));
        assert_eq!(beside(Path::new("a.b.iolog"), "j"), Path::new("a.b-j.iolog"));
        assert_eq!(
            per_job(Path::new("r.iolog"), &["a/b", "a_b", "SEQ1M-Q8T1-read.pass2"]),
            [Path::new("r-a_b.iolog"), Path::new("r-a_b-2.iolog"), Path::new("r-SEQ1M-Q8T1-read.pass2.iolog")]
        );
        assert_eq!(per_sweep_run(Path::new("s.iolog"), 0, 2), Path::new("s-point0-rep2.iolog"));
        assert_eq!(per_search_run(Path::new("/t/q.log"), 3), Path::new("/t/q-run3.log"));
    }

    #[test]
    fn a_stream_or_no_file_name_is_refused_naming_what_asked() {
        let e = refuse_stream(Path::new("/dev/stdout"), "--write-iolog", "each job").unwrap_err().to_string();
        assert!(e.starts_with("--write-iolog: /dev/stdout is a stream, and each job writes a log of its own"), "{e}");
        assert!(refuse_stream(Path::new(""), "k", "each job").is_err());
        assert!(refuse_stream(Path::new("/x/.."), "k", "each job").is_err());
        assert!(refuse_stream(Path::new("run.iolog"), "k", "each job").is_ok());
    }
}
