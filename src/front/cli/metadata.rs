//! The flags of a metadata run (help heading "Metadata and small files"): a tree of files
//! as the target (`--files`, its shape and file sizes), what runs on it (`--meta-mix` at set
//! shares in one window, or `--meta-phases` in order) and whether it stays (`--keep-tree`).
//! Converts them into `io::metadata::workload::MetaSpec`; touches no file system.

use crate::base::diagnostics::error::UsageError;
use crate::base::units::values::Count;
use crate::io::metadata::workload::{
    FileCount, MAX_DEPTH, MAX_DIRS_PER_DIR, MAX_LEAVES, MetaFlow, MetaMix, MetaOp, MetaPhases, MetaSpec, MetaWorkload,
    PreallocPercent, SizeDist,
};
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, clap::Args, Deserialize)]
#[command(next_help_heading = "Metadata and small files")]
#[serde(default)]
pub struct MetadataArgs {
    /// Run on a tree of N files under the TARGET directory.
    ///
    /// Run on a tree of N files under the TARGET directory instead of blocks of files: iopulse
    /// creates it (in parallel, with the workers), marks it as its own, runs metadata
    /// operations on it (--engine sync, or io_uring at --queue-depth) and removes what it
    /// created (docs/metadata.md). E.g. `iopulse
    /// /mnt/t --files 1M --dirs-per-dir 10 --depth 3 --meta-phases create,stat,unlink`
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub files: Option<FileCount>,

    /// Sub-directories per directory of the tree [default: 10]
    ///
    /// Sub-directories of each directory of the tree (with --files). [default: 10]
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub dirs_per_dir: Option<Count<u32>>,

    /// Levels of directories above the files [default: 1]
    ///
    /// Levels of directories above the files (with --files); 0 puts every file in TARGET.
    /// [default: 1]
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub depth: Option<Count<u32>>,

    /// Sizes of the tree's files: one, or SIZE:WEIGHT pairs.
    ///
    /// The sizes of the tree's files (with --files): one size, SIZE:WEIGHT pairs drawn per
    /// file, e.g. `0:20,4k:50,64k:30`, or `gamma:MEAN:SHAPE`, a gamma distribution as
    /// filebench's (e.g. `gamma:16k:1.5`). [default: 0, empty files]
    #[arg(long, value_name = "SIZES")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub file_size_dist: Option<SizeDist>,

    /// Metadata operations at set shares, in one window.
    ///
    /// Metadata operations at set shares, interleaved in one window (--duration or --ops):
    /// OP=SHARE pairs of create, read (open-read-close), write (open-write-close), append,
    /// stat, readdir, rename, unlink, mkdir, rmdir, fsync, fsync-dir. E.g. `--files 10000
    /// --meta-mix create=30,stat=30,read=30,unlink=5,readdir=5`. With --timeseries FILE, a CSV
    /// row per --interval per operation kind (of --meta-phases too). E.g. `--files 10000
    /// --meta-mix create=50,stat=50 --duration 10s --interval 500ms --timeseries ts.csv`.
    /// With --plot DIR, SVG charts: latency.svg (each kind's latency percentiles) and, with a
    /// time series, ops.svg and p99.svg over time. E.g. `--files 10000 --meta-mix
    /// create=30,stat=60,unlink=10 --duration 10s --interval 500ms --plot plots/`
    #[arg(long, value_name = "OP=SHARE,...")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub meta_mix: Option<MetaMix>,

    /// Metadata operations over every file, phase by phase.
    ///
    /// Operations over every file of the tree, one phase after another, each timed on its
    /// own (as mdtest). A first `create` phase creates the files; else the set-up does.
    /// [default: create,stat,read,unlink]
    #[arg(long, value_name = "OP,...")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub meta_phases: Option<MetaPhases>,

    /// Steps on held files, in order, over and over (filebench's flowops).
    ///
    /// Steps each worker runs in order, over and over, in one window (--duration or --ops), as
    /// a filebench personality's flowops: delete, create (empty, held), open (held), close,
    /// read-whole, write-whole, append-rand (0 to --block-size − 2 bytes), fsync (the held
    /// file), stat, append-log (to one log file every worker holds open). Each step is timed
    /// and reported on its own (docs/metadata.md). E.g. `--files 1000 --depth 0
    /// --file-size-dist gamma:16k:1.5 --prealloc 80 --block-size 16k --meta-flow
    /// delete,create,append-rand,fsync,close,open,read-whole,close`
    #[arg(long, value_name = "STEP,...")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub meta_flow: Option<MetaFlow>,

    /// Share of the files the set-up makes, in % [default: 100]
    ///
    /// The share of the tree's files the set-up makes, in percent, spread evenly (with
    /// --meta-flow): the other names are there for the flow's create. [default: 100]
    #[arg(long, value_name = "PERCENT")]
    #[serde(deserialize_with = "crate::base::units::values::text")]
    pub prealloc: Option<PreallocPercent>,

    /// Keep the tree after the run.
    ///
    /// Keep the tree after the run (a later run of the same shape uses it as it is); by
    /// default iopulse removes every file and directory it created, and nothing else.
    #[arg(long)]
    pub keep_tree: bool,
}

impl MetadataArgs {
    /// The metadata run asked for: none without --files (and then none of its flags).
    pub fn spec(&self) -> Result<Option<MetaSpec>, UsageError> {
        let Some(FileCount(files)) = self.files else {
            let given = [
                (self.dirs_per_dir.is_some(), "--dirs-per-dir"),
                (self.depth.is_some(), "--depth"),
                (self.file_size_dist.is_some(), "--file-size-dist"),
                (self.meta_mix.is_some(), "--meta-mix"),
                (self.meta_phases.is_some(), "--meta-phases"),
                (self.meta_flow.is_some(), "--meta-flow"),
                (self.prealloc.is_some(), "--prealloc"),
                (self.keep_tree, "--keep-tree"),
            ];
            if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
                return Err(UsageError::new(format!(
                    "{flag} shapes a tree of files: give --files N too (e.g. `--files 10000`)"
                )));
            }
            return Ok(None);
        };
        let dirs_per_dir = self.dirs_per_dir.map_or(10, |c| c.0);
        let depth = self.depth.map_or(1, |c| c.0);
        if !(1..=MAX_DIRS_PER_DIR).contains(&dirs_per_dir) {
            return Err(UsageError::new(format!("--dirs-per-dir {dirs_per_dir}: give 1 to {MAX_DIRS_PER_DIR}")));
        }
        if depth > MAX_DEPTH {
            return Err(UsageError::new(format!("--depth {depth}: give 0 to {MAX_DEPTH}")));
        }
        let leaves = u64::from(dirs_per_dir).checked_pow(depth).filter(|l| *l <= MAX_LEAVES);
        if leaves.is_none() {
            return Err(UsageError::new(format!(
                "--dirs-per-dir {dirs_per_dir} --depth {depth}: more than {MAX_LEAVES} leaf directories; give fewer levels or directories"
            )));
        }
        let given: Vec<&str> = [
            (self.meta_mix.is_some(), "--meta-mix"),
            (self.meta_phases.is_some(), "--meta-phases"),
            (self.meta_flow.is_some(), "--meta-flow"),
        ]
        .iter()
        .filter(|(g, _)| *g)
        .map(|(_, f)| *f)
        .collect();
        if given.len() > 1 {
            return Err(UsageError::new(format!(
                "{} both given: a run is a mix in one window, phases in order or a flow; give one of them",
                given.join(" and ")
            )));
        }
        let workload = match (&self.meta_mix, &self.meta_phases, &self.meta_flow) {
            (Some(mix), _, _) => MetaWorkload::Mix(mix.0.clone()),
            (_, Some(phases), _) => MetaWorkload::Phases(phases.0.clone()),
            (_, _, Some(flow)) => MetaWorkload::Flow(flow.0.clone()),
            _ => MetaWorkload::Phases(vec![MetaOp::Create, MetaOp::Stat, MetaOp::Read, MetaOp::Unlink]),
        };
        if self.prealloc.is_some() && self.meta_flow.is_none() {
            return Err(UsageError::new(
                "--prealloc leaves names for a flow's create: give --meta-flow too (a mix or phases set up every file)",
            ));
        }
        Ok(Some(MetaSpec {
            files,
            dirs_per_dir,
            depth,
            sizes: self.file_size_dist.clone().unwrap_or_else(|| "0".parse().expect("a size")),
            workload,
            keep_tree: self.keep_tree,
            prealloc_percent: self.prealloc.map_or(100, |p| p.0),
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::io::metadata::workload::{MetaOp, MetaWorkload};

    fn spec_of(args: &[&str]) -> Result<crate::workload::spec::Spec, String> {
        crate::testing::spec_of(args.iter().copied())
    }

    #[test]
    fn files_make_a_metadata_run_and_its_flags_need_them() {
        let s = spec_of(&["/d", "--files", "2k", "--depth", "2", "--meta-mix", "create=1,stat=3"]).unwrap();
        let m = s.metadata.unwrap();
        assert_eq!((m.files, m.dirs_per_dir, m.depth, m.leaves(), m.directories()), (2000, 10, 2, 100, 110));
        assert!(matches!(m.workload, MetaWorkload::Mix(ref s) if s.len() == 2));
        let d = spec_of(&["/d", "--files", "10"]).unwrap().metadata.unwrap();
        assert_eq!(d.workload, MetaWorkload::Phases(vec![MetaOp::Create, MetaOp::Stat, MetaOp::Read, MetaOp::Unlink]));
        assert!(spec_of(&["/d"]).unwrap().metadata.is_none());
        let e = spec_of(&["/d", "--keep-tree"]).unwrap_err();
        assert!(e.contains("--keep-tree") && e.contains("--files"), "{e}");
        let e = spec_of(&["/d", "--files", "10", "--dirs-per-dir", "1000", "--depth", "4"]).unwrap_err();
        assert!(e.contains("leaf directories"), "{e}");
        let e = spec_of(&["/d", "--files", "10", "--meta-mix", "stat=1", "--meta-phases", "stat"]).unwrap_err();
        assert!(e.contains("--meta-phases"), "{e}");
    }
}
