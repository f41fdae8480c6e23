//! The report's lines about the storage: the I/O mode, the page cache, the device's own
//! counters, and holes read. Formats; computes nothing.

use crate::figures::result::RunResult;
use crate::output::report::units;

/// One loud line per target whose read region holds holes or unwritten extents (reads
/// of them never reach the device), naming the file, the share and the fix.
pub(super) fn hole_lines(r: &RunResult, shown_targets: usize) -> Vec<String> {
    if r.spec.access.read_percent == 0 {
        return Vec::new();
    }
    r.targets
        .iter()
        .take(shown_targets)
        .filter_map(|t| t.storage.allocation.as_ref().map(|a| (t, a)))
        .filter(|(_, a)| a.unallocated_bytes() > 0)
        .map(|(t, a)| {
            let at_least = if a.allocated_bytes.is_none() { "at least " } else { "" };
            let fix = a.not_laid_out.as_deref().map_or(String::new(), |why| format!("; {why}"));
            format!(
                "⚠ {at_least}{} of the read region of {} is holes or unwritten extents ({} of {}): reads never reach the device{fix}",
                a.unallocated_percent(),
                t.path,
                units::bytes(a.unallocated_bytes()),
                units::bytes(a.region_bytes)
            )
        })
        .collect()
}

/// One line on the page cache of the run's regions: the state asked for (`--cache`),
/// residency when the window opened and closed, and what was done before (a buffered read
/// run that starts mostly cached without asking for a warm cache is a warning: it measures
/// memory; so is a warm cache that did not fit). `None` for results of versions that did
/// not measure it. Several targets: their regions taken together.
pub(super) fn cache_line(r: &RunResult) -> Option<String> {
    use crate::storage::targets::page_cache::{DROP_LEFT_FRACTION, WARM_FRACTION, percent};
    use crate::workload::spec::CacheMode;
    let caches: Vec<_> = r.targets.iter().filter_map(|t| t.storage.page_cache.as_ref()).collect();
    if caches.is_empty() {
        return None;
    }
    let region: u64 = caches.iter().map(|c| c.region_bytes).sum();
    // The regions' share together, or unknown when any target's is.
    let share = |f: fn(&crate::storage::targets::PageCache) -> Option<f64>| -> Option<f64> {
        let known: Option<Vec<(f64, u64)>> = caches.iter().map(|c| f(c).map(|v| (v, c.region_bytes))).collect();
        let known = known?;
        Some(if region == 0 { 0.0 } else { known.iter().map(|(v, b)| v * *b as f64).sum::<f64>() / region as f64 })
    };
    let (start, end) = (share(|c| c.start_resident_fraction), share(|c| c.end_resident_fraction));
    let shown = |f: Option<f64>| f.map_or_else(|| "unknown".to_string(), percent);
    let targets = if caches.len() > 1 { format!(" · {} targets", caches.len()) } else { String::new() };
    let unknown = caches.iter().find_map(|c| c.unknown_reason.as_deref());
    // The state asked for: recorded per target; results before --cache say it by `invalidated`.
    let mode = caches.iter().find_map(|c| c.mode).unwrap_or(if caches.iter().all(|c| c.invalidated) {
        CacheMode::Drop
    } else {
        CacheMode::Keep
    });
    let shortfall = caches.iter().find_map(|c| c.warm_shortfall.as_deref());
    let text = if start.is_none() && end.is_none() {
        let why = unknown.unwrap_or("not measured");
        let done = if caches.iter().all(|c| c.invalidated) { "invalidated before the window; " } else { "" };
        format!("{done}page-cache residency unknown ({why})")
    } else if caches.iter().all(|c| c.direct) {
        let done = if caches.iter().all(|c| c.invalidated) {
            "invalidated before the window".to_string()
        } else {
            let why = caches.iter().find_map(|c| c.not_invalidated.as_deref()).unwrap_or("--cache keep");
            format!("not invalidated: {why}")
        };
        if r.data.direct.memory_backed {
            format!(
                "O_DIRECT on a memory filesystem: the data lives in the page cache ({} of the region resident at start, {} at end)",
                shown(start),
                shown(end)
            )
        } else if r.data.direct.served_through_cache.is_some() {
            format!(
                "⚠ O_DIRECT, but served through the page cache ({} of the region cached at start, {} at end; {done})",
                shown(start),
                shown(end)
            )
        } else {
            format!(
                "O_DIRECT: I/Os bypass the page cache ({} of the region cached at start, {} at end; {done})",
                shown(start),
                shown(end)
            )
        }
    } else if mode == CacheMode::Warm {
        match shortfall {
            Some(why) => format!(
                "⚠ read into the page cache before the window, but it does not fit ({why}): {} resident at start, {} at end — part of the reads reach the device",
                shown(start),
                shown(end)
            ),
            None => format!(
                "read into the page cache before the window ({} resident at start, {} at end): buffered reads measure memory, as asked",
                shown(start),
                shown(end)
            ),
        }
    } else if caches.iter().all(|c| c.invalidated) {
        match share(|c| c.after_invalidate_resident_fraction) {
            Some(left) if left > DROP_LEFT_FRACTION => format!(
                "⚠ invalidated before the window, but {} stayed resident (dirty or mapped pages): {} resident at start, {} at end",
                percent(left),
                shown(start),
                shown(end)
            ),
            _ => format!("invalidated before the window ({} resident at start, {} at end)", shown(start), shown(end)),
        }
    } else {
        let why = caches.iter().find_map(|c| c.not_invalidated.as_deref()).unwrap_or("--cache keep");
        match start {
            Some(s) if r.spec.access.read_percent > 0 && s >= WARM_FRACTION => format!(
                "⚠ buffered reads: {} of the region in the page cache at start (not invalidated: {why}) — figures are memory speed, not the device",
                percent(s)
            ),
            _ => format!("not invalidated ({why}): {} resident at start, {} at end", shown(start), shown(end)),
        }
    };
    Some(format!("{:<9} {}: {text}{targets}", "Cache", mode.name()))
}

/// The device witness: per device under the targets (targets on one device share a line),
/// the share of the run's reads and writes it saw, the devices stacked below it, and its
/// warning. Nothing for a target with no device (tmpfs, the null engine).
pub(super) fn device_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    let mut shown: Vec<&crate::storage::targets::DeviceWitness> = Vec::new();
    for w in r.targets.iter().filter_map(|t| t.storage.device_witness.as_ref()) {
        if shown.iter().any(|s| s.device == w.device && s.delta == w.delta) {
            continue;
        }
        shown.push(w);
        let dev = &w.device;
        let pct = |s: Option<f64>| s.map_or_else(|| "?".to_string(), |s| format!("{:.1} %", 100.0 * s));
        let mut seen = Vec::new();
        // A device far above iopulse's own bytes was mostly doing something else: its
        // bytes beside the run's, not a share. Buffered reads make the kernel read ahead:
        // that too can be far above the run's own.
        let read_traffic = if r.data.direct.effective { "other traffic" } else { "readahead or other traffic" };
        let other = |traffic: &str, verb: &str, device_bytes: Option<u64>, own_bytes: u64| {
            format!(
                "{traffic} on {dev}: it {verb} {} where this run {verb} {}",
                device_bytes.map_or_else(|| "?".to_string(), units::bytes),
                units::bytes(own_bytes)
            )
        };
        if w.iopulse.read_ios > 0 {
            seen.push(if w.caveats.read_other_traffic {
                other(read_traffic, "read", w.delta.map(|d| d.read_bytes), w.iopulse.read_bytes)
            } else {
                format!(
                    "{} of the bytes read ({} of the read I/Os)",
                    pct(w.shares.read_bytes_share),
                    pct(w.shares.read_ios_share)
                )
            });
        }
        if w.iopulse.write_ios > 0 {
            seen.push(if w.caveats.write_other_traffic {
                other("other traffic", "wrote", w.delta.map(|d| d.write_bytes), w.iopulse.write_bytes)
            } else {
                format!(
                    "{} of the bytes written ({} of the write I/Os)",
                    pct(w.shares.write_bytes_share),
                    pct(w.shares.write_ios_share)
                )
            });
        }
        let shared = if w.targets_on_device > 1 {
            format!(", {} targets on it together", w.targets_on_device)
        } else {
            String::new()
        };
        let warn = if w.caveats.warning.is_some() { "⚠ " } else { "" };
        let via = w.caveats.via.as_deref().map_or(String::new(), |v| format!(" ({v})"));
        let text = match (&w.delta, &w.unknown_reason) {
            (None, why) => format!("{dev}{via}: counters unknown ({})", why.as_deref().unwrap_or("not read")),
            (Some(_), _) if seen.is_empty() => format!("{dev}{via}: the run completed no I/O"),
            (Some(_), _) => {
                let saw: Vec<String> = seen
                    .iter()
                    .map(|s| if s.contains(" traffic on ") { s.clone() } else { format!("saw {s}") })
                    .collect();
                format!("{warn}{dev}{via} {}{shared} (includes any other traffic on {dev})", saw.join(", "))
            }
        };
        lines.push(format!("{:<9} {text}", "Device"));
        if let Some(memory) = &w.caveats.memory {
            lines.push(format!("{:<9} ⚠ memory, not storage: {memory}", ""));
        }
        if let Some(limit) = &w.caveats.throttle {
            lines.push(format!("{:<9} ⚠ throttled by a cgroup: {limit}", ""));
        }
        for s in &w.stacked {
            let figures = match &s.delta {
                Some(d) => format!(
                    "read {} in {} I/Os, wrote {} in {} I/Os",
                    units::bytes(d.read_bytes),
                    units::count(d.read_ios),
                    units::bytes(d.write_bytes),
                    units::count(d.write_ios)
                ),
                None => format!("counters unknown ({})", s.unknown_reason.as_deref().unwrap_or("not read")),
            };
            lines.push(format!("{:<9} below {}: {} {figures}", "", s.below, s.name));
        }
        // Results before `warnings` have only `warning`.
        let warnings = if w.caveats.warnings.is_empty() {
            w.caveats.warning.iter().cloned().collect()
        } else {
            w.caveats.warnings.clone()
        };
        for warning in warnings {
            lines.push(format!("{:<9} ⚠ {warning}", ""));
        }
    }
    lines
}

/// The I/O mode line, exactly as users grep for it; with an engine that moves no bytes,
/// the line that says nothing reached storage.
pub(super) fn io_mode_line(r: &RunResult) -> String {
    if !r.data.storage_touched {
        let direct = if r.data.direct.requested { " (--direct: nothing to bypass)" } else { "" };
        return format!(
            "Storage:  none: the {} engine moves no bytes{direct}; these figures are iopulse's own ceiling",
            r.engine.name
        );
    }
    match (&r.data.direct.requested, &r.data.direct.effective, &r.data.direct.reason) {
        (true, true, _) if r.data.direct.memory_backed => {
            "I/O mode: ⚠ O_DIRECT on a memory filesystem (accepted, but served from memory)".to_string()
        }
        (true, true, _) if r.data.direct.served_through_cache.is_some() => format!(
            "I/O mode: ⚠ O_DIRECT accepted, but the filesystem served it through the page cache: {}",
            r.data.direct.served_through_cache.as_deref().unwrap_or_default()
        ),
        (true, true, _) if r.data.direct.cached_below.is_some() => format!(
            "I/O mode: ⚠ O_DIRECT (page cache bypassed at the loop device, cached below it: {})",
            r.data.direct.cached_below.as_deref().unwrap_or_default()
        ),
        (true, true, _) if r.data.direct.memory_device.is_some() => format!(
            "I/O mode: ⚠ O_DIRECT on a memory device ({}): served from memory",
            r.data.direct.memory_device.as_deref().unwrap_or_default()
        ),
        (true, true, _) => "I/O mode: ✓ O_DIRECT (page cache bypassed)".to_string(),
        (true, false, Some(reason)) => format!("I/O mode: ⚠ BUFFERED (O_DIRECT refused: {reason})"),
        (true, false, None) => "I/O mode: ⚠ BUFFERED (O_DIRECT refused)".to_string(),
        (false, _, _) => "I/O mode: BUFFERED (page cache)".to_string(),
    }
}
