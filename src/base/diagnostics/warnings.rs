//! Diagnostics for people: warnings and notes on stderr, recorded so that the
//! result carries them too. Never on stdout, which belongs to the report.

use std::sync::Mutex;

/// Writes one line to stderr and ignores a failure to do so. A closed stderr
/// (`2>&1 | true`) or a full one (`2>/dev/full`) must not panic the run and lose its
/// results, as `eprintln!` would; the report and outputs go on regardless.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub struct Diagnostics {
    quiet: bool,
    /// Nothing at all on stderr (a rank of a cluster run other than rank 0, whose
    /// warnings rank 0 prints from its result): still recorded.
    silent: bool,
    show_progress: bool,
    /// Put before each line printed (`[job] `: one job of a job file among others).
    prefix: String,
    /// The step of a profile this run is (`for_step`): named on the live line.
    step: Option<String>,
    /// What a live view names the run among others: a job's name, a sweep's point
    /// (`labelled`); a profile's step is named by `step`.
    label: Option<String>,
    /// A profile's step: its warnings and notes are recorded and said after the profile's
    /// table, gathered with the other steps' (`report::profile::gathered`), not as they come.
    held: bool,
    warnings: Mutex<Vec<String>>,
    notes: Mutex<Vec<String>>,
}

impl Diagnostics {
    /// `quiet` hides notes and progress (warnings still show).
    pub fn new(quiet: bool) -> Self {
        use std::io::IsTerminal;
        Self {
            quiet,
            silent: false,
            show_progress: !quiet && std::io::stderr().is_terminal(),
            prefix: String::new(),
            step: None,
            label: None,
            held: false,
            warnings: Mutex::new(Vec::new()),
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Records everything and prints nothing, not even warnings or progress.
    pub fn silent() -> Self {
        Self { quiet: true, silent: true, show_progress: false, ..Self::new(true) }
    }

    /// One job of a job file, run beside others: its lines on stderr start with `[name] `,
    /// and it draws no live line (several would overwrite each other).
    pub fn for_job(quiet: bool, name: &str) -> Self {
        Self { show_progress: false, prefix: format!("[{name}] "), label: Some(name.to_string()), ..Self::new(quiet) }
    }

    /// One step of a profile, run alone, `label` its name for people: its live line names
    /// it, and its warnings and notes are recorded in its result and held: the profile says
    /// them under its table, each once with the steps it concerns (`say_held` when the step
    /// ends without a result).
    pub fn for_step(quiet: bool, label: &str) -> Self {
        Self { prefix: format!("[{label}] "), step: Some(label.to_string()), held: true, ..Self::new(quiet) }
    }

    /// A held step's warnings (and, unless quiet, notes) said now, named by its step: for a
    /// step that ended without a result, whose messages no table gathers.
    pub fn say_held(&self) {
        if !self.held || self.silent {
            return;
        }
        for w in self.warnings() {
            crate::stderr_line!("{}⚠ {w}", self.prefix);
        }
        if !self.quiet {
            for n in self.notes() {
                crate::stderr_line!("{}note: {n}", self.prefix);
            }
        }
    }

    /// The profile step this run is, if it is one.
    pub fn step(&self) -> Option<&str> {
        self.step.as_deref()
    }

    /// The same, named `label` in a live view (a sweep's point).
    pub fn labelled(self, label: String) -> Self {
        Self { label: Some(label), ..self }
    }

    /// What a live view names the run (a job, a sweep's point, else a profile's step), if
    /// any.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref().or(self.step.as_deref())
    }

    /// Something the reader must not miss (the figures mean less than they seem).
    pub fn warn(&self, text: impl Into<String>) {
        let text = text.into();
        if !self.silent && !self.held {
            crate::stderr_line!("{}⚠ {text}", self.prefix);
        }
        self.warnings.lock().expect("diagnostics lock").push(text);
    }

    /// A fact worth saying once (how the run was set up).
    pub fn note(&self, text: impl Into<String>) {
        let text = text.into();
        if !self.quiet && !self.held {
            crate::stderr_line!("{}note: {text}", self.prefix);
        }
        self.notes.lock().expect("diagnostics lock").push(text);
    }

    /// Warns with a line printed as given (no "⚠ " prefix added).
    pub fn warn_verbatim(&self, line: impl Into<String>, recorded: impl Into<String>) {
        let recorded = recorded.into();
        if !self.silent && !self.held {
            crate::stderr_line!("{}{}", self.prefix, line.into());
        }
        self.warnings.lock().expect("diagnostics lock").push(recorded);
    }

    pub fn show_progress(&self) -> bool {
        self.show_progress
    }

    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().expect("diagnostics lock").clone()
    }

    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().expect("diagnostics lock").clone()
    }
}
