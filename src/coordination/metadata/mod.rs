//! Metadata runs (`--files`): a tree of files as the target. The sequence (`run`): look at
//! the root and refuse what is not iopulse's (`ownership.rs`), check space, inodes and the
//! open-file limit (`limits.rs`), set the tree up in parallel (`setup.rs`), run the
//! workers in a window (`window.rs`: a mix or a flow in one window, or phases in order;
//! the workers themselves, on plain system calls or io_uring's operations at a queue
//! depth, and the tree's names are the I/O crate's, `io/metadata/`, all their system
//! calls and `unsafe` in `engine::tree_ops`), remove what was created unless
//! `--keep-tree`, and hand back the figures, with their time series when asked for
//! (`intervals.rs`, the collector of what each worker's tap hands over). In a job file's phase beside other jobs, block or
//! metadata (`run_in_phase`), the same sequence meets them at the phase's start line:
//! checked before any job touches anything, set up before the window, released by the
//! phase's start word.
//!
//! Everything refused is refused before anything is touched (exit 2). A limit met (full
//! filesystem, no inodes, quota, open files) or a signal ends the run with the figures so
//! far; the tree is then removed, or kept marked so that the next run can use or remove
//! it. It never formats a report (`output/report/metadata.rs`).

pub mod intervals;
mod limits;
mod ownership;
mod setup;
mod tree_life;
mod window;

use crate::base::diagnostics::error::{Error, RunError, UsageError, exit_code};
use crate::base::diagnostics::warnings::Diagnostics;
use crate::base::primitives::clock::Clock;
use crate::figures::result::meta_document::{MetaResult, OpFigures, PhaseResult};
use crate::io::engine::MetadataIssue;
use crate::io::metadata::tree;
use crate::io::metadata::worker::{OpFailure, Shared};
use crate::io::metadata::workload::{MetaOp, MetaSpec, MetaWorkload};
use crate::io::stats::OpStats;
use crate::workload::spec::Spec;
use ownership::Found;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tree_life::{leave_tree, set_up_tree, take_tree};
use window::Window;

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
    // A flow's tree is set up again each run: which names exist is its set-up's to say.
    let reuse = matches!(&found, Found::Tree(m) if m.state == ownership::READY && m.same_shape(meta))
        && meta.setup_creates_files()
        && !matches!(meta.workload, MetaWorkload::Flow(_));
    if !reuse {
        let existing = match &found {
            Found::Nothing => root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")),
            _ => root.as_path(),
        };
        limits::check(meta, existing, spec.shape.threads).map_err(UsageError::new)?;
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
fn lock_root(root: &Path) -> Result<(std::fs::File, crate::storage::ledger::lock::Held), Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(root)
        .map_err(|e| RunError::Other(format!("open the tree's root {}: {e}", root.display())))?;
    let held = dir.try_clone().map_err(|e| RunError::Other(format!("{}: {e}", root.display())))?;
    match crate::storage::ledger::lock::exclusive(held) {
        Ok(lock) => Ok((dir, lock)),
        Err(busy @ crate::storage::ledger::lock::LockError::Busy { .. }) => Err(UsageError::new(format!(
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
    fn shared_start(&self) -> Option<std::sync::Arc<crate::io::worker::StartWord>>;
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
    let found = checked(spec, meta, stop, line)?;
    let mut taken = take_tree(spec, meta, &root, found, diag)?;
    let setup_failure = set_up_tree(spec, meta, &root, &mut taken, diag, stop)?;

    // The window: a mix, or the phases.
    let failed = AtomicBool::new(setup_failure.is_some());
    // Beside other jobs: the phase's start word and its clock (the window's start on it).
    let word = line.and_then(|l| l.shared_start());
    // A live view (`--live`'s screen, or the live line): fed each interval's row.
    let live_run = crate::io::stats::live::LiveRun {
        label: diag.label().map(str::to_string),
        duration_ns: match spec.window.run_length {
            crate::workload::spec::RunLength::Duration { ns } if ns > 0 => Some(ns),
            _ => None,
        },
        engine: if spec.io.engine == crate::io::engine::EngineKind::IoUring { "io_uring" } else { "system calls" }
            .into(),
        depth: spec.shape.queue_depth,
        workers: spec.shape.threads,
        targets: vec![root.display().to_string()],
        ..Default::default()
    };
    let live = std::sync::Mutex::new(crate::io::stats::live::view(live_run, diag.show_progress()));
    let shared = Shared {
        root: taken.dir.as_raw_fd(),
        shape: tree::Shape::of(meta),
        meta,
        threads: spec.shape.threads,
        append_bytes: spec.shape.block_size_bytes,
        clock: word.as_ref().map_or_else(Clock::new, |w| w.clock),
        stop,
        failed: &failed,
        seed: spec.seed,
        window: word.as_deref(),
        live: &live,
    };
    let set_up_done = setup_failure.is_none() && stop.load(Ordering::Relaxed) == 0;
    if !set_up_done && let Some(line) = line {
        // The other jobs of the phase wait at the start line: they are called off.
        line.call_off("a metadata job's set-up did not complete");
    }
    let uring_depth = uring_depth(spec, diag);
    let window = match &meta.workload {
        _ if !set_up_done => Window::none(),
        MetaWorkload::Mix(shares) => window::run_mix(spec, &shared, shares, uring_depth, line),
        MetaWorkload::Phases(ops) => window::run_phases(spec, &shared, ops, uring_depth),
        MetaWorkload::Flow(steps) => window::run_flow(spec, &shared, steps, line),
    };
    let failure = if set_up_done { window.failure } else { setup_failure };
    let Ending { stop_reason, error, limit, signal, signalled } =
        ending(&root, failure.as_ref(), window.called_off.as_deref(), window.stop_reason, set_up_done, stop, diag);
    let (info, _tree_lock) = leave_tree(spec, meta, &root, taken, set_up_done, diag);

    let coverage_percent =
        if meta.files == 0 { 0.0 } else { (window.touched.min(meta.files)) as f64 * 100.0 / meta.files as f64 };
    let exit = if failure.is_some() || (window.called_off.is_some() && !signalled) {
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
        kind: crate::figures::result::meta_document::KIND.into(),
        schema_version: 1,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        window: crate::figures::result::meta_document::MetaWindow {
            started_at,
            window_start_unix_ns: word.as_ref().map_or(0, |w| w.start_unix_ns()),
            window_start_lag_ns: window.start_lag_ns,
            stop_reason: stop_reason.into(),
        },
        target: root.display().to_string(),
        spec: spec.clone(),
        tree: info,
        phases: window.phases,
        coverage_percent,
        messages: crate::figures::result::meta_document::MetaMessages {
            error,
            limit,
            warnings: diag.warnings(),
            notes: diag.notes(),
        },
        time_series: window.time_series,
        merged_from: None,
    };
    Ok(MetaOutcome { result, exit_code: exit })
}

/// With a time series (`spec.time_series`) or a live view (taken from `live`, named by the
/// phases' `names`): its collector and one tap per worker; else none, and nothing is
/// recorded twice.
fn series_parts<'a>(
    spec: &Spec,
    kinds: &[MetaOp],
    origins: &'a [OnceLock<u64>],
    live: &std::sync::Mutex<Option<crate::io::stats::live::LiveView>>,
    names: Vec<String>,
) -> (Option<intervals::Collector>, Vec<Option<intervals::Tap<'a>>>) {
    let view = live.lock().unwrap_or_else(|e| e.into_inner()).take();
    if spec.output.time_series || view.is_some() {
        let live = view.map(|view| intervals::LiveRows { view, phases: names, interval_ns: spec.output.interval_ns });
        let (collector, taps) = intervals::channels(spec.shape.threads, kinds, spec.output.interval_ns, origins, live);
        (Some(collector), taps.into_iter().map(Some).collect())
    } else {
        (None, (0..spec.shape.threads).map(|_| None).collect())
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
            histogram: if s.ops == 0 { String::new() } else { crate::io::stats::encode_histogram(&s.latency) },
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
        steps: Vec::new(),
    }
}

/// How a metadata run ended, as its result says it.
struct Ending {
    stop_reason: &'static str,
    error: Option<String>,
    /// A limit of the filesystem the failure ran into (inodes, space), named.
    limit: Option<String>,
    /// The stop word as the run left it, and whether a signal set it.
    signal: usize,
    signalled: bool,
}

/// Why the run stopped and the error it reports: a failed operation (a filesystem limit
/// named), a signal, another job's failure, a window called off, a set-up cut short.
fn ending(
    root: &Path,
    failure: Option<&OpFailure>,
    called_off: Option<&str>,
    window_stop_reason: &'static str,
    set_up_done: bool,
    stop: &AtomicUsize,
    diag: &Diagnostics,
) -> Ending {
    let mut stop_reason = window_stop_reason;
    let mut limit = None;
    let mut error = None;
    if let Some(f) = failure {
        let inodes = limits::inodes_left(root);
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
    let signalled = crate::io::worker::stop_code::is_signal(signal);
    if signalled && failure.is_none() {
        stop_reason = "interrupted";
    } else if signal == crate::io::worker::stop_code::FAILED && failure.is_none() && set_up_done {
        // Beside other jobs: one of them failed, which ended the phase's window.
        stop_reason = "stopped";
    }
    if let Some(why) = called_off
        && failure.is_none()
    {
        error = Some(why.to_string());
        if !signalled {
            stop_reason = "not started";
        }
    }
    if !set_up_done && failure.is_none() {
        stop_reason = "interrupted";
        diag.warn("interrupted during the set-up of the tree: no operation was measured");
    }

    Ending { stop_reason, error, limit, signal, signalled }
}

/// The metadata run's planning judged, with the phase's check (metadata phases need a
/// window of their own) and a stop before anything is touched; a failure is told to the
/// phase's other jobs.
fn checked(spec: &Spec, meta: &MetaSpec, stop: &AtomicUsize, line: Option<&dyn PhaseLine>) -> Result<Found, Error> {
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
    Ok(found)
}

/// io_uring: this many operations in flight per worker; other engines: one system call at
/// a time (said when a deeper queue was asked for).
fn uring_depth(spec: &Spec, diag: &Diagnostics) -> Option<u32> {
    let flow = spec.metadata.as_ref().is_some_and(|m| matches!(m.workload, MetaWorkload::Flow(_)));
    if flow && (spec.shape.queue_depth > 1 || spec.io.engine.metadata_issue() == Some(MetadataIssue::Uring)) {
        diag.note(format!(
            "a flow (--meta-flow) runs its steps one at a time on plain system calls, each step on the file the one before left open: --engine {} and --queue-depth {} do not apply",
            spec.io.engine.name(),
            spec.shape.queue_depth
        ));
        return None;
    }
    match spec.io.engine.metadata_issue() {
        Some(MetadataIssue::Uring) => Some(spec.shape.queue_depth),
        _ => {
            if spec.shape.queue_depth > 1 {
                diag.note(format!(
                    "engine {} issues one metadata operation at a time per worker: --queue-depth {} runs at depth 1 (use --threads, or --engine io_uring)",
                    spec.io.engine.name(),
                    spec.shape.queue_depth
                ));
            }
            None
        }
    }
}
