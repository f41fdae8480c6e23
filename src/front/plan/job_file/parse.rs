//! Reading a job file: its TOML tables as jobs, each key with the line it is on. A
//! `[global]` table of defaults, then one table per job named by its header, in file
//! order (fio's layout). Values are kept as text, switches and lists, ready to become
//! flag values (`plan::job_file` knows which keys exist and what they mean).
//!
//! It checks only the shape of the file (tables, value types a flag can take); it must
//! not decide what a key means, and it touches nothing but the file it reads.

use crate::base::diagnostics::error::UsageError;
use toml::de::{DeTable, DeValue};

/// One key of a table, where it is, and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub line: usize,
    pub value: Value,
}

/// A value as a command line can give it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `true` / `false`.
    Switch(bool),
    /// A string or a number, as written.
    Text(String),
    /// An array of strings (`targets`).
    List(Vec<String>),
}

/// One job: its name (the table's header), the header's line and its keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    pub line: usize,
    pub entries: Vec<Entry>,
}

/// A job file as written.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFile {
    /// The path as given, for messages.
    pub path: String,
    /// `[global]`'s keys (empty without one).
    pub global: Vec<Entry>,
    pub jobs: Vec<Job>,
}

/// The lines of a text, to find the line of a byte offset in a few steps: a file of
/// thousands of jobs has a line looked up per key, and counting from the start each time
/// took seconds.
struct Lines {
    /// The byte offset of every newline, in order.
    newlines: Vec<usize>,
}

impl Lines {
    fn of(text: &str) -> Self {
        Self { newlines: text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i).collect() }
    }

    /// The 1-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}

/// Reads and parses the job file at `path`.
pub fn read(path: &std::path::Path) -> Result<JobFile, UsageError> {
    let shown = path.display().to_string();
    // A job file is a few lines: /proc, a device, a FIFO or a huge file given by mistake is
    // refused unread (`input_file`).
    let text = crate::storage::targets::input_file::read_text(path, 1 << 20).map_err(|e| {
        UsageError::new(format!("job file {shown}: {e}; give the path of a TOML job file (docs/jobs.md)"))
    })?;
    parse(&shown, &text)
}

/// Parses the text of a job file named `path`.
pub fn parse(path: &str, text: &str) -> Result<JobFile, UsageError> {
    let lines = Lines::of(text);
    let at = |offset: usize| format!("{path}:{}", lines.line(offset));
    let document = DeTable::parse(text).map_err(|e| {
        let line = e.span().map_or_else(|| path.to_string(), |s| at(s.start));
        let message = e.message().lines().next().unwrap_or("").trim().to_string();
        UsageError::new(format!("{line}: not valid TOML: {message} (docs/jobs.md shows the layout)"))
    })?;
    let mut file = JobFile { path: path.to_string(), global: Vec::new(), jobs: Vec::new() };
    for (name, table) in document.get_ref().iter() {
        let line = lines.line(name.span().start);
        let name = name.get_ref().to_string();
        let DeValue::Table(table) = table.get_ref() else {
            return Err(UsageError::new(format!(
                "{path}:{line}: key `{name}` is outside any table: put it under [global] or under a job's [name]"
            )));
        };
        let entries = entries(path, &lines, &name, table)?;
        if name == "global" {
            file.global = entries;
        } else {
            if name.is_empty() || name.chars().any(|c| c.is_control()) {
                return Err(UsageError::new(format!(
                    "{path}:{line}: a job needs a name of printable characters, e.g. [random-reads]"
                )));
            }
            file.jobs.push(Job { name, line, entries });
        }
    }
    if file.jobs.is_empty() {
        return Err(UsageError::new(format!(
            "{path}: no job: add a table per job, e.g. [reads] with block-size = \"4k\" (docs/jobs.md)"
        )));
    }
    Ok(file)
}

fn entries(path: &str, lines: &Lines, table_name: &str, table: &DeTable<'_>) -> Result<Vec<Entry>, UsageError> {
    let mut out = Vec::new();
    for (key, value) in table.iter() {
        let line = lines.line(key.span().start);
        let key = key.get_ref().to_string();
        let wrong = |what: &str| {
            UsageError::new(format!(
                "{path}:{line}: key `{key}` of [{table_name}]: {what} (give a string, a number or true/false, as the flag --{key} takes)"
            ))
        };
        let value = match value.get_ref() {
            DeValue::Boolean(b) => Value::Switch(*b),
            DeValue::String(s) => Value::Text(s.to_string()),
            DeValue::Integer(i) => Value::Text(i.as_str().replace('_', "")),
            DeValue::Float(f) => Value::Text(f.as_str().replace('_', "")),
            DeValue::Array(items) => {
                let mut list = Vec::new();
                for item in items.iter() {
                    match item.get_ref() {
                        DeValue::String(s) => list.push(s.to_string()),
                        _ => return Err(wrong("an array holds strings only (paths)")),
                    }
                }
                Value::List(list)
            }
            DeValue::Table(_) => return Err(wrong("a table inside a job is not a job file key")),
            DeValue::Datetime(_) => return Err(wrong("a date is not a value of any flag")),
        };
        out.push(Entry { key, line, value });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_by_offset_as_counted_from_the_start() {
        let text = "a\nbc\n\nd";
        let lines = Lines::of(text);
        for offset in 0..=text.len() + 2 {
            let counted = text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1;
            assert_eq!(lines.line(offset), counted, "offset {offset}");
        }
    }

    #[test]
    fn global_then_jobs_in_file_order_with_lines() {
        let text = "[global]\nblock-size = \"8k\"\n\n[zeta]\nqueue-depth = 32\ndirect = true\n\n[alpha]\ntargets = [\"/a\", \"/b\"]\nrate-bw = 1.5\n";
        let f = parse("j.toml", text).unwrap();
        assert_eq!(f.global, vec![Entry { key: "block-size".into(), line: 2, value: Value::Text("8k".into()) }]);
        let names: Vec<_> = f.jobs.iter().map(|j| (j.name.as_str(), j.line)).collect();
        assert_eq!(names, vec![("zeta", 4), ("alpha", 8)]);
        assert_eq!(f.jobs[0].entries[0], Entry { key: "queue-depth".into(), line: 5, value: Value::Text("32".into()) });
        assert_eq!(f.jobs[0].entries[1].value, Value::Switch(true));
        assert_eq!(f.jobs[1].entries[0].value, Value::List(vec!["/a".into(), "/b".into()]));
        assert_eq!(f.jobs[1].entries[1].value, Value::Text("1.5".into()));
    }

    #[test]
    fn shape_errors_name_file_and_line() {
        let e = parse("j.toml", "threads = 2\n[a]\n").unwrap_err().to_string();
        assert!(e.starts_with("j.toml:1: key `threads` is outside"), "{e}");
        let e = parse("j.toml", "[a]\n\nthreads = [1]\n").unwrap_err().to_string();
        assert!(e.starts_with("j.toml:3: key `threads` of [a]"), "{e}");
        let e = parse("j.toml", "[a]\nthreads = \n").unwrap_err().to_string();
        assert!(e.starts_with("j.toml:2: not valid TOML"), "{e}");
        let e = parse("j.toml", "[global]\nthreads = 1\n").unwrap_err().to_string();
        assert!(e.contains("no job"), "{e}");
    }
}
