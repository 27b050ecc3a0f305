//! `pgcost completions SHELL`: the completion script of a shell, generated from the
//! command-line definition so that it never falls behind it.

use clap::CommandFactory;

use crate::error::{Result, exit};
use crate::flags::{Cli, CompletionsArgs};
use crate::output;

/// The command: print the script.
pub fn execute(args: &CompletionsArgs) -> Result<i32> {
    output::print_stdout(&script(args.shell))?;
    Ok(exit::OK)
}

/// The completion script of `shell` for pgcost.
pub fn script(shell: clap_complete::Shell) -> String {
    let mut buffer = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "pgcost", &mut buffer);
    String::from_utf8(buffer).expect("completion scripts are UTF-8")
}
