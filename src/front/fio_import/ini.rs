//! Reading a fio job file as fio does: `[section]` headers, `key=value` or bare `key`
//! lines, `;` and `#` comments, `include FILE` lines (relative to the including file's
//! folder) and `${VAR}` replaced by the environment variable VAR. Each option keeps the
//! file and line it came from, for messages.
//!
//! It reads text only: it must not decide what an option means (`options.rs`,
//! `translate.rs` do), and it touches nothing but the files it reads.

use crate::base::diagnostics::error::UsageError;
use std::path::{Path, PathBuf};

/// One `key[=value]` line.
#[derive(Clone, Debug, PartialEq)]
pub struct FioOption {
    /// The option's name, lower case as fio compares them.
    pub key: String,
    /// The value after `=`, trimmed; `None` for a bare `key`.
    pub value: Option<String>,
    /// Where it is: "FILE:LINE".
    pub at: Where,
}

/// A file and a 1-based line.
#[derive(Clone, Debug, PartialEq)]
pub struct Where {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Where {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One `[name]` section and its options, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub at: Where,
    pub options: Vec<FioOption>,
}

/// Includes nest at most this deep (a file including itself is caught by this too).
const MAX_INCLUDE_DEPTH: usize = 8;
/// A job file is a few lines: anything larger was given by mistake.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Reads the fio job file at `path`, its includes and its variables (`env` looks a
/// variable up: the process environment in use, a map in tests).
pub fn read(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Section>, UsageError> {
    let mut sections = Vec::new();
    read_into(path, &path.display().to_string(), env, 0, &mut sections)?;
    if sections.is_empty() {
        return Err(UsageError::new(format!(
            "{}: no job: a fio job file needs a [name] section per job (docs/fio.md)",
            path.display()
        )));
    }
    Ok(sections)
}

/// The text of a job file or an include: a regular file on a real filesystem, of at most
/// `MAX_FILE_BYTES` (`input_file`): never /proc, a device or a FIFO.
fn read_file(path: &Path, shown: &str) -> Result<String, UsageError> {
    crate::storage::targets::input_file::read_text(path, MAX_FILE_BYTES)
        .map_err(|e| UsageError::new(format!("fio job file {shown}: {e}; give the path of a fio job file")))
}

fn read_into(
    path: &Path,
    shown: &str,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    sections: &mut Vec<Section>,
) -> Result<(), UsageError> {
    let text = read_file(path, shown)?;
    parse_into(&text, shown, path.parent().unwrap_or(Path::new(".")), env, depth, sections)
}

/// Parses `text` (the file `shown`, whose includes are relative to `folder`) onto `sections`.
pub fn parse_into(
    text: &str,
    shown: &str,
    folder: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    sections: &mut Vec<Section>,
) -> Result<(), UsageError> {
    for (index, raw) in text.lines().enumerate() {
        let at = Where { file: shown.to_string(), line: index + 1 };
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        let line = substitute(line, &at, env)?;
        let line = line.as_str();
        if let Some(rest) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            let name = rest.trim();
            if depth + 1 > MAX_INCLUDE_DEPTH {
                return Err(UsageError::new(format!(
                    "{at}: include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH} (does a file include itself?)"
                )));
            }
            let target = if Path::new(name).is_absolute() { PathBuf::from(name) } else { folder.join(name) };
            let shown_target = target.display().to_string();
            read_into(&target, &shown_target, env, depth + 1, sections)
                .map_err(|e| UsageError::new(format!("{at}: include {name}: {}", e.message)))?;
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let Some(name) = header.strip_suffix(']').map(str::trim).filter(|n| !n.is_empty()) else {
                return Err(UsageError::new(format!(
                    "{at}: `{line}` is not a section header: write [name] on a line of its own"
                )));
            };
            sections.push(Section { name: name.to_string(), at, options: Vec::new() });
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(strip_comment(v).trim().to_string())),
            None => (strip_comment(line).trim(), None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(UsageError::new(format!("{at}: `{line}` is not an option: write key=value or a bare key")));
        }
        let Some(section) = sections.last_mut() else {
            return Err(UsageError::new(format!(
                "{at}: option `{key}` is outside any section: put it under [global] or under a job's [name]"
            )));
        };
        section.options.push(FioOption { key: key.to_ascii_lowercase(), value, at });
    }
    Ok(())
}

/// A value's trailing `;` or `#` comment, as fio strips it (after whitespace only, so
/// that a `#` inside a path stays).
fn strip_comment(value: &str) -> &str {
    for marker in [" ;", "\t;", " #", "\t#"] {
        if let Some(i) = value.find(marker) {
            return &value[..i];
        }
    }
    value
}

/// `${VAR}` replaced by the variable's value; an unset variable is an error naming it.
fn substitute(line: &str, at: &Where, env: &dyn Fn(&str) -> Option<String>) -> Result<String, UsageError> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start + 2..].find('}') else {
            return Err(UsageError::new(format!("{at}: `${{` without its closing `}}`: write ${{VAR}}")));
        };
        let name = &rest[start + 2..start + 2 + len];
        let value = env(name).ok_or_else(|| {
            UsageError::new(format!(
                "{at}: ${{{name}}}: the environment variable {name} is not set: set it (e.g. {name}=... iopulse ...)"
            ))
        })?;
        out.push_str(&value);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Section>, String> {
        let mut sections = Vec::new();
        let env = |name: &str| (name == "SIZE").then(|| "64m".to_string());
        parse_into(text, "j.fio", Path::new("."), &env, 0, &mut sections).map_err(|e| e.message)?;
        Ok(sections)
    }

    #[test]
    fn sections_options_bare_keys_comments_and_lines() {
        let s = parse(
            "; a comment\n[global]\nbs=4k ; trailing\n# another\n\n[job1]\nrw = randread\ntime_based\nsize=${SIZE}\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].name.as_str(), s[0].at.line), ("global", 2));
        assert_eq!(s[0].options[0].value.as_deref(), Some("4k"));
        assert_eq!(
            s[1].options[0],
            FioOption { key: "rw".into(), value: Some("randread".into()), at: Where { file: "j.fio".into(), line: 7 } }
        );
        assert_eq!(s[1].options[1].value, None);
        assert_eq!(s[1].options[2].value.as_deref(), Some("64m"));
    }

    #[test]
    fn errors_name_the_line() {
        assert!(parse("bs=4k\n[a]\n").unwrap_err().starts_with("j.fio:1: option `bs` is outside"));
        assert!(parse("[a]\nsize=${NOPE}\n").unwrap_err().starts_with("j.fio:2: ${NOPE}"));
        assert!(parse("[a\n").unwrap_err().starts_with("j.fio:1: `[a` is not a section header"));
        assert!(parse("[a]\nsize=${X\n").unwrap_err().starts_with("j.fio:2:"));
    }

    #[test]
    fn an_include_of_a_kernel_interface_device_or_fifo_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for (name, word) in [("/proc/self/environ", "procfs"), ("/dev/zero", "character device"), ("fifo", "FIFO")] {
            std::fs::write(dir.path().join("main.fio"), format!("[a]\nrw=read\ninclude {name}\n")).unwrap();
            let e = read(&dir.path().join("main.fio"), &|_| None).unwrap_err().message;
            assert!(e.contains("main.fio:3: include") && e.contains(word), "{e}");
            assert!(!e.contains("PATH"), "nothing of the file is echoed: {e}");
        }
    }

    #[test]
    fn includes_are_read_relative_to_the_file_and_loops_stop() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.fio"), "[global]\nbs=8k\n").unwrap();
        std::fs::write(dir.path().join("main.fio"), "include common.fio\n[a]\nrw=read\n").unwrap();
        let s = read(&dir.path().join("main.fio"), &|_| None).unwrap();
        assert_eq!(s[0].options[0].at.line, 2);
        assert!(s[0].options[0].at.file.ends_with("common.fio"));
        assert_eq!(s[1].name, "a");
        std::fs::write(dir.path().join("loop.fio"), "include loop.fio\n").unwrap();
        let e = read(&dir.path().join("loop.fio"), &|_| None).unwrap_err().message;
        assert!(e.contains("nest deeper"), "{e}");
    }
}
