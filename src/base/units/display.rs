//! How quantities are written for people: IOPS with K/M, sizes in KiB/MiB/GiB
//! (powers of two, as labelled), bandwidth in MiB/s with MB/s beside it,
//! latencies with three significant digits and their unit. No figure is ever written with
//! more than a few digits: one beyond what any run reaches (a result altered by hand, a
//! damaged file) is written with an exponent, `1.00e308`, never as 300 digits.

/// Beyond this magnitude (or not finite), a figure is written with an exponent.
const PLAIN_BELOW: f64 = 1e12;

/// `value` with an exponent when it is beyond what is written plainly.
fn beyond_plain(value: f64) -> Option<String> {
    (!value.is_finite() || value.abs() >= PLAIN_BELOW).then(|| format!("{value:.2e}"))
}

/// A number as given (a flag's value echoed in a message): as written when plain
/// (`2`, `0.9`), with an exponent beyond `PLAIN_BELOW` (`1.00e300`, never 300 digits).
pub fn number(value: f64) -> String {
    beyond_plain(value).unwrap_or_else(|| format!("{value}"))
}

/// 125300.0 → "125.3K", 1_250_000.0 → "1.25M", 812.0 → "812"; 1e308 → "1.00e308".
pub fn iops(value: f64) -> String {
    if let Some(text) = beyond_plain(value) {
        text
    } else if value >= 1e6 {
        format!("{:.2}M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1}K", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

/// Bytes in binary units: "4 KiB", "256 MiB", "1.50 GiB".
pub fn bytes(value: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = value as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 { format!("{v:.0} {}", UNITS[unit]) } else { format!("{v:.2} {}", UNITS[unit]) }
}

/// Bandwidth: "489.5 MiB/s (513.3 MB/s)".
pub fn bandwidth(bytes_per_sec: f64) -> String {
    if let Some(text) = beyond_plain(bytes_per_sec / 1e6) {
        return format!("{text} MB/s");
    }
    let (binary, binary_unit) = scale(bytes_per_sec, 1024.0, &["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"]);
    let (decimal, decimal_unit) = scale(bytes_per_sec, 1000.0, &["B/s", "kB/s", "MB/s", "GB/s", "TB/s"]);
    format!("{binary:.1} {binary_unit} ({decimal:.1} {decimal_unit})")
}

/// Bandwidth in binary units only, for narrow table columns: "220.1 MiB/s".
pub fn bandwidth_binary(bytes_per_sec: f64) -> String {
    if let Some(text) = beyond_plain(bytes_per_sec / 1e6) {
        return format!("{text} MB/s");
    }
    let (binary, binary_unit) = scale(bytes_per_sec, 1024.0, &BINARY_RATES);
    format!("{binary:.1} {binary_unit}")
}

const BINARY_RATES: [&str; 5] = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];

/// The binary unit `bandwidth_binary` shows `bytes_per_sec` in: bytes per second of one of
/// it, and its name (an axis drawn in that unit ticks at round values of it).
pub fn binary_rate_unit(bytes_per_sec: f64) -> (f64, &'static str) {
    let (_, name) = scale(bytes_per_sec, 1024.0, &BINARY_RATES);
    let power = BINARY_RATES.iter().position(|u| *u == name).unwrap_or(0);
    (1024f64.powi(power as i32), name)
}

fn scale(mut v: f64, base: f64, units: &[&'static str]) -> (f64, &'static str) {
    let mut i = 0;
    while v >= base && i + 1 < units.len() {
        v /= base;
        i += 1;
    }
    (v, units[i])
}

/// Latency with 3 significant digits: "812 ns", "7.83 µs", "14.2 ms", "1.50 s".
pub fn latency_ns(ns: u64) -> String {
    let v = ns as f64;
    let (value, unit) = if v < 1e3 {
        (v, "ns")
    } else if v < 1e6 {
        (v / 1e3, "µs")
    } else if v < 1e9 {
        (v / 1e6, "ms")
    } else {
        (v / 1e9, "s")
    };
    if unit == "ns" || value >= 100.0 {
        format!("{value:.0} {unit}")
    } else if value >= 10.0 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}

/// Seconds with sensible precision: "10.00 s", "0.503 s".
pub fn seconds_ns(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s >= 1.0 { format!("{s:.2} s") } else { format!("{s:.3} s") }
}

/// 1253112 → "1,253,112".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(iops(125_300.0), "125.3K");
        assert_eq!(iops(1_250_000.0), "1.25M");
        assert_eq!(iops(812.4), "812");
        assert_eq!(bytes(4096), "4 KiB");
        assert_eq!(bytes(256 << 20), "256 MiB");
        assert_eq!(bytes(3 << 29), "1.50 GiB");
        assert_eq!(bytes(1000), "1000 B");
        assert_eq!(bandwidth(1_048_576.0), "1.0 MiB/s (1.0 MB/s)");
        assert_eq!(latency_ns(812), "812 ns");
        assert_eq!(latency_ns(7_830), "7.83 µs");
        assert_eq!(latency_ns(14_200_000), "14.2 ms");
        assert_eq!(latency_ns(120_000), "120 µs");
        assert_eq!(latency_ns(1_500_000_000), "1.50 s");
        assert_eq!(count(1_253_112), "1,253,112");
        assert_eq!(count(12), "12");
    }

    #[test]
    fn no_figure_is_written_with_hundreds_of_digits() {
        for v in [1e308, -1e308, f64::MAX, f64::INFINITY, f64::NAN, 1e15] {
            for text in [iops(v), bandwidth(v), bandwidth_binary(v)] {
                assert!(text.len() < 32, "{v}: {text}");
            }
        }
        assert_eq!(iops(1e308), "1.00e308");
        assert_eq!(iops(999_999_999_999.0), "1000000.00M");
        assert_eq!(bandwidth(1e308), "1.00e302 MB/s");
        assert_eq!(bandwidth(1e17), "90949.5 TiB/s (100000.0 TB/s)");
    }
}
