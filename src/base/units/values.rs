//! The types of flag values: what a person types (`4k`, `10s`, `32`, `70`), parsed the same
//! way wherever it is typed. Each type's `FromStr` is the one parser: clap calls it for a
//! flag on the command line, and `text` calls it for the same key in a job file, a profile,
//! a sweep point or the flags after a job file (`front/cli/table.rs`). Enumerations (`--engine
//! io_uring`) are parsed by clap's `ValueEnum` on both paths (`choice`).
//!
//! A value here is only read; whether it suits the run (a block size of 0, a queue depth
//! beyond the ring) is decided by `front/cli/` and `spec.rs`, for every way in alike.

use super::{parse_count, parse_duration, parse_real, parse_size};
use serde::{Deserialize, Deserializer};
use std::str::FromStr;
use std::time::Duration;

/// A size in bytes: `4k`, `1.5G`, `512` (k/m/g/t are powers of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl FromStr for Bytes {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_size(text).map(Bytes)
    }
}

/// An amount of I/O: bytes (`22m`), or a share of the region each worker addresses
/// (`100%`: as many bytes as its file or device, fio's per-job `size` left to the target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoAmount {
    Bytes(u64),
    /// Percent of each worker's region, 1 to 100,000 (a thousand passes).
    Share(u32),
}

impl FromStr for IoAmount {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let Some(number) = text.trim().strip_suffix('%') else { return parse_size(text).map(IoAmount::Bytes) };
        match number.trim().parse::<u32>() {
            Ok(p @ 1..=100_000) => Ok(IoAmount::Share(p)),
            _ => Err(format!(
                "`{text}`: a share of the target is a whole percent from 1% to 100000% (100%: as many bytes as each worker's file or device)"
            )),
        }
    }
}

/// A duration: `10s`, `50us`, `2m`, or a bare number of seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period(pub Duration);

impl FromStr for Period {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_duration(text).map(Period)
    }
}

/// A whole number: a count of threads, I/Os or writes, a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count<T>(pub T);

impl<T: FromStr> FromStr for Count<T> {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_count::<T>(text).map(Count)
    }
}

/// A finite real number (a distribution's parameter, a ratio).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real(pub f64);

impl FromStr for Real {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_real(text).map(Real)
    }
}

/// A percentage from 0 to 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percent(pub u8);

impl FromStr for Percent {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let value: u32 = parse_count(text.trim().trim_end_matches('%'))?;
        u8::try_from(value)
            .ok()
            .filter(|p| *p <= 100)
            .map(Percent)
            .ok_or_else(|| format!("'{text}' is not a percentage: give a whole number from 0 to 100"))
    }
}

/// A key's value in a table (`front/cli/table.rs`) is text: parsed by the type's own `FromStr`,
/// as clap parses the flag.
pub fn text<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let text = String::deserialize(deserializer)?;
    text.parse::<T>().map(Some).map_err(serde::de::Error::custom)
}

/// A key's value that names one of a flag's choices (`ValueEnum`), as clap reads it.
pub fn choice<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: clap::ValueEnum,
{
    let text = String::deserialize(deserializer)?;
    T::from_str(&text, false).map(Some).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_parses_what_people_type_and_names_the_problem() {
        assert_eq!("4k".parse::<Bytes>(), Ok(Bytes(4096)));
        assert_eq!("1.5m".parse::<Bytes>(), Ok(Bytes(3 << 19)));
        assert_eq!("10s".parse::<Period>(), Ok(Period(Duration::from_secs(10))));
        assert_eq!("32".parse::<Count<u32>>(), Ok(Count(32)));
        assert!("4294967296".parse::<Count<u32>>().unwrap_err().contains("too large"));
        assert_eq!("22m".parse::<IoAmount>(), Ok(IoAmount::Bytes(22 << 20)));
        assert_eq!("100%".parse::<IoAmount>(), Ok(IoAmount::Share(100)));
        assert_eq!("250 %".parse::<IoAmount>(), Ok(IoAmount::Share(250)));
        for bad in ["0%", "1.5%", "-5%", "100001%", "%"] {
            assert!(bad.parse::<IoAmount>().unwrap_err().contains("whole percent"), "{bad}");
        }
        assert_eq!("70".parse::<Percent>(), Ok(Percent(70)));
        assert_eq!("70%".parse::<Percent>(), Ok(Percent(70)));
        assert!("101".parse::<Percent>().unwrap_err().contains("0 to 100"));
        assert!("-1".parse::<Percent>().unwrap_err().contains("negative"));
        assert!("nan".parse::<Real>().is_err());
    }
}
