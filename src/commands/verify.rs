//! `iopulse verify TARGET --state FILE`: after a power cut or a crash, each block of a
//! target written with `--verify --verify-state FILE` judged against the durable record
//! (`durable_record::check`), and the verdict printed as text or JSON.
//!
//! It reads the record and the target and prints; it never writes.

use crate::diagnostics::error::exit_code;
use crate::durable_record::check::{self, CheckReport, Class, PartSource};
use crate::durable_record::format;
use serde::Serialize;
use std::io::{Seek, SeekFrom};
use std::path::PathBuf;

const VERIFY_EXAMPLES: &str = "\
Examples:
  iopulse verify t.dat --state t.state
      after a crash of a run with `--verify --fdatasync-every 8 --verify-state t.state`:
      each block intact, lost though flushed, unflushed (old or new), torn or corrupt
  iopulse verify /dev/sdb --state sdb.state --output-format json > verdict.json
      the same as JSON (counts per class, first offsets, torn blocks with their parts)

A block whose flushed write is gone (an older write, zeros, another run's data) is a
broken promise of the storage: it is reported with its offset, and the exit code is 3.
Unflushed blocks may hold the old or the new data. The record is read back as its last
whole update: a cut while it was being written leaves the one before.
Exit codes: 0 no promise broken, 2 unreadable state file or target, 3 a flushed block lost,
torn or corrupt.";

/// How `verify` prints its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VerdictFormat {
    Text,
    Json,
}

/// Check a target against the durable record of the run that wrote it (`--verify-state`).
#[derive(Debug, clap::Args)]
#[command(after_help = VERIFY_EXAMPLES)]
pub struct VerifyArgs {
    /// The file or device the run wrote.
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,

    /// The durable record the run kept (`--verify-state FILE`). E.g. `--state t.state`
    #[arg(long, value_name = "FILE")]
    pub state: PathBuf,

    /// Verdict format on stdout. E.g. `iopulse verify t.dat --state t.state --output-format json`
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = VerdictFormat::Text)]
    pub output_format: VerdictFormat,
}

pub fn verify(args: VerifyArgs) -> i32 {
    super::end_on_first_signal();
    let record = match format::read(&args.state) {
        Ok(r) => r,
        Err(e) => {
            crate::stderr_line!("iopulse verify: error: --state {}: {e}", args.state.display());
            return exit_code::USAGE;
        }
    };
    let opened = std::fs::File::open(&args.target).and_then(|mut f| {
        let len = f.seek(SeekFrom::End(0))?;
        Ok((f, len))
    });
    let (target, len_bytes) = match opened {
        Ok(t) => t,
        Err(e) => {
            crate::stderr_line!("iopulse verify: error: open {}: {e}", args.target.display());
            return exit_code::USAGE;
        }
    };
    let report = match check::check(&target, len_bytes, &record) {
        Ok(r) => r,
        Err(e) => {
            crate::stderr_line!("iopulse verify: error: {}: {e}", args.target.display());
            return exit_code::USAGE;
        }
    };
    let text = match args.output_format {
        VerdictFormat::Text => render_text(&args, &report),
        VerdictFormat::Json => super::json_text(&JsonVerdict::of(&args, &report)),
    };
    let code = super::write_stdout(&text);
    if code != exit_code::SUCCESS {
        return code;
    }
    if report.violated() { exit_code::VERIFY_FAILED } else { exit_code::SUCCESS }
}

fn when(unix_ns: u64) -> String {
    if unix_ns == 0 {
        return "none".into();
    }
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(unix_ns);
    humantime::format_rfc3339_millis(t).to_string()
}

fn part_name(source: PartSource) -> String {
    match source {
        PartSource::Write { sequence } => format!("write {sequence}"),
        PartSource::Layout => "layout".into(),
        PartSource::Zeros => "zeros".into(),
    }
}

fn render_text(args: &VerifyArgs, r: &CheckReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} blocks of {} bytes checked against {}",
        args.target.display(),
        r.blocks,
        r.block_size_bytes,
        args.state.display()
    );
    let _ = writeln!(
        out,
        "last flush recorded: {} ({} of {} workers without a recorded flush{})",
        when(r.last_flush_unix_ns),
        r.workers_without_flush,
        r.workers,
        if r.damaged_slots > 0 {
            format!("; {} record update(s) cut short, the previous used", r.damaged_slots)
        } else {
            String::new()
        }
    );
    for c in Class::ALL {
        let firsts = &r.first_offsets[c as usize];
        let list = if firsts.is_empty() {
            String::new()
        } else {
            format!("  first at {}", firsts.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", "))
        };
        let _ = writeln!(out, "  {:<20} {:>10}{list}", c.name(), r.count(c));
    }
    for t in &r.torn {
        let parts: Vec<String> =
            t.parts.iter().map(|p| format!("{} bytes of {}", p.len_bytes, part_name(p.source))).collect();
        let _ = writeln!(
            out,
            "  torn at {}: {} (flushed write {}{})",
            t.offset_bytes,
            parts.join(", "),
            t.durable_sequence,
            if t.broken_promise { ", partly lost: a broken promise" } else { "" }
        );
    }
    let _ = writeln!(
        out,
        "verdict: {}",
        if r.violated() {
            "PROMISE BROKEN: flushed data was lost, torn or corrupted"
        } else {
            "every flushed write survived"
        }
    );
    out
}

/// The JSON verdict: counts and first offsets by class name.
#[derive(Serialize)]
struct JsonVerdict<'a> {
    target: String,
    state: String,
    blocks: u64,
    block_size_bytes: u32,
    last_flush_unix_ns: u64,
    last_flush: String,
    workers: u32,
    workers_without_flush: u32,
    damaged_record_slots: u32,
    counts: std::collections::BTreeMap<&'static str, u64>,
    first_offsets: std::collections::BTreeMap<&'static str, &'a [u64]>,
    torn: &'a [check::TornBlock],
    torn_broken_promises: u64,
    violated: bool,
}

impl<'a> JsonVerdict<'a> {
    fn of(args: &VerifyArgs, r: &'a CheckReport) -> Self {
        JsonVerdict {
            target: args.target.display().to_string(),
            state: args.state.display().to_string(),
            blocks: r.blocks,
            block_size_bytes: r.block_size_bytes,
            last_flush_unix_ns: r.last_flush_unix_ns,
            last_flush: when(r.last_flush_unix_ns),
            workers: r.workers,
            workers_without_flush: r.workers_without_flush,
            damaged_record_slots: r.damaged_slots,
            counts: Class::ALL.iter().map(|&c| (c.name(), r.count(c))).collect(),
            first_offsets: Class::ALL.iter().map(|&c| (c.name(), r.first_offsets[c as usize].as_slice())).collect(),
            torn: &r.torn,
            torn_broken_promises: r.torn_broken_promises,
            violated: r.violated(),
        }
    }
}
