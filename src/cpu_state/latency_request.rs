//! `--cpu-dma-latency USEC`: a CPU latency request of the kernel's PM QoS, held for a
//! run's window. While it is held, idle CPUs use only idle states they leave within USEC
//! µs; at 0 they poll instead of sleeping, so a CPU that must take the next completion or
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

/// Whether this process may make the request (the device is root's, mode 0600): the
/// one-line reason it cannot, naming the flag and the fix. Opens nothing.
pub fn check_allowed(latency_us: u32) -> Result<(), String> {
    use nix::unistd::{AccessFlags, access};
    let path = Path::new(DEVICE);
    if !path.exists() {
        return Err(format!(
            "--cpu-dma-latency {latency_us}: {DEVICE} does not exist (a kernel without CPU idle management takes no latency request): leave --cpu-dma-latency out"
        ));
    }
    access(path, AccessFlags::W_OK).map_err(|e| {
        format!(
            "--cpu-dma-latency {latency_us}: cannot write {DEVICE} ({}): the request needs root; run as root or leave --cpu-dma-latency out",
            e.desc()
        )
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
