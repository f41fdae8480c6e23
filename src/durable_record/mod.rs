//! The durable record of a verifying run with a flush stream (`--verify-state FILE`): at
//! each completed flush, which write of each block the flush made durable (`format`), and
//! after a crash, each block of the target judged against it (`check`, for `iopulse verify`).
//!
//! Must not: run per I/O. The worker updates the record at flush completions only, and a
//! run without `--verify-state` has none of it.

pub mod check;
pub mod format;
