//! The spec's own checks, one place for every way in (flags, job files, profiles, sweeps,
//! searches): each refusal names the flag and the fix. Checks only; changes nothing.

use super::*;

impl Spec {
    /// Checks that need no file system. Each message names the flag and what is accepted.
    pub fn validate(&self) -> Result<(), UsageError> {
        self.validate_metadata()?;
        if self.shape.block_size_bytes == 0 {
            return Err(UsageError::new("--block-size 0: the block size must be at least 1 byte (e.g. 4k)"));
        }
        if self.shape.block_size_bytes > MAX_BLOCK_SIZE_BYTES {
            return Err(UsageError::new(format!(
                "--block-size {}: the block size must be at most 1G",
                self.shape.block_size_bytes
            )));
        }
        if let Some(size) = self.shape.file_size_bytes
            && size < self.shape.block_size_bytes
        {
            return Err(UsageError::new(format!(
                "--file-size {size} is smaller than one block (--block-size {}): give a file size of at least one block",
                self.shape.block_size_bytes
            )));
        }
        if self.shape.threads == 0 {
            return Err(UsageError::new("--threads 0: at least 1 worker thread is needed"));
        }
        if self.shape.threads > MAX_THREADS {
            return Err(UsageError::new(format!(
                "--threads {}: at most {MAX_THREADS} worker threads are accepted",
                self.shape.threads
            )));
        }
        if self.shape.queue_depth == 0 {
            return Err(UsageError::new("--queue-depth 0: the queue depth must be at least 1"));
        }
        if let Some(us) = self.placement.cpu_dma_latency_us
            && us > crate::io::cpu_state::latency_request::MAX_US
        {
            return Err(UsageError::new(format!(
                "--cpu-dma-latency {us}: at most {} µs (a second); 0 keeps idle CPUs polling",
                crate::io::cpu_state::latency_request::MAX_US
            )));
        }
        if self.shape.queue_depth > MAX_QUEUE_DEPTH {
            return Err(UsageError::new(format!(
                "--queue-depth {}: at most {MAX_QUEUE_DEPTH} (io_uring's ring limit) is accepted",
                self.shape.queue_depth
            )));
        }
        self.validate_distribution()?;
        if self.access.distribution != Distribution::Uniform && self.access.order != AccessOrder::Random {
            return Err(UsageError::new(format!(
                "--distribution {} needs --random (sequential runs have no offset distribution)",
                self.access.distribution.name()
            )));
        }
        if self.access.trim_percent > 0 {
            let t = self.access.trim_percent;
            if t > 100 {
                return Err(UsageError::new(format!("--trim-percent {t}: give a percentage from 0 to 100")));
            }
            if self.data.verify.is_some() {
                return Err(UsageError::new(format!(
                    "--trim-percent {t} with --verify: a trimmed block has no data to check; drop one of them"
                )));
            }
        }
        if let Some(p) = self.access.random_percent {
            if self.access.order != AccessOrder::Random {
                return Err(UsageError::new(format!(
                    "--random-percent {p} needs --random (it is the share of random I/Os that jump; the rest continue sequentially)"
                )));
            }
            if p > 100 {
                return Err(UsageError::new(format!("--random-percent {p}: give a percentage from 0 to 100")));
            }
            if p < 100 && self.window.run_length == RunLength::UntilCovered {
                return Err(UsageError::new(format!(
                    "--random-percent {p} with --duration 0: a run until covered visits each block once in a random order; give a --duration or --ops, or drop --random-percent"
                )));
            }
        }
        self.validate_block_sizes()?;
        if self.data.verify.is_some() && (self.shape.block_size_bytes as usize) < crate::io::data::verify::HEADER_BYTES
        {
            return Err(UsageError::new(format!(
                "--block-size {} is too small for --verify: each block carries a {}-byte header; use at least 512",
                self.shape.block_size_bytes,
                crate::io::data::verify::HEADER_BYTES
            )));
        }
        if self.errors.max_errors == Some(0) {
            return Err(UsageError::new(
                "--max-errors 0: give at least 1 (the run stops once that many I/Os have failed)",
            ));
        }
        self.validate_limits()?;
        self.io.engine.check_options(&self.io.engine_options, self.io.direct)?;
        self.validate_durability()?;
        self.validate_verify_state()?;
        self.validate_cache()?;
        if self.access.read_percent > 100 {
            return Err(UsageError::new(format!(
                "--read-percent {}: give a percentage from 0 to 100",
                self.access.read_percent
            )));
        }
        if self.io.direct && !self.io.engine.caps().supports_direct {
            return Err(UsageError::new(format!(
                "--direct cannot be used with --engine {}: a memory mapping always goes through the page cache; for O_DIRECT use --engine io_uring, libaio or sync, or drop --direct",
                self.io.engine.name()
            )));
        }
        Ok(())
    }

    /// `--files`: one target directory, an engine with metadata operations, and none of the
    /// block-I/O flags that would mean nothing on a tree.
    fn validate_metadata(&self) -> Result<(), UsageError> {
        if self.metadata.is_none() {
            return Ok(());
        }
        // None: a profile's, given its target when it runs (`commands/metadata.rs` refuses none).
        if self.targets.len() > 1 {
            return Err(UsageError::new(
                "--files runs on one directory: give exactly one TARGET, the tree's root (e.g. `iopulse /mnt/t --files 10000`)",
            ));
        }
        if self.io.engine.metadata_issue().is_none() {
            return Err(UsageError::new(format!(
                "--files with --engine {}: metadata operations run on the sync or io_uring engine; give --engine sync or io_uring",
                self.io.engine.name()
            )));
        }
        let refused = [
            (self.data.verify.is_some(), "--verify"),
            (self.access.trim_percent > 0, "--trim-percent"),
            (self.durability.flush.is_some(), "--fsync-every/--fdatasync-every (use fsync in --meta-mix)"),
            (self.data.verify_state.is_some(), "--verify-state"),
            (self.window.ramp_ns > 0, "--ramp"),
            (self.window.steady_state.is_some(), "--steady-state"),
            (self.pacing.rate.is_some() || self.pacing.think.is_some(), "--rate-iops/--think-time"),
            (!self.output.expect.is_empty(), "--expect"),
            // What places, reads or writes blocks, which a tree's operations never do:
            // taken silently, it would say the run did what it did not.
            (self.io.direct || self.io.strict_direct, "--direct/--strict-direct"),
            (self.access.read_percent != 100, "--read-percent/--write-percent (a mix of operations is --meta-mix)"),
            (
                self.access.order == crate::io::access::AccessOrder::Random || self.access.random_percent.is_some(),
                "--random/--random-percent",
            ),
            (
                self.access.distribution != crate::io::access::Distribution::Uniform || !self.access.scramble,
                "--distribution/--no-scramble",
            ),
            (self.shape.block_sizes.is_some(), "--bssplit/--block-align"),
            (self.shape.file_size_bytes.is_some(), "--file-size (a tree's file sizes are --file-size-dist)"),
            (
                self.access.file_distribution != FileDistribution::Shared || self.access.sequential_overlap,
                "--file-distribution/--sequential-overlap",
            ),
            (
                self.data.write_pattern != crate::io::data::Pattern::Unique || !self.data.reducibility.is_none(),
                "--write-pattern/--dedupe-ratio/--compress-ratio",
            ),
            (
                self.durability.sync_writes.is_some() || self.durability.fsync_on_close || self.durability.end_fsync,
                "--sync-writes/--fsync-on-close/--end-fsync (use fsync in --meta-mix)",
            ),
            (
                self.io.cache != CacheMode::Drop || self.io.keep_holes || self.io.fadvise_hint != FadviseHint::On,
                "--cache/--keep-holes/--fadvise-hint",
            ),
            (self.errors.continue_on_error || self.errors.max_errors.is_some(), "--continue-on-error/--max-errors"),
            (
                self.io.engine_options != EngineOptions::default(),
                "--sqpoll/--iopoll/--no-register/--submit-batch/--completion-wait",
            ),
            (
                self.placement != crate::io::placement::PlacementSpec::default(),
                "--cpu-cores/--cpu-policy/--numa-zones/--cpu-dma-latency",
            ),
        ];
        if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
            return Err(UsageError::new(format!("{flag} with --files: it applies to block I/O only; leave it out")));
        }
        Ok(())
    }

    /// `--ops`, `--io-limit`: at least one I/O; a share (`N%`) only of targets with a size.
    fn validate_limits(&self) -> Result<(), UsageError> {
        if self.window.ops_limit == Some(0) {
            return Err(UsageError::new("--ops 0 / --io-limit below one block: give at least one I/O"));
        }
        let Some(p) = self.window.io_limit_percent else { return Ok(()) };
        if self.metadata.is_some() {
            return Err(UsageError::new(format!(
                "--io-limit {p}% with --files: a tree has no size to take a share of; give --ops or --duration"
            )));
        }
        if self.replay.is_some() {
            return Err(UsageError::new(format!(
                "--io-limit {p}% with a replay: the trace says how much I/O there is; give --io-limit in bytes, or drop it"
            )));
        }
        Ok(())
    }

    /// `--fsync-every`, `--fdatasync-every`, `--sync-writes`: refused where they would do nothing.
    fn validate_durability(&self) -> Result<(), UsageError> {
        if let Some(f) = self.durability.flush {
            let flag = f.kind.flag();
            if f.every_writes == 0 {
                return Err(UsageError::new(format!(
                    "{flag} 0: give at least 1 (a flush after every N writes of each worker)"
                )));
            }
            if !self.writes() {
                return Err(UsageError::new(format!(
                    "{flag} needs writes: this run only reads; add --write-percent (e.g. --write-percent 100)"
                )));
            }
            if !self.io.engine.caps().touches_storage {
                return Err(UsageError::new(format!(
                    "{flag} cannot be used with --engine {}: it moves no bytes to storage; use --engine sync, libaio, io_uring or mmap",
                    self.io.engine.name()
                )));
            }
            if self.pacing.think.is_some() || self.pacing.rate.is_some() {
                return Err(UsageError::new(format!(
                    "{flag} cannot be combined with --rate-iops, --rate-bw or --think-time yet: the pacing would count each flush as an I/O; drop one of them"
                )));
            }
        }
        if let Some(s) = self.durability.sync_writes {
            if !self.writes() {
                return Err(UsageError::new(format!(
                    "--sync-writes {} needs writes: this run only reads; add --write-percent (e.g. --write-percent 100)",
                    s.name()
                )));
            }
            if !self.io.engine.caps().touches_storage {
                return Err(UsageError::new(format!(
                    "--sync-writes cannot be used with --engine {}: it moves no bytes to storage; use --engine sync, libaio or io_uring",
                    self.io.engine.name()
                )));
            }
            if !self.io.engine.caps().writes_through_descriptor {
                return Err(UsageError::new(format!(
                    "--sync-writes cannot be used with --engine {}: its writes never go through write(2), so O_DSYNC/O_SYNC do nothing; use --fdatasync-every N instead",
                    self.io.engine.name()
                )));
            }
        }
        Ok(())
    }

    /// `--verify-state FILE`: a verifying write run whose completed writes become durable
    /// at known moments (a flush stream, or writes durable at completion: `--sync-writes`,
    /// or `--direct`, whose devices are looked at when the run is planned), its data not
    /// reduced.
    fn validate_verify_state(&self) -> Result<(), UsageError> {
        if self.data.verify_state.is_none() {
            if self.data.verify_state_every.is_some() {
                return Err(UsageError::new(
                    "--verify-state-every sets how often the --verify-state record is updated: add --verify-state FILE or drop it",
                ));
            }
            return Ok(());
        }
        if self.data.verify.is_none() {
            return Err(UsageError::new(
                "--verify-state records which verified writes each flush made durable: add --verify",
            ));
        }
        if self.durability.flush.is_none() && self.durability.sync_writes.is_none() && !self.io.direct {
            return Err(UsageError::new(
                "--verify-state needs writes that become durable at known moments: add --fdatasync-every N (or --fsync-every N), or --sync-writes dsync, or --direct on a block device whose write cache is write through",
            ));
        }
        if self.data.verify_state_every == Some(0) {
            return Err(UsageError::new("--verify-state-every 0: give at least 1 write between record updates"));
        }
        if self.data.verify_state_every.is_some() && self.durability.flush.is_some() {
            return Err(UsageError::new(
                "--verify-state-every applies to writes durable at completion; with --fsync-every/--fdatasync-every the record is updated at each flush: drop --verify-state-every",
            ));
        }
        if !self.data.reducibility.is_none() {
            return Err(UsageError::new(
                "--verify-state with --dedupe-ratio or --compress-ratio: a duplicate block holds no write sequence; drop the ratio",
            ));
        }
        Ok(())
    }

    /// `--bssplit`, `--block-align`: refused where offsets or sizes would be wrong.
    fn validate_block_sizes(&self) -> Result<(), UsageError> {
        let Some(mix) = &self.shape.block_sizes else { return Ok(()) };
        let flag = if mix.sizes().len() > 1 { "--bssplit" } else { "--block-align" };
        if let Some(&size) = mix.sizes().iter().find(|&&s| s > MAX_BLOCK_SIZE_BYTES) {
            return Err(UsageError::new(format!(
                "--bssplit {}: size {size} is above the largest accepted, 1G",
                mix.fio_syntax()
            )));
        }
        if self.window.run_length == RunLength::UntilCovered {
            return Err(UsageError::new(format!(
                "{flag} with --duration 0: a run until covered visits each block once, and blocks of mixed sizes do not tile the target; give a --duration or --ops"
            )));
        }
        if self.data.verify.is_some() {
            return Err(UsageError::new(format!(
                "{flag} with --verify: verification checks blocks of one size at fixed offsets; drop one of them"
            )));
        }
        Ok(())
    }

    /// `--distribution` and its parameters: each in its range, zones of whole blocks that
    /// fit in the file.
    fn validate_distribution(&self) -> Result<(), UsageError> {
        match self.access.distribution {
            Distribution::Uniform => {}
            Distribution::Zipf { theta } => {
                if !(theta > 0.0 && theta.is_finite()) {
                    return Err(UsageError::new(format!(
                        "--zipf-theta {}: give a number above 0, e.g. 1.2",
                        crate::base::units::display::number(theta)
                    )));
                }
            }
            Distribution::Pareto { h } => {
                if !(h > 0.0 && h < 1.0) {
                    return Err(UsageError::new(format!(
                        "--pareto-h {}: give a number between 0 and 1 (exclusive), e.g. 0.9",
                        crate::base::units::display::number(h)
                    )));
                }
            }
            Distribution::Gaussian { stddev, center } => {
                if !(stddev > 0.0 && stddev.is_finite()) {
                    return Err(UsageError::new(format!(
                        "--gaussian-stddev {}: give a fraction of the region above 0, e.g. 0.1",
                        crate::base::units::display::number(stddev)
                    )));
                }
                if !(0.0..=1.0).contains(&center) {
                    return Err(UsageError::new(format!(
                        "--gaussian-center {}: give a fraction of the region from 0 to 1, e.g. 0.5",
                        crate::base::units::display::number(center)
                    )));
                }
            }
            Distribution::Zoned { zones } => {
                if let Some(smallest) = zones.smallest_bytes()
                    && smallest < self.largest_block_bytes()
                {
                    return Err(UsageError::new(format!(
                        "--zones {}: a zone of {smallest} bytes is smaller than one block ({} bytes): no I/O fits in it; give zones of whole blocks",
                        zones.to_text(),
                        self.largest_block_bytes()
                    )));
                }
                if let (Some(covered), Some(file)) = (zones.covered_bytes(), self.shape.file_size_bytes)
                    && covered > file
                {
                    return Err(UsageError::new(format!(
                        "--zones {}: the zones cover {covered} bytes, more than --file-size ({file} bytes): shrink the zones or grow the file",
                        zones.to_text()
                    )));
                }
            }
        }
        Ok(())
    }

    /// `--cache warm` needs a run whose I/O goes through the page cache; `--verify` needs an
    /// engine that moves bytes.
    fn validate_cache(&self) -> Result<(), UsageError> {
        let touches_storage = self.io.engine.caps().touches_storage;
        if self.data.verify.is_some() && !touches_storage {
            return Err(UsageError::new(format!(
                "--verify cannot be used with --engine {}: it moves no bytes, so there is nothing to check; drop --verify or use an engine that does I/O (sync, libaio, io_uring, mmap)",
                self.io.engine.name()
            )));
        }
        if self.io.cache == CacheMode::Warm && self.io.direct {
            return Err(UsageError::new(
                "--cache warm cannot be used with --direct: O_DIRECT I/O bypasses the page cache, so warming it changes nothing the run measures; drop --direct to measure a warm cache, or use --cache drop or keep",
            ));
        }
        if self.io.cache == CacheMode::Warm && !touches_storage {
            return Err(UsageError::new(format!(
                "--cache warm cannot be used with --engine {}: it touches no target, so there is nothing to warm; drop --cache warm",
                self.io.engine.name()
            )));
        }
        Ok(())
    }
}
