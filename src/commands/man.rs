//! `pgcost man`: the manual page in roff, generated from the command-line definition: the
//! top-level page, then each subcommand's synopsis, description and options.

use clap::CommandFactory;

use crate::error::{Error, Result, exit};
use crate::flags::Cli;
use crate::output;

/// The command: print the page.
pub fn execute() -> Result<i32> {
    output::print_stdout(&page()?)?;
    Ok(exit::OK)
}

/// The whole manual page.
pub fn page() -> Result<String> {
    let mut command = Cli::command();
    command.build();
    let mut out = Vec::new();
    let failed = |err: std::io::Error| Error::usage(format!("cannot render the man page: {err}"));
    clap_mangen::Man::new(command.clone())
        .render(&mut out)
        .map_err(failed)?;
    for sub in command.get_subcommands() {
        let name = format!("pgcost {}", sub.get_name());
        out.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let man = clap_mangen::Man::new(sub.clone().bin_name(&name));
        man.render_synopsis_section(&mut out).map_err(failed)?;
        man.render_description_section(&mut out).map_err(failed)?;
        man.render_options_section(&mut out).map_err(failed)?;
    }
    Ok(String::from_utf8(out).expect("roff is UTF-8"))
}
