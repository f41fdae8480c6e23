//! The I/O path: the engines behind one seam (`engine`), the worker thread and its loop
//! (`worker`), which block comes next (`access`), the bytes written (`data`, and the durable
//! record's layout `durable_format`), placement, pacing (`schedule`), what is recorded per I/O
//! and merged (`stats`), and the machine's state and limits it runs on (`host`, `cpu_state`).
//!
//! Must not: know a spec, a target's planning, a result document or a report: it is handed
//! plans and hands back figures.

pub(crate) mod access;
pub(crate) mod cpu_state;
pub(crate) mod data;
pub(crate) mod durable_format;
pub(crate) mod engine;
pub(crate) mod host;
pub(crate) mod placement;
pub(crate) mod schedule;
pub(crate) mod stats;
pub(crate) mod worker;
