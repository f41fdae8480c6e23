//! The journal of a sweep: one JSON line per finished run (its point's command line, its
//! repetition and its whole result), appended as each run ends, so that `--resume` knows
//! which runs are done and the final document still holds every run's result. It lives
//! beside the sweep's `--csv` (or `--json`) file as `FILE.journal`.
//!
//! A line is written with one `write` on a file opened for appending: an interrupted
//! write leaves at most a torn last line, which reading skips. It must not format reports.

use crate::result::RunResult;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
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

/// Where the journal of a sweep writing `output` lives.
pub fn path_for(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// The entries of the journal at `path` (none when it does not exist); a last line that
/// does not parse (a write cut short) is left out, any other is an error.
pub fn read(path: &Path) -> io::Result<Vec<Entry>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut entries = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str::<Entry>(line) {
            Ok(e) => entries.push(e),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(io::Error::other(format!("line {}: not a sweep journal entry: {e}", i + 1)));
            }
        }
    }
    Ok(entries)
}

/// An open journal, appended to.
pub struct Journal {
    file: std::fs::File,
}

impl Journal {
    /// Opens `path` for appending; `fresh` empties it first (a new sweep).
    pub fn open(path: &Path, fresh: bool) -> io::Result<Journal> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true);
        if fresh {
            options.write(true).truncate(true);
        } else {
            options.append(true);
        }
        let mut file = options.open(path)?;
        if !fresh {
            // A torn last line from an interrupted write must not glue onto the next entry.
            let len = file.metadata()?.len();
            if len > 0 && !ends_with_newline(path)? {
                file.write_all(b"\n")?;
            }
        }
        Ok(Journal { file })
    }

    pub fn append(&mut self, entry: &Entry) -> io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()
    }
}

fn ends_with_newline(path: &Path) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_is_beside_the_output() {
        assert_eq!(path_for(Path::new("/x/s.csv")), PathBuf::from("/x/s.csv.journal"));
    }

    #[test]
    fn a_missing_journal_is_empty_and_a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        assert!(read(&p).unwrap().is_empty());
        std::fs::write(&p, "{\"point_key\": \"a\"").unwrap();
        assert!(read(&p).unwrap().is_empty());
        std::fs::write(&p, "garbage\n{}\n").unwrap();
        assert!(read(&p).unwrap_err().to_string().contains("line 1"));
    }
}
