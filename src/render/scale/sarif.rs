//! A scale report's SARIF (`--format sarif`): a result per finding its slopes prove, at the
//! URL template, with the slope in the result's evidence; a rule per finding kind.

use crate::render::sarif::{Endpoint, findings_log};
use pgcost_core::scale::ScaleReport;

pub(super) fn render(report: &ScaleReport) -> String {
    let endpoint = Endpoint {
        name: &report.url,
        request: format!("{} {}", report.method, report.url),
    };
    findings_log([(endpoint, report.findings.as_slice())])
}
