//! The metadata benchmark's I/O path (`--files`): what a run on a tree of files does
//! (`workload`: the tree's shape, its files' sizes, a mix, phases or a flow of operations),
//! the tree's names (`tree`), and the workers that run the operations, timed one by one:
//! on plain system calls (`worker`, and `flow` for a flow's steps on held files) or on
//! io_uring at a queue depth (`uring_worker`), both through the engine's calls
//! (`engine::tree_ops`), recording into a time series' tap when asked for (`tap`).
//!
//! They live in the I/O crate, beside the block worker, because their loops are a hot path:
//! built here they are optimised fully whatever the layers above are built with.
//!
//! Must not: plan, create or remove a tree, look at what is at its root, collect the time
//! series or make a result (`coordination/metadata/` does), nor print.

pub mod flow;
pub mod tap;
pub mod tree;
pub mod uring_worker;
pub mod worker;
pub mod workload;
