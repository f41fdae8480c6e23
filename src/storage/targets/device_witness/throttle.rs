//! The I/O limits a cgroup puts on this process for a device: cgroup v2's `io.max`
//! (`MAJ:MIN rbps=... wbps=... riops=... wiops=...`) and cgroup v1's
//! `blkio.throttle.{read,write}_{bps,iops}_device` (`MAJ:MIN VALUE`), in this process's
//! cgroup and every ancestor. A run so limited gives true but unexplained figures: the
//! witness names the limit. Only reads /proc/self/cgroup and the cgroup files.

use std::fs;
use std::path::{Path, PathBuf};

/// The limits on device `major:minor` for this process, each as `read 1 MiB/s (cgroup
/// /x)`; empty when there are none (or no cgroup can be read).
pub fn limits(cgroup_root: &Path, major_minor: &str) -> Vec<String> {
    let Ok(text) = fs::read_to_string("/proc/self/cgroup") else { return Vec::new() };
    let mut found = Vec::new();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let (base, v2) = match controllers {
            "" => (cgroup_root.join(if cgroup_root.join("unified").is_dir() { "unified" } else { "" }), true),
            c if c.split(',').any(|c| c == "blkio") => (cgroup_root.join("blkio"), false),
            _ => continue,
        };
        for dir in ancestors(&base, path) {
            let group = dir.strip_prefix(&base).map_or_else(|_| path.to_string(), |p| format!("/{}", p.display()));
            if v2 {
                found.extend(io_max(&dir, major_minor).into_iter().map(|l| format!("{l} (cgroup {group} io.max)")));
            } else {
                found.extend(blkio(&dir, major_minor).into_iter().map(|l| format!("{l} (cgroup {group} blkio)")));
            }
        }
    }
    found
}

/// `base/path` and each of its parents up to `base`.
fn ancestors(base: &Path, path: &str) -> Vec<PathBuf> {
    let mut dirs = vec![base.to_path_buf()];
    let mut at = base.to_path_buf();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at = at.join(part);
        dirs.push(at.clone());
    }
    dirs
}

fn shown(key: &str, value: u64) -> String {
    match key {
        "rbps" => format!("reads {}/s", crate::base::units::display::bytes(value)),
        "wbps" => format!("writes {}/s", crate::base::units::display::bytes(value)),
        "riops" => format!("reads {value} IOPS"),
        _ => format!("writes {value} IOPS"),
    }
}

fn io_max(dir: &Path, major_minor: &str) -> Vec<String> {
    let Ok(text) = fs::read_to_string(dir.join("io.max")) else { return Vec::new() };
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some(major_minor) {
            continue;
        }
        for w in words {
            if let Some((key, value)) = w.split_once('=')
                && let Ok(v) = value.parse::<u64>()
            {
                out.push(shown(key, v));
            }
        }
    }
    out
}

fn blkio(dir: &Path, major_minor: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (file, key) in [
        ("blkio.throttle.read_bps_device", "rbps"),
        ("blkio.throttle.write_bps_device", "wbps"),
        ("blkio.throttle.read_iops_device", "riops"),
        ("blkio.throttle.write_iops_device", "wiops"),
    ] {
        let Ok(text) = fs::read_to_string(dir.join(file)) else { continue };
        for line in text.lines() {
            let mut words = line.split_whitespace();
            if words.next() == Some(major_minor)
                && let Some(Ok(v)) = words.next().map(str::parse::<u64>)
                && v > 0
            {
                out.push(shown(key, v));
            }
        }
    }
    out
}
