//! The survey for a terminal: every route, ranked first, each with why it is not ranked
//! and the `[[survey.auth]]` entry it sent, then what was not replayed.

use std::fmt::Write;

use super::sections::{SCREENED_NOTE, any_screened, measurement};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::report::model::invalid;
use pgcost_core::survey::{RouteResult, SurveyReport};

fn percent(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.1}%", s * 100.0))
}

fn figure(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.1}"))
}

/// One route's line; the second share is of blocks when some route is screened only (it
/// has no rows read).
fn row(r: &RouteResult, blocks: bool) -> String {
    let shares = r.share_of_total.unwrap_or_default();
    let status = if r.static_by_statements {
        "  static: no statement".to_string()
    } else if r.valid {
        String::new()
    } else {
        format!("  NOT VALID: {}", invalid::joined(&r.invalid_reasons, "; "))
    };
    let credential = (r.credential.as_ref())
        .map(|c| format!(" [auth #{} {}]", c.index, c.paths[0]))
        .unwrap_or_default();
    format!(
        "{:>4} {:<44} {:>7} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}{status}",
        r.rank.map_or("-".into(), |n| n.to_string()),
        format!("{} {}{credential}", r.method, r.route),
        r.log_requests,
        percent(Some(r.traffic_share)),
        measurement(r),
        percent(shares.db_time),
        percent(if blocks {
            shares.blocks
        } else {
            shares.figures.get(Figure::RowsRead)
        }),
        figure(r.statements()),
        figure(r.rows_read()),
    )
}

pub fn render(report: &SurveyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pgcost survey of {}: {} request(s) parsed, {} route(s) replayed, {} static, {} line(s) unparsed\n",
        report.base_url,
        report.parsed_requests,
        report.routes.len(),
        report.static_requests,
        report.unparsed_lines
    );
    let screened = any_screened(report);
    let read = if screened { "blocks" } else { "rows rd" };
    let _ = writeln!(
        out,
        "{:>4} {:<44} {:>7} {:>8} {:>8} {:>8} {read:>8} {:>9} {:>9}",
        "rank", "route", "logged", "traffic", "measured", "db time", "stmts/req", "rows/req"
    );
    for r in &report.routes {
        let _ = writeln!(out, "{}", row(r, screened));
    }
    if screened {
        let _ = writeln!(out, "  {SCREENED_NOTE}");
    }
    for r in report.routes.iter().filter(|r| r.urls.len() > 1) {
        let _ = writeln!(
            out,
            "  {} {}: {} URLs logged, the burst rotated over {} of them",
            r.method,
            r.route,
            r.urls.len(),
            r.sample.len()
        );
    }
    let skipped = (report.skipped.iter()).map(|s| ("skipped", s));
    for (what, s) in skipped.chain(report.static_files.iter().map(|s| ("static", s))) {
        let (method, route, requests) = (&s.method, &s.route, s.requests);
        let _ = writeln!(out, "{what} {method} {route} x{requests}: {}", s.reason);
    }
    for u in &report.first_unparsed {
        let _ = writeln!(out, "unparsed {}:{}: {}", u.file, u.line, u.text);
    }
    for w in &report.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for f in &report.budget_failures {
        let _ = writeln!(
            out,
            "OVER BUDGET {} {}: {} {:.1} per request > {} ([survey.budget])",
            f.method, f.route, f.figure, f.value, f.limit
        );
    }
    if let Some(production) = &report.production {
        super::production::render(&mut out, production);
    }
    out
}
