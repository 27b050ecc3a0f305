//! Views of check's verdict (a `CheckReport`), one file per format: `table.rs`,
//! `markdown.rs` (for a pull-request comment or the step summary), `junit.rs` (for CI
//! test reporters), `html.rs` and `sarif.rs` (for code-scanning tools); JSON is the
//! document as it serializes. `diff.rs` draws the statement diff and the
//! acknowledgements for the table and Markdown. What the views share is here: the
//! headline, each problem in words, the endpoints' figures.

mod diff;
pub mod github;
mod html;
mod junit;
mod markdown;
mod sarif;
mod table;

use std::collections::BTreeMap;

use crate::render::format::{CHECK_FORMATS, Format};
use crate::render::sections::Grid;
use crate::render::text::json;
use crate::render::view::View;
use pgcost_core::check::budget::{Breach, Figures, Limit, Regression};
use pgcost_core::check::{CheckReport, EndpointResult, Status};
use pgcost_core::findings::{FindingKind, Severity};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::report::model::notes::Note;
use pgcost_core::text::one_line;

impl View for CheckReport {
    fn name(&self) -> &'static str {
        "pgcost check's verdict"
    }

    fn formats(&self) -> &'static [Format] {
        CHECK_FORMATS
    }

    fn view(&self, format: Format) -> Option<String> {
        Some(match format {
            Format::Table => table::render(self),
            Format::Markdown => markdown::render(self),
            Format::Json => json(self),
            Format::Junit => junit::render(self),
            Format::Html => html::render(self),
            Format::Sarif => sarif::render(self),
            Format::Github => github::render(self),
        })
    }

    fn headline(&self) -> Option<String> {
        Some(headline(self))
    }
}

/// One line that says how the run came out.
fn headline(report: &CheckReport) -> String {
    let total = report.endpoints.len();
    let mut parts = Vec::new();
    for (status, what) in [
        (Status::OverBudget, "over budget"),
        (Status::Regressed, "regressed"),
        (Status::NotValid, "not valid"),
    ] {
        let n = report.count(status);
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if parts.is_empty() {
        parts.push("all within budget".into());
    }
    format!("pgcost check, {total} endpoint(s): {}", parts.join(", "))
}

/// A budget limit as written in pgcost.toml: `6`, `25.5`.
fn limit(value: f64) -> String {
    format!("{value}")
}

fn percent(change_percent: Option<f64>) -> String {
    match change_percent {
        Some(p) => format!("{p:+.1}%"),
        None => "from 0".into(),
    }
}

/// A breach in words; `code` marks up the statement of a forbidden finding.
fn breach_text(b: &Breach, code: impl Fn(&str) -> String) -> String {
    let detail = b.detail.as_deref().unwrap_or_default();
    match (&b.metric, &b.detail) {
        (Limit::NewStatements, _) => format!(
            "{} new statement(s), budget {}: {}",
            b.actual,
            limit(b.budget),
            code(&one_line(detail, 60))
        ),
        (Limit::NewFindings, _) => format!(
            "{} new finding(s) at fail_on_findings severity or above: {}",
            b.actual,
            code(&one_line(detail, 60))
        ),
        (Limit::PlanChange, _) => format!(
            "{} plan(s) in which a sequential scan replaced an index: {}",
            b.actual,
            code(&one_line(detail, 200))
        ),
        (Limit::AckExpired, _) => format!("acknowledgement expired: {}", one_line(detail, 200)),
        (Limit::Forbidden(..), Some(detail)) => format!(
            "forbidden finding {} ({} found): {}",
            b.metric,
            b.actual,
            code(&one_line(detail, 40))
        ),
        (over, _) => {
            let unit = match over {
                Limit::Figure(figure) => figure.spec().counted,
                _ => "per request",
            };
            let budget = limit(b.budget);
            format!("{over} {:.2} {unit}, budget {budget}", b.actual)
        }
    }
}

fn plain(text: &str) -> String {
    text.to_string()
}

fn regression_text(r: &Regression) -> String {
    format!(
        "{} {:.2} → {:.2} per request ({}, limit +{}%)",
        r.metric.key(),
        r.baseline,
        r.actual,
        percent(r.change_percent),
        limit(r.limit_percent)
    )
}

/// The figure of `metric` in one endpoint's row: `actual / budget`, with the change
/// against the baseline when `with_change`; `over` marks a breach.
fn cell(
    e: &EndpointResult,
    metric: Figure,
    with_change: bool,
    over: impl Fn(&str) -> String,
) -> String {
    let figures = Figures::of(&e.report);
    let Some(actual) = metric.of(&figures) else {
        return "n/a".into();
    };
    let mut text = format!("{actual:.2}");
    if e.breaches.iter().any(|b| b.metric == Limit::Figure(metric)) {
        text = over(&text);
    }
    if let Some(budget) = e.budget.limit(metric) {
        text = format!("{text} / {}", limit(budget));
    }
    if with_change
        && let Some(delta) = e.deltas.iter().find(|d| d.metric == metric)
        && delta.change != 0.0
    {
        text = format!("{text} ({})", percent(delta.change_percent));
    }
    text
}

/// The kinds of finding an endpoint has, most severe first: `round_trips (high),
/// cache_candidate ×3 (medium)`.
fn findings_summary(e: &EndpointResult) -> Option<String> {
    let mut by_kind: BTreeMap<FindingKind, (Severity, usize)> = BTreeMap::new();
    for f in &e.report.findings {
        let (severity, count) = by_kind.entry(f.kind).or_insert((f.severity, 0));
        *severity = f.severity.min(*severity); // high first
        *count += 1;
    }
    let mut kinds: Vec<_> = by_kind.into_iter().collect();
    kinds.sort_by_key(|(kind, (severity, _))| (*severity, *kind));
    let parts: Vec<String> = kinds
        .iter()
        .map(|(kind, (severity, count))| match count {
            1 => format!("{kind} ({severity})"),
            n => format!("{kind} ×{n} ({severity})"),
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Why an endpoint did not pass, in words.
struct Problem<'a> {
    pub endpoint: &'a str,
    pub status: Status,
    pub text: String,
}

/// Every breach, regression and reason not to trust the figures, endpoint by endpoint;
/// `code` marks up the statement of a forbidden finding.
fn problems<'a>(
    endpoints: impl IntoIterator<Item = &'a EndpointResult>,
    code: impl Fn(&str) -> String,
) -> Vec<Problem<'a>> {
    let mut out = Vec::new();
    for e in endpoints {
        let problem = |status, text| Problem {
            endpoint: &e.name,
            status,
            text,
        };
        for b in &e.breaches {
            out.push(problem(Status::OverBudget, breach_text(b, &code)));
        }
        for r in &e.regressions {
            out.push(problem(Status::Regressed, regression_text(r)));
        }
        for reason in reasons(e) {
            out.push(problem(Status::NotValid, reason.to_string()));
        }
    }
    out
}

/// (endpoint, line) for each endpoint whose burst moved no counter of a measured node:
/// valid, but its budgets held over nothing, so the views say it beside the problems.
fn measured_nothing(report: &CheckReport) -> Vec<(&str, &Note)> {
    (report.endpoints.iter())
        .flat_map(|e| (e.report.notes.iter()).map(move |w| (e.name.as_str(), w)))
        .filter(|(_, w)| matches!(w, Note::MovedNothing { .. }))
        .collect()
}

/// Why the figures of an endpoint cannot be trusted.
fn reasons(e: &EndpointResult) -> impl Iterator<Item = &str> {
    let invalid = e.report.invalid_reasons.iter().map(|r| r.message.as_str());
    invalid.chain(e.unchecked.iter().map(String::as_str))
}

/// (endpoint, the kinds of finding it has) for each endpoint with findings.
fn findings(report: &CheckReport) -> Vec<(&str, String)> {
    (report.endpoints.iter())
        .filter_map(|e| findings_summary(e).map(|s| (e.name.as_str(), s)))
        .collect()
}

/// The endpoints, one row each: `corner` heads the column of results, the figures follow
/// the name.
fn endpoints_grid(corner: &str, rows: Vec<Vec<String>>) -> Grid {
    let mut header = vec![corner, "endpoint"];
    header.extend(Figure::COLUMNS.map(Figure::label));
    Grid::new(&header, rows, 2..2 + Figure::COLUMNS.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgcost_core::findings::Finding;

    #[test]
    fn the_findings_summary_counts_each_kind_at_its_most_severe_most_severe_first() {
        let mut report = crate::render::sarif_tests::check();
        let e = &mut report.endpoints[0];
        let template = e.report.findings[0].clone();
        let found = [
            (FindingKind::RoundTrips, Severity::Low),
            (FindingKind::CacheCandidate, Severity::Medium),
            (FindingKind::RoundTrips, Severity::High),
            (FindingKind::CacheCandidate, Severity::Medium),
            (FindingKind::NPlusOne, Severity::High),
        ];
        e.report.findings = (found.iter())
            .map(|&(kind, severity)| Finding {
                kind,
                severity,
                ..template.clone()
            })
            .collect();
        assert_eq!(
            findings_summary(e).as_deref(),
            Some("n_plus_one (high), round_trips ×2 (high), cache_candidate ×2 (medium)")
        );
        e.report.findings.clear();
        assert_eq!(findings_summary(e), None);
    }
}
