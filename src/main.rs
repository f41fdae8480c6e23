//! The `iopulse` binary: the library's command (`commands::main`) over this process's
//! arguments, its exit code (0 ok, 1 run failed, 2 usage, 3 verification, 4 an output
//! failed, 130/143/129 interrupted). Everything else lives in the library.

#![deny(clippy::disallowed_macros)]

use std::process::ExitCode;

fn main() -> ExitCode {
    // One malloc arena for the whole process, before any thread exists. glibc otherwise
    // gives each thread an arena that reserves 64 MiB of address space, so `--threads 200`
    // under `ulimit -v` aborted on an allocation; workers allocate only during set-up (the
    // loop allocates nothing), so one arena costs no speed, and the address space a run
    // needs becomes what memory.rs plans.
    iopulse::commands::one_malloc_arena();
    ExitCode::from(iopulse::commands::main(std::env::args_os().collect()) as u8)
}
