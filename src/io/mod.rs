//! The I/O path: the engines behind one seam (`engine`), the worker thread and its loop
//! (`worker`), which block comes next (`access`), the bytes written (`data`, and the durable
//! record's layout `durable_format`), placement, pacing (`schedule`), what is recorded per I/O
//! and merged (`stats`), the machine's state and limits it runs on (`host`, `cpu_state`), and
//! the metadata benchmark's workload and workers (`metadata`), and the traces a replay reads
//! (`trace`).
//!
//! Must not: know a spec, a target's planning, a result document or a report: it is handed
//! plans (for a tree of files, the metadata section of the spec, which is defined here) and
//! hands back figures.

pub mod access;
pub mod cpu_state;
pub mod data;
pub mod durable_format;
pub mod engine;
pub mod host;
pub mod metadata;
pub mod placement;
pub mod schedule;
pub mod stats;
pub mod trace;
pub mod worker;
