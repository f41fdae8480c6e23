//! A metadata run's spec (`--files`): the shape of the tree of files, the sizes of its
//! files (`sizes.rs`), and the operations run on it (a mix at set shares in one window,
//! phases in order, or a flow of steps on held files: `flow.rs`). Plain data and the
//! parsing of its flag values; it touches no file system. The spec's `metadata` section is
//! this; it lives in the I/O crate with the workers that read it (`io/metadata/`), while
//! `coordination/metadata/` plans, creates and removes the tree and runs the window.

mod flow;
mod sizes;

pub use flow::{FLOW_IO_BYTES, FlowStep, MetaFlow, PreallocPercent};
pub use sizes::SizeDist;

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Most files a tree may have.
pub const MAX_FILES: u64 = 1 << 40;
/// Most sub-directories per directory, and levels of them.
pub const MAX_DIRS_PER_DIR: u32 = 100_000;
pub const MAX_DEPTH: u32 = 16;
/// Most leaf directories a tree may have (`dirs_per_dir ^ depth`).
pub const MAX_LEAVES: u64 = 10_000_000;
/// Largest file of a tree.
pub const MAX_FILE_SIZE_BYTES: u64 = 1 << 30;

/// One metadata operation kind. Each has its own figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetaOp {
    /// open with O_CREAT|O_EXCL, write the file's bytes, close.
    Create,
    /// open, read the whole file, close.
    Read,
    /// open, write the whole file over (its size unchanged), close.
    Write,
    /// open with O_APPEND, write one block, close.
    Append,
    /// stat (statx) of a file.
    Stat,
    /// open a directory and read all its entries.
    Readdir,
    /// rename a file to a new name (possibly in another directory).
    Rename,
    /// unlink a file.
    Unlink,
    /// create a directory.
    Mkdir,
    /// remove a directory made by `mkdir`.
    Rmdir,
    /// open a file, fsync it, close.
    Fsync,
    /// open a file's directory, fsync it, close.
    FsyncDir,
    /// A flow's `open`: open an existing file, held for the steps after it.
    Open,
    /// A flow's `close`: close the held file.
    Close,
}

impl MetaOp {
    pub const ALL: [MetaOp; 14] = [
        MetaOp::Create,
        MetaOp::Read,
        MetaOp::Write,
        MetaOp::Append,
        MetaOp::Stat,
        MetaOp::Readdir,
        MetaOp::Rename,
        MetaOp::Unlink,
        MetaOp::Mkdir,
        MetaOp::Rmdir,
        MetaOp::Fsync,
        MetaOp::FsyncDir,
        MetaOp::Open,
        MetaOp::Close,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MetaOp::Create => "create",
            MetaOp::Read => "read",
            MetaOp::Write => "write",
            MetaOp::Append => "append",
            MetaOp::Stat => "stat",
            MetaOp::Readdir => "readdir",
            MetaOp::Rename => "rename",
            MetaOp::Unlink => "unlink",
            MetaOp::Mkdir => "mkdir",
            MetaOp::Rmdir => "rmdir",
            MetaOp::Fsync => "fsync",
            MetaOp::FsyncDir => "fsync-dir",
            MetaOp::Open => "open",
            MetaOp::Close => "close",
        }
    }

    /// Index into per-kind arrays (`ALL`'s order).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the operation acts on one file of the tree (counted in files/s).
    pub fn on_a_file(self) -> bool {
        !matches!(self, MetaOp::Readdir | MetaOp::Mkdir | MetaOp::Rmdir | MetaOp::FsyncDir)
    }
}

impl FromStr for MetaOp {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        MetaOp::ALL.iter().copied().find(|op| op.name() == t).ok_or_else(|| {
            let names: Vec<&str> = MetaOp::ALL.iter().map(|o| o.name()).collect();
            format!("unknown operation '{t}': give one of {}", names.join(", "))
        })
    }
}

/// One operation's share of a mix, as a weight (the shares are the weights over their sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaShare {
    pub op: MetaOp,
    pub weight: u32,
}

/// `--meta-mix create=30,stat=30,read=30,unlink=5,readdir=5`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaMix(pub Vec<MetaShare>);

impl FromStr for MetaMix {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut shares: Vec<MetaShare> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, weight) = item
                .split_once(['=', ':'])
                .ok_or_else(|| format!("'{item}' has no share: write OP=SHARE, e.g. create=30,stat=70"))?;
            let op: MetaOp = name.parse()?;
            if matches!(op, MetaOp::Open | MetaOp::Close) {
                return Err(format!(
                    "{} holds a file for the steps after it: it is a step of --meta-flow, not of a mix",
                    op.name()
                ));
            }
            let weight: u32 = weight
                .trim()
                .trim_end_matches('%')
                .parse()
                .map_err(|_| format!("'{item}': the share must be a whole number, e.g. {}=30", op.name()))?;
            if shares.iter().any(|s| s.op == op) {
                return Err(format!("{} is given twice", op.name()));
            }
            if weight > 0 {
                shares.push(MetaShare { op, weight });
            }
        }
        if shares.is_empty() {
            return Err("no operation with a share above 0: e.g. create=30,stat=30,read=30,unlink=5,readdir=5".into());
        }
        Ok(MetaMix(shares))
    }
}

/// `--meta-phases create,stat,read,unlink`: operations over the whole tree, one after another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaPhases(pub Vec<MetaOp>);

/// Operations a phase can run over every file of the tree.
pub const PHASE_OPS: [MetaOp; 8] = [
    MetaOp::Create,
    MetaOp::Read,
    MetaOp::Write,
    MetaOp::Append,
    MetaOp::Stat,
    MetaOp::Unlink,
    MetaOp::Fsync,
    MetaOp::Readdir,
];

impl FromStr for MetaPhases {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let ops = text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse::<MetaOp>)
            .collect::<Result<Vec<_>, _>>()?;
        if ops.is_empty() {
            return Err("no phase: e.g. create,stat,read,unlink".into());
        }
        if let Some(op) = ops.iter().find(|op| !PHASE_OPS.contains(op)) {
            let names: Vec<&str> = PHASE_OPS.iter().map(|o| o.name()).collect();
            return Err(format!("{} cannot be a phase over every file: phases are {}", op.name(), names.join(", ")));
        }
        check_order(&ops)?;
        Ok(MetaPhases(ops))
    }
}

/// Phases in an order that can run: every phase but `create` and `readdir` needs the files
/// (the set-up makes them unless the first phase is `create`), `create` needs them gone
/// (O_EXCL), and `unlink` removes them. An order whose phase would fail on every file
/// (`unlink,unlink`, `unlink,stat`, `stat,create`) is refused up front, naming the phase.
fn check_order(ops: &[MetaOp]) -> Result<(), String> {
    let mut files_exist = ops.first() != Some(&MetaOp::Create);
    let mut gone_at: Option<usize> = None;
    for (i, &op) in ops.iter().enumerate() {
        let n = i + 1;
        match op {
            MetaOp::Create if files_exist => {
                let made_by = if ops[..i].contains(&MetaOp::Create) { "an earlier create" } else { "the set-up" };
                return Err(format!(
                    "phase {n} (create) creates files that are there already (made by {made_by}): every create would fail; unlink them first (e.g. ...,unlink,create) or start with create"
                ));
            }
            MetaOp::Create => files_exist = true,
            MetaOp::Readdir => {}
            _ if !files_exist => {
                let why = match gone_at {
                    Some(u) => format!("phase {u} (unlink) removed every file"),
                    None => "no file exists yet".to_string(),
                };
                return Err(format!(
                    "phase {n} ({}) finds no file: {why}; put it before the unlink, or create the files again first (e.g. unlink,create,{})",
                    op.name(),
                    op.name()
                ));
            }
            MetaOp::Unlink => {
                files_exist = false;
                gone_at = Some(n);
            }
            _ => {}
        }
    }
    Ok(())
}

/// `--files 1M`: a count with an optional decimal unit k, m, g (1k = 1000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCount(pub u64);

impl FromStr for FileCount {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (digits, scale) = match t.char_indices().last() {
            Some((i, 'k' | 'K')) => (&t[..i], 1_000),
            Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
            Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
            _ => (t, 1),
        };
        let n: u64 =
            digits.parse().map_err(|_| format!("'{text}' is not a count: give a whole number, e.g. 10000 or 1M"))?;
        n.checked_mul(scale)
            .filter(|n| (1..=MAX_FILES).contains(n))
            .map(FileCount)
            .ok_or_else(|| format!("'{text}': give 1 to {MAX_FILES} files"))
    }
}

/// What runs on the tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetaWorkload {
    /// Operations at set shares, interleaved, in one window.
    Mix(Vec<MetaShare>),
    /// Each operation over every file, one phase after another.
    Phases(Vec<MetaOp>),
    /// Steps in order on held files, over and over, in one window (filebench's flowops).
    Flow(Vec<FlowStep>),
}

/// A metadata run: a tree of `files` files under `dirs_per_dir ^ depth` leaf directories.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaSpec {
    pub files: u64,
    pub dirs_per_dir: u32,
    pub depth: u32,
    pub sizes: SizeDist,
    pub workload: MetaWorkload,
    /// `--keep-tree`: the tree stays after the run (a later run with the same shape uses it).
    pub keep_tree: bool,
    /// `--prealloc`: the share of the files the set-up makes, in percent (100 but for a flow).
    #[serde(default = "all_files")]
    pub prealloc_percent: u32,
}

fn all_files() -> u32 {
    100
}

impl MetaSpec {
    /// `--meta-phases` (the default without `--meta-mix`): phases over the whole tree, each
    /// with a window of its own, which no other job can share.
    pub fn runs_phases(&self) -> bool {
        matches!(self.workload, MetaWorkload::Phases(_))
    }

    /// Leaf directories (`dirs_per_dir ^ depth`; 1 with depth 0: the root).
    pub fn leaves(&self) -> u64 {
        u64::from(self.dirs_per_dir).saturating_pow(self.depth)
    }

    /// Every directory of the tree below its root.
    pub fn directories(&self) -> u64 {
        (1..=self.depth).map(|d| u64::from(self.dirs_per_dir).saturating_pow(d)).fold(0u64, u64::saturating_add)
    }

    /// The operations the run issues (for checks: a kind never issued costs nothing).
    pub fn ops(&self) -> Vec<MetaOp> {
        match &self.workload {
            MetaWorkload::Mix(shares) => shares.iter().map(|s| s.op).collect(),
            MetaWorkload::Phases(ops) => ops.clone(),
            MetaWorkload::Flow(steps) => {
                let mut kinds: Vec<MetaOp> = steps.iter().map(|s| s.kind()).collect();
                kinds.sort_unstable();
                kinds.dedup();
                kinds
            }
        }
    }

    /// Whether file `index` is made at the set-up: `prealloc_percent` of the files, spread
    /// evenly over the indices (so over each worker's files too).
    pub fn made_at_setup(&self, index: u64) -> bool {
        let p = u64::from(self.prealloc_percent.min(100));
        (index + 1) * p / 100 > index * p / 100
    }

    /// A flow that appends to the run's log file: its index, the first past the tree's files.
    pub fn log_file(&self) -> Option<u64> {
        match &self.workload {
            MetaWorkload::Flow(steps) if steps.contains(&FlowStep::AppendLog) => Some(self.files),
            _ => None,
        }
    }

    /// Whether the set-up creates the files (else a first `create` phase does).
    pub fn setup_creates_files(&self) -> bool {
        !matches!(&self.workload, MetaWorkload::Phases(ops) if ops.first() == Some(&MetaOp::Create))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_refusals_name_the_fix() {
        assert_eq!("1M".parse::<FileCount>().unwrap().0, 1_000_000);
        assert_eq!("250k".parse::<FileCount>().unwrap().0, 250_000);
        assert!("0".parse::<FileCount>().unwrap_err().contains("give 1 to"));
        assert!("x".parse::<FileCount>().unwrap_err().contains("not a count"));
        let mix: MetaMix = "create=30,stat=30,read=30,unlink=5,readdir=5".parse().unwrap();
        assert_eq!(mix.0.len(), 5);
        assert_eq!(mix.0[4], MetaShare { op: MetaOp::Readdir, weight: 5 });
        assert!("create=1,create=2".parse::<MetaMix>().unwrap_err().contains("twice"));
        assert!("open=3".parse::<MetaMix>().unwrap_err().contains("a step of --meta-flow"));
        assert!("opne=3".parse::<MetaMix>().unwrap_err().contains("unknown operation 'opne'"));
        assert!("stat".parse::<MetaMix>().unwrap_err().contains("OP=SHARE"));
        let phases: MetaPhases = "create,stat,read,unlink".parse().unwrap();
        assert_eq!(phases.0, vec![MetaOp::Create, MetaOp::Stat, MetaOp::Read, MetaOp::Unlink]);
        assert!("rename".parse::<MetaPhases>().unwrap_err().contains("cannot be a phase"));
        for (bad, says) in [
            ("unlink,unlink", "phase 2 (unlink) finds no file: phase 1 (unlink) removed every file"),
            ("unlink,stat", "phase 2 (stat) finds no file"),
            ("create,unlink,read", "phase 3 (read) finds no file"),
            ("stat,create", "phase 2 (create) creates files that are there already"),
            ("create,create", "phase 2 (create) creates files that are there already"),
        ] {
            let e = bad.parse::<MetaPhases>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        for good in ["create,stat,read,unlink", "unlink,create,stat", "stat,unlink,readdir,create,unlink", "readdir"] {
            good.parse::<MetaPhases>().unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        let sizes: SizeDist = "0:20,4k:50,64k:30".parse().unwrap();
        assert_eq!(sizes.mean_bytes(), (4096 * 50 + 65536 * 30) / 100);
    }

    #[test]
    fn a_gamma_distribution_has_its_mean_and_spread_and_a_prealloc_share_is_exact() {
        let sizes: SizeDist = "gamma:16k:1.5".parse().unwrap();
        assert_eq!(sizes.mean_bytes(), 16384);
        let n = 100_000u64;
        let draws: Vec<f64> = (0..n).map(|i| sizes.size_of(i, 0) as f64).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean / 16384.0 - 1.0).abs() < 0.01, "mean {mean}");
        // A gamma of shape k has a coefficient of variation of 1/sqrt(k).
        let cv = var.sqrt() / mean;
        assert!((cv - 1.0 / 1.5f64.sqrt()).abs() < 0.02, "cv {cv}");
        assert_eq!(sizes.size_of(9, 3), sizes.size_of(9, 3));
        assert!("gamma:16k:0".parse::<SizeDist>().unwrap_err().contains("shape"));
        assert!("gamma:0".parse::<SizeDist>().unwrap_err().contains("mean"));
        let json = serde_json::to_string(&sizes).unwrap();
        assert_eq!(serde_json::from_str::<SizeDist>(&json).unwrap(), sizes);
        let weights: SizeDist = "4k:1,8k:1".parse().unwrap();
        let json = serde_json::to_string(&weights).unwrap();
        assert!(json.starts_with('['), "the weights keep their JSON: {json}");
        assert_eq!(serde_json::from_str::<SizeDist>(&json).unwrap(), weights);

        let spec = |p| MetaSpec {
            files: 1000,
            dirs_per_dir: 1,
            depth: 0,
            sizes: weights.clone(),
            workload: MetaWorkload::Flow(vec![FlowStep::Stat]),
            keep_tree: false,
            prealloc_percent: p,
        };
        for p in [0u32, 1, 33, 80, 100] {
            let m = spec(p);
            assert_eq!((0..1000).filter(|&i| m.made_at_setup(i)).count() as u32, p * 10, "{p}%");
        }
        // Spread evenly: each of 16 workers' files is 80 % made, give or take one.
        let m = spec(80);
        for w in 0..16u64 {
            let owned: Vec<u64> = (w..1000).step_by(16).collect();
            let made = owned.iter().filter(|&&i| m.made_at_setup(i)).count();
            assert!((made as f64 - owned.len() as f64 * 0.8).abs() <= 1.5, "worker {w}: {made} of {}", owned.len());
        }
    }
}
