//! The journal of a sweep: one JSON line per finished run (its point's command line, its
//! repetition, its exit code and its whole result, with the id of its sweep's grid),
//! appended as each run ends, so that `--resume` knows which runs are done and the final
//! document still holds every run's result. It lives beside the sweep's `--csv` (or
//! `--json`) file as `FILE.journal`; a stream (`--csv /dev/stdout`) has none.
//!
//! Several sweeps may share one journal (they append to one CSV): a line is one `write` on
//! a file opened for appending, under an exclusive lock of the whole file (an open file
//! description lock, released after the write), after a newline when the last line lacks
//! one, so lines never splice or glue. Each running sweep holds a shared `flock` on the
//! journal for its life: a new sweep empties the journal only when no other holds it.
//!
//! Read back, the journal is bounded (`MAX_LINE_BYTES` a line, `MAX_JOURNAL_BYTES` in all),
//! read line by line, and trusted only as far as it is consistent: each line's figures are
//! judged as a result file's (`result::figures`), and its exit code must be one a run has
//! and agree with its result (a failed run's code is never read as a success). Every
//! refusal names the journal and the line. It must not format reports.

use crate::base::diagnostics::error::exit_code;
use crate::figures::result::RunResult;
use crate::figures::result::field_path::{Unparsed, typed};
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

/// One finished run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    /// `grid::Point::key`: the point's command line.
    pub point_key: String,
    /// 1-based.
    pub repetition: u32,
    pub exit_code: i32,
    pub result: RunResult,
}

/// A line as written: the entry and the id of its sweep's grid (`grid_id`).
#[derive(Serialize)]
struct LineOut<'a> {
    sweep: &'a str,
    #[serde(flatten)]
    entry: &'a Entry,
}

/// The id of a line's sweep, read apart from its entry (which leaves it aside): journals of
/// versions before the id have none.
#[derive(Deserialize)]
struct SweepOf {
    #[serde(default)]
    sweep: String,
}

/// The most one line may take: a run's result with an hour of time series at 10 ms.
pub const MAX_LINE_BYTES: u64 = 64 << 20;
/// The most a journal is read: thousands of runs' results.
pub const MAX_JOURNAL_BYTES: u64 = 1 << 30;

/// Where the journal of a sweep writing `output` lives.
pub fn path_for(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// The journal of a sweep with these outputs: beside `--csv`, else beside `--json`; a
/// stream (`/dev/stdout`) gets none (it is written, never read back).
pub fn path_beside(csv: Option<&Path>, json: Option<&Path>) -> Option<PathBuf> {
    [csv, json].into_iter().flatten().find(|p| !crate::storage::ledger::output::is_stream(p)).map(path_for)
}

/// The id of a sweep's grid, from its points' keys in order: two sweeps of the same flags
/// share it, any other grid has another (FNV-1a, 64 bits, as hex).
pub fn grid_id(point_keys: &[String]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for key in point_keys {
        for byte in key.bytes().chain(std::iter::once(b'\n')) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// A refusal of the journal at `path`, at `line` (1-based; 0: the file as a whole).
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {why}", path.display(), if *line > 0 { format!(": line {line}") } else { String::new() })]
pub struct JournalError {
    pub path: PathBuf,
    pub line: usize,
    pub why: String,
}

/// The entries of the journal at `path` (none when it does not exist), each with the id
/// of its sweep's grid (empty in journals of earlier versions). A last line that does not
/// parse and lacks its newline (a write cut short) is left out; any other is an error.
pub fn read(path: &Path) -> Result<Vec<(String, Entry)>, JournalError> {
    let refuse = |line: usize, why: String| JournalError { path: path.to_path_buf(), line, why };
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(refuse(0, format!("cannot be read ({e})"))),
    };
    let mut reader = io::BufReader::new(file.take(MAX_JOURNAL_BYTES + 1));
    let mut entries = Vec::new();
    let mut total: u64 = 0;
    let mut buffer = Vec::new();
    for number in 1.. {
        buffer.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buffer)
            .map_err(|e| refuse(number, format!("cannot be read ({e})")))?;
        if read == 0 {
            break;
        }
        total += read as u64;
        if total > MAX_JOURNAL_BYTES {
            return Err(refuse(
                number,
                format!(
                    "the journal is larger than {} MiB, the most read of one: start the sweep anew (drop --resume), or split it into smaller sweeps",
                    MAX_JOURNAL_BYTES >> 20
                ),
            ));
        }
        let whole = buffer.ends_with(b"\n");
        if !whole && read as u64 > MAX_LINE_BYTES {
            return Err(refuse(
                number,
                format!(
                    "longer than {} MiB, more than a run's entry takes: the journal was damaged",
                    MAX_LINE_BYTES >> 20
                ),
            ));
        }
        if buffer.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Read as a tree first (a line is bounded above), so that a field inside a
        // flattened section of the result is named by its path.
        let parsed = serde_json::from_slice::<serde_json::Value>(&buffer)
            .map_err(|error| Unparsed { path: String::new(), error })
            .and_then(|value| typed::<Entry>(&value));
        match parsed {
            Ok(entry) => {
                check_entry(&entry).map_err(|why| refuse(number, why))?;
                let sweep = serde_json::from_slice::<SweepOf>(&buffer).map_or_else(|_| String::new(), |s| s.sweep);
                entries.push((sweep, entry));
            }
            // A write cut short: the last line, without its newline.
            Err(_) if !whole => break,
            Err(Unparsed { path, error }) => {
                let at = if path.is_empty() { String::new() } else { format!("{path}: ") };
                return Err(refuse(number, format!("not a sweep journal entry: {at}{error}")));
            }
        }
    }
    Ok(entries)
}

/// Exit codes a finished run has in a journal: success, failure, verification failure (a
/// run stopped by a signal is not journaled).
const RUN_EXIT_CODES: [i32; 3] = [exit_code::SUCCESS, exit_code::RUN_FAILED, exit_code::VERIFY_FAILED];

/// A journal line is trusted only when it is consistent: a repetition from 1, an exit code a
/// run has, no success for a result that records a failure, and figures a run can have.
fn check_entry(e: &Entry) -> Result<(), String> {
    let altered = "the journal was altered or damaged: start the sweep anew (drop --resume)";
    if e.repetition == 0 {
        return Err(format!("repetition 0 (they count from 1): {altered}"));
    }
    if !RUN_EXIT_CODES.contains(&e.exit_code) {
        return Err(format!("exit_code {} is not a finished run's (0, 1 or 3): {altered}", e.exit_code));
    }
    let r = &e.result;
    let failure = if r.window.stop_reason == crate::figures::result::StopReason::Error || r.outcome.error.is_some() {
        Some("it stopped on an error")
    } else if r.outcome.io_errors.total > 0 {
        Some("I/Os failed")
    } else if r.data.verification.as_ref().is_some_and(|v| v.failures > 0) {
        Some("verification failed")
    } else if r.window.interrupted || r.window.stop_reason == crate::figures::result::StopReason::Interrupted {
        Some("it was interrupted")
    } else {
        None
    };
    if let (exit_code::SUCCESS, Some(why)) = (e.exit_code, failure) {
        return Err(format!("exit_code 0 (success), but its result says {why}: {altered}"));
    }
    crate::figures::result::figures::check(r)
        .map_err(|a| format!("result.{} is {}, a figure no run has ({}): {altered}", a.field, a.value, a.why))
}

/// The runs of the journal at `path` that a sweep of `point_keys` (its grid's points, in
/// order) and `repeat` resumes, each with its point's index, once each. Runs of another
/// sweep sharing the journal (another grid's id) are left out, and counted; a journal of
/// earlier versions (no id) is matched point by point. Refused: no run at all, only runs of
/// other sweeps, a point this grid lacks in an entry without an id, a repetition above
/// `repeat`.
pub fn resume(path: &Path, point_keys: &[String], repeat: u32) -> Result<Resumed, String> {
    let entries = read(path).map_err(|e| format!("--resume: {e}"))?;
    if entries.is_empty() {
        return Err(format!(
            "--resume: {} holds no run: nothing to resume (drop --resume to start the sweep)",
            path.display()
        ));
    }
    let id = grid_id(point_keys);
    let mut runs = Vec::new();
    let mut others: Option<String> = None;
    let mut other_runs = 0;
    let mut seen = std::collections::BTreeSet::new();
    for (sweep, e) in entries {
        let point = point_keys.iter().position(|k| *k == e.point_key);
        let ours = if sweep.is_empty() { point.is_some() } else { sweep == id };
        let Some(point) = point.filter(|_| ours) else {
            if sweep.is_empty() {
                return Err(another_sweep(path, &e.point_key));
            }
            other_runs += 1;
            others.get_or_insert(e.point_key);
            continue;
        };
        if e.repetition > repeat {
            return Err(format!(
                "--resume: {} holds repetition {} of a point, more than --repeat {repeat}: give --repeat {} or more",
                path.display(),
                e.repetition,
                e.repetition
            ));
        }
        if seen.insert((point, e.repetition)) {
            runs.push((point, e));
        }
    }
    if runs.is_empty()
        && let Some(key) = others
    {
        return Err(another_sweep(path, &key));
    }
    Ok(Resumed { runs, other_runs })
}

fn another_sweep(path: &Path, key: &str) -> String {
    format!(
        "--resume: {} holds a run of another sweep (`{key}`): give the same flags as the interrupted sweep, or drop --resume to start anew",
        path.display()
    )
}

/// What `--resume` takes from a journal.
pub struct Resumed {
    /// This sweep's runs, each with its point's index.
    pub runs: Vec<(usize, Entry)>,
    /// Lines of other sweeps sharing the journal, left out.
    pub other_runs: usize,
}

/// Opens `path` for reading if it is a regular file (never a FIFO, which would block, or
/// a device).
fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits()).open(path)?;
    match crate::storage::targets::identity::special_kind(file.metadata()?.file_type()) {
        Some(kind) => Err(io::Error::other(format!("it is {kind}, not a file"))),
        None => Ok(file),
    }
}

/// An open journal, appended to; its shared lock says a sweep is writing it.
pub struct Journal {
    file: nix::fcntl::Flock<std::fs::File>,
    sweep: String,
}

impl Journal {
    /// Opens `path` for appending the runs of the sweep of grid `sweep` (`grid_id`); `fresh`
    /// (a new sweep) empties it first, unless another sweep is writing it.
    pub fn open(path: &Path, fresh: bool, sweep: &str) -> io::Result<Journal> {
        use nix::fcntl::{Flock, FlockArg};
        let landing = crate::storage::ledger::output::append_target(path)?;
        let file = std::fs::OpenOptions::new().read(true).append(true).create(true).open(&landing)?;
        let file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(alone) => {
                if fresh {
                    alone.set_len(0)?;
                }
                alone.relock(FlockArg::LockShared)?;
                alone
            }
            // Another sweep is writing it: its lines stay.
            Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
                Flock::lock(file, FlockArg::LockShared).map_err(|(_, e)| io::Error::from(e))?
            }
            Err((_, e)) => return Err(io::Error::from(e)),
        };
        Ok(Journal { file, sweep: sweep.to_string() })
    }

    /// Appends `entry` as one line: one write, under an exclusive lock of the file, after a
    /// newline when the last line (another writer's, cut short) lacks one.
    pub fn append(&mut self, entry: &Entry) -> io::Result<()> {
        let mut line = vec![b'\n'];
        serde_json::to_writer(&mut line, &LineOut { sweep: &self.sweep, entry }).map_err(io::Error::other)?;
        line.push(b'\n');
        let file: &std::fs::File = &self.file;
        let _locked = WholeFileLock::write(file)?;
        let len = file.metadata()?.len();
        let start = if len > 0 && !ends_with_newline(file, len)? { 0 } else { 1 };
        let mut writer = file;
        writer.write_all(&line[start..])?;
        writer.flush()
    }
}

/// An exclusive open file description lock of a whole file, released when dropped. It does
/// not conflict with the `flock` a sweep holds for its life (another kind of lock).
struct WholeFileLock<'a> {
    file: &'a std::fs::File,
}

impl<'a> WholeFileLock<'a> {
    fn write(file: &'a std::fs::File) -> io::Result<Self> {
        Self::set(file, libc::F_WRLCK as libc::c_short, true)?;
        Ok(WholeFileLock { file })
    }

    fn set(file: &std::fs::File, kind: libc::c_short, wait: bool) -> io::Result<()> {
        // The whole file (from 0, length 0: to its end, however it grows); l_pid 0 as OFD locks ask.
        let lock =
            libc::flock { l_type: kind, l_whence: libc::SEEK_SET as libc::c_short, l_start: 0, l_len: 0, l_pid: 0 };
        let arg =
            if wait { nix::fcntl::FcntlArg::F_OFD_SETLKW(&lock) } else { nix::fcntl::FcntlArg::F_OFD_SETLK(&lock) };
        nix::fcntl::fcntl(file, arg).map(drop).map_err(io::Error::from)
    }
}

impl Drop for WholeFileLock<'_> {
    fn drop(&mut self) {
        let _ = Self::set(self.file, libc::F_UNLCK as libc::c_short, false);
    }
}

fn ends_with_newline(file: &std::fs::File, len: u64) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_is_beside_the_output_and_a_stream_has_none() {
        assert_eq!(path_for(Path::new("/x/s.csv")), PathBuf::from("/x/s.csv.journal"));
        let (csv, json) = (Path::new("/x/s.csv"), Path::new("/x/s.json"));
        assert_eq!(path_beside(Some(csv), Some(json)), Some(PathBuf::from("/x/s.csv.journal")));
        assert_eq!(path_beside(Some(Path::new("/dev/stdout")), Some(json)), Some(PathBuf::from("/x/s.json.journal")));
        assert_eq!(path_beside(None, Some(Path::new("/dev/fd/1"))), None);
    }

    #[test]
    fn a_missing_journal_is_empty_and_a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        assert!(read(&p).unwrap().is_empty());
        std::fs::write(&p, "{\"point_key\": \"a\"").unwrap();
        assert!(read(&p).unwrap().is_empty());
        std::fs::write(&p, "garbage\n{}\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains(&p.display().to_string()), "{e}");
    }

    #[test]
    fn grid_ids_tell_grids_apart() {
        let a = grid_id(&["--qd 1".into(), "--qd 4".into()]);
        assert_eq!(a, grid_id(&["--qd 1".into(), "--qd 4".into()]));
        assert_ne!(a, grid_id(&["--qd 1".into()]));
        assert_ne!(a, grid_id(&["--qd 1--qd 4".into()]));
    }
}
