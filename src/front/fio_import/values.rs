//! fio's value syntax: sizes (`4k`, `1M`, `1g`, `512`: powers of two, fio's default
//! kb_base=1024), times (a bare number in the option's default unit; `us`, `ms`, `s`, `m`,
//! `h`, `d`), switches (`1`/`0`, a bare key meaning 1) and counts; and the same quantities
//! written back in iopulse's syntax.
//!
//! It parses and writes values; it must not decide what an option means.

/// A size in bytes (`4k`, `4KiB`, `4kb`, `1.5M`, `512`: powers of two as fio reads them).
pub fn size_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return Err(format!("`{text}` is not a size: give a number with k, m, g or t (e.g. 4k, 1g)")),
    };
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a size: give e.g. 4k, 1g"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(0.0..1.8e19).contains(&bytes) || bytes.fract() != 0.0 {
        return Err(format!("`{text}` is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// A time in nanoseconds; a bare number is in `bare_unit_ns` (fio: seconds for runtime,
/// microseconds for thinktime).
pub fn time_ns(text: &str, bare_unit_ns: u64) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit_ns: u64 = match unit {
        "" => bare_unit_ns,
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" | "hour" => 3_600_000_000_000,
        "d" | "day" => 86_400_000_000_000,
        _ => return Err(format!("`{text}` is not a time: give a number with us, ms, s, m or h (e.g. 30s)")),
    };
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a time: give e.g. 30s, 500ms"))?;
    let ns = value * unit_ns as f64;
    if !(0.0..1.8e19).contains(&ns) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(ns.round() as u64)
}

/// A switch: `1`/`0` (also true/false, on/off); a bare key is 1.
pub fn switch(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1" | "true" | "on" | "yes") => Ok(true),
        Some("0" | "false" | "off" | "no") => Ok(false),
        Some(other) => Err(format!("`{other}` is not 0 or 1")),
    }
}

/// A whole number (`32`, `1k` as fio allows for counts).
pub fn count(text: &str) -> Result<u64, String> {
    size_bytes(text).map_err(|_| format!("`{}` is not a whole number", text.trim()))
}

/// A size in iopulse's syntax: the largest exact unit (`4k`, `1M`, `3G`, `1536`).
pub fn iopulse_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "k")] {
        if bytes != 0 && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// A time in iopulse's syntax: the largest exact unit (`30s`, `500ms`, `50us`).
pub fn iopulse_time(ns: u64) -> String {
    for (unit_ns, unit) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns.is_multiple_of(unit_ns) {
            return format!("{}{unit}", ns / unit_ns);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_fio_reads_them() {
        assert_eq!(size_bytes("4k").unwrap(), 4096);
        assert_eq!(size_bytes("4KiB").unwrap(), 4096);
        assert_eq!(size_bytes("1M").unwrap(), 1 << 20);
        assert_eq!(size_bytes("1.5g").unwrap(), 3 << 29);
        assert_eq!(size_bytes("512").unwrap(), 512);
        assert!(size_bytes("4x").is_err() && size_bytes("").is_err() && size_bytes("50%").is_err());
        assert_eq!(iopulse_size(4096), "4k");
        assert_eq!(iopulse_size(3 << 30), "3G");
        assert_eq!(iopulse_size(1536), "1536");
    }

    #[test]
    fn times_with_the_default_unit() {
        assert_eq!(time_ns("30", 1_000_000_000).unwrap(), 30_000_000_000);
        assert_eq!(time_ns("50", 1_000).unwrap(), 50_000);
        assert_eq!(time_ns("2m", 1).unwrap(), 120_000_000_000);
        assert_eq!(time_ns("250ms", 1).unwrap(), 250_000_000);
        assert!(time_ns("5 parsecs", 1).is_err());
        assert_eq!(iopulse_time(30_000_000_000), "30s");
        assert_eq!(iopulse_time(250_000_000), "250ms");
        assert_eq!(iopulse_time(50_000), "50us");
    }

    #[test]
    fn switches() {
        assert_eq!(switch(None), Ok(true));
        assert_eq!(switch(Some("0")), Ok(false));
        assert!(switch(Some("maybe")).is_err());
    }
}
