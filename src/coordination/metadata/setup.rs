//! The set-up of a tree: its directories level by level, then (unless a first `create`
//! phase makes them) its files (a flow's `--prealloc` share of them, and its log file), each of its size, by the run's workers in parallel (file
//! `i` by worker `i mod threads`), with a progress bar on a terminal. It checks the stop
//! words per file and stops at the first failure, naming the file.

use crate::io::engine::tree_ops::calls;
use crate::io::metadata::tree::{RelPath, Shape, TreeNames};
use crate::io::metadata::worker::OpFailure;
use crate::io::metadata::workload::{MetaOp, MetaSpec};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Files or directories between two updates of the progress bar.
const PROGRESS_EVERY: u64 = 1024;

/// What the set-up made.
#[derive(Debug, Default)]
pub struct SetUp {
    pub files: u64,
    pub directories: u64,
    pub bytes: u64,
    pub failure: Option<OpFailure>,
}

/// Makes the tree's directories, then, with `files`, its files.
pub fn set_up(
    root: RawFd,
    meta: &MetaSpec,
    threads: u32,
    files: bool,
    show_progress: bool,
    stop: &AtomicUsize,
) -> SetUp {
    let shape = Shape::of(meta);
    let total = meta.directories() + if files { meta.files } else { 0 };
    let bar = progress(show_progress && total >= 10_000, total);
    let failed = AtomicBool::new(false);
    let made_dirs = AtomicU64::new(0);
    let made_files = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    let first_failure = std::sync::Mutex::new(None::<OpFailure>);
    let k = u64::from(meta.dirs_per_dir);
    let t = u64::from(threads.max(1));
    let stopped = || stop.load(Ordering::Relaxed) != 0 || failed.load(Ordering::Relaxed);
    let fail = |f: OpFailure| {
        failed.store(true, Ordering::Relaxed);
        let mut first = first_failure.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(f);
    };
    // Each level needs the one above: the workers meet between levels.
    for level in 1..=meta.depth {
        let count = k.pow(level);
        std::thread::scope(|s| {
            for w in 0..t {
                let (bar, made_dirs, fail, stopped) = (&bar, &made_dirs, &fail, &stopped);
                s.spawn(move || {
                    crate::io::host::signals::block_in_this_thread();
                    let mut path = RelPath::default();
                    let mut since = 0;
                    let mut j = w;
                    while j < count && !stopped() {
                        // Directory j of this level, as the prefix of a leaf below it.
                        path.set_dir(&shape, j * k.pow(meta.depth - level), level);
                        match calls::mkdir(root, &path) {
                            Ok(_) => {
                                made_dirs.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(libc::EEXIST) => {}
                            Err(errno) => {
                                fail(OpFailure { op: MetaOp::Mkdir, path: path.as_str().into(), errno });
                                break;
                            }
                        }
                        since += 1;
                        if since == PROGRESS_EVERY {
                            bar.inc(since);
                            since = 0;
                        }
                        j += t;
                    }
                    bar.inc(since);
                });
            }
        });
    }
    if files && !stopped() {
        std::thread::scope(|s| {
            for w in 0..t {
                let (bar, made_files, bytes, fail, stopped) = (&bar, &made_files, &bytes, &fail, &stopped);
                s.spawn(move || {
                    crate::io::host::signals::block_in_this_thread();
                    let mut path = RelPath::default();
                    let buf = data_buffer(w);
                    let mut since = 0;
                    let mut i = w;
                    while i < meta.files && !stopped() {
                        path.set_file(&shape, i);
                        match make_file(root, &path, meta, i, &buf) {
                            Ok(Some(n)) => {
                                made_files.fetch_add(1, Ordering::Relaxed);
                                bytes.fetch_add(n, Ordering::Relaxed);
                            }
                            Ok(None) => {}
                            Err(errno) => {
                                fail(OpFailure { op: MetaOp::Create, path: path.as_str().into(), errno });
                                break;
                            }
                        }
                        since += 1;
                        if since == PROGRESS_EVERY {
                            bar.inc(since);
                            since = 0;
                        }
                        i += t;
                    }
                    bar.inc(since);
                });
            }
        });
    }
    // A flow's log file (one past the tree's files), which every worker appends to.
    if let Some(log) = meta.log_file().filter(|_| files && !stopped()) {
        let mut path = RelPath::default();
        path.set_file(&shape, log);
        match calls::create_or_fill(root, &path, &data_buffer(t), meta.sizes.size_of(log, 0)) {
            Ok(n) => {
                made_files.fetch_add(1, Ordering::Relaxed);
                bytes.fetch_add(n, Ordering::Relaxed);
            }
            Err(errno) => fail(OpFailure { op: MetaOp::Create, path: path.as_str().into(), errno }),
        }
    }
    bar.finish_and_clear();
    SetUp {
        files: made_files.into_inner(),
        directories: made_dirs.into_inner(),
        bytes: bytes.into_inner(),
        failure: first_failure.into_inner().unwrap_or_else(|p| p.into_inner()),
    }
}

/// File `i` of the tree at `path`, made of its size (the bytes written); or, a name the
/// set-up leaves for a flow's create (`--prealloc`), made absent, whatever an earlier run
/// left there (`None`).
fn make_file(root: RawFd, path: &RelPath, meta: &MetaSpec, i: u64, buf: &[u8]) -> Result<Option<u64>, i32> {
    if meta.made_at_setup(i) {
        return calls::create_or_fill(root, path, buf, meta.sizes.size_of(i, 0)).map(Some);
    }
    match calls::unlink(root, path) {
        Ok(_) | Err(libc::ENOENT) => Ok(None),
        Err(errno) => Err(errno),
    }
}

/// Bytes written into a file at set-up: random, so that nothing compresses them away.
fn data_buffer(worker: u64) -> Vec<u8> {
    let mut buf = vec![0u8; 64 << 10];
    crate::base::primitives::rng::Rng::new(0x6d65_7461, worker).fill_bytes(&mut buf);
    buf
}

fn progress(show: bool, total: u64) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("setting up the tree {bar:30} {pos}/{len} {per_sec} eta {eta}") {
        bar.set_style(style);
    }
    bar
}
