//! The CPU's state during the window, for every result: the governor and boost of
//! the CPUs the workers ran on, SMT, their frequency sampled over the window, the
//! time a hypervisor took (steal), the work of everything else on the machine and the
//! idle states the CPUs slept in (`idle.rs`), with `--cpu-dma-latency`'s request
//! (`latency_request.rs`) that keeps them awake.
//! A result that does not record these cannot be compared with another: a governor
//! alone can move IOPS by tens of percent.
//!
//! `Recorder` is started just before the release, sampled by the coordinator while it
//! supervises (at most every `SAMPLE_EVERY`) and finished when the workers stop;
//! `Recorded::state` then says what it saw for the workers' CPUs. Anything the machine
//! does not expose is `None` (unknown), never guessed.
//!
//! Must not: run in a worker thread or format for the report (`warnings` gives the
//! sentences the run adds to its warnings; the text report formats the figures).

pub mod idle;
pub mod latency_request;
pub mod proc_stat;
mod sysfs;

use crate::io::placement::format_list;
use proc_stat::ProcStat;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often frequencies are sampled during the window, at most.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);

/// Other work above this many CPUs' worth is a warning (a loaded machine).
const LOADED_CPUS: f64 = 0.5;
/// Steal above this share of CPU time is a warning.
const STEAL_WARNING_FRACTION: f64 = 0.05;
/// At most this many I/Os in flight (all workers) ...
const IDLE_NOTE_MAX_IN_FLIGHT: u32 = 4;
/// ... and idle CPUs sleeping at least this often per I/O (on the loop device of
/// docs/engines.md, 0.09-0.12 while the flag doubled the IOPS; page-cache hits, which
/// wake no CPU, a few thousandths) ...
const IDLE_NOTE_MIN_SLEEPS_PER_IO: f64 = 0.05;
/// ... with a median latency below this, ns, are worth a note: a wake-up (microseconds,
/// more in a virtual machine) is then a large part of a latency.
const IDLE_NOTE_MAX_P50_NS: u64 = 50_000;

/// What the result records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuState {
    /// The CPUs the workers could run on: their pinned CPUs, or every CPU allowed.
    pub worker_cpus: Vec<u32>,
    /// The cpufreq governor of the workers' CPUs, each governor with its CPUs; CPUs
    /// whose governor is unknown are not listed (empty: unknown, e.g. in most VMs).
    pub governors: BTreeMap<String, Vec<u32>>,
    /// Frequency boost (turbo) enabled; null: unknown.
    pub boost: Option<bool>,
    /// SMT (hyper-threading) active; null: unknown.
    pub smt_active: Option<bool>,
    /// The kernel's SMT control ("on", "off", "forceoff", "notsupported"); null: unknown.
    pub smt_control: Option<String>,
    /// Per worker CPU where cpufreq reports it: its frequency over the window.
    pub frequencies: Vec<CpuFrequency>,
    /// Over the workers' CPUs with a frequency: the mean of their means and the lowest
    /// sample, kHz; null: unknown.
    pub frequency_mean_khz: Option<u64>,
    pub frequency_min_khz: Option<u64>,
    /// Share of the machine's CPU time taken by the hypervisor (steal) in the window;
    /// null: unknown.
    pub steal_fraction: Option<f64>,
    /// CPUs' worth of work by everything but this process in the window (the machine's
    /// busy time minus this process's CPU time, over the window); null: unknown.
    pub other_work_cpus: Option<f64>,
    /// The idle states of every online CPU over the window; null: unknown (no cpuidle, or
    /// a result of a version that did not record it).
    #[serde(default)]
    pub idle: Option<idle::CpuIdle>,
}

/// One CPU's frequency over the window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFrequency {
    pub cpu: u32,
    pub samples: u32,
    pub mean_khz: u64,
    pub min_khz: u64,
    /// The most it can run at (cpuinfo_max_freq); null: unknown.
    pub max_khz: Option<u64>,
}

/// Frequency samples of one CPU.
#[derive(Clone, Copy, Debug, Default)]
struct Samples {
    count: u32,
    sum_khz: u64,
    min_khz: u64,
}

/// Samples the CPU's state over the window.
pub struct Recorder {
    root: PathBuf,
    start: Option<ProcStat>,
    online: Vec<u32>,
    /// Per online CPU; empty once no CPU reported a frequency (nothing to sample).
    samples: BTreeMap<u32, Samples>,
    last_sample: Instant,
    idle_start: Option<idle::IdleSnapshot>,
}

impl Recorder {
    /// Reads the machine's counters under `root` (`/` for this machine) as the window opens.
    pub fn start(root: &Path) -> Self {
        let online = sysfs::online_cpus(root).unwrap_or_default();
        let mut r = Recorder {
            root: root.to_path_buf(),
            start: read_proc_stat(root),
            samples: online.iter().map(|&c| (c, Samples::default())).collect(),
            idle_start: idle::snapshot(root, &online),
            online,
            last_sample: Instant::now(),
        };
        r.sample_now();
        // Without cpufreq (most VMs) there is nothing to sample during the window.
        if r.samples.values().all(|s| s.count == 0) {
            r.samples.clear();
        }
        r
    }

    /// Samples the frequencies, unless the last sample is younger than `SAMPLE_EVERY`.
    pub fn sample(&mut self) {
        if self.last_sample.elapsed() >= SAMPLE_EVERY {
            self.sample_now();
        }
    }

    fn sample_now(&mut self) {
        self.last_sample = Instant::now();
        for (&cpu, s) in self.samples.iter_mut() {
            if let Some(khz) = sysfs::current_khz(&self.root, cpu) {
                s.min_khz = if s.count == 0 { khz } else { s.min_khz.min(khz) };
                s.count += 1;
                s.sum_khz += khz;
            }
        }
    }

    /// The last sample and the machine's counters as the window closes.
    pub fn finish(mut self) -> Recorded {
        self.sample_now();
        let end = read_proc_stat(&self.root);
        let window = self.start.zip(end).map(|(start, end)| Window { start, end });
        let idle_end = idle::snapshot(&self.root, &self.online);
        let idle = self.idle_start.zip(idle_end);
        Recorded { root: self.root, online: self.online, samples: self.samples, window, idle }
    }
}

struct Window {
    start: ProcStat,
    end: ProcStat,
}

/// What was seen over the window, before it is narrowed to the workers' CPUs.
pub struct Recorded {
    root: PathBuf,
    online: Vec<u32>,
    samples: BTreeMap<u32, Samples>,
    window: Option<Window>,
    idle: Option<(idle::IdleSnapshot, idle::IdleSnapshot)>,
}

impl Recorded {
    /// The state of `worker_cpus` (empty: every online CPU), with `process_cpu_ns` the
    /// CPU time this process used over a window of `window_ns`.
    pub fn state(&self, worker_cpus: &[u32], process_cpu_ns: u64, window_ns: u64) -> CpuState {
        let worker_cpus = if worker_cpus.is_empty() { self.online.clone() } else { worker_cpus.to_vec() };
        let mut governors: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for &cpu in &worker_cpus {
            if let Some(g) = sysfs::governor(&self.root, cpu) {
                governors.entry(g).or_default().push(cpu);
            }
        }
        let frequencies: Vec<CpuFrequency> = worker_cpus
            .iter()
            .filter_map(|&cpu| {
                let s = self.samples.get(&cpu).filter(|s| s.count > 0)?;
                Some(CpuFrequency {
                    cpu,
                    samples: s.count,
                    mean_khz: s.sum_khz / u64::from(s.count),
                    min_khz: s.min_khz,
                    max_khz: sysfs::max_khz(&self.root, cpu),
                })
            })
            .collect();
        let frequency_mean_khz = (!frequencies.is_empty())
            .then(|| frequencies.iter().map(|f| f.mean_khz).sum::<u64>() / frequencies.len() as u64);
        let frequency_min_khz = frequencies.iter().map(|f| f.min_khz).min();
        let (smt_active, smt_control) = sysfs::smt(&self.root);
        let (mut steal_fraction, mut other_work_cpus) = (None, None);
        if let Some(w) = &self.window {
            let machine = w.end.machine.since(&w.start.machine);
            let cpus = w.end.per_cpu.len().max(1) as f64;
            if machine.total() > 0 {
                steal_fraction = Some(machine.steal as f64 / machine.total() as f64);
                if window_ns > 0 {
                    // Busy CPUs over the window (ticks cancel), less this process's share.
                    let busy_cpus = machine.busy as f64 / machine.total() as f64 * cpus;
                    other_work_cpus = Some((busy_cpus - process_cpu_ns as f64 / window_ns as f64).max(0.0));
                }
            }
        }
        CpuState {
            worker_cpus,
            governors,
            boost: sysfs::boost(&self.root),
            smt_active,
            smt_control,
            frequencies,
            frequency_mean_khz,
            frequency_min_khz,
            steal_fraction,
            other_work_cpus,
            idle: self.idle.as_ref().map(|(start, end)| idle::between(&self.root, start, end)),
        }
    }
}

/// The machine's CPU counters under `root` (`/` for this machine), if readable.
pub fn read_proc_stat(root: &Path) -> Option<ProcStat> {
    proc_stat::parse(&std::fs::read_to_string(root.join("proc/stat")).ok()?)
}

/// At most 4 I/Os in flight over all workers (`in_flight`) with a median latency
/// (`p50_ns`) under 50 µs, while idle CPUs slept at least once per 20 I/Os and no
/// `--cpu-dma-latency` was held: the note that their wake-ups can be part of the
/// latencies, and the flag that keeps them awake. The flag's cost is in the result
/// (`idle.poll_cpus`).
pub fn idle_note(state: &CpuState, in_flight: u32, p50_ns: u64) -> Option<String> {
    let idle = state.idle.as_ref()?;
    let per_io = idle.sleeps_per_io?;
    if idle.latency_limit_us.is_some()
        || in_flight > IDLE_NOTE_MAX_IN_FLIGHT
        || p50_ns == 0
        || p50_ns >= IDLE_NOTE_MAX_P50_NS
        || per_io < IDLE_NOTE_MIN_SLEEPS_PER_IO
    {
        return None;
    }
    let deepest =
        idle.states.iter().filter(|s| s.entries > 0 && s.name != idle::POLL_STATE).max_by_key(|s| s.entries)?;
    Some(format!(
        "at {in_flight} I/O{} in flight with a median of {:.1} µs, waking an idle CPU (to take the completion or run the device's kernel worker) can be a large part of each latency: idle CPUs slept {per_io:.2} times per I/O, mostly in {}; --cpu-dma-latency 0 keeps them awake for the run (root; it burns the idle CPUs' time)",
        if in_flight == 1 { "" } else { "s" },
        p50_ns as f64 / 1e3,
        deepest.name
    ))
}

/// What in `state` makes the figures hard to compare: a powersave governor on a
/// worker CPU, a loaded machine, a hypervisor taking CPU time. `loop_devices`: loop
/// devices under the targets, whose I/O the kernel's loop workers do on this machine's
/// CPUs; that CPU time is the run's own but counts as other work, and the warning says so.
pub fn warnings(state: &CpuState, loop_devices: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(cpus) = state.governors.get("powersave") {
        out.push(format!(
            "CPU governor powersave on CPUs {} where the workers ran: the CPUs may run below their speed and results vary; for comparable figures set the performance governor (cpupower frequency-set -g performance)",
            format_list(cpus)
        ));
    }
    if let Some(other) = state.other_work_cpus.filter(|&o| o > LOADED_CPUS) {
        let own_io = if loop_devices.is_empty() {
            String::new()
        } else {
            format!(
                " (part of it may be this run's own I/O: the kernel's workers for {} do it on this machine's CPUs)",
                loop_devices.join(", ")
            )
        };
        out.push(format!(
            "the machine was busy with other work: {other:.1} CPUs' worth on average during the window, beside this run; figures may not be comparable with a run on an idle machine{own_io}"
        ));
    }
    if let Some(steal) = state.steal_fraction.filter(|&s| s > STEAL_WARNING_FRACTION) {
        out.push(format!(
            "the hypervisor took {:.1}% of the CPU time during the window (steal): other guests compete for the host's CPUs",
            steal * 100.0
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sysfs::fake::{cpus_with_cpufreq, write};
    use super::*;

    fn proc_stat(root: &Path, busy: u64, idle: u64, steal: u64) {
        // Two CPUs, split evenly.
        let line = |name: &str, d: u64| format!("{name} {} 0 0 {} 0 0 0 {}\n", busy / d, idle / d, steal / d);
        write(root, "proc/stat", &format!("{}{}{}", line("cpu ", 1), line("cpu0", 2), line("cpu1", 2)));
    }

    #[test]
    fn a_fake_machine_reads_governors_frequencies_steal_and_other_work() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        cpus_with_cpufreq(root, &[(0, "performance", 3_000_000, 4_000_000), (1, "powersave", 1_000_000, 4_000_000)]);
        write(root, "sys/devices/system/cpu/cpufreq/boost", "0\n");
        write(root, "sys/devices/system/cpu/smt/active", "0\n");
        write(root, "sys/devices/system/cpu/smt/control", "off\n");
        proc_stat(root, 1000, 1000, 0);
        let mut r = Recorder::start(root);
        // CPU 0 slows down during the window.
        write(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2000000\n");
        r.sample_now();
        // Over the window: 300 busy, 100 idle, 100 steal ticks of 500 on 2 CPUs.
        proc_stat(root, 1300, 1100, 100);
        let state = r.finish().state(&[0, 1], 500_000_000, 1_000_000_000);
        assert_eq!(state.worker_cpus, vec![0, 1]);
        assert_eq!(state.governors["performance"], vec![0]);
        assert_eq!(state.governors["powersave"], vec![1]);
        assert_eq!(
            (state.boost, state.smt_active, state.smt_control.as_deref()),
            (Some(false), Some(false), Some("off"))
        );
        let f0 = &state.frequencies[0];
        // Samples: start (3.0 GHz), one during (2.0), the last at finish (2.0).
        assert_eq!((f0.cpu, f0.samples, f0.min_khz, f0.max_khz), (0, 3, 2_000_000, Some(4_000_000)));
        assert_eq!(f0.mean_khz, 2_333_333);
        assert_eq!(state.frequency_min_khz, Some(1_000_000));
        assert_eq!(state.frequency_mean_khz, Some((2_333_333 + 1_000_000) / 2));
        assert!((state.steal_fraction.unwrap() - 0.2).abs() < 1e-9);
        // 300/500 of 2 CPUs busy = 1.2 CPUs; this process used 0.5 of them.
        assert!((state.other_work_cpus.unwrap() - 0.7).abs() < 1e-9, "{state:?}");
        let w = warnings(&state, &[]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("powersave on CPUs 1"), "{w:?}");
        assert!(w[1].contains("0.7 CPUs") && !w[1].contains("own I/O"), "{w:?}");
        assert!(w[2].contains("20.0%"), "{w:?}");
        // On a loop device, the loop workers' CPU time is in the other work: said so.
        let w = warnings(&state, &["loop3".to_string()]);
        assert!(w[1].contains("0.7 CPUs") && w[1].contains("own I/O: the kernel's workers for loop3"), "{w:?}");
        // Narrowed to the CPUs workers were pinned to.
        let only0 = Recorder::start(root).finish().state(&[0], 0, 1_000_000_000);
        assert_eq!(only0.worker_cpus, vec![0]);
        assert!(!only0.governors.contains_key("powersave"));
        assert!(warnings(&only0, &[]).iter().all(|w| !w.contains("powersave")));
    }

    #[test]
    fn the_idle_note_comes_at_low_depth_and_short_latency_when_idle_cpus_slept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/devices/system/cpu/online", "0-1\n");
        for cpu in 0..2 {
            idle::fake::state(root, cpu, 0, "POLL", 0, 0, 0);
            idle::fake::state(root, cpu, 1, "C1", 2, 0, 0);
        }
        let recorder = Recorder::start(root);
        idle::fake::state(root, 0, 1, "C1", 2, 500, 9_000);
        let mut state = recorder.finish().state(&[], 0, 1_000_000_000);
        assert_eq!(state.idle.as_ref().unwrap().sleeps, 500);
        // 500 sleeps over 1,000 I/Os.
        state.idle.as_mut().unwrap().sleeps_per_io = Some(0.5);
        let note = idle_note(&state, 1, 14_000).expect("QD 1, 14 µs, CPUs slept");
        assert!(note.contains("at 1 I/O in flight") && note.contains("14.0 µs") && note.contains("in C1"), "{note}");
        assert!(note.contains("0.50 times per I/O") && note.contains("--cpu-dma-latency 0"), "{note}");
        // More in flight, longer latencies, nothing completed and rare sleeps are left alone.
        assert_eq!(idle_note(&state, 8, 14_000), None);
        assert_eq!(idle_note(&state, 1, 50_000), None);
        assert_eq!(idle_note(&state, 1, 0), None);
        state.idle.as_mut().unwrap().sleeps_per_io = Some(0.01);
        assert_eq!(idle_note(&state, 1, 14_000), None, "page-cache hits wake no CPU");
        // Held by the flag: nothing to say.
        state.idle.as_mut().unwrap().sleeps_per_io = Some(0.5);
        state.idle.as_mut().unwrap().latency_limit_us = Some(0);
        assert_eq!(idle_note(&state, 1, 14_000), None);
    }

    #[test]
    fn a_machine_without_cpufreq_or_proc_stat_reads_unknown_never_guessed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/devices/system/cpu/online", "0-1\n");
        let state = Recorder::start(root).finish().state(&[], 1_000, 1_000_000_000);
        assert_eq!(state.worker_cpus, vec![0, 1], "unpinned: every online CPU");
        assert!(state.governors.is_empty());
        assert!(state.frequencies.is_empty());
        assert_eq!(state.frequency_mean_khz, None);
        assert_eq!(state.boost, None);
        assert_eq!(state.smt_active, None);
        assert_eq!(state.steal_fraction, None);
        assert_eq!(state.other_work_cpus, None);
        assert_eq!(state.idle, None, "no cpuidle: unknown");
        assert!(warnings(&state, &[]).is_empty());
    }

    #[test]
    fn this_machine_gives_a_state_without_failing() {
        let recorder = Recorder::start(Path::new("/"));
        // /proc/stat counts in 10 ms ticks: let a few pass.
        std::thread::sleep(Duration::from_millis(100));
        let state = recorder.finish().state(&[], 0, 100_000_000);
        assert!(!state.worker_cpus.is_empty());
        // /proc/stat exists on every Linux: the machine's figures are known.
        assert!(state.steal_fraction.is_some());
        assert!(state.other_work_cpus.is_some());
    }
}
