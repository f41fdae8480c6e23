//! `--cpu-dma-latency USEC`: a CPU latency request of the kernel's PM QoS, held for a
//! run's window. While it is held, idle CPUs use only idle states they leave within USEC
//! µs; at 0 they poll instead of sleeping (unless the driver gives a sleeping state an exit
//! latency of 0, as ACPI's default C1 does), so a CPU that must take the next completion or
//! run the device's kernel worker is already awake.
//!
//! The request is the kernel's documented user-space interface: the 32-bit value written
//! to `/dev/cpu_dma_latency`, in force while that file stays open and dropped when it is
//! closed, by this process's end included. Nothing is left behind on the machine.
//!
//! Must not: be held outside a run's window, or read what it cost (`idle.rs` does).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// The kernel's device for CPU latency requests.
pub const DEVICE: &str = "/dev/cpu_dma_latency";

/// The largest value the flag takes, µs: a second. Beyond it no idle state is excluded.
pub const MAX_US: u32 = 1_000_000;

/// Whether this process may make the request and whether it would act: the device must be
/// writable (it is root's, mode 0600) and the machine must have a cpuidle driver (without
/// one, idle CPUs take their default path, which no request changes). The one-line reason
/// if not, naming the flag and the fix. Opening the device without writing to it adds a
/// request of no constraint, gone as it is closed: nothing changes on the machine.
pub fn check_allowed(latency_us: u32) -> Result<(), String> {
    let flag = format!("--cpu-dma-latency {latency_us}");
    let driver = super::idle::driver(Path::new("/"));
    if matches!(driver.as_deref(), None | Some("none")) {
        return Err(format!(
            "{flag}: this machine has no cpuidle driver (/sys/devices/system/cpu/cpuidle/current_driver is {}): its idle CPUs take no latency request; leave --cpu-dma-latency out",
            driver.as_deref().unwrap_or("missing")
        ));
    }
    if !Path::new(DEVICE).exists() {
        return Err(format!(
            "{flag}: {DEVICE} does not exist (a container that was not given the device, or a kernel without it): run where the device is, or leave --cpu-dma-latency out"
        ));
    }
    OpenOptions::new().write(true).open(DEVICE).map(drop).map_err(|e| {
        format!("{flag}: cannot open {DEVICE} for writing ({e}): the request needs root; run as root or leave --cpu-dma-latency out")
    })
}

/// A held request; dropping it (closing the file) ends it.
#[derive(Debug)]
pub struct LatencyRequest {
    _file: File,
    pub latency_us: u32,
}

impl LatencyRequest {
    /// Makes the request: idle CPUs are held to exit latencies of at most `latency_us`
    /// until the value is dropped.
    pub fn hold(latency_us: u32) -> Result<LatencyRequest, String> {
        let mut file = OpenOptions::new()
            .write(true)
            .open(DEVICE)
            .map_err(|e| format!("--cpu-dma-latency {latency_us}: cannot open {DEVICE}: {e}"))?;
        // The binary form: a native-endian 32-bit value (the text form needs hex).
        let value = i32::try_from(latency_us).unwrap_or(i32::MAX);
        file.write_all(&value.to_ne_bytes())
            .map_err(|e| format!("--cpu-dma-latency {latency_us}: cannot write {DEVICE}: {e}"))?;
        Ok(LatencyRequest { _file: file, latency_us })
    }
}
