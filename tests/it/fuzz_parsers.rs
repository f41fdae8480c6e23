//! Fuzzing (issue 11) of the parsers of what people type: sizes, durations,
//! counts, reals, CPU lists, and whole command lines through clap and the
//! spec's validation. None may panic, whatever the input; accepted values
//! must mean what they say.
//!
//! Each property runs `IOPULSE_FUZZ_CASES` cases (default 2,000); the time
//! each took is printed (`cargo test --test fuzz_parsers -- --nocapture`).
//! A long session: `IOPULSE_FUZZ_CASES=1000000 cargo test --release --test fuzz_parsers`.

use iopulse::testing::spec_of;
use iopulse::testing::units::{parse_count, parse_cpu_list, parse_duration, parse_real, parse_size};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::time::{Duration, Instant};

fn cases() -> u32 {
    std::env::var("IOPULSE_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

/// Runs `test` on `cases()` inputs of `strategy`; panics (with the minimal failing input)
/// if it fails or panics; prints how many cases ran and for how long.
fn fuzz<S: Strategy>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let config = Config { cases: cases(), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let t0 = Instant::now();
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{name}: {e}");
    }
    eprintln!("fuzz {name}: {} cases in {:.2?}", cases(), t0.elapsed());
}

/// Any text: printable characters of any script, and raw bytes (control characters,
/// invalid UTF-8 replaced) of up to 64 bytes.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// Text shaped like a number with a unit: signs, long digit runs, decimals, exponents,
/// spaces, and every unit the parsers know (and some they do not).
fn number_like() -> impl Strategy<Value = String> {
    "[ +-]{0,2}[0-9]{0,25}(\\.[0-9]{0,25})?([eE][+-]?[0-9]{0,4})? ?(k|K|m|M|g|G|t|T|p|P|e|E|z|KiB|MiB|GiB|TiB|PiB|EiB|kb|b|B|ns|us|µs|ms|s|sec|min|h|d|w|y|years|inf|nan|NaN|x)?[ ]?"
}

#[test]
fn sizes_never_panic() {
    fuzz("parse_size(any text)", any_text(), |t| {
        let _ = parse_size(&t);
        Ok(())
    });
    fuzz("parse_size(number-like)", number_like(), |t| {
        if let Ok(v) = parse_size(&t) {
            // Whatever is accepted fits in u64 and has no sign.
            prop_assert!(!t.trim_start().starts_with('-'), "{t:?} -> {v}");
        }
        Ok(())
    });
    fuzz("parse_size(N k|m|g)", (0u64..1 << 40, 0usize..3), |(n, unit)| {
        let (suffix, shift) = [("k", 10), ("m", 20), ("g", 30)][unit];
        let expected = n.checked_mul(1 << shift);
        prop_assert_eq!(parse_size(&format!("{n}{suffix}")).ok(), expected);
        Ok(())
    });
}

#[test]
fn durations_never_panic() {
    fuzz("parse_duration(any text)", any_text(), |t| {
        let _ = parse_duration(&t);
        Ok(())
    });
    fuzz("parse_duration(number-like)", number_like(), |t| {
        if let Ok(d) = parse_duration(&t) {
            prop_assert!(!t.trim_start().starts_with('-'), "{t:?} -> {d:?}");
        }
        Ok(())
    });
    fuzz("parse_duration(N s|ms|us)", (0u64..1 << 40, 0usize..3), |(n, unit)| {
        let (suffix, expected) =
            [("s", Duration::from_secs(n)), ("ms", Duration::from_millis(n)), ("us", Duration::from_micros(n))][unit];
        prop_assert_eq!(parse_duration(&format!("{n}{suffix}")), Ok(expected));
        prop_assert_eq!(parse_duration(&n.to_string()), Ok(Duration::from_secs(n)));
        Ok(())
    });
}

#[test]
fn cpu_lists_counts_and_reals_never_panic() {
    fuzz("parse_cpu_list(any text)", any_text(), |t| {
        let _ = parse_cpu_list(&t);
        Ok(())
    });
    fuzz("parse_cpu_list(list-like)", "[0-9,\\- ]{0,60}", |t| {
        if let Ok(list) = parse_cpu_list(&t) {
            prop_assert!(list.0.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(list.0.iter().all(|&id| id <= iopulse::testing::units::MAX_LIST_ID));
        }
        Ok(())
    });
    fuzz("parse_count/parse_real(number-like)", number_like(), |t| {
        let _ = parse_count::<u32>(&t);
        let _ = parse_count::<u64>(&t);
        if let Ok(v) = parse_real(&t) {
            prop_assert!(v.is_finite(), "{t:?} -> {v}");
        }
        Ok(())
    });
}

/// Flags that take a value, and values of every kind: whole command lines go through
/// clap and `into_spec` (the spec's validation) without a panic.
#[test]
fn command_lines_never_panic() {
    const FLAGS: &[&str] = &[
        "--file-size",
        "--block-size",
        "--duration",
        "--read-percent",
        "--write-percent",
        "--distribution",
        "--zipf-theta",
        "--pareto-h",
        "--gaussian-stddev",
        "--gaussian-center",
        "--file-distribution",
        "--io-limit",
        "--ops",
        "--threads",
        "--queue-depth",
        "--write-pattern",
        "--verify-pattern",
        "--verify-max-reports",
        "--engine",
        "--seed",
        "--cpu-cores",
        "--cpu-policy",
        "--numa-zones",
        "--madvise",
        "--max-errors",
        "--io-timeout",
    ];
    const SWITCHES: &[&str] = &[
        "--random",
        "--verify",
        "--direct",
        "--strict-direct",
        "--force",
        "--continue-on-error",
        "--no-scramble",
        "--sequential-overlap",
        "--mmap-populate",
        "--fsync-on-close",
    ];
    let value = prop_oneof![number_like(), any_text(), "(zipf|pareto|gaussian|uniform|null|sync|libaio|mmap|0|1|100)"];
    let flag = (0..FLAGS.len(), value).prop_map(|(i, v)| vec![FLAGS[i].to_string(), v]);
    let switch = (0..SWITCHES.len()).prop_map(|i| vec![SWITCHES[i].to_string()]);
    let args = proptest::collection::vec(prop_oneof![flag, switch], 0..6);
    fuzz("command lines", args, |args| {
        let mut argv = vec!["/nonexistent/iopulse-fuzz.dat".to_string()];
        argv.extend(args.into_iter().flatten());
        let _ = spec_of(argv);
        Ok(())
    });
}
