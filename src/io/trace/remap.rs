//! How a trace's offsets land on a target smaller than the trace's extent (the end of
//! its furthest I/O). A trace that fits is replayed at its own offsets.
//!
//! - `modulo` (the default): an offset wraps around the target (`offset mod size`),
//!   so I/Os close together in the trace stay close together, and their order and
//!   sequential runs are kept (except where a run crosses the wrap).
//! - `scaled`: an offset is moved in proportion (`offset × size / extent`), so the
//!   trace's spread over the whole device is kept, and its hot spots stay where they were
//!   relative to the whole, but nearby I/Os move closer (sequential runs overlap).
//!
//! Either way an I/O that would cross the target's end is moved back to end with it, and
//! the offset is aligned down to the target's O_DIRECT alignment when there is one.
//!
//! Must not: allocate, or know where a trace came from.

/// The rule for offsets beyond the target (`--remap`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Remap {
    /// offset mod the target's size: nearby I/Os stay together
    #[default]
    Modulo,
    /// offset × size / the trace's extent: the spread over the device is kept
    Scaled,
}

impl Remap {
    pub fn name(self) -> &'static str {
        match self {
            Remap::Modulo => "modulo",
            Remap::Scaled => "scaled",
        }
    }
}

/// Where an I/O of `len_bytes` at the trace's `offset_bytes` goes on a target of
/// `target_bytes` (at least `len_bytes`), for a trace reaching `extent_bytes`; aligned
/// down to `align_bytes` (a power of two; 1 without O_DIRECT).
pub fn place(
    rule: Remap,
    offset_bytes: u64,
    len_bytes: u64,
    extent_bytes: u64,
    target_bytes: u64,
    align_bytes: u64,
) -> u64 {
    let mut at = if extent_bytes <= target_bytes {
        offset_bytes
    } else {
        match rule {
            Remap::Modulo => offset_bytes % target_bytes,
            Remap::Scaled => (u128::from(offset_bytes) * u128::from(target_bytes) / u128::from(extent_bytes)) as u64,
        }
    };
    if at + len_bytes > target_bytes {
        at = target_bytes.saturating_sub(len_bytes);
    }
    at & !(align_bytes.max(1) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_that_fits_keeps_its_offsets() {
        assert_eq!(place(Remap::Modulo, 12_345, 100, 1 << 20, 1 << 30, 1), 12_345);
        assert_eq!(place(Remap::Scaled, 12_345, 100, 1 << 20, 1 << 30, 1), 12_345);
    }

    #[test]
    fn modulo_wraps_and_scaled_shrinks_and_neither_crosses_the_end() {
        let gib = 1u64 << 30;
        // A 4 GiB trace on a 1 GiB target.
        assert_eq!(place(Remap::Modulo, 3 * gib + 8192, 4096, 4 * gib, gib, 4096), 8192);
        assert_eq!(place(Remap::Scaled, 3 * gib, 4096, 4 * gib, gib, 4096), 3 * gib / 4);
        assert_eq!(place(Remap::Modulo, 2 * gib - 512, 4096, 4 * gib, gib, 512), gib - 4096);
        assert_eq!(place(Remap::Scaled, 4 * gib - 4096, 4096, 4 * gib, gib, 4096), gib - 4096);
        assert_eq!(place(Remap::Modulo, gib + 4097, 4096, 4 * gib, gib, 4096), 4096);
    }
}
