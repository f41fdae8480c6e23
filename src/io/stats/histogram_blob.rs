//! A histogram blob read from a file (a result's `histograms`), checked before anything is
//! allocated for it: the HdrHistogram V2 header says how many counters the histogram has
//! (from its range and digits) and how many bytes encode them, and a DEFLATE stream may
//! inflate to any size. hdrhistogram's own deserializer allocates what the header says and
//! inflates without a bound, so a 10 KB blob claiming 2 GiB aborts the process, and a
//! deflate bomb fills memory. Here the header is judged first, against itself and a cap,
//! and the stream is inflated only as far as the header allows; what comes out is a plain
//! V2 blob the deserializer can no longer be misled by.
//!
//! It only checks and inflates bytes; it decodes no count (the deserializer does).

use super::HistogramCodecError;
use std::io::Read;

/// hdrhistogram's cookies (V2 with the `| 0x10` of its 8-byte word size).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// cookie, payload length, normalizing offset, digits, lowest, highest, ratio.
const V2_HEADER_BYTES: usize = 40;

/// The most counters a decoded histogram may have (8 MiB of u64). iopulse's own have
/// 33,792 (1 ns to 1 h at 3 significant digits); a foreign histogram of 4 digits over the
/// whole u64 range has 835,584.
pub const MAX_COUNTERS: u64 = 1 << 20;
/// A counter takes at most 9 bytes in the payload (a zigzag LEB128 of 64 bits, the 9th byte
/// carrying 8 bits); a run of zeros takes one varint.
const MAX_BYTES_PER_COUNTER: u64 = 9;

/// The blob `bytes` (base64 already decoded) as a plain V2 blob whose header has been
/// checked: its counters at most `MAX_COUNTERS`, its payload no longer than they can take,
/// and every byte of the payload present. A compressed blob is inflated only up to that
/// payload: nothing past it is produced, however far the stream would go.
pub(super) fn checked_plain_v2(bytes: &[u8]) -> Result<Vec<u8>, HistogramCodecError> {
    let cookie = be_u32(bytes, 0).ok_or_else(|| decode("blob shorter than its cookie"))?;
    match cookie {
        V2_COOKIE => {
            let header = bytes.get(..V2_HEADER_BYTES).ok_or_else(|| decode("blob shorter than its header"))?;
            let payload_bytes = check_header(header)?;
            let whole = V2_HEADER_BYTES + payload_bytes;
            bytes
                .get(..whole)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| truncated(payload_bytes, bytes.len() - V2_HEADER_BYTES))
        }
        V2_COMPRESSED_COOKIE => {
            let stated = be_u32(bytes, 4).ok_or_else(|| decode("blob shorter than its header"))? as usize;
            let compressed = bytes.get(8..).unwrap_or_default();
            if stated > compressed.len() {
                return Err(decode(&format!(
                    "its header says {stated} compressed bytes follow, but {} do",
                    compressed.len()
                )));
            }
            let mut inflated = flate2::read::ZlibDecoder::new(&compressed[..stated]);
            let mut header = [0u8; V2_HEADER_BYTES];
            inflated.read_exact(&mut header).map_err(|e| decode(&format!("inflating its header: {e}")))?;
            if be_u32(&header, 0) != Some(V2_COOKIE) {
                return Err(decode("the inflated blob is not an HdrHistogram V2 histogram"));
            }
            let payload_bytes = check_header(&header)?;
            let mut plain = Vec::with_capacity(V2_HEADER_BYTES + payload_bytes);
            plain.extend_from_slice(&header);
            let read = inflated
                .take(payload_bytes as u64)
                .read_to_end(&mut plain)
                .map_err(|e| decode(&format!("inflating its counters: {e}")))?;
            if read < payload_bytes {
                return Err(truncated(payload_bytes, read));
            }
            Ok(plain)
        }
        other => Err(decode(&format!("cookie {other:#010x} is not an HdrHistogram V2 histogram's"))),
    }
}

/// The payload length a V2 `header` states, once checked against the counters its range
/// and digits make (`counters`) and `MAX_COUNTERS`.
fn check_header(header: &[u8]) -> Result<usize, HistogramCodecError> {
    let field = |at: usize| be_u32(header, at).ok_or_else(|| decode("blob shorter than its header"));
    let payload_bytes = u64::from(field(4)?);
    let digits = field(12)?;
    let wide = |at: usize| Ok::<u64, HistogramCodecError>((u64::from(field(at)?) << 32) | u64::from(field(at + 4)?));
    let (low, high) = (wide(16)?, wide(24)?);
    let counters = counters(low, high, digits).ok_or_else(|| {
        decode(&format!("its header's range ({low} to {high} at {digits} significant digits) is not a histogram's"))
    })?;
    if counters > MAX_COUNTERS {
        return Err(decode(&format!(
            "its header's range ({low} to {high} at {digits} significant digits) makes {counters} counters, more than the {MAX_COUNTERS} a result's histogram may have"
        )));
    }
    if payload_bytes > counters * MAX_BYTES_PER_COUNTER {
        return Err(decode(&format!(
            "its header says its counters take {payload_bytes} bytes, more than {counters} counters can ({} at most)",
            counters * MAX_BYTES_PER_COUNTER
        )));
    }
    Ok(payload_bytes as usize)
}

/// How many counters `Histogram::new_with_bounds(low, high, digits)` allocates (its own
/// arithmetic), or `None` where it would refuse the bounds.
fn counters(low: u64, high: u64, digits: u32) -> Option<u64> {
    if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || digits > 5 {
        return None;
    }
    let largest = 2 * 10u64.pow(digits);
    let sub_bucket_count_magnitude = u64::BITS - (largest - 1).leading_zeros(); // ceil(log2)
    let unit_magnitude = u64::BITS - 1 - low.leading_zeros(); // floor(log2)
    if unit_magnitude + sub_bucket_count_magnitude > 63 {
        return None;
    }
    let sub_bucket_count = 1u64 << sub_bucket_count_magnitude;
    let mut smallest_untrackable = sub_bucket_count << unit_magnitude;
    let mut buckets = 1u64;
    while smallest_untrackable <= high {
        if smallest_untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) * (sub_bucket_count / 2))
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn decode(why: &str) -> HistogramCodecError {
    HistogramCodecError::Decode(why.to_string())
}

fn truncated(stated: usize, found: usize) -> HistogramCodecError {
    decode(&format!("its header says its counters take {stated} bytes, but only {found} follow"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};

    #[test]
    fn counters_are_hdrhistograms_own() {
        for (low, high, digits) in [(1, 3_600_000_000_000, 3), (1, 2, 0), (1, u64::MAX, 4), (1000, 1 << 40, 2)] {
            let h = Histogram::<u64>::new_with_bounds(low, high, digits as u8).unwrap();
            assert_eq!(counters(low, high, digits), Some(h.distinct_values() as u64), "{low} {high} {digits}");
        }
        assert_eq!(counters(1, 3_600_000_000_000, 3), Some(33_792));
        assert_eq!(counters(0, 10, 3), None);
        assert_eq!(counters(1, 10, 6), None);
    }

    #[test]
    fn plain_and_compressed_blobs_pass_whole() {
        let mut h = crate::io::stats::new_latency_histogram();
        for v in [10u64, 1_000, 123_456, 9_999_999] {
            h.record_n(v, 7).unwrap();
        }
        let mut deflated = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut deflated).unwrap();
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        assert_eq!(checked_plain_v2(&deflated).unwrap(), plain);
        assert_eq!(checked_plain_v2(&plain).unwrap(), plain);
    }

    #[test]
    fn a_header_claiming_more_than_its_counters_or_the_cap_is_refused() {
        let h = crate::io::stats::new_latency_histogram();
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        let mut lying = plain.clone();
        lying[4..8].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        let e = checked_plain_v2(&lying).unwrap_err().to_string();
        assert!(e.contains("2147483647 bytes") && e.contains("33792 counters"), "{e}");
        let mut wide = plain.clone();
        wide[12..16].copy_from_slice(&5u32.to_be_bytes()); // 5 digits over 1 ns to 1 h
        let e = checked_plain_v2(&wide).unwrap_err().to_string();
        assert!(e.contains("more than the 1048576"), "{e}");
        let e = checked_plain_v2(&plain[..plain.len() - 1]).unwrap_err().to_string();
        assert!(e.contains("but only"), "{e}");
    }

    #[test]
    fn a_deflate_bomb_is_inflated_only_as_far_as_its_header_allows() {
        // A true header, then 64 MiB of zeros in the stream: a payload of that length would
        // be claimed by no histogram, and nothing past the stated payload is inflated.
        let h = crate::io::stats::new_latency_histogram();
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        let payload = u32::from_be_bytes(plain[4..8].try_into().unwrap()) as usize;
        let mut stream = plain.clone();
        stream.extend(std::iter::repeat_n(0u8, 64 << 20));
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut z, &stream).unwrap();
        let compressed = z.finish().unwrap();
        let mut blob = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        blob.extend((compressed.len() as u32).to_be_bytes());
        blob.extend(compressed);
        let out = checked_plain_v2(&blob).unwrap();
        assert_eq!(out.len(), V2_HEADER_BYTES + payload, "the stated payload, not the 64 MiB");
    }
}
