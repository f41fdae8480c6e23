//! Parsing of the quantities people type on the command line: sizes
//! (`4k`, `1.5G`, `512`) and durations (`10s`, `50us`, a bare `10`).
//!
//! Sizes are powers of two (k = 1024), as storage people mean them on a
//! command line; decimals are allowed and rounded to the nearest byte.
//! This module only parses: it never formats (see `report::units`) and never
//! decides whether a value is acceptable for a flag (see `spec`).

use std::time::Duration;

/// Parses a size such as `4k`, `1.5G`, `64MiB` or `512` into bytes.
///
/// k/m/g/t/p (with or without `i`/`b`) are powers of two. A bare number is
/// bytes. Negative numbers, NaN and values beyond `u64` are refused.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("empty size: give a number with an optional unit k/m/g/t (e.g. 4k, 1.5G)".into());
    }
    if trimmed.starts_with('-') {
        return Err(format!("'{text}' is negative: sizes are 0 or more (e.g. 4k, 1.5G)"));
    }
    parse_size::Config::new().with_binary().parse_size(trimmed).map_err(|e| {
        format!("cannot read '{text}' as a size ({e}): use a number with an optional unit k/m/g/t, e.g. 4k, 1.5G")
    })
}

/// Parses a duration: `10s`, `50us`, `2ms`, `1.5m`, `1h`, or a bare number of seconds (`10`, `0.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let hint = "use a number with a unit ns/us/ms/s/m/h (a bare number is seconds), e.g. 10s, 50us, 2m";
    if trimmed.is_empty() {
        return Err(format!("empty duration: {hint}"));
    }
    if trimmed.starts_with('-') {
        return Err(format!("'{text}' is negative: {hint}"));
    }
    // A bare number (integer or decimal) means seconds.
    if trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let seconds: f64 = trimmed.parse().map_err(|_| format!("cannot read '{text}' as a duration: {hint}"))?;
        return Duration::try_from_secs_f64(seconds).map_err(|_| format!("'{text}' is out of range: {hint}"));
    }
    // Decimal values with a unit ("1.5s", "0.5ms") are not humantime's; split them.
    if let Some(split) = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        let (number, unit) = trimmed.split_at(split);
        if number.contains('.') {
            let value: f64 = number.parse().map_err(|_| format!("cannot read '{text}' as a duration: {hint}"))?;
            let unit_seconds = match unit.trim() {
                "ns" => 1e-9,
                "us" | "µs" => 1e-6,
                "ms" => 1e-3,
                "s" | "sec" => 1.0,
                "m" | "min" => 60.0,
                "h" => 3600.0,
                _ => return Err(format!("unknown unit in '{text}': {hint}")),
            };
            return Duration::try_from_secs_f64(value * unit_seconds)
                .map_err(|_| format!("'{text}' is out of range: {hint}"));
        }
    }
    humantime::parse_duration(trimmed).map_err(|e| format!("cannot read '{text}' as a duration ({e}): {hint}"))
}

/// Parses a real number (a parameter such as a zipf exponent); NaN and infinities are refused.
pub fn parse_real(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{text}' is not a finite number: give a decimal number such as 1.2")),
    }
}

/// Parses a whole number (a count such as threads, queue depth or a seed).
pub fn parse_count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!("'{text}' is negative: give a whole number such as 32"));
    }
    trimmed.parse::<T>().map_err(|_| {
        if trimmed.chars().all(|c| c.is_ascii_digit()) && !trimmed.is_empty() {
            format!("'{text}' is too large")
        } else {
            format!("'{text}' is not a whole number: give digits only, such as 32")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_powers_of_two() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("2t"), Ok(2 << 40));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn bad_sizes_are_refused_with_a_hint() {
        for bad in ["", "abc", "-4k", "4x", "NaN", "99999999999999999999999", "1e30"] {
            let err = parse_size(bad).expect_err(bad);
            assert!(err.contains("4k"), "{bad}: {err}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count::<u32>("32"), Ok(32));
        assert!(parse_count::<u32>("many").unwrap_err().contains("whole number"));
        assert!(parse_count::<u32>("-1").unwrap_err().contains("negative"));
        assert!(parse_count::<u32>("99999999999").unwrap_err().contains("too large"));
    }

    #[test]
    fn durations_accept_units_and_bare_seconds() {
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("50us"), Ok(Duration::from_micros(50)));
        assert_eq!(parse_duration("2ms"), Ok(Duration::from_millis(2)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    }

    #[test]
    fn bad_durations_are_refused_with_a_hint() {
        for bad in ["", "ten", "-1", "5parsecs", "1.2.3", "1e999", "NaN", "1.5x"] {
            let err = parse_duration(bad).expect_err(bad);
            assert!(err.contains("10s"), "{bad}: {err}");
        }
    }
}
