//! The durable record of a verifying run with a flush stream (`--verify-state FILE`), as a
//! command meets it: its file opened and locked for a run, or read back (`file`), and after
//! a crash each block of the target judged against it (`check`, for `iopulse verify`). The
//! layout and the workers' writer are `durable_format`'s.
//!
//! Must not: run per I/O, or know the layout's bytes.

pub mod check;
mod file;

pub use file::{LockedRecord, OpenError, open_locked, read};
