//! The kernel calls that are not a benchmark's I/O (that is the engines', under engine/):
//! each `unsafe` block of the crate outside engine/ lives here, behind a safe function
//! (tests/it/architecture.rs holds every other file to none): the I/O buffers' memory
//! (`buffer.rs`), the start line's futex, the monotonic clock (`monotonic.rs`), affinity, extent maps, the page cache, statx, and the terminal given back from a signal handler (`terminal.rs`).
//!
//! It calls the kernel and libc; it imports nothing of the crate and decides nothing.

pub mod affinity;
pub mod buffer;
pub mod fiemap;
pub mod futex;
pub mod loop_status;
pub mod monotonic;
pub mod page_cache;
pub mod process;
pub mod statx;
pub mod terminal;
