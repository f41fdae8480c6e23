//! `iopulse man`: the man pages (roff), made from the one clap command (`super::command`):
//! iopulse(1) on stdout, or with `--dir DIR` that page and one per subcommand
//! (iopulse-run(1), iopulse-sweep(1), ...) written into DIR, each whole, after the ledger
//! of every page is judged (never a device directory such as /dev, never over a link to
//! another file).

use crate::base::diagnostics::error::exit_code;
use crate::storage::ledger::{Action, Ledger};
use std::path::PathBuf;

/// Print the iopulse man page (roff) on stdout, or write every page into a directory.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iopulse man > iopulse.1 && man ./iopulse.1
      the main page, to read it at once
  iopulse man --dir /usr/local/share/man/man1 && mandb -q
      every page: iopulse(1), iopulse-run(1), iopulse-sweep(1), iopulse-search(1), ...")]
pub struct ManArgs {
    /// Write every page into DIR.
    ///
    /// Write iopulse.1 and a page per subcommand (iopulse-run.1, ...) into DIR (created if
    /// missing) instead of the main page on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn man(args: ManArgs) -> i32 {
    let command = super::command();
    let Some(dir) = args.dir else {
        let mut out = Vec::new();
        if let Err(e) = clap_mangen::Man::new(command).render(&mut out) {
            crate::stderr_line!("iopulse man: error: {e}");
            return exit_code::RUN_FAILED;
        }
        return super::write_stdout_bytes(&out);
    };
    let pages = match pages(command) {
        Ok(pages) => pages,
        Err(e) => {
            crate::stderr_line!("iopulse man: error: {e}");
            return exit_code::RUN_FAILED;
        }
    };
    let mut ledger = Ledger::new();
    ledger.touch("--dir", &dir, Action::MakeDir);
    for (name, _) in &pages {
        ledger.touch("--dir", dir.join(name), Action::Replace);
    }
    if let Err(e) = ledger.judge() {
        crate::stderr_line!("iopulse man: error: {e}");
        return exit_code::USAGE;
    }
    if let Some(code) = super::dry_run_exit() {
        return code;
    }
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        pages.iter().try_for_each(|(name, page)| crate::storage::ledger::output::write_whole(&dir.join(name), page))
    });
    match written {
        Ok(()) => exit_code::SUCCESS,
        Err(e) => {
            crate::stderr_line!("iopulse man: error: --dir {}: {e}", dir.display());
            exit_code::RUN_FAILED
        }
    }
}

/// Every page, as clap_mangen names them (`iopulse.1`, `iopulse-run.1`, ...), rendered in
/// memory: the command and each subcommand that is not hidden, recursively.
fn pages(command: clap::Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn add(command: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            add(sub, pages)?;
        }
        let man = clap_mangen::Man::new(command);
        let mut page = Vec::new();
        man.render(&mut page)?;
        pages.push((man.get_filename(), page));
        Ok(())
    }
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    add(command, &mut pages)?;
    Ok(pages)
}
