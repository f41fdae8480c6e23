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

/// Every profile, the default first.
pub const PROFILES: &[Profile] = &[
    Profile { name: DEFAULT, text: include_str!("../../profiles/default.toml") },
    Profile { name: "oltp", text: include_str!("../../profiles/oltp.toml") },
    Profile { name: "streaming", text: include_str!("../../profiles/streaming.toml") },
    Profile { name: "cache-cdn", text: include_str!("../../profiles/cache-cdn.toml") },
    Profile { name: "integrity", text: include_str!("../../profiles/integrity.toml") },
    Profile { name: "etcd", text: include_str!("../../profiles/etcd.toml") },
    Profile { name: "varmail", text: include_str!("../../profiles/varmail.toml") },
    Profile { name: "fileserver", text: include_str!("../../profiles/fileserver.toml") },
    Profile { name: "webserver", text: include_str!("../../profiles/webserver.toml") },
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
            let file = crate::plan::job_file::parse::parse(p.name, p.text).unwrap();
            let plan = crate::plan::job_file::plan(&file, &Default::default(), Vec::new())
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(plan.jobs().all(|j| j.spec.targets.is_empty()), "{}: a profile names no target", p.name);
        }
        assert_eq!(find(DEFAULT).unwrap().name, "default");
        assert!(find("nope").is_none());
    }

    #[test]
    fn the_default_profile_has_the_six_standard_steps_one_after_another() {
        let file = crate::plan::job_file::parse::parse("default", find(DEFAULT).unwrap().text).unwrap();
        let plan = crate::plan::job_file::plan(&file, &Default::default(), Vec::new()).unwrap();
        let steps: Vec<(u64, bool, u32, u8, u32)> = plan
            .phases
            .iter()
            .flat_map(|p| p.jobs.iter().map(move |j| (p.number, &j.spec)))
            .map(|(phase, s)| {
                (s.block_size_bytes, s.order == crate::spec::AccessOrder::Random, s.queue_depth, s.read_percent, phase)
            })
            .collect();
        assert_eq!(
            steps,
            vec![
                (1 << 20, false, 8, 100, 1),
                (1 << 20, false, 8, 0, 2),
                (4096, true, 32, 100, 3),
                (4096, true, 32, 0, 4),
                (4096, true, 1, 100, 5),
                (4096, true, 1, 0, 6),
            ]
        );
        assert!(plan.jobs().all(|j| j.spec.direct));
    }
}
