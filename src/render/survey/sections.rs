//! What the survey's Markdown and HTML views share: the ranking as a grid, the counts of
//! what was not ranked, and each route's findings as lines.

use crate::render::sections::{Grid, subject};
use crate::render::text::figure;
use pgcost_core::findings::Finding;
use pgcost_core::report::model::figure::Figure;
use pgcost_core::survey::routes::Skipped;
use pgcost_core::survey::{Measurement, RouteResult, SurveyReport};

/// Routes charted in HTML; the table below the chart has them all.
pub(super) const CHARTED: usize = 15;

fn percent(share: Option<f64>) -> String {
    share.map_or("n/a".into(), |s| format!("{:.1}%", s * 100.0))
}

/// What a view says under the ranking when some route's figures are screened.
pub(crate) const SCREENED_NOTE: &str = "screened: the figures of the route's burst read from \
    pg_stat_statements right after it, with no settle wait; they also count other traffic of \
    the app's role in that time, and have no rows read (an exact window has, see --exact)";

/// `exact`, `screened`, or `-` when the route was not measured.
pub(crate) fn measurement(r: &RouteResult) -> &'static str {
    match r.measurement {
        Some(Measurement::Exact) => "exact",
        Some(Measurement::Screened) => "screened",
        None => "-",
    }
}

/// Whether any route's figures are screened only, so that the view says what that means.
pub(crate) fn any_screened(report: &SurveyReport) -> bool {
    (report.routes.iter()).any(|r| r.measurement == Some(Measurement::Screened))
}

/// `yes`, `static (no statement)`, or `no`: the reasons are listed apart.
fn validity(r: &RouteResult) -> &'static str {
    match (r.valid, r.static_by_statements) {
        (true, true) => "static (no statement)",
        (true, false) => "yes",
        (false, _) => "no",
    }
}

/// One row per route, in the report's order (ranked, static, then not valid).
pub(super) fn ranking(report: &SurveyReport) -> Grid {
    let rows = (report.routes.iter())
        .map(|r| {
            let shares = r.share_of_total.unwrap_or_default();
            vec![
                r.rank.map_or("-".into(), |n| n.to_string()),
                r.method.clone(),
                r.route.clone(),
                r.log_requests.to_string(),
                percent(Some(r.traffic_share)),
                measurement(r).to_string(),
                figure(r.statements()),
                figure(r.rows_read()),
                figure(r.db_time_ms()),
                percent(shares.db_time),
                percent(shares.figures.get(Figure::RowsRead)),
                percent(shares.blocks),
                r.findings.len().to_string(),
                validity(r).to_string(),
                (r.credential.as_ref())
                    .map_or("-".into(), |c| format!("#{} {}", c.index, c.paths[0])),
            ]
        })
        .collect();
    let header = [
        "rank",
        "method",
        "route",
        "log requests",
        "traffic",
        "measured",
        "stmts/req",
        "rows read/req",
        "db ms/req",
        "share of db time",
        "share of rows read",
        "share of blocks",
        "findings",
        "valid",
        "credential",
    ];
    Grid::new(&header, rows, 3..13)
}

/// The counts of the record: parsed, routes, static, skipped and unparsed.
pub(super) fn counts(report: &SurveyReport) -> Vec<(String, String)> {
    let skipped: u64 = report.skipped.iter().map(|s| s.requests).sum();
    let ranked = report.routes.iter().filter(|r| r.rank.is_some()).count();
    [
        ("requests parsed", report.parsed_requests.to_string()),
        (
            "routes ranked",
            format!("{ranked} of {}", report.routes.len()),
        ),
        ("static requests", report.static_requests.to_string()),
        ("skipped requests", skipped.to_string()),
        ("unparsed lines", report.unparsed_lines.to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec()
}

/// The routes not replayed, titled (`Skipped`, then `Static files`), each list that has
/// any.
pub(super) fn not_replayed(report: &SurveyReport) -> impl Iterator<Item = (&str, Grid)> {
    let lists = [
        ("Skipped", &report.skipped),
        ("Static files", &report.static_files),
    ];
    (lists.into_iter())
        .filter(|(_, list)| !list.is_empty())
        .map(|(title, list)| (title, skipped(list)))
}

/// Routes not replayed (`skipped`, `static_files`): method, route, logged requests and
/// why.
fn skipped(list: &[Skipped]) -> Grid {
    let rows = (list.iter())
        .map(|s| {
            vec![
                s.method.clone(),
                s.route.clone(),
                s.requests.to_string(),
                s.reason.clone(),
            ]
        })
        .collect();
    Grid::new(&["method", "route", "log requests", "reason"], rows, 2..3)
}

/// One line for a finding: kind, severity, what it saves, and its subject.
pub(super) fn finding_line(f: &Finding) -> (String, Option<String>) {
    let head = format!(
        "{} ({}): {}",
        f.kind,
        f.severity,
        f.saves_per_request.describe()
    );
    (head, subject(f))
}

/// The routes that have findings, in rank order.
pub(super) fn with_findings(report: &SurveyReport) -> impl Iterator<Item = &RouteResult> {
    report.routes.iter().filter(|r| !r.findings.is_empty())
}

/// The routes that are not valid, each with its reasons.
pub(super) fn not_valid(report: &SurveyReport) -> impl Iterator<Item = &RouteResult> {
    report.routes.iter().filter(|r| !r.valid)
}
