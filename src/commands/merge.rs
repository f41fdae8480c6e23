//! `iopulse merge`: one report from the JSON results of concurrent runs (several processes
//! or hosts), their histograms added. It reads, merges (`result::merge`) and prints.

use crate::base::diagnostics::error::exit_code;
use crate::figures::result::load::{self, Document};
use crate::figures::result::{merge, metadata};
use crate::output::report::{self, OutputFormat};
use std::path::PathBuf;

const MERGE_EXAMPLES: &str = "\
Examples:
  iopulse merge host1.json host2.json
      one text report of two hosts that ran the same workload at the same time
  iopulse merge run-*.json --output-format json > merged.json
      the merged result as JSON (with `merged_from`), e.g. for `iopulse plot merged.json`
  iopulse merge a.json b.json --force
      merge although the specs differ (each difference is noted)
  iopulse merge a.json b.json --allow-duplicates
      merge two results that look like one run given twice (same host, start and spec)
  iopulse merge host1-jobs.json host2-jobs.json
      results of one job file (`iopulse run FILE --json`): merged job by job, each
      phase's and the combined figures recomputed; other jobs, or a single run's
      result among them, are refused naming the file
  iopulse merge meta-host1.json meta-host2.json
      metadata results (iopulse DIR --files N --json FILE) of runs side by side, each
      on its own tree: each operation kind's counts and histograms added; a block
      result among them is refused naming the file

Percentiles come from the added histograms, never from averaged percentiles;
IOPS, bandwidth and CPU time are summed (the runs are taken as concurrent).
Inputs must be regular files of at most 256 MiB (no FIFO, device or /proc file), read as
they are parsed; a histogram whose header lies, a figure no run has (negative, 1e308 IOPS)
or counts whose sum overflows are refused naming the file and field; one result given
twice, or an input that is also stdout (`> a.json`), is refused.
Exit codes: 0 merged, 2 unreadable input, a duplicate, different specs without --force,
or metadata and block results together,
130/143/129 on SIGINT/SIGTERM/SIGHUP.";

/// Combine the JSON results of concurrent runs (several processes or hosts) into one report.
#[derive(Debug, clap::Args)]
#[command(after_help = MERGE_EXAMPLES)]
pub struct MergeArgs {
    /// JSON results of concurrent runs.
    ///
    /// JSON results written by `iopulse --json FILE` or `--output-format json`.
    #[arg(value_name = "RESULT.json", required = true)]
    pub results: Vec<PathBuf>,

    /// Report format on stdout.
    ///
    /// Report format on stdout. E.g. `--output-format json > merged.json`
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Merge results whose specs differ.
    ///
    /// Merge results whose specs differ (other than the seed); the first one's spec is shown.
    #[arg(long)]
    pub force: bool,
    /// Merge results that look like one run twice.
    ///
    /// Merge results that look like one run given twice (same host, start and spec), e.g.
    /// two processes started in the same instant with identical command lines.
    #[arg(long)]
    pub allow_duplicates: bool,

    #[command(flatten)]
    pub output: crate::front::cli::output::QuietArg,
}

pub fn merge(args: MergeArgs) -> i32 {
    super::end_on_first_signal();
    let paths: Vec<&std::path::Path> = args.results.iter().map(PathBuf::as_path).collect();
    if let Err(e) = merge::refuse_stdout_as_input(&paths) {
        crate::stderr_line!("iopulse merge: error: {e}");
        return exit_code::USAGE;
    }
    let loaded = match args.results.iter().map(|p| load::document(p)).collect::<Result<Vec<_>, _>>() {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    let metadata = loaded.iter().find(|d| matches!(d, Document::Metadata(_))).map(|d| d.file().to_string());
    let block = loaded.iter().find(|d| matches!(d, Document::Run(_))).map(|d| d.file().to_string());
    match (metadata, block) {
        (Some(metadata), Some(block)) => {
            crate::stderr_line!("iopulse merge: error: {}", merge::MergeError::MetadataAndBlock { metadata, block });
            return exit_code::USAGE;
        }
        (Some(_), None) => return merge_metadata(&args, loaded),
        _ => {}
    }
    let documents: Vec<_> = loaded
        .into_iter()
        .filter_map(|d| match d {
            Document::Run(l) => Some(merge::document_of(*l)),
            Document::Metadata(_) => None,
        })
        .collect();
    // A block result that says it ran a tree of files was made by hand: metadata jobs
    // write metadata results, never a block result's jobs.
    for (input, jobs) in &documents {
        let job = jobs.as_ref().and_then(|doc| doc.jobs.iter().find(|j| j.result.spec.metadata.is_some()));
        let name = match job {
            Some(j) => Some(j.job.clone()),
            None => input.result.spec.metadata.is_some().then(|| "(the run)".to_string()),
        };
        if let Some(job) = name {
            crate::stderr_line!(
                "iopulse merge: error: {}",
                merge::MergeError::MetadataJob { file: input.file.clone(), job }
            );
            return exit_code::USAGE;
        }
    }
    let job_file = documents.iter().find(|(_, jobs)| jobs.is_some()).map(|(i, _)| i.file.clone());
    let single = documents.iter().find(|(_, jobs)| jobs.is_none()).map(|(i, _)| i.file.clone());
    if let (Some(file), Some(plain)) = (job_file.clone(), single) {
        crate::stderr_line!("iopulse merge: error: {}", merge::MergeError::JobFileAndSingleRun { file, plain });
        return exit_code::USAGE;
    }
    let (inputs, jobs): (Vec<_>, Vec<_>) = documents.into_iter().unzip();
    if !args.allow_duplicates
        && let Err(e) = merge::refuse_duplicates(&inputs)
    {
        crate::stderr_line!("iopulse merge: error: {e}");
        return exit_code::USAGE;
    }
    if job_file.is_some() {
        return merge_job_files(&args, inputs, jobs);
    }
    let merged = match merge::merge(&inputs, args.force) {
        Ok(m) => m,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    print_merged(&args, &merged.notes, &merged.warnings, report::render(&merged.result, args.output_format))
}

/// The end of a merge: its notes and warnings on stderr, then the report on stdout.
fn print_merged<E: std::fmt::Display>(
    args: &MergeArgs,
    notes: &[String],
    warnings: &[String],
    rendered: Result<String, E>,
) -> i32 {
    super::print_notes(args.output.quiet, notes);
    for w in warnings {
        crate::stderr_line!("⚠ {w}");
    }
    match rendered {
        Ok(text) => super::write_stdout(&text),
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            exit_code::RUN_FAILED
        }
    }
}

/// `iopulse merge` of job-file results: job by job, the combined figures recomputed.
fn merge_job_files(
    args: &MergeArgs,
    inputs: Vec<merge::Input>,
    jobs: Vec<Option<crate::figures::result::jobs::JobsResult>>,
) -> i32 {
    use crate::front::jobs::merge_results::{self, JobsInput};
    let inputs: Vec<JobsInput> =
        inputs.into_iter().zip(jobs).filter_map(|(i, doc)| Some(JobsInput { file: i.file, doc: doc? })).collect();
    let merged = match merge_results::merge(&inputs, args.force) {
        Ok(m) => m,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    print_merged(args, &merged.notes, &merged.warnings, report::jobs::render(&merged.doc, args.output_format))
}

/// `iopulse merge` of metadata results (`iopulse DIR --files N --json FILE`): each phase's
/// kinds merged, reported as a metadata run's result.
fn merge_metadata(args: &MergeArgs, loaded: Vec<Document>) -> i32 {
    if !matches!(args.output_format, OutputFormat::Text | OutputFormat::Json) {
        let file = loaded.first().map(Document::file).unwrap_or_default();
        crate::stderr_line!(
            "iopulse merge: error: --output-format: {file} is a metadata run's result (--files), merged as text or json; give one of them"
        );
        return exit_code::USAGE;
    }
    let inputs: Vec<metadata::Input> = loaded
        .into_iter()
        .filter_map(|d| match d {
            Document::Metadata(l) => Some(metadata::Input { file: l.file, result: l.result, id: Some(l.id) }),
            Document::Run(_) => None,
        })
        .collect();
    if !args.allow_duplicates
        && let Err(e) = metadata::refuse_duplicates(&inputs)
    {
        crate::stderr_line!("iopulse merge: error: {e}");
        return exit_code::USAGE;
    }
    let merged = match metadata::merge(&inputs, args.force) {
        Ok(m) => m,
        Err(e) => {
            crate::stderr_line!("iopulse merge: error: {e}");
            return exit_code::USAGE;
        }
    };
    let rendered = match args.output_format {
        OutputFormat::Text => report::metadata::text(&merged.result),
        _ => report::metadata::json(&merged.result),
    };
    print_merged(args, &merged.notes, &[], Ok::<_, String>(rendered))
}
