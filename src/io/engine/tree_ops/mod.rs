//! Operations on a tree of files, for the metadata benchmark (`coordination/metadata/`): the system
//! calls of the sync worker (`calls.rs`), a flow's file held between steps (`held.rs`), the io_uring requests of the queued one
//! (`ring.rs`), and the NUL-terminated relative path both take (`path.rs`).
//!
//! Like every engine, these only move names and bytes: they return bytes moved or the
//! errno, and never time, count, choose a file or format a message (`coordination/metadata/` does).
//! Every `unsafe` of the metadata benchmark lives here, behind safe functions: paths are
//! relative to the tree's root descriptor and opened with O_NOFOLLOW.

pub mod calls;
pub mod held;
mod path;
pub mod ring;

pub use path::RelPath;
