//! The survey as one HTML page: the verdict, the counts, a chart of each ranked route's
//! share of db time, rows read and blocks (the shared chart module), the ranking table, what
//! was not ranked, and each route's findings.

use maud::{Markup, html};

use super::sections::{
    CHARTED, SCREENED_NOTE, any_screened, counts, finding_line, not_replayed, not_valid, ranking,
    with_findings,
};
use crate::render::html::chart::{BarChart, Series};
use crate::render::html::{grid_table, page, strip, verdict};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::report::model::invalid;
use pgcost_core::survey::SurveyReport;

pub(super) fn render(report: &SurveyReport) -> String {
    let title = format!("pgcost survey of {}", report.base_url);
    page(&title, html! { h1 { (title) } (body(report)) })
}

fn body(report: &SurveyReport) -> Markup {
    let reasons: Vec<String> = (not_valid(report))
        .map(|r| {
            format!(
                "{} {}: {}",
                r.method,
                r.route,
                invalid::joined(&r.invalid_reasons, "; ")
            )
        })
        .collect();
    let label = format!("every one of the {} route(s) replayed", report.routes.len());
    html! {
        (verdict(report.valid, &label, &reasons, &report.warnings))
        (strip(&counts(report)))
        @if let Some(chart) = shares(report) { (chart.render()) }
        h2 { "Routes" }
        (grid_table(&ranking(report)))
        @if any_screened(report) { p { (SCREENED_NOTE) "." } }
        @for (title, grid) in not_replayed(report) { h2 { (title) } (grid_table(&grid)) }
        @if !report.first_unparsed.is_empty() {
            h2 { "Unparsed lines (" (report.unparsed_lines) ")" }
            ul {
                @for u in &report.first_unparsed {
                    li { (u.file) ":" (u.line) ": " code { (u.text) } }
                }
            }
        }
        @for r in with_findings(report) {
            h2 { "Findings of " code { (r.method) " " (r.route) } }
            ul {
                @for f in &r.findings {
                    @let (head, subject) = finding_line(f);
                    li {
                        strong { (head) }
                        @if let Some(subject) = subject { " " code { (subject) } }
                    }
                }
            }
        }
    }
}

/// Each ranked route's share of db time, rows read and blocks, in percent; none when no route
/// is ranked.
fn shares(report: &SurveyReport) -> Option<BarChart> {
    let ranked: Vec<_> = (report.routes.iter())
        .filter(|r| r.rank.is_some())
        .take(CHARTED)
        .collect();
    if ranked.is_empty() {
        return None;
    }
    let series = |name: &str, pick: fn(&pgcost_core::survey::Shares) -> Option<f64>| {
        Series::of(name, &ranked, |r| {
            (r.share_of_total.as_ref())
                .and_then(pick)
                .map(|s| s * 100.0)
        })
    };
    Some(BarChart {
        title: "Share of the database's work, by route".into(),
        axis: "% of the ranked routes' total at the logged traffic".into(),
        categories: (ranked.iter())
            .map(|r| format!("{} {}", r.method, r.route))
            .collect(),
        series: vec![
            series("db time", |s| s.db_time),
            series("rows read", |s| s.figures.get(Figure::RowsRead)),
            series("blocks", |s| s.blocks),
        ],
        limits: None,
        note: Some(
            "A route's cost per request × its logged requests, over the same sum for every \
             ranked route."
                .into(),
        ),
        decimals: 1,
    })
}
