//! Views of the audit's `Report`, one file per format: `table.rs`, `markdown.rs`,
//! `json.rs`, `html.rs` and `sarif.rs`. A new format is one more file and one more arm here.

pub mod html;
mod json;
pub(crate) mod markdown;
mod sarif;
pub(crate) mod table;
#[cfg(test)]
mod tests;

pub use html::HtmlExporter;
pub use json::JsonExporter;
pub use markdown::{MarkdownExporter, markdown_table};
pub use sarif::SarifExporter;
pub use table::{TableExporter, terminal_table};

use crate::render::format::{Format, REPORT_FORMATS};
use crate::render::text::{Exporter, verdict_line};
use crate::render::view::View;
use pgcost_core::report::Report;

impl View for Report {
    fn name(&self) -> &'static str {
        "an audit report"
    }

    fn formats(&self) -> &'static [Format] {
        REPORT_FORMATS
    }

    fn view(&self, format: Format) -> Option<String> {
        let exporter: &dyn Exporter = match format {
            Format::Table => &TableExporter,
            Format::Json => &JsonExporter,
            Format::Markdown => &MarkdownExporter,
            Format::Html => &HtmlExporter,
            Format::Sarif => &SarifExporter,
            Format::Junit | Format::Github => return None,
        };
        Some(exporter.render(self))
    }

    fn headline(&self) -> Option<String> {
        Some(verdict_line(self))
    }
}
