//! The views of `pgcost survey`'s ranking: the table (`table.rs`, its production section
//! in `production.rs`), JSON (the model as it serializes), SARIF (`sarif.rs`), Markdown
//! (`markdown.rs`) and HTML (`html.rs`), the last two sharing `sections.rs`.

mod html;
mod markdown;
mod production;
mod sarif;
mod sections;
mod table;
#[cfg(test)]
pub(crate) mod tests;

use crate::render::format::{Format, SURVEY_FORMATS};
use crate::render::view::View;
use pgcost_core::survey::SurveyReport;

impl View for SurveyReport {
    fn name(&self) -> &'static str {
        "pgcost survey's ranking"
    }

    fn formats(&self) -> &'static [Format] {
        SURVEY_FORMATS
    }

    fn view(&self, format: Format) -> Option<String> {
        Some(match format {
            Format::Table => table::render(self),
            Format::Json => crate::render::text::json(self),
            Format::Sarif => sarif::render(self),
            Format::Markdown => markdown::render(self),
            Format::Html => html::render(self),
            _ => return None,
        })
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
