//! `iopulse report --html FILE`: one self-contained HTML page of results. Each input gets a
//! section: a run's summary (its figures per operation), its per-size table, expectations,
//! latency percentile chart and charts over time; a job file's table of jobs, then each job;
//! a replay's trace, speed and lag beside them; a metadata run's phases per operation kind
//! and its charts; a sweep's points and its curves; a search's curve and answer; a comparison's sides,
//! differences and figures side by side.
//!
//! The page needs nothing beyond itself: inline CSS, the charts as inline SVG drawn by
//! `plot` (their namespace attribute dropped: an HTML parser places `<svg>` in it), no
//! script, no font, no link, and a Content-Security-Policy that forbids the page any load; every text that comes from a result is escaped. The markup is
//! also well-formed XML, so XML tools read it. It formats what `result`, `sweep` and
//! `compare` hold; it computes no figure and writes no file (the command does).

use super::junit::escape;
use super::plot::{self, PlotError};
use super::units;
use crate::figures::compare::{Comparison, Verdict};
use crate::figures::result::jobs::JobsResult;
use crate::figures::result::meta_document::MetaResult;
use crate::figures::result::{ReplayInfo, RunResult};
use crate::figures::sweep::document::{SearchDocument, SweepDocument, chart_data, curve_chart};
use crate::io::stats::OpSummary;
use std::fmt::Write;

/// One input of the page, as read.
pub enum Section {
    /// A run's result (`iopulse --json FILE`).
    Run { file: String, result: Box<RunResult> },
    /// A job file's result (`iopulse run FILE --json`).
    Jobs { file: String, doc: Box<JobsResult> },
    /// `iopulse sweep --output-format json`.
    Sweep { file: String, doc: Box<SweepDocument> },
    /// `iopulse search --output-format json`.
    Search { file: String, doc: Box<SearchDocument> },
    /// `iopulse compare --output-format json`.
    Compare { file: String, doc: Box<Comparison> },
    /// A metadata run's result (`iopulse DIR --files N --json FILE`).
    Metadata { file: String, result: Box<MetaResult> },
}

/// The page forbids itself every load (a browser refuses, and says so on its console): what
/// it shows is all in it.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

const STYLE: &str = "\
body{font-family:sans-serif;margin:1.5em auto;max-width:1000px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:2px solid #ccc;margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .6em;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
th{background:#f2f2f2}
td.text{text-align:left;white-space:normal}
figure{margin:1em 0}
svg{max-width:100%;height:auto;border:1px solid #eee}
.regressed{background:#fbd5d5}.improved{background:#d5f5dc}.inconclusive{background:#fdf3cf}
.failed{background:#fbd5d5}.passed{background:#d5f5dc}
.warn{color:#a33}
";

/// The whole page of `sections`, titled `title`.
pub fn page(title: &str, sections: &[Section]) -> Result<String, PlotError> {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\"/>\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    if sections.len() > 1 {
        out.push_str("<ul>\n");
        for (i, s) in sections.iter().enumerate() {
            let _ = writeln!(out, "<li><a href=\"#s{i}\">{}</a></li>", escape(&heading(s)));
        }
        out.push_str("</ul>\n");
    }
    for (i, s) in sections.iter().enumerate() {
        let _ = writeln!(out, "<section id=\"s{i}\">\n<h2>{}</h2>", escape(&heading(s)));
        match s {
            Section::Run { result, .. } => run(&mut out, result, &result.time_series)?,
            Section::Jobs { doc, .. } => jobs(&mut out, doc)?,
            Section::Sweep { doc, .. } => sweep(&mut out, doc)?,
            Section::Search { doc, .. } => search(&mut out, doc)?,
            Section::Compare { doc, .. } => compare(&mut out, doc),
            Section::Metadata { result, .. } => metadata(&mut out, result)?,
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

fn heading(s: &Section) -> String {
    match s {
        Section::Run { file, result } if result.schedule.replay.is_some() => format!("Replay · {file}"),
        Section::Run { file, .. } => format!("Run · {file}"),
        Section::Metadata { file, .. } => format!("Metadata run · {file}"),
        Section::Jobs { file, doc } => format!("Job file {} · {file}", doc.job_file),
        Section::Sweep { file, .. } => format!("Sweep · {file}"),
        Section::Search { file, doc } => format!("Search ({}) · {file}", doc.goal),
        Section::Compare { file, .. } => format!("Comparison · {file}"),
    }
}

/// `svg` as an element of the page: without its XML namespace attribute (the only absolute
/// address in it, which the HTML parser implies), in a figure.
fn chart(out: &mut String, svg: &str) {
    let svg = svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    let _ = writeln!(out, "<figure>\n{}\n</figure>", svg.trim());
}

/// A table: `head` the column titles, each row's cells already escaped (the first a label).
fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table>\n<tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// A table row's cells, each escaped (`table` takes them so).
fn escaped(cells: &[String]) -> Vec<String> {
    cells.iter().map(|c| escape(c)).collect()
}

const OP_HEAD: [&str; 10] = ["", "I/Os", "IOPS", "bandwidth", "mean", "p50", "p90", "p99", "p99.9", "max"];

fn op_row(name: &str, op: &OpSummary) -> Vec<String> {
    let l = &op.latency_ns;
    escaped(&[
        name.to_string(),
        units::count(op.ops),
        units::iops(op.iops),
        units::bandwidth(op.bw_bytes_per_sec),
        units::latency_ns(l.mean),
        units::latency_ns(l.p50),
        units::latency_ns(l.p90),
        units::latency_ns(l.p99),
        units::latency_ns(l.p99_9),
        units::latency_ns(l.max),
    ])
}

/// One run: what ran, its figures, sizes, expectations, notes and charts.
fn run(
    out: &mut String,
    r: &RunResult,
    time_series: &[crate::io::stats::interval::TimeSeriesRow],
) -> Result<(), PlotError> {
    let s = &r.spec;
    let targets: Vec<&str> = r.targets.iter().map(|t| t.path.as_str()).collect();
    let workload = match &r.schedule.replay {
        // A replay's sizes, mix and order are its trace's, not the spec's.
        Some(replay) => replay_text(replay, s.shape.queue_depth),
        None => format!(
            "{} · {}% reads · QD {} · {} thread{}",
            super::block_size_text(s),
            s.access.read_percent,
            s.shape.queue_depth,
            s.shape.threads,
            if s.shape.threads == 1 { "" } else { "s" }
        ),
    };
    let mut facts = vec![("workload", workload), ("targets", targets.join(", "))];
    if let Some(replay) = &r.schedule.replay {
        facts.push(("lag", lag_text(replay)));
    }
    facts.extend([
        ("engine", r.engine.name.clone()),
        ("measured", units::seconds_ns(r.window.window_ns)),
        ("started", r.window.started_at.clone()),
        ("host", format!("{} · kernel {}", r.machine.environment.hostname, r.machine.environment.kernel)),
        ("iopulse", r.tool.version.clone()),
    ]);
    facts_table(out, &facts);
    let mut rows = Vec::new();
    for (name, op) in [
        ("read", Some(&r.figures.read)),
        ("write", Some(&r.figures.write)),
        ("trim", r.figures.trim.as_ref()),
        ("flush", r.figures.flush.as_ref()),
    ] {
        if let Some(op) = op.filter(|op| op.ops > 0) {
            rows.push(op_row(name, op));
        }
    }
    rows.push(op_row("total", &r.figures.total));
    out.push_str("<h3>Figures (latency per I/O)</h3>\n");
    table(out, &OP_HEAD, &rows);
    if !r.figures.block_sizes.is_empty() {
        out.push_str("<h3>Per block size</h3>\n");
        let rows: Vec<Vec<String>> = r
            .figures
            .block_sizes
            .iter()
            .flat_map(|b| {
                let size = units::bytes(b.size_bytes);
                [("read", &b.read, b.read_share_percent), ("write", &b.write, b.write_share_percent)]
                    .into_iter()
                    .filter(|(_, op, _)| op.ops > 0)
                    .map(move |(name, op, share)| {
                        let mut row = op_row(&format!("{size} {name}"), op);
                        row.insert(1, escape(&format!("{share:.1}%")));
                        row
                    })
            })
            .collect();
        let mut head = OP_HEAD.to_vec();
        head[0] = "size";
        head.insert(1, "share of its op");
        table(out, &head, &rows);
    }
    if !r.outcome.expectations.is_empty() {
        out.push_str("<h3>Expectations</h3>\n<table>\n<tr><th>expectation</th><th>figure</th><th>result</th></tr>\n");
        for e in &r.outcome.expectations {
            let value = e.value.map_or_else(|| "-".to_string(), |v| super::compare::value(e.unit, v));
            let (class, verdict) = if e.passed { ("passed", "passed") } else { ("failed", "FAILED") };
            let _ = writeln!(
                out,
                "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{verdict}</td></tr>",
                escape(&e.expectation),
                escape(&value)
            );
        }
        out.push_str("</table>\n");
    }
    for w in r.outcome.warnings.iter().chain(r.outcome.error.iter()) {
        let _ = writeln!(out, "<p class=\"warn\">warning: {}</p>", escape(w));
    }
    for n in &r.outcome.notes {
        let _ = writeln!(out, "<p>note: {}</p>", escape(n));
    }
    for svg in plot::result_svgs(r, time_series)? {
        chart(out, &svg);
    }
    Ok(())
}

/// A table of facts: a name and its text per row.
fn facts_table(out: &mut String, facts: &[(&str, String)]) {
    out.push_str("<table>\n");
    for (k, v) in facts {
        let _ = writeln!(out, "<tr><th>{}</th><td class=\"text\">{}</td></tr>", escape(k), escape(v));
    }
    out.push_str("</table>\n");
}

/// "replay of trace.log (fio iolog v3) at 2× · 1,500 of 1,500 I/Os · QD 32".
fn replay_text(r: &ReplayInfo, queue_depth: u32) -> String {
    let speed = r.timing.speed.map_or_else(|| "as fast as possible".to_string(), |x| format!("at {x}× its speed"));
    let c = &r.counts;
    let traced = c.reads + c.writes + c.trims + c.flushes;
    format!(
        "replay of {} ({}) {speed} · {} of {} I/Os issued · QD {queue_depth}{}",
        r.trace_files.join(", "),
        r.format.name(),
        units::count(c.issued),
        units::count(traced),
        if r.fit.remapped { " · offsets remapped onto the target" } else { "" }
    )
}

/// Each I/O's lag behind its due time, or why there is none (as fast as possible).
fn lag_text(r: &ReplayInfo) -> String {
    match &r.timing.lag {
        Some(lag) => {
            let l = &lag.latency_ns;
            format!(
                "behind its due time: mean {}, p50 {}, p99 {}, max {} over {} I/Os",
                units::latency_ns(l.mean),
                units::latency_ns(l.p50),
                units::latency_ns(l.p99),
                units::latency_ns(l.max),
                units::count(lag.ios)
            )
        }
        None => "none measured: replayed as fast as possible".to_string(),
    }
}

/// A metadata run: its tree and workload, each phase's figures per operation kind, its
/// messages and charts.
fn metadata(out: &mut String, r: &MetaResult) -> Result<(), PlotError> {
    let facts = [
        ("workload", super::metadata_plot::workload(r)),
        (
            "tree",
            format!(
                "{} · {} files in {} directories",
                r.target,
                units::count(r.tree.files),
                units::count(r.tree.directories)
            ),
        ),
        ("stopped", r.window.stop_reason.clone()),
        ("coverage", format!("{:.1} % of the files", r.coverage_percent)),
        ("started", r.window.started_at.clone()),
        ("iopulse", r.tool_version.clone()),
    ];
    facts_table(out, &facts);
    for phase in &r.phases {
        let _ = writeln!(
            out,
            "<h3>Phase {} · {} · {} ops/s</h3>",
            escape(&phase.name),
            escape(&units::seconds_ns(phase.window_ns)),
            escape(&units::iops(phase.ops_per_sec))
        );
        let rows: Vec<Vec<String>> = phase
            .per_op
            .iter()
            .map(|o| {
                let l = &o.latency_ns;
                let share = o.share_achieved_percent.map_or_else(|| "-".to_string(), |p| format!("{p:.1}%"));
                escaped(&[
                    o.op.name().to_string(),
                    units::count(o.ops),
                    units::iops(o.ops_per_sec),
                    units::bandwidth(o.bytes_per_sec),
                    share,
                    units::latency_ns(l.mean),
                    units::latency_ns(l.p50),
                    units::latency_ns(l.p99),
                    units::latency_ns(l.p99_9),
                    units::latency_ns(l.max),
                ])
            })
            .collect();
        let head = ["operation", "ops", "ops/s", "bytes/s", "share", "mean", "p50", "p99", "p99.9", "max"];
        table(out, &head, &rows);
        if !phase.steps.is_empty() {
            let rows: Vec<Vec<String>> = phase
                .steps
                .iter()
                .map(|st| {
                    let l = &st.latency_ns;
                    escaped(&[
                        st.step.to_string(),
                        st.name.name().to_string(),
                        st.filebench.clone(),
                        units::count(st.ops),
                        units::iops(st.ops_per_sec),
                        units::bandwidth(st.bytes_per_sec),
                        units::latency_ns(l.mean),
                        units::latency_ns(l.p50),
                        units::latency_ns(l.p99),
                        units::latency_ns(l.max),
                    ])
                })
                .collect();
            let head = ["#", "step", "filebench", "ops", "ops/s", "bytes/s", "mean", "p50", "p99", "max"];
            table(out, &head, &rows);
        }
    }
    let m = &r.messages;
    for w in m.warnings.iter().chain(m.error.iter()).chain(m.limit.iter()) {
        let _ = writeln!(out, "<p class=\"warn\">warning: {}</p>", escape(w));
    }
    for n in &m.notes {
        let _ = writeln!(out, "<p>note: {}</p>", escape(n));
    }
    for svg in super::metadata_plot::svgs(r)? {
        chart(out, &svg);
    }
    Ok(())
}

/// A job file's result: the table of jobs and the combined figures, the combined charts,
/// then each job's section.
fn jobs(out: &mut String, doc: &JobsResult) -> Result<(), PlotError> {
    let several_phases = !doc.phases.is_empty();
    let row = |name: String, r: &RunResult| {
        let mut row = op_row(&name, &r.figures.total);
        row.push(escape(&units::seconds_ns(r.window.window_ns)));
        row
    };
    let mut rows = Vec::new();
    for job in &doc.jobs {
        let phase = if several_phases { format!(" (phase {})", job.phase) } else { String::new() };
        rows.push(row(format!("job [{}]{phase}", job.job), &job.result));
    }
    for p in &doc.phases {
        rows.push(row(format!("phase {} combined", p.phase), &p.combined));
    }
    rows.push(row("combined".to_string(), &doc.combined));
    let mut head = OP_HEAD.to_vec();
    head[0] = "job";
    head.push("window");
    out.push_str("<h3>Jobs (all operations)</h3>\n");
    table(out, &head, &rows);
    for svg in plot::result_svgs(&doc.combined, &doc.combined.time_series)? {
        chart(out, &svg);
    }
    for job in &doc.jobs {
        let _ = writeln!(out, "<h3>job [{}]</h3>", escape(&job.job));
        run(out, &job.result, &job.result.time_series)?;
    }
    Ok(())
}

/// A sweep: each point's median figures (with the range of its repetitions), the best
/// point, and the curves of `plot::SWEEP_CHART_METRICS`.
fn sweep(out: &mut String, doc: &SweepDocument) -> Result<(), PlotError> {
    let axes: Vec<String> = doc.axes.iter().map(|a| format!("{} = {}", a.flag, a.values.join(", "))).collect();
    let _ = writeln!(
        out,
        "<p>{} · {} repetition{} per point · {} of {} runs done{}</p>",
        escape(&axes.join(" · ")),
        doc.repeat,
        if doc.repeat == 1 { "" } else { "s" },
        doc.runs.len(),
        doc.planned_runs,
        if doc.interrupted { " · interrupted" } else { "" }
    );
    let range = |s: &crate::figures::sweep::summary::Spread, f: &dyn Fn(f64) -> String| {
        if s.min == s.max { f(s.median) } else { format!("{} ({} – {})", f(s.median), f(s.min), f(s.max)) }
    };
    let ns = |v: f64| units::latency_ns(v.round().max(0.0) as u64);
    let rows: Vec<Vec<String>> = doc
        .points
        .iter()
        .map(|p| {
            let params: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let s = &p.summary;
            escaped(&[
                params.join(" "),
                s.runs.to_string(),
                range(&s.iops, &|v| units::iops(v)),
                range(&s.bw_bytes_per_sec, &|v| units::bandwidth(v)),
                range(&s.p50_ns, &ns),
                range(&s.p99_ns, &ns),
                range(&s.cpu_per_io_ns, &ns),
            ])
        })
        .collect();
    out.push_str("<h3>Points (median of the runs, their range in brackets)</h3>\n");
    table(out, &["point", "runs", "IOPS", "bandwidth", "p50", "p99", "CPU per I/O"], &rows);
    if let Some(best) = &doc.best {
        let params: Vec<String> = best.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(out, "<p>best by {}: {}</p>", escape(best.by.name()), escape(&params.join(" ")));
    }
    for metric in plot::SWEEP_CHART_METRICS {
        if let Some(data) = chart_data(doc, metric) {
            chart(out, &plot::sweep_svg(&data)?);
        }
    }
    Ok(())
}

/// A search: its answer, each step's figures and the curve.
fn search(out: &mut String, doc: &SearchDocument) -> Result<(), PlotError> {
    if let Some(a) = &doc.answer {
        let _ = writeln!(out, "<p><strong>{}</strong></p>", escape(&a.text));
    }
    let rows: Vec<Vec<String>> = doc
        .curve
        .iter()
        .map(|c| {
            escaped(&[
                c.phase.clone(),
                c.offered_iops.map_or_else(|| "-".into(), units::iops),
                c.queue_depth.to_string(),
                c.threads.to_string(),
                units::iops(c.iops),
                units::latency_ns(c.p50_ns),
                units::latency_ns(c.p99_ns),
                units::latency_ns(c.p99_9_ns),
            ])
        })
        .collect();
    table(out, &["step", "offered IOPS", "QD", "threads", "IOPS", "p50", "p99", "p99.9"], &rows);
    if !doc.curve.is_empty() {
        chart(out, &plot::sweep_svg(&curve_chart(doc))?);
    }
    Ok(())
}

/// A comparison: the sides, what differs between them, and each figure base beside new
/// with its change, interval and verdict.
fn compare(out: &mut String, doc: &Comparison) {
    let c = &doc.counts;
    let _ = writeln!(
        out,
        "<p>threshold {}% · confidence {}% · {} regressed · {} improved · {} no change · {} inconclusive</p>",
        doc.threshold_percent, doc.confidence_percent, c.regressed, c.improved, c.no_change, c.inconclusive
    );
    out.push_str("<table>\n");
    for (name, side) in [("base", &doc.base), ("new", &doc.new)] {
        let _ = writeln!(
            out,
            "<tr><th>{name}</th><td class=\"text\">{} ({} run{})</td></tr>",
            escape(&side.files.join(", ")),
            side.runs,
            if side.runs == 1 { "" } else { "s" }
        );
    }
    out.push_str("</table>\n");
    if !doc.differences.is_empty() {
        out.push_str("<h3 class=\"warn\">Not alike (compared anyway)</h3>\n");
        let rows: Vec<Vec<String>> = doc
            .differences
            .iter()
            .map(|d| [&d.scope, &d.field, &d.base, &d.new].iter().map(|c| escape(c)).collect())
            .collect();
        table(out, &["scope", "field", "base", "new"], &rows);
    }
    for (side, scopes) in [("base", &doc.only_in_base), ("new", &doc.only_in_new)] {
        if !scopes.is_empty() {
            let _ = writeln!(out, "<p>only in {side} (not compared): {}</p>", escape(&scopes.join(", ")));
        }
    }
    out.push_str(
        "<table>\n<tr><th>scope</th><th>figure</th><th>base</th><th>new</th><th>change</th>\
         <th>interval</th><th>verdict</th></tr>\n",
    );
    for f in &doc.figures {
        let class = match f.verdict {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NoChange => "no-change",
        };
        let value = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| super::compare::value(f.unit, v));
        let verdict = match &f.note {
            Some(note) => format!("{} ({note})", f.verdict.name()),
            None => f.verdict.name().to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
            escape(&f.scope),
            escape(&f.figure),
            escape(&value(f.base)),
            escape(&value(f.new)),
            escape(&super::compare::change(f)),
            escape(&super::compare::interval(f)),
            escape(&verdict)
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_loses_only_its_namespace() {
        let mut out = String::new();
        chart(&mut out, "<svg width=\"1\" xmlns=\"http://www.w3.org/2000/svg\"><text>a</text></svg>\n");
        assert_eq!(out, "<figure>\n<svg width=\"1\"><text>a</text></svg>\n</figure>\n");
    }
}
