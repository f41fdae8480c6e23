//! The ledger: every path a command will create, write, truncate, rename onto or delete,
//! made by planning before anything is touched, and judged whole by one guard against
//! every input the command reads and the rules for what is never written (docs/safety.md).
//! `lock.rs`: the exclusive locks a run holds on what two runs must not share.
//!
//! It plans, judges and locks; it never writes a byte of benchmark data.

pub mod lock;
