//! The report of a profile run (`iopulse` with no target, `iopulse --profile NAME`): one
//! table under a line saying which profile ran on which target (and, when iopulse chose
//! the place, why there). A profile whose jobs are KDiskMark's tests (`TEST-read`,
//! `TEST-write`: the default profile) has a row per test with the read and the write side
//! by side, each in MB/s with IOPS and the p50/p99 latency beside it; another has a row per
//! job with the I/O mode it really ran with (and, for a step that flushes, a line with the
//! flush latency). With several passes (`--loops`), each figure is the median of the passes
//! and the spread of MB/s is shown. The figures are `result::profile_steps`'; this module
//! only lays them out.

use super::units;
use crate::figures::result::RunResult;
use crate::figures::result::jobs::JobsResult;
use crate::figures::result::profile_steps::{self, Step, StepFigures};
use std::fmt::Write as _;

/// The table of `doc`, the result of profile `name`; `place`: why the temporary file is
/// where it is, when iopulse chose (said above the table).
pub fn text(name: &str, doc: &JobsResult, place: Option<&str>) -> String {
    let mut out = String::new();
    let target = doc.jobs.first().and_then(|j| j.result.targets.first());
    let _ = write!(out, "iopulse {} · profile {name}", env!("CARGO_PKG_VERSION"));
    if let Some(t) = target {
        let _ = write!(out, " · {}", t.path);
        if let Some(fs) = &t.storage.filesystem {
            let _ = write!(out, " · {fs}");
        }
        if let Some(device) = &t.storage.device {
            let _ = write!(out, " on {device}");
        }
        let _ = write!(out, " · {}", units::bytes(t.size_bytes));
        if t.removed_after_run {
            out.push_str(" (temporary, removed)");
        }
    }
    out.push('\n');
    if let Some(place) = place {
        let _ = writeln!(out, "{place}");
    }
    let (steps, paired) = profile_steps::steps(doc);
    if paired {
        tests_table(&mut out, &steps);
    } else {
        jobs_table(&mut out, &steps);
    }
    out
}

/// Which of a result's messages: its warnings or its notes.
type Messages = fn(&RunResult) -> &Vec<String>;

/// The warnings (and, unless `quiet`, the notes) of `doc`'s steps, for under the table:
/// each text once, with the steps it concerns (`every step` when all of them); texts that
/// differ only in their figures are one line, the first step's, naming the others.
pub fn gathered(doc: &JobsResult, quiet: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let kinds: [(&str, Messages); 2] = [("⚠ ", |r| &r.outcome.warnings), ("note: ", |r| &r.outcome.notes)];
    let all_steps: Vec<String> = step_names(doc.jobs.iter().map(|j| j.job.as_str()));
    for (mark, messages) in kinds.into_iter().take(if quiet { 1 } else { 2 }) {
        // (figures masked, first text, its step, every step that said it, all the same)
        let mut groups: Vec<(String, String, Vec<String>, bool)> = Vec::new();
        for job in &doc.jobs {
            let step = profile_steps::step_label(profile_steps::step_of(&job.job));
            for text in messages(&job.result) {
                let masked: String = text.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
                match groups.iter_mut().find(|g| g.0 == masked) {
                    Some(g) => {
                        if !g.2.contains(&step) {
                            g.2.push(step.clone());
                        }
                        g.3 &= g.1 == *text;
                    }
                    None => groups.push((masked, text.clone(), vec![step.clone()], true)),
                }
            }
        }
        for (_, text, steps, same) in groups {
            let which = if all_steps.len() > 1 && steps.len() == all_steps.len() {
                "every step".to_string()
            } else {
                steps.join(", ")
            };
            let line = if same || steps.len() == 1 {
                format!("{mark}{text} ({which})")
            } else {
                format!("{mark}{text} ({}; likewise {} with their own figures)", steps[0], steps[1..].join(", "))
            };
            lines.push(line);
        }
    }
    lines
}

/// The steps of a profile's jobs, for people, each once (passes are one step).
fn step_names<'a>(jobs: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for job in jobs {
        let name = profile_steps::step_label(profile_steps::step_of(job));
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// KDiskMark's layout: a row per test, read and write side by side.
fn tests_table(out: &mut String, steps: &[Step]) {
    let all: Vec<&StepFigures> = steps.iter().flat_map(|s| s.read.iter().chain(s.write.iter())).collect();
    let passes = all.iter().map(|f| f.passes).max().unwrap_or(1);
    let length = all.first().map_or_else(String::new, |f| step_length(&f.first));
    let _ = write!(out, "I/O: {}", modes(&all));
    let _ = writeln!(
        out,
        " · {length} per step{}",
        if passes > 1 {
            format!(", {passes} passes: MB/s and IOPS their mean (as KDiskMark's Default), p50 and p99 their median")
        } else {
            String::new()
        }
    );
    let spread = passes > 1;
    let side = |label: &str| {
        let width = if spread { 45 } else { 39 };
        format!("{label:-^width$}")
    };
    let _ = writeln!(out, "{:<13}{} {}", "", side(" Read "), side(" Write "));
    let head = |out: &mut String| {
        let _ = write!(out, " {:>9} {:>9} {:>9} {:>9}", "MB/s", "IOPS", "p50", "p99");
        if spread {
            let _ = write!(out, " {:>5}", "±");
        }
    };
    let _ = write!(out, "{:<13}", "test");
    head(out);
    out.push_str(" │");
    head(out);
    out.push('\n');
    for s in steps {
        let _ = write!(out, "{:<13}", s.name);
        cells(out, s.read.as_ref(), spread);
        out.push_str(" │");
        cells(out, s.write.as_ref(), spread);
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "MB/s is 10^6 bytes per second (KDiskMark's unit); latency is per I/O, from submission to completion.{} Each step's full result: --output-format json",
        if spread { " ± is the spread of MB/s over the passes, (max − min) / median." } else { "" }
    );
    for line in tool_bound(steps) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(first) = all.first() {
        let _ = writeln!(
            out,
            "Beside KDiskMark (fio with its options): {}",
            kdiskmark_differences(&first.first).join("; ")
        );
    }
}

/// How long a step runs: its duration, or its I/O budget's share of the file, whichever
/// comes first (KDiskMark's fio stops at the file's size or its runtime); else its window.
fn step_length(r: &RunResult) -> String {
    use crate::workload::spec::RunLength;
    match (r.spec.window.run_length, r.spec.window.io_limit_percent) {
        (RunLength::Duration { ns }, Some(p)) if ns > 0 => {
            format!("at most {} or {p}% of the file", units::seconds_ns(ns))
        }
        _ => units::seconds_ns(r.window.window_ns),
    }
}

/// The steps whose worker was busy most of the window: there the tool's own CPU per I/O,
/// not the storage, set the figure (a tool that costs more per I/O, fio among them, shows
/// less), each with its cost.
fn tool_bound(steps: &[Step]) -> Vec<String> {
    let mut lines = Vec::new();
    for (s, f, side) in steps.iter().flat_map(|s| [(s, s.read.as_ref(), "read"), (s, s.write.as_ref(), "write")]) {
        let Some(f) = f else { continue };
        let r = &f.first;
        let threads = f64::from(r.spec.shape.threads.max(1));
        let busy = r.machine.cpu.workers.total_ns() as f64 / (r.window.window_ns.max(1) as f64 * threads);
        if busy >= 0.9 {
            lines.push(format!(
                "{} {side}: its worker was busy {:.0} % of the window at {} of CPU per I/O: the tool's own cost per I/O, not only the storage, set this figure (another tool's differs, and so does its figure)",
                s.name,
                busy * 100.0,
                units::latency_ns(r.machine.cpu.workers_per_io_ns.round() as u64)
            ));
        }
    }
    lines
}

/// Every way a KDiskMark-shaped step differs from what KDiskMark asks fio for (its default
/// settings: libaio, direct, 1 GiB, 5 s or the file's size once, end_fsync, malloc'd
/// buffers, 5 passes shown as their mean, MB/s as fio's KiB/s ÷ 1000).
fn kdiskmark_differences(r: &RunResult) -> Vec<String> {
    use crate::workload::spec::RunLength;
    let s = &r.spec;
    let mut out = vec![
        "MB/s here is 10^6 bytes/s, KDiskMark's is fio's KiB/s ÷ 1000 (2.4 % less)".to_string(),
        "no 5 s pause between tests and no page-cache drop before each pass (O_DIRECT bypasses the cache)".to_string(),
        "written blocks are unique random bytes (fio: one random buffer, scrambled per write)".to_string(),
    ];
    if s.io.engine != crate::io::engine::EngineKind::Libaio {
        out.push(format!("engine {} (KDiskMark: libaio)", s.io.engine.name()));
    }
    if !r.data.direct.effective {
        out.push("buffered I/O (KDiskMark: O_DIRECT)".to_string());
    }
    if s.io.engine_options.completion_wait != crate::base::primitives::spin_wait::CompletionWait::Sleep {
        out.push(
            "completions may be waited for by spinning up to 50 µs (fio sleeps in the kernel for each: --completion-wait sleep as fio)".to_string(),
        );
    }
    if s.io.buffer_pages.huge() {
        out.push(
            "buffers on huge pages: a 1 MiB I/O is one request where fio's 4 KiB pages may be split by the device's segment limit (--buffer-pages base as fio)".to_string(),
        );
    }
    match s.window.run_length {
        RunLength::Duration { ns } if ns != 5_000_000_000 => {
            out.push(format!("steps of {} (KDiskMark: 5 s)", units::seconds_ns(ns)))
        }
        _ => {}
    }
    if s.window.io_limit_percent.is_none() {
        out.push("each step runs its whole time (KDiskMark's fio stops once it moved the file's size)".to_string());
    }
    out
}

fn cells(out: &mut String, f: Option<&StepFigures>, spread: bool) {
    let Some(f) = f else {
        let _ = write!(out, " {:>9} {:>9} {:>9} {:>9}", "-", "-", "-", "-");
        if spread {
            let _ = write!(out, " {:>5}", "");
        }
        return;
    };
    let _ = write!(
        out,
        " {:>9} {:>9} {:>9} {:>9}",
        format!("{:.1}", f.bw_bytes_per_sec.mean / 1e6),
        units::iops(f.iops.mean),
        units::latency_ns(f.p50_ns.median.round() as u64),
        units::latency_ns(f.p99_ns.median.round() as u64)
    );
    if spread {
        let _ = write!(out, " {:>5}", format!("{:.0}%", f.bw_bytes_per_sec.relative() * 100.0));
    }
}

/// The I/O modes the steps ran with: one, or each with the steps that had it.
fn modes(all: &[&StepFigures]) -> String {
    let mut seen: Vec<(&'static str, Vec<&str>)> = Vec::new();
    for f in all {
        let mode = io_mode(&f.first);
        match seen.iter_mut().find(|(m, _)| *m == mode) {
            Some((_, jobs)) => jobs.push(&f.job),
            None => seen.push((mode, vec![&f.job])),
        }
    }
    if seen.len() == 1 {
        return seen[0].0.to_string();
    }
    seen.iter().map(|(m, jobs)| format!("{m} ({})", jobs.join(", "))).collect::<Vec<_>>().join("; ")
}

/// A row per job: its I/O mode, MB/s, IOPS, p50, p99 and time.
fn jobs_table(out: &mut String, steps: &[Step]) {
    let _ = writeln!(
        out,
        "{:<20} {:<22} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "step", "I/O mode", "MB/s", "IOPS", "p50", "p99", "time"
    );
    let mut passes = 1;
    for f in steps.iter().filter_map(|s| s.read.as_ref()) {
        let r = &f.first;
        passes = passes.max(f.passes);
        let _ = writeln!(
            out,
            "{:<20} {:<22} {:>10} {:>10} {:>10} {:>10} {:>8}",
            shown(&f.job),
            io_mode(r),
            format!("{:.1}", f.bw_bytes_per_sec.median / 1e6),
            units::iops(f.iops.median),
            units::latency_ns(f.p50_ns.median.round() as u64),
            units::latency_ns(f.p99_ns.median.round() as u64),
            units::seconds_ns(r.window.window_ns)
        );
        // A step that flushes (the etcd check): the flush latency is what it is read for.
        if let (Some(fl), Some(spec)) = (&r.figures.flush, &r.spec.durability.flush) {
            let _ = writeln!(
                out,
                "{:<20} {} {} · p50 {} · p99 {} · p99.9 {} · max {}",
                "  flush",
                units::count(fl.ops),
                spec.kind.name(),
                units::latency_ns(fl.latency_ns.p50),
                units::latency_ns(fl.latency_ns.p99),
                units::latency_ns(fl.latency_ns.p99_9),
                units::latency_ns(fl.latency_ns.max)
            );
        }
    }
    let _ = writeln!(
        out,
        "MB/s is 10^6 bytes per second; latency is per I/O, from submission to completion.{} Each step's full result: --output-format json",
        if passes > 1 { format!(" Figures are the median of {passes} passes.") } else { String::new() }
    );
}

/// How the step's I/O really went: O_DIRECT, O_DIRECT on memory (tmpfs), or buffered
/// (with why when O_DIRECT was asked for and refused).
fn io_mode(r: &RunResult) -> &'static str {
    match (r.data.direct.requested, r.data.direct.effective, r.data.direct.memory_backed) {
        (_, true, true) => "O_DIRECT (in memory)",
        (_, true, false) => "O_DIRECT",
        (true, false, _) => "buffered (no O_DIRECT)",
        (false, false, _) => "buffered",
    }
}

fn shown(name: &str) -> String {
    if name.chars().count() > 20 { name.chars().take(19).collect::<String>() + "…" } else { name.to_string() }
}
