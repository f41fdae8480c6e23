//! What is run: the `Spec` of one run in its sections (`spec`). The traces a replay runs are
//! read in the I/O crate (`io/trace`), where their parsing, which grows with the trace, is
//! optimised fully.
//!
//! Must not: touch a file or a device, or know a flag's spelling beyond its own checks.

pub(crate) mod spec;
