//! The figures of concurrent runs added: latency histograms bucket by bucket, per op type
//! and per size, zones, CPU time, the tool's own time and depth counts. Checked arithmetic;
//! an input that overflows is named.

use super::{Input, MergeError};
use crate::figures::result::{BlockSizeFigures, CpuInfo, IoDepths, RunResult, SizeHistograms, ToolTime};
use crate::io::stats::{
    CpuTimes, LatencySummary, OpSummary, decode_histogram, encode_histogram, new_latency_histogram,
};
use hdrhistogram::Histogram;

/// `--bssplit`, `--block-align`: each size's figures over the inputs, latency from their
/// added histograms, shares recomputed from the merged counts.
/// Zones of concurrent runs of one workload: their I/Os added zone by zone (none when the
/// results disagree on the zones).
pub(super) fn merge_zones(results: &[&RunResult]) -> Vec<crate::figures::result::ZoneShare> {
    let Some(first) = results.first() else { return Vec::new() };
    let asked: Vec<f64> = first.figures.zones.iter().map(|z| z.io_percent_asked).collect();
    if results.iter().any(|r| r.figures.zones.iter().map(|z| z.io_percent_asked).ne(asked.iter().copied())) {
        return Vec::new();
    }
    let mut zones = first.figures.zones.clone();
    for z in zones.iter_mut() {
        z.ios = 0;
    }
    for r in results {
        for (sum, z) in zones.iter_mut().zip(&r.figures.zones) {
            sum.ios = sum.ios.saturating_add(z.ios);
        }
    }
    crate::figures::result::ZoneShare::refigure(&mut zones);
    zones
}

pub(super) fn merge_block_sizes(inputs: &[Input], m: &mut RunResult) -> Result<(), MergeError> {
    let mut sizes: Vec<u64> =
        inputs.iter().flat_map(|i| i.result.figures.block_sizes.iter().map(|b| b.size_bytes)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut figures = Vec::with_capacity(sizes.len());
    let mut histograms = Vec::with_capacity(sizes.len());
    for size in sizes {
        let mut hists = [new_latency_histogram(), new_latency_histogram(), new_latency_histogram()];
        let mut parts = Vec::new();
        for input in inputs {
            let Some(f) = input.result.figures.block_sizes.iter().find(|b| b.size_bytes == size) else { continue };
            if let Some(h) = input.result.histograms.block_sizes.iter().find(|h| h.size_bytes == size) {
                let texts = [("read", Some(&h.read)), ("write", Some(&h.write)), ("trim", h.trim.as_ref())];
                for (into, (op, text)) in hists.iter_mut().zip(texts) {
                    if let Some(text) = text {
                        let decoded = decode_histogram(text)
                            .map_err(|source| MergeError::Histogram { file: input.file.clone(), source })?;
                        add_within(into, &decoded, &input.file, &format!("histograms.block_sizes[{size}].{op}"))?;
                    }
                }
            }
            parts.push((input.file.as_str(), f));
        }
        let first = parts[0].1;
        let at = |op: &str| format!("block_sizes[{size}].{op}");
        let of = |get: fn(&BlockSizeFigures) -> Option<&OpSummary>| -> Vec<(&str, &OpSummary)> {
            parts.iter().filter_map(|(file, p)| Some((*file, get(p)?))).collect()
        };
        let trims = of(|p| p.trim.as_ref());
        figures.push(BlockSizeFigures {
            size_bytes: size,
            read: merge_op(&at("read"), &of(|p| Some(&p.read)), &hists[0])?,
            write: merge_op(&at("write"), &of(|p| Some(&p.write)), &hists[1])?,
            trim: if trims.is_empty() { None } else { Some(merge_op(&at("trim"), &trims, &hists[2])?) },
            ..first.clone()
        });
        histograms.push(SizeHistograms {
            size_bytes: size,
            read: encode_histogram(&hists[0]),
            write: encode_histogram(&hists[1]),
            trim: (!trims.is_empty()).then(|| encode_histogram(&hists[2])),
        });
    }
    // Summed in 128 bits: the sizes' counts were each checked, not their sum.
    let total = |f: fn(&BlockSizeFigures) -> u64| figures.iter().map(|b| u128::from(f(b))).sum::<u128>();
    let (reads, writes) = (total(|b| b.read.ops), total(|b| b.write.ops));
    let trims = total(|b| b.trim.map_or(0, |t| t.ops));
    let share = |ops: u64, of: u128| if of == 0 { 0.0 } else { 100.0 * ops as f64 / of as f64 };
    for b in &mut figures {
        b.read_share_percent = share(b.read.ops, reads);
        b.write_share_percent = share(b.write.ops, writes);
        b.trim_share_percent = b.trim.map(|t| share(t.ops, trims));
    }
    m.figures.block_sizes = figures;
    m.histograms.block_sizes = histograms;
    Ok(())
}

/// `add`, refusing a sum of more samples than a histogram can be written with (its V2
/// serialisation holds counts as i64: encoding more would panic), naming the `file` and
/// `field` of `other`, whose samples crossed the line.
pub(crate) fn add_within(
    into: &mut Histogram<u64>,
    other: &Histogram<u64>,
    file: &str,
    field: &str,
) -> Result<(), MergeError> {
    if into.len().saturating_add(other.len()) > i64::MAX as u64 {
        return Err(MergeError::HistogramCount {
            file: file.to_string(),
            field: field.to_string(),
            value: other.len(),
        });
    }
    crate::io::stats::add_histogram(into, other);
    Ok(())
}

/// Adds `other` (the `field` of `file`) into `into`, refusing a sum that overflows, or CPU
/// time whose user and sys parts together do.
fn add_cpu(into: &mut CpuTimes, other: &CpuTimes, file: &str, field: &str) -> Result<(), MergeError> {
    let overflow = |part: &str, value: u64| MergeError::Overflow {
        file: file.to_string(),
        field: format!("{field}.{part}"),
        value,
    };
    into.user_ns = into.user_ns.checked_add(other.user_ns).ok_or_else(|| overflow("user_ns", other.user_ns))?;
    into.sys_ns = into.sys_ns.checked_add(other.sys_ns).ok_or_else(|| overflow("sys_ns", other.sys_ns))?;
    into.user_ns.checked_add(into.sys_ns).ok_or_else(|| overflow("sys_ns", other.sys_ns))?;
    Ok(())
}

/// The latency summary of parts merged: percentiles from their added histogram `hist`,
/// the smallest min and largest max of the parts that have operations, and the mean
/// weighted by each part's operations (`ops`: their sum, already checked to fit).
pub(crate) fn merged_latency<'a>(
    hist: &Histogram<u64>,
    ops: u64,
    parts: impl Iterator<Item = (u64, &'a LatencySummary)> + Clone,
) -> LatencySummary {
    if ops == 0 {
        return LatencySummary::default();
    }
    let active = || parts.clone().filter(|(ops, _)| *ops > 0);
    let min = active().map(|(_, l)| l.min).min().unwrap_or(0);
    let max = active().map(|(_, l)| l.max).max().unwrap_or(0);
    // Each mean × its ops is below 2^128 over the ops' sum, which fits 64 bits.
    let weighted: u128 = active().map(|(ops, l)| u128::from(l.mean) * u128::from(ops)).sum();
    LatencySummary::from_histogram(hist, min, max, (weighted / u128::from(ops)) as u64)
}

/// The figures of one op type (`field`: `read`, `block_sizes[4096].write`) over concurrent
/// runs, each part with the file it came from; latency from their added histogram. A count
/// that does not fit in 64 bits is refused naming the file whose part made it overflow.
pub(super) fn merge_op(
    field: &str,
    parts: &[(&str, &OpSummary)],
    hist: &Histogram<u64>,
) -> Result<OpSummary, MergeError> {
    let sum = |name: &str, get: fn(&OpSummary) -> u64| {
        parts.iter().try_fold(0u64, |total, (file, p)| {
            total.checked_add(get(p)).ok_or_else(|| MergeError::Overflow {
                file: file.to_string(),
                field: format!("{field}.{name}"),
                value: get(p),
            })
        })
    };
    let ops = sum("ops", |p| p.ops)?;
    let bytes = sum("bytes", |p| p.bytes)?;
    let clamped_samples = sum("clamped_samples", |p| p.clamped_samples)?;
    let latency = merged_latency(hist, ops, parts.iter().map(|(_, p)| (p.ops, &p.latency_ns)));
    Ok(OpSummary {
        ops,
        bytes,
        iops: parts.iter().map(|(_, p)| p.iops).sum(),
        bw_bytes_per_sec: parts.iter().map(|(_, p)| p.bw_bytes_per_sec).sum(),
        latency_ns: latency,
        clamped_samples,
    })
}

/// `[value, count]` lists added value by value, ascending.
fn add_pairs<'a>(lists: impl Iterator<Item = &'a Vec<(u32, u64)>>) -> Vec<(u32, u64)> {
    let mut sum = std::collections::BTreeMap::new();
    for (value, count) in lists.flatten() {
        *sum.entry(*value).or_insert(0u64) += count;
    }
    sum.into_iter().collect()
}

/// The inputs' latency histograms added, per op type: flushes and trims from the results
/// that have them.
pub(super) struct LatencyHistograms {
    pub(super) read: Histogram<u64>,
    pub(super) write: Histogram<u64>,
    pub(super) total: Histogram<u64>,
    pub(super) flush: Histogram<u64>,
    pub(super) trim: Histogram<u64>,
}

impl LatencyHistograms {
    pub(super) fn of(inputs: &[Input]) -> Result<Self, MergeError> {
        let decode = |input: &Input, text: &str| {
            decode_histogram(text).map_err(|source| MergeError::Histogram { file: input.file.clone(), source })
        };
        let mut read_hist = new_latency_histogram();
        let mut write_hist = new_latency_histogram();
        for input in inputs {
            add_within(&mut read_hist, &decode(input, &input.result.histograms.read)?, &input.file, "histograms.read")?;
            add_within(
                &mut write_hist,
                &decode(input, &input.result.histograms.write)?,
                &input.file,
                "histograms.write",
            )?;
        }
        let mut total_hist = read_hist.clone();
        crate::io::stats::add_histogram(&mut total_hist, &write_hist);
        // Flushes (`--fsync-every`, `--fdatasync-every`) and trims (`--trim-percent`): merged
        // from the results that have them.
        let mut flush_hist = new_latency_histogram();
        let mut trim_hist = new_latency_histogram();
        for input in inputs {
            if let Some(text) = &input.result.histograms.flush {
                add_within(&mut flush_hist, &decode(input, text)?, &input.file, "histograms.flush")?;
            }
            if let Some(text) = &input.result.histograms.trim {
                add_within(&mut trim_hist, &decode(input, text)?, &input.file, "histograms.trim")?;
            }
        }
        Ok(Self { read: read_hist, write: write_hist, total: total_hist, flush: flush_hist, trim: trim_hist })
    }
}

/// CPU time added over the inputs, per I/O of the merged `ops`.
pub(super) fn merge_cpu(inputs: &[Input], ops: u64) -> Result<CpuInfo, MergeError> {
    let (mut workers, mut process, mut window) = Default::default();
    for i in inputs {
        let cpu = &i.result.machine.cpu;
        add_cpu(&mut workers, &cpu.workers, &i.file, "cpu.workers")?;
        add_cpu(&mut process, &cpu.process, &i.file, "cpu.process")?;
        add_cpu(&mut window, &cpu.window, &i.file, "cpu.window")?;
    }
    let per_io = |cpu: &CpuTimes| if ops > 0 { cpu.total_ns() as f64 / ops as f64 } else { 0.0 };
    Ok(CpuInfo {
        workers,
        process,
        window,
        other_ns: window.total_ns().saturating_sub(workers.total_ns()),
        per_io_ns: per_io(&window),
        workers_per_io_ns: per_io(&workers),
        // Each result's cores were busy over its own window: they add up.
        cores_busy: inputs.iter().map(|i| i.result.machine.cpu.cores_busy).sum(),
    })
}

/// The tool's own time: every result must have it (unpaced runs), or the merge has none.
pub(super) fn merge_tool_time(results: &[&RunResult], ops: u64) -> Option<ToolTime> {
    results.iter().map(|r| r.figures.tool_time.map(|t| (r, t))).collect::<Option<Vec<_>>>().map(|times| {
        let total_ns: u64 = times.iter().map(|(_, t)| t.total_ns).sum();
        // Each result's share weighs by its workers' time (window × workers).
        let worker_ns: f64 = times.iter().map(|(r, _)| r.window.window_ns as f64 * r.workers.len().max(1) as f64).sum();
        ToolTime {
            total_ns,
            per_io_ns: if ops > 0 { total_ns as f64 / ops as f64 } else { 0.0 },
            share_of_window: if worker_ns > 0.0 { total_ns as f64 / worker_ns } else { 0.0 },
        }
    })
}

/// Depth counts add up; a result without them (an older one) leaves the merge without.
pub(super) fn merge_io_depths(results: &[&RunResult]) -> Option<IoDepths> {
    results.iter().map(|r| r.figures.io_depths.as_ref()).collect::<Option<Vec<_>>>().map(|all| IoDepths {
        at_issue: add_pairs(all.iter().map(|d| &d.at_issue)),
        per_submit: add_pairs(all.iter().map(|d| &d.per_submit)),
        per_reap: add_pairs(all.iter().map(|d| &d.per_reap)),
    })
}
