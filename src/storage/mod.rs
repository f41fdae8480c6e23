//! What a command touches on storage: targets planned, laid out and known (`targets`), the
//! ledger of every path a command creates, writes or removes and its one guard (`ledger`),
//! and the durable record's file (`durable_record`).
//!
//! Must not: run a worker, or format.

pub(crate) mod durable_record;
pub(crate) mod ledger;
pub(crate) mod targets;
