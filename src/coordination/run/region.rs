//! Which blocks of which targets each worker addresses: the targets laid end to end
//! into one region, then shared, partitioned or given per worker (`--file-distribution`).

use crate::base::diagnostics::error::UsageError;
use crate::io::access::share_boundary;
use crate::workload::spec::{FileDistribution, Spec};
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;

/// How targets are shared: as asked, except that a verifying run with several
/// workers on shared targets gives each worker its own slice (one owner per block).
pub(super) fn effective_file_distribution(spec: &Spec) -> FileDistribution {
    match spec.access.file_distribution {
        FileDistribution::Shared if spec.data.verify.is_some() && spec.shape.threads > 1 => {
            FileDistribution::Partitioned
        }
        other => other,
    }
}

/// The paths the run uses: as given, or for `per-worker` NAME.0 .. NAME.(threads-1)
/// for each NAME, worker by worker.
pub(super) fn target_paths(spec: &Spec, given: &[PathBuf]) -> Result<Vec<PathBuf>, UsageError> {
    if spec.access.file_distribution != FileDistribution::PerWorker {
        return Ok(given.to_vec());
    }
    for p in given {
        if std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()) {
            return Err(UsageError::new(format!(
                "--file-distribution per-worker creates files next to TARGET, but {} is a block device: use shared or partitioned",
                p.display()
            )));
        }
    }
    let mut paths = Vec::with_capacity(given.len() * spec.shape.threads as usize);
    for w in 0..spec.shape.threads {
        for p in given {
            let mut name = p.as_os_str().to_os_string();
            name.push(format!(".{w}"));
            paths.push(PathBuf::from(name));
        }
    }
    Ok(paths)
}

/// Which blocks each worker addresses. Targets are laid end to end into one
/// region of `total_blocks` (for per-worker, each worker's own targets).
pub(super) struct RegionLayout {
    pub(super) target_blocks: Vec<u64>,
    pub(super) total_blocks: u64,
    pub(super) distribution: FileDistribution,
    pub(super) threads: u32,
    /// Targets per worker (per-worker: the targets given; otherwise all of them).
    pub(super) targets_per_worker: usize,
}

/// One worker's part of the layout.
pub(super) struct WorkerRegion {
    /// (target index, blocks) of the worker's files, in order.
    pub(super) files: Vec<(u32, u64)>,
    /// Where the worker's region starts among its files' blocks, and its length.
    pub(super) first_block: u64,
    pub(super) blocks: u64,
    pub(super) share_index: u32,
    pub(super) share_count: u32,
}

impl RegionLayout {
    pub(super) fn new(spec: &Spec, distribution: FileDistribution, target_blocks: &[u64]) -> Result<Self, UsageError> {
        let total = target_blocks.iter().try_fold(0u64, |sum, &b| sum.checked_add(b)).ok_or_else(|| {
            UsageError::new("TARGET: the targets together hold more than 2^64 blocks: give fewer or smaller targets")
        })?;
        let targets_per_worker = match distribution {
            FileDistribution::PerWorker => target_blocks.len() / spec.shape.threads as usize,
            _ => target_blocks.len(),
        };
        if distribution == FileDistribution::Partitioned && total < u64::from(spec.shape.threads) {
            return Err(UsageError::new(format!(
                "--file-distribution partitioned: {total} blocks cannot be split between --threads {}: use fewer threads, a smaller --block-size or a larger --file-size",
                spec.shape.threads
            )));
        }
        let layout = Self {
            target_blocks: target_blocks.to_vec(),
            total_blocks: total,
            distribution,
            threads: spec.shape.threads,
            targets_per_worker,
        };
        if let Some(r) = &spec.replay {
            let region_bytes = layout.smallest_worker_region().saturating_mul(spec.shape.block_size_bytes);
            if region_bytes < r.largest_bytes {
                return Err(UsageError::new(format!(
                    "the target has {region_bytes} bytes, less than the trace's largest I/O ({} bytes): give a larger --file-size or target",
                    r.largest_bytes
                )));
            }
        }
        if let Some(mix) = &spec.shape.block_sizes {
            // Every worker's region holds the largest I/O (with a mix, blocks are units of
            // the alignment).
            let needed = mix.units_of(mix.largest_bytes());
            if layout.smallest_worker_region() < needed {
                return Err(UsageError::new(format!(
                    "--bssplit {}: a worker's region ({} blocks of {} bytes) cannot hold its largest I/O: use fewer --threads, --file-distribution shared or a larger --file-size",
                    mix.fio_syntax(),
                    layout.smallest_worker_region(),
                    mix.align_bytes
                )));
            }
        }
        Ok(layout)
    }

    pub(super) fn worker(&self, w: u32) -> WorkerRegion {
        let all = || (0..self.target_blocks.len()).map(|t| (t as u32, self.target_blocks[t])).collect::<Vec<_>>();
        match self.distribution {
            FileDistribution::Shared => WorkerRegion {
                files: all(),
                first_block: 0,
                blocks: self.total_blocks,
                share_index: w,
                share_count: self.threads,
            },
            FileDistribution::Partitioned => {
                let start = share_boundary(self.total_blocks, w, self.threads);
                let end = share_boundary(self.total_blocks, w + 1, self.threads);
                WorkerRegion { files: all(), first_block: start, blocks: end - start, share_index: 0, share_count: 1 }
            }
            FileDistribution::PerWorker => {
                let first = w as usize * self.targets_per_worker;
                let files: Vec<(u32, u64)> =
                    (first..first + self.targets_per_worker).map(|t| (t as u32, self.target_blocks[t])).collect();
                let blocks = files.iter().map(|f| f.1).sum();
                WorkerRegion { files, first_block: 0, blocks, share_index: 0, share_count: 1 }
            }
        }
    }

    /// The fewest blocks any worker's region has.
    pub(super) fn smallest_worker_region(&self) -> u64 {
        (0..self.threads).map(|w| self.worker(w).blocks).min().unwrap_or(0)
    }

    /// How blocks are kept from two writers, for the result.
    pub(super) fn ownership(&self) -> &'static str {
        match (self.distribution, self.threads) {
            (_, 1) => "one worker",
            (FileDistribution::Shared, _) => "shared",
            (FileDistribution::Partitioned, _) => "partitioned: each worker owns a disjoint slice",
            (FileDistribution::PerWorker, _) => "per-worker files",
        }
    }

    /// Whether all workers address the same region (their coverage adds block by block).
    pub(super) fn shared(&self) -> bool {
        self.distribution == FileDistribution::Shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_of(args: &[&str]) -> Spec {
        crate::testing::spec_of(args.iter().copied()).expect("spec")
    }

    fn layout(args: &[&str], target_blocks: &[u64]) -> RegionLayout {
        let spec = spec_of(args);
        RegionLayout::new(&spec, effective_file_distribution(&spec), target_blocks).expect("layout")
    }

    #[test]
    fn partitioned_regions_tile_all_blocks_without_overlap() {
        let l = layout(&["/tmp/a", "/tmp/b", "--threads", "3", "--file-distribution", "partitioned"], &[10, 7]);
        let mut next = 0;
        for w in 0..3 {
            let r = l.worker(w);
            assert_eq!(r.first_block, next, "worker {w} starts where the previous ended");
            assert_eq!(r.files, vec![(0, 10), (1, 7)], "every worker sees all targets");
            next += r.blocks;
        }
        assert_eq!(next, 17);
        assert_eq!(l.smallest_worker_region(), 5);
    }

    #[test]
    fn shared_regions_are_whole_and_split_by_share_index() {
        let l = layout(&["/tmp/a", "--threads", "2"], &[8]);
        let (a, b) = (l.worker(0), l.worker(1));
        assert_eq!((a.blocks, b.blocks), (8, 8));
        assert_eq!((a.share_index, b.share_index, a.share_count), (0, 1, 2));
        assert!(l.shared());
    }

    #[test]
    fn verify_with_several_workers_partitions_shared_targets() {
        let l = layout(&["/tmp/a", "--threads", "2", "--verify", "--write-percent", "50"], &[8]);
        assert!(!l.shared());
        assert_eq!((l.worker(0).blocks, l.worker(1).first_block), (4, 4));
    }

    #[test]
    fn per_worker_files_are_named_per_worker_and_owned_by_one() {
        let spec = spec_of(&["/tmp/a", "--threads", "2", "--file-distribution", "per-worker"]);
        let paths = target_paths(&spec, &[PathBuf::from("/tmp/a")]).unwrap();
        assert_eq!(paths, vec![PathBuf::from("/tmp/a.0"), PathBuf::from("/tmp/a.1")]);
        let l = RegionLayout::new(&spec, spec.access.file_distribution, &[4, 6]).unwrap();
        assert_eq!(l.worker(1).files, vec![(1, 6)]);
        assert_eq!(l.ownership(), "per-worker files");
    }

    #[test]
    fn too_few_blocks_to_partition_is_a_usage_error_naming_the_flag() {
        let spec = spec_of(&["/tmp/a", "--threads", "4", "--file-distribution", "partitioned"]);
        let e = RegionLayout::new(&spec, spec.access.file_distribution, &[3]).err().expect("refused");
        assert!(e.to_string().contains("--file-distribution partitioned"), "{e}");
    }
}
