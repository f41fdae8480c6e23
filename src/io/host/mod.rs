//! The process and the machine it runs on: facts for the result (environment), the memory a
//! run will use against what is available, CPU time (getrusage), and the signals that stop a
//! run. Reads /proc and the process's own state; never touches a target.

pub mod environment;
pub mod memory;
pub mod rusage;
pub mod signals;
