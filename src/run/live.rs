//! The run's live view, passed in: the command layer registers what shows a run while it
//! goes (`register`, once per process: the live line, `report::live_line::LiveLines`), and
//! each run whose diagnostics show progress asks it for a view (`view`) that its sampler
//! feeds each interval's row. So a run never imports a report, and another view (a
//! full-screen one) is another registration. It must not format or print.

use crate::stats::interval::{LiveView, LiveViews};
use std::sync::OnceLock;

static VIEWS: OnceLock<&'static dyn LiveViews> = OnceLock::new();

/// What shows this process's runs while they go; the first registration stays.
pub fn register(views: &'static dyn LiveViews) {
    let _ = VIEWS.set(views);
}

/// A view for a run planned to last `duration_ns` (its profile step named); none when
/// nothing was registered (a library caller, the tests).
pub(super) fn view(duration_ns: Option<u64>, step: Option<&str>) -> Option<LiveView> {
    VIEWS.get().map(|v| v.view(duration_ns, step))
}

/// Whether a view would be made: the run collects interval histograms for it.
pub(super) fn registered() -> bool {
    VIEWS.get().is_some()
}
