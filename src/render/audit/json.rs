//! The audit's JSON view: the `Report` as it serializes (keys in docs/json.md).

use crate::render::text::{Exporter, json};
use pgcost_core::report::Report;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &Report) -> String {
        json(report)
    }
}
