//! The one trait every document implements (the audit's `Report`, a ramp, check's verdict,
//! the demo's comparison): which formats it has a view in, and each view as text. A new
//! format is one `Format` variant and, per document that has it, one more arm and file.

use crate::error::Error;
use crate::render::format::Format;

/// A document that can be rendered in some of the formats.
pub trait View {
    /// What the document is, for an error: `pgcost audit's report`.
    fn name(&self) -> &'static str;
    /// The formats it has a view in; the command's `--format` and `--export` offer these.
    fn formats(&self) -> &'static [Format];
    /// The document in `format`, or `None` for a format it has no view in.
    fn view(&self, format: Format) -> Option<String>;
    /// The document in `format`, or `Unsupported` for a format it has no view in.
    fn render(&self, format: Format) -> Result<String, Unsupported> {
        self.view(format)
            .ok_or_else(|| Unsupported::of(self, format))
    }
    /// One line that says how the run came out, for stderr when the document went to a
    /// file.
    fn headline(&self) -> Option<String> {
        None
    }
}

/// A format a document has no view in: a typed error, never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{document} has no {format} view; it is written as {offered}")]
pub struct Unsupported {
    pub document: &'static str,
    pub format: Format,
    /// The formats it has, comma-separated.
    pub offered: String,
}

impl Unsupported {
    /// The error for `view` asked for `format`.
    pub fn of(view: &(impl View + ?Sized), format: Format) -> Unsupported {
        let names: Vec<&str> = view.formats().iter().map(|f| f.name()).collect();
        Unsupported {
            document: view.name(),
            format,
            offered: names.join(", "),
        }
    }
}

impl From<Unsupported> for Error {
    fn from(err: Unsupported) -> Error {
        let hint = format!("use one of: {}", err.offered);
        Error::usage(err.to_string()).with_hint(hint)
    }
}
