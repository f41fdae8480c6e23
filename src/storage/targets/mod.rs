//! Targets: the files and block devices a run reads and writes. Planning
//! (look, never touch) is in `plan`; creating, laying out and opening with or
//! without O_DIRECT is in `prepare`; what the filesystem is and what it
//! accepts is in `fsinfo`; whether a path is a kernel interface (/proc, /sys)
//! is in `pseudo_fs`, and which file a path names (device and inode) in `identity`;
//! how much of a file's region holds written data (holes, unwritten extents) is in
//! `allocation`; how much of it sits in the page cache, and dropping it before the
//! window, in `page_cache`; the block devices under the targets and what they counted over
//! the window, in `device_witness`; the temporary directory of a run given no target, in
//! `temp_dir`.

pub mod allocation;
pub mod device;
pub mod device_witness;
pub mod fsinfo;
pub mod identity;
pub mod input_file;
pub mod layout;
pub mod loop_backing;
pub mod ownership;
pub mod page_cache;
pub mod plan;
pub mod prepare;
pub mod pseudo_fs;
pub mod temp_dir;

pub use allocation::Allocation;
pub use device_witness::{DeviceWitness, WitnessCaveats, WitnessShares};
pub use page_cache::PageCache;
pub use plan::{TargetKind, TargetPlan, plan_targets};
pub use prepare::{CreatedFiles, DirectOutcome, PreparedTarget, prepare_targets};
