//! fio's flag names, answered with iopulse's: people who know fio type `--bs 4k` or
//! `--rw randread`, and are told what iopulse calls it instead of a guess at a similar
//! flag. The same table answers a job file's key of that name.

/// fio's name, iopulse's flag or flags, and an example.
pub const FIO_NAMES: &[(&str, &str)] = &[
    ("bs", "--block-size (e.g. --block-size 4k)"),
    ("blocksize", "--block-size (e.g. --block-size 4k)"),
    ("iodepth", "--queue-depth (e.g. --queue-depth 32)"),
    ("numjobs", "--threads (e.g. --threads 4)"),
    ("runtime", "--duration (e.g. --duration 30s)"),
    ("time_based", "--duration (a run lasts --duration by default; --duration 0 covers every block once)"),
    ("size", "--file-size (e.g. --file-size 10G)"),
    ("filesize", "--file-size (e.g. --file-size 10G)"),
    ("io_size", "--io-limit (e.g. --io-limit 1G)"),
    ("number_ios", "--ops (e.g. --ops 100000: I/Os of the whole run, all workers together)"),
    ("ioengine", "--engine (e.g. --engine io_uring; libaio, sync, mmap and null too)"),
    ("filename", "a TARGET: iopulse takes the paths themselves (e.g. iopulse /data/t.dat --random)"),
    ("directory", "a TARGET: give the file's path (e.g. iopulse /data/t.dat)"),
    (
        "rw",
        "--random and --read-percent/--write-percent (randread: --random; randwrite: --random --write-percent 100; randrw: --random --write-percent 50; write: --write-percent 100)",
    ),
    (
        "readwrite",
        "--random and --read-percent/--write-percent (randread: --random; randwrite: --random --write-percent 100)",
    ),
    ("rwmixread", "--read-percent (e.g. --read-percent 70)"),
    ("rwmixwrite", "--write-percent (e.g. --write-percent 30)"),
    ("ramp_time", "--ramp (e.g. --ramp 30s)"),
    ("rate_iops", "--rate-iops (e.g. --rate-iops 2000)"),
    ("read_iolog", "the replay command (e.g. iopulse replay app.iolog /data/t.dat)"),
    ("write_iolog", "--write-iolog (e.g. --write-iolog run.iolog)"),
    ("replay_no_stall", "iopulse replay's --as-fast-as-possible"),
    ("replay_time_scale", "iopulse replay's --speed (a factor: --speed 2 for replay_time_scale=50)"),
    ("rate", "--rate-bw (e.g. --rate-bw 100M)"),
    ("thinktime", "--think-time (e.g. --think-time 50us)"),
    (
        "norandommap",
        "nothing: --random draws with replacement as fio's norandommap; --duration 0 visits each block once",
    ),
    ("randrepeat", "--seed (the same seed gives the same offsets and data)"),
    ("randseed", "--seed (e.g. --seed 42)"),
    ("group_reporting", "nothing: the report always sums the workers, with a row per target"),
    ("name", "a job file's [section] (iopulse run FILE.toml, or iopulse run FILE.fio)"),
    (
        "invalidate",
        "--cache (--cache keep for invalidate=0, --cache drop for invalidate=1, --cache warm to read the region into the cache first)",
    ),
    ("fsync", "--fsync-every (e.g. --fsync-every 8)"),
    ("fdatasync", "--fdatasync-every (e.g. --fdatasync-every 1)"),
    ("sync", "--sync-writes (e.g. --sync-writes dsync)"),
    ("output", "--json FILE or --output-format (e.g. --output-format json > r.json)"),
    ("cpus_allowed", "--cpu-cores (e.g. --cpu-cores 0-3)"),
    ("iodepth_batch_submit", "--submit-batch (e.g. --submit-batch 16)"),
    ("hipri", "--iopoll (with --engine io_uring --direct)"),
    ("fixedbufs", "nothing: io_uring registers its buffers by default (--no-register to compare)"),
    ("sqthread_poll", "--sqpoll (with --engine io_uring)"),
    ("percentage_random", "--random-percent (e.g. --random --random-percent 20)"),
    ("random_distribution", "--distribution (e.g. --distribution zipf --zipf-theta 1.2)"),
    ("verify_backlog", "--verify (every read is checked as it completes)"),
    ("steadystate", "--steady-state (e.g. --steady-state iops:2%)"),
    ("buffer_compress_percentage", "--compress-ratio (e.g. --compress-ratio 2)"),
    ("dedupe_percentage", "--dedupe-ratio (e.g. --dedupe-ratio 3)"),
];

/// What iopulse calls fio's `name` (given without its dashes and value), if it is one.
pub fn iopulse_name_of(name: &str) -> Option<&'static str> {
    FIO_NAMES.iter().find(|(fio, _)| *fio == name).map(|(_, ours)| *ours)
}

/// fio's names as hidden flags of a command: each takes an optional value (`--bs 4k`,
/// `--time_based`), so that clap parses it instead of reading its value as a target; the
/// command then refuses it with iopulse's name (`refusal`).
pub fn augment(mut command: clap::Command) -> clap::Command {
    let known: Vec<String> = command.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
    for (fio, _) in FIO_NAMES {
        // A name iopulse shares with fio (none today) keeps iopulse's meaning.
        if known.iter().any(|k| k == fio) {
            continue;
        }
        command = command.arg(
            clap::Arg::new(format!("fio-name:{fio}"))
                .long(*fio)
                .hide(true)
                .num_args(0..=1)
                .value_name("VALUE")
                .allow_hyphen_values(true)
                .action(clap::ArgAction::Append),
        );
    }
    command
}

/// The one-line refusal of the first fio name on the command line, if any.
pub fn refusal(matches: &clap::ArgMatches) -> Option<String> {
    let given = |fio: &&&str| {
        let id = format!("fio-name:{fio}");
        matches.try_contains_id(&id).unwrap_or(false)
            && matches.value_source(&id) == Some(clap::parser::ValueSource::CommandLine)
    };
    let first = FIO_NAMES
        .iter()
        .map(|(fio, _)| fio)
        .filter(given)
        .min_by_key(|fio| matches.index_of(&format!("fio-name:{fio}")).unwrap_or(usize::MAX))?;
    let value = matches
        .get_raw(&format!("fio-name:{first}"))
        .and_then(|mut v| v.next())
        .map(|v| v.to_string_lossy().into_owned());
    let shown = match value {
        Some(v) => format!("--{first} {v}"),
        None => format!("--{first}"),
    };
    Some(format!("{shown} is fio's flag: iopulse calls this {}", iopulse_name_of(first).unwrap_or("")))
}
