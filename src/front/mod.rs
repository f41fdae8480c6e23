//! The front end: what a person or a script asks for, turned into a checked plan. `cli`
//! (the flags, grouped as clap reads them), `plan` (flags, job files, profiles and sweeps into
//! phases of jobs, each a `workload::spec::Spec`, checked whole before anything is touched),
//! `fio_import` and `fio` (fio's job files and names), `jobs` (a job file's phases run in
//! order, their results combined).
//!
//! Must not: do I/O of a run, or format a result (`output` does).

pub(crate) mod cli;
pub(crate) mod fio;
pub(crate) mod fio_import;
pub(crate) mod jobs;
pub(crate) mod plan;
