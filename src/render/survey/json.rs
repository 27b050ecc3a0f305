//! The survey as one JSON document: the model as it serializes (`docs/json.md`).

use crate::cost::survey::SurveyReport;

pub fn render(report: &SurveyReport) -> String {
    crate::render::text::json(report)
}
