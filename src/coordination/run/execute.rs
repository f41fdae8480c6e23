//! Spawn, release, supervise: one thread per worker, released together from the start
//! line once all are set up (and the other ranks and `--start-at` agree), the sampler
//! of the time series beside them, and the `watchdog` supervising until they stop. The
//! whole process's CPU time is read at the release and once every worker has stopped:
//! the window's CPU (`Execution::cpu_window`).

use super::messages;
use super::region::RegionLayout;
use super::start_line::{Opened, StartLine};
use super::watchdog::{self, Abandoned};
use super::worker_plan;
use crate::base::diagnostics::error::{Error, RunError};
use crate::base::primitives::clock::Clock;
use crate::io::cpu_state;
use crate::io::host::rusage;
use crate::io::host::signals;
use crate::io::placement::PlacementPlan;
use crate::io::stats::CpuTimes;
use crate::io::stats::interval::{self, RowObserver, SamplerConfig, SamplerOutput, SteadyHook, TimeSeriesRow};
use crate::io::stats::live::{LiveRun, SampledInterval};
use crate::io::stats::steady_state::SteadyWatch;
use crate::io::worker::{self, RunControl, WorkerResult, stop_code};
use crate::storage::targets::PreparedTarget;
use crate::storage::targets::device_witness::{Devices, Snapshot};
use crate::workload::spec::{RunLength, Spec};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

/// Everything `execute` needs, planned and prepared (the engine is the spec's; each worker
/// runs it through `worker::run_on`).
pub(super) struct Execute<'a> {
    pub(super) spec: &'a Spec,
    pub(super) targets: &'a [PreparedTarget],
    pub(super) layout: &'a RegionLayout,
    pub(super) depth: u32,
    pub(super) stop: &'a Arc<AtomicUsize>,
    pub(super) placement: &'a PlacementPlan,
    /// The run's diagnostics show progress on stderr (the live line may show it; a full
    /// screen, `--live`, shows every run): `run::live` says whether a view is made, and
    /// interval histograms are then wanted even without a time series.
    pub(super) shows_progress: bool,
    /// What a live view names the run (a job, a profile's step, a sweep's point).
    pub(super) label: Option<String>,
    pub(super) start_line: &'a StartLine<'a>,
    /// The block devices under the targets, whose counters are read at the window's edges.
    pub(super) devices: &'a Devices,
    /// `--verify-state`: this rank's record path, its file (locked for the run) and how the
    /// record follows durability.
    pub(super) record: Option<(
        &'a std::path::PathBuf,
        &'a crate::storage::durable_record::LockedRecord,
        crate::io::durable_format::Durability,
    )>,
}

/// What the workers handed back, with the window they ran in.
pub(super) struct Execution {
    pub(super) start_ns: u64,
    /// The window's start on the wall clock, ns since the Unix epoch.
    pub(super) start_unix_ns: u64,
    /// What happened at the start line (`--start-at`).
    pub(super) opened: Opened,
    pub(super) workers: Vec<WorkerResult>,
    /// Workers left behind (stuck I/O, or not stopped after a signal): not joined.
    pub(super) abandoned: Vec<Abandoned>,
    /// The whole process's CPU time from the release to the moment every worker had
    /// stopped and the sampler was done (getrusage RUSAGE_SELF at both ends).
    pub(super) cpu_window: CpuTimes,
    /// `--fsync-on-close`: how long fsync of every target took, or what failed.
    pub(super) fsync: Option<Result<u64, String>>,
    /// One row per interval, when collected.
    pub(super) time_series: Vec<TimeSeriesRow>,
    /// `--ramp`: its length; `start_ns` is then the window's start, the release plus this.
    pub(super) ramp_ns: u64,
    /// `--steady-state`: what the watch saw, and its window's merged read and write histograms.
    pub(super) steady: Option<(SteadyWatch, Option<interval::Snapshot>)>,
    /// The CPU's state over the window (governor, frequencies, steal, other work).
    pub(super) cpu_state: cpu_state::Recorded,
    /// The devices' counters right before the release and right after the stop.
    pub(super) device_counters: (Snapshot, Snapshot),
    /// The process's memory on transparent huge pages right before the release, every
    /// worker's buffers allocated and touched.
    pub(super) huge_page_bytes: Option<u64>,
    /// `--cpu-dma-latency`: the request held over the window (its value), or why it could
    /// not be made; `None` without the flag.
    pub(super) latency_request_us: Option<Result<u32, String>>,
}

/// Spawns the workers, releases them together and waits for them under the watchdog
/// (`watchdog::supervise`). Worker threads are not scoped: one stuck in the kernel is
/// left behind rather than joined, and owns everything it uses (its plan, its buffers,
/// a share of the run control).
pub(super) fn execute(run: Execute<'_>) -> Result<Execution, Error> {
    let Execute { spec, targets, layout, stop, shows_progress, start_line, devices, record, .. } = run;
    let (control, run_stop, together) = run_control(spec, stop, start_line);
    let (sampler, recorders) = interval_parts(spec, crate::io::stats::live::registered(shows_progress));
    let record = super::durable_record::DurableRecord::create(
        spec,
        record.map(|r| (r.0, r.1)),
        record.map(|r| r.2),
        layout,
        targets,
    )?;
    let tids = Arc::new(super::live::WorkerTids::new(spec.shape.threads));
    let Spawned { handles, done_rx, spawn_error, mut interrupted } =
        spawn_workers(&run, &control, recorders, record.as_ref(), &tids);
    // Every worker set up (buffers allocated, engines ready): only then meet the other ranks
    // and wait for --start-at, so the windows open as close together as they can.
    let ready = spawn_error.is_none() && !interrupted && control.wait_for_arrivals(handles.len());
    // What is read right before the release (outside the window): the page-cache residency
    // of every target, the devices' counters, the memory on huge pages, the whole process's
    // CPU time (the window's CPU is counted from here, every thread of the process and
    // io_uring's kernel threads included, set-up excluded) and the CPU's state. A job of a
    // phase reads them before it meets the others, as the last of them releases every job.
    let before_release = || {
        crate::storage::targets::page_cache::at_window_start(targets);
        let devices_at_start = devices.snapshot();
        // A phase's jobs: read once for all of them, as the last one arrives (below).
        let huge_page_bytes = if together { None } else { rusage::anon_huge_page_bytes() };
        (
            devices_at_start,
            huge_page_bytes,
            rusage::process_cpu(),
            cpu_state::Recorder::start(std::path::Path::new("/")),
        )
    };
    // --cpu-dma-latency: held from just before the CPU's state is first read to just after
    // it is last read, so that the idle states recorded are the ones the request allowed,
    // and never while the run waits for other ranks or --start-at. A job of a phase reads
    // the CPU's state before it meets the others (the phase's jobs all ask for the same
    // request: `plan::check`), so it makes its request then.
    let hold = || spec.placement.cpu_dma_latency_us.map(cpu_state::latency_request::LatencyRequest::hold);
    let early_request = if together && ready && stop.load(Ordering::Relaxed) == 0 { hold() } else { None };
    let read_early = together.then(before_release);
    let opened = if ready && stop.load(Ordering::Relaxed) == 0 { Some(start_line.open(stop)) } else { None };
    // A signal while workers set up or while waiting for --start-at: the window never opens.
    interrupted |= stop.load(Ordering::Relaxed) != 0;
    if opened.is_none() {
        call_off(start_line, spawn_error.as_deref(), interrupted);
    }
    // The window opens: the start line was passed, with no signal and no failure.
    let window_opens = matches!(opened, Some(Ok(_))) && !interrupted;
    let (opened, open_error) = match opened {
        Some(Ok(o)) => (o, None),
        Some(Err(e)) => (Opened::default(), Some(e)),
        None => (Opened::default(), None),
    };
    let latency_request = match early_request {
        Some(held) => Some(held),
        None if !together && window_opens => hold(),
        None => None,
    };
    let (devices_at_start, huge_page_bytes, cpu_at_release, mut cpu_state) = read_early.unwrap_or_else(before_release);
    let start = control.release(handles.len(), spawn_error.is_some() || open_error.is_some() || interrupted);
    let huge_page_bytes = if together { start_line.phase_huge_page_bytes() } else { huge_page_bytes };
    // Where the window opened on the wall clock: read with the release, by whoever released.
    let start_unix_ns = start.map_or(0, |_| control.start_unix_ns());
    let sampling_done = Arc::new(AtomicBool::new(false));
    let sampler = match (start, sampler) {
        (Some(start_ns), Some(sampler)) => start_sampler(&run, &control, start_ns, sampler, &sampling_done, &tids),
        _ => None,
    };
    // --ramp: the window opens at its end; the process's CPU and the devices' counters are
    // read again then, by the supervision (within one of its polls, at most 100 ms).
    let ramp_end_ns = start.filter(|_| spec.window.ramp_ns > 0).map(|s| s.saturating_add(spec.window.ramp_ns));
    let (mut cpu_at_window, mut devices_at_window) = (None, None);
    let relay = spec.window.steady_state.is_some();
    let supervised = watchdog::supervise(handles, done_rx, &control, spec.errors.io_timeout_ns, &mut || {
        cpu_state.sample();
        if relay {
            let word = stop.load(Ordering::Relaxed);
            if word != stop_code::RUNNING {
                let _ = run_stop.compare_exchange(stop_code::RUNNING, word, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        if cpu_at_window.is_none() && ramp_end_ns.is_some_and(|end| control.clock.now_ns() >= end) {
            cpu_at_window = Some(rusage::process_cpu());
            devices_at_window = Some(devices.snapshot());
        }
    });
    // The sampler stops first, so that the probes below add no row after the window.
    sampling_done.store(true, Ordering::Release);
    // The devices' counters, first after the stop.
    let devices_at_end = devices.snapshot();
    let cpu_state = cpu_state.finish();
    let latency_request_us = latency_request.map(|held| held.map(|request| request.latency_us));
    // ... and as it closes.
    crate::storage::targets::page_cache::at_window_end(targets);
    let SamplerOutput { rows: time_series, steady } = sampler_output(sampler, supervised.abandoned.is_empty());
    // Every worker has stopped (or been left behind) and the sampler is done: the window's CPU.
    let cpu_window = rusage::process_cpu().since(&cpu_at_window.unwrap_or(cpu_at_release));
    let devices_at_start = devices_at_window.unwrap_or(devices_at_start);
    let start_ns = window_start(start, spawn_error, interrupted, open_error, &supervised)?;
    Ok(Execution {
        start_ns: start_ns.saturating_add(spec.window.ramp_ns),
        start_unix_ns: start_unix_ns.saturating_add(spec.window.ramp_ns),
        ramp_ns: spec.window.ramp_ns,
        steady,
        opened,
        workers: supervised.finished,
        abandoned: supervised.abandoned,
        cpu_window,
        fsync: None,
        time_series,
        cpu_state,
        device_counters: (devices_at_start, devices_at_end),
        huge_page_bytes,
        latency_request_us,
    })
}

/// What the run's workers share: the stop word they read (a run of its own under
/// `--steady-state`, which the supervision relays signals into; a job file's other runs
/// share `stop`), the start word (one for the jobs of a phase, which are released by one
/// call: `together`), and heartbeats for the watchdog (none with --io-timeout 0).
fn run_control(
    spec: &Spec,
    stop: &Arc<AtomicUsize>,
    start_line: &StartLine<'_>,
) -> (Arc<RunControl>, Arc<AtomicUsize>, bool) {
    let watched = if spec.errors.io_timeout_ns > 0 { spec.shape.threads as usize } else { 0 };
    let run_stop = if spec.window.steady_state.is_some() { Arc::new(AtomicUsize::new(0)) } else { Arc::clone(stop) };
    let shared_start = start_line.shared_start();
    let together = shared_start.is_some();
    let control = match shared_start {
        Some(start) => RunControl::sharing(start, Arc::clone(&run_stop)),
        None => RunControl::new(Clock::new(), Arc::clone(&run_stop)),
    };
    (Arc::new(control.with_heartbeats(watched)), run_stop, together)
}

/// Interval histograms, only when a time series or the live line is wanted: the sampler
/// and one recorder per worker.
fn interval_parts(spec: &Spec, live: bool) -> (Option<interval::Sampler>, Vec<Option<interval::IntervalRecorder>>) {
    if spec.output.time_series || live {
        let (sampler, recorders) = interval::channels(
            spec.shape.threads,
            interval::ramp_rows(spec.window.ramp_ns, spec.output.interval_ns),
            spec.durability.flush.is_some() || spec.durability.end_fsync,
        );
        (Some(sampler), recorders.into_iter().map(Some).collect::<Vec<_>>())
    } else {
        (None, (0..spec.shape.threads).map(|_| None).collect())
    }
}

/// The sampler's rows and steady-state verdict; a worker left behind (stuck in the kernel)
/// keeps its recorder, so the sampler is not waited for then.
fn sampler_output(sampler: Option<thread::JoinHandle<SamplerOutput>>, none_abandoned: bool) -> SamplerOutput {
    match sampler {
        Some(h) if none_abandoned => h.join().unwrap_or(SamplerOutput { rows: Vec::new(), steady: None }),
        _ => SamplerOutput { rows: Vec::new(), steady: None },
    }
}

/// The workers as spawned: their handles, the channel each says it is done on, and why
/// not all of them were (a thread the system would not start, a signal during set-up).
struct Spawned {
    handles: Vec<Option<thread::JoinHandle<WorkerResult>>>,
    done_rx: std::sync::mpsc::Receiver<u32>,
    spawn_error: Option<String>,
    interrupted: bool,
}

/// Spawns each worker on its own thread with its plan, its interval recorder and its
/// writer of the durable record. A signal during set-up (thousands of threads, large
/// buffers) calls the run off: no more workers are started and the window never opens.
fn spawn_workers(
    run: &Execute<'_>,
    control: &Arc<RunControl>,
    mut recorders: Vec<Option<interval::IntervalRecorder>>,
    record: Option<&super::durable_record::DurableRecord>,
    tids: &Arc<super::live::WorkerTids>,
) -> Spawned {
    let spec = run.spec;
    let engine = spec.io.engine;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut handles = Vec::with_capacity(spec.shape.threads as usize);
    let mut spawn_error = None;
    let mut interrupted = false;
    for w in 0..spec.shape.threads {
        if run.stop.load(Ordering::Relaxed) != 0 {
            interrupted = true;
            break;
        }
        let mut plan = worker_plan::worker_plan(spec, run.layout, run.targets, w, run.depth, run.placement, control);
        plan.interval = recorders[w as usize].take();
        if let Some(record) = &record {
            let nonce = plan.data.verify.map_or(0, |v| v.run_nonce);
            plan.durability.durable_record = Some(record.writer(w, (u64::from(w) << 48) | (u64::from(nonce) << 32)));
        }
        let control = Arc::clone(control);
        let done = done_tx.clone();
        let tids = Arc::clone(tids);
        let spawned = thread::Builder::new().name(format!("iopulse-w{w}")).spawn(move || {
            // SIGINT/SIGTERM are taken by the coordinator's thread, never in a worker's I/O.
            signals::block_in_this_thread();
            // Where a live view finds this worker's CPU time (set-up: one store).
            tids.publish(w);
            let result = worker::run_on(engine, plan, &control);
            let _ = done.send(w);
            result
        });
        match spawned {
            Ok(h) => handles.push(Some(h)),
            Err(e) => {
                spawn_error =
                    Some(format!("cannot start worker thread {w} of {}: {e} (lower --threads)", spec.shape.threads));
                break;
            }
        }
    }
    drop(done_tx);
    Spawned { handles, done_rx, spawn_error, interrupted }
}

/// The sampler's thread, from the release: the time series' rows, the live line, and the
/// steady-state watch that may stop the run.
fn start_sampler(
    run: &Execute<'_>,
    control: &Arc<RunControl>,
    start_ns: u64,
    sampler: interval::Sampler,
    done: &Arc<AtomicBool>,
    tids: &Arc<super::live::WorkerTids>,
) -> Option<thread::JoinHandle<SamplerOutput>> {
    let spec = run.spec;
    let config = SamplerConfig {
        clock: control.clock,
        start_ns,
        interval_ns: spec.output.interval_ns,
        duration_ns: match spec.window.run_length {
            RunLength::Duration { ns } => Some(spec.window.ramp_ns.saturating_add(ns)),
            _ => None,
        },
        ramp_ns: spec.window.ramp_ns,
    };
    let watch =
        spec.window.steady_state.map(|s| SteadyWatch::new(s.criterion, s.window_intervals, spec.output.interval_ns));
    let (control, done) = (Arc::clone(control), Arc::clone(done));
    let live_run = LiveRun {
        label: run.label.clone(),
        duration_ns: config.duration_ns,
        engine: spec.io.engine.name().to_string(),
        depth: run.depth,
        workers: spec.shape.threads,
        paced: if spec.replay.is_some() { Some("lag") } else { spec.pacing.rate.is_some().then_some("lateness") },
        steady_state: spec.window.steady_state.map(|s| s.criterion.to_string()),
        targets: run.targets.iter().take(4).map(|t| t.plan.path.display().to_string()).collect(),
    };
    let view = crate::io::stats::live::view(live_run, run.shows_progress)
        .map(|v| super::live::Framer::new(v, run.devices.probe(), Arc::clone(tids)));
    thread::Builder::new()
        .name("iopulse-sampler".into())
        .spawn(move || {
            let has_view = view.is_some();
            let mut view = view;
            let mut observe = |i: Option<SampledInterval<'_>>| {
                if let Some(framer) = &mut view {
                    framer.observe(i);
                }
            };
            let observer: Option<RowObserver<'_>> = if has_view { Some(&mut observe) } else { None };
            let steady = watch.map(|watch| SteadyHook { watch, stop: &control.stop, code: stop_code::STEADY });
            sampler.run(&config, &control.epoch, &done, observer, steady)
        })
        .ok()
}

/// The other jobs of the phase wait for this one at the start line: it will not go, and
/// says why.
fn call_off(start_line: &StartLine<'_>, spawn_error: Option<&str>, interrupted: bool) {
    let why = spawn_error.unwrap_or(if interrupted {
        messages::INTERRUPTED_IN_SET_UP
    } else {
        "its workers could not set up"
    });
    start_line.call_off(why);
}

/// Where the window started, or why the run never had one: a worker thread not started, a
/// signal before the release, the start line refused, or workers that could not set up.
fn window_start(
    start: Option<u64>,
    spawn_error: Option<String>,
    interrupted: bool,
    open_error: Option<Error>,
    supervised: &watchdog::Supervised,
) -> Result<u64, Error> {
    if let Some(message) = spawn_error {
        return Err(RunError::Other(message).into());
    }
    if interrupted && start.is_none() {
        return Err(RunError::Other(messages::INTERRUPTED_IN_SET_UP.into()).into());
    }
    if let Some(e) = open_error {
        return Err(e);
    }
    let Some(start_ns) = start else {
        let error = supervised
            .finished
            .iter()
            .find_map(|w| w.failures.engine_error.as_ref().map(|m| (w.index, m.clone())))
            .map(|(worker, message)| RunError::WorkerSetup { worker, message })
            .unwrap_or_else(|| RunError::Other("workers could not start".into()));
        return Err(error.into());
    };
    Ok(start_ns)
}

/// `--fsync-on-close`: fsync every target once the workers are done, timed as a whole.
pub(super) fn fsync_targets(targets: &[PreparedTarget]) -> Result<u64, String> {
    let t0 = std::time::Instant::now();
    for t in targets {
        t.file.sync_all().map_err(|e| format!("fsync {} (--fsync-on-close): {e}", t.plan.path.display()))?;
    }
    Ok(t0.elapsed().as_nanos() as u64)
}
