//! Block-size mixes (`--bssplit`, `--block-align`): which sizes a run's I/Os have, in
//! what shares per op type, and the alignment of their offsets; and the picker a worker
//! draws each I/O's size from.
//!
//! The syntax is fio's: `SIZE/PERCENT:SIZE/PERCENT...`, shares of I/Os; a percent left
//! empty shares what the others leave equally; a comma separates the reads' split from
//! the writes' (and a third, the trims'; they follow the writes' otherwise). With a mix,
//! offsets are counted in units of the alignment (fio's `blockalign`, default the
//! smallest size): the region is numbered in those units and an I/O of a larger size
//! covers several.
//!
//! The picker is on the hot path: one draw from the worker's own stream and one table
//! lookup (an alias table), no allocation, no division. This module knows nothing of
//! engines, stats or reports.

use super::alias::AliasTable;
use crate::base::primitives::rng::Rng;
use crate::base::units::parse_size;
use serde::{Deserialize, Serialize};

/// Most entries one split may have (fio's limit).
pub const MAX_ENTRIES: usize = 64;

/// One size of a split and the share of the op's I/Os that have it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeShare {
    pub size_bytes: u64,
    pub percent: f64,
}

/// The I/O sizes of a run: a split per op type, and the alignment of offsets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSizeMix {
    pub reads: Vec<SizeShare>,
    pub writes: Vec<SizeShare>,
    pub trims: Vec<SizeShare>,
    /// Offsets are multiples of this (the unit the region is counted in).
    pub align_bytes: u64,
}

/// Which op type's split a size is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeFor {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl BlockSizeMix {
    /// `--bssplit TEXT` (with `--block-align`, if given): checked, the empty shares
    /// filled in. The message names the entry at fault; the caller names the flag.
    pub fn parse(text: &str, align_bytes: Option<u64>) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 3 {
            return Err(format!(
                "{} comma-separated splits: give one (all I/Os), two (reads,writes) or three (reads,writes,trims)",
                parts.len()
            ));
        }
        let mut splits = Vec::with_capacity(3);
        for part in &parts {
            splits.push(parse_split(part.trim())?);
        }
        let reads = splits[0].clone();
        let writes = splits.get(1).cloned().unwrap_or_else(|| reads.clone());
        let trims = splits.get(2).cloned().unwrap_or_else(|| writes.clone());
        Self::new(reads, writes, trims, align_bytes)
    }

    /// One size for every I/O at offsets aligned to `align_bytes` (`--block-align` alone).
    pub fn single(size_bytes: u64, align_bytes: u64) -> Result<Self, String> {
        let one = vec![SizeShare { size_bytes, percent: 100.0 }];
        Self::new(one.clone(), one.clone(), one, Some(align_bytes))
    }

    fn new(
        reads: Vec<SizeShare>,
        writes: Vec<SizeShare>,
        trims: Vec<SizeShare>,
        align_bytes: Option<u64>,
    ) -> Result<Self, String> {
        let smallest = reads.iter().chain(&writes).chain(&trims).map(|s| s.size_bytes).min().unwrap_or(1);
        let align_bytes = align_bytes.unwrap_or(smallest);
        if align_bytes == 0 {
            return Err("an alignment of 0 bytes: give at least 1 (e.g. 4k)".into());
        }
        Ok(Self { reads, writes, trims, align_bytes })
    }

    fn split(&self, of: SizeFor) -> &[SizeShare] {
        match of {
            SizeFor::Read => &self.reads,
            SizeFor::Write => &self.writes,
            SizeFor::Trim => &self.trims,
        }
    }

    /// Every size any op may have, ascending, once each: the rows of the per-size figures.
    pub fn sizes(&self) -> Vec<u64> {
        let mut all: Vec<u64> =
            self.reads.iter().chain(&self.writes).chain(&self.trims).map(|s| s.size_bytes).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    pub fn largest_bytes(&self) -> u64 {
        self.sizes().last().copied().unwrap_or(self.align_bytes)
    }

    /// The mean bytes of one I/O of a run whose I/Os are `trim_percent` % trims and the rest
    /// `read_percent` % reads, each drawn from its op's split: what an amount of bytes is
    /// made into I/Os with (`--io-limit N%` with a mix).
    pub fn mean_bytes(&self, read_percent: u8, trim_percent: u8) -> f64 {
        let mean = |split: &[SizeShare]| {
            let total: f64 = split.iter().map(|s| s.percent).sum();
            if total > 0.0 { split.iter().map(|s| s.size_bytes as f64 * s.percent).sum::<f64>() / total } else { 0.0 }
        };
        let trims = f64::from(trim_percent.min(100)) / 100.0;
        let reads = (1.0 - trims) * f64::from(read_percent.min(100)) / 100.0;
        let writes = 1.0 - trims - reads;
        let weighted = [(reads, &self.reads), (writes, &self.writes), (trims, &self.trims)];
        weighted.iter().filter(|(w, _)| *w > 0.0).map(|(w, split)| w * mean(split)).sum::<f64>().max(1.0)
    }

    /// The share `of`'s split asks for `size_bytes` (0 when it has none of it).
    pub fn asked_percent(&self, of: SizeFor, size_bytes: u64) -> f64 {
        self.split(of).iter().filter(|s| s.size_bytes == size_bytes).map(|s| s.percent).sum()
    }

    /// Units of the alignment an I/O of `size_bytes` covers (rounded up).
    pub fn units_of(&self, size_bytes: u64) -> u64 {
        size_bytes.div_ceil(self.align_bytes)
    }

    /// The flags the mix came from, for a refusal of its largest I/O or alignment (a target
    /// too small): `--block-align 8m` when the alignment is larger than every size,
    /// `--bssplit ...` for several sizes, else `--block-size N` (with its `--block-align`).
    pub fn flags_at_fault(&self) -> String {
        let sizes = self.sizes();
        let largest = sizes.last().copied().unwrap_or(self.align_bytes);
        if self.align_bytes > largest {
            format!("--block-align {}", size_text(self.align_bytes))
        } else if sizes.len() > 1 {
            format!("--bssplit {}", self.fio_syntax())
        } else if self.align_bytes != largest {
            format!("--block-size {} (at --block-align {})", size_text(largest), size_text(self.align_bytes))
        } else {
            format!("--block-size {}", size_text(largest))
        }
    }

    /// The split in fio's syntax (`4k/50:64k/50`, `4k/100,64k/50:1m/50` when reads and
    /// writes differ), sizes in the largest exact binary unit.
    pub fn fio_syntax(&self) -> String {
        let one = |s: &[SizeShare]| {
            s.iter()
                .map(|e| format!("{}/{}", size_text(e.size_bytes), percent_text(e.percent)))
                .collect::<Vec<_>>()
                .join(":")
        };
        let (r, w, t) = (one(&self.reads), one(&self.writes), one(&self.trims));
        if t != w {
            format!("{r},{w},{t}")
        } else if w != r {
            format!("{r},{w}")
        } else {
            r
        }
    }
}

/// `4k/50:8k/:16k/`: sizes and percents; empty percents share the rest equally.
fn parse_split(text: &str) -> Result<Vec<SizeShare>, String> {
    if text.is_empty() {
        return Err("an empty split: give SIZE/PERCENT entries, e.g. 4k/50:64k/50".into());
    }
    let entries: Vec<&str> = text.split(':').collect();
    if entries.len() > MAX_ENTRIES {
        return Err(format!("{} entries in one split: at most {MAX_ENTRIES} are accepted", entries.len()));
    }
    let mut out = Vec::with_capacity(entries.len());
    let mut unset = 0usize;
    for entry in &entries {
        let (size, percent) = entry.split_once('/').unwrap_or((entry, ""));
        let size_bytes = parse_size(size.trim()).map_err(|e| format!("size {size:?} in {entry:?}: {e}"))?;
        if size_bytes == 0 {
            return Err(format!("size 0 in {entry:?}: every size must be at least 1 byte (e.g. 4k)"));
        }
        let percent = if percent.trim().is_empty() {
            unset += 1;
            f64::NAN
        } else {
            let p: f64 = percent
                .trim()
                .parse()
                .map_err(|_| format!("percent {percent:?} in {entry:?}: give a number from 0 to 100"))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("percent {p} in {entry:?}: give a number from 0 to 100"));
            }
            p
        };
        out.push(SizeShare { size_bytes, percent });
    }
    let given: f64 = out.iter().filter(|s| !s.percent.is_nan()).map(|s| s.percent).sum();
    if unset > 0 {
        let rest = 100.0 - given;
        if rest < -0.005 {
            return Err(format!(
                "the percents given sum to {given}: above 100, nothing is left for the entries without one"
            ));
        }
        for s in out.iter_mut().filter(|s| s.percent.is_nan()) {
            s.percent = rest.max(0.0) / unset as f64;
        }
    } else if (given - 100.0).abs() > 0.005 {
        return Err(format!("the percents of {text:?} sum to {given}: they must sum to 100"));
    }
    if out.iter().all(|s| s.percent <= 0.0) {
        return Err(format!("every percent of {text:?} is 0: give at least one size a share"));
    }
    Ok(out)
}

/// `4096` → `4k`, `1572864` → `1536k`, `1000` → `1000`.
fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

fn percent_text(p: f64) -> String {
    if p.fract() == 0.0 { format!("{p:.0}") } else { format!("{}", (p * 100.0).round() / 100.0) }
}

/// A worker's draw of each I/O's size: per op type, an alias table over the split's
/// entries, giving the index of the size among `BlockSizeMix::sizes`.
#[derive(Clone, Debug)]
pub struct SizePicker {
    rng: Rng,
    tables: [AliasTable; 3],
    /// Per op type and table column: the index of the size.
    columns: [Box<[u8]>; 3],
    /// Per size index: its bytes and the units of the alignment it covers.
    len_bytes: Box<[u32]>,
    units: Box<[u64]>,
}

impl SizePicker {
    pub fn new(mix: &BlockSizeMix, seed: u64, worker: u32) -> Self {
        let sizes = mix.sizes();
        let table = |of: SizeFor| {
            let split = mix.split(of);
            let weights: Vec<f64> = split.iter().map(|s| s.percent).collect();
            let columns: Box<[u8]> =
                split.iter().map(|s| sizes.iter().position(|&b| b == s.size_bytes).unwrap_or(0) as u8).collect();
            (AliasTable::new(&weights), columns)
        };
        let (r, w, t) = (table(SizeFor::Read), table(SizeFor::Write), table(SizeFor::Trim));
        Self {
            rng: Rng::new(seed, 0xb5_5b17 + u64::from(worker)),
            tables: [r.0, w.0, t.0],
            columns: [r.1, w.1, t.1],
            len_bytes: sizes.iter().map(|&b| b as u32).collect(),
            units: sizes.iter().map(|&b| mix.units_of(b)).collect(),
        }
    }

    /// The size of the next I/O of type `of`: (index among the mix's sizes, bytes, units).
    #[inline(always)]
    pub fn pick(&mut self, of: SizeFor) -> (u8, u32, u64) {
        let columns = &self.columns[of as usize];
        let index = if columns.len() == 1 {
            columns[0]
        } else {
            columns[self.tables[of as usize].sample(&mut self.rng) as usize]
        };
        (index, self.len_bytes[index as usize], self.units[index as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(text: &str) -> BlockSizeMix {
        BlockSizeMix::parse(text, None).unwrap()
    }

    #[test]
    fn the_mean_io_weighs_each_ops_split_by_its_share_of_the_ios() {
        // 4k/50:8k/:16k/ is 0.5 × 4 + 0.25 × 8 + 0.25 × 16 = 8 KiB for every op.
        assert_eq!(mix("4k/50:8k/:16k/").mean_bytes(70, 0), 8192.0);
        // Reads 4k, writes 64k: 30 % reads of the 80 % that are not trims (trims 4k).
        let m = mix("4k,64k,4k");
        let want = 0.8 * 0.3 * 4096.0 + 0.8 * 0.7 * 65536.0 + 0.2 * 4096.0;
        assert!((m.mean_bytes(30, 20) - want).abs() < 1e-6, "{}", m.mean_bytes(30, 20));
    }

    #[test]
    fn parses_fio_syntax_with_shared_remainders_and_per_op_splits() {
        let m = mix("4k/50:8k/:16k/");
        assert_eq!(
            m.reads.iter().map(|s| (s.size_bytes, s.percent)).collect::<Vec<_>>(),
            vec![(4096, 50.0), (8192, 25.0), (16384, 25.0)]
        );
        assert_eq!((m.writes.clone(), m.trims.clone()), (m.reads.clone(), m.reads.clone()));
        assert_eq!(m.align_bytes, 4096);
        let m = mix("4k/100,64k/50:1m/50");
        assert_eq!(m.reads, vec![SizeShare { size_bytes: 4096, percent: 100.0 }]);
        assert_eq!(m.writes.len(), 2);
        assert_eq!(m.trims, m.writes);
        assert_eq!(m.sizes(), vec![4096, 65536, 1 << 20]);
        assert_eq!(m.fio_syntax(), "4k/100,64k/50:1m/50");
        assert_eq!(mix("4k/50:64k/50").fio_syntax(), "4k/50:64k/50");
        assert_eq!(BlockSizeMix::parse("8k/100", Some(512)).unwrap().units_of(8192), 16);
    }

    #[test]
    fn refuses_what_fio_would_not_run() {
        for bad in [
            "4k/50:64k/40",
            "4k/60:8k/60:16k/",
            "0/100",
            "4q/100",
            "4k/abc",
            "",
            "4k/100,,8k/100",
            "4k/100,8k/100,4k/100,4k/100",
        ] {
            assert!(BlockSizeMix::parse(bad, None).is_err(), "{bad:?} must be refused");
        }
        let many = (1..=65).map(|i| format!("{i}k/")).collect::<Vec<_>>().join(":");
        assert!(BlockSizeMix::parse(&many, None).unwrap_err().contains("at most 64"));
    }

    #[test]
    fn the_picker_draws_each_size_in_its_share_and_per_op() {
        let m = mix("4k/20:64k/80,1m/100");
        let mut p = SizePicker::new(&m, 7, 0);
        let mut counts = [0u64; 3];
        for _ in 0..100_000 {
            counts[p.pick(SizeFor::Read).0 as usize] += 1;
        }
        assert!((19_000..21_000).contains(&counts[0]), "{counts:?}");
        assert!((79_000..81_000).contains(&counts[1]), "{counts:?}");
        assert_eq!(counts[2], 0);
        assert_eq!(p.pick(SizeFor::Write), (2, 1 << 20, 256));
        // Reproducible from the seed, different per worker.
        let draws = |w| {
            let mut p = SizePicker::new(&m, 7, w);
            (0..64).map(|_| p.pick(SizeFor::Read).0).collect::<Vec<_>>()
        };
        assert_eq!(draws(0), draws(0));
        assert_ne!(draws(0), draws(1));
    }
}
