//! A survey's SARIF (`--format sarif`): a result per finding of each route, at the route's
//! template (`GET /items/{id}`); a rule per finding kind.

use crate::render::sarif::{Endpoint, findings_log};
use pgcost_core::survey::SurveyReport;

pub(super) fn render(report: &SurveyReport) -> String {
    findings_log(report.routes.iter().map(|route| {
        let endpoint = Endpoint {
            name: &route.route,
            request: format!("{} {}", route.method, route.route),
        };
        (endpoint, route.findings.as_slice())
    }))
}
