//! `iopulse man`: the man pages (roff), made from the one clap command (`super::command`):
//! iopulse(1) on stdout, or with `--dir DIR` that page and one per subcommand
//! (iopulse-run(1), iopulse-sweep(1), ...) written into DIR.

use crate::diagnostics::error::exit_code;
use std::path::PathBuf;

/// Print the iopulse man page (roff) on stdout, or write every page into a directory.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iopulse man > iopulse.1 && man ./iopulse.1
      the main page, to read it at once
  iopulse man --dir /usr/local/share/man/man1 && mandb -q
      every page: iopulse(1), iopulse-run(1), iopulse-sweep(1), iopulse-search(1), ...")]
pub struct ManArgs {
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
    let written = std::fs::create_dir_all(&dir).and_then(|()| clap_mangen::generate_to(command, &dir));
    match written {
        Ok(()) => exit_code::SUCCESS,
        Err(e) => {
            crate::stderr_line!("iopulse man: error: --dir {}: {e}", dir.display());
            exit_code::RUN_FAILED
        }
    }
}
