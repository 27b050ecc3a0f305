//! `pgcost man`: the manual page in roff, generated from the command-line definition: one
//! self-contained page, the top-level synopsis and options, then a section per subcommand
//! (its synopsis, description and options). It names no other page, so nothing it points
//! to is missing.

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
    let failed = |err: std::io::Error| Error::usage(format!("cannot render the man page: {err}"));
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(failed)?;
    man.render_name_section(&mut out).map_err(failed)?;
    man.render_synopsis_section(&mut out).map_err(failed)?;
    man.render_description_section(&mut out).map_err(failed)?;
    man.render_options_section(&mut out).map_err(failed)?;
    let subcommands: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
        .collect();
    out.extend_from_slice(commands_section(&subcommands).as_bytes());
    if let Some(after) = command.get_after_help() {
        out.extend_from_slice(b".SH \"EXIT STATUS\"\n");
        out.extend_from_slice(roff_lines(&after.to_string()).as_bytes());
    }
    man.render_version_section(&mut out).map_err(failed)?;
    for sub in subcommands {
        out.extend_from_slice(subcommand_section(sub)?.as_bytes());
    }
    Ok(String::from_utf8(out).expect("roff is UTF-8"))
}

/// The list of subcommands, each pointing to its own section of this page.
fn commands_section(subcommands: &[&clap::Command]) -> String {
    let mut text = String::from(".SH COMMANDS\n");
    for sub in subcommands {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        text.push_str(&format!(
            ".TP\n\\fBpgcost {}\\fR\n{}\nSee \\fBPGCOST {}\\fR below.\n",
            sub.get_name(),
            escape(&about),
            sub.get_name().to_uppercase()
        ));
    }
    text
}

/// One subcommand: a top-level section of its own, with its synopsis, description and
/// options as subsections.
fn subcommand_section(sub: &clap::Command) -> Result<String> {
    let failed = |err: std::io::Error| Error::usage(format!("cannot render the man page: {err}"));
    let name = format!("pgcost {}", sub.get_name());
    let man = clap_mangen::Man::new(sub.clone().bin_name(&name));
    let mut body = Vec::new();
    man.render_synopsis_section(&mut body).map_err(failed)?;
    man.render_description_section(&mut body).map_err(failed)?;
    man.render_options_section(&mut body).map_err(failed)?;
    let body = String::from_utf8(body).expect("roff is UTF-8");
    let mut text = format!(".SH \"{}\"\n", name.to_uppercase());
    for line in body.lines() {
        match line.strip_prefix(".SH ") {
            Some(heading) => text.push_str(&format!(".SS {heading}\n")),
            None => text.push_str(&format!("{line}\n")),
        }
    }
    Ok(text)
}

/// Plain text as roff lines that keep their breaks.
fn roff_lines(text: &str) -> String {
    let mut out = String::from(".nf\n");
    for line in text.lines() {
        out.push_str(&format!("{}\n", escape(line)));
    }
    out.push_str(".fi\n");
    out
}

/// Escapes roff's special characters: backslashes, and a leading dot or quote.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.chars().next() {
        Some('.') | Some('\'') => format!("\\&{text}"),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_no_other_page_and_has_a_section_per_subcommand() {
        let page = page().unwrap();
        assert!(!page.contains("(1)"), "a reference to another page");
        for name in ["AUDIT", "CHECK", "MEASURE", "RAMP", "DEMO", "EXPLAIN"] {
            assert!(page.contains(&format!(".SH \"PGCOST {name}\"")), "{name}");
        }
        assert!(page.contains(".SH \"EXIT STATUS\""));
        // One SYNOPSIS section at top level: the subcommands' are subsections.
        assert_eq!(page.matches(".SH SYNOPSIS").count(), 1);
    }
}
