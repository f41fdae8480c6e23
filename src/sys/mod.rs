//! The kernel calls that are not a benchmark's I/O (that is the engines', under engine/):
//! each `unsafe` block of the crate outside engine/ and primitives/ lives here, behind a safe
//! function (tests/it/architecture.rs holds every other file to none).
//!
//! It calls the kernel and libc; it imports nothing of the crate and decides nothing.

pub mod affinity;
pub mod fiemap;
pub mod loop_status;
pub mod page_cache;
pub mod process;
pub mod statx;
