//! Views of the demo's comparison, one file per format: `table.rs` (and the comparison
//! rows the other views share), `markdown.rs`, `json.rs` and `html.rs`. A new format is
//! one more file and one more arm here.

mod html;
mod json;
pub(crate) mod markdown;
mod table;

pub use table::render_comparison;

use crate::render::format::{DEMO_FORMATS, Format};
use crate::render::view::View;
use pgcost_core::demo::Demo;

impl View for Demo<'_> {
    fn name(&self) -> &'static str {
        "the demo's comparison"
    }

    fn formats(&self) -> &'static [Format] {
        DEMO_FORMATS
    }

    fn view(&self, format: Format) -> Option<String> {
        Some(match format {
            Format::Json => json::render(self),
            Format::Html => html::render_with_ramps(self.report, self.ramps),
            Format::Markdown => markdown::render(self.report, self.ramps),
            Format::Table => render_comparison(self.report) + &table::ramp_tables(self.ramps),
            Format::Junit | Format::Sarif | Format::Github => return None,
        })
    }
}
