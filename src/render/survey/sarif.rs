//! A survey's SARIF (`--format sarif`): a result per finding of each route, at the route's
//! template (`GET /items/{id}`); a rule per finding kind.

use crate::cost::survey::SurveyReport;
use crate::render::sarif::{Endpoint, Log, finding_result, finding_rules};

pub(super) fn render(report: &SurveyReport) -> String {
    let results = (report.routes.iter())
        .flat_map(|route| {
            let endpoint = Endpoint {
                name: &route.route,
                request: format!("{} {}", route.method, route.route),
            };
            (route.findings.iter())
                .map(|f| finding_result(&endpoint, f))
                .collect::<Vec<_>>()
        })
        .collect();
    Log::of(finding_rules(), results).render()
}
