//! How a fio job does its I/O, as iopulse keys: the engine and its options, the data
//! written, where offsets fall, pacing, flushes, CPUs and NUMA nodes. Translates; runs nothing.

use super::{JobTranslation, SECOND_NS, ratio_of_percent};
use crate::base::diagnostics::error::UsageError;
use crate::front::fio_import::ini::FioOption;
use crate::front::fio_import::values::{count, iopulse_size, iopulse_time, size_bytes, time_ns};
use crate::front::plan::job_file::parse::Value;

impl<'a> JobTranslation<'a> {
    /// `ioengine`, `iodepth`, `direct`, `buffered`, `invalidate`.
    pub(super) fn engine(&mut self) -> Result<(), UsageError> {
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
    pub(super) fn data(&mut self) -> Result<(), UsageError> {
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

    /// Offsets, seed, rates, think time, end_fsync, fsync/fdatasync/sync, CPUs and NUMA
    /// nodes, ramp, steady state and logs.
    pub(super) fn pacing_and_placement(&mut self) -> Result<(), UsageError> {
        self.distribution()?;
        self.pacing()?;
        self.flushes()?;
        self.placement()?;
        self.steady_state()?;
        self.logs()
    }

    /// `randseed` and `random_distribution`: where random offsets fall.
    pub(super) fn distribution(&mut self) -> Result<(), UsageError> {
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
                        crate::io::access::zoned::ZoneExtent::Percent
                    } else {
                        crate::io::access::zoned::ZoneExtent::Bytes
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
                    crate::io::access::zoned::ZoneSets::parse(&zones, extent).map_err(|e| self.bad(o, &e))?;
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
        Ok(())
    }

    /// `rate_iops`, `rate`, `thinktime`, `thinktime_blocks`.
    pub(super) fn pacing(&mut self) -> Result<(), UsageError> {
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
        Ok(())
    }

    /// `end_fsync`, `fsync`, `fdatasync`, `sync`.
    pub(super) fn flushes(&mut self) -> Result<(), UsageError> {
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
        Ok(())
    }

    /// `cpus_allowed` (and its policy), `numa_cpu_nodes`, `ramp_time`.
    pub(super) fn placement(&mut self) -> Result<(), UsageError> {
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
        Ok(())
    }
}
