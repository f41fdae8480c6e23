//! `--start-at TIME`: a wall-clock time at which the measurement window opens,
//! so that runs launched on several hosts by any means (pdsh, ansible, a loop
//! over ssh) measure at the same time; `iopulse merge` then says how far apart
//! their windows really were. Parsing (a usage error names the flag) and the
//! wait itself; the wait is interruptible by the run's stop word.
//!
//! It never decides anything else about the run: the coordinator calls the
//! wait after layout, with every worker set up, right before the start gate.

use jiff::civil::{DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `--start-at`: when the window was asked to open, and when it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartAtInfo {
    /// The time asked for, RFC 3339 UTC.
    pub requested: String,
    pub requested_unix_ns: u64,
    /// How long after the requested time the window opened: the wake-up's own delay
    /// (microseconds) when on time, more when the time had passed before the targets
    /// were ready.
    pub late_ns: u64,
    /// The time had already passed when the run was ready: it started at once.
    pub missed: bool,
}

/// Furthest a start time may lie from now, either way: farther is taken for a typo.
const MAX_DISTANCE_NS: u64 = 24 * 3600 * 1_000_000_000;

/// A parsed `--start-at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartAt {
    pub unix_ns: u64,
}

impl StartAt {
    /// RFC 3339, UTC, to the nanosecond when not whole.
    pub fn rfc3339(&self) -> String {
        let time = UNIX_EPOCH + Duration::from_nanos(self.unix_ns);
        if self.unix_ns.is_multiple_of(1_000_000_000) {
            humantime::format_rfc3339_seconds(time).to_string()
        } else {
            humantime::format_rfc3339_nanos(time).to_string()
        }
    }
}

/// What the forms accepted are, for messages and `--help`.
const FORMS: &str = "give HH:MM[:SS] (today, local time), an RFC 3339 time (2025-06-01T14:30:00Z, \
2025-06-01T14:30:00+02:00, or without offset for local time) or @UNIX_SECONDS";

/// clap's parser for `--start-at`, against the current time and the system time zone.
impl std::str::FromStr for StartAt {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse(text)
    }
}

pub fn parse(text: &str) -> Result<StartAt, String> {
    parse_at(text, Timestamp::now(), &TimeZone::system())
}

/// `text` as a start time, as seen at `now` in time zone `tz`.
fn parse_at(text: &str, now: Timestamp, tz: &TimeZone) -> Result<StartAt, String> {
    let text = text.trim();
    let at: Timestamp = if let Some(seconds) = text.strip_prefix('@') {
        unix_seconds(seconds)
            .ok_or_else(|| format!("`{text}`: @ must be followed by seconds since 1970, e.g. @1750000000"))?
    } else if let Ok(ts) = text.parse::<Timestamp>() {
        ts
    } else if let Ok(dt) = text.parse::<DateTime>() {
        tz.to_zoned(dt).map_err(|e| format!("`{text}`: {e}"))?.timestamp()
    } else if let Ok(time) = text.parse::<Time>() {
        let today = tz.to_datetime(now).date();
        tz.to_zoned(today.to_datetime(time)).map_err(|e| format!("`{text}`: {e}"))?.timestamp()
    } else {
        return Err(format!("`{text}` is not a time: {FORMS}"));
    };
    let distance_ns = (at.as_nanosecond() - now.as_nanosecond()).unsigned_abs();
    if distance_ns > u128::from(MAX_DISTANCE_NS) {
        let hours = distance_ns as f64 / 3.6e12;
        let when = if at > now { format!("in {hours:.0} h") } else { format!("{hours:.0} h ago") };
        return Err(format!("`{text}` is {when}: give a time within 24 hours of now"));
    }
    let unix_ns = u64::try_from(at.as_nanosecond()).map_err(|_| format!("`{text}` is before 1970"))?;
    Ok(StartAt { unix_ns })
}

/// "1750000000" or "1750000000.25" as a timestamp.
fn unix_seconds(text: &str) -> Option<Timestamp> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: i64 = whole.parse().ok()?;
    let nanos: i64 = if frac.is_empty() { 0 } else { format!("{:0<9}", &frac[..frac.len().min(9)]).parse().ok()? };
    Timestamp::from_second(seconds).ok()?.checked_add(nanos.nanoseconds()).ok()
}

/// Now, ns since the Unix epoch.
pub fn now_unix_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// How a wait for the start time went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waited {
    /// The time had passed before the wait began: how long ago (0 if not missed).
    pub missed_by_ns: u64,
    /// The wait ended early because the run was stopped (a signal).
    pub stopped: bool,
}

/// Longest single sleep, so that a signal is noticed promptly.
const SLEEP_SLICE: Duration = Duration::from_millis(50);
/// The last stretch is spun rather than slept: a sleep can overshoot by tens of µs.
const SPIN_NS: u64 = 1_000_000;

/// Waits until `at` (wall clock), or until `stop` is set. Returns at once if it has passed.
pub fn wait_until(at: StartAt, stop: &AtomicUsize) -> Waited {
    let now = now_unix_ns();
    if now >= at.unix_ns {
        return Waited { missed_by_ns: now - at.unix_ns, stopped: false };
    }
    loop {
        if stop.load(Ordering::Relaxed) != 0 {
            return Waited { missed_by_ns: 0, stopped: true };
        }
        let now = now_unix_ns();
        if now >= at.unix_ns {
            return Waited { missed_by_ns: 0, stopped: false };
        }
        let left_ns = at.unix_ns - now;
        if left_ns > SPIN_NS {
            std::thread::sleep(SLEEP_SLICE.min(Duration::from_nanos(left_ns - SPIN_NS)));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc_noon() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().unwrap()
    }

    fn ns(text: &str) -> u64 {
        text.parse::<Timestamp>().unwrap().as_nanosecond() as u64
    }

    #[test]
    fn accepts_rfc3339_local_times_and_unix_seconds() {
        let now = utc_noon();
        let utc = TimeZone::UTC;
        let paris = TimeZone::fixed(jiff::tz::offset(2));
        assert_eq!(parse_at("2025-06-01T12:30:00Z", now, &utc).unwrap().unix_ns, ns("2025-06-01T12:30:00Z"));
        assert_eq!(parse_at("2025-06-01T14:30:00+02:00", now, &utc).unwrap().unix_ns, ns("2025-06-01T12:30:00Z"));
        // Without an offset, and as a bare time of day: local time, today.
        assert_eq!(parse_at("2025-06-01T14:30:00", now, &paris).unwrap().unix_ns, ns("2025-06-01T12:30:00Z"));
        assert_eq!(parse_at("14:30:00", now, &paris).unwrap().unix_ns, ns("2025-06-01T12:30:00Z"));
        assert_eq!(parse_at("14:30", now, &paris).unwrap().unix_ns, ns("2025-06-01T12:30:00Z"));
        assert_eq!(parse_at("12:00:01.5", now, &utc).unwrap().unix_ns, ns("2025-06-01T12:00:01.5Z"));
        let at = now.as_second() + 60;
        assert_eq!(parse_at(&format!("@{at}"), now, &utc).unwrap().unix_ns, at as u64 * 1_000_000_000);
        assert_eq!(parse_at(&format!("@{at}.25"), now, &utc).unwrap().unix_ns, at as u64 * 1_000_000_000 + 250_000_000);
        // A time that has passed today is accepted: the run starts at once, and says so.
        assert!(parse_at("11:59:00", now, &utc).is_ok());
    }

    #[test]
    fn refuses_what_is_not_a_time_or_is_days_away() {
        let now = utc_noon();
        for bad in ["", "noon", "25:00", "@", "@12x", "@-5", "2025-13-01T00:00:00Z", "12:00:00 tomorrow"] {
            let e = parse_at(bad, now, &TimeZone::UTC).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        let e = parse_at("2025-06-03T12:00:00Z", now, &TimeZone::UTC).unwrap_err();
        assert!(e.contains("in 48 h") && e.contains("24 hours"), "{e}");
        let e = parse_at("@1000", now, &TimeZone::UTC).unwrap_err();
        assert!(e.contains("ago"), "{e}");
    }

    #[test]
    fn rfc3339_is_whole_seconds_when_it_can_be() {
        assert_eq!(StartAt { unix_ns: 1_750_000_000_000_000_000 }.rfc3339(), "2025-06-15T15:06:40Z");
        assert_eq!(StartAt { unix_ns: 1_750_000_000_500_000_000 }.rfc3339(), "2025-06-15T15:06:40.500000000Z");
    }

    #[test]
    fn waits_until_the_time_or_the_stop_word() {
        let stop = AtomicUsize::new(0);
        let past = StartAt { unix_ns: now_unix_ns() - 2_000_000_000 };
        let w = wait_until(past, &stop);
        assert!(w.missed_by_ns >= 2_000_000_000 && !w.stopped, "{w:?}");
        let soon = StartAt { unix_ns: now_unix_ns() + 30_000_000 };
        let w = wait_until(soon, &stop);
        assert!(now_unix_ns() >= soon.unix_ns && w == Waited { missed_by_ns: 0, stopped: false });
        stop.store(130, Ordering::Relaxed);
        let later = StartAt { unix_ns: now_unix_ns() + 60_000_000_000 };
        assert!(wait_until(later, &stop).stopped);
    }
}
