//! The check's HTML page: every endpoint against its budget, one chart per figure, with
//! the baseline beside this run and the budget drawn as a line; then what failed.

use maud::{Markup, html};

use super::{headline, plain, problems};
use crate::render::html::chart::{BarChart, Series};
use crate::render::html::{page, verdict};
use pgcost_core::check::budget::Figures;
use pgcost_core::check::{CheckReport, EndpointResult, Status};
use pgcost_core::report::model::figure::Figure;

pub(super) fn render(report: &CheckReport) -> String {
    let title = headline(report);
    let body = html! {
        header { h1 { (title) } }
        (verdict(report.valid, &title, &not_valid(report), &[]))
        (status_table(report))
        section {
            h2 { "Figures against their budgets" }
            @if let Some(file) = &report.baseline {
                p.note { "Baseline: " code { (file) } }
            }
            @for metric in Figure::COLUMNS {
                @if let Some(chart) = metric_chart(report, metric) { (chart.render()) }
            }
        }
    };
    page(&title, body)
}

/// Why figures cannot be trusted, each prefixed by its endpoint.
fn not_valid(report: &CheckReport) -> Vec<String> {
    problems(&report.endpoints, plain)
        .into_iter()
        .filter(|p| p.status == Status::NotValid)
        .map(|p| format!("{}: {}", p.endpoint, p.text))
        .collect()
}

fn status_name(status: Status) -> (&'static str, &'static str) {
    match status {
        Status::OverBudget => ("over_budget", "✗ over budget"),
        Status::Regressed => ("regressed", "↗ regressed"),
        Status::NotValid => ("not_valid", "! not valid"),
        Status::Passed => ("passed", "✓ passed"),
    }
}

/// One row per endpoint: its status and everything that did not pass.
fn status_table(report: &CheckReport) -> Markup {
    html! {
        section {
            h2 { "Endpoints" }
            div.scroll {
                table.sortable {
                    thead { tr { th { "endpoint" } th { "status" } th { "what did not pass" } } }
                    tbody { @for e in &report.endpoints { (status_row(e)) } }
                }
            }
        }
    }
}

fn status_row(e: &EndpointResult) -> Markup {
    let (class, label) = status_name(e.status());
    let problems = problems([e], plain);
    let plans = super::diff::plan_changes(e);
    html! {
        tr {
            td { (e.name) br; code { (e.report.target.method) " " (e.report.target.url) } }
            td { span class=(format!("badge status-{class}")) { (label) } }
            td {
                @if problems.is_empty() && plans.is_empty() { "—" }
                @if let Some(note) = &e.baseline_note { (note) }
                ul {
                    @for p in &problems { li { (p.text) } }
                    @for line in &plans { li { (line) } }
                }
            }
        }
    }
}

/// One figure across the endpoints: this run, the baseline when there is one, and each
/// endpoint's budget. `None` when no endpoint has the figure.
fn metric_chart(report: &CheckReport, metric: Figure) -> Option<BarChart> {
    let endpoints = &report.endpoints;
    let actual = Series::of("this run", endpoints, |e| {
        metric.of(&Figures::of(&e.report))
    });
    if actual.values.iter().all(Option::is_none) {
        return None;
    }
    let baseline = Series::of("baseline", endpoints, |e| {
        (e.deltas.iter())
            .find(|d| d.metric == metric)
            .map(|d| d.baseline)
    });
    let budgets = Series::of("budget", endpoints, |e| e.budget.limit(metric));
    let mut series = vec![actual];
    if baseline.values.iter().any(Option::is_some) {
        series.push(baseline);
    }
    let (unit, name) = (metric.spec().counted, metric.spec().chart_name);
    let name = name.unwrap_or(metric.label());
    Some(BarChart {
        title: format!("{name} ({unit}) per endpoint"),
        axis: format!("{name} ({unit})"),
        categories: report.endpoints.iter().map(|e| e.name.clone()).collect(),
        series,
        limits: (budgets.values.iter().any(Option::is_some)).then_some(budgets),
        note: Some("A bar past its endpoint's budget line is over budget.".into()),
        decimals: 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_is_titled_by_what_its_figure_is_counted_in() {
        let report = crate::render::sarif_tests::check();
        let title = |figure| metric_chart(&report, figure).map(|chart| chart.title);
        assert_eq!(
            title(Figure::P95Ms).as_deref(),
            Some("p95 latency (ms) per endpoint")
        );
        assert_eq!(
            title(Figure::RowsRead).as_deref(),
            Some("rows read (per request) per endpoint")
        );
    }
}
