//! What a fio job does, as iopulse keys: its mix of reads, writes and trims, its sizes, its
//! targets, and how long it runs (runtime, size, number_ios, loops). Translates; runs nothing.

use super::{JobTranslation, Mix, SECOND_NS};
use crate::base::diagnostics::error::UsageError;
use crate::front::fio_import::ini::FioOption;
use crate::front::fio_import::values::{count, iopulse_size, iopulse_time, size_bytes, time_ns};
use crate::front::plan::job_file::parse::{Entry, Value};

impl<'a> JobTranslation<'a> {
    /// `rw` (with its `:N` suffix), `rwmixread`, `rwmixwrite`.
    pub(super) fn workload(&mut self) -> Result<Mix, UsageError> {
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
    pub(super) fn block_size(&mut self) -> Result<(), UsageError> {
        if let Some(o) = self.get("blockalign") {
            let v = self.same_for_both(o, self.text(o)?)?;
            let bytes = size_bytes(v).map_err(|e| self.bad(o, &e))?;
            self.push_text("block-align", o, iopulse_size(bytes));
            self.block_bytes = None;
        }
        if let Some(o) = self.get("bssplit") {
            // fio's syntax is iopulse's (reads,writes[,trims]); a split overrides bs, as in fio.
            let v = self.text(o)?.trim().to_string();
            crate::io::access::block_sizes::BlockSizeMix::parse(&v, None).map_err(|e| self.bad(o, &e))?;
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
    pub(super) fn targets(&mut self) -> Result<(u64, bool), UsageError> {
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

    /// `time_based`, `runtime`, `size`, `io_size`, `filesize`, `number_ios`, `norandommap`:
    /// when the job ends. fio without time_based ends when size bytes are done: with
    /// sequential offsets or random ones without repeats (fio's random map) that is every
    /// block once, iopulse's `duration = 0`. Returns whether the job writes every block
    /// exactly once.
    pub(super) fn run_length(&mut self, jobs_n: u64, shared: bool) -> Result<bool, UsageError> {
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
            // Random offsets that may repeat, or several jobs on one file: fio's job moves as
            // many bytes as the file or device holds, each job, whatever its size turns out
            // to be when the run opens it: iopulse's `io-limit = "100%"` (of each worker's
            // region), or number_ios when given.
            if let Some((n, no)) = number_ios {
                self.push_text("ops", no, n.saturating_mul(jobs_n).to_string());
                self.notes.push(format!(
                    "{}: number_ios={n} without size: each job stops after {n} I/Os; fio stops a job earlier if its file or device holds fewer blocks",
                    no.at
                ));
            } else {
                let line = self.section.at.line;
                self.entries.push(Entry { key: "io-limit".into(), line, value: Value::Text("100%".into()) });
                self.notes.push(format!(
                    "{}: job [{}]: neither size nor runtime: each of its {jobs_n} job(s) moves as many bytes as its file or device holds, as fio's does (io-limit = \"100%\", taken when the run opens the target)",
                    self.section.at, self.section.name
                ));
            }
            return Ok(false);
        };
        self.io_limit(bytes, o, jobs_n, number_ios)?;
        Ok(false)
    }

    /// The job stops after `bytes` of I/O per fio job (`o`'s amount: size or io_size), or
    /// after number_ios I/Os when that comes first: `io-limit` or `ops` for all its workers.
    pub(super) fn io_limit(
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
}
