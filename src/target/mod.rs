//! Targets: the files and block devices a run reads and writes. Planning
//! (look, never touch) is in `plan`; creating, laying out and opening with or
//! without O_DIRECT is in `prepare`; what the filesystem is and what it
//! accepts is in `fsinfo`.

pub mod device;
pub mod fsinfo;
pub mod layout;
pub mod plan;
pub mod prepare;

pub use plan::{TargetKind, TargetPlan, plan_targets};
pub use prepare::{CreatedFiles, DirectOutcome, PreparedTarget, prepare_targets};
