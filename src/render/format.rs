//! The one list of output formats, the subset each command offers (so `--help` lists only
//! what works), and where each rendering of one run goes (`--format`/`-o` and `--export`).

use std::path::PathBuf;

use clap::builder::{PossibleValue, TypedValueParser};
use strum::{Display, IntoStaticStr, VariantArray};

/// Every output format pgcost can write. A command offers a subset of them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, IntoStaticStr, Display, VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum Format {
    /// Aligned tables for a terminal, readable at 100 columns.
    #[default]
    Table,
    /// One JSON document (`pgcost docs json`).
    Json,
    /// GitHub-flavoured Markdown, for a pull-request comment.
    Markdown,
    /// One self-contained HTML page with charts (inline CSS and SVG, nothing fetched).
    Html,
    /// JUnit XML: each endpoint a testcase, each breach a failure.
    Junit,
    /// SARIF 2.1.0, for code-scanning tools: a rule per finding kind, a result per finding.
    Sarif,
    /// GitHub Actions workflow commands: an annotation per located failure and finding.
    Github,
}

/// What `pgcost audit` and `measure` write.
pub const REPORT_FORMATS: &[Format] = &[
    Format::Table,
    Format::Json,
    Format::Markdown,
    Format::Html,
    Format::Sarif,
];
/// What `pgcost ramp` writes: a ramp has no findings to put in SARIF.
pub const RAMP_FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html];
/// What `pgcost demo` writes: what a ramp writes.
pub const DEMO_FORMATS: &[Format] = RAMP_FORMATS;
/// What `pgcost scale` writes: what an audit writes.
pub const SCALE_FORMATS: &[Format] = REPORT_FORMATS;
/// What `pgcost survey` writes: what an audit writes.
pub const SURVEY_FORMATS: &[Format] = REPORT_FORMATS;
/// What `pgcost check` writes.
pub const CHECK_FORMATS: &[Format] = &[
    Format::Table,
    Format::Markdown,
    Format::Json,
    Format::Junit,
    Format::Html,
    Format::Sarif,
    Format::Github,
];

impl Format {
    pub const ALL: &'static [Format] = <Format as VariantArray>::VARIANTS;

    /// The name the user types, e.g. `markdown`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// One line for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Format::Table => "aligned tables for a terminal",
            Format::Json => "one JSON document (`pgcost docs json`)",
            Format::Markdown => "GitHub-flavoured Markdown, for a pull-request comment",
            Format::Html => "one self-contained HTML page with charts",
            Format::Junit => "JUnit XML: each endpoint a testcase, each breach a failure",
            Format::Sarif => "SARIF 2.1.0 for code scanning: a result per finding",
            Format::Github => {
                "GitHub Actions annotations (::error file=...,line=...::), ten at most"
            }
        }
    }

    /// The format named `text` among `allowed`, or a message that lists them.
    pub fn parse_among(text: &str, allowed: &[Format]) -> Result<Format, String> {
        let wanted = text.trim().to_ascii_lowercase();
        allowed
            .iter()
            .copied()
            .find(|format| format.name() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = allowed.iter().map(|f| f.name()).collect();
                format!(
                    "{text:?} is not a format of this command; it writes {}",
                    names.join(", ")
                )
            })
    }
}

/// A clap value parser that accepts only `allowed`, and lists only them in `--help` and in
/// shell completions: `#[arg(value_parser = Formats(REPORT_FORMATS))]`.
#[derive(Debug, Clone, Copy)]
pub struct Formats(pub &'static [Format]);

impl TypedValueParser for Formats {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        let text = value.to_string_lossy();
        let flag = arg
            .map(|a| a.to_string())
            .unwrap_or_else(|| "--format".into());
        Format::parse_among(&text, self.0).map_err(|message| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value for {flag}: {message}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.0
                .iter()
                .map(|f| PossibleValue::new(f.name()).help(f.help())),
        ))
    }
}

/// One more rendering of the same run, `--export FORMAT=PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub format: Format,
    pub path: PathBuf,
}

impl Export {
    /// Parses `FORMAT=PATH`, with FORMAT among `allowed`.
    pub fn parse(text: &str, allowed: &[Format]) -> Result<Export, String> {
        let (format, path) = text.split_once('=').ok_or_else(|| {
            format!("--export {text:?} is not FORMAT=PATH, e.g. json=report.json")
        })?;
        let format = Format::parse_among(format, allowed)?;
        if path.trim().is_empty() {
            return Err(format!("--export {text:?} has no path after ="));
        }
        Ok(Export {
            format,
            path: PathBuf::from(path),
        })
    }
}

/// Where one run's renderings go: the main one (`--format`, to `-o` or standard output)
/// and every `--export`. The default is a table on standard output, and nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outputs {
    pub format: Format,
    /// `None`: standard output.
    pub output: Option<PathBuf>,
    pub exports: Vec<Export>,
}

impl Outputs {
    /// True when the main rendering goes to standard output, so anything else a command
    /// prints (a load tool's own output) must go to standard error.
    pub fn report_on_stdout(&self) -> bool {
        self.output.is_none()
    }

    /// Every format asked for is among `allowed`, or the message of the first that is
    /// not: for a command that shares another's flags but writes fewer formats.
    pub fn within(&self, allowed: &[Format]) -> Result<(), String> {
        let asked = std::iter::once(self.format).chain(self.exports.iter().map(|e| e.format));
        for format in asked {
            Format::parse_among(format.name(), allowed)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_outside_the_commands_subset_is_refused_with_the_list() {
        assert_eq!(
            Format::parse_among("JSON", REPORT_FORMATS),
            Ok(Format::Json)
        );
        let err = Format::parse_among("junit", REPORT_FORMATS).unwrap_err();
        assert!(err.contains("table, json, markdown, html"), "{err}");
    }

    #[test]
    fn exports_parse_format_and_path() {
        assert_eq!(
            Export::parse("json=out/r.json", REPORT_FORMATS),
            Ok(Export {
                format: Format::Json,
                path: "out/r.json".into()
            })
        );
        assert!(Export::parse("json", REPORT_FORMATS).is_err());
        assert!(Export::parse("json=", REPORT_FORMATS).is_err());
        assert!(Export::parse("junit=x.xml", REPORT_FORMATS).is_err());
        assert!(Export::parse("junit=x.xml", CHECK_FORMATS).is_ok());
    }
}
