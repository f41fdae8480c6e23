//! Facts about the machine a run happened on, for the result. Reads /proc
//! only; anything it cannot read is left empty rather than failing the run.

use serde::{Deserialize, Serialize};
use std::fs;

/// The machine a run happened on, as the result records it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: u32,
    pub memory_total_bytes: u64,
}

pub fn collect() -> Environment {
    let read = |p: &str| fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
    let cpu_model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_total_bytes = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024);
    Environment {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model,
        cpus_online: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_total_bytes,
    }
}
