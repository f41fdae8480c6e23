//! The root of the `iopulse-io` crate (crates/iopulse-io/Cargo.toml): the two lowest layers,
//! `io` (the I/O path: engines, the worker and its loop, what is recorded per I/O) and
//! `base` (diagnostics, the hot loop's primitives, the kernel calls, units), compiled on
//! their own so that the release build optimises them fully (one codegen unit, opt-level
//! 3) while the layers above, which are most of the code and none of the hot path, build
//! in parallel and quickly (Cargo.toml's release profile says what was measured).
//!
//! Their sources stay in src/ with the other layers (one tree, in the order of the
//! pipeline); the `iopulse` crate names them `crate::io` and `crate::base` as before.
//!
//! Must not: import anything of the layers above (they are another crate, which makes
//! that a compile error).

// stderr and stdout never panic the run: see `stderr_line!` and clippy.toml.
#![deny(clippy::disallowed_macros)]

#[path = "base/mod.rs"]
pub mod base;
#[path = "io/mod.rs"]
pub mod io;
