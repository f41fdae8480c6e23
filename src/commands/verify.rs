//! `iopulse verify [TARGET]... --state FILE`: after a power cut or a crash, each block of
//! the targets written with `--verify --verify-state FILE` judged against the durable record
//! (`durable_record::check`), and the verdict printed as text or JSON. The targets are the
//! paths the record holds, or those given (a device renamed after a reboot), in its order.
//!
//! It reads the record and the target and prints; it never writes.

use crate::base::diagnostics::error::exit_code;
use crate::io::durable_format as format;
use crate::storage::durable_record::check::{self, CheckReport, Class, PartSource};
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
  iopulse verify --state t.state
      every target the record holds, at the paths the run wrote (several targets,
      --file-distribution per-worker files)
  iopulse verify --state t.state.rank1
      rank 1's record of a cluster run (each rank keeps its own: FILE.rankN)

A block whose flushed write is gone (an older write, zeros, another run's data) is a
broken promise of the storage: it is reported with its offset, and the exit code is 3.
Unflushed blocks may hold the old or the new data. The record is read back as its last
whole update: a cut while it was being written leaves the one before.
The targets must be the ones the record is of, in its order (their size, device and inode,
or device number, are recorded): another order, another file or a device of another size
is an argument mistake (exit 2, naming what the record is of), never a broken promise.
Exit codes: 0 no promise broken, 2 unreadable state file or target, or a target the record
is not of, 3 a flushed block lost, torn or corrupt.";

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
    /// The files or devices the run wrote.
    ///
    /// The files or devices the run wrote, in the order the record holds them; none: the
    /// paths the record holds. E.g. `iopulse verify /dev/sdc --state sdb.state`
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,

    /// The durable record the run kept.
    ///
    /// The durable record the run kept (`--verify-state FILE`). E.g. `--state t.state`
    #[arg(long, value_name = "FILE")]
    pub state: PathBuf,

    /// Judge targets the record is not of.
    ///
    /// Judge the targets given even when they are not the files or devices the record names
    /// (a copy, an image of the device): by default such a target is refused (exit 2), since
    /// its blocks would be reported as lost. E.g. `iopulse verify image.dat --state t.state --force`
    #[arg(long)]
    pub force: bool,

    /// Verdict format on stdout.
    ///
    /// Verdict format on stdout: the table of classes, or the JSON verdict (counts per class,
    /// first offsets, torn blocks). E.g. `iopulse verify t.dat --state t.state --output-format json`
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = VerdictFormat::Text)]
    pub output_format: VerdictFormat,
    #[command(flatten)]
    pub output: crate::front::cli::output::QuietArg,
}

pub fn verify(args: VerifyArgs) -> i32 {
    super::end_on_first_signal();
    let record = match crate::storage::durable_record::read(&args.state) {
        Ok(r) => r,
        Err(e) => {
            crate::stderr_line!("iopulse verify: error: --state {}: {e}", args.state.display());
            return exit_code::USAGE;
        }
    };
    let recorded = &record.header.targets;
    if !args.targets.is_empty() && args.targets.len() != recorded.len() {
        crate::stderr_line!(
            "iopulse verify: error: TARGET: {} given, but the record holds {} ({}): give all of them in that order, or none to use those paths",
            args.targets.len(),
            recorded.len(),
            recorded.iter().map(|t| t.path.display().to_string()).collect::<Vec<_>>().join(", ")
        );
        return exit_code::USAGE;
    }
    let paths: Vec<PathBuf> =
        if args.targets.is_empty() { recorded.iter().map(|t| t.path.clone()).collect() } else { args.targets.clone() };
    let mut targets = Vec::with_capacity(paths.len());
    let mut identities = Vec::with_capacity(paths.len());
    for path in &paths {
        match open_target(path) {
            Ok((file, len_bytes, identity)) => {
                targets.push(check::OpenTarget { file, len_bytes, name: path.display().to_string() });
                identities.push(identity);
            }
            Err(e) => {
                crate::stderr_line!("iopulse verify: error: TARGET {}: {e}", path.display());
                return exit_code::USAGE;
            }
        }
    }
    if let Err(e) = same_targets(recorded, &paths, &identities).or_else(|e| if args.force { Ok(()) } else { Err(e) }) {
        crate::stderr_line!("iopulse verify: error: {e}");
        return exit_code::USAGE;
    }
    let report = match check::check(&targets, &record) {
        Ok(r) => r,
        Err(e) => {
            crate::stderr_line!("iopulse verify: error: {e}");
            return exit_code::USAGE;
        }
    };
    let names: Vec<String> = targets.into_iter().map(|t| t.name).collect();
    let verdict = Verdict { names: &names, state: &args.state, durability: record.header.durability.describe() };
    let text = match args.output_format {
        VerdictFormat::Text => render_text(&verdict, &report),
        VerdictFormat::Json => super::json_text(&JsonVerdict::of(&verdict, &report)),
    };
    let code = super::write_stdout(&text);
    if code != exit_code::SUCCESS {
        return code;
    }
    if report.violated() { exit_code::VERIFY_FAILED } else { exit_code::SUCCESS }
}

/// A target opened for reading without blocking (a FIFO never holds `open`), judged by
/// what was opened: a regular file or a block device, else refused. Its length and identity.
fn open_target(path: &std::path::Path) -> std::io::Result<(std::fs::File, u64, format::TargetIdentity)> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() && !kind.is_block_device() {
        let what = crate::storage::targets::identity::special_kind(kind).unwrap_or("a special file");
        return Err(std::io::Error::other(format!(
            "is {what}, not a file or a block device: give the file or device the run wrote"
        )));
    }
    let len_bytes = file.seek(SeekFrom::End(0))?;
    let identity = format::TargetIdentity::of(&file)?;
    Ok((file, len_bytes, identity))
}

/// The targets given are the ones the record is of, in its order: each the same file (its
/// device and inode) or the same block device (its number) as recorded. A block device
/// with another number but the recorded size passes (a device renamed after a reboot);
/// anything else is an argument mistake, never a broken promise. Records of version 2
/// hold no identity: their targets are taken as given.
fn same_targets(
    recorded: &[format::RecordTarget],
    paths: &[PathBuf],
    found: &[format::TargetIdentity],
) -> Result<(), String> {
    let this_record_is = || {
        let list: Vec<String> = recorded
            .iter()
            .map(|t| match t.identity {
                Some(id) => format!("{} ({} bytes)", t.path.display(), id.size_bytes),
                None => t.path.display().to_string(),
            })
            .collect();
        format!("this record is of {}", list.join(", "))
    };
    for (i, ((rec, path), id)) in recorded.iter().zip(paths).zip(found).enumerate() {
        let Some(want) = rec.identity else { continue };
        if want.same_as(id) {
            continue;
        }
        if let Some(j) = recorded.iter().position(|r| r.identity.is_some_and(|r| r.same_as(id))) {
            return Err(format!(
                "TARGET {} is the record's target {} ({}), not its target {}: {}, in that order; give the targets in the record's order, or none to use its paths",
                path.display(),
                j + 1,
                recorded[j].path.display(),
                i + 1,
                this_record_is()
            ));
        }
        let renamed_device = want.rdev != 0 && id.rdev != 0 && want.size_bytes == id.size_bytes;
        if renamed_device {
            continue;
        }
        let what = |t: &format::TargetIdentity| if t.rdev != 0 { "block device" } else { "file" };
        return Err(format!(
            "TARGET {} is another {} ({} bytes) than the one the run wrote at {} (a {} of {} bytes): {}; give the targets it names, the record of the run that wrote {}, or --force to judge this copy anyway",
            path.display(),
            what(id),
            id.size_bytes,
            rec.path.display(),
            what(&want),
            want.size_bytes,
            this_record_is(),
            path.display()
        ));
    }
    Ok(())
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

/// What the verdict names besides the report.
struct Verdict<'a> {
    names: &'a [String],
    state: &'a std::path::Path,
    durability: &'static str,
}

impl Verdict<'_> {
    /// A block's place: its offset, after its target's name when there are several.
    fn place(&self, p: &check::Place) -> String {
        if self.names.len() == 1 {
            p.offset_bytes.to_string()
        } else {
            format!("{}:{}", self.names[p.target as usize], p.offset_bytes)
        }
    }
}

fn class_counts(counts: &[u64; 6]) -> std::collections::BTreeMap<&'static str, u64> {
    Class::ALL.iter().map(|&c| (c.name(), counts[c as usize])).collect()
}

fn render_text(v: &Verdict<'_>, r: &CheckReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} blocks of {} bytes checked against {} (the record of {})",
        v.names.join(", "),
        r.blocks,
        r.block_size_bytes,
        v.state.display(),
        v.durability
    );
    let _ = writeln!(
        out,
        "last record update: {} ({} of {} workers without one{})",
        when(r.last_flush_unix_ns),
        r.workers_without_flush,
        r.workers,
        if r.damaged_slots > 0 {
            format!("; {} record update(s) cut short, the pages before them used", r.damaged_slots)
        } else {
            String::new()
        }
    );
    for c in Class::ALL {
        let firsts = &r.first_offsets[c as usize];
        let list = if firsts.is_empty() {
            String::new()
        } else {
            format!("  first at {}", firsts.iter().map(|p| v.place(p)).collect::<Vec<_>>().join(", "))
        };
        let _ = writeln!(out, "  {:<20} {:>10}{list}", c.name(), r.count(c));
    }
    if v.names.len() > 1 {
        for (name, counts) in v.names.iter().zip(&r.counts_by_target) {
            let line: Vec<String> = Class::ALL
                .iter()
                .filter(|&&c| counts[c as usize] > 0)
                .map(|&c| format!("{} {}", c.name(), counts[c as usize]))
                .collect();
            let _ = writeln!(out, "  {name}: {}", line.join(", "));
        }
    }
    for t in &r.torn {
        let parts: Vec<String> =
            t.parts.iter().map(|p| format!("{} bytes of {}", p.len_bytes, part_name(p.source))).collect();
        let _ = writeln!(
            out,
            "  torn at {}: {} (flushed write {}{})",
            v.place(&check::Place { target: t.target, offset_bytes: t.offset_bytes }),
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

/// A block named in the JSON verdict.
#[derive(Serialize)]
struct JsonPlace<'a> {
    target: &'a str,
    offset_bytes: u64,
}

#[derive(Serialize)]
struct JsonTarget<'a> {
    path: &'a str,
    counts: std::collections::BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
struct JsonTorn<'a> {
    target: &'a str,
    #[serde(flatten)]
    block: &'a check::TornBlock,
}

/// The JSON verdict: counts and first offsets by class name.
#[derive(Serialize)]
struct JsonVerdict<'a> {
    targets: Vec<JsonTarget<'a>>,
    state: String,
    durable_by: &'static str,
    blocks: u64,
    block_size_bytes: u32,
    last_flush_unix_ns: u64,
    last_flush: String,
    workers: u32,
    workers_without_flush: u32,
    record_updates_cut_short: u32,
    counts: std::collections::BTreeMap<&'static str, u64>,
    first_offsets: std::collections::BTreeMap<&'static str, Vec<JsonPlace<'a>>>,
    torn: Vec<JsonTorn<'a>>,
    torn_broken_promises: u64,
    violated: bool,
}

impl<'a> JsonVerdict<'a> {
    fn of(v: &'a Verdict<'a>, r: &'a CheckReport) -> Self {
        let name = |t: u32| v.names[t as usize].as_str();
        JsonVerdict {
            targets: v
                .names
                .iter()
                .zip(&r.counts_by_target)
                .map(|(n, c)| JsonTarget { path: n, counts: class_counts(c) })
                .collect(),
            state: v.state.display().to_string(),
            durable_by: v.durability,
            blocks: r.blocks,
            block_size_bytes: r.block_size_bytes,
            last_flush_unix_ns: r.last_flush_unix_ns,
            last_flush: when(r.last_flush_unix_ns),
            workers: r.workers,
            workers_without_flush: r.workers_without_flush,
            record_updates_cut_short: r.damaged_slots,
            counts: class_counts(&r.counts),
            first_offsets: Class::ALL
                .iter()
                .map(|&c| {
                    let places = r.first_offsets[c as usize]
                        .iter()
                        .map(|p| JsonPlace { target: name(p.target), offset_bytes: p.offset_bytes })
                        .collect();
                    (c.name(), places)
                })
                .collect(),
            torn: r.torn.iter().map(|t| JsonTorn { target: name(t.target), block: t }).collect(),
            torn_broken_promises: r.torn_broken_promises,
            violated: r.violated(),
        }
    }
}
