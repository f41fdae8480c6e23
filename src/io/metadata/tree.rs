//! The names of a tree of files: directory `dI` at each level, file `fN` in the leaf
//! directory `N mod leaves`, directories made by `mkdir` as `mN`. Every name iopulse
//! creates follows these patterns, so that its removal can tell its own entries from
//! anything else (`coordination/metadata/ownership.rs`). Paths are written relative to the tree's root into a
//! caller's fixed buffer, NUL-terminated for the `*at` system calls: no allocation.

pub use crate::io::engine::tree_ops::RelPath;
use crate::io::metadata::workload::MetaSpec;

/// The shape of a tree.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub dirs_per_dir: u32,
    pub depth: u32,
    pub leaves: u64,
}

impl Shape {
    pub fn of(meta: &MetaSpec) -> Shape {
        Shape { dirs_per_dir: meta.dirs_per_dir, depth: meta.depth, leaves: meta.leaves().max(1) }
    }

    /// The leaf directory of file `index`.
    #[inline]
    pub fn leaf_of(&self, index: u64) -> u64 {
        index % self.leaves
    }
}

/// The tree's names written into a path (`engine::tree_ops::RelPath`, which holds them
/// for the system calls; a trait because the path is the I/O crate's type).
pub trait TreeNames {
    /// The directory `leaf` at `level` levels (the full depth for a leaf).
    fn set_dir(&mut self, shape: &Shape, leaf: u64, levels: u32);
    /// File `index`: `d../d../fINDEX`.
    fn set_file(&mut self, shape: &Shape, index: u64);
    /// Directory `mINDEX` made by `mkdir` in leaf `index mod leaves`.
    fn set_made_dir(&mut self, shape: &Shape, index: u64);
}

impl TreeNames for RelPath {
    fn set_dir(&mut self, shape: &Shape, leaf: u64, levels: u32) {
        self.clear();
        push_dirs(self, shape, leaf, levels);
        self.terminate();
    }

    fn set_file(&mut self, shape: &Shape, index: u64) {
        set_entry(self, shape, shape.leaf_of(index), b'f', index);
    }

    fn set_made_dir(&mut self, shape: &Shape, index: u64) {
        set_entry(self, shape, shape.leaf_of(index), b'm', index);
    }
}

fn push_dirs(path: &mut RelPath, shape: &Shape, leaf: u64, levels: u32) {
    let k = u64::from(shape.dirs_per_dir);
    for level in 0..levels {
        // Most significant digit first: leaf 0..k^depth in base k.
        let div = k.pow(shape.depth - 1 - level);
        if level > 0 {
            path.push_byte(b'/');
        }
        path.push_byte(b'd');
        path.push_number((leaf / div) % k);
    }
}

fn set_entry(path: &mut RelPath, shape: &Shape, leaf: u64, kind: u8, index: u64) {
    path.clear();
    push_dirs(path, shape, leaf, shape.depth);
    if shape.depth > 0 {
        path.push_byte(b'/');
    }
    path.push_byte(kind);
    path.push_number(index);
    path.terminate();
}

/// Whether `name` is one iopulse gives entries of a tree (`d7`, `f123`, `m4`).
pub fn is_our_name(name: &[u8]) -> bool {
    name.len() >= 2
        && matches!(name[0], b'd' | b'f' | b'm')
        && name[1..].iter().all(u8::is_ascii_digit)
        && (name.len() == 2 || name[1] != b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_shape() {
        let shape = Shape { dirs_per_dir: 10, depth: 3, leaves: 1000 };
        let mut p = RelPath::default();
        p.set_file(&shape, 1234);
        assert_eq!(p.as_str(), "d2/d3/d4/f1234");
        p.set_dir(&shape, 234, 3);
        assert_eq!(p.as_str(), "d2/d3/d4");
        p.set_dir(&shape, 234, 2);
        assert_eq!(p.as_str(), "d2/d3");
        p.set_made_dir(&shape, 7);
        assert_eq!(p.as_str(), "d0/d0/d7/m7");
        let flat = Shape { dirs_per_dir: 10, depth: 0, leaves: 1 };
        p.set_file(&flat, 5);
        assert_eq!(p.as_str(), "f5");
        p.set_dir(&flat, 0, 0);
        assert_eq!(p.as_str(), ".");
        assert!(is_our_name(b"f0") && is_our_name(b"d12") && is_our_name(b"m3"));
        assert!(!is_our_name(b"f01") && !is_our_name(b"notes") && !is_our_name(b"f") && !is_our_name(b"f1x"));
    }
}
