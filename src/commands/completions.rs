//! `iopulse completions SHELL`: shell completions for iopulse and its subcommands, made
//! from the one clap command (`super::command`).

/// Print shell completions for iopulse (and its subcommands) on stdout.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iopulse completions bash > /etc/bash_completion.d/iopulse
  iopulse completions zsh > \"${fpath[1]}/_iopulse\"
  iopulse completions fish > ~/.config/fish/completions/iopulse.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    ///
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn completions(args: CompletionsArgs) -> i32 {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut super::command(), "iopulse", &mut out);
    super::write_stdout_bytes(&out)
}
