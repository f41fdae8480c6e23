//! What is run: the `Spec` of one run in its sections (`spec`) and the traces a replay runs
//! (`trace`).
//!
//! Must not: touch a file or a device, or know a flag's spelling beyond its own checks.

pub(crate) mod spec;
pub(crate) mod trace;
