//! The audit's SARIF (`--format sarif`): a rule per finding kind, a result per finding at
//! the audited endpoint.

use crate::render::sarif::{Endpoint, findings_log};
use crate::render::text::Exporter;
use pgcost_core::report::Report;

pub struct SarifExporter;

impl Exporter for SarifExporter {
    fn render(&self, report: &Report) -> String {
        let request = format!("{} {}", report.target.method, report.target.url);
        let endpoint = Endpoint {
            name: &request,
            request: request.clone(),
        };
        findings_log([(endpoint, report.findings.as_slice())])
    }
}
