//! A run's live view fed: the view the command registered (`stats::live::view`) handed
//! each interval the sampler finishes, with the devices' own counters, the machine's CPU
//! and each worker's over it read here (`Framer`). So a run never imports a report. It
//! must not format or print.

use crate::io::cpu_state::{proc_stat, read_proc_stat};
use crate::io::stats::live::{CpuShares, DeviceRate, LiveFrame, LiveView, SampledInterval};
use crate::storage::targets::device_witness::DeviceProbe;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

/// Each worker thread's kernel id, published by the worker as it starts (0: not yet), so
/// that a live view can read its CPU time (`/proc/self/task/TID/schedstat`).
pub(super) struct WorkerTids(Vec<AtomicI32>);

impl WorkerTids {
    pub(super) fn new(workers: u32) -> Self {
        Self((0..workers).map(|_| AtomicI32::new(0)).collect())
    }

    /// Called by worker `w` on its own thread, once.
    pub(super) fn publish(&self, w: u32) {
        if let Some(slot) = self.0.get(w as usize) {
            slot.store(nix::unistd::gettid().as_raw(), Ordering::Relaxed);
        }
    }
}

/// A run's view with what the sampler does not know added to each interval: the devices'
/// own counters, the machine's CPU and each worker's over it. Lives on the sampler's thread.
pub(super) struct Framer {
    view: LiveView,
    devices: DeviceProbe,
    cpu: CpuProbe,
    tids: Arc<WorkerTids>,
    /// Each worker's CPU time at the last reading (`None`: not read yet or unreadable).
    worker_cpu_ns: Vec<Option<u64>>,
    last_read: Instant,
}

impl Framer {
    pub(super) fn new(view: LiveView, devices: DeviceProbe, tids: Arc<WorkerTids>) -> Self {
        let worker_cpu_ns = vec![None; tids.0.len()];
        Self { view, devices, cpu: CpuProbe::new(), tids, worker_cpu_ns, last_read: Instant::now() }
    }

    /// Each worker's share of one CPU since the last reading.
    fn worker_cpu(&mut self, seconds: f64) -> Vec<Option<f64>> {
        self.tids
            .0
            .iter()
            .zip(&mut self.worker_cpu_ns)
            .map(|(tid, last)| {
                let tid = tid.load(Ordering::Relaxed);
                let now = (tid != 0).then(|| thread_cpu_ns(tid)).flatten();
                let share = match (*last, now) {
                    (Some(before), Some(now)) => Some(now.saturating_sub(before) as f64 / 1e9 / seconds),
                    _ => None,
                };
                *last = now;
                share
            })
            .collect()
    }

    /// Hands the view the interval (`Some`) or the run's end (`None`).
    pub(super) fn observe(&mut self, interval: Option<SampledInterval<'_>>) {
        let Some(SampledInterval { row, workers, steady }) = interval else {
            (self.view)(None);
            return;
        };
        // The devices and the CPU since the last reading: about one interval, read when
        // the interval is handed over (a row waits for its slowest worker).
        let now = Instant::now();
        let seconds = now.duration_since(self.last_read).as_secs_f64().max(1e-3);
        self.last_read = now;
        let devices = self
            .devices
            .read()
            .into_iter()
            .filter_map(|(name, delta)| {
                let d = delta?;
                Some(DeviceRate {
                    name,
                    read_iops: d.read_ios as f64 / seconds,
                    write_iops: d.write_ios as f64 / seconds,
                    read_bytes_per_sec: d.read_bytes as f64 / seconds,
                    write_bytes_per_sec: d.write_bytes as f64 / seconds,
                    busy_share: (d.io_ticks_ms as f64 / 1e3 / seconds).min(1.0),
                })
            })
            .collect();
        let cpu = self.worker_cpu(seconds);
        let mut workers = workers.to_vec();
        for (w, share) in workers.iter_mut().zip(cpu) {
            w.cpu_share = share;
        }
        let frame = LiveFrame {
            row: row.clone(),
            workers,
            devices,
            cpu: self.cpu.read(),
            steady,
            kinds: Vec::new(),
            phase: None,
        };
        (self.view)(Some(&frame));
    }
}

/// The machine's CPU (/proc/stat) and this process's (getrusage), read again and again.
struct CpuProbe {
    machine: Option<proc_stat::ProcStat>,
    process_ns: u64,
}

impl CpuProbe {
    fn new() -> Self {
        Self {
            machine: read_proc_stat(std::path::Path::new("/")),
            process_ns: crate::io::host::rusage::process_cpu().total_ns(),
        }
    }

    /// The shares since the last reading.
    fn read(&mut self) -> Option<CpuShares> {
        let machine = read_proc_stat(std::path::Path::new("/"));
        let process_ns = crate::io::host::rusage::process_cpu().total_ns();
        let shares = match (&self.machine, &machine) {
            (Some(before), Some(now)) => {
                let d = now.machine.since(&before.machine);
                let total = d.total().max(1) as f64;
                let cpus = now.per_cpu.len().max(1) as u32;
                // Ticks are USER_HZ (100 a second): the machine's ticks over its CPUs are the
                // span in hundredths of a second.
                let span_ns = d.total() as f64 / f64::from(cpus) * 1e7;
                Some(CpuShares {
                    busy: d.busy as f64 / total,
                    steal: d.steal as f64 / total,
                    process: (process_ns.saturating_sub(self.process_ns) as f64 / span_ns.max(1.0) / f64::from(cpus))
                        .min(1.0),
                    cpus,
                })
            }
            _ => None,
        };
        self.machine = machine;
        self.process_ns = process_ns;
        shares
    }
}

/// A thread of this process's time on a CPU, in nanoseconds (schedstat's first field).
fn thread_cpu_ns(tid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}
