//! What a live view of a running benchmark is handed: the run it shows (`LiveRun`, once at
//! its start) and each finished interval (`LiveFrame`): the interval's row as the time
//! series keeps it, each worker's share of it, the devices' own counters over it and the
//! machine's CPU (a metadata run: each operation kind's figures). Runs fill these in
//! (`run::live`, `metadata::intervals`); views format them (the live line,
//! `report::live_line`; the full-screen view, `report::live_screen`).
//!
//! And where runs find their view: the command layer registers what shows them
//! (`register`, once per process: the live line; `install`, for a command given `--live`:
//! the full screen), and each run asks for one (`view`), so that neither a run nor a
//! metadata run imports a report.
//!
//! Plain data and that registry: it must not read the machine, format or print.

use super::interval::{IntervalFigures, TimeSeriesRow};
pub use super::interval::{SampledInterval, WorkerInterval};
pub use super::steady_state::SteadyProgress;
use std::sync::{Mutex, OnceLock};

/// A run as a live view names it, told once when the run's window opens.
#[derive(Clone, Debug, Default)]
pub struct LiveRun {
    /// What the run is among others: a job's name, a profile's step, a sweep's point.
    pub label: Option<String>,
    /// Its planned length from the release, ramp included (`None`: until a count or the
    /// file's end).
    pub duration_ns: Option<u64>,
    /// The engine's name and the queue depth each worker keeps.
    pub engine: String,
    pub depth: u32,
    pub workers: u32,
    /// What a paced run's lateness is called: `lateness` under `--rate-iops`, `lag` in a
    /// replay of a trace; none for a run without a schedule.
    pub paced: Option<&'static str>,
    /// `--steady-state`'s rule, as the user gave it (`iops:5%`), if any.
    pub steady_state: Option<String>,
    /// The target paths (the first few, for the header).
    pub targets: Vec<String>,
}

/// A block device's own counters over the interval (sysfs `stat`), per second.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceRate {
    pub name: String,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    /// The share of the interval the device had I/O in flight (its `io_ticks`).
    pub busy_share: f64,
}

/// The machine's CPU over the interval (/proc/stat), as shares of all its CPUs' time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuShares {
    /// Running anything (this process included).
    pub busy: f64,
    /// Taken by the hypervisor for something else (a VM's steal).
    pub steal: f64,
    /// This process's share of the machine (its user and system time).
    pub process: f64,
    /// The machine's CPUs.
    pub cpus: u32,
}

/// One finished interval of a run, as a live view is handed it.
#[derive(Clone, Debug)]
pub struct LiveFrame {
    pub row: TimeSeriesRow,
    /// Per worker, in worker order (empty when the sampler did not split the interval).
    pub workers: Vec<WorkerInterval>,
    /// The devices under the targets (none when nothing touches storage).
    pub devices: Vec<DeviceRate>,
    pub cpu: Option<CpuShares>,
    pub steady: Option<SteadyProgress>,
    /// A metadata run's operation kinds over the interval (empty for a block run), and its
    /// phase (`create`, `stat`, ... or `mix`).
    pub kinds: Vec<KindFigures>,
    pub phase: Option<String>,
}

/// One operation kind's figures over an interval (a metadata run's `create`, `stat`, ...).
#[derive(Clone, Debug)]
pub struct KindFigures {
    pub name: &'static str,
    pub figures: IntervalFigures,
}

/// A run's live view, owned by its sampler's thread: handed each finished interval
/// (`Some`) and once at the run's end (`None`).
pub type LiveView = Box<dyn FnMut(Option<&LiveFrame>) + Send>;

/// What makes each run's live view: the command's choice, registered once (`run::live`),
/// so that a run feeds a view without knowing how it looks.
pub trait LiveViews: Sync {
    /// The view of one run.
    fn view(&self, run: LiveRun) -> LiveView;

    /// Whether every run shows in it, a job among others and a sweep's point included (a
    /// full screen has room for them all), or only a run that shows its progress on
    /// stderr (the live line: one line, one run).
    fn every_run(&self) -> bool {
        false
    }
}

static LINE: OnceLock<&'static dyn LiveViews> = OnceLock::new();
static SCREEN: Mutex<Option<&'static dyn LiveViews>> = Mutex::new(None);

/// What shows this process's runs on stderr while they go; the first registration stays.
pub fn register(views: &'static dyn LiveViews) {
    let _ = LINE.set(views);
}

/// While the returned value lives, every run shows in `views` instead (`--live`).
pub fn install(views: &'static dyn LiveViews) -> Installed {
    *SCREEN.lock().unwrap_or_else(|e| e.into_inner()) = Some(views);
    Installed(())
}

/// The installed view's time: it ends when this is dropped.
#[must_use = "the view is uninstalled when this is dropped"]
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        *SCREEN.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

fn installed() -> Option<&'static dyn LiveViews> {
    *SCREEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The views that would show a run that shows its progress on stderr or not
/// (`shows_progress`).
fn chosen(shows_progress: bool) -> Option<&'static dyn LiveViews> {
    installed().filter(|v| v.every_run() || shows_progress).or_else(|| LINE.get().copied().filter(|_| shows_progress))
}

/// A view of `run`, when one is registered for it.
pub fn view(run: LiveRun, shows_progress: bool) -> Option<LiveView> {
    chosen(shows_progress).map(|v| v.view(run))
}

/// Whether a view would be made: the run collects interval histograms for it.
pub fn registered(shows_progress: bool) -> bool {
    chosen(shows_progress).is_some()
}
