//! The demo's document as a [`View`]: which format is drawn by which file (JSON here, the
//! table in `table.rs`, Markdown in `markdown.rs`, HTML in `html.rs`).

use super::Demo;
use super::ramps::WithRamps;
use super::table::{ramp_tables, render_comparison};
use crate::render::format::{DEMO_FORMATS, Format};
use crate::render::{self, Unsupported, View};

impl View for Demo<'_> {
    fn name(&self) -> &'static str {
        "the demo's comparison"
    }

    fn formats(&self) -> &'static [Format] {
        DEMO_FORMATS
    }

    fn render(&self, format: Format) -> Result<String, Unsupported> {
        Ok(match (format, self.ramps) {
            (Format::Json, Some(ramps)) => render::json(&WithRamps {
                pipelines: &self.report.pipelines,
                ramps,
            }),
            (Format::Json, None) => render::json(self.report),
            (Format::Html, ramps) => super::html::render_with_ramps(self.report, ramps),
            (Format::Markdown, ramps) => super::markdown::render(self.report, ramps)?,
            (Format::Table, ramps) => render_comparison(self.report) + &ramp_tables(ramps)?,
            (Format::Junit, _) => return Err(Unsupported::of(self, format)),
        })
    }
}
