//! The I/O path: the engines behind one seam (`engine`), the worker thread and its loop
//! (`worker`), which block comes next (`access`), the bytes written (`data`, and the durable
//! record's layout `durable_format`), placement, pacing (`schedule`), what is recorded per I/O
//! and merged (`stats`), and the machine's state and limits it runs on (`host`, `cpu_state`).
//!
//! Must not: know a spec, a target's planning, a result document or a report: it is handed
//! plans and hands back figures.

pub mod access;
pub mod cpu_state;
pub mod data;
pub mod durable_format;
pub mod engine;
pub mod host;
pub mod placement;
pub mod schedule;
pub mod stats;
pub mod worker;
