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
use super::options::{self, Known, Support};
use super::values::{count, iopulse_size, iopulse_time, size_bytes, switch, time_ns};
use crate::diagnostics::error::UsageError;
use crate::plan::job_file::parse::{Entry, Job, JobFile, Value};

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
            match options::lookup(&o.key) {
                Some(k) => {
                    match k.support {
                        Support::Refused(why) => refused.push(format!("`{}` ({}): {why}", o.key, o.at)),
                        Support::NoEffect(why) => {
                            notes.push(format!("{}: fio option `{}` has no effect in iopulse: {why}", o.at, o.key))
                        }
                        Support::Mapped => {}
                    }
                    known.push((k, o));
                }
                None if ctx.ignore_unsupported => {
                    let warning = format!(
                        "{}: fio option `{}` has no iopulse equivalent: ignored (--ignore-unsupported)",
                        o.at, o.key
                    );
                    if !out.warnings.contains(&warning) {
                        out.warnings.push(warning);
                    }
                }
                None => unknown.push(format!("`{}` ({})", o.key, o.at)),
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

    /// `rw` (with its `:N` suffix), `rwmixread`, `rwmixwrite`.
    fn workload(&mut self) -> Result<Mix, UsageError> {
        let Some(o) = self.get("rw") else { return Ok(Mix::Read) };
        let v = self.text(o)?.to_ascii_lowercase();
        let (kind, suffix) = match v.split_once(':') {
            Some((k, s)) => (k.trim().to_string(), Some(s.trim().to_string())),
            None => (v.clone(), None),
        };
        let (mix, random) = match kind.as_str() {
            "read" => (Mix::Read, false),
            "write" => (Mix::Write, false),
            "randread" => (Mix::Read, true),
            "randwrite" => (Mix::Write, true),
            "rw" | "readwrite" => (Mix::Both, false),
            "randrw" => (Mix::Both, true),
            "trim" => (Mix::Trim, false),
            "randtrim" => (Mix::Trim, true),
            "trimwrite" | "randtrimwrite" => {
                return Err(self.bad(
                    o,
                    "a trim followed by a write of the same block has no iopulse equivalent: give trim, randtrim, read, write, rw, randread, randwrite or randrw",
                ));
            }
            _ => return Err(self.bad(o, "give read, write, rw, randread, randwrite, randrw, trim or randtrim")),
        };
        if let Some(s) = suffix {
            if random {
                let n = count(&s).map_err(|e| self.bad(o, &e))?;
                if n > 1 {
                    if 100 % n != 0 {
                        return Err(self.bad(
                            o,
                            &format!("rw={kind}:{n}: a new random offset every N I/Os becomes --random-percent 100/N, a whole number: give N as 2, 4, 5, 10, 20, 25, 50 or 100"),
                        ));
                    }
                    self.push_text("random-percent", o, (100 / n).to_string());
                    self.notes.push(format!(
                        "{}: rw={kind}:{n}: fio takes a new random offset every {n}th I/O exactly; iopulse's --random-percent {} jumps with that probability, the same share on average",
                        o.at,
                        100 / n
                    ));
                }
            } else if s.trim_start().starts_with('-') {
                return Err(self.bad(
                    o,
                    &format!("a backward skip (rw={kind}:{s}: fio steps back {} after each I/O) has no iopulse equivalent: remove the :{s}", s.trim_start_matches('-')),
                ));
            } else if size_bytes(&s).map_err(|e| self.bad(o, &e))? != 0 {
                return Err(self.bad(o, "a sequential skip (rw=read:SIZE) has no iopulse equivalent: remove the :SIZE"));
            }
        }
        if random {
            self.push("random", o, Value::Switch(true));
        }
        for name in ["rwmixread", "rwmixwrite"] {
            if let Some((n, at)) = self.count_of(name)? {
                if n > 100 {
                    return Err(self.bad(at, &format!("{name}={n}: give a percentage from 0 to 100")));
                }
                if !matches!(mix, Mix::Both) {
                    self.notes.push(format!(
                        "{}: {name}={n} applies to jobs that mix reads and writes (rw=rw, randrw): ignored here, as fio does",
                        at.at
                    ));
                }
            }
        }
        match mix {
            Mix::Read => {}
            Mix::Write => self.push_text("write-percent", o, "100".into()),
            Mix::Trim => self.push_text("trim-percent", o, "100".into()),
            Mix::Both => {
                let read = self.count_of("rwmixread")?;
                let write = self.count_of("rwmixwrite")?;
                let (write_percent, at) = match (read, write) {
                    (Some((r, ro)), None) => (100u64.checked_sub(r).ok_or_else(|| self.bad(ro, "give 0 to 100"))?, ro),
                    (None, Some((w, wo))) => (w, wo),
                    (Some((r, _)), Some((w, wo))) if r + w == 100 => (w, wo),
                    (Some((r, _)), Some((w, wo))) => {
                        return Err(self.bad(
                            wo,
                            &format!("rwmixread={r} and rwmixwrite={w} do not sum to 100: give one of them"),
                        ));
                    }
                    (None, None) => (50, o),
                };
                if write_percent > 100 {
                    return Err(self.bad(at, "give 0 to 100"));
                }
                self.push_text("write-percent", at, write_percent.to_string());
            }
        }
        Ok(mix)
    }

    /// `bs` and `bsrange`: one size for reads and writes.
    fn block_size(&mut self) -> Result<(), UsageError> {
        if let Some(o) = self.get("blockalign") {
            let v = self.same_for_both(o, self.text(o)?)?;
            let bytes = size_bytes(v).map_err(|e| self.bad(o, &e))?;
            self.push_text("block-align", o, iopulse_size(bytes));
            self.block_bytes = None;
        }
        if let Some(o) = self.get("bssplit") {
            // fio's syntax is iopulse's (reads,writes[,trims]); a split overrides bs, as in fio.
            let v = self.text(o)?.trim().to_string();
            crate::access::block_sizes::BlockSizeMix::parse(&v, None).map_err(|e| self.bad(o, &e))?;
            self.push_text("bssplit", o, v);
            self.block_bytes = None;
            return Ok(());
        }
        if let Some(o) = self.get("bs") {
            let v = self.same_for_both(o, self.text(o)?)?;
            let bytes = size_bytes(v).map_err(|e| self.bad(o, &e))?;
            self.push_text("block-size", o, iopulse_size(bytes));
            self.block_bytes = self.block_bytes.map(|_| bytes);
        }
        if let Some(o) = self.get("bsrange") {
            let v = self.same_for_both(o, self.text(o)?)?;
            let (low, high) = v.split_once('-').unwrap_or((v, v));
            let low = size_bytes(low).map_err(|e| self.bad(o, &e))?;
            let high = size_bytes(high).map_err(|e| self.bad(o, &e))?;
            if low != high {
                return Err(self.bad(o, "a range of block sizes has no iopulse equivalent yet: give one size (bs=4k)"));
            }
            self.push_text("block-size", o, iopulse_size(low));
            self.block_bytes = self.block_bytes.map(|_| low);
        }
        Ok(())
    }

    /// `filename`, `directory`, `nrfiles`, `numjobs`, `size`: the targets, how workers share
    /// them and each file's size. Returns numjobs and whether the workers share the files.
    fn targets(&mut self) -> Result<(u64, bool), UsageError> {
        let jobs_n = match self.count_of("numjobs")? {
            Some((0, o)) => return Err(self.bad(o, "give at least 1")),
            Some((n, o)) => {
                if n > 1 {
                    self.push_text("threads", o, n.to_string());
                }
                n
            }
            None => 1,
        };
        let nrfiles = match self.count_of("nrfiles")? {
            Some((0, o)) => return Err(self.bad(o, "give at least 1")),
            Some((n, _)) => n,
            None => 1,
        };
        let directory = match self.get("directory") {
            _ if self.directory_override.is_some() => self.directory_override.clone(),
            Some(o) => {
                let d = self.text(o)?;
                if d.contains(':') {
                    return Err(self.bad(o, "several directories have no iopulse equivalent: give one"));
                }
                Some(d.trim_end_matches('/').to_string())
            }
            None => None,
        };
        let in_dir = |name: &str| match &directory {
            Some(d) if !name.starts_with('/') => format!("{d}/{name}"),
            _ => name.to_string(),
        };
        let line = self.get("directory").map_or(self.section.at.line, |o| o.at.line);
        let (targets, line, shared) = if let Some(o) = self.get("filename") {
            let text = self.text(o)?;
            if text.contains("\\:") {
                return Err(
                    self.bad(o, "a `:` escaped with `\\` in a file name has no iopulse equivalent: rename the file")
                );
            }
            let names: Vec<String> = text.split(':').map(str::trim).filter(|n| !n.is_empty()).map(in_dir).collect();
            if names.is_empty() {
                return Err(
                    self.bad(o, &format!("filename={text} names no file: give a path, e.g. filename=/data/t.dat"))
                );
            }
            // fio writes to /dev/null and reads /dev/zero; iopulse runs on files and block
            // devices: a character device is a missing feature, said here rather than at the run.
            if let Some(dev) = names.iter().find(|n| {
                use std::os::unix::fs::FileTypeExt;
                std::fs::metadata(n).is_ok_and(|m| m.file_type().is_char_device())
            }) {
                return Err(self.bad(
                    o,
                    &format!("{dev} is a character device: iopulse runs on regular files and block devices; give one (e.g. filename=/data/t.dat), or ioengine=null for no I/O at all"),
                ));
            }
            if let Some((n, nr)) = self.count_of("nrfiles")?
                && n != names.len() as u64
            {
                return Err(self.bad(
                    nr,
                    &format!(
                        "nrfiles={n} with filename naming {} file(s): list every file in filename, or drop nrfiles",
                        names.len()
                    ),
                ));
            }
            (names, o.at.line, true)
        } else if jobs_n > 1 {
            if nrfiles > 1 {
                return Err(UsageError::new(format!(
                    "{}: job [{}]: numjobs with nrfiles and no filename gives each fio job its own set of files, which iopulse cannot give a worker: give filename, or nrfiles=1",
                    self.section.at, self.section.name
                )));
            }
            self.entries.push(Entry { key: "file-distribution".into(), line, value: Value::Text("per-worker".into()) });
            self.notes.push(format!(
                "{}: job [{}]: fio names each clone's file {}.J.0; iopulse's per-worker files are {}.J",
                self.section.at, self.name, self.name, self.name
            ));
            (vec![in_dir(&self.name)], line, false)
        } else {
            ((0..nrfiles).map(|f| in_dir(&format!("{}.0.{f}", self.name))).collect(), line, false)
        };
        if shared && jobs_n > 1 && !self.entries.iter().any(|e| e.key == "random") {
            // fio's clones each read the shared file from its start.
            self.entries.push(Entry { key: "sequential-overlap".into(), line, value: Value::Switch(true) });
        }
        let files = targets.len() as u64;
        self.files = files;
        self.entries.push(Entry { key: "targets".into(), line, value: Value::List(targets) });
        self.filesize = self.filesize_of()?;
        if let Some((bytes, o)) = self.filesize {
            // filesize: each file's size; size is then the job's amount of I/O (run_length).
            self.push_text("file-size", o, iopulse_size(bytes));
        } else if let Some((size, o)) = self.size_of("size")? {
            // fio's size is the job's total over its files.
            self.push_text("file-size", o, iopulse_size(size / files.max(1)));
        }
        Ok((jobs_n, shared))
    }

    /// `ioengine`, `iodepth`, `direct`, `buffered`, `invalidate`.
    fn engine(&mut self) -> Result<(), UsageError> {
        if let Some(o) = self.get("ioengine") {
            let v = self.text(o)?.to_ascii_lowercase();
            let engine = match v.as_str() {
                "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => "sync",
                "libaio" => "libaio",
                "io_uring" => "io_uring",
                "mmap" => "mmap",
                "null" => "null",
                _ => {
                    return Err(self.bad(
                        o,
                        &format!(
                            "no iopulse engine for ioengine={v}: give psync, sync, libaio, io_uring, mmap or null"
                        ),
                    ));
                }
            };
            self.push_text("engine", o, engine.into());
        }
        if let Some((depth, o)) = self.count_of("iodepth")? {
            if depth == 0 {
                return Err(self.bad(o, "give at least 1"));
            }
            self.push_text("queue-depth", o, depth.to_string());
        }
        let direct = self.switch_of("direct")?;
        let buffered = self.switch_of("buffered")?;
        match (direct, buffered) {
            (Some((true, _)), Some((true, o))) => {
                return Err(self.bad(o, "direct=1 and buffered=1 contradict each other: give one"));
            }
            (Some((true, o)), _) | (_, Some((false, o))) => self.push("direct", o, Value::Switch(true)),
            _ => {}
        }
        // sqthread_poll: a kernel thread polls the submission queue (io_uring's SQPOLL);
        // sqthread_poll_cpu binds it, and does nothing without sqthread_poll, as in fio.
        let sqpoll = self.switch_of("sqthread_poll")?.filter(|(on, _)| *on);
        if let Some((_, o)) = sqpoll {
            self.push("sqpoll", o, Value::Switch(true));
        }
        if let Some((cpu, o)) = self.count_of("sqthread_poll_cpu")? {
            if sqpoll.is_some() {
                self.push_text("sqpoll-cpu", o, cpu.to_string());
            } else {
                self.notes.push(format!(
                    "{}: sqthread_poll_cpu={cpu} binds the polling thread of sqthread_poll, which this job does not set: no effect, as in fio",
                    o.at
                ));
            }
        }
        if let Some((false, o)) = self.switch_of("invalidate")? {
            self.push_text("cache", o, "keep".into());
        }
        // fadvise_hint (on by default in both): 0 turns it off; 1, `random` and
        // `sequential` leave it on (iopulse advises by the job's access order).
        if let Some(o) = self.get("fadvise_hint") {
            let v = self.text(o)?.to_ascii_lowercase();
            match v.as_str() {
                "0" | "false" | "off" | "no" => self.push_text("fadvise-hint", o, "off".into()),
                "1" | "true" | "on" | "yes" | "random" | "sequential" => {}
                _ => return Err(self.bad(o, "fadvise_hint takes 0, 1, sequential or random")),
            }
        }
        Ok(())
    }

    /// `dedupe_percentage`, `buffer_compress_percentage`: what written blocks hold. P % of
    /// fio's buffers are duplicates (or compressible) where iopulse takes a ratio: 100/(100-P).
    fn data(&mut self) -> Result<(), UsageError> {
        let percent = |t: &Self, name: &str| -> Result<Option<(u64, &'a FioOption)>, UsageError> {
            match t.count_of(name)? {
                Some((p, o)) if p > 100 => Err(t.bad(o, &format!("{name}={p}: give a percentage from 0 to 100"))),
                other => Ok(other.filter(|(p, _)| *p > 0)),
            }
        };
        let dedupe = percent(self, "dedupe_percentage")?;
        let compress = percent(self, "buffer_compress_percentage")?;
        if let Some((100, o)) = dedupe {
            return Err(self.bad(
                o,
                "dedupe_percentage=100 makes every written block a copy of another: there is no finite dedupe ratio (iopulse's --dedupe-ratio is 100/(100-P)): give at most 99 (99 is --dedupe-ratio 100)",
            ));
        }
        if let (Some((100, _)), Some((_, o))) = (compress, dedupe) {
            return Err(self.bad(
                o,
                "with buffer_compress_percentage=100 every block is zeros, each a duplicate of the others: drop dedupe_percentage, or give buffer_compress_percentage below 100",
            ));
        }
        if let Some((p, o)) = dedupe {
            self.push_text("dedupe-ratio", o, ratio_of_percent(p));
            if self.block_bytes != Some(4096) {
                self.notes.push(format!(
                    "{}: dedupe_percentage={p}: fio makes whole blocks duplicates, iopulse 4 KiB chunks (--dedupe-ratio {}): the same ratio for a store that deduplicates by 4 KiB",
                    o.at,
                    ratio_of_percent(p)
                ));
            }
        }
        match compress {
            Some((100, o)) => self.push_text("write-pattern", o, "zeros".into()),
            Some((p, o)) => {
                self.push_text("compress-ratio", o, ratio_of_percent(p));
                self.notes.push(format!(
                    "{}: buffer_compress_percentage={p}: fio repeats its random bytes then zeros every buffer_compress_chunk (512 bytes by default), iopulse every 4 KiB (--compress-ratio {}): the same ratio for a standard compressor",
                    o.at,
                    ratio_of_percent(p)
                ));
            }
            None => {}
        }
        Ok(())
    }

    /// Offsets, seed, rates, think time, end_fsync, fsync/fdatasync/sync, CPUs and NUMA nodes, ramp.
    fn pacing_and_placement(&mut self) -> Result<(), UsageError> {
        if let Some((seed, o)) = self.count_of("randseed")? {
            self.push_text("seed", o, seed.to_string());
        }
        if let Some(o) = self.get("random_distribution") {
            let v = self.text(o)?.to_ascii_lowercase();
            let (kind, parameter) = match v.split_once(':') {
                Some((k, p)) => (k.trim().to_string(), Some(p.trim().to_string())),
                None => (v.clone(), None),
            };
            match (kind.as_str(), parameter) {
                ("random", _) => {}
                ("zipf", Some(theta)) => {
                    self.push_text("distribution", o, "zipf".into());
                    self.push_text("zipf-theta", o, theta);
                }
                ("pareto", Some(h)) => {
                    self.push_text("distribution", o, "pareto".into());
                    self.push_text("pareto-h", o, h);
                }
                ("zipf" | "pareto", None) => {
                    return Err(self.bad(o, &format!("give its parameter, e.g. random_distribution={kind}:0.8")));
                }
                (z @ ("zoned" | "zoned_abs"), Some(zones)) => {
                    let extent = if z == "zoned" {
                        crate::access::zoned::ZoneExtent::Percent
                    } else {
                        crate::access::zoned::ZoneExtent::Bytes
                    };
                    // fio: a last zone with no region share (`20/`) takes the rest of the region,
                    // in each direction's set (sets after commas: reads, writes, trims).
                    let zones = zones
                        .split(',')
                        .map(|set| match set.strip_suffix('/') {
                            Some(head) if z == "zoned" => {
                                let given: f64 = head
                                    .split(':')
                                    .filter_map(|part| part.split_once('/'))
                                    .filter_map(|(_, region)| region.trim().trim_end_matches('%').parse::<f64>().ok())
                                    .sum();
                                format!("{head}/{}", 100.0 - given)
                            }
                            _ => set.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(",");
                    crate::access::zoned::ZoneSets::parse(&zones, extent).map_err(|e| self.bad(o, &e))?;
                    self.push_text("distribution", o, z.replace('_', "-"));
                    self.push_text("zones", o, zones);
                }
                ("zoned" | "zoned_abs", None) => {
                    return Err(self.bad(o, &format!("give its zones, e.g. random_distribution={kind}:60/10:40/90")));
                }
                ("normal" | "gauss", _) => {
                    return Err(self.bad(o, "fio's normal distribution (a sum of uniform draws, hashed over the file) has no iopulse equivalent; iopulse's --distribution gaussian is a bell at a centre: write the iopulse job by hand"));
                }
                _ => {
                    return Err(self.bad(
                        o,
                        &format!(
                            "random_distribution={kind} has no iopulse equivalent: give random, zipf:THETA, pareto:H, zoned:ZONES or zoned_abs:ZONES"
                        ),
                    ));
                }
            }
        }
        if let Some(o) = self.get("rate_iops") {
            let v = self.same_for_both(o, self.text(o)?)?;
            let n = count(v).map_err(|e| self.bad(o, &e))?;
            self.push_text("rate-iops", o, n.to_string());
        }
        if let Some(o) = self.get("rate") {
            let v = self.same_for_both(o, self.text(o)?)?;
            let bytes = size_bytes(v).map_err(|e| self.bad(o, &e))?;
            self.push_text("rate-bw", o, iopulse_size(bytes));
        }
        if let Some(o) = self.get("thinktime") {
            let ns = time_ns(self.text(o)?, 1_000).map_err(|e| self.bad(o, &e))?;
            if ns > 0 {
                self.push_text("think-time", o, iopulse_time(ns));
            }
        }
        if let Some((every, o)) = self.count_of("thinktime_blocks")? {
            if self.get("thinktime").is_none() {
                return Err(self.bad(o, "applies to thinktime: add thinktime or remove it"));
            }
            self.push_text("think-every", o, every.max(1).to_string());
        }
        // end_fsync: fio's job fsyncs its file when its I/O is done, inside its runtime.
        if let Some((true, o)) = self.switch_of("end_fsync")? {
            self.push("end-fsync", o, Value::Switch(true));
        }
        // fsync=N, fdatasync=N: a flush after every N writes of each job (0: none).
        let fsync = self.count_of("fsync")?.filter(|(n, _)| *n > 0);
        let fdatasync = self.count_of("fdatasync")?.filter(|(n, _)| *n > 0);
        if let (Some(_), Some((_, o))) = (fsync, fdatasync) {
            return Err(self.bad(o, "iopulse issues one kind of flush: keep fsync or fdatasync, not both"));
        }
        if let Some((n, o)) = fsync {
            self.push_text("fsync-every", o, n.to_string());
        }
        if let Some((n, o)) = fdatasync {
            self.push_text("fdatasync-every", o, n.to_string());
        }
        if let Some(o) = self.get("sync") {
            match self.text(o)?.to_ascii_lowercase().as_str() {
                "0" | "none" | "false" => {}
                "1" | "sync" | "true" => self.push_text("sync-writes", o, "sync".into()),
                "dsync" => self.push_text("sync-writes", o, "dsync".into()),
                v => return Err(self.bad(o, &format!("sync={v}: give 0, 1, sync or dsync"))),
            }
        }
        if let Some(o) = self.get("cpus_allowed") {
            let list = self.text(o)?.to_string();
            self.push_text("cpu-cores", o, list);
            if self.get("cpus_allowed_policy").is_none_or(|p| p.value.as_deref() != Some("split")) {
                self.notes.push(format!(
                    "{}: cpus_allowed: iopulse pins each worker to one CPU of the list (fio's cpus_allowed_policy=split); fio's default lets every job run on any of them",
                    o.at
                ));
            }
        }
        if let Some(o) = self.get("cpus_allowed_policy") {
            let v = self.text(o)?;
            if v != "split" && v != "shared" {
                return Err(self.bad(o, "give shared or split"));
            }
        }
        if let Some(o) = self.get("numa_cpu_nodes") {
            let list = self.text(o)?.to_string();
            self.push_text("numa-zones", o, list);
        }
        if let Some(o) = self.get("ramp_time") {
            let ns = time_ns(self.text(o)?, SECOND_NS).map_err(|e| self.bad(o, &e))?;
            self.push_text("ramp", o, iopulse_time(ns));
        }
        self.steady_state()?;
        self.logs()
    }

    /// `steadystate` (`ss`), `ss_dur`, `ss_ramp`: iopulse's --steady-state, its window, and a
    /// ramp before the judging starts.
    fn steady_state(&mut self) -> Result<(), UsageError> {
        let Some(o) = self.get("steadystate") else {
            for name in ["steadystate_duration", "steadystate_ramp_time"] {
                if let Some(o) = self.get(name) {
                    return Err(self.bad(o, "applies to steadystate: add steadystate (e.g. iops:2%) or remove it"));
                }
            }
            return Ok(());
        };
        let criterion = self.text(o)?.to_ascii_lowercase();
        self.push_text("steady-state", o, criterion);
        if let Some(o) = self.get("steadystate_duration") {
            let ns = time_ns(self.text(o)?, SECOND_NS).map_err(|e| self.bad(o, &e))?;
            self.push_text("steady-state-window", o, iopulse_time(ns));
        }
        if let Some(o) = self.get("steadystate_ramp_time") {
            let ns = time_ns(self.text(o)?, SECOND_NS).map_err(|e| self.bad(o, &e))?;
            if self.get("ramp_time").is_none() && ns > 0 {
                self.push_text("ramp", o, iopulse_time(ns));
                self.notes.push(format!(
                    "{}: ss_ramp: iopulse's --ramp, whose I/O is not counted; fio counts it and only judges steadiness after it",
                    o.at
                ));
            }
        }
        Ok(())
    }

    /// `write_lat_log`, `write_bw_log`, `write_iops_log`, `log_avg_msec`: iopulse's time
    /// series (a row per interval in the JSON; `--timeseries FILE` writes them as CSV).
    fn logs(&mut self) -> Result<(), UsageError> {
        let log = ["write_lat_log", "write_bw_log", "write_iops_log"].into_iter().find_map(|n| self.get(n));
        let average = self.get("log_avg_msec");
        let Some(o) = log.or(average) else { return Ok(()) };
        let interval_ms = match average {
            Some(a) => {
                let ms = count(self.text(a)?).map_err(|e| self.bad(a, &e))?;
                if ms == 0 {
                    return Err(self.bad(
                        a,
                        "fio's log of every I/O has no iopulse equivalent: give log_avg_msec=N (N ms per row of iopulse's time series)",
                    ));
                }
                ms
            }
            None => 1000,
        };
        self.push_text("interval", o, format!("{interval_ms}ms"));
        self.notes.push(format!(
            "{}: fio's logs become iopulse's time series: a row per {interval_ms} ms with IOPS, bandwidth and latency percentiles in the JSON's time_series (`--timeseries FILE` after the job file writes them as CSV, one file per job)",
            o.at
        ));
        Ok(())
    }

    /// `time_based`, `runtime`, `size`, `io_size`, `filesize`, `number_ios`, `norandommap`:
    /// when the job ends. fio without time_based ends when size bytes are done: with
    /// sequential offsets or random ones without repeats (fio's random map) that is every
    /// block once, iopulse's `duration = 0`. Returns whether the job writes every block
    /// exactly once.
    fn run_length(&mut self, jobs_n: u64, shared: bool) -> Result<bool, UsageError> {
        if self.run_length_given {
            return Ok(false);
        }
        let time_based = self.switch_of("time_based")?.filter(|(on, _)| *on);
        let runtime = match self.get("runtime") {
            Some(o) => Some((time_ns(self.text(o)?, SECOND_NS).map_err(|e| self.bad(o, &e))?, o)),
            None => None,
        };
        let io_size = self.size_of("io_size")?;
        // number_ios=N: each fio job (numjobs clone) stops after N I/Os, or before when its
        // size or io_size is done; 0 is no limit.
        let number_ios = self.count_of("number_ios")?.filter(|(n, _)| *n > 0);
        // With filesize, size is the job's amount of I/O over its files: at most their
        // total (fio caps it there), their total when not given. `part`: less than that.
        let (size, part) = match (self.filesize, self.size_of("size")?) {
            (Some((per_file, fo)), size) => {
                let total = per_file.saturating_mul(self.files);
                match size {
                    Some((bytes, o)) if bytes < total => (Some((bytes, o)), true),
                    Some((_, o)) => (Some((total, o)), false),
                    None => (Some((total, fo)), false),
                }
            }
            (None, size) => (size, false),
        };
        let amount = io_size.or(size);
        if let Some((_, o)) = time_based {
            let Some((ns, ro)) = runtime.filter(|(ns, _)| *ns > 0) else {
                return Err(
                    self.bad(o, "time_based without a runtime runs until stopped: give runtime (e.g. runtime=30s)")
                );
            };
            self.push_text("duration", ro, iopulse_time(ns));
            if let Some((n, no)) = number_ios {
                // Measured with fio 3.33: a time_based job with number_ios runs its runtime.
                self.notes.push(format!(
                    "{}: number_ios={n}: fio runs a time_based job for its whole runtime whatever number_ios says; so does iopulse",
                    no.at
                ));
            }
            return Ok(false);
        }
        if let Some((ns, ro)) = runtime.filter(|(ns, _)| *ns > 0) {
            self.push_text("duration", ro, iopulse_time(ns));
            if let Some((bytes, o)) = amount {
                self.io_limit(bytes, o, jobs_n, number_ios)?;
                self.notes.push(format!(
                    "{}: runtime without time_based: iopulse stops at the runtime or after size × numjobs bytes, whichever comes first; its random offsets may repeat (fio's norandommap)",
                    ro.at
                ));
            } else if let Some((n, no)) = number_ios {
                self.push_text("ops", no, n.saturating_mul(jobs_n).to_string());
            }
            return Ok(false);
        }
        if let Some((bytes, o)) = io_size {
            self.io_limit(bytes, o, jobs_n, number_ios)?;
            return Ok(false);
        }
        let random = self.entries.iter().any(|e| e.key == "random");
        let norandommap = self.switch_of("norandommap")?.is_some_and(|(on, _)| on);
        if (!random || !norandommap) && (jobs_n == 1 || !shared) {
            let line = size.map_or(self.section.at.line, |(_, o)| o.at.line);
            self.entries.push(Entry { key: "duration".into(), line, value: Value::Text("0".into()) });
            // Each block once, and no more than size bytes (filesize's part of the files:
            // fio's random map spreads them over the whole files, so does iopulse's) or
            // number_ios I/Os per worker.
            match (size, number_ios) {
                (Some((bytes, o)), _) if part => self.io_limit(bytes, o, jobs_n, number_ios)?,
                (_, Some((n, no))) => self.push_text("ops", no, n.saturating_mul(jobs_n).to_string()),
                _ => return Ok(true),
            }
            return Ok(false);
        }
        let Some((bytes, o)) = size else {
            return Err(UsageError::new(format!(
                "{}: job [{}]: neither `size` nor `runtime` (with `time_based`) is given: fio does the whole file or device per job, whose size is not known before the run: give size (or give --duration)",
                self.section.at, self.section.name
            )));
        };
        self.io_limit(bytes, o, jobs_n, number_ios)?;
        Ok(false)
    }

    /// The job stops after `bytes` of I/O per fio job (`o`'s amount: size or io_size), or
    /// after number_ios I/Os when that comes first: `io-limit` or `ops` for all its workers.
    fn io_limit(
        &mut self,
        bytes: u64,
        o: &FioOption,
        jobs_n: u64,
        number_ios: Option<(u64, &FioOption)>,
    ) -> Result<(), UsageError> {
        let Some((n, no)) = number_ios else {
            self.push_text("io-limit", o, iopulse_size(bytes.saturating_mul(jobs_n)));
            return Ok(());
        };
        // iopulse takes one limit, an I/O count or bytes: the smaller of the two, in I/Os.
        let Some(block_bytes) = self.block_bytes else {
            return Err(self.bad(
                no,
                &format!("number_ios with a mix of block sizes and `{}`: the job would end at whichever of an I/O count and a byte amount comes first, which iopulse cannot give a mix: give runtime and time_based, or drop number_ios", o.key),
            ));
        };
        let by_amount = bytes / block_bytes;
        let (per_job, line_of) = if n <= by_amount { (n, no) } else { (by_amount, o) };
        self.push_text("ops", line_of, per_job.saturating_mul(jobs_n).to_string());
        Ok(())
    }

    /// The read pass that checks what a verified write job wrote, in the phase after it.
    /// `write_iolog`: the job's `write-iolog`, a log per job. Given in a [global] section, it
    /// is every job's, each its own file: the name with the job's before the extension, as
    /// iopulse's [global] key names them (fio would mix the jobs into one file).
    fn write_iolog(&mut self) -> Result<(), UsageError> {
        let Some(o) = self.get("write_iolog") else { return Ok(()) };
        let path = self.text(o)?.to_string();
        if self.section.options.iter().any(|own| own == o) {
            self.push_text("write-iolog", o, path);
            return Ok(());
        }
        let safe = crate::report::output_path::file_safe_names(&[self.name.as_str()]).remove(0);
        let own = crate::plan::iologs::beside(std::path::Path::new(&path), &safe).display().to_string();
        self.notes.push(format!("{}: write_iolog in [global]: job [{}] writes its own log, {own}", o.at, self.name));
        self.push_text("write-iolog", o, own);
        Ok(())
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
mod tests {
    use super::super::ini::parse_into;
    use super::*;

    fn translate_text(text: &str, has_ramp: bool) -> Result<Translated, String> {
        let mut sections = Vec::new();
        parse_into(text, "j.fio", std::path::Path::new("."), &|_| None, 0, &mut sections).map_err(|e| e.message)?;
        let has_flag = |name: &str| has_ramp && name == "ramp";
        let ctx = Context { ignore_unsupported: false, has_flag: &has_flag, directory: None, run_length_given: false };
        translate("j.fio", &sections, &ctx).map_err(|e| e.message)
    }

    fn keys(t: &Translated, job: usize) -> Vec<(String, String)> {
        t.file.jobs[job]
            .entries
            .iter()
            .map(|e| {
                let v = match &e.value {
                    Value::Switch(b) => b.to_string(),
                    Value::Text(s) => s.clone(),
                    Value::List(l) => l.join(","),
                };
                (e.key.clone(), v)
            })
            .collect()
    }

    fn has(t: &Translated, job: usize, key: &str, value: &str) -> bool {
        keys(t, job).contains(&(key.to_string(), value.to_string()))
    }

    #[test]
    fn options_become_keys_of_the_same_meaning() {
        let t = translate_text(
            "[global]\nfilename=/x/a\nbuffered=0\ninvalidate=0\n[a]\nrw=randread:4\nbsrange=8k-8k\nrandom_distribution=pareto:0.8\nnumjobs=2\nnorandommap\nsize=1m\ncpus_allowed=0-1\ncpus_allowed_policy=split\nnuma_cpu_nodes=0\nrate=1m,1m\n",
            false,
        )
        .unwrap();
        for (k, v) in [
            ("random", "true"),
            ("random-percent", "25"),
            ("block-size", "8k"),
            ("distribution", "pareto"),
            ("pareto-h", "0.8"),
            ("threads", "2"),
            ("direct", "true"),
            ("cache", "keep"),
            ("targets", "/x/a"),
            ("file-size", "1M"),
            ("cpu-cores", "0-1"),
            ("numa-zones", "0"),
            ("rate-bw", "1M"),
            // norandommap, shared file, no runtime: size bytes per clone.
            ("io-limit", "2M"),
        ] {
            assert!(has(&t, 0, k, v), "{k} = {v} missing: {:?}", keys(&t, 0));
        }
        assert!(!keys(&t, 0).iter().any(|(k, _)| k == "duration"));
        // split: no note about the CPU policy; the random-percent note is there.
        assert!(t.notes.iter().all(|n| !n.contains("cpus_allowed")), "{:?}", t.notes);
        assert!(t.notes.iter().any(|n| n.contains("random-percent 25")), "{:?}", t.notes);
    }

    #[test]
    fn later_globals_apply_to_later_jobs_and_names_stay_unique() {
        let t = translate_text("[global]\nbs=8k\n[a]\n[global]\nbs=16k\n[a]\nrw=rw\nrwmixwrite=20\n", false).unwrap();
        assert_eq!(t.file.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), vec!["a", "a-2"]);
        assert!(has(&t, 0, "block-size", "8k") && has(&t, 1, "block-size", "16k"));
        assert!(has(&t, 1, "write-percent", "20"));
        assert!(has(&t, 0, "targets", "a.0.0"), "{:?}", keys(&t, 0));
        assert!(has(&t, 0, "duration", "0"));
        // A stonewall in [global] makes every job a phase: the read-back pass fits between.
        let t = translate_text("[global]\nstonewall\n[a]\nrw=write\nverify=md5\n[b]\n", false).unwrap();
        assert_eq!(t.file.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), vec!["a", "a-verify", "b"]);
        assert!(has(&t, 1, "verify", "true") && has(&t, 1, "stonewall", "true") && has(&t, 2, "stonewall", "true"));
    }

    #[test]
    fn write_iolog_is_a_jobs_own_file_and_from_global_a_file_per_job() {
        let t = translate_text(
            "[global]\nwrite_iolog=/l/run.iolog\n[a]\nrw=write\nverify=md5\n[b]\nstonewall\nwrite_iolog=own.log\n",
            false,
        )
        .unwrap();
        let names: Vec<&str> = t.file.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "a-verify", "b"]);
        assert!(has(&t, 0, "write-iolog", "/l/run-a.iolog"), "{:?}", keys(&t, 0));
        // The read-back pass is iopulse's own: it logs nothing.
        assert!(!keys(&t, 1).iter().any(|(k, _)| k == "write-iolog"), "{:?}", keys(&t, 1));
        assert!(has(&t, 2, "write-iolog", "own.log"), "{:?}", keys(&t, 2));
        assert!(
            t.notes.iter().any(|n| n.contains("write_iolog in [global]: job [a] writes its own log, /l/run-a.iolog"))
        );
    }

    #[test]
    fn ramp_time_waits_for_the_ramp_flag() {
        let e = translate_text("[a]\nramp_time=5\nruntime=10\ntime_based\n", false).unwrap_err();
        assert!(e.starts_with("j.fio:2: option `ramp_time` of [a]"), "{e}");
        let t = translate_text("[a]\nramp_time=5\nruntime=10\ntime_based\n", true).unwrap();
        assert!(has(&t, 0, "ramp", "5s") && has(&t, 0, "duration", "10s"));
    }

    #[test]
    fn number_ios_and_filesize_end_the_job_at_the_smaller_amount() {
        // filesize is each file's size, size the job's I/O; the smaller of it and number_ios
        // ends each clone, iopulse's --ops counting for all of them.
        let t =
            translate_text("[a]\nrw=randwrite\nfilesize=1m\nsize=512k\nnumjobs=2\nnumber_ios=100\n", false).unwrap();
        for (k, v) in [("file-size", "1M"), ("duration", "0"), ("ops", "200"), ("file-distribution", "per-worker")] {
            assert!(has(&t, 0, k, v), "{k} = {v}: {:?}", keys(&t, 0));
        }
        let t = translate_text("[a]\nrw=write\nfilesize=1m\nsize=512k\nnumber_ios=1000\nbs=8k\n", false).unwrap();
        assert!(has(&t, 0, "ops", "64") && has(&t, 0, "duration", "0"), "{:?}", keys(&t, 0));
        // A size past the files' total is capped there, as fio does: every block once.
        let t = translate_text("[a]\nrw=write\nfilesize=1m\nsize=3m\n", false).unwrap();
        assert!(has(&t, 0, "file-size", "1M") && has(&t, 0, "duration", "0"), "{:?}", keys(&t, 0));
        assert!(!keys(&t, 0).iter().any(|(k, _)| k == "io-limit" || k == "ops"), "{:?}", keys(&t, 0));
        // io_size with filesize: the I/O amount; number_ios alone with a runtime.
        let t = translate_text("[a]\nfilesize=1m\nsize=3m\nio_size=2m\n", false).unwrap();
        assert!(has(&t, 0, "io-limit", "2M") && has(&t, 0, "file-size", "1M"), "{:?}", keys(&t, 0));
        let t = translate_text("[a]\nfilename=/x\nruntime=5\nnumber_ios=7\nnumjobs=3\n", false).unwrap();
        assert!(has(&t, 0, "duration", "5s") && has(&t, 0, "ops", "21"), "{:?}", keys(&t, 0));
        // time_based: fio runs its runtime whatever number_ios says (a note).
        let t = translate_text("[a]\nsize=1m\ntime_based\nruntime=2\nnumber_ios=10\n", false).unwrap();
        assert!(!keys(&t, 0).iter().any(|(k, _)| k == "ops"), "{:?}", keys(&t, 0));
        assert!(t.notes.iter().any(|n| n.contains("number_ios=10: fio runs a time_based job")), "{:?}", t.notes);
        // A verified write that number_ios cuts short cannot be read back whole.
        let e = translate_text("[a]\nrw=write\nsize=1m\nverify=crc32c\nnumber_ios=10\n", false).unwrap_err();
        assert!(e.contains("option `verify`") && e.contains("number_ios"), "{e}");
    }

    #[test]
    fn reducible_data_and_sqpoll_become_their_keys() {
        let t = translate_text(
            "[a]\nrw=write\nsize=1m\ndedupe_percentage=34\nbuffer_compress_percentage=50\nioengine=io_uring\nsqthread_poll\nsqthread_poll_cpu=1\n",
            false,
        )
        .unwrap();
        for (k, v) in [("dedupe-ratio", "1.5152"), ("compress-ratio", "2"), ("sqpoll", "true"), ("sqpoll-cpu", "1")] {
            assert!(has(&t, 0, k, v), "{k} = {v}: {:?}", keys(&t, 0));
        }
        let t = translate_text("[a]\nrw=write\nsize=1m\nbuffer_compress_percentage=100\ndedupe_percentage=0\n", false)
            .unwrap();
        assert!(has(&t, 0, "write-pattern", "zeros"), "{:?}", keys(&t, 0));
        assert!(!keys(&t, 0).iter().any(|(k, _)| k == "dedupe-ratio" || k == "compress-ratio"), "{:?}", keys(&t, 0));
        // sqthread_poll=0: no SQPOLL; its CPU then does nothing (a note), as in fio.
        let t = translate_text("[a]\nioengine=io_uring\nsqthread_poll=0\nsqthread_poll_cpu=1\n", false).unwrap();
        assert!(!keys(&t, 0).iter().any(|(k, _)| k.starts_with("sqpoll")), "{:?}", keys(&t, 0));
        assert!(t.notes.iter().any(|n| n.contains("sqthread_poll_cpu=1 binds")), "{:?}", t.notes);
    }

    #[test]
    fn what_iopulse_cannot_do_is_refused_with_its_line() {
        for (text, expected) in [
            (
                "[a]\nrw=rw\nrwmixread=60\nrwmixwrite=60\n",
                "j.fio:4: option `rwmixwrite` of [a]: rwmixread=60 and rwmixwrite=60",
            ),
            ("[a]\nbs=4k,8k\n", "j.fio:2: option `bs` of [a]: different values for reads and writes"),
            ("[a]\nbsrange=4k-16k\n", "j.fio:2: option `bsrange` of [a]: a range of block sizes"),
            ("[a]\nrw=read:4k\n", "j.fio:2: option `rw` of [a]: a sequential skip"),
            ("[a]\nrw=randread:3\n", "j.fio:2: option `rw` of [a]: rw=randread:3"),
            ("[a]\nioengine=posixaio\n", "j.fio:2: option `ioengine` of [a]: no iopulse engine for ioengine=posixaio"),
            ("[a]\nrandom_distribution=normal:10\n", "j.fio:2: option `random_distribution` of [a]: fio's normal"),
            ("[a]\nsize=50%\n", "j.fio:2: option `size` of [a]: a percentage"),
            ("[a]\nnumjobs=2\nnrfiles=2\n", "j.fio:1: job [a]: numjobs with nrfiles"),
            (
                "[a]\nfilename=/x\nnrfiles=2\n",
                "j.fio:3: option `nrfiles` of [a]: nrfiles=2 with filename naming 1 file(s)",
            ),
            (
                "[a]\nrw=write\nverify=crc32c\n[b]\n",
                "j.fio:3: option `verify` of [a]: iopulse checks the written blocks in a phase after",
            ),
            ("[global]\nbs=4k\n", "j.fio: no job"),
            ("[a]\ndedupe_percentage=100\n", "j.fio:2: option `dedupe_percentage` of [a]: dedupe_percentage=100"),
            (
                "[a]\nbuffer_compress_percentage=101\n",
                "j.fio:2: option `buffer_compress_percentage` of [a]: buffer_compress_percentage=101: give a percentage",
            ),
            ("[a]\nfilesize=1m-2m\n", "j.fio:2: option `filesize` of [a]: filesize=1m-2m: a range of file sizes"),
            (
                "[a]\nbssplit=4k/50:8k/50\nsize=1m\nnumber_ios=10\nio_size=1m\n",
                "j.fio:4: option `number_ios` of [a]: number_ios with a mix of block sizes and `io_size`",
            ),
        ] {
            let e = translate_text(text, false).unwrap_err();
            assert!(e.starts_with(expected), "{text:?}: {e}");
        }
    }
}
