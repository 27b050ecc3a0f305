//! The audit's JSON view: the `Report` as it serializes (keys in docs/json.md).

use crate::cost::report::Report;
use crate::render::text::{Exporter, json};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &Report) -> String {
        json(report)
    }
}
