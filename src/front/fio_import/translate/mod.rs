//! A fio job file's sections as an iopulse job file: `[global]` sections are inherited by
//! the jobs after them (a job's own option wins), and each job's options, taken together,
//! become iopulse keys (the long names of its flags) that mean the same thing. Each key
//! keeps the fio line it came from, so a later refusal by iopulse's own parser names it.
//!
//! What has no equivalent is an error naming the option and its line, or with
//! `ignore_unsupported` a warning; nothing is dropped silently. Where the meaning differs
//! in a way docs/fio.md documents, a note says so. It translates; it must not run or
//! touch a target, and it must not format TOML (`toml_out.rs` does).

use super::ini::{FioOption, Section};
use super::values::{count, size_bytes, switch};
use crate::base::diagnostics::error::UsageError;
use crate::front::fio::options::{self, Known, Support};
use crate::front::plan::job_file::parse::{Entry, Job, JobFile, Value};

mod execution;
mod measurement;
mod workload;

/// A fio job file translated.
#[derive(Debug)]
pub struct Translated {
    /// The jobs as iopulse keys, with the fio lines they came from.
    pub file: JobFile,
    /// One per option ignored under --ignore-unsupported.
    pub warnings: Vec<String>,
    /// Where iopulse's meaning differs from fio's in a documented way.
    pub notes: Vec<String>,
    /// The fio option on each line that gave a key, to name it in iopulse's refusals.
    pub options_by_line: Vec<(usize, String)>,
}

impl Translated {
    /// iopulse's refusal `message` of a key, naming the fio option of its line too.
    pub fn in_fio_terms(&self, message: &str) -> String {
        let prefix = format!("{}:", self.file.path);
        let Some(rest) = message.strip_prefix(&prefix) else { return message.to_string() };
        let line: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(line) = line.parse::<usize>() else { return message.to_string() };
        let Some((_, option)) = self.options_by_line.iter().find(|(l, _)| *l == line) else {
            return message.to_string();
        };
        let key_at = format!("{prefix}{line}: key `");
        match message.strip_prefix(&key_at).and_then(|r| r.split_once('`')) {
            Some((key, tail)) => format!("{prefix}{line}: option `{option}` (iopulse key `{key}`){tail}"),
            None => message.to_string(),
        }
    }
}

/// What translation may know of iopulse beyond the option table.
pub struct Context<'a> {
    /// Options without an equivalent become warnings instead of errors.
    pub ignore_unsupported: bool,
    /// Whether iopulse has the flag `--NAME` (e.g. `ramp`, which may come later).
    pub has_flag: &'a dyn Fn(&str) -> bool,
    /// `iopulse run FILE.fio --directory DIR`: replaces every job's `directory`.
    pub directory: Option<&'a str>,
    /// The command line gives the run length (`--duration`, `--ops`, `--io-limit`): the
    /// file's (`runtime`, `time_based`, `size`, `io_size`, `number_ios`) is not translated,
    /// nor refused.
    pub run_length_given: bool,
}

const SECOND_NS: u64 = 1_000_000_000;

/// Translates the sections of the fio job file `path`.
pub fn translate(path: &str, sections: &[Section], ctx: &Context<'_>) -> Result<Translated, UsageError> {
    let mut out = Translated {
        file: JobFile { path: path.to_string(), global: Vec::new(), jobs: Vec::new() },
        warnings: Vec::new(),
        notes: Vec::new(),
        options_by_line: Vec::new(),
    };
    let mut global: Vec<FioOption> = Vec::new();
    for (index, section) in sections.iter().enumerate() {
        if section.name == "global" {
            global = overlay(&global, &section.options);
            continue;
        }
        let options = overlay(&global, &section.options);
        let next_stonewalls = next_job_stonewalls(&global, &sections[index + 1..]);
        for o in &options {
            if !out.options_by_line.iter().any(|(l, _)| *l == o.at.line) {
                out.options_by_line.push((o.at.line, o.key.clone()));
            }
        }
        let (jobs, notes) = JobTranslation::new(section, &options, ctx, &mut out)?.run(next_stonewalls)?;
        out.notes.extend(notes);
        for mut job in jobs {
            job.name = unique_name(&out.file.jobs, &job.name);
            out.file.jobs.push(job);
        }
    }
    if out.file.jobs.is_empty() {
        return Err(UsageError::new(format!("{path}: no job: only [global] sections; add a [name] section per job")));
    }
    out.notes.dedup();
    Ok(out)
}

/// Whether the next job of `rest` (with the [global] options in force for it) starts a
/// new phase; true when there is none.
fn next_job_stonewalls(global: &[FioOption], rest: &[Section]) -> bool {
    let mut global = global.to_vec();
    for section in rest {
        if section.name == "global" {
            global = overlay(&global, &section.options);
            continue;
        }
        let options = overlay(&global, &section.options);
        return options.iter().any(|o| {
            options::lookup(&o.key).is_some_and(|k| k.name == "stonewall") && switch(o.value.as_deref()) == Ok(true)
        });
    }
    true
}

/// `base`'s options that `over` does not give (by canonical name), then `over`'s.
fn overlay(base: &[FioOption], over: &[FioOption]) -> Vec<FioOption> {
    let canonical = |key: &str| options::lookup(key).map_or(key.to_string(), |k| k.name.to_string());
    let mut out: Vec<FioOption> =
        base.iter().filter(|b| !over.iter().any(|o| canonical(&o.key) == canonical(&b.key))).cloned().collect();
    for o in over {
        // An option given twice in one section: the later one wins, as in fio.
        out.retain(|e| canonical(&e.key) != canonical(&o.key));
        out.push(o.clone());
    }
    out
}

fn unique_name(jobs: &[Job], name: &str) -> String {
    let mut candidate = name.to_string();
    let mut n = 2;
    while jobs.iter().any(|j| j.name == candidate) {
        candidate = format!("{name}-{n}");
        n += 1;
    }
    candidate
}

/// The read/write choice of `rw`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mix {
    Read,
    Write,
    Both,
    /// `rw=trim`, `randtrim`: every I/O a trim (`--trim-percent 100`).
    Trim,
}

/// `1 option`, `3 options`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

struct JobTranslation<'a> {
    section: &'a Section,
    name: String,
    known: Vec<(&'static Known, &'a FioOption)>,
    entries: Vec<Entry>,
    notes: Vec<String>,
    /// `--directory` given after the file, replacing the job's `directory`.
    directory_override: Option<String>,
    /// `Context::run_length_given`.
    run_length_given: bool,
    /// The job's files (targets), set by `targets`.
    files: u64,
    /// `filesize`: each file's size (fio's `size` is then the job's amount of I/O).
    filesize: Option<(u64, &'a FioOption)>,
    /// Bytes per I/O (`bs`, fio's 4k by default); `None` with a mix of sizes (`bssplit`,
    /// `blockalign`), whose I/Os have no one size.
    block_bytes: Option<u64>,
}

impl<'a> JobTranslation<'a> {
    /// The job's options sorted into known ones; the unknown ones refused or warned about.
    fn new(
        section: &'a Section,
        options: &'a [FioOption],
        ctx: &Context<'_>,
        out: &mut Translated,
    ) -> Result<Self, UsageError> {
        let mut known = Vec::new();
        let mut notes = Vec::new();
        // Every option that stops the translation, so that one try names them all.
        let mut refused = Vec::new();
        let mut unknown = Vec::new();
        for o in options {
            // An option iopulse has as a flag or command: as one without an equivalent,
            // named with what to give instead.
            let instead = match options::lookup(&o.key) {
                Some(k) if k.support == Support::Elsewhere => crate::front::fio::flag_names::iopulse_name_of(k.name),
                _ => None,
            };
            match options::lookup(&o.key).filter(|k| k.support != Support::Elsewhere) {
                Some(k) => {
                    match k.support {
                        Support::Refused(why) => refused.push(format!("`{}` ({}): {why}", o.key, o.at)),
                        Support::NoEffect(why) => {
                            notes.push(format!("{}: fio option `{}` has no effect in iopulse: {why}", o.at, o.key))
                        }
                        Support::Mapped | Support::Elsewhere => {}
                    }
                    known.push((k, o));
                }
                None if ctx.ignore_unsupported => {
                    let hint = instead.map_or_else(String::new, |i| format!(" in a job file (iopulse: {i})"));
                    let warning = format!(
                        "{}: fio option `{}` has no iopulse equivalent{hint}: ignored (--ignore-unsupported)",
                        o.at, o.key
                    );
                    if !out.warnings.contains(&warning) {
                        out.warnings.push(warning);
                    }
                }
                None => match instead {
                    Some(i) => unknown.push(format!("`{}` ({}; iopulse: {i})", o.key, o.at)),
                    None => unknown.push(format!("`{}` ({})", o.key, o.at)),
                },
            }
        }
        if !refused.is_empty() {
            let also = if unknown.is_empty() {
                String::new()
            } else {
                format!("; and with no iopulse equivalent: {}", unknown.join(", "))
            };
            return Err(UsageError::new(format!(
                "[{}]: {} refused: {} (docs/fio.md){also}",
                section.name,
                plural(refused.len(), "option"),
                refused.join("; ")
            )));
        }
        if !unknown.is_empty() {
            return Err(UsageError::new(format!(
                "[{}]: {} with no iopulse equivalent: {} (docs/fio.md lists the fio options iopulse translates): remove {them}, or give --ignore-unsupported to run without {them}",
                section.name,
                plural(unknown.len(), "option"),
                unknown.join(", "),
                them = if unknown.len() == 1 { "it" } else { "them" }
            )));
        }
        let mut t = JobTranslation {
            section,
            name: section.name.clone(),
            known,
            entries: Vec::new(),
            notes,
            directory_override: ctx.directory.map(|d| d.trim_end_matches('/').to_string()),
            run_length_given: ctx.run_length_given,
            files: 1,
            filesize: None,
            block_bytes: Some(4096),
        };
        if let Some(o) = t.get("name") {
            t.name = t.text(o)?.to_string();
        }
        if let Some(o) = t.get("ramp_time")
            && !(ctx.has_flag)("ramp")
        {
            return Err(t.bad(o, "iopulse has no warm-up (--ramp) in this build yet: remove ramp_time"));
        }
        Ok(t)
    }

    fn get(&self, name: &str) -> Option<&'a FioOption> {
        self.known.iter().rev().find(|(k, _)| k.name == name).map(|(_, o)| *o)
    }

    fn bad(&self, o: &FioOption, why: &str) -> UsageError {
        UsageError::new(format!("{}: option `{}` of [{}]: {why}", o.at, o.key, self.section.name))
    }

    fn text<'o>(&self, o: &'o FioOption) -> Result<&'o str, UsageError> {
        o.value.as_deref().filter(|v| !v.is_empty()).ok_or_else(|| self.bad(o, "give a value (key=value)"))
    }

    fn push(&mut self, key: &str, o: &FioOption, value: Value) {
        self.entries.retain(|e| e.key != key);
        self.entries.push(Entry { key: key.to_string(), line: o.at.line, value });
    }

    fn push_text(&mut self, key: &str, o: &FioOption, value: String) {
        self.push(key, o, Value::Text(value));
    }

    fn switch_of(&self, name: &str) -> Result<Option<(bool, &'a FioOption)>, UsageError> {
        match self.get(name) {
            None => Ok(None),
            Some(o) => switch(o.value.as_deref()).map(|b| Some((b, o))).map_err(|e| self.bad(o, &e)),
        }
    }

    fn size_of(&self, name: &str) -> Result<Option<(u64, &'a FioOption)>, UsageError> {
        match self.get(name) {
            None => Ok(None),
            Some(o) => {
                let v = self.text(o)?;
                if v.contains('%') {
                    return Err(
                        self.bad(o, "a percentage of the device has no iopulse equivalent: give a size (e.g. 1g)")
                    );
                }
                let bytes = size_bytes(v).map_err(|e| self.bad(o, &e))?;
                if bytes == 0 {
                    return Err(self.bad(o, "give a size above 0"));
                }
                Ok(Some((bytes, o)))
            }
        }
    }

    /// `filesize`: one size for every file (a range, from which fio draws each file's size,
    /// is refused).
    fn filesize_of(&self) -> Result<Option<(u64, &'a FioOption)>, UsageError> {
        let Some(o) = self.get("filesize") else { return Ok(None) };
        let v = self.text(o)?;
        let (low, high) = v.split_once('-').unwrap_or((v, v));
        let low = size_bytes(low).map_err(|e| self.bad(o, &e))?;
        let high = size_bytes(high).map_err(|e| self.bad(o, &e))?;
        if low != high {
            return Err(self.bad(
                o,
                &format!("filesize={v}: a range of file sizes (fio draws each file's size in it) has no iopulse equivalent: give one size (e.g. filesize={})", v.split_once('-').map_or(v, |(l, _)| l)),
            ));
        }
        if low == 0 {
            return Err(self.bad(o, "give a size above 0"));
        }
        Ok(Some((low, o)))
    }

    fn count_of(&self, name: &str) -> Result<Option<(u64, &'a FioOption)>, UsageError> {
        match self.get(name) {
            None => Ok(None),
            Some(o) => count(self.text(o)?).map(|n| Some((n, o))).map_err(|e| self.bad(o, &e)),
        }
    }

    /// One value for reads and writes (`4k`, or `4k,4k`): fio's per-direction forms are
    /// refused unless they agree.
    fn same_for_both<'v>(&self, o: &FioOption, v: &'v str) -> Result<&'v str, UsageError> {
        let parts: Vec<&str> = v.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        match parts.as_slice() {
            [one] => Ok(one),
            [first, rest @ ..] if rest.iter().all(|p| p.eq_ignore_ascii_case(first)) => Ok(first),
            _ => Err(self.bad(o, "different values for reads and writes have no iopulse equivalent: give one value")),
        }
    }

    /// Every key of the job, then the job (and its read-back pass after a verified write),
    /// with the notes that apply to it.
    fn run(mut self, next_stonewalls: bool) -> Result<(Vec<Job>, Vec<String>), UsageError> {
        let mix = self.workload()?;
        self.block_size()?;
        let (jobs_n, shared) = self.targets()?;
        self.engine()?;
        self.data()?;
        self.pacing_and_placement()?;
        self.write_iolog()?;
        let covers = self.run_length(jobs_n, shared)?;
        if let Some((true, o)) = self.switch_of("stonewall")? {
            self.push("stonewall", o, Value::Switch(true));
        }
        let mut jobs = Vec::new();
        if let Some(o) = self.get("verify") {
            let v = self.text(o)?.to_ascii_lowercase();
            if !["0", "null", "none"].contains(&v.as_str()) {
                self.push("verify", o, Value::Switch(true));
                if mix == Mix::Write {
                    jobs.push(self.read_back(o, covers, next_stonewalls)?);
                }
            }
        }
        jobs.insert(0, Job { name: self.name.clone(), line: self.section.at.line, entries: self.entries.clone() });
        Ok((jobs, self.notes))
    }

    fn read_back(&mut self, o: &FioOption, covers: bool, next_stonewalls: bool) -> Result<Job, UsageError> {
        if !covers {
            return Err(self.bad(
                o,
                "iopulse reads back and checks every block after a verified write job, so the job must write every block once: drop time_based, runtime, io_size and number_ios (and numjobs on a shared file; size below filesize's total), or remove verify",
            ));
        }
        if !next_stonewalls {
            return Err(self.bad(
                o,
                "iopulse checks the written blocks in a phase after this job, so the next job must start after it too: add stonewall to the next job",
            ));
        }
        // The read-back is iopulse's own pass: fio's write_iolog logs the job's I/Os only.
        let dropped =
            ["write-percent", "stonewall", "rate-iops", "rate-bw", "think-time", "think-every", "write-iolog"];
        let mut entries: Vec<Entry> =
            self.entries.iter().filter(|e| !dropped.contains(&e.key.as_str())).cloned().collect();
        entries.push(Entry { key: "stonewall".into(), line: o.at.line, value: Value::Switch(true) });
        let name = format!("{}-verify", self.name);
        self.notes.push(format!(
            "{}: verify: fio reads back and checks what the write job wrote; iopulse does it in job [{name}], a phase after it",
            o.at
        ));
        Ok(Job { name, line: o.at.line, entries })
    }
}

/// fio's percentage of duplicate (or compressible) data as iopulse's ratio, 100/(100-P):
/// `50` is `2`, `34` is `1.5152`.
fn ratio_of_percent(percent: u64) -> String {
    let ratio = format!("{:.4}", 100.0 / (100 - percent.min(99)) as f64);
    ratio.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests;
