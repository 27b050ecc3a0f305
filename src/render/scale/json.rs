//! The JSON view of a scale report: the document as it serializes (`docs/json.md`).

use crate::cost::scale::ScaleReport;

pub(super) fn render(report: &ScaleReport) -> String {
    crate::render::text::json(report)
}
