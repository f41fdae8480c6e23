//! The flags that say what written blocks hold and how reads are checked: the write
//! pattern, its reducibility, verification, the seed (help heading "Data and verification").

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::{Count, Real};
use crate::io::data::{Pattern, Reducibility};
use crate::workload::spec::VerifySpec;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Data and verification")]
#[serde(default)]
pub struct DataArgs {
    /// Contents of written blocks [default: unique]
    ///
    /// Contents of written blocks (and of layout): unique (every 512-byte sector unique, no
    /// record from 4 KiB to 1 MiB compresses; a random base indexed by offset with a fresh
    /// key per sector, at fio's cost), random (every byte fresh for every write: as
    /// irreducible, a copy's cost), keyed (a key per 4 KiB only: records of several writes
    /// compress, 23x in 128 KiB of 4 KiB writes), zeros, ones or sequential bytes.
    /// E.g. --write-pattern random [default: unique; random with --dedupe-ratio or
    /// --compress-ratio]
    #[arg(long, value_enum, value_name = "PATTERN")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub write_pattern: Option<Pattern>,

    /// Make write data dedupe by R.
    ///
    /// Make random write data dedupe by R: 4 KiB chunks written to distinct ones (which are
    /// duplicates follows from seed and offset; with --verify whole blocks, checked too).
    /// E.g. --dedupe-ratio 3 [default: 1, all unique]
    #[arg(long, allow_hyphen_values = true, value_name = "R")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub dedupe_ratio: Option<Real>,

    /// Make write data compress by R.
    ///
    /// Make random write data compress by R with a standard compressor (gzip, zstd): each 4 KiB
    /// chunk is 1/R random bytes, then zeros. E.g. --compress-ratio 2 [default: 1, incompressible]
    #[arg(long, allow_hyphen_values = true, value_name = "R")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub compress_ratio: Option<Real>,

    /// Write checked blocks and verify every read.
    ///
    /// Write verifiable blocks (a header with offset, seed, write sequence and crc32c) and
    /// check every read: corrupted, misplaced, never-written, torn and lost blocks are
    /// reported, and the run exits 3. Layout writes the verify pattern too.
    /// E.g. `iopulse t.dat --duration 0 --write-percent 100 --verify`
    #[arg(long)]
    pub verify: bool,

    /// Payload after the verify header [default: random]
    ///
    /// Payload after the verify header. E.g. `--verify --verify-pattern zeros` [default: random]
    #[arg(long, value_enum, value_name = "PATTERN")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub verify_pattern: Option<Pattern>,

    /// Failed blocks described in full.
    ///
    /// Failed blocks described in full (offset, expected and found bytes); the rest are
    /// counted. E.g. `--verify-max-reports 100` [default: 10]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub verify_max_reports: Option<Count<u32>>,

    /// Keep a durable record for `iopulse verify` after a crash.
    ///
    /// Keep a durable record in FILE of what each completed flush made durable (the write of
    /// each block it covered), updated crash-safely at every flush (only the pages changed);
    /// after a power cut or a crash, `iopulse verify --state FILE` tells lost-though-flushed
    /// blocks from unflushed ones, on every target (docs/durability.md). Needs --verify and
    /// a flush stream (--fsync-every or --fdatasync-every) or writes durable at completion
    /// (--sync-writes, or --direct on block devices whose write cache is write through). In
    /// a cluster each rank keeps FILE.rankN (or the path `{rank}` gives). E.g. `iopulse t.dat
    /// --file-size 64m --write-percent 100 --verify --fdatasync-every 8 --verify-state t.state`
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub verify_state: Option<std::path::PathBuf>,

    /// Update the record every N writes durable at completion.
    ///
    /// With writes durable at completion and no flush stream, the --verify-state record is
    /// updated after every N completed writes of a worker (and at its end): a smaller N
    /// checks more of the last writes after a cut, at one record write and fdatasync per N
    /// writes. E.g. `iopulse /dev/sdb --force --write-percent 100 --verify --sync-writes dsync
    /// --verify-state sdb.state --verify-state-every 16` [default: 64]
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub verify_state_every: Option<Count<u64>>,

    /// Seed of every random choice (same seed, same run).
    ///
    /// Seed of every random choice (offsets, read/write mix, data). Same seed, same run.
    /// Default: drawn at start and recorded in the JSON result. E.g. `--seed 42`
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub seed: Option<Count<u64>>,
}

impl DataArgs {
    /// `--dedupe-ratio`, `--compress-ratio`: each at least 1, for random unverified writes.
    pub fn reducibility(&self) -> Result<Reducibility, UsageError> {
        let dedupe = self.dedupe_ratio.map(|r| r.0);
        let compress = self.compress_ratio.map(|r| r.0);
        for (flag, ratio, most) in [("--dedupe-ratio", dedupe, 1e9), ("--compress-ratio", compress, 4096.0)] {
            let Some(r) = ratio else { continue };
            if !(1.0..=most).contains(&r) {
                return Err(UsageError::new(format!(
                    "{flag} {}: give a ratio from 1 (no reduction) to {most}, e.g. {flag} 2",
                    crate::base::units::display::number(r)
                )));
            }
            for (other, pattern) in [("--write-pattern", self.write_pattern), ("--verify-pattern", self.verify_pattern)]
            {
                if let Some(p) = pattern.filter(|&p| p != Pattern::Random) {
                    return Err(UsageError::new(format!(
                        "{flag} shapes random data, but {other} is {}: drop {other} or {flag}",
                        p.name()
                    )));
                }
            }
        }
        Ok(Reducibility { dedupe_ratio: dedupe, compress_ratio: compress })
    }

    /// `--write-pattern`, or the default: `unique` for every engine (no storage can shrink
    /// it, and it costs what fio's scrambling does), `random` when ratios shape the data.
    pub fn write_pattern(&self, reducibility: &Reducibility) -> Pattern {
        self.write_pattern.unwrap_or(if reducibility.is_none() { Pattern::Unique } else { Pattern::Random })
    }

    /// `--verify` and its pattern and reports.
    pub fn verify(&self) -> Result<Option<VerifySpec>, UsageError> {
        if self.verify_pattern.is_some() && !self.verify {
            return Err(UsageError::new("--verify-pattern applies to --verify runs: add --verify"));
        }
        Ok(self.verify.then_some(VerifySpec {
            pattern: self.verify_pattern.unwrap_or(Pattern::Random),
            max_reports: self.verify_max_reports.map_or(10, |c| c.0),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_shape_random_data_only() {
        let d = DataArgs { dedupe_ratio: Some(Real(3.0)), write_pattern: Some(Pattern::Zeros), ..Default::default() };
        let e = d.reducibility().unwrap_err().message;
        assert!(e.contains("--dedupe-ratio shapes random data, but --write-pattern is zeros"), "{e}");
        let d = DataArgs { compress_ratio: Some(Real(0.5)), ..Default::default() };
        assert!(d.reducibility().unwrap_err().message.starts_with("--compress-ratio 0.5: give a ratio from 1"));
    }
}
