//! The size of the work: the files, the blocks, how many workers and how many I/Os each keeps in flight (`front/cli/shape.rs`).
//!
//! A section of the `Spec` (flattened into its JSON: the keys are the Spec's own). Plain
//! data; its checks are `workload/spec/validate.rs`'s.

use serde::{Deserialize, Serialize};

/// The size of the work: the files, the blocks, how many workers and how many I/Os each keeps in flight (`front/cli/shape.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeSpec {
    /// Size to lay files out to; `None` keeps an existing file's size.
    pub file_size_bytes: Option<u64>,
    /// Bytes per I/O; with a block-size mix (`block_sizes`), the alignment of offsets: the
    /// unit the region is counted in.
    pub block_size_bytes: u64,
    /// `--bssplit`, `--block-align`: the sizes of the I/Os and their shares per op type
    /// (absent: every I/O is `block_size_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<crate::io::access::block_sizes::BlockSizeMix>,
    pub threads: u32,
    pub queue_depth: u32,
}
