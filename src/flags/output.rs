//! The output group: where the renderings of one run go and what reaches stderr
//! (`--format`, `-o`, `--export`, `-q`). `--format` is declared once with every format;
//! each command narrows it to its own subset with `mut_arg` (see [`narrowed`]).

use std::path::PathBuf;

use clap::Args;

use crate::render::format::{Format, Formats};

/// The renderings and the quietness of every command that reports.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_parser = Formats(Format::ALL), default_value = "table")]
    pub format: Format,

    /// Write the output to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write the same run in another format to a file, FORMAT=PATH (repeatable), e.g.
    /// --export json=report.json --export html=report.html.
    #[arg(long = "export", value_name = "FORMAT=PATH")]
    pub exports: Vec<String>,

    /// No progress or status lines on stderr: only warnings and errors print.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--format` limited to `formats`, for a command's `mut_arg("format", ..)`: its `--help`
/// and completions list only them, and any other is refused by clap.
pub fn narrowed(formats: &'static [Format]) -> impl FnOnce(clap::Arg) -> clap::Arg {
    move |arg| arg.value_parser(Formats(formats))
}
