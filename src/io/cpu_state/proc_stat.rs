//! /proc/stat's CPU lines: time each CPU spent in each state since boot, in clock
//! ticks (USER_HZ, 100 per second on every Linux that matters; the figures used
//! here are shares, so the unit cancels).
//!
//! Must not: interpret the figures beyond busy, idle and steal; that is `mod.rs`'s.

use std::collections::BTreeMap;

/// One CPU's (or the machine's) ticks by state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// user + nice + system + irq + softirq: time spent running something.
    pub busy: u64,
    /// idle + iowait.
    pub idle: u64,
    /// Time the hypervisor ran something else while this CPU wanted to run (VMs).
    pub steal: u64,
}

impl CpuTicks {
    pub fn total(&self) -> u64 {
        self.busy + self.idle + self.steal
    }

    pub fn since(&self, earlier: &CpuTicks) -> CpuTicks {
        CpuTicks {
            busy: self.busy.saturating_sub(earlier.busy),
            idle: self.idle.saturating_sub(earlier.idle),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// The machine's line (`cpu`) and each CPU's (`cpuN`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcStat {
    pub machine: CpuTicks,
    pub per_cpu: BTreeMap<u32, CpuTicks>,
}

/// Parses /proc/stat's text; `None` when it has no machine line.
pub fn parse(text: &str) -> Option<ProcStat> {
    let mut machine = None;
    let mut per_cpu = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next() else { continue };
        let Some(which) = name.strip_prefix("cpu") else { continue };
        // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
        // already inside user and nice, so it is not added again.
        let v: Vec<u64> = fields.take(8).map(|f| f.parse().unwrap_or(0)).collect();
        if v.len() < 4 {
            continue;
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let ticks = CpuTicks { busy: at(0) + at(1) + at(2) + at(5) + at(6), idle: at(3) + at(4), steal: at(7) };
        if which.is_empty() {
            machine = Some(ticks);
        } else if let Ok(cpu) = which.parse::<u32>() {
            per_cpu.insert(cpu, ticks);
        }
    }
    Some(ProcStat { machine: machine?, per_cpu })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_machine_and_each_cpu_and_skips_other_lines() {
        let text = "cpu  505744 10 30873 59311 537 3 285 2675 7 0\n\
                    cpu0 252963 0 14909 30211 213 0 61 1308 0 0\n\
                    cpu1 252780 10 15963 29099 324 3 224 1367 0 0\n\
                    intr 123 4 5\nctxt 999\ncpufreq 1\n";
        let s = parse(text).unwrap();
        assert_eq!(s.machine, CpuTicks { busy: 505744 + 10 + 30873 + 3 + 285, idle: 59311 + 537, steal: 2675 });
        assert_eq!(s.per_cpu.len(), 2);
        assert_eq!(s.per_cpu[&1].steal, 1367);
        assert_eq!(s.per_cpu[&0].total(), 252963 + 14909 + 30211 + 213 + 61 + 1308);
    }

    #[test]
    fn old_kernels_without_steal_read_zero_steal_and_no_machine_line_is_none() {
        let s = parse("cpu 10 0 5 100\ncpu0 10 0 5 100\n").unwrap();
        assert_eq!(s.machine, CpuTicks { busy: 15, idle: 100, steal: 0 });
        assert_eq!(parse("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(parse(""), None);
    }
}
