//! Quantities as people type and read them. This file parses what they type: sizes
//! (`4k`, `1.5G`, `512`), durations (`10s`, `50us`, a bare `10`) and CPU or
//! node lists (`0-31`, `0,2,4-7`).
//!
//! Sizes are powers of two (k = 1024), as storage people mean them on a
//! command line; decimals are allowed and rounded to the nearest byte.
//! Parsing never formats (how quantities are shown is `display`) and never
//! decides whether a value is acceptable for a flag (see `spec`).

pub mod display;
pub mod values;

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
            match largest_accepted::<T>() {
                Some(max) => format!("'{text}' is too large: at most {max}"),
                None => format!("'{text}' is too large"),
            }
        } else {
            format!("'{text}' is not a whole number: give digits only, such as 32")
        }
    })
}

/// The largest unsigned integer type maximum that `T` parses (its own maximum for
/// u8 to u64), to say what a too-large count may be.
fn largest_accepted<T: std::str::FromStr>() -> Option<&'static str> {
    ["18446744073709551615", "4294967295", "65535", "255"].into_iter().find(|m| m.parse::<T>().is_ok())
}

/// Largest CPU or node number accepted in a list (Linux's NR_CPUS is at most 8192).
pub const MAX_LIST_ID: u32 = 65_535;

/// A CPU or node list as given on the command line, sorted and without duplicates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdList(pub Vec<u32>);

/// Parses a CPU or node list as Linux prints it and `taskset -c` takes it: `0-31`,
/// `0,2,4-7`, `3`. Returns the numbers sorted, without duplicates. An empty list,
/// a backwards range (`3-1`), a sign, or a number above `MAX_LIST_ID` is refused.
pub fn parse_cpu_list(text: &str) -> Result<IdList, String> {
    if text.trim().is_empty() {
        return Err(format!("empty list: {LIST_HINT}"));
    }
    parse_id_list(text).map(IdList)
}

impl std::str::FromStr for IdList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_cpu_list(text)
    }
}

const LIST_HINT: &str = "give numbers and ranges separated by commas, e.g. 0-3,8";

/// The same syntax, but an empty (or all-blank) text is the empty list: sysfs
/// prints an empty line for a NUMA node without CPUs.
pub fn parse_id_list(text: &str) -> Result<Vec<u32>, String> {
    let trimmed = text.trim();
    let mut ids = std::collections::BTreeSet::new();
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    for part in trimmed.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!("'{text}' has an empty item between commas: {LIST_HINT}"));
        }
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (list_number(text, a)?, list_number(text, b)?),
            None => {
                let n = list_number(text, part)?;
                (n, n)
            }
        };
        if first > last {
            let within = if part == trimmed { String::new() } else { format!(" in '{text}'") };
            return Err(format!("range {part}{within} runs backwards: write {last}-{first}"));
        }
        ids.extend(first..=last);
    }
    Ok(ids.into_iter().collect())
}

fn list_number(text: &str, item: &str) -> Result<u32, String> {
    let item = item.trim();
    if item.is_empty() || !item.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("cannot read '{text}' as a list ('{item}' is not a number): {LIST_HINT}"));
    }
    match item.parse::<u32>() {
        Ok(n) if n <= MAX_LIST_ID => Ok(n),
        _ => Err(format!("{item} in '{text}' is too large: numbers up to {MAX_LIST_ID} are accepted")),
    }
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
        assert!(parse_count::<u32>("99999999999").unwrap_err().contains("too large: at most 4294967295"));
        assert!(parse_count::<u64>("99999999999999999999").unwrap_err().contains("at most 18446744073709551615"));
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

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3"), Ok(IdList(vec![0, 1, 2, 3])));
        assert_eq!(parse_cpu_list("0,2,4-7"), Ok(IdList(vec![0, 2, 4, 5, 6, 7])));
        assert_eq!(parse_cpu_list(" 5 , 1-2,2\n"), Ok(IdList(vec![1, 2, 5])));
        assert_eq!(parse_cpu_list("3-3"), Ok(IdList(vec![3])));
        assert_eq!(parse_id_list(""), Ok(vec![]));
        assert_eq!(parse_id_list("\n"), Ok(vec![]));
    }

    #[test]
    fn bad_cpu_lists_are_refused_with_a_hint() {
        for (bad, says) in [
            ("", "empty"),
            ("a", "not a number"),
            ("3-1", "backwards"),
            ("1,,2", "empty item"),
            ("1,", "empty item"),
            ("-1", "not a number"),
            ("1-", "not a number"),
            ("+1", "not a number"),
            ("0x1", "not a number"),
            ("99999999999", "too large"),
            ("0-65536", "too large"),
            ("1 2", "not a number"),
        ] {
            let err = parse_cpu_list(bad).expect_err(bad);
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    proptest::proptest! {
        /// Issue 11: the CPU-list parser never panics, whatever it is given.
        #[test]
        fn cpu_list_parser_never_panics(text in "\\PC{0,40}") {
            let _ = parse_cpu_list(&text);
        }

        #[test]
        fn cpu_list_parser_never_panics_on_list_like_text(text in "[0-9,\\- ]{0,40}") {
            if let Ok(IdList(ids)) = parse_cpu_list(&text) {
                proptest::prop_assert!(ids.windows(2).all(|w| w[0] < w[1]));
                proptest::prop_assert!(ids.iter().all(|&id| id <= MAX_LIST_ID));
            }
        }

        /// Every sorted set of numbers, printed as a list, reads back as itself.
        #[test]
        fn cpu_lists_round_trip(mut ids in proptest::collection::vec(0u32..300, 1..40)) {
            ids.sort_unstable();
            ids.dedup();
            let text = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            proptest::prop_assert_eq!(parse_cpu_list(&text), Ok(IdList(ids)));
        }
    }
}
