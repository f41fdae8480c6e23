//! Metadata runs (`--files`): a tree of files as the target. The sequence (`run`): look at
//! the root and refuse what is not iopulse's (`ownership.rs`), check space, inodes and the
//! open-file limit (`limits.rs`), set the tree up in parallel (`setup.rs`), run the
//! workers (`worker.rs`: a mix in one window, or phases in order) on the sync engine's
//! system calls (`sync_ops.rs`) or io_uring's operations at a queue depth
//! (`uring_worker.rs`) with the tree's names (`tree.rs`), remove what was created
//! unless `--keep-tree`, and hand back the figures (`result.rs`), with their time series
//! when asked for (`intervals.rs`). In a job file's phase beside other jobs, block or
//! metadata (`run_in_phase`), the same sequence meets them at the phase's start line:
//! checked before any job touches anything, set up before the window, released by the
//! phase's start word.
//!
//! Everything refused is refused before anything is touched (exit 2). A limit met (full
//! filesystem, no inodes, quota, open files) or a signal ends the run with the figures so
//! far; the tree is then removed, or kept marked so that the next run can use or remove
//! it. It never formats a report (`report/metadata.rs`).

pub mod intervals;
mod limits;
mod ownership;
pub mod result;
mod setup;
mod sync_ops;
mod tree;
mod uring_worker;
mod worker;

use crate::diagnostics::error::{Error, RunError, UsageError, exit_code};
use crate::diagnostics::warnings::Diagnostics;
use crate::engine::MetadataIssue;
use crate::primitives::clock::Clock;
use crate::spec::metadata::{MetaOp, MetaSpec, MetaWorkload};
use crate::spec::{RunLength, Spec};
use crate::stats::OpStats;
use ownership::{Found, Marker};
use result::{MetaResult, OpFigures, PhaseResult, TreeInfo};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};
use worker::{OpFailure, Shared};

/// A finished metadata run and the exit code it calls for.
pub struct MetaOutcome {
    pub result: MetaResult,
    pub exit_code: i32,
}

/// The checks a metadata run makes before it touches anything.
pub fn check(spec: &Spec) -> Result<(), Error> {
    let Some(meta) = &spec.metadata else { return Ok(()) };
    plan(spec, meta).map(|_| ())
}

/// What the planning found at the root.
struct Planned {
    found: Found,
    /// The tree there is used as it is (same shape, ready, and files needed).
    reuse: bool,
}

fn plan(spec: &Spec, meta: &MetaSpec) -> Result<Planned, Error> {
    let root = &spec.targets[0];
    let found = ownership::look(root, spec.force).map_err(UsageError::new)?;
    // A tree of ours whose entries were replaced (a directory by a link to another, a file
    // by a link or a hard link, a mount over a directory): the run would go through them,
    // and the removal must not. Refused before anything is touched, naming them.
    if let Found::Tree(_) = &found {
        let odd = ownership::odd_entries(root)
            .map_err(|e| UsageError::new(format!("--files {}: the tree cannot be walked: {e}", root.display())))?;
        if let Some(first) = odd.first() {
            let more = if odd.len() > 1 { format!(" and {} more", odd.len() - 1) } else { String::new() };
            return Err(UsageError::new(format!(
                "--files {}: the tree holds entries iopulse did not make under its names ({first}{more}): the run would go through them, so it leaves them alone; remove them (they are not iopulse's), or give another directory",
                root.display()
            ))
            .into());
        }
    }
    let reuse = matches!(&found, Found::Tree(m) if m.state == ownership::READY && m.same_shape(meta))
        && meta.setup_creates_files();
    if !reuse {
        let existing = match &found {
            Found::Nothing => root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")),
            _ => root.as_path(),
        };
        limits::check(meta, existing, spec.threads).map_err(UsageError::new)?;
    }
    Ok(Planned { found, reuse })
}

/// Runs the metadata run of `spec` to its end; `stop` is the signals' stop word.
pub fn run(spec: &Spec, diag: &Diagnostics, stop: &AtomicUsize) -> Result<MetaOutcome, Error> {
    run_in(spec, diag, stop, None)
}

/// The tree's root opened without following a link, and locked for the run (an exclusive
/// flock on the directory): a second run on the same tree is refused (exit 2) naming the
/// first's pid.
fn lock_root(root: &Path) -> Result<(std::fs::File, crate::ledger::lock::Held), Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(root)
        .map_err(|e| RunError::Other(format!("open the tree's root {}: {e}", root.display())))?;
    let held = dir.try_clone().map_err(|e| RunError::Other(format!("{}: {e}", root.display())))?;
    match crate::ledger::lock::exclusive(held) {
        Ok(lock) => Ok((dir, lock)),
        Err(busy @ crate::ledger::lock::LockError::Busy { .. }) => Err(UsageError::new(format!(
            "--files {}: the tree {busy}: two runs on one tree would remove each other's files; wait for it to end, or give another directory",
            root.display()
        ))
        .into()),
        Err(e) => Err(RunError::Other(format!("--files {}: {e}", root.display())).into()),
    }
}

/// What a metadata job beside other jobs needs of its phase's start line
/// (`run::start_line::StartLine` implements it): the checkpoints every job of the phase
/// meets, and the start word their workers share. A trait so that metadata/ never imports
/// run/ (which reaches metadata/ through result/).
pub trait PhaseLine {
    /// Every check done and nothing touched: meets the phase's other jobs there.
    fn planned(&self) -> Result<(), Error>;
    /// Set up and ready: meets the other jobs; the window opens when all have.
    fn open(&self, stop: &AtomicUsize) -> Result<(), Error>;
    /// Will not `open`: the others' shared start is called off rather than waited for.
    fn call_off(&self, why: &str);
    /// Failed before `planned` or `open`: the others learn it at their checkpoint.
    fn fail(&self, error: &Error);
    /// The start word every worker of the phase waits on.
    fn shared_start(&self) -> Option<std::sync::Arc<crate::worker::StartWord>>;
}

/// As `run`, as a job of a job file's phase beside other jobs (block or metadata): its
/// checks meet theirs at `line`'s `planned` before anything is touched, its tree is set
/// up before the phase's start line (`open`), and its workers wait on the phase's start
/// word, released with every other job's workers by one call. The phase's stop word is
/// `stop`: a signal, or a failure of any job (this one's included), stops all of them.
pub fn run_in_phase(
    spec: &Spec,
    diag: &Diagnostics,
    stop: &AtomicUsize,
    line: &dyn PhaseLine,
) -> Result<MetaOutcome, Error> {
    run_in(spec, diag, stop, Some(line))
}

fn run_in(
    spec: &Spec,
    diag: &Diagnostics,
    stop: &AtomicUsize,
    line: Option<&dyn PhaseLine>,
) -> Result<MetaOutcome, Error> {
    let meta = spec.metadata.as_ref().expect("a metadata run has a MetaSpec");
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let root = spec.targets[0].clone();
    let checked = plan(spec, meta).and_then(|p| {
        if line.is_some() && meta.runs_phases() {
            return Err(UsageError::new(
                "--meta-phases beside other jobs in one window: give the job a --meta-mix, or a phase of its own (stonewall = true)",
            )
            .into());
        }
        Ok(p)
    });
    let Planned { found, .. } = match checked {
        Ok(p) => p,
        Err(e) => {
            if let Some(line) = line {
                line.fail(&e);
            }
            return Err(e);
        }
    };
    // Every job of the phase checked: only then is anything touched.
    if let Some(line) = line {
        line.planned()?;
    }
    if stop.load(Ordering::Relaxed) != 0 {
        let e: Error = RunError::Other("interrupted before the set-up: nothing was touched".into()).into();
        if let Some(line) = line {
            line.fail(&e);
        }
        return Err(e);
    }
    let io = |what: &str, e: std::io::Error| RunError::Other(format!("{what} {}: {e}", root.display()));

    // Touch: the root (another run may have made it since the planning), then the lock on
    // it, then what is there judged again: a second run on the tree is refused here, having
    // touched nothing of the first's.
    let made_root = match &found {
        Found::Nothing => match std::fs::create_dir(&root) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(io("create the tree's root", e).into()),
        },
        _ => false,
    };
    let (dir, _tree_lock) = lock_root(&root)?;
    let Planned { found, reuse } =
        if made_root { Planned { found: Found::Nothing, reuse: false } } else { plan(spec, meta)? };
    let root_created = match &found {
        Found::Nothing => true,
        Found::Tree(m) => m.root_created,
        Found::Directory => false,
    };
    if let Found::Tree(old) = &found
        && !reuse
    {
        diag.note(format!(
            "{}: removing the tree an earlier run left ({}, {} files) before making this one",
            root.display(),
            old.state,
            old.files
        ));
        ownership::remove_contents(&root, old, spec.threads);
    }
    let fd = dir.as_raw_fd();
    let mut tree = TreeInfo {
        files: meta.files,
        directories: meta.directories(),
        leaf_directories: meta.leaves(),
        dirs_per_dir: meta.dirs_per_dir,
        depth: meta.depth,
        reused: reuse,
        setup_ns: 0,
        setup_files_created: 0,
        setup_directories_created: 0,
        setup_bytes_written: 0,
        kept: meta.keep_tree,
        removed_files: 0,
        removed_directories: 0,
        kept_directories: Vec::new(),
        left_entries: Vec::new(),
    };
    let mut failure: Option<OpFailure> = None;
    if !reuse {
        ownership::write_marker(&root, &Marker::new(meta, root_created, ownership::SETTING_UP))
            .map_err(|e| io("write the tree's marker in", e))?;
        let clock = Clock::new();
        let made = setup::set_up(fd, meta, spec.threads, meta.setup_creates_files(), diag.show_progress(), stop);
        tree.setup_ns = clock.now_ns();
        tree.setup_files_created = made.files;
        tree.setup_directories_created = made.directories;
        tree.setup_bytes_written = made.bytes;
        failure = made.failure;
        if failure.is_none() && stop.load(Ordering::Relaxed) == 0 {
            let state = if meta.setup_creates_files() { ownership::READY } else { ownership::USED };
            ownership::write_marker(&root, &Marker::new(meta, root_created, state))
                .map_err(|e| io("write the tree's marker in", e))?;
        }
    }

    // The window: a mix, or the phases.
    let failed = AtomicBool::new(failure.is_some());
    // Beside other jobs: the phase's start word and its clock (the window's start on it).
    let word = line.and_then(|l| l.shared_start());
    let shared = Shared {
        root: fd,
        shape: tree::Shape::of(meta),
        meta,
        threads: spec.threads,
        append_bytes: spec.block_size_bytes,
        clock: word.as_ref().map_or_else(Clock::new, |w| w.clock),
        stop,
        failed: &failed,
        seed: spec.seed,
        window: word.as_deref(),
    };
    // Why the phase's window did not open for this job (another job failed before it).
    let mut called_off: Option<String> = None;
    let mut start_lag_ns: Option<u64> = None;
    let mut phases = Vec::new();
    let mut time_series = Vec::new();
    let mut touched = 0u64;
    let mut stop_reason = "complete";
    let set_up_done = failure.is_none() && stop.load(Ordering::Relaxed) == 0;
    if !set_up_done && let Some(line) = line {
        // The other jobs of the phase wait at the start line: they are called off.
        line.call_off("a metadata job's set-up did not complete");
    }
    // io_uring: this many operations in flight per worker; none: one system call at a time.
    let uring_depth = match spec.engine.metadata_issue() {
        Some(MetadataIssue::Uring) => Some(spec.queue_depth),
        _ => {
            if spec.queue_depth > 1 {
                diag.note(format!(
                    "engine {} issues one metadata operation at a time per worker: --queue-depth {} runs at depth 1 (use --threads, or --engine io_uring)",
                    spec.engine.name(),
                    spec.queue_depth
                ));
            }
            None
        }
    };
    if set_up_done {
        match &meta.workload {
            MetaWorkload::Mix(shares) => {
                let (duration_ns, quota) = match spec.run_length {
                    RunLength::Duration { ns } if ns > 0 => (Some(ns), spec.ops_limit),
                    _ => (None, spec.ops_limit),
                };
                stop_reason = if duration_ns.is_some() { "duration" } else { "ops" };
                let t = u64::from(spec.threads);
                // Beside other jobs this thread is at the start line too: it opens the
                // phase's window once every worker is waiting on the start word.
                let start = Barrier::new(spec.threads as usize + usize::from(line.is_some()));
                let origins = [OnceLock::new()];
                // The kinds asked for, and those a worker falls back to (create, mkdir).
                let mut kinds: Vec<MetaOp> = shares.iter().map(|s| s.op).collect();
                kinds.extend([MetaOp::Create, MetaOp::Mkdir]);
                let (collector, taps) = series_parts(spec, &kinds, &origins);
                let (figures, mut collected): (Vec<worker::WorkerFigures>, _) = std::thread::scope(|s| {
                    let collector = collector.map(|c| s.spawn(move || c.run()));
                    let handles: Vec<_> = taps
                        .into_iter()
                        .enumerate()
                        .map(|(w, tap)| {
                            let w = w as u32;
                            let quota = quota.map(|q| q / t + u64::from(u64::from(w) < q % t));
                            let (shared, start) = (&shared, &start);
                            s.spawn(move || match uring_depth {
                                None => worker::run_mix(shared, w, shares, start, duration_ns, quota, tap),
                                Some(depth) => {
                                    uring_worker::run_mix(shared, w, shares, depth, start, duration_ns, quota, tap)
                                }
                            })
                        })
                        .collect();
                    if let Some(line) = line {
                        start.wait();
                        if let Err(e) = line.open(stop) {
                            called_off = Some(e.to_string());
                        }
                    }
                    let figures = handles.into_iter().map(|h| h.join().expect("a metadata worker panicked")).collect();
                    (figures, collector.map(|c| c.join().expect("the time series' collector panicked")))
                });
                let figures_end_ns = figures.iter().map(|f| f.end_ns).max().unwrap_or(0);
                // Beside other jobs: the first worker's start after the phase's release
                // (its start word was set; `wait` returns at once with its instant).
                if let Some(released_ns) = word.as_ref().and_then(|w| w.wait())
                    && let Some(first_ns) = figures.iter().map(|f| f.start_ns).filter(|&s| s > 0).min()
                {
                    start_lag_ns = Some(first_ns.saturating_sub(released_ns));
                }
                let window_ns = figures_end_ns - figures.iter().map(|f| f.start_ns).min().unwrap_or(0);
                let mut per_op: Vec<OpStats> =
                    MetaOp::ALL.iter().map(|op| figures[0].per_op[op.index()].clone()).collect();
                for f in &figures[1..] {
                    for (sum, one) in per_op.iter_mut().zip(&f.per_op) {
                        merge(sum, one);
                    }
                }
                // With a time series the workers recorded into their intervals: the totals are
                // those intervals added.
                if let Some(totals) = collected.as_mut().and_then(|c| c.take_totals(0)) {
                    per_op = totals;
                }
                touched = figures.iter().map(|f| f.touched).sum();
                failure = figures.into_iter().find_map(|f| f.failure);
                let total_weight: u32 = shares.iter().map(|s| s.weight).sum();
                let asked = |op: MetaOp| {
                    shares
                        .iter()
                        .find(|s| s.op == op)
                        .map(|s| f64::from(s.weight) * 100.0 / f64::from(total_weight))
                        .unwrap_or(0.0)
                };
                phases.push(phase_result("mix", window_ns, &per_op, Some(&asked)));
                if let Some(collected) = collected {
                    let span = intervals::PhaseSpan {
                        name: "mix",
                        origin_ns: origins[0].get().copied(),
                        end_ns: figures_end_ns,
                        kinds: phases[0].per_op.iter().map(|f| f.op).collect(),
                    };
                    time_series = collected.rows(&[span], spec.interval_ns);
                }
            }
            MetaWorkload::Phases(ops) => {
                let barrier = Barrier::new(spec.threads as usize);
                let files_exist = meta.setup_creates_files();
                let origins: Vec<OnceLock<u64>> = ops.iter().map(|_| OnceLock::new()).collect();
                let (collector, taps) = series_parts(spec, ops, &origins);
                let (outs, mut collected): (Vec<_>, _) = std::thread::scope(|s| {
                    let collector = collector.map(|c| s.spawn(move || c.run()));
                    let handles: Vec<_> = taps
                        .into_iter()
                        .enumerate()
                        .map(|(w, tap)| {
                            let w = w as u32;
                            let (shared, barrier) = (&shared, &barrier);
                            s.spawn(move || match uring_depth {
                                None => worker::run_phases(shared, w, ops, files_exist, barrier, tap),
                                Some(depth) => {
                                    uring_worker::run_phases(shared, w, ops, files_exist, depth, barrier, tap)
                                }
                            })
                        })
                        .collect();
                    let outs = handles.into_iter().map(|h| h.join().expect("a metadata worker panicked")).collect();
                    (outs, collector.map(|c| c.join().expect("the time series' collector panicked")))
                });
                let mut spans = Vec::new();
                for (p, op) in ops.iter().enumerate() {
                    let start = outs.iter().map(|o: &(Vec<worker::PhaseFigures>, u64, _)| o.0[p].start_ns).min();
                    let end = outs.iter().map(|o| o.0[p].end_ns).max();
                    let window_ns = end.unwrap_or(0).saturating_sub(start.unwrap_or(0));
                    let mut per_op: Vec<OpStats> = MetaOp::ALL.iter().map(|_| OpStats::unused()).collect();
                    let mut stats = OpStats::new();
                    for o in &outs {
                        stats.merge(&o.0[p].stats);
                    }
                    // With a time series the workers recorded into their intervals.
                    if let Some(mut totals) = collected.as_mut().and_then(|c| c.take_totals(p)) {
                        stats = std::mem::replace(&mut totals[op.index()], OpStats::unused());
                    }
                    per_op[op.index()] = stats;
                    phases.push(phase_result(op.name(), window_ns, &per_op, None));
                    spans.push(intervals::PhaseSpan {
                        name: op.name(),
                        origin_ns: origins[p].get().copied(),
                        end_ns: end.unwrap_or(0),
                        kinds: phases[p].per_op.iter().map(|f| f.op).collect(),
                    });
                }
                if let Some(collected) = collected {
                    time_series = collected.rows(&spans, spec.interval_ns);
                }
                touched = outs.iter().map(|o| o.1).sum();
                failure = outs.into_iter().find_map(|o| o.2);
            }
        }
    }

    // How it ended.
    let mut limit = None;
    let mut error = None;
    if let Some(f) = &failure {
        let inodes = limits::inodes_left(&root);
        limit = limits::limit_named(f.errno, inodes);
        let what =
            format!("{} {}/{}: {}", f.op.name(), root.display(), f.path, std::io::Error::from_raw_os_error(f.errno));
        stop_reason = if limit.is_some() { "limit" } else { "error" };
        error = Some(match &limit {
            Some(l) => format!("{l}: {what}; the figures are those until then"),
            None => what,
        });
    }
    let signal = stop.load(Ordering::Relaxed);
    let signalled = crate::worker::stop_code::is_signal(signal);
    if signalled && failure.is_none() {
        stop_reason = "interrupted";
    } else if signal == crate::worker::stop_code::FAILED && failure.is_none() && set_up_done {
        // Beside other jobs: one of them failed, which ended the phase's window.
        stop_reason = "stopped";
    }
    if let Some(why) = &called_off
        && failure.is_none()
    {
        error = Some(why.clone());
        if !signalled {
            stop_reason = "not started";
        }
    }
    if !set_up_done && failure.is_none() {
        stop_reason = "interrupted";
        diag.warn("interrupted during the set-up of the tree: no operation was measured");
    }

    // The tree: its state for the next run, then removed unless kept.
    let mutated =
        !set_up_done || !meta.ops().iter().all(|op| matches!(op, MetaOp::Read | MetaOp::Stat | MetaOp::Readdir));
    let state = if mutated { ownership::USED } else { ownership::READY };
    let marker = Marker::new(meta, root_created, state);
    let _ = ownership::write_marker(&root, &marker);
    drop(dir);
    if meta.keep_tree {
        diag.note(format!(
            "--keep-tree: the tree stays in {} ({}); `iopulse {} --files {} ...` without --keep-tree removes it",
            root.display(),
            if mutated { "changed by the run: the next run makes it again" } else { "ready for the next run" },
            root.display(),
            meta.files
        ));
    } else {
        let removed = ownership::remove(&root, &marker, spec.threads);
        tree.removed_files = removed.files;
        tree.removed_directories = removed.directories;
        tree.kept_directories = removed.kept_directories.iter().map(|p| p.display().to_string()).collect();
        tree.left_entries = removed.left;
        if let Some(first) = tree.left_entries.first() {
            diag.warn(format!(
                "{} entries with iopulse's names are not as the tree made them and were left alone, never followed (e.g. {first})",
                tree.left_entries.len()
            ));
        }
        if !tree.kept_directories.is_empty() {
            diag.warn(format!(
                "{} directories of the tree hold entries iopulse did not create and were left in place (e.g. {})",
                tree.kept_directories.len(),
                tree.kept_directories[0]
            ));
        }
    }

    let coverage_percent =
        if meta.files == 0 { 0.0 } else { (touched.min(meta.files)) as f64 * 100.0 / meta.files as f64 };
    let exit = if failure.is_some() || (called_off.is_some() && !signalled) {
        exit_code::RUN_FAILED
    } else if stop_reason == "interrupted" {
        match signal as i32 {
            0 => exit_code::INTERRUPTED,
            code => code,
        }
    } else {
        exit_code::SUCCESS
    };
    let result = MetaResult {
        kind: result::KIND.into(),
        schema_version: 1,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        target: root.display().to_string(),
        spec: spec.clone(),
        tree,
        phases,
        coverage_percent,
        stop_reason: stop_reason.into(),
        error,
        limit,
        warnings: diag.warnings(),
        notes: diag.notes(),
        time_series,
        merged_from: None,
        window_start_unix_ns: word.as_ref().map_or(0, |w| w.start_unix_ns()),
        window_start_lag_ns: start_lag_ns,
    };
    Ok(MetaOutcome { result, exit_code: exit })
}

/// With a time series (`spec.time_series`): its collector and one tap per worker; else
/// none, and nothing is recorded twice.
fn series_parts<'a>(
    spec: &Spec,
    kinds: &[MetaOp],
    origins: &'a [OnceLock<u64>],
) -> (Option<intervals::Collector>, Vec<Option<intervals::Tap<'a>>>) {
    if spec.time_series {
        let (collector, taps) = intervals::channels(spec.threads, kinds, spec.interval_ns, origins);
        (Some(collector), taps.into_iter().map(Some).collect())
    } else {
        (None, (0..spec.threads).map(|_| None).collect())
    }
}

/// `sum` plus `one`; an unused stand-in in `sum` is replaced (its histogram is too small).
fn merge(sum: &mut OpStats, one: &OpStats) {
    if one.ops == 0 {
        return;
    }
    if sum.ops == 0 && sum.latency.high() < one.latency.high() {
        *sum = one.clone();
    } else {
        sum.merge(one);
    }
}

/// A phase's figures from its per-kind stats over `window_ns`.
fn phase_result(name: &str, window_ns: u64, per_op: &[OpStats], asked: Option<&dyn Fn(MetaOp) -> f64>) -> PhaseResult {
    let seconds = (window_ns.max(1)) as f64 / 1e9;
    let total_ops: u64 = per_op.iter().map(|s| s.ops).sum();
    let mut figures = Vec::new();
    let (mut files, mut bytes) = (0u64, 0u64);
    for op in MetaOp::ALL {
        let s = &per_op[op.index()];
        let asked_share = asked.map(|a| a(op)).filter(|p| *p > 0.0);
        if s.ops == 0 && asked_share.is_none() {
            continue;
        }
        let op_files = if op.on_a_file() { s.ops } else { 0 };
        files += op_files;
        bytes += s.bytes;
        figures.push(OpFigures {
            op,
            ops: s.ops,
            files: op_files,
            bytes: s.bytes,
            ops_per_sec: s.ops as f64 / seconds,
            files_per_sec: op_files as f64 / seconds,
            bytes_per_sec: s.bytes as f64 / seconds,
            share_asked_percent: asked.map(|a| a(op)),
            share_achieved_percent: asked
                .map(|_| if total_ops == 0 { 0.0 } else { s.ops as f64 * 100.0 / total_ops as f64 }),
            latency_ns: s.latency_summary(),
            histogram: if s.ops == 0 { String::new() } else { crate::stats::encode_histogram(&s.latency) },
        });
    }
    PhaseResult {
        name: name.into(),
        window_ns,
        ops: total_ops,
        ops_per_sec: total_ops as f64 / seconds,
        files_per_sec: files as f64 / seconds,
        bytes_per_sec: bytes as f64 / seconds,
        per_op: figures,
    }
}
