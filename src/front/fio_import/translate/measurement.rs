//! What a fio job measures and records, as iopulse keys: steady state, its logs and its
//! iolog. Translates; runs nothing.

use super::{JobTranslation, SECOND_NS};
use crate::base::diagnostics::error::UsageError;
use crate::front::fio_import::values::{count, iopulse_time, time_ns};

impl<'a> JobTranslation<'a> {
    /// `steadystate` (`ss`), `ss_dur`, `ss_ramp`: iopulse's --steady-state, its window, and a
    /// ramp before the judging starts.
    pub(super) fn steady_state(&mut self) -> Result<(), UsageError> {
        let Some(o) = self.get("steadystate") else {
            for name in ["steadystate_duration", "steadystate_ramp_time"] {
                if let Some(o) = self.get(name) {
                    return Err(self.bad(o, "applies to steadystate: add steadystate (e.g. iops:2%) or remove it"));
                }
            }
            return Ok(());
        };
        let criterion = self.text(o)?.to_ascii_lowercase();
        self.push_text("steady-state", o, criterion);
        if let Some(o) = self.get("steadystate_duration") {
            let ns = time_ns(self.text(o)?, SECOND_NS).map_err(|e| self.bad(o, &e))?;
            self.push_text("steady-state-window", o, iopulse_time(ns));
        }
        if let Some(o) = self.get("steadystate_ramp_time") {
            let ns = time_ns(self.text(o)?, SECOND_NS).map_err(|e| self.bad(o, &e))?;
            if self.get("ramp_time").is_none() && ns > 0 {
                self.push_text("ramp", o, iopulse_time(ns));
                self.notes.push(format!(
                    "{}: ss_ramp: iopulse's --ramp, whose I/O is not counted; fio counts it and only judges steadiness after it",
                    o.at
                ));
            }
        }
        Ok(())
    }

    /// `write_lat_log`, `write_bw_log`, `write_iops_log`, `log_avg_msec`: iopulse's time
    /// series (a row per interval in the JSON; `--timeseries FILE` writes them as CSV).
    pub(super) fn logs(&mut self) -> Result<(), UsageError> {
        let log = ["write_lat_log", "write_bw_log", "write_iops_log"].into_iter().find_map(|n| self.get(n));
        let average = self.get("log_avg_msec");
        let Some(o) = log.or(average) else { return Ok(()) };
        let interval_ms = match average {
            Some(a) => {
                let ms = count(self.text(a)?).map_err(|e| self.bad(a, &e))?;
                if ms == 0 {
                    return Err(self.bad(
                        a,
                        "fio's log of every I/O has no iopulse equivalent: give log_avg_msec=N (N ms per row of iopulse's time series)",
                    ));
                }
                ms
            }
            None => 1000,
        };
        self.push_text("interval", o, format!("{interval_ms}ms"));
        self.notes.push(format!(
            "{}: fio's logs become iopulse's time series: a row per {interval_ms} ms with IOPS, bandwidth and latency percentiles in the JSON's time_series (`--timeseries FILE` after the job file writes them as CSV, one file per job)",
            o.at
        ));
        Ok(())
    }

    /// The read pass that checks what a verified write job wrote, in the phase after it.
    /// `write_iolog`: the job's `write-iolog`, a log per job. Given in a [global] section, it
    /// is every job's, each its own file: the name with the job's before the extension, as
    /// iopulse's [global] key names them (fio would mix the jobs into one file).
    pub(super) fn write_iolog(&mut self) -> Result<(), UsageError> {
        let Some(o) = self.get("write_iolog") else { return Ok(()) };
        let path = self.text(o)?.to_string();
        if self.section.options.iter().any(|own| own == o) {
            self.push_text("write-iolog", o, path);
            return Ok(());
        }
        let safe = crate::storage::ledger::output::file_safe_names(&[self.name.as_str()]).remove(0);
        let own = crate::front::plan::iologs::beside(std::path::Path::new(&path), &safe).display().to_string();
        self.notes.push(format!("{}: write_iolog in [global]: job [{}] writes its own log, {own}", o.at, self.name));
        self.push_text("write-iolog", o, own);
        Ok(())
    }
}
