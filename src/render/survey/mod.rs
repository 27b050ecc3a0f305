//! The views of `pgcost survey`'s ranking: the table (`table.rs`, its production section
//! in `production.rs`), JSON (`json.rs`) and SARIF (`sarif.rs`).

mod json;
mod production;
mod sarif;
mod table;

use crate::cost::survey::SurveyReport;
use crate::render::format::{Format, SURVEY_FORMATS};
use crate::render::view::{Unsupported, View};

impl View for SurveyReport {
    fn name(&self) -> &'static str {
        "pgcost survey's ranking"
    }

    fn formats(&self) -> &'static [Format] {
        SURVEY_FORMATS
    }

    fn render(&self, format: Format) -> Result<String, Unsupported> {
        match format {
            Format::Table => Ok(table::render(self)),
            Format::Json => Ok(json::render(self)),
            Format::Sarif => Ok(sarif::render(self)),
            _ => Err(Unsupported::of(self, format)),
        }
    }

    fn headline(&self) -> Option<String> {
        let top = self.routes.first().filter(|r| r.valid);
        Some(match top {
            Some(r) => format!(
                "{} route(s) surveyed; most db time: {} {}",
                self.routes.len(),
                r.method,
                r.route
            ),
            None => format!("{} route(s) surveyed; none valid", self.routes.len()),
        })
    }
}
