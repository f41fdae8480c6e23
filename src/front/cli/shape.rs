//! The flags that say what a run's I/O is: its sizes, its read/write/trim mix, its workers
//! and their depth, how the files are shared (help heading "Workload").

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::{Bytes, Count, Percent};
use crate::io::access::block_sizes::BlockSizeMix;
use crate::workload::spec::FileDistribution;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Workload")]
#[serde(default)]
pub struct ShapeArgs {
    /// Size of each file [default: existing, or 1G]
    ///
    /// Size of each file (k/m/g/t are powers of two, decimals allowed: 4k, 1.5G). A shorter
    /// file is extended with written data; default: an existing file's size, or 1G for a new one.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub file_size: Option<Bytes>,

    /// Bytes per I/O [default: 4k]
    ///
    /// Bytes per I/O, e.g. 512, 4k, 1M. With --direct a multiple of the target's DIO alignment. [default: 4k]
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub block_size: Option<Bytes>,

    /// A mix of block sizes, fio's syntax.
    ///
    /// A mix of block sizes, fio's syntax: SIZE/PERCENT entries (shares of I/Os) joined by
    /// `:`; a percent left empty shares the rest equally; a comma separates the reads' split
    /// from the writes' (a third split is the trims'). Figures are reported per size too.
    /// E.g. `--bssplit 4k/50:64k/30:1m/20`, `--bssplit 4k/100,64k/50:1m/50`
    #[arg(long, value_name = "SPLIT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub bssplit: Option<String>,

    /// Offsets are multiples of this.
    ///
    /// Offsets are multiples of this (fio's blockalign) [default: the smallest size of
    /// --bssplit, else --block-size]. E.g. `--block-size 64k --block-align 4k --random`
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub block_align: Option<Bytes>,

    /// Share of I/Os that are reads [default: 100]
    ///
    /// Share of I/Os that are reads, 0-100 [default: 100]. Give this or --write-percent.
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub read_percent: Option<Percent>,

    /// Share of I/Os that are writes.
    ///
    /// Share of I/Os that are writes, 0-100. Read and write percentages must sum to 100.
    /// Buffered writes the device did not see in the window (the page cache kept them) are
    /// a loud warning naming the fixes (--direct, --fsync-every).
    /// E.g. `--write-percent 30` for a 70/30 mix.
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub write_percent: Option<Percent>,

    /// Share of I/Os that are trims [default: 0]
    ///
    /// Share of I/Os that are trims (discards), 0-100: BLKDISCARD on block devices, a punched
    /// hole in files (fallocate). The rest split by --read-percent/--write-percent.
    /// E.g. `--write-percent 100 --trim-percent 10` [default: 0]
    #[arg(long, allow_hyphen_values = true, value_name = "PERCENT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub trim_percent: Option<Percent>,

    /// Worker threads [default: 1]
    ///
    /// Number of worker threads. Each worker has its own queue of I/Os. [default: 1]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub threads: Option<Count<u32>>,

    /// I/Os in flight per worker [default: 1]
    ///
    /// I/Os in flight per worker (async engines; sync completes one at a time). [default: 1]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub queue_depth: Option<Count<u32>>,

    /// How workers share targets [default: shared]
    ///
    /// How targets are shared between workers: shared (all workers address all targets),
    /// per-worker (each worker gets its own file NAME.0, NAME.1, ... laid out to --file-size),
    /// partitioned (each worker gets a disjoint slice). [default: shared]
    #[arg(long, value_enum, value_name = "HOW")]
    #[serde(deserialize_with = "crate::base::units::values::choice")]
    pub file_distribution: Option<FileDistribution>,

    /// Sequential workers all start at the beginning.
    ///
    /// Sequential workers on a shared target all start at its beginning (default: each
    /// starts at its own, evenly spaced offset).
    #[arg(long)]
    pub sequential_overlap: bool,
}

impl ShapeArgs {
    pub fn threads(&self) -> u32 {
        self.threads.map_or(1, |c| c.0)
    }

    pub fn queue_depth(&self) -> u32 {
        self.queue_depth.map_or(1, |c| c.0)
    }

    /// `--block-size`, or 4 KiB.
    pub fn block_size_bytes(&self) -> u64 {
        self.block_size.map_or(4096, |b| b.0)
    }

    /// The share of reads, from either percentage or both.
    pub fn read_percent(&self) -> Result<u8, UsageError> {
        match (self.read_percent.map(|p| p.0), self.write_percent.map(|p| p.0)) {
            (None, None) => Ok(100),
            (Some(r), None) => Ok(r),
            (None, Some(w)) => Ok(100 - w),
            (Some(r), Some(w)) if u16::from(r) + u16::from(w) == 100 => Ok(r),
            (Some(r), Some(w)) => Err(UsageError::new(format!(
                "--read-percent {r} and --write-percent {w} sum to {}: they must sum to 100 (or give only one)",
                u16::from(r) + u16::from(w)
            ))),
        }
    }

    /// `--bssplit`, `--block-align`: the mix of I/O sizes (`None`: every I/O is --block-size).
    pub fn block_sizes(&self) -> Result<Option<BlockSizeMix>, UsageError> {
        let align = self.block_align.map(|b| b.0);
        match (&self.bssplit, align) {
            (None, None) => Ok(None),
            (Some(_), _) if self.block_size.is_some() => Err(UsageError::new(
                "--bssplit and --block-size both given: a mix gives the sizes of its I/Os; drop --block-size",
            )),
            (Some(text), align) => BlockSizeMix::parse(text, align)
                .map(Some)
                .map_err(|e| UsageError::new(format!("--bssplit {text}: {e}"))),
            (None, Some(align)) => BlockSizeMix::single(self.block_size_bytes(), align)
                .map(Some)
                .map_err(|e| UsageError::new(format!("--block-align: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_and_write_percent_either_or_both() {
        let shape = |r: Option<u8>, w: Option<u8>| ShapeArgs {
            read_percent: r.map(Percent),
            write_percent: w.map(Percent),
            ..ShapeArgs::default()
        };
        assert_eq!(shape(None, Some(30)).read_percent(), Ok(70));
        assert_eq!(shape(Some(30), None).read_percent(), Ok(30));
        assert_eq!(shape(Some(30), Some(70)).read_percent(), Ok(30));
        let e = shape(Some(30), Some(30)).read_percent().unwrap_err().message;
        assert!(e.contains("--read-percent") && e.contains("sum to 60"), "{e}");
    }

    #[test]
    fn a_mix_and_a_block_size_are_one_or_the_other() {
        let args =
            ShapeArgs { bssplit: Some("4k/50:64k/50".into()), block_size: Some(Bytes(8192)), ..Default::default() };
        assert!(args.block_sizes().unwrap_err().message.contains("drop --block-size"));
    }
}
