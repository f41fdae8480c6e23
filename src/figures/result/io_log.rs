//! `--write-iolog`: the I/Os a run issued, every worker's together in the order they
//! went, as the report writes them (`output/report/iolog.rs`, fio's iolog v3). Not part of the
//! JSON document.
//!
//! Must not: format.

/// What an I/O did, in fio's iolog words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoAction {
    Read,
    Write,
    Trim,
    Sync,
    Datasync,
}

impl IoAction {
    pub fn fio_name(self) -> &'static str {
        match self {
            IoAction::Read => "read",
            IoAction::Write => "write",
            IoAction::Trim => "trim",
            IoAction::Sync => "sync",
            IoAction::Datasync => "datasync",
        }
    }
}

/// One I/O: microseconds from the window's start line, its target (index into `targets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoggedIo {
    pub time_us: u64,
    pub target: u16,
    pub action: IoAction,
    pub offset_bytes: u64,
    pub len_bytes: u32,
}

/// The run's I/Os, in issue order, and the targets' paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoLog {
    pub targets: Vec<String>,
    pub ios: Vec<LoggedIo>,
    /// Microseconds from the start line to the run's end (the files' `close`).
    pub end_us: u64,
}
