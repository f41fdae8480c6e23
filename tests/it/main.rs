//! The integration tests, one binary: each module runs the real `iopulse` binary (or the
//! library) on temporary files; `common` holds the shared helpers.

mod access_patterns;
mod architecture;
mod bad_input;
mod block_devices;
mod block_sizes;
mod common;
mod compare_fio;
mod cpu_state;
mod distributed;
mod end_to_end;
mod engine_conformance;
mod examples;
mod faults;
mod fio_import;
mod flush;
mod fuzz_parsers;
mod job_files;
mod job_results;
mod libaio_mmap;
#[cfg(feature = "mpi")]
mod mpi;
mod paced_runs;
mod placement;
mod profiles;
mod ramp_steady;
mod resources;
mod results_outputs;
mod safety_limits;
mod safety_merge;
mod safety_outputs;
mod safety_targets;
mod sweep_search;
mod think_rate;
mod time_series;
mod trim;
mod truth_cache;
mod truth_device;
mod truth_fio_json;
mod truth_holes;
mod truth_null_cpu;
mod truth_plot;
mod uring_engine;
mod verification;
mod watchdog;
mod write_data;
