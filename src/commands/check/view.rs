//! pgcost check's verdict as a [`View`]: which format is drawn by which file (the table,
//! Markdown and JUnit in `render.rs`, HTML in `html.rs`, JSON here).

use super::CheckReport;
use super::render::{headline, junit, markdown, table};
use crate::render::format::{CHECK_FORMATS, Format};
use crate::render::{Unsupported, View};

impl View for CheckReport {
    fn name(&self) -> &'static str {
        "pgcost check's verdict"
    }

    fn formats(&self) -> &'static [Format] {
        CHECK_FORMATS
    }

    fn render(&self, format: Format) -> Result<String, Unsupported> {
        Ok(match format {
            Format::Table => table(self),
            Format::Markdown => markdown(self),
            Format::Json => crate::render::json(self),
            Format::Junit => junit(self),
            Format::Html => super::html::render(self),
        })
    }

    fn headline(&self) -> Option<String> {
        Some(headline(self))
    }
}
