//! The check's terminal table: the headline, one row per endpoint in file order, then a
//! list per kind of problem, the findings, what changed against the baseline and the
//! acknowledgements.

use super::{
    cell, diff, endpoints_grid, findings, headline, measured_nothing, percent, plain, problems,
};
use crate::render::audit::table::{list, terminal_table};
use crate::render::sections::Grid;
use pgcost_core::check::{CheckReport, EndpointResult, Status};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::text::one_line;

pub(super) fn render(report: &CheckReport) -> String {
    let mut out = format!(
        "{}\n{}\nper request: measured / budget; ! marks a breach\n",
        headline(report),
        terminal_table(&table_endpoints(report))
    );
    let problems = problems(&report.endpoints, plain);
    for (status, title) in [
        (Status::OverBudget, "Over budget"),
        (Status::Regressed, "Regressions"),
        (Status::NotValid, "Not valid"),
    ] {
        let lines = (problems.iter())
            .filter(|p| p.status == status)
            .map(|p| format!("{}: {}", p.endpoint, p.text));
        out.push_str(&list(title, lines));
    }
    let nothing = measured_nothing(report).into_iter();
    let nothing = nothing.map(|(name, line)| format!("{name}: {line}"));
    out.push_str(&list("Measured nothing", nothing));
    let findings = findings(report)
        .into_iter()
        .map(|(name, summary)| format!("{name}: {summary}"));
    out.push_str(&list("Findings", findings));
    if let Some(baseline) = &report.baseline {
        let title = format!("Against the baseline {baseline}");
        out.push_str(&list(&title, report.endpoints.iter().map(against)));
        let title = format!("Statements against the baseline {baseline}");
        out.push_str(&list(&title, diff::table(report)));
    }
    let acks = (report.endpoints.iter()).flat_map(|e| diff::acknowledgements(e, plain));
    out.push_str(&list("Acknowledgements", acks));
    out
}

/// The endpoints in file order; `!` marks a breach.
fn table_endpoints(report: &CheckReport) -> Grid {
    let rows = (report.endpoints.iter())
        .map(|e| {
            let result = match e.status() {
                Status::OverBudget => "OVER",
                Status::Regressed => "REGRESSED",
                Status::NotValid => "NOT VALID",
                Status::Passed => "ok",
            };
            let mut row = vec![result.to_string(), one_line(&e.name, 20)];
            row.extend(Figure::COLUMNS.map(|m| cell(e, m, false, |t| format!("{t}!"))));
            row
        })
        .collect();
    endpoints_grid("result", rows)
}

/// What changed for an endpoint against the baseline.
fn against(e: &EndpointResult) -> String {
    let what = match (&e.baseline_note, changes(e)) {
        (Some(note), _) => note.clone(),
        (None, Some(moved)) => moved,
        (None, None) => "unchanged".into(),
    };
    format!("{}: {what}", e.name)
}

/// The figures that moved against the baseline: `rows_read 40.00 → 30.00 (-25.0%)`.
fn changes(e: &EndpointResult) -> Option<String> {
    let moved: Vec<String> = (e.deltas.iter())
        .filter(|d| d.change != 0.0)
        .map(|d| {
            format!(
                "{} {:.2} → {:.2} ({})",
                d.metric.key(),
                d.baseline,
                d.actual,
                percent(d.change_percent)
            )
        })
        .collect();
    (!moved.is_empty()).then(|| moved.join(", "))
}
