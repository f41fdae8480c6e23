//! The fio options iopulse knows: each name with its common aliases, and whether it is
//! translated (`translate.rs` does it), has no effect on what iopulse measures, or is
//! refused for a named reason. An option not in this table has no iopulse equivalent.
//! docs/fio.md is this table in prose; keep the two together.
//!
//! It names options; it must not read values or build iopulse keys.

/// What becomes of a fio option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// Translated into iopulse keys by `translate.rs`.
    Mapped,
    /// Accepted; it changes nothing iopulse would do differently, for this reason (said in
    /// the translation's notes, and so in the result).
    NoEffect(&'static str),
    /// Refused with this reason, also under --ignore-unsupported (it would change the result).
    Refused(&'static str),
    /// Not a job-file key in iopulse, but a flag or a command (`flag_names.rs` says which):
    /// treated as an option without an equivalent (refused, or ignored with
    /// --ignore-unsupported), the refusal naming what to give instead.
    Elsewhere,
}

/// A fio option iopulse knows.
#[derive(Clone, Copy, Debug)]
pub struct Known {
    /// The canonical name (the one docs/fio.md lists).
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub support: Support,
}

const fn mapped(name: &'static str, aliases: &'static [&'static str]) -> Known {
    Known { name, aliases, support: Support::Mapped }
}

const fn harmless(name: &'static str, aliases: &'static [&'static str], why: &'static str) -> Known {
    Known { name, aliases, support: Support::NoEffect(why) }
}

/// Every fio option iopulse knows, in the order docs/fio.md lists them.
pub const TABLE: &[Known] = &[
    mapped("name", &[]),
    harmless("description", &[], "a comment"),
    mapped("rw", &["readwrite"]),
    mapped("rwmixread", &[]),
    mapped("rwmixwrite", &[]),
    mapped("bs", &["blocksize"]),
    mapped("bsrange", &["blocksize_range"]),
    mapped("bssplit", &[]),
    mapped("blockalign", &["ba"]),
    Known {
        name: "bs_is_seq_rand",
        aliases: &[],
        support: Support::Refused(
            "iopulse splits block sizes by reads and writes, not by sequential and random I/O: drop it and give the split per op",
        ),
    },
    Known {
        name: "zonemode",
        aliases: &[],
        support: Support::Refused(
            "iopulse does not address zoned devices zone by zone: drop it for a conventional target",
        ),
    },
    mapped("size", &[]),
    mapped("io_size", &["io_limit"]),
    mapped("filesize", &[]),
    mapped("number_ios", &[]),
    mapped("filename", &[]),
    mapped("directory", &[]),
    mapped("nrfiles", &["nr_files"]),
    mapped("ioengine", &[]),
    mapped("iodepth", &[]),
    mapped("sqthread_poll", &[]),
    mapped("sqthread_poll_cpu", &[]),
    mapped("direct", &[]),
    mapped("buffered", &[]),
    mapped("invalidate", &[]),
    mapped("fadvise_hint", &[]),
    mapped("numjobs", &[]),
    harmless("thread", &["threads"], "iopulse's workers are always threads"),
    mapped("runtime", &["timeout"]),
    mapped("time_based", &[]),
    mapped("ramp_time", &[]),
    mapped("steadystate", &["ss"]),
    mapped("steadystate_duration", &["ss_dur"]),
    mapped("steadystate_ramp_time", &["ss_ramp"]),
    mapped("write_lat_log", &[]),
    mapped("write_bw_log", &[]),
    mapped("write_iops_log", &[]),
    mapped("log_avg_msec", &[]),
    mapped("write_iolog", &[]),
    mapped("norandommap", &[]),
    mapped("random_distribution", &[]),
    mapped("randseed", &[]),
    mapped("rate_iops", &[]),
    mapped("rate", &[]),
    mapped("thinktime", &[]),
    mapped("thinktime_blocks", &[]),
    mapped("verify", &[]),
    mapped("dedupe_percentage", &[]),
    mapped("buffer_compress_percentage", &[]),
    mapped("fsync", &[]),
    mapped("fdatasync", &[]),
    mapped("sync", &[]),
    mapped("end_fsync", &[]),
    mapped("cpus_allowed", &[]),
    mapped("cpus_allowed_policy", &[]),
    mapped("numa_cpu_nodes", &[]),
    harmless("group_reporting", &[], "iopulse reports a job's workers together, and each one in the JSON"),
    harmless("new_group", &[], "iopulse reports each job on its own and all of them combined"),
    harmless("gtod_reduce", &[], "iopulse reads the clock at most twice per I/O and keeps every latency figure"),
    harmless(
        "randrepeat",
        &["allrandrepeat"],
        "iopulse's offsets repeat from --seed (randseed), not from fio's generator",
    ),
    harmless(
        "random_generator",
        &[],
        "iopulse has one generator (wyrand): its offsets are never fio's, whichever fio generator was named",
    ),
    harmless(
        "clat_percentiles",
        &["lat_percentiles", "percentile_list"],
        "iopulse reports its fixed percentiles and keeps the whole histogram in the JSON",
    ),
    harmless("kb_base", &["unit_base"], "it changes how fio prints sizes; iopulse shows KiB and MB/s side by side"),
    mapped("stonewall", &["wait_for_previous"]),
    harmless("fixedbufs", &[], "iopulse's io_uring registers its buffers by default (--no-register to compare)"),
    // fio options iopulse has as flags or commands, not as job-file keys.
    elsewhere("read_iolog"),
    elsewhere("replay_no_stall"),
    elsewhere("replay_time_scale"),
    elsewhere("iodepth_batch_submit"),
    elsewhere("hipri"),
    elsewhere("percentage_random"),
    elsewhere("verify_backlog"),
    elsewhere("output"),
];

const fn elsewhere(name: &'static str) -> Known {
    Known { name, aliases: &[], support: Support::Elsewhere }
}

/// The option named `key` (a name or an alias, lower case).
pub fn lookup(key: &str) -> Option<&'static Known> {
    TABLE.iter().find(|k| k.name == key || k.aliases.contains(&key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_and_names_are_unique() {
        assert_eq!(lookup("readwrite").unwrap().name, "rw");
        assert_eq!(lookup("timeout").unwrap().name, "runtime");
        assert_eq!(lookup("wait_for_previous").unwrap().name, "stonewall");
        assert_eq!(lookup("ba").unwrap().name, "blockalign");
        assert!(matches!(lookup("zonemode").unwrap().support, Support::Refused(_)));
        assert!(lookup("loops").is_none());
        // fio's dedupe and compression controls iopulse has no equivalent of stay unknown.
        for name in ["dedupe_mode", "dedupe_global", "dedupe_working_set_percentage", "buffer_compress_chunk"] {
            assert!(lookup(name).is_none(), "{name}");
        }
        let mut names: Vec<&str> =
            TABLE.iter().flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied())).collect();
        let before = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), before, "a name or alias appears twice");
    }
}
