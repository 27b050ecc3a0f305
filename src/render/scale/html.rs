//! The HTML view of a scale report: the verdict, then the points of each figure with its
//! fitted line (the request's figures, and the steepest statements), the tables of
//! numbers, and the findings.

use maud::{Markup, html};

use super::{growth, headline, points, statements, tables};
use crate::render::html::chart::Series;
use crate::render::html::lines::{LineChart, Model};
use crate::render::html::{grid_table, page, provenance, verdict};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::report::model::invalid;
use pgcost_core::scale::{Fit, ScaleReport};
use pgcost_core::text::{one_line, shown_sql};

/// Statements drawn one chart each, steepest first.
const CHARTED_STATEMENTS: usize = 4;

pub(super) fn render(report: &ScaleReport) -> String {
    let title = format!("pgcost scale {} {}", report.method, report.url);
    page(&title, html! { h1 { (title) } (body(report)) })
}

fn body(report: &ScaleReport) -> Markup {
    let warnings: Vec<String> = Vec::new();
    let label = headline(report);
    html! {
        (verdict(report.valid, &label, &invalid::messages(&report.invalid_reasons), &warnings))
        @for chart in charts(report) { (chart.render()) }
        h2 { "Points" }
        (grid_table(&points(report)))
        h2 { "Per request, over the page size" }
        (grid_table(&growth(report)))
        h2 { "Statements, steepest first" }
        (grid_table(&statements(report, 120)))
        @if !report.tables.is_empty() {
            h2 { "Tables: rows read" }
            (grid_table(&tables(report)))
        }
        h2 { "Findings" }
        @if report.findings.is_empty() { p { "Nothing grows with the page." } }
        ul {
            @for f in &report.findings {
                li {
                    strong { (f.kind.as_str()) } " (" (f.severity.as_str()) ") "
                    @if let Some(q) = &f.query { code { (shown_sql(q, usize::MAX)) } }
                    @if let Some(t) = &f.table { code { (t) } }
                    p { (f.suggestion) }
                    (provenance(f))
                }
            }
        }
    }
}

/// One chart per figure the points carry (latency is the burst's, not the point's): its
/// measured points and its fitted line; then the steepest statements'.
fn charts(report: &ScaleReport) -> Vec<LineChart> {
    let mut charts = Vec::new();
    for figure in (Figure::COLUMNS.into_iter()).filter(|f| f.spec().per_database) {
        let Some(fit) = report.per_request.get(figure) else {
            continue;
        };
        let measured = Series::of("measured", &report.points, |p| {
            figure.read(None, &p.per_request)
        });
        let mut title = format!("{} per request", figure.label());
        title[..1].make_ascii_uppercase();
        charts.push(chart(report, &title, measured, fit));
    }
    for s in report.statements.iter().take(CHARTED_STATEMENTS) {
        let title = format!("Calls per request: {}", one_line(&s.query, 80));
        let calls = Series::of("calls per request", &s.calls_per_request, |c| Some(*c));
        charts.push(chart(report, &title, calls, s.fit));
    }
    charts
}

fn chart(report: &ScaleReport, title: &str, series: Series, fit: Fit) -> LineChart {
    let xs = report.sizes();
    let (first, last) = (xs.first().copied(), xs.last().copied());
    let line = [first, last]
        .into_iter()
        .flatten()
        .map(|x| (x, fit.at(x)))
        .collect();
    LineChart {
        title: title.to_string(),
        x_desc: report.param.clone(),
        y_desc: "per request".into(),
        x_labels: xs.iter().map(|x| format!("{x}")).collect(),
        xs,
        series: vec![series],
        model: Some(Model {
            name: format!(
                "fit: {:.2} + {:.2}·{} (r² {:.3})",
                fit.intercept, fit.slope, report.param, fit.r2
            ),
            points: line,
        }),
        mark: None,
        note: None,
        decimals: 2,
    }
}
