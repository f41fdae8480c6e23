//! The profiles shipped in the binary (`profiles/*.toml`, embedded): job files for
//! `iopulse --profile NAME` and `iopulse` with no target (the `default` profile), listed
//! by `iopulse profiles` and printed by `iopulse profiles NAME` so that users can copy
//! and edit them. A profile names no target: the run gives it one.
//!
//! It holds the texts; it must not parse or run them (`commands/profile.rs` does).

/// One profile: its name and its job file.
pub struct Profile {
    pub name: &'static str,
    pub text: &'static str,
}

/// The profile `iopulse` runs with no target and no job.
pub const DEFAULT: &str = "default";

/// Passes of each step of the default profiles (KDiskMark's default) when `--loops` is
/// not given; other profiles run once.
pub const DEFAULT_LOOPS: u32 = 5;

/// How many passes of each step a run of profile `name` makes without `--loops`.
pub fn default_loops(name: &str) -> u32 {
    if name.starts_with(DEFAULT) { DEFAULT_LOOPS } else { 1 }
}

/// Every profile, the default first.
pub const PROFILES: &[Profile] = &[
    Profile { name: DEFAULT, text: include_str!("../../../profiles/default.toml") },
    Profile { name: "default-t16", text: include_str!("../../../profiles/default-t16.toml") },
    Profile { name: "oltp", text: include_str!("../../../profiles/oltp.toml") },
    Profile { name: "streaming", text: include_str!("../../../profiles/streaming.toml") },
    Profile { name: "cache-cdn", text: include_str!("../../../profiles/cache-cdn.toml") },
    Profile { name: "integrity", text: include_str!("../../../profiles/integrity.toml") },
    Profile { name: "etcd", text: include_str!("../../../profiles/etcd.toml") },
    Profile { name: "varmail", text: include_str!("../../../profiles/varmail.toml") },
    Profile { name: "fileserver", text: include_str!("../../../profiles/fileserver.toml") },
    Profile { name: "webserver", text: include_str!("../../../profiles/webserver.toml") },
];

/// The profile named `name`.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

impl Profile {
    /// What it measures: its first line, `# NAME: WHAT`, without the name.
    pub fn summary(&self) -> &'static str {
        let first = self.text.lines().next().unwrap_or("");
        first.trim_start_matches('#').trim().split_once(": ").map_or(first, |(_, what)| what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_is_a_valid_job_file_named_in_its_first_line() {
        for p in PROFILES {
            assert!(p.text.starts_with(&format!("# {}: ", p.name)), "{}", p.name);
            assert!(!p.summary().is_empty());
            let file = crate::front::plan::job_file::parse::parse(p.name, p.text).unwrap();
            let plan = crate::front::plan::job_file::plan(&file, &Default::default(), Vec::new())
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(plan.jobs().all(|j| j.spec.targets.is_empty()), "{}: a profile names no target", p.name);
        }
        assert_eq!(find(DEFAULT).unwrap().name, "default");
        assert!(find("nope").is_none());
    }

    #[test]
    fn the_default_profile_has_kdiskmarks_tests_read_then_written_one_after_another() {
        for (name, tests) in [
            (
                DEFAULT,
                &[(1u64 << 20, false, 8u32, 1u32), (1 << 20, false, 1, 1), (4096, true, 32, 1), (4096, true, 1, 1)][..],
            ),
            (
                "default-t16",
                &[
                    (1 << 20, false, 8, 1),
                    (1 << 20, false, 1, 1),
                    (4096, true, 32, 1),
                    (4096, true, 32, 16),
                    (4096, true, 1, 1),
                ],
            ),
        ] {
            let file = crate::front::plan::job_file::parse::parse(name, find(name).unwrap().text).unwrap();
            let plan = crate::front::plan::job_file::plan(&file, &Default::default(), Vec::new()).unwrap();
            let steps: Vec<(String, u64, bool, u32, u32, u8, u32)> = plan
                .phases
                .iter()
                .flat_map(|p| p.jobs.iter().map(move |j| (p.number, j)))
                .map(|(phase, j)| {
                    let s = &j.spec;
                    let random = s.access.order == crate::workload::spec::AccessOrder::Random;
                    (
                        j.name.clone(),
                        s.shape.block_size_bytes,
                        random,
                        s.shape.queue_depth,
                        s.shape.threads,
                        s.access.read_percent,
                        phase,
                    )
                })
                .collect();
            let expected: Vec<(String, u64, bool, u32, u32, u8, u32)> = tests
                .iter()
                // As KDiskMark: every test read, then every test written.
                .flat_map(|&(bs, random, depth, threads)| {
                    let test = format!(
                        "{}{}-Q{depth}T{threads}",
                        if random { "RND" } else { "SEQ" },
                        if bs == 4096 { "4K" } else { "1M" }
                    );
                    [(format!("{test}-read"), 100u8)].map(|(n, r)| (n, bs, random, depth, threads, r))
                })
                .chain(tests.iter().flat_map(|&(bs, random, depth, threads)| {
                    let test = format!(
                        "{}{}-Q{depth}T{threads}",
                        if random { "RND" } else { "SEQ" },
                        if bs == 4096 { "4K" } else { "1M" }
                    );
                    [(format!("{test}-write"), 0u8)].map(|(n, r)| (n, bs, random, depth, threads, r))
                }))
                .enumerate()
                .map(|(i, (n, bs, random, depth, threads, r))| (n, bs, random, depth, threads, r, i as u32 + 1))
                .collect();
            assert_eq!(steps, expected, "{name}");
            assert!(plan.jobs().all(|j| j.spec.io.direct && j.spec.shape.file_size_bytes == Some(1 << 30)), "{name}");
            assert_eq!(default_loops(name), 5);
        }
        assert_eq!(default_loops("oltp"), 1);
    }
}
